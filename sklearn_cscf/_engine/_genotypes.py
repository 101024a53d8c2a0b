"""Random keys -> ordered actions (the paper's decoder), whole population at once.

A genotype holds ``2N`` keys in ``[0, 1]`` for ``N`` actions: ``[A_1..A_N,
V_1..V_N]``. Action ``i`` is inactive when ``A_i > 0.5``; active actions are
applied in ascending order of ``A_i``. ``V_i`` picks the value of action ``i``
in its feasible space at the moment it is applied (see ``actions.py``).
"""

import numpy as np

from sklearn_cscf._engine._workspace import Workspace
from sklearn_cscf._rows import row_counts


def decode_order(keys, n_actions, max_length=None, work=None):
    """Order of the active actions of each genotype.

    Parameters
    ----------
    keys : ndarray of shape (n_individuals, 2 * n_actions)
        Random keys.
    n_actions : int
        Number of actions ``N``.
    max_length : int, default=None
        Keep at most this many actions (those with the smallest keys).
    work : Workspace, default=None
        Where the work arrays and ``lengths`` are kept; ``None``: fresh
        arrays.

    Returns
    -------
    order : ndarray of shape (n_individuals, n_actions)
        Action indices in application order, padded with ``-1``.
    lengths : ndarray of shape (n_individuals,)
        Number of actions in each sequence.

    Examples
    --------
    The genotype of the paper's Fig. 3:

    >>> import numpy as np
    >>> keys = np.array([[0.70, 0.45, 0.02, 0.12, 0.80, 0.68]])
    >>> order, lengths = decode_order(keys, 3)
    >>> order.tolist(), lengths.tolist()
    ([[2, 1, -1]], [2])
    """
    work = Workspace() if work is None else work
    n = keys.shape[0]
    action_keys = keys[:, :n_actions]
    active = np.less_equal(
        action_keys, 0.5, out=work.empty("active", (n, n_actions), bool)
    )
    # inactive actions sort last by themselves: their keys (above 0.5, or
    # NaN) are above every active one's
    ranked = np.argsort(action_keys, axis=1, kind="stable")
    lengths = row_counts(active, work.empty("lengths", n, np.intp))
    if max_length is not None:
        np.minimum(lengths, max_length, out=lengths)
    positions = np.arange(n_actions)
    beyond = np.greater_equal(positions[None, :], lengths[:, None], out=active)
    np.copyto(ranked, -1, where=beyond)
    return ranked, lengths


def canonical_genotypes(keys, n_actions, max_length=None, order=None):
    """Each genotype as the sequence it encodes before any state is seen.

    Two genotypes with the same actions in the same order and the same value
    keys for those actions decode, from the same state, to the same sequence
    (the keys of the actions left out, and the action keys' exact values, do
    not matter). ``order``: their order (:func:`decode_order` with
    ``max_length``), when already decoded.

    Returns
    -------
    ndarray of shape (n, 2 * n_actions), uint64
        The order (``-1`` padded) and the value key of each step, as the bits
        of floats.
    """
    if order is None:
        order, _ = decode_order(keys, n_actions, max_length)
    rows = np.empty((keys.shape[0], 2 * n_actions))
    rows[:, :n_actions] = order
    values = np.take_along_axis(keys[:, n_actions:], np.maximum(order, 0), axis=1)
    np.copyto(values, -1.0, where=order < 0)
    rows[:, n_actions:] = values
    return rows.view(np.uint64)

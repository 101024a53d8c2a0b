"""Random keys -> ordered actions (the paper's decoder), whole population at once.

A genotype holds ``2N`` keys in ``[0, 1]`` for ``N`` actions: ``[A_1..A_N,
V_1..V_N]``. Action ``i`` is inactive when ``A_i > 0.5``; active actions are
applied in ascending order of ``A_i``. ``V_i`` picks the value of action ``i``
in its feasible space at the moment it is applied (see ``actions.py``).
"""

import numpy as np


def decode_order(keys, n_actions, max_length=None):
    """Order of the active actions of each genotype.

    Parameters
    ----------
    keys : ndarray of shape (n_individuals, 2 * n_actions)
        Random keys.
    n_actions : int
        Number of actions ``N``.
    max_length : int, default=None
        Keep at most this many actions (those with the smallest keys).

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
    action_keys = keys[:, :n_actions]
    active = action_keys <= 0.5
    ranked = np.argsort(np.where(active, action_keys, np.inf), axis=1, kind="stable")
    lengths = active.sum(axis=1)
    if max_length is not None:
        lengths = np.minimum(lengths, max_length)
    positions = np.arange(n_actions)
    order = np.where(positions[None, :] < lengths[:, None], ranked, -1)
    return order, lengths


def value_keys(keys, n_actions):
    """The value part ``V`` of the genotypes."""
    return keys[:, n_actions:]

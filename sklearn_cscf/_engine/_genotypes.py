"""The random-key layout: genotypes decoded, written, and an action's far ends.

A genotype holds ``2N`` keys in ``[0, 1]`` for ``N`` actions: ``[A_1..A_N,
V_1..V_N]``. Action ``i`` is inactive when ``A_i > 0.5`` (:data:`INACTIVE`);
active actions are applied in ascending order of ``A_i``. ``V_i`` picks the
value of action ``i`` in its feasible space at the moment it is applied (see
``actions.py``): ``0`` its least value reachable, ``1`` its greatest.

- :func:`decode_order` (the paper's decoder, a whole population at once) and
  :func:`canonical_genotypes` read genotypes;
- :func:`genotypes` writes them, from an order and value keys: refinement's
  candidates and the reachability probes are built with it
  (:func:`single_steps`: each action alone);
- :func:`ends`, :func:`far_keys` and :func:`toward_far_end` say where an
  action's far ends lie in value keys (refinement's inserted steps and
  trades, the reachability probes); :func:`plan_structures` writes every
  plan of a few actions at its far ends, and :func:`space_filling` a fixed
  spread of genotypes (what ``n_generations="auto"`` judges before any
  search).
"""

import functools
import itertools
from math import factorial

import numpy as np
from scipy.stats import qmc

from sklearn_cscf._engine._workspace import Workspace
from sklearn_cscf._rows import row_counts

# an action key above 0.5 leaves the action out
INACTIVE = 1.0


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


# ---------------------------------------------------------------------- #
# the layout written: genotypes built from an order and value keys
# ---------------------------------------------------------------------- #
def genotypes(order, values, n_actions):
    """Genotypes applying ``order`` (action indices, ``-1`` padded) with the
    value keys ``values`` (one per action; those of the actions left out are
    kept, and do not matter).

    The one way a genotype is written: the action at position ``p`` gets the
    action key ``(p + 1) / (2 (N + 1))`` (all below 0.5, in order), every
    other action :data:`INACTIVE`.

    Examples
    --------
    >>> keys = genotypes(np.array([[2, 0, -1]]), np.full((1, 3), 0.5), 3)
    >>> decode_order(keys, 3)[0].tolist()
    [[2, 0, -1]]
    """
    order = np.asarray(order)
    n = order.shape[0]
    keys = np.empty((n, 2 * n_actions))
    keys[:, :n_actions] = INACTIVE
    keys[:, n_actions:] = values
    position = np.broadcast_to(np.arange(order.shape[1]), order.shape)
    rows, steps = np.nonzero(order >= 0)
    keys[rows, order[rows, steps]] = (position[rows, steps] + 1) / (
        2.0 * (n_actions + 1)
    )
    return keys


def single_steps(actions, values, n_actions):
    """Genotypes of one step each: action ``actions[r]`` alone, at value key
    ``values[r]`` (:func:`genotypes`; the other value keys are 0.5, which
    no step reads): refinement's singles and the reachability probes.

    Examples
    --------
    >>> keys = single_steps([2, 0], [1.0, 0.25], 3)
    >>> decode_order(keys, 3)[0].tolist(), keys[:, 3:].tolist()
    ([[2, -1, -1], [0, -1, -1]], [[0.5, 0.5, 1.0], [0.25, 0.5, 0.5]])
    """
    actions = np.asarray(actions, dtype=np.intp)
    order = np.full((actions.size, n_actions), -1)
    order[:, 0] = actions
    value = np.full((actions.size, n_actions), 0.5)
    value[np.arange(actions.size), actions] = values
    return genotypes(order, value, n_actions)


# ---------------------------------------------------------------------- #
# an action's far ends
# ---------------------------------------------------------------------- #
def ends(space):
    """The value keys of the ends a step of ``space`` can go to: ``(1.0,)``
    for an ``"increase"`` action, ``(0.0,)`` for a ``"decrease"`` one, both
    for one free both ways; ``()`` for an unordered choice (a list of
    categories without an order, free both ways), which has no ends."""
    if space.direction == "increase":
        return (1.0,)
    if space.direction == "decrease":
        return (0.0,)
    if getattr(space, "rank_of_code", None) is not None:
        return ()
    return (0.0, 1.0)


def far_keys(space, max_values, every_value=False):
    """The value keys of a step of ``space`` placed at its far end(s)
    (:func:`ends`): an unordered choice has none, so each of its values (at
    most ``max_values``, evenly spread) stands for one. ``every_value``: a
    list of at most ``max_values`` values gives each of them, ordered or not.

    Examples
    --------
    >>> from sklearn_cscf._spaces import DiscreteSpace, RangeSpace
    >>> far_keys(RangeSpace(0.0, 10.0, "any"), 8)
    [0.0, 1.0]
    >>> far_keys(DiscreteSpace(np.arange(4.0), "any"), 8, every_value=True)
    [0.125, 0.375, 0.625, 0.875]
    """
    values = getattr(space, "values", None)
    end_keys = ends(space)
    if values is not None and (every_value or not end_keys):
        n = values.shape[0]
        if every_value and len(end_keys) != 1 and n <= max_values:
            return [(k + 0.5) / n for k in range(n)]
        if not end_keys:
            slots = np.unique(np.round(np.linspace(0, n - 1, min(n, max_values))))
            return ((slots + 0.5) / n).tolist()
    return list(end_keys)


def toward_far_end(space, current):
    """Each of value keys ``current`` moved to the far end (:func:`ends`) on
    its side: the only end of a one-way action, the nearer one of an action
    free both ways; an unordered choice, which has no ends, keeps its key."""
    current = np.asarray(current, dtype=float)
    end_keys = ends(space)
    if not end_keys:
        return current.copy()
    if len(end_keys) == 1:
        return np.full(current.shape, end_keys[0])
    return np.where(current >= 0.5, 1.0, 0.0)


# ---------------------------------------------------------------------- #
# every plan at its far ends
# ---------------------------------------------------------------------- #
def plan_structures(spaces, max_length, limit, grid=(), grid_length=0, max_values=3):
    """Genotypes of every plan of at most ``max_length`` distinct actions, in
    every order, each step at its far end(s) (:func:`far_keys`, at most
    ``max_values`` values for an unordered choice), and the plans of at most
    ``grid_length`` steps with each step also at every value key of ``grid``:
    the plans ``n_generations="auto"`` judges first. The longest plans kept
    are those whose count (with the shorter ones) stays within ``limit``;
    ``None`` when even the single steps exceed it.

    Examples
    --------
    >>> from sklearn_cscf._spaces import RangeSpace
    >>> spaces = [RangeSpace(0.0, 1.0, "increase"), RangeSpace(0.0, 1.0, "any")]
    >>> keys = plan_structures(spaces, 2, 100)
    >>> len(keys)  # 1 + 2 single steps, 2 + 2 in each order of both
    7
    >>> len(plan_structures(spaces, 2, 100, grid=(0.5,), grid_length=1))
    9
    >>> plan_structures(spaces, 2, 2) is None
    True
    """
    n = len(spaces)
    far = [far_keys(space, max_values) or [0.5] for space in spaces]
    # e[k]: the sum over sets of k actions of the product of their ends
    # (elementary symmetric polynomials), so k! e[k] plans of length k
    e = np.zeros(min(n, max_length) + 1)
    e[0] = 1.0
    for keys in far:
        e[1:] = e[1:] + len(keys) * e[:-1]
    total, length = 0, 0
    for k in range(1, e.size):
        total += factorial(k) * e[k]
        if k <= grid_length:
            total += factorial(n) // factorial(n - k) * len(grid) ** k
        if total > limit:
            break
        length = k
    if length == 0:
        return None
    orders, values = [], []
    for k in range(1, length + 1):
        for plan in itertools.permutations(range(n), k):
            for ends in itertools.product(*(far[i] for i in plan)):
                orders.append(plan)
                values.append(ends)
            if k <= grid_length:
                for keys in itertools.product(grid, repeat=k):
                    orders.append(plan)
                    values.append(keys)
    order = np.full((len(orders), n), -1)
    value = np.full((len(orders), n), 0.5)
    for r, (plan, keys) in enumerate(zip(orders, values)):
        order[r, : len(plan)] = plan
        value[r, list(plan)] = keys
    return genotypes(order, value, n)


# the fixed scrambling of space_filling's design (not a row's seed: the
# design is the same for every row and every random_state)
DESIGN_SEED = 0


@functools.lru_cache(maxsize=8)
def space_filling(n_keys, count):
    """A fixed, evenly spread design of at least ``count`` genotypes of
    ``n_keys`` keys: the first ``2**m >= count`` points of a scrambled Sobol
    sequence (scrambled by ``DESIGN_SEED``), the same on every call (read
    only). Judged beside the plans at their far ends, it puts starts in the
    islands of acceptance between them without making a row's plans depend
    on its seed.

    Examples
    --------
    >>> keys = space_filling(4, 100)
    >>> keys.shape
    (128, 4)
    >>> bool(((keys >= 0) & (keys < 1)).all())
    True
    >>> bool((space_filling(4, 100) == keys).all())  # a fixed design
    True
    """
    m = max(0, int(np.ceil(np.log2(max(count, 1)))))
    rng = np.random.default_rng(DESIGN_SEED)  # the same design in every SciPy
    try:
        sampler = qmc.Sobol(n_keys, scramble=True, rng=rng)
    except TypeError:  # SciPy < 1.15 names it seed
        sampler = qmc.Sobol(n_keys, scramble=True, seed=rng)
    keys = sampler.random_base2(m)
    keys.flags.writeable = False
    return keys

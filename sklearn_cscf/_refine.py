"""Refinement, beyond the paper: pull each final sequence back to the least
change that still works.

Random keys only approach a boundary (a range end, the model's decision
threshold): the search stops a little short of the cheapest value. After the
search, every step of every final sequence is pulled back, one step position
at a time for all sequences of the block together:

1. try the value that changes the feature least (the current value of an
   ``"increase"`` range, the next level of an ordered list, ...);
2. otherwise bisect the step's value key between that and the found value,
   keeping the nearest value for which the whole sequence is still valid (the
   model's decision is the target and every constraint holds);
3. finally try to drop each step altogether, keeping the sequence without it
   where it is still valid and no more expensive.

Every trial is simulated from scratch and judged by the model (one call per
round for the block; remembered states are not asked again). The refined
sequences join the originals and the front is filtered again for dominance
and distinctness, so refinement never loses a found sequence that is still
Pareto-optimal.
"""

import numpy as np

from sklearn_cscf._search import Evaluation, pareto_front

# bisection rounds per step position: 2**-17 of the key range is below 1e-5
MAX_BISECTIONS = 17
KEY_TOLERANCE = 2.0**-17
# a refined sequence must be cheaper by more than this to count as improved
COST_TOLERANCE = 1e-9
INACTIVE = 1.0  # an action key above 0.5 drops the action


def refine(block, fronts):
    """Refined fronts of a block, and how many sequences refinement improved.

    Parameters
    ----------
    block : Block
        The block whose searches produced ``fronts``.
    fronts : list of (keys, Evaluation)
        Each instance's final front.

    Returns
    -------
    fronts : list of (keys, Evaluation)
        Each instance's front after refinement.
    improved : ndarray of shape (n_instances,)
        Sequences of each new front that are refined ones, cheaper than the
        sequence they came from.
    """
    improved = np.zeros(len(fronts), dtype=np.intp)
    members = [m for m, (keys, _) in enumerate(fronts) if keys.shape[0]]
    if not members:
        return fronts, improved
    counts = [fronts[m][0].shape[0] for m in members]
    owner = np.repeat(np.asarray(members, dtype=np.intp), counts)
    original = np.vstack([fronts[m][0] for m in members])
    keys = original.copy()
    n_actions = block.problem.n_actions
    for position in range(n_actions):
        if not _pull_back(block, owner, keys, position):
            break
    for position in reversed(range(n_actions)):
        _drop(block, owner, keys, position)
    refined = block.judge(owner, keys)
    cost = block.problem.slices["sequence_cost"].start
    before = Evaluation.concatenate([fronts[m][1] for m in members])
    cheaper = refined.feasible & (
        refined.F[:, cost] < before.F[:, cost] - COST_TOLERANCE
    )
    new_fronts = list(fronts)
    start = 0
    for m, count in zip(members, counts):
        rows = slice(start, start + count)
        start += count
        both = Evaluation.concatenate([fronts[m][1], refined.take(rows)])
        both_keys = np.vstack([fronts[m][0], keys[rows]])
        front = pareto_front(both)
        new_fronts[m] = (both_keys[front], both.take(front))
        came_refined = front >= count
        improved[m] = int(cheaper[rows][front[came_refined] - count].sum())
    return new_fronts, improved


def _pull_back(block, owner, keys, position):
    """Bisect the value key of each sequence's step ``position`` toward the
    least change (in place). False when no sequence is that long."""
    problem = block.problem
    n_actions = problem.n_actions
    paths = block.simulate(owner, keys, record=True)
    rows = np.flatnonzero(paths.lengths > position)
    if rows.size == 0:
        return False
    action = paths.order[rows, position]
    least = np.full(rows.shape[0], np.nan)
    for a in np.unique(action).tolist():
        chosen = action == a
        compiled = problem.actions[a]
        current = paths.states[rows[chosen], position, compiled.feature]
        least[chosen] = compiled.space.least_change_key(current)
    column = n_actions + action
    found = keys[rows, column]
    movable = np.isfinite(least) & (np.abs(least - found) > KEY_TOLERANCE)
    rows, column, lo, hi = (
        rows[movable],
        column[movable],
        least[movable],
        found[movable],
    )
    if rows.size == 0:
        return True
    valid = _valid(block, owner, keys, rows, column, lo)
    hi[valid] = lo[valid]
    pending = ~valid
    for _ in range(MAX_BISECTIONS):
        pending &= np.abs(hi - lo) > KEY_TOLERANCE
        if not pending.any():
            break
        index = np.flatnonzero(pending)
        mid = (lo[index] + hi[index]) / 2
        valid = _valid(block, owner, keys, rows[index], column[index], mid)
        hi[index[valid]] = mid[valid]
        lo[index[~valid]] = mid[~valid]
    keys[rows, column] = hi
    return True


def _drop(block, owner, keys, position):
    """Drop each sequence's step ``position`` where the sequence stays valid and
    gets no more expensive (in place)."""
    problem = block.problem
    paths = block.simulate(owner, keys)
    rows = np.flatnonzero(paths.lengths > position)
    if rows.size == 0:
        return
    column = paths.order[rows, position]
    cost = problem.slices["sequence_cost"].start
    trial = keys[rows].copy()
    trial[np.arange(rows.shape[0]), column] = INACTIVE
    judged = block.judge(owner[rows], trial)
    keep = judged.feasible & (
        judged.F[:, cost] <= paths.sequence_cost[rows] + COST_TOLERANCE
    )
    keys[rows[keep], column[keep]] = INACTIVE


def _valid(block, owner, keys, rows, column, values):
    """Whether the sequences ``rows`` stay valid with value keys ``values`` in
    ``column``."""
    trial = keys[rows].copy()
    trial[np.arange(rows.shape[0]), column] = values
    return block.judge(owner[rows], trial).feasible

"""Refinement, beyond the paper: pull each final sequence back to the least
change that still works.

Random keys only approach a boundary (a range end, a constraint, the model's
decision threshold): the search stops a little short of the cheapest values.
After the search, the steps of the final sequences are refined, for all
sequences of a block together:

1. **Pull back.** Step by step, scan evenly spaced values from the one that
   changes the feature least (the current value of an ``"increase"`` range,
   the next level of an ordered list, ...) to the found one, take the first
   for which the whole sequence is still valid (the model's decision is the
   target and every constraint holds), and bisect between it and the value
   before it: the nearest valid value, even where the model accepts only
   islands of values.
2. **Trade.** Pulling back one step at a time stops at the first point of the
   decision boundary it meets; the cheapest point may lie elsewhere on it,
   where one step does more and the others less. So each of an instance's
   cheapest sequences is also tried with one step pushed as far as it stays
   valid, the other steps then pulled back, and that step last.
3. **Drop.** Finally each step is dropped where the sequence stays valid
   without it and gets no more expensive.

Every trial is simulated from scratch and judged by the model (one call per
round for the whole block; remembered states are not asked again). The
refined sequences join the originals and the front is filtered again for
dominance and distinctness, so refinement never loses a found sequence that
is still Pareto-optimal.
"""

import numpy as np

from sklearn_cscf._search import Evaluation, pareto_front

# bisection rounds per step: 2**-17 of the key range is below 1e-5
MAX_BISECTIONS = 17
KEY_TOLERANCE = 2.0**-17
# a refined sequence must be cheaper by more than this to count as improved
COST_TOLERANCE = 1e-9
INACTIVE = 1.0  # an action key above 0.5 drops the action
# each instance's cheapest sequences that also try trading steps
TRADED_PER_INSTANCE = 3
# values scanned between the least change and the found one before bisecting
SCAN_POINTS = 8


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
    problem = block.problem
    n_actions = problem.n_actions
    cost = problem.slices["sequence_cost"].start
    counts = [fronts[m][0].shape[0] for m in members]
    owner = np.repeat(np.asarray(members, dtype=np.intp), counts)
    found = np.vstack([fronts[m][0] for m in members])
    before = Evaluation.concatenate([fronts[m][1] for m in members])

    source, pushed = _trades(block, owner, found, before.F[:, cost])
    by_owner = np.argsort(owner[source], kind="stable")  # rows of an instance together
    source, pushed = source[by_owner], pushed[by_owner]
    keys = found[source]
    owner = owner[source]
    # the order in which each row's steps are pulled back: a pushed step last
    positions = np.tile(np.arange(n_actions), (source.shape[0], 1))
    traded = np.flatnonzero(pushed >= 0)
    others = np.arange(n_actions - 1)[None, :]
    positions[traded, :-1] = np.where(
        others >= pushed[traded, None], others + 1, others
    )
    positions[traded, -1] = pushed[traded]

    if traded.size:
        _move(block, owner, keys, np.where(pushed >= 0, pushed, -1), toward="far")
    for round_ in range(n_actions):
        _move(block, owner, keys, positions[:, round_], toward="least")
    for position in reversed(range(n_actions)):
        _drop(block, owner, keys, position)
    refined = block.judge(owner, keys)
    cheaper = refined.feasible & (
        refined.F[:, cost] < before.F[source, cost] - COST_TOLERANCE
    )

    new_fronts = list(fronts)
    for m, count in zip(members, counts):
        mine = np.flatnonzero(owner == m)
        both = Evaluation.concatenate([fronts[m][1], refined.take(mine)])
        both_keys = np.vstack([fronts[m][0], keys[mine]])
        front = pareto_front(both)
        new_fronts[m] = (both_keys[front], both.take(front))
        came_refined = front[front >= count] - count
        improved[m] = int(cheaper[mine][came_refined].sum())
    return new_fronts, improved


def _trades(block, owner, keys, cost):
    """Rows to refine: every sequence as found (``pushed == -1``), and each
    instance's cheapest ones again once per step that can be pushed.

    Returns the source row of each row to refine and its pushed position.
    """
    paths = block.simulate(owner, keys, record=True)
    cheapest = np.zeros(keys.shape[0], dtype=bool)
    for m in np.unique(owner).tolist():
        mine = np.flatnonzero(owner == m)
        cheapest[mine[np.argsort(cost[mine], kind="stable")[:TRADED_PER_INSTANCE]]] = (
            True
        )
    sources, pushed = [np.arange(keys.shape[0])], [np.full(keys.shape[0], -1)]
    several = cheapest & (paths.lengths >= 2)
    for position in range(block.problem.n_actions):
        rows = np.flatnonzero(several & (paths.lengths > position))
        rows = rows[np.isfinite(_least_keys(block, paths, rows, position))]
        sources.append(rows)
        pushed.append(np.full(rows.shape[0], position))
    return np.concatenate(sources), np.concatenate(pushed)


def _least_keys(block, paths, rows, positions):
    """The value key of the least change of each row's step ``positions``."""
    positions = np.broadcast_to(positions, rows.shape)
    action = paths.order[rows, positions]
    least = np.full(rows.shape[0], np.nan)
    for a in np.unique(action).tolist():
        chosen = action == a
        compiled = block.problem.actions[a]
        current = paths.states[rows[chosen], positions[chosen], compiled.feature]
        least[chosen] = compiled.space.least_change_key(current)
    return least


def _move(block, owner, keys, positions, toward):
    """Move each row's value key of step ``positions[row]`` (-1: none) toward
    the least change, or away from it (``"far"``), as far as the sequence
    stays valid (in place)."""
    n_actions = block.problem.n_actions
    paths = block.simulate(owner, keys, record=True)
    rows = np.flatnonzero((positions >= 0) & (positions < paths.lengths))
    if rows.size == 0:
        return
    least = _least_keys(block, paths, rows, positions[rows])
    column = n_actions + paths.order[rows, positions[rows]]
    current = keys[rows, column]
    if toward == "least":
        goal = least
    else:  # the far end of the value space, on the side of the found change
        goal = np.where(current > least, 1.0, 0.0)
    movable = np.isfinite(least) & (np.abs(goal - current) > KEY_TOLERANCE)
    rows, column = rows[movable], column[movable]
    valid_key, trial_key = current[movable], goal[movable]
    if rows.size == 0:
        return
    if toward == "least":
        # the model's acceptance need not be monotone along a step's values
        # (a tree may accept an island of them): scan evenly spaced keys from
        # the least change to the found one, keep the valid one nearest the
        # least change, then bisect between it and its invalid neighbour
        fractions = np.arange(SCAN_POINTS) / SCAN_POINTS
        grid = trial_key[:, None] + (valid_key - trial_key)[:, None] * fractions
        valid = _valid(
            block,
            owner,
            keys,
            np.repeat(rows, SCAN_POINTS),
            np.repeat(column, SCAN_POINTS),
            grid.ravel(),
        ).reshape(grid.shape)
        some = valid.any(axis=1)
        first = np.where(some, valid.argmax(axis=1), SCAN_POINTS)
        at = np.flatnonzero(some)
        valid_key[at] = grid[at, first[at]]
        outside = np.clip(first - 1, 0, SCAN_POINTS - 1)
        trial_key = np.where(some, grid[np.arange(grid.shape[0]), outside], grid[:, -1])
        reached = some & (first == 0)
    else:
        reached = _valid(block, owner, keys, rows, column, trial_key)
        valid_key[reached] = trial_key[reached]
    pending = ~reached
    for _ in range(MAX_BISECTIONS):
        pending &= np.abs(trial_key - valid_key) > KEY_TOLERANCE
        if not pending.any():
            break
        index = np.flatnonzero(pending)
        mid = (valid_key[index] + trial_key[index]) / 2
        valid = _valid(block, owner, keys, rows[index], column[index], mid)
        valid_key[index[valid]] = mid[valid]
        trial_key[index[~valid]] = mid[~valid]
    keys[rows, column] = valid_key


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

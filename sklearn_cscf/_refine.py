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

from typing import Protocol

import numpy as np

from sklearn_cscf._decoding import decode_order
from sklearn_cscf._search import Evaluation, first_occurrences, pareto_front
from sklearn_cscf._simulation import order_keys

# bisection rounds per step: 2**-17 of the key range is below 1e-5
MAX_BISECTIONS = 17
KEY_TOLERANCE = 2.0**-17
# a refined sequence must be cheaper by more than this to count as improved
COST_TOLERANCE = 1e-9
INACTIVE = 1.0  # an action key above 0.5 drops the action
# each instance's cheapest plans whose cheapest sequence also tries trading
# steps and inserting one
TRADED_PER_INSTANCE = 3
# where a pushed step is also tried, as a share of its way from the least change
PART_WAY = (1 / 4, 1 / 16)
# copies of a pushed step just across the largest discount steps, at most
ACROSS_STEPS = 3
# values of an unordered category tried when a step is inserted, at most
INSERTED_VALUES = 8
# values scanned between the least change and the found one before bisecting
SCAN_POINTS = 8
# training values tried between them, at most
SCAN_SUPPORT = 96


class Trials(Protocol):
    """What refinement needs of a block (:class:`~sklearn_cscf._engine.Block`
    is one): the problem its instances share, and two ways to try genotypes
    ``keys`` of instances ``owner`` (row ``r`` of member ``owner[r]``)."""

    problem: object  # Problem: actions, graph, settings, objective slices

    def simulate(self, owner, keys, record=False):
        """The trajectories (``Trajectories``) of the genotypes, no model call."""

    def judge(self, owner, keys):
        """Their ``Evaluation``: simulated and asked about (one model call for
        the states not remembered; ``owner`` sorted)."""


def refine(block, fronts):
    """Refined fronts of a block, and how many sequences refinement improved.

    Parameters
    ----------
    block : Trials
        The block whose searches produced ``fronts`` (only its ``problem``,
        ``simulate`` and ``judge`` are used).
    fronts : list of (keys, Evaluation)
        Each instance's final front.

    Returns
    -------
    fronts : list of (keys, Evaluation)
        Each instance's front after refinement.
    improved : ndarray of shape (n_instances,)
        Sequences of each new front that are refined ones, cheaper than the
        cheapest sequence the search found.
    """
    problem = block.problem
    n_actions = problem.n_actions
    cost = problem.slices["sequence_cost"].start
    counts = [fronts[m][0].shape[0] for m in range(len(fronts))]
    owner = np.repeat(np.arange(len(fronts)), counts)
    found = np.vstack([keys for keys, _ in fronts])
    before = Evaluation.concatenate([evaluation for _, evaluation in fronts])
    found_cost = before.F[:, cost]
    # what a refined row must beat to count as improved: its instance's
    # cheapest sequence found
    least = np.full(len(fronts), np.inf)
    np.minimum.at(least, owner, found_cost)

    order, _ = decode_order(found, n_actions, problem.settings.max_sequence_length)
    cheapest = _cheapest(owner, found_cost, order_keys(order), TRADED_PER_INSTANCE)
    source, pushed = _trades(block, owner, found, cheapest)
    inserted_source, inserted_keys, inserted_action = _insertions(
        block, found, cheapest
    )
    single_owner, single_keys = _singles(block, len(fronts))
    n_kept, n_inserted = source.shape[0], inserted_source.shape[0]
    # an inserted step goes from its least change toward where it was
    # placed, as far as the sequence stays valid
    goal = np.full(n_kept + n_inserted + single_owner.size, np.nan)
    goal[n_kept : n_kept + n_inserted] = inserted_keys[
        np.arange(n_inserted), n_actions + inserted_action
    ]
    keys = np.vstack([found[source], inserted_keys, single_keys])
    owner = np.concatenate([owner[source], owner[inserted_source], single_owner])
    pushed = np.concatenate(
        [pushed, np.zeros(n_inserted, np.intp), np.full(single_owner.size, -1)]
    )
    if keys.shape[0] == 0:
        return fronts, np.zeros(len(fronts), dtype=np.intp)
    by_owner = np.argsort(owner, kind="stable")  # rows of an instance together
    owner, pushed = owner[by_owner], pushed[by_owner]
    keys, goal = keys[by_owner], goal[by_owner]
    # the order in which each row's steps are pulled back: a pushed step last
    positions = np.tile(np.arange(n_actions), (keys.shape[0], 1))
    traded = np.flatnonzero(pushed >= 0)
    others = np.arange(n_actions - 1)[None, :]
    positions[traded, :-1] = np.where(
        others >= pushed[traded, None], others + 1, others
    )
    positions[traded, -1] = pushed[traded]

    if traded.size:
        _move(block, owner, keys, np.where(pushed >= 0, pushed, -1), "far", goal)
        # the cheapest point of the decision boundary may lie between the
        # corners: the pushed step also part of the way
        steps = _pushed_steps(block, owner, keys, pushed)
        extra = _part_way(block, keys, pushed, *steps)
        across = _across_discount_steps(block, keys, pushed, *steps)
        take = np.concatenate([np.arange(keys.shape[0]), extra[0], across[0]])
        keys = np.vstack([keys, extra[1], across[1]])
        owner, pushed, positions = owner[take], pushed[take], positions[take]
    for round_ in range(n_actions):
        _move(block, owner, keys, positions[:, round_], toward="least")
    # a pushed or inserted step pulled back last changes where the steps
    # after it start: pull those back again
    for round_ in range(n_actions):
        _move(block, owner, keys, np.where(pushed >= 0, round_, -1), toward="least")
    for position in reversed(range(n_actions)):
        _drop(block, owner, keys, position)
    refined = block.judge(owner, keys)
    cheaper = refined.feasible & (refined.F[:, cost] < least[owner] - COST_TOLERANCE)

    new_fronts = list(fronts)
    improved = np.zeros(len(fronts), dtype=np.intp)
    for m, count in enumerate(counts):
        mine = np.flatnonzero(owner == m)
        both = Evaluation.concatenate([fronts[m][1], refined.take(mine)])
        both_keys = np.vstack([fronts[m][0], keys[mine]])
        front = pareto_front(both)
        new_fronts[m] = (both_keys[front], both.take(front))
        came_refined = front[front >= count] - count
        improved[m] = int(cheaper[mine][came_refined].sum())
    return new_fronts, improved


def _trades(block, owner, keys, cheapest):
    """Rows to refine: every sequence as found (``pushed == -1``), and the
    ``cheapest`` ones again once per step that can be pushed.

    Returns the source row of each row to refine and its pushed position.
    """
    paths = block.simulate(owner, keys, record=True)
    sources, pushed = [np.arange(keys.shape[0])], [np.full(keys.shape[0], -1)]
    several = cheapest & (paths.lengths >= 2)
    for position in range(block.problem.n_actions):
        rows = np.flatnonzero(several & (paths.lengths > position))
        rows = rows[np.isfinite(_least_keys(block, paths, rows, position))]
        sources.append(rows)
        pushed.append(np.full(rows.shape[0], position))
    return np.concatenate(sources), np.concatenate(pushed)


def _pushed_steps(block, owner, keys, pushed):
    """The rows with a pushed step (``pushed >= 0``) inside their sequence,
    and their trajectories (states recorded)."""
    rows = np.flatnonzero(pushed >= 0)
    paths = block.simulate(owner[rows], keys[rows], record=True)
    inside = np.flatnonzero(pushed[rows] < paths.lengths)
    return rows[inside], paths.take(inside)


def _part_way(block, keys, pushed, rows, paths):
    """Copies of the rows ``rows`` (trajectories ``paths``, see
    :func:`_pushed_steps`), their pushed step moved back part of the way to
    its least change (``PART_WAY``).

    Returns the row each copy comes from and the copies' genotypes.
    """
    n_actions = block.problem.n_actions
    at = np.arange(rows.shape[0])
    least = _least_keys(block, paths, at, pushed[rows])
    column = n_actions + paths.order[at, pushed[rows]]
    current = keys[rows, column]
    movable = np.isfinite(least)
    rows, column, least, current = (a[movable] for a in (rows, column, least, current))
    fractions = np.asarray(PART_WAY)
    copies = keys[np.repeat(rows, fractions.shape[0])]
    values = least[:, None] + (current - least)[:, None] * fractions[None, :]
    copies[np.arange(copies.shape[0]), np.repeat(column, fractions.shape[0])] = (
        values.ravel()
    )
    return np.repeat(rows, fractions.shape[0]), copies


def _singles(block, n_instances):
    """Every action alone, at the far end(s) of its value space, for every
    instance: refined, they give each instance its cheapest one-step plans
    whatever the search found (the least change that the model accepts, to
    the step's resolution).

    Returns the instance of each genotype and the genotypes.
    """
    problem = block.problem
    n_actions = problem.n_actions
    genotypes = []
    for a, action in enumerate(problem.actions):
        for value_key in _far_keys(action.space):
            genotype = np.full(2 * n_actions, INACTIVE)
            genotype[a] = 0.0
            genotype[n_actions + a] = value_key
            genotypes.append(genotype)
    genotypes = np.array(genotypes).reshape(-1, 2 * n_actions)
    owner = np.repeat(np.arange(n_instances), genotypes.shape[0])
    return owner, np.tile(genotypes, (n_instances, 1))


def _across_discount_steps(block, keys, pushed, rows, paths):
    """Copies of the rows ``rows`` (trajectories ``paths``, see
    :func:`_pushed_steps`) whose pushed step sets a source of the feature
    graph, that step just across the largest steps of the discounts it gives
    later steps, anywhere in its value space (at most ``ACROSS_STEPS`` per
    row); pulling the other steps back (or further, see :func:`_pull_back`)
    then adapts them to it.

    A tau function is often a step function of its source (studying is
    discounted below 20 working hours): the cheapest value of such a step may
    be just across a threshold that its least change and its pushed value
    both miss. The thresholds are found among the training values between the
    two by asking the tau functions, not the model.

    Returns the row each copy comes from and the copies' genotypes.
    """
    problem = block.problem
    none = np.empty(0, dtype=np.intp), np.empty((0, keys.shape[1]))
    graph = problem.graph
    if not graph.edges:
        return none
    sources = {problem.schema.index[source] for source, _, _ in graph.edges}
    n_actions = problem.n_actions
    at = np.arange(rows.shape[0])
    action = paths.order[at, pushed[rows]]
    from_rows, copies = [], []
    for a in np.unique(action).tolist():
        compiled = problem.actions[a]
        if compiled.feature not in sources:
            continue
        mine = np.flatnonzero(action == a)
        before = paths.states[mine, pushed[rows[mine]]]
        least = compiled.space.least_change_key(before[:, compiled.feature])
        candidates = compiled.space.scan_keys(before[:, compiled.feature])
        if candidates.shape[1] == 0:
            continue
        # every value the step can take, in order, its least change among them
        candidates = np.hstack([least[:, None], candidates])
        candidates = np.sort(candidates, axis=1)  # NaN (unreachable) last
        usable = np.isfinite(candidates)
        n, width = candidates.shape
        start = np.repeat(before, width, axis=0)
        after, _, valid = compiled.apply(start, np.nan_to_num(candidates.ravel()))
        discounts = graph.discounts(after).reshape(n, width, -1)
        # how much the discounts change from one value to the next; the value
        # across a change is the one farther from the least change
        jump = np.zeros((n, width))
        jump[:, 1:] = np.abs(discounts[:, 1:] - discounts[:, :-1]).sum(axis=2)
        usable &= valid.reshape(n, width)
        pair = usable.copy()
        pair[:, 1:] &= usable[:, :-1]
        pair[:, 0] = False
        jump = np.where(pair & (jump > COST_TOLERANCE), jump, 0.0)
        below = candidates[:, :-1] < least[:, None] - KEY_TOLERANCE
        # a change below the least change: the value before it is across
        shift = np.zeros((n, width), dtype=np.intp)
        shift[:, 1:] = below
        for k in range(n):
            largest = np.argsort(-jump[k], kind="stable")[:ACROSS_STEPS]
            largest = largest[jump[k, largest] > 0]
            across = np.unique(largest - shift[k, largest])
            if across.size == 0:
                continue
            copy = np.repeat(keys[rows[mine[k]]][None, :], across.size, axis=0)
            copy[:, n_actions + a] = candidates[k, across]
            from_rows.append(np.full(across.size, rows[mine[k]]))
            copies.append(copy)
    if not copies:
        return none
    return np.concatenate(from_rows), np.vstack(copies)


def _cheapest(owner, cost, plans, per_instance):
    """Whether each row is the cheapest sequence of one of its instance's
    ``per_instance`` cheapest plans (``plans``: bytes equal for the same
    actions in the same order)."""
    cheapest = np.zeros(owner.shape[0], dtype=bool)
    for m in np.unique(owner).tolist():
        mine = np.flatnonzero(owner == m)
        ranked = mine[np.argsort(cost[mine], kind="stable")]
        cheapest[ranked[first_occurrences(plans[ranked])[:per_instance]]] = True
    return cheapest


def _insertions(block, keys, cheapest):
    """The ``cheapest`` sequences with one more step first: every action
    they lack, at the far end(s) of its value space.

    A step can pay for itself by what it enables: it may cross a threshold of
    a feature graph's tau (a discount for a later step), or move the model so
    far that the other steps can do less. The search and the pull-back never
    add a step; these rows start from each such step at its far end, and
    refinement then pulls the other steps back and this one last (when it
    does not pay, :func:`_drop` removes it again).

    Returns the source row of each new genotype, the genotypes and the
    action each inserts.
    """
    problem = block.problem
    n_actions = problem.n_actions
    max_length = problem.settings.max_sequence_length
    rows = np.flatnonzero(cheapest)
    action_keys = keys[rows, :n_actions]
    active = action_keys <= 0.5
    lengths = active.sum(axis=1)
    if max_length is not None:
        rows, action_keys, active = (
            a[lengths < max_length] for a in (rows, action_keys, active)
        )
    # the active steps keep their order, after a first slot at key 0
    rank = np.argsort(np.argsort(np.where(active, action_keys, np.inf), axis=1), 1)
    shifted = np.where(active, (rank + 1) / (2.0 * (n_actions + 1)), action_keys)
    sources, genotypes, inserted = [], [], []
    for a, action in enumerate(problem.actions):
        lacking = np.flatnonzero(~active[:, a])
        if lacking.size == 0:
            continue
        for value_key in _far_keys(action.space):
            genotype = keys[rows[lacking]].copy()
            genotype[:, :n_actions] = shifted[lacking]
            genotype[:, a] = 0.0
            genotype[:, n_actions + a] = value_key
            sources.append(rows[lacking])
            genotypes.append(genotype)
            inserted.append(np.full(lacking.shape[0], a))
    if not sources:
        none = np.empty(0, dtype=np.intp)
        return none, np.empty((0, keys.shape[1])), none
    return np.concatenate(sources), np.vstack(genotypes), np.concatenate(inserted)


def _far_keys(space):
    """Value keys of a step placed at the far end(s) of its value space: every
    value (at most ``INSERTED_VALUES``) of an unordered choice."""
    if getattr(space, "rank_of_code", None) is not None and space.direction == "any":
        n = space.values.shape[0]
        slots = np.unique(np.round(np.linspace(0, n - 1, min(n, INSERTED_VALUES))))
        return ((slots + 0.5) / n).tolist()
    if space.direction == "increase":
        return [1.0]
    if space.direction == "decrease":
        return [0.0]
    return [0.0, 1.0]


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


def _move(block, owner, keys, positions, toward, goal=None):
    """Move each row's value key of step ``positions[row]`` (-1: none) toward
    the least change (``"least"``: see :func:`_pull_back`), or away from it
    (``"far"``) as far as the sequence stays valid (in place).

    ``goal`` (far moves): where a row goes from its least change instead,
    NaN for the rows that go from their value to the far end on its side.
    """
    if toward == "least":
        return _pull_back(block, owner, keys, positions)
    n_actions = block.problem.n_actions
    paths = block.simulate(owner, keys, record=True)
    rows = np.flatnonzero((positions >= 0) & (positions < paths.lengths))
    if rows.size == 0:
        return
    least = _least_keys(block, paths, rows, positions[rows])
    column = n_actions + paths.order[rows, positions[rows]]
    current = keys[rows, column]
    # the far end of the value space, on the side of the found change
    far = np.where(current > least, 1.0, 0.0)
    if goal is not None:
        given = np.isfinite(goal[rows])
        far = np.where(given, goal[rows], far)
        current = np.where(given, least, current)
    movable = np.isfinite(least) & (np.abs(far - current) > KEY_TOLERANCE)
    rows, column = rows[movable], column[movable]
    valid_key, trial_key = current[movable], far[movable]
    if rows.size == 0:
        return
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


def _pull_back(block, owner, keys, positions):
    """Move each row's value key of step ``positions[row]`` (-1: none) from
    the found value toward the least change, to the cheapest value that keeps
    the sequence valid (in place).

    The model's acceptance need not be monotone along a step's values (a tree
    accepts islands of them, around values seen in training), and a step's
    value also sets the discounts of the steps after it (a feature graph's
    tau functions are often step functions). So the values tried are evenly
    spaced keys from the least change to the found one and every training
    value between them; the valid one of least sequence cost is kept (the
    nearest to the least change among equals), then bisected toward its
    neighbour on the side of the least change while the sequence stays valid
    and no more expensive: the edge of an island, or of a discount step.
    Where no value up to the found one is valid (the other steps have
    changed since it was found), the values beyond it, toward the far end of
    the value space, are tried the same way.
    """
    n_actions = block.problem.n_actions
    cost = block.problem.slices["sequence_cost"].start
    paths = block.simulate(owner, keys, record=True)
    rows = np.flatnonzero((positions >= 0) & (positions < paths.lengths))
    if rows.size == 0:
        return
    steps = positions[rows]
    least = _least_keys(block, paths, rows, steps)
    column = n_actions + paths.order[rows, steps]
    current = keys[rows, column]
    movable = np.isfinite(least) & (np.abs(least - current) > KEY_TOLERANCE)
    rows, steps, column = rows[movable], steps[movable], column[movable]
    least, current = least[movable], current[movable]
    if rows.size == 0:
        return
    grid = _scan_grid(block, paths, rows, steps, least, current)
    valid_key, trial_key, bar, pending = _cheapest_on_grid(
        block, owner, keys, rows, column, grid, current
    )
    # no valid value up to the found one (the other steps changed since):
    # the step may have to do more, toward the far end of its value space
    lost = np.flatnonzero(~np.isfinite(bar))
    if lost.size:
        far = np.where(current[lost] > least[lost], 1.0, 0.0)
        grid = _scan_grid(block, paths, rows[lost], steps[lost], current[lost], far)
        (valid_key[lost], trial_key[lost], bar[lost], pending[lost]) = (
            _cheapest_on_grid(
                block, owner, keys, rows[lost], column[lost], grid, current[lost]
            )
        )
    for _ in range(MAX_BISECTIONS):
        pending &= np.abs(trial_key - valid_key) > KEY_TOLERANCE
        if not pending.any():
            break
        index = np.flatnonzero(pending)
        mid = (valid_key[index] + trial_key[index]) / 2
        judged = block.judge(
            owner[rows[index]], _with_keys(keys, rows[index], column[index], mid)
        )
        price = np.where(judged.feasible, judged.F[:, cost], np.inf)
        better = price <= _bar(bar[index])
        valid_key[index[better]] = mid[better]
        bar[index[better]] = np.minimum(bar[index[better]], price[better])
        trial_key[index[~better]] = mid[~better]
    keys[rows, column] = valid_key


def _cheapest_on_grid(block, owner, keys, rows, column, grid, current):
    """Each row's genotype tried with every value key of its row of ``grid``
    in ``column`` (one model call): the key of the cheapest valid sequence
    (the first among equals; ``current`` where none is valid), the key before
    it in the grid (to bisect toward), its cost (``inf``: none valid) and
    whether there is anything between the two to bisect."""
    cost = block.problem.slices["sequence_cost"].start
    n_points = grid.shape[1]
    judged = block.judge(
        np.repeat(owner[rows], n_points),
        _with_keys(
            keys, np.repeat(rows, n_points), np.repeat(column, n_points), grid.ravel()
        ),
    )
    price = np.where(judged.feasible, judged.F[:, cost], np.inf).reshape(grid.shape)
    best = price.min(axis=1)
    some = np.isfinite(best)
    chosen = np.argmax(price <= _bar(best)[:, None], axis=1)
    at = np.arange(rows.shape[0])
    valid_key = np.where(some, grid[at, chosen], current)
    trial_key = np.where(
        some & (chosen > 0), grid[at, np.maximum(chosen - 1, 0)], valid_key
    )
    return valid_key, trial_key, best, some & (chosen > 0)


def _bar(cost):
    """Costs no more than ``cost``, up to rounding."""
    return cost + COST_TOLERANCE * (1.0 + np.abs(cost))


def _scan_grid(block, paths, rows, steps, least, current):
    """The value keys tried for each row's step, ordered from the least change
    to the found value (the last column): evenly spaced ones and the keys of
    the training values between (at most ``SCAN_SUPPORT``; repeats of the
    found key pad the rows with fewer)."""
    fractions = np.arange(SCAN_POINTS + 1) / SCAN_POINTS
    even = least[:, None] + (current - least)[:, None] * fractions
    extra = np.full((rows.shape[0], 0), np.nan)
    action = block.problem.actions
    order = paths.order[rows, steps]
    parts = []
    for a in np.unique(order).tolist():
        chosen = np.flatnonzero(order == a)
        compiled = action[a]
        value = paths.states[rows[chosen], steps[chosen], compiled.feature]
        parts.append((chosen, compiled.space.scan_keys(value)))
    width = max(keys.shape[1] for _, keys in parts)
    if width:
        extra = np.full((rows.shape[0], width), np.nan)
        for chosen, keys in parts:
            extra[chosen, : keys.shape[1]] = keys
    low, high = np.minimum(least, current), np.maximum(least, current)
    with np.errstate(invalid="ignore"):
        between = (extra > low[:, None]) & (extra < high[:, None])
    distance = np.where(between, np.abs(extra - least[:, None]), np.inf)
    nearest = np.argsort(distance, axis=1, kind="stable")
    extra = np.take_along_axis(extra, nearest, axis=1)
    count = between.sum(axis=1)
    width = int(min(count.max(initial=0), SCAN_SUPPORT))
    if width:
        # at most SCAN_SUPPORT of them per row, spread evenly over their ranks
        slots = np.arange(width)[None, :]
        spread = np.round(slots * (count[:, None] - 1) / max(width - 1, 1)).astype(
            np.intp
        )
        slots = np.where(count[:, None] > width, spread, slots)
        picked = np.take_along_axis(extra, np.minimum(slots, extra.shape[1] - 1), 1)
        picked = np.where(slots < count[:, None], picked, current[:, None])
        grid = np.hstack([even, picked])
    else:
        grid = even
    distance = np.abs(grid - least[:, None])
    return np.take_along_axis(grid, np.argsort(distance, axis=1, kind="stable"), 1)


def _with_keys(keys, rows, column, values):
    """Copies of the genotypes ``rows`` with ``values`` in ``column``."""
    trial = keys[rows].copy()
    trial[np.arange(rows.shape[0]), column] = values
    return trial


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
    return block.judge(owner[rows], _with_keys(keys, rows, column, values)).feasible

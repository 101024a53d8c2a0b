"""Refinement's values: each step of a sequence pulled back to the edge of
its valid values, and steps dropped that do not pay (the *fit* neighbourhood of
:mod:`sklearn_cscf._engine._refine`, which every other neighbourhood re-fits with)."""

import numpy as np

from sklearn_cscf._engine._genotypes import INACTIVE, decode_order, toward_far_end
from sklearn_cscf._rows import take_rows

# the edge of a step's valid values is searched with EDGE_POINTS evenly
# spaced keys a round (a (EDGE_POINTS + 1)-ary search: one model call a round
# narrows the interval as much as log2(EDGE_POINTS + 1) bisections), until the
# interval holds one value or is below KEY_TOLERANCE (2**-17 of the key range
# is below 1e-5)
EDGE_POINTS = 3
EDGE_ROUNDS = 9
KEY_TOLERANCE = 2.0**-17
# a refined sequence must be cheaper by more than this to count as improved
COST_TOLERANCE = 1e-9
# a local move must save more than this share of the cost to be taken
MOVE_TOLERANCE = 1e-6
# values scanned between the least change and the found one before the edge
# search
SCAN_POINTS = 8
# training values tried between them, at most (islands of acceptance
# around training values)
SCAN_SUPPORT = 96
# states a step's pull-back asks about, as estimated to admit candidates
STEP_STATES = SCAN_POINTS + 1 + SCAN_SUPPORT // 3 + EDGE_ROUNDS * EDGE_POINTS // 2


def fitted(evaluator, owner, keys, last=None, hold=None):
    """Each row's steps pulled back in order (``last``: a position per row
    pulled back after the others, -1 none; ``hold``: rows whose ``last``
    step keeps its value), then each step dropped where the sequence stays
    valid and no dearer; only the rows whose estimated states fit their
    instance's budget are polished. Returns the admitted rows."""
    n_actions = evaluator.problem.n_actions
    max_length = evaluator.problem.settings.max_sequence_length
    _, lengths = decode_order(keys, n_actions, max_length)
    admitted = evaluator.admit(owner, STEP_STATES * np.maximum(lengths, 1) + lengths)
    owner, keys, lengths = owner[admitted], keys[admitted], lengths[admitted]
    if owner.size == 0:
        return owner, keys
    width = int(lengths.max(initial=0))
    if last is not None:
        last = last[admitted]
        if hold is not None:
            last = np.where(hold[admitted], -2 - last, last)
    for position in range(width):
        positions = np.full(owner.shape[0], position)
        if last is not None:
            # the last position is skipped in place and pulled back at the end
            skipped = np.where(last <= -2, -2 - last, last)
            shifted = position + (position >= skipped) * (skipped >= 0)
            positions = np.where(shifted < lengths, shifted, -1)
        pull_back(evaluator, owner, keys, positions)
    if last is not None:
        pull_back(evaluator, owner, keys, last)  # held rows: -2 - p < 0, none
    for position in reversed(range(width)):
        _drop(evaluator, owner, keys, position)
    return owner, keys


def at_far_ends(problem, keys, order):
    """The genotypes with every active step's value key at the far end of its
    values on the side of its current key (:func:`~sklearn_cscf._engine.\
_genotypes.toward_far_end`)."""
    n_actions = problem.n_actions
    keys = keys.copy()
    for a, action in enumerate(problem.actions):
        rows = np.flatnonzero((order == a).any(axis=1))
        if rows.size:
            column = n_actions + a
            keys[rows, column] = toward_far_end(action.space, keys[rows, column])
    return keys


def without(order, positions):
    """Each row of ``order`` without its step ``positions[row]``, the later
    steps moved up and the row padded with ``-1``."""
    keep = np.arange(order.shape[1])[None, :] != positions[:, None]
    shorter = np.full(order.shape, -1)
    shorter[:, :-1] = order[keep].reshape(order.shape[0], order.shape[1] - 1)
    return shorter


def no_candidates(n_actions):
    return np.empty(0, dtype=np.intp), np.empty((0, 2 * n_actions))


def _by_action(evaluator, paths, rows, positions):
    """For each action taken at the step ``positions`` of ``rows``: which of
    them take it (indices into ``rows``), the action, and the value of its
    feature before the step."""
    positions = np.broadcast_to(positions, rows.shape)
    action = paths.order[rows, positions]
    for a in np.unique(action).tolist():
        chosen = np.flatnonzero(action == a)
        compiled = evaluator.problem.actions[a]
        before = paths.states[rows[chosen], positions[chosen], compiled.feature]
        yield chosen, compiled, before


def least_keys(evaluator, paths, rows, positions):
    """The value key of the least change of each row's step ``positions``."""
    least = np.full(rows.shape[0], np.nan)
    for chosen, compiled, before in _by_action(evaluator, paths, rows, positions):
        least[chosen] = compiled.space.least_change_key(before)
    return least


def _key_resolution(evaluator, paths, rows, positions):
    """The width of one value in key space of each row's step ``positions``
    (``1 / number of values`` reachable; 0 for a continuous range)."""
    width = np.zeros(rows.shape[0])
    for chosen, compiled, before in _by_action(evaluator, paths, rows, positions):
        count = compiled.space.value_count(before)
        with np.errstate(divide="ignore"):
            width[chosen] = np.where(count >= 1, 1.0 / count, 0.0)
    return width


def pull_back(evaluator, owner, keys, positions, support=SCAN_SUPPORT):
    """Move each row's value key of step ``positions[row]`` (-1: none) from
    the found value toward the least change, to the cheapest value that keeps
    the sequence valid (in place).

    The model's acceptance need not be monotone along a step's values (a tree
    accepts islands of them, around values seen in training), and a step's
    value also sets the discounts of the steps after it (a feature graph's
    tau functions are often step functions). So the values tried are evenly
    spaced keys from the least change to the found one and every training
    value between them; the valid one of least sequence cost is kept (the
    nearest to the least change among equals), then searched toward its
    neighbour on the side of the least change while the sequence stays valid
    and no more expensive: the edge of an island, or of a discount step.
    Where no value up to the found one is valid (the other steps have
    changed since it was found), the values beyond it, toward the far end of
    the value space, are tried the same way.
    """
    n_actions = evaluator.problem.n_actions
    paths = evaluator.simulate(owner, keys, record=True)
    rows = np.flatnonzero((positions >= 0) & (positions < paths.lengths))
    if rows.size == 0:
        return
    steps = positions[rows]
    least = least_keys(evaluator, paths, rows, steps)
    column = n_actions + paths.order[rows, steps]
    current = keys[rows, column]
    movable = np.isfinite(least) & (np.abs(least - current) > KEY_TOLERANCE)
    rows, steps, column = rows[movable], steps[movable], column[movable]
    least, current = least[movable], current[movable]
    if rows.size == 0:
        return
    grid = _scan_grid(evaluator, paths, rows, steps, least, current, support)
    valid_key, trial_key, bar, pending = _cheapest_on_grid(
        evaluator,
        owner,
        keys,
        rows,
        column,
        grid,
        current,
        _step_values(evaluator, paths, rows, steps, grid),
    )
    # no valid value up to the found one (the other steps changed since):
    # the step may have to do more, toward the far end of its value space
    lost = np.flatnonzero(~np.isfinite(bar))
    if lost.size:
        far = np.where(current[lost] > least[lost], 1.0, 0.0)
        grid = _scan_grid(
            evaluator, paths, rows[lost], steps[lost], current[lost], far, support
        )
        values = _step_values(evaluator, paths, rows[lost], steps[lost], grid)
        (valid_key[lost], trial_key[lost], bar[lost], pending[lost]) = (
            _cheapest_on_grid(
                evaluator,
                owner,
                keys,
                rows[lost],
                column[lost],
                grid,
                current[lost],
                values,
            )
        )
    # keys closer than one value's width of keys hold no value between them
    resolution = np.maximum(
        _key_resolution(evaluator, paths, rows, steps), KEY_TOLERANCE
    )
    for _ in range(EDGE_ROUNDS):
        pending &= np.abs(trial_key - valid_key) > resolution
        if not pending.any():
            break
        index = np.flatnonzero(pending)
        # EDGE_POINTS evenly spaced keys from the valid one toward the trial one
        points = valid_key[index, None] + (trial_key[index] - valid_key[index])[
            :, None
        ] * (np.arange(1, EDGE_POINTS + 1) / (EDGE_POINTS + 1))
        at = np.repeat(index, EDGE_POINTS)
        price = evaluator.price(
            owner[rows[at]], _with_keys(keys, rows[at], column[at], points.ravel())
        ).reshape(points.shape)
        # walked from the valid key on: a point counts where it is no dearer
        # than every one counted before it; the last one counted is kept
        running = bar[index].copy()
        last = np.full(index.shape[0], -1)
        for j in range(EDGE_POINTS):
            ok = price[:, j] <= _bar(running)
            running = np.where(ok, np.minimum(running, price[:, j]), running)
            last[ok] = j
        some = last >= 0
        valid_key[index[some]] = points[np.flatnonzero(some), last[some]]
        bar[index] = running
        after = last + 1
        inner = after < EDGE_POINTS
        trial_key[index[inner]] = points[np.flatnonzero(inner), after[inner]]
    keys[rows, column] = valid_key


def _cheapest_on_grid(evaluator, owner, keys, rows, column, grid, current, values):
    """Each row's genotype tried with every value key of its row of ``grid``
    in ``column`` (one model call): the key of the cheapest valid sequence
    (the first among equals; ``current`` where none is valid), the key before
    it in the grid (to search toward), its cost (``inf``: none valid) and
    whether there is anything between the two to search. ``values``: the
    value the step takes with each key (:func:`_step_values`)."""
    # keys giving the step the value of the key before them in the row give
    # the same sequence: only the first is asked about (the first among
    # equals is chosen anyway). A row's repeated keys (padding) are asked
    # about once too: the grid's width depends on the other rows of the
    # evaluator, what a row asks about must not. Along a row keys move one way
    # from the least change, so the values do too: equal ones lie side by side
    first = np.ones(grid.shape, dtype=bool)
    np.not_equal(grid[:, 1:], grid[:, :-1], out=first[:, 1:])
    twin = first[:, 1:] & (values[:, 1:] == values[:, :-1])
    first[:, 1:] &= ~twin
    # a twin counts as asked about, as it was before it was told apart
    evaluator.count_asked(owner[rows[np.nonzero(twin)[0]]])
    at, point = np.nonzero(first)
    price = np.full(grid.shape, np.inf)
    price[at, point] = evaluator.price(
        owner[rows[at]], _with_keys(keys, rows[at], column[at], grid[at, point])
    )
    best = price.min(axis=1)
    some = np.isfinite(best)
    chosen = np.argmax(price <= _bar(best)[:, None], axis=1)
    at = np.arange(rows.shape[0])
    valid_key = np.where(some, grid[at, chosen], current)
    trial_key = np.where(
        some & (chosen > 0), grid[at, np.maximum(chosen - 1, 0)], valid_key
    )
    return valid_key, trial_key, best, some & (chosen > 0)


def _step_values(evaluator, paths, rows, steps, grid):
    """The value each row's step ``steps`` takes with each value key of its
    row of ``grid``, from the state before the step (a step's outcome
    depends on its value, not on the key that picked it)."""
    values = np.empty(grid.shape)
    width = grid.shape[1]
    for chosen, compiled, before in _by_action(evaluator, paths, rows, steps):
        found, _ = compiled.space.interpolate(
            grid[chosen].ravel(), np.repeat(before, width)
        )
        values[chosen] = found.reshape(chosen.size, width)
    return values


def _bar(cost):
    """Costs no more than ``cost``, up to rounding."""
    return cost + COST_TOLERANCE * (1.0 + np.abs(cost))


def _scan_grid(evaluator, paths, rows, steps, least, current, support):
    """The value keys tried for each row's step, ordered from the least change
    to the found value (the last column): evenly spaced ones and the keys of
    the training values between (at most ``SCAN_SUPPORT``; repeats of the
    found key pad the rows with fewer)."""
    fractions = np.arange(SCAN_POINTS + 1) / SCAN_POINTS
    even = least[:, None] + (current - least)[:, None] * fractions
    even[:, -1] = current  # exactly: the rows' padding repeats it
    extra = np.full((rows.shape[0], 0), np.nan)
    parts = [
        (chosen, compiled.space.scan_keys(before))
        for chosen, compiled, before in _by_action(evaluator, paths, rows, steps)
    ]
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
    width = int(min(count.max(initial=0), support))
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
    trial = take_rows(keys, rows)
    trial[np.arange(rows.shape[0]), column] = values
    return trial


def _drop(evaluator, owner, keys, position):
    """Drop each sequence's step ``position`` where the sequence stays valid and
    gets no more expensive (in place)."""
    paths = evaluator.simulate(owner, keys)
    rows = np.flatnonzero(paths.lengths > position)
    if rows.size == 0:
        return
    column = paths.order[rows, position]
    trial = take_rows(keys, rows)
    trial[np.arange(rows.shape[0]), column] = INACTIVE
    keep = (
        evaluator.price(owner[rows], trial)
        <= paths.sequence_cost[rows] + COST_TOLERANCE
    )
    keys[rows[keep], column[keep]] = INACTIVE

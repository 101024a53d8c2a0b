"""Refinement's values: each step of a sequence pulled back to the edge of
its valid values, and steps dropped that do not pay (the *fit* neighbourhood of
:mod:`sklearn_cscf._engine._refine`, which every other neighbourhood re-fits with)."""

import numpy as np

from sklearn_cscf._engine._genotypes import INACTIVE, toward_far_end
from sklearn_cscf._rows import take_rows

# the edge of a step's valid values is searched with EDGE_POINTS evenly
# spaced keys a round (a (EDGE_POINTS + 1)-ary search: one model call a round
# narrows the interval as much as log2(EDGE_POINTS + 1) bisections), until the
# interval holds one value or is below KEY_TOLERANCE (2**-17 of the key range
# is below 1e-5)
EDGE_POINTS = 3
EDGE_ROUNDS = 9
KEY_TOLERANCE = 2.0**-17
# a call asks about at most this many states ahead of need (the next rounds
# of an edge search whatever each finds, the values beyond a step's found one
# before they are known to be needed, ...): a model's call costs about as
# much for a few thousand states as for one (the evaluator's MIN_CALL_ROWS),
# and a call saved is worth it
AHEAD_ROWS = 4096
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
    _, lengths = evaluator.decode(keys)
    admitted = evaluator.admit(owner, estimated_states(lengths))
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
    _drop(evaluator, owner, keys, width)
    return owner, keys


def estimated_states(lengths):
    """The states :func:`fitted` is estimated to ask about for sequences of
    ``lengths`` steps, as its budget admits them."""
    return STEP_STATES * np.maximum(lengths, 1) + lengths


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
    values = _step_values(evaluator, paths, rows, steps, grid)
    # no valid value up to the found one (the other steps changed since):
    # the step may have to do more, toward the far end of its value space.
    # Those values are asked about in the same call where both fit in one
    # (only a lost row's count as asked about)
    far = np.where(current > least, 1.0, 0.0)
    both = None
    if rows.size * (SCAN_POINTS + 1) <= AHEAD_ROWS:  # else too many ahead
        beyond = _scan_grid(evaluator, paths, rows, steps, current, far, support)
        beyond_values = _step_values(evaluator, paths, rows, steps, beyond)
        both = _scanned_together(
            evaluator,
            owner,
            keys,
            rows,
            column,
            current,
            (grid, values),
            (beyond, beyond_values),
        )
    if both is not None:
        (valid_key, trial_key, bar, pending), lost = both
    else:
        valid_key, trial_key, bar, pending = _cheapest_on_grid(
            evaluator, owner, keys, rows, column, grid, current, values
        )
        lost = np.flatnonzero(~np.isfinite(bar))
    if lost.size and both is None:
        # (a row's keys do not depend on the other rows of its grid)
        beyond = _scan_grid(
            evaluator, paths, rows[lost], steps[lost], current[lost], far[lost], support
        )
        (valid_key[lost], trial_key[lost], bar[lost], pending[lost]) = (
            _cheapest_on_grid(
                evaluator,
                owner,
                keys,
                rows[lost],
                column[lost],
                beyond,
                current[lost],
                _step_values(evaluator, paths, rows[lost], steps[lost], beyond),
            )
        )
    # keys closer than one value's width of keys hold no value between them
    resolution = np.maximum(
        _key_resolution(evaluator, paths, rows, steps), KEY_TOLERANCE
    )
    done = 0
    while done < EDGE_ROUNDS:
        pending &= np.abs(trial_key - valid_key) > resolution
        if not pending.any():
            break
        index = np.flatnonzero(pending)
        # the next rounds' keys whatever each round finds, asked in one call
        # (as many rounds as fit in a call of the evaluator's largest size);
        # then the rounds are walked in turn, each taking the keys of the
        # interval the one before left (see _edge_keys)
        depth = _edge_depth(index.size, evaluator.max_rows, EDGE_ROUNDS - done)
        levels = _edge_keys(valid_key[index], trial_key[index], depth)
        width = sum(level.shape[1] * EDGE_POINTS for level in levels)
        at = np.repeat(index, width)
        asked = np.concatenate(
            [level.reshape(index.size, -1) for level in levels], axis=1
        )
        price = evaluator.price(
            owner[rows[at]], _with_keys(keys, rows[at], column[at], asked.ravel())
        ).reshape(index.size, width)
        # the rounds walked: each row's branch (the interval it narrowed to)
        branch = np.zeros(index.size, dtype=np.intp)
        walking = np.ones(index.size, dtype=bool)
        used = np.zeros(index.size, dtype=np.intp)
        offset = 0
        for level in levels:
            n_branches = level.shape[1]
            if offset:  # the first round's were checked above
                gap = np.abs(trial_key[index] - valid_key[index])
                walking &= gap > resolution[index]
            done += 1
            part = np.flatnonzero(walking)
            if part.size:
                mine = index[part]
                points = level[part, branch[part]]
                start = offset + branch[part] * EDGE_POINTS
                price_at = price[part[:, None], start[:, None] + np.arange(EDGE_POINTS)]
                last = _walked(price_at, bar, mine)
                some = last >= 0
                valid_key[mine[some]] = points[np.flatnonzero(some), last[some]]
                after = last + 1
                inner = after < EDGE_POINTS
                trial_key[mine[inner]] = points[np.flatnonzero(inner), after[inner]]
                branch[part] = branch[part] * (EDGE_POINTS + 1) + after
                used[part] += EDGE_POINTS
            offset += n_branches * EDGE_POINTS
        # only the keys a round walked count as asked about (the others are
        # remembered: a later question about them is answered from the memo)
        evaluator.count_asked(owner[rows[np.repeat(index, width - used)]], -1)
        pending[index] &= walking
    keys[rows, column] = valid_key


def _edge_depth(n_rows, max_rows, rounds_left):
    """How many rounds of the edge search one call asks about for ``n_rows``
    rows: as many as fit in ``max_rows`` states with at most ``AHEAD_ROWS``
    of them beyond the first round's (round ``k`` asks
    ``EDGE_POINTS * (EDGE_POINTS + 1) ** k`` keys a row), at least one."""
    depth = 1
    while depth < rounds_left:
        total = n_rows * ((EDGE_POINTS + 1) ** (depth + 1) - 1)
        if total > max_rows or total - n_rows * EDGE_POINTS > AHEAD_ROWS:
            break
        depth += 1
    return depth


def _edge_keys(valid, trial, depth):
    """The keys of ``depth`` rounds of the edge search from the intervals
    ``valid`` to ``trial``: per round, an array of shape ``(n, branches,
    EDGE_POINTS)`` whose branch ``b * (EDGE_POINTS + 1) + o`` holds the keys
    of the next round where the round before, in branch ``b``, ended with
    outcome ``o`` (the points counted up to, 0 for none: the interval from
    the last one counted to the next)."""
    fractions = np.arange(1, EDGE_POINTS + 1) / (EDGE_POINTS + 1)
    low, high = valid[:, None], trial[:, None]
    levels = []
    for _ in range(depth):
        # EDGE_POINTS evenly spaced keys from the valid one toward the trial one
        points = low[:, :, None] + (high - low)[:, :, None] * fractions
        levels.append(points)
        n = points.shape[0]
        low = np.concatenate([low[:, :, None], points], axis=2).reshape(n, -1)
        high = np.concatenate([points, high[:, :, None]], axis=2).reshape(n, -1)
    return levels


def _walked(price, bar, rows):
    """One round of the edge search walked from the valid key on (``price``:
    its points' prices, a row per row of ``rows``): a point counts where it
    is no dearer than every one counted before it; the last one counted is
    kept. Updates ``bar`` (the cost kept) and returns the last point counted
    (-1: none)."""
    running = bar[rows].copy()
    last = np.full(rows.shape[0], -1)
    for j in range(EDGE_POINTS):
        ok = price[:, j] <= _bar(running)
        running = np.where(ok, np.minimum(running, price[:, j]), running)
        last[ok] = j
    bar[rows] = running
    return last


def _cheapest_on_grid(evaluator, owner, keys, rows, column, grid, current, values):
    """Each row's genotype tried with every value key of its row of ``grid``
    in ``column`` (one model call): the key of the cheapest valid sequence
    (the first among equals; ``current`` where none is valid), the key before
    it in the grid (to search toward), its cost (``inf``: none valid) and
    whether there is anything between the two to search. ``values``: the
    value the step takes with each key (:func:`_step_values`)."""
    first, twin = _grid_asks(grid, values)
    # a twin counts as asked about, as it was before it was told apart
    evaluator.count_asked(owner[rows[np.nonzero(twin)[0]]])
    at, point = np.nonzero(first)
    price = np.full(grid.shape, np.inf)
    price[at, point] = evaluator.price(
        owner[rows[at]], _with_keys(keys, rows[at], column[at], grid[at, point])
    )
    return _grid_choice(grid, price, current)


def _scanned_together(evaluator, owner, keys, rows, column, current, up, beyond):
    """:func:`_cheapest_on_grid` of the grid ``up`` (a grid and its values),
    then of the grid ``beyond`` for the rows with no valid value on it (the
    lost rows), in one model call: the first's four results with the lost
    rows' taken from the second, and the lost rows; ``None`` (nothing asked)
    where the two would not fit in one call. What counts as asked about is
    what the two calls would count."""
    asks = [_grid_asks(grid, values) for grid, values in (up, beyond)]
    # the second grid starts at the found key, the first's last: its price
    # is known (not valid, where the second grid is needed)
    asks[1][0][:, 0] = False
    sizes = [int(first.sum()) for first, _ in asks]
    if sum(sizes) > evaluator.max_rows or sizes[1] > AHEAD_ROWS:
        return None
    where, trials = [], []
    for (grid, _), (first, _) in zip((up, beyond), asks):
        at, point = np.nonzero(first)
        where.append((at, point))
        trials.append(_with_keys(keys, rows[at], column[at], grid[at, point]))
    at = np.concatenate([at for at, _ in where])
    by_row = np.argsort(at, kind="stable")
    price = np.empty(at.size)
    price[by_row] = evaluator.price(owner[rows[at[by_row]]], np.vstack(trials)[by_row])
    prices, offset = [], 0
    for (grid, _), (at, point) in zip((up, beyond), where):
        grid_price = np.full(grid.shape, np.inf)
        grid_price[at, point] = price[offset : offset + at.size]
        offset += at.size
        prices.append(grid_price)
    found = _grid_choice(up[0], prices[0], current)
    lost = np.flatnonzero(~np.isfinite(found[2]))
    is_lost = np.zeros(rows.shape[0], dtype=bool)
    is_lost[lost] = True
    # asked about: the first grid's keys and twins, the lost rows' others
    (_, twin), (_, beyond_twin) = asks
    beyond_at = where[1][0]
    evaluator.count_asked(owner[rows[np.nonzero(twin)[0]]])
    evaluator.count_asked(owner[rows[beyond_at[~is_lost[beyond_at]]]], -1)
    twin_at = np.nonzero(beyond_twin)[0]
    evaluator.count_asked(owner[rows[twin_at[is_lost[twin_at]]]])
    evaluator.count_asked(owner[rows[lost]])  # the found key, asked again
    if lost.size:
        more = _grid_choice(beyond[0][lost], prices[1][lost], current[lost])
        for part, lost_part in zip(found, more):
            part[lost] = lost_part
    return found, lost


def _grid_asks(grid, values):
    """Which keys of ``grid`` are asked about, and the twins (see below)."""
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
    return first, twin


def _grid_choice(grid, price, current):
    """The four results of :func:`_cheapest_on_grid` from the prices of the
    keys of ``grid`` (``inf``: not valid, or not asked about)."""
    best = price.min(axis=1)
    some = np.isfinite(best)
    chosen = np.argmax(price <= _bar(best)[:, None], axis=1)
    at = np.arange(grid.shape[0])
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


def _drop(evaluator, owner, keys, width):
    """Drop each sequence's steps, from its last (of ``width`` positions) to
    its first, where the sequence stays valid and gets no more expensive
    (in place).

    Each step's trial depends on which later steps were dropped; the trials
    of several positions, for every such choice, are asked about in one
    model call (as many positions as fit in a call of the evaluator's largest
    size), then the positions are walked in turn, each taking the trial of
    the choice made so far. Only the trials walked count as asked about.
    """
    order, _ = evaluator.decode(keys)
    top = width - 1
    while top >= 0:
        start = evaluator.simulate(owner, keys)
        lengths = start.lengths
        depth, asked = 0, 0
        while depth < top + 1:
            more = np.count_nonzero(lengths > top - depth) << depth
            ahead = asked + more - np.count_nonzero(lengths > top)
            if depth and (asked + more > evaluator.max_rows or ahead > AHEAD_ROWS):
                break
            asked += more
            depth += 1
        # every trial of positions top, ..., top - depth + 1: row r, position
        # top - t, with the steps of the bits of v (bit u: position top - u)
        # dropped before it
        trial_rows, trial_keys, where = [], [], []
        for t in range(depth):
            rows = np.flatnonzero(lengths > top - t)
            for v in range(1 << t):
                trial = take_rows(keys, rows)
                at = np.arange(rows.shape[0])
                for u in range(t):
                    if v >> u & 1:
                        trial[at, order[rows, top - u]] = INACTIVE
                trial[at, order[rows, top - t]] = INACTIVE
                trial_rows.append(rows)
                trial_keys.append(trial)
                where.append((t, v))
        source = np.concatenate(trial_rows)
        by_row = np.argsort(source, kind="stable")
        price = np.empty(source.size)
        price[by_row] = evaluator.price(
            owner[source[by_row]], np.vstack(trial_keys)[by_row]
        )
        prices, offset = {}, 0
        for (t, v), rows in zip(where, trial_rows):
            prices[t, v] = (rows, price[offset : offset + rows.size])
            offset += rows.size
        # the positions walked in turn, each row along the choices it made
        choice = np.zeros(keys.shape[0], dtype=np.intp)
        walked = []
        for t in range(depth):
            # (nothing dropped yet at the first position)
            paths = start if t == 0 else evaluator.simulate(owner, keys)
            rows = np.flatnonzero(paths.lengths > top - t)
            if rows.size == 0:
                continue
            found = np.empty(rows.size)
            for v in np.unique(choice[rows]).tolist():
                mine = choice[rows] == v
                known, values = prices[t, v]
                found[mine] = values[np.searchsorted(known, rows[mine])]
            walked.append(owner[rows])
            column = paths.order[rows, top - t]
            keep = found <= paths.sequence_cost[rows] + COST_TOLERANCE
            keys[rows[keep], column[keep]] = INACTIVE
            choice[rows[keep]] |= 1 << t
        # only the trials walked count as asked about (the others are
        # remembered: a later question about them is answered from the memo)
        evaluator.count_asked(owner[source], -1)
        evaluator.count_asked(np.concatenate([owner[:0], *walked]))
        top -= depth

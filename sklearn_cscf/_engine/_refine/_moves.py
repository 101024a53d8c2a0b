"""Refinement's deeper neighbourhoods: other orders, joint values, trades,
one action more or less, every action alone and steps across discount steps
(see :mod:`sklearn_cscf._engine._refine`). Each returns new candidate genotypes,
re-fitted by :func:`~sklearn_cscf._engine._refine._fit.fitted`."""

from itertools import permutations

import numpy as np

from sklearn_cscf._engine._genotypes import (
    far_keys,
    genotypes,
    single_steps,
)
from sklearn_cscf._engine._refine._fit import (
    COST_TOLERANCE,
    EDGE_POINTS,
    EDGE_ROUNDS,
    KEY_TOLERANCE,
    MOVE_TOLERANCE,
    SCAN_POINTS,
    at_far_ends,
    estimated_states,
    fitted,
    least_keys,
    no_candidates,
    pull_back,
    without,
)
from sklearn_cscf._rows import take_rows

# values of an unordered category tried when a step is inserted, at most
INSERTED_VALUES = 8
# copies of a step just across the largest discount steps, at most
ACROSS_STEPS = 3
# plans of up to this many steps are tried in every order
ALL_ORDERS_UP_TO = 4
# a traded step's shares of the way from its least change to its far end
TRADE_SHARES = (1 / 4, 1 / 16)
# the joint move's first share of the way to the least change, and halvings
JOINT_FIRST_SHARE = 0.5
JOINT_SHARES = 5
# an inserted step changes its feature by these shares of its value (a
# list: of the way to its end), and keeps it while the others are re-fitted
INSERT_SHARES = (1 / 32, 1 / 4)
# ... and one that replaces the dearest step
REPLACE_SHARES = (1 / 32, 1 / 8, 1 / 4)
# rounds of the joint move, at most
JOINT_ROUNDS = 24


def order_proposals(evaluator, owner, keys):
    """Every other order of each plan of up to ``ALL_ORDERS_UP_TO`` steps,
    adjacent swaps of longer ones, to be re-fitted in the new order (see
    :func:`no_proposals`; one model call asks which keep their values)."""
    n_actions = evaluator.problem.n_actions
    order, lengths = evaluator.decode(keys)
    source, pick = _reorderings(lengths, order.shape[1])
    if source.size == 0:
        return no_proposals(n_actions)
    new_order = np.take_along_axis(order[source], pick, axis=1)
    new_owner = owner[source]
    new_keys = genotypes(new_order, keys[source, n_actions:], n_actions)
    # where the found values are not valid in the new order, every step
    # starts from the far end of its values
    admitted = evaluator.admit(new_owner, 1)
    new_owner, new_keys, new_order = (
        new_owner[admitted],
        new_keys[admitted],
        new_order[admitted],
    )
    if new_owner.size == 0:
        return no_proposals(n_actions)
    judged = evaluator.judge(new_owner, new_keys)
    lost = np.flatnonzero(~judged.feasible)
    if lost.size:
        new_keys[lost] = at_far_ends(evaluator.problem, new_keys[lost], new_order[lost])
    return new_owner, new_keys, None, None


def _reorderings(lengths, width):
    """Every other order (:func:`_other_orders_of`) of each sequence of
    ``lengths`` steps: the sequence each comes from (sorted, so that the
    owners' order is kept) and the positions its steps are taken from."""
    sources, picks = [], []
    for length in np.unique(lengths).tolist():
        rows = np.flatnonzero(lengths == length)
        for move in _other_orders_of(length):  # none below two steps
            pick = np.arange(width)
            pick[:length] = move
            sources.append(rows)
            picks.append(np.broadcast_to(pick, (rows.size, width)))
    if not sources:
        return np.empty(0, dtype=np.intp), np.empty((0, width), dtype=np.intp)
    source = np.concatenate(sources)
    by_row = np.argsort(source, kind="stable")
    return source[by_row], np.vstack(picks)[by_row]


def _other_orders_of(length):
    """Every other order of ``length`` steps (as permutations of their
    positions) up to ``ALL_ORDERS_UP_TO`` steps, adjacent swaps beyond."""
    if length <= ALL_ORDERS_UP_TO:
        return list(permutations(range(length)))[1:]
    moves = []
    for p in range(length - 1):
        move = list(range(length))
        move[p], move[p + 1] = move[p + 1], move[p]
        moves.append(tuple(move))
    return moves


def reordered(evaluator, owner, keys):
    """The same steps in every other order (see :func:`_other_orders_of`),
    each step setting the value it sets now: its value key found again for
    the state it then starts from. Where the order only changes the
    discounts, the final state is the same in every order (the same distance
    and changes), so a dearer order is dominated by a cheaper one.

    Returns the row of ``keys`` each genotype comes from (sorted) and the
    genotypes.
    """
    problem = evaluator.problem
    n_actions = problem.n_actions
    if owner.size == 0:
        return no_candidates(n_actions)
    paths = evaluator.simulate(owner, keys, record=True)
    source, pick = _reorderings(paths.lengths, n_actions)
    if source.size == 0:
        return no_candidates(n_actions)
    order = np.take_along_axis(paths.order[source], pick, axis=1)
    target = np.take_along_axis(paths.new_values[source], pick, axis=1)
    values = keys[source, n_actions:].copy()
    state = paths.states[source, 0].copy()
    found = np.ones(source.size, dtype=bool)
    for step in range(order.shape[1]):
        for a in np.unique(order[:, step][order[:, step] >= 0]).tolist():
            rows = np.flatnonzero(order[:, step] == a)
            action = problem.actions[a]
            current = state[rows, action.feature]
            key = action.space.key_of(target[rows, step], current)
            found[rows] &= np.isfinite(key)
            key = np.nan_to_num(key)
            values[rows, a] = key
            state[rows] = action.apply(state[rows], key)[0]
    new_keys = genotypes(order, values, n_actions)
    return source[found], new_keys[found]


def joint_moves(evaluator, owner, keys):
    """Two steps moved together along the decision boundary (see the module's
    docstring): a pattern search over each sequence's ordered pairs of
    steps, in lock step over the rows. Returns the rows it improved."""
    problem = evaluator.problem
    n_actions = problem.n_actions
    keys = keys.copy()
    _, lengths = evaluator.decode(keys)
    keep = lengths >= 2
    owner, keys, lengths = owner[keep], keys[keep], lengths[keep]
    if owner.size == 0:
        return no_candidates(n_actions)
    cost = evaluator.price(owner, keys)
    share = np.full(owner.size, JOINT_FIRST_SHARE)
    halvings = np.zeros(owner.size, dtype=np.intp)
    improved = np.zeros(owner.size, dtype=bool)
    width = int(lengths.max())
    extra_owner, extra_keys = [], []
    if problem.graph.edges:
        across = _across(evaluator, owner, keys, lengths)
        extra_owner.append(across[0])
        extra_keys.append(across[1])
    for _ in range(JOINT_ROUNDS):
        live = np.flatnonzero((halvings < JOINT_SHARES) & np.isfinite(cost))
        if live.size == 0:
            break
        paths = evaluator.simulate(owner[live], keys[live], record=True)
        sources, trial_keys, refit = [], [], []
        for i in range(width):
            inside = np.flatnonzero(paths.lengths > i)
            if inside.size == 0:
                continue
            least = least_keys(evaluator, paths, inside, i)
            column = n_actions + paths.order[inside, i]
            current = keys[live[inside], column]
            movable = np.isfinite(least) & (np.abs(least - current) > KEY_TOLERANCE)
            inside, least, column, current = (
                a[movable] for a in (inside, least, column, current)
            )
            for j in range(width):
                if j == i:
                    continue
                pair = np.flatnonzero(paths.lengths[inside] > j)
                if pair.size == 0:
                    continue
                rows = live[inside[pair]]
                way = least[pair] - current[pair]
                # toward the least change, and as far away (a step that
                # overshot: the better point lies between the last two)
                for sign in (1.0, -1.0):
                    moved = take_rows(keys, rows)
                    moved[np.arange(pair.size), column[pair]] = np.clip(
                        current[pair] + sign * share[rows] * way, 0.0, 1.0
                    )
                    sources.append(rows)
                    trial_keys.append(moved)
                    refit.append(np.full(pair.size, j))
        if not sources:
            break
        source = np.concatenate(sources)
        by_row = np.argsort(source, kind="stable")
        source = source[by_row]
        trial = np.vstack(trial_keys)[by_row]
        refit = np.concatenate(refit)[by_row]
        admitted = evaluator.admit(
            owner[source], SCAN_POINTS + 2 + EDGE_ROUNDS * EDGE_POINTS // 2
        )
        source, trial, refit = source[admitted], trial[admitted], refit[admitted]
        tried = np.zeros(owner.size, dtype=bool)
        tried[source] = True
        halvings[~tried] = JOINT_SHARES  # out of budget or nothing to move
        if source.size == 0:
            break
        # the step that makes up is re-fitted by the even grid and the edge search
        # (the training values were scanned when its plan was fitted)
        pull_back(evaluator, owner[source], trial, refit, support=0)
        price = evaluator.price(owner[source], trial)
        # each row's cheapest trial (the first among equals)
        order = np.lexsort((price, source))
        first = order[np.r_[True, np.diff(source[order]) != 0]]
        row = source[first]
        better = price[first] < cost[row] - MOVE_TOLERANCE * np.abs(cost[row])
        keys[row[better]] = trial[first[better]]
        cost[row[better]] = price[first[better]]
        improved[row[better]] = True
        # a move that pays is tried larger next (up to the first share)
        share[row[better]] = np.minimum(2 * share[row[better]], JOINT_FIRST_SHARE)
        worse = row[~better]
        share[worse] /= 2
        halvings[worse] += 1
    rows = np.flatnonzero(improved)
    owners = [owner[rows], *extra_owner]
    found = [keys[rows], *extra_keys]
    return np.concatenate(owners), np.vstack(found).reshape(-1, 2 * n_actions)


def trade_proposals(evaluator, owner, keys):
    """Each step pushed toward the far end of its values (all the way, and
    ``TRADE_SHARES`` of the way from its least change), the other steps to
    be re-fitted and the pushed one last: a jump to another corner of the
    decision boundary, where a tree's staircase may be cheaper than anything
    the joint moves reach step by step (see :func:`no_proposals`; no model
    call)."""
    problem = evaluator.problem
    n_actions = problem.n_actions
    order, lengths = evaluator.decode(keys)
    several = np.flatnonzero(lengths >= 2)
    if several.size == 0:
        return no_proposals(n_actions)
    paths = evaluator.simulate(owner[several], keys[several], record=True)
    two_sided = np.array([action.space.two_sided for action in problem.actions])
    sources, copies, last = [], [], []
    for p in range(int(lengths.max())):
        inside = np.flatnonzero(lengths[several] > p)
        if inside.size == 0:
            continue
        rows = several[inside]
        least = least_keys(evaluator, paths, inside, p)
        column = n_actions + order[rows, p]
        current = keys[rows, column]
        movable = np.isfinite(least)
        rows, least, column, current = (
            a[movable] for a in (rows, least, column, current)
        )
        far = np.where(current >= least, 1.0, 0.0)
        # a step free both ways also crosses to the other side of its value
        # (a loan shortened where it was lengthened)
        crossing = two_sided[order[rows, p]]
        for end, sided in ((far, slice(None)), (1.0 - far, crossing)):
            for share in (1.0, *TRADE_SHARES):
                copy = keys[rows[sided]].copy()
                copy[np.arange(copy.shape[0]), column[sided]] = least[sided] + share * (
                    end[sided] - least[sided]
                )
                sources.append(rows[sided])
                copies.append(copy)
                last.append(np.full(copy.shape[0], p))
    return _last_proposed(evaluator, owner, sources, copies, last)


def _across(evaluator, owner, keys, lengths):
    """Copies whose step that sets a source of the feature graph is just
    across the largest steps of its discounts (see
    :func:`_across_discount_steps`), the other steps then re-fitted."""
    sources, copies, last = [], [], []
    for position in range(int(lengths.max())):
        rows = np.flatnonzero(lengths > position)
        if rows.size == 0:
            continue
        paths = evaluator.simulate(owner[rows], keys[rows], record=True)
        pushed = np.full(owner.size, position)
        source, copy = _across_discount_steps(evaluator, keys, pushed, rows, paths)
        sources.append(source)
        copies.append(copy)
        last.append(np.full(source.size, position))
    # the other steps adapt to it, then it is pulled back last
    return fitted(evaluator, *_last_proposed(evaluator, owner, sources, copies, last))


def _last_proposed(evaluator, owner, sources, copies, last):
    """The proposals (see :func:`no_proposals`) of the copies ``copies`` of rows
    ``sources`` (lists of parts), each one's step ``last`` re-fitted after
    the others, in the order of their rows."""
    if not sources:
        return no_proposals(evaluator.problem.n_actions)
    source = np.concatenate(sources)
    by_row = np.argsort(source, kind="stable")
    copy = np.vstack(copies)[by_row]
    last = np.concatenate(last)[by_row]
    return owner[source[by_row]], copy, last, None


def more_or_less_proposals(evaluator, owner, keys):
    """One step dropped, one action inserted at any position, or one action
    swapped for another on the same feature; each to be re-fitted (see
    :func:`no_proposals`; no model call)."""
    problem = evaluator.problem
    n_actions = problem.n_actions
    max_length = problem.settings.max_sequence_length
    order, lengths = evaluator.decode(keys)
    values = keys[:, n_actions:]
    sources, orders, new_values, last, held, ranks = [], [], [], [], [], []

    def add(rows, new_order, value, position, hold=False, rank=0):
        sources.append(rows)
        orders.append(new_order)
        new_values.append(value)
        last.append(position)
        held.append(np.full(rows.size, hold))
        ranks.append(np.full(rows.size, rank))

    width = order.shape[1]
    for p in range(int(lengths.max(initial=0))):
        rows = np.flatnonzero(lengths > p)
        if rows.size == 0:
            continue
        # drop step p: the others re-fitted (they may have to do more)
        dropped = without(order[rows], np.full(rows.size, p))
        add(rows, dropped, values[rows], np.full(rows.size, -1))
    paths = evaluator.simulate(owner, keys, record=True)
    inside = np.arange(width)[None, :] < lengths[:, None]
    dearest_at = np.argmax(np.where(inside, paths.step_cost, -np.inf), axis=1)
    for a, action in enumerate(problem.actions):
        space = action.space
        missing = ~(order == a).any(axis=1)
        lacking = missing if max_length is None else missing & (lengths < max_length)
        for value_key in far_keys(space, INSERTED_VALUES):
            for p in range(int(lengths.max(initial=0)) + 1):
                rows = np.flatnonzero(lacking & (lengths >= p))
                if rows.size == 0:
                    continue
                inserted = np.insert(order[rows], p, a, axis=1)[:, :width]
                # small changes first: part of the way from the least change
                # toward the far end (an unordered category: its value)
                current = paths.states[rows, p, action.feature]
                least = space.least_change_key(current)
                ordered = np.isfinite(least)
                for share in INSERT_SHARES if ordered.any() else (1.0,):
                    value = values[rows].copy()
                    small = space.small_change_key(current, least, value_key, share)
                    value[:, a] = np.where(ordered, small, value_key)
                    add(rows, inserted, value, np.full(rows.size, p), True)
        # replaced: the dearest step dropped and the action inserted instead,
        # anywhere: with a small change that it keeps while the others are
        # re-fitted (a fixed effort traded for a year of waiting, say), and
        # at the far end of its values, re-fitted last
        replaced = missing & (lengths >= 2)  # one step alone: the singles
        start = paths.states[:, 0, action.feature]
        least = space.least_change_key(start)
        ordered = np.isfinite(least)
        for value_key in far_keys(space, INSERTED_VALUES):
            variants = [(np.full(start.shape, value_key), False)]
            if ordered.any():
                variants += [
                    (space.small_change_key(start, least, value_key, share), True)
                    for share in REPLACE_SHARES
                ]
            for key, hold in variants:
                for q in range(int(lengths.max(initial=0))):
                    rows = np.flatnonzero(replaced & (lengths > q))
                    if hold:
                        rows = rows[ordered[rows]]
                    if rows.size == 0:
                        continue
                    kept = without(order[rows], dearest_at[rows])
                    swapped = np.insert(kept, q, a, axis=1)[:, :width]
                    value = values[rows].copy()
                    value[:, a] = key[rows]
                    # after every other candidate of the instance's plans
                    add(rows, swapped, value, np.full(rows.size, q), hold, 1)
        # swapped for another action on the same feature
        for b, other in enumerate(problem.actions):
            if b == a or other.feature != action.feature:
                continue
            for p in range(int(lengths.max(initial=0))):
                rows = np.flatnonzero((order[:, p] == a) & ~(order == b).any(axis=1))
                if rows.size == 0:
                    continue
                swapped = order[rows].copy()
                swapped[:, p] = b
                value = values[rows].copy()
                value[:, b] = far_keys(other.space, INSERTED_VALUES)[0]
                add(rows, swapped, value, np.full(rows.size, p))
    if not sources:
        return no_proposals(n_actions)
    source = np.concatenate(sources)
    # by instance, then rank, then plan (the cheapest first)
    by_row = np.lexsort((source, np.concatenate(ranks), owner[source]))
    source = source[by_row]
    new_order = np.vstack(orders)[by_row]
    new_keys = genotypes(new_order, np.vstack(new_values)[by_row], n_actions)
    last = np.concatenate(last)[by_row]
    hold = np.concatenate(held)[by_row]
    return owner[source], new_keys, last, hold


def no_proposals(n_actions):
    """No proposals. Proposals are candidates to fit (the arguments of
    :func:`~sklearn_cscf._engine._refine._fit.fitted`): their instances
    (sorted), genotypes, the position of each one's step fitted after the
    others (``None`` or -1: none) and whether that step keeps its value
    (``None``: none does)."""
    return (*no_candidates(n_actions), None, None)


def fitted_together(evaluator, parts):
    """The proposals of several neighbourhoods (a list) fitted in one
    :func:`~sklearn_cscf._engine._refine._fit.fitted` (every step's
    pull-back: one model call for all of them), each instance's in the
    neighbourhoods' order, or one neighbourhood after the other (each
    admitted against what the ones before left), as ``fitted`` of each
    would: the instance's fitted proposals, as a list of (owners, keys).

    Each proposal is fitted as it would be alone, so the answers are the same
    for the instances whose budget admits every proposal either way:
    together, and one neighbourhood after the other even had every state
    asked about by all of them been asked before each. The others' proposals
    (checked before, and after the fact) are fitted one neighbourhood after
    the other, what was asked about together uncounted (the answers stay
    remembered).
    """
    n_actions = evaluator.problem.n_actions
    n = len(evaluator)
    need = []
    for owner, keys, _, _ in parts:
        _, lengths = evaluator.decode(keys)
        need.append(np.bincount(owner, estimated_states(lengths), minlength=n))
    left, asked = evaluator.left(), evaluator.asked.copy()
    together = sum(need) <= left
    found = []
    if together.any():
        chosen = [together[part[0]] for part in parts]
        owner = np.concatenate([part[0][c] for part, c in zip(parts, chosen)])
        keys = np.vstack(
            [part[1][c].reshape(-1, 2 * n_actions) for part, c in zip(parts, chosen)]
        )
        last = np.concatenate(
            [
                np.full(c.sum(), -1) if part[2] is None else part[2][c]
                for part, c in zip(parts, chosen)
            ]
        )
        hold = np.concatenate(
            [
                np.zeros(c.sum(), dtype=bool) if part[3] is None else part[3][c]
                for part, c in zip(parts, chosen)
            ]
        )
        by_owner = np.argsort(owner, kind="stable")
        owner, keys = fitted(
            evaluator, owner[by_owner], keys[by_owner], last[by_owner], hold[by_owner]
        )
        spent = evaluator.asked - asked
        late = together & np.any([part > left - spent for part in need], axis=0)
        evaluator.asked[late] = asked[late]
        together &= ~late
        found.append((owner[together[owner]], keys[together[owner]]))
    for part in parts:
        alone = ~together[part[0]]
        if alone.any():
            found.append(
                fitted(
                    evaluator,
                    *(None if a is None else a[alone] for a in part),
                )
            )
    return found


def singles(evaluator, n_instances):
    """Every action alone, at the far end(s) of its value space, for every
    instance: refined, they give each instance its cheapest one-step plans
    whatever the search found (the least change that the model accepts, to
    the step's resolution).

    Returns the instance of each genotype and the genotypes.
    """
    problem = evaluator.problem
    alone = [
        (a, value_key)
        for a, action in enumerate(problem.actions)
        for value_key in far_keys(action.space, INSERTED_VALUES)
    ]
    keys = single_steps(
        [a for a, _ in alone], [key for _, key in alone], problem.n_actions
    )
    owner = np.repeat(np.arange(n_instances), keys.shape[0])
    return owner, np.tile(keys, (n_instances, 1))


def _across_discount_steps(evaluator, keys, pushed, rows, paths):
    """Copies of the rows ``rows`` (trajectories ``paths``, see
    :func:`_pushed_steps`) whose pushed step sets a source of the feature
    graph, that step just across the largest steps of the discounts it gives
    later steps, anywhere in its value space (at most ``ACROSS_STEPS`` per
    row); pulling the other steps back (or further, see :func:`pull_back`)
    then adapts them to it.

    A tau function is often a step function of its source (studying is
    discounted below 20 working hours): the cheapest value of such a step may
    be just across a threshold that its least change and its pushed value
    both miss. The thresholds are found among the training values between the
    two by asking the tau functions, not the model.

    Returns the row each copy comes from and the copies' genotypes.
    """
    problem = evaluator.problem
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

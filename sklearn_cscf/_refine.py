"""Refinement, beyond the paper: a bounded local search from the final fronts.

Random keys only approach a boundary (a range end, a constraint, the model's
decision threshold): the search stops a little short of the cheapest values,
and may report a plan in a dearer order or with a dearer split of one change
over several steps. After the search, each instance's sequences are polished
by one local search with named neighbourhoods, a budget and a stopping rule,
run in lock step over the instances of a block (each round of every stage is
one model call for all instances and candidates; remembered states are
answered by each instance's memo, the search's own):

- **fit** (every plan of the front, and every action alone): each step in
  turn is pulled back to its least valid value (the sequence stays valid: the
  model's decision is the target and every constraint holds), which depends
  on the steps before it. Evenly spaced values and the training values
  between the least change and the current one are scanned, the cheapest
  valid one kept and bisected toward the least change (the edge of an island
  of acceptance, or of a discount step). Where no value up to the current one
  is valid any more, the values beyond it are scanned the same way. A step
  whose dropping keeps the sequence valid and no dearer is then dropped.
- **orders**: every other order of a plan of up to ``ALL_ORDERS_UP_TO`` steps
  (adjacent swaps beyond), its values re-fitted in the new order.
- **joint values**: two steps moved at once along the decision boundary: one
  step shrinks a share of its way to its least change (or grows as much: a
  move that overshot), another is re-fitted to make up for it (pulled back
  further, or pushed as far as needed). A pattern search: the best improving
  pair of each sequence is kept, the share halves when none improves
  (``JOINT_SHARES`` times at most). With a
  feature graph, a step that sets a source is also tried just across the
  largest steps of the discounts it gives later steps.
- **trades**: one step pushed to the far end of its values (or a share of
  the way), the others re-fitted, the pushed one last: a jump to another
  corner of the boundary (a tree's boundary is a staircase). A step free
  both ways is also pushed to the other side of its start (a loan shortened
  where the search lengthened it).
- **one action more or less**: a step dropped, an action the plan lacks
  inserted at any position (at the far end of its values, re-fitted last, so
  that it ends at the smallest value that still pays), the plan's dearest
  step replaced by such an action (a fixed effort traded for a year of
  waiting), an action swapped for another on the same feature; each
  re-fitted.

The deeper neighbourhoods (orders, trades, more or less, then joint values
from the cheapest plans with the new ones among them) start from
each instance's ``DEEP_PLANS`` cheapest distinct plans, round after round,
until a round finds nothing cheaper for that instance (at most
``MAX_ROUNDS``). **Budget**: the states refinement asks about (remembered or
not) for an instance are at most ``REFINE_SHARE`` times those its search
asked about, and at least ``MIN_STATES``; a stage only starts the candidates
whose estimated states still fit (cheapest plans first), so the work is
bounded whatever the number of actions. All counts are per instance, so an
instance's result never depends on the other members of its block.

The refined sequences join the originals and the front is filtered again for
dominance and distinctness: a sequence dominated after polishing leaves the
front, and refinement never loses a found sequence that is still
Pareto-optimal.
"""

from itertools import permutations
from typing import Protocol

import numpy as np

from sklearn_cscf._decoding import decode_order
from sklearn_cscf._search import Evaluation, first_occurrences, pareto_front
from sklearn_cscf._simulation import order_keys

# the edge of a step's valid values is searched with EDGE_POINTS evenly
# spaced keys a round (a (EDGE_POINTS + 1)-ary search: one model call a round
# narrows the interval as much as log2(EDGE_POINTS + 1) bisections), until the
# interval holds one value or is below KEY_TOLERANCE (2**-17 of the key range
# is below 1e-5)
EDGE_POINTS = 7
EDGE_ROUNDS = 6
KEY_TOLERANCE = 2.0**-17
# a refined sequence must be cheaper by more than this to count as improved
COST_TOLERANCE = 1e-9
# a local move must save more than this share of the cost to be taken
MOVE_TOLERANCE = 1e-6
INACTIVE = 1.0  # an action key above 0.5 drops the action
# values of an unordered category tried when a step is inserted, at most
INSERTED_VALUES = 8
# values scanned between the least change and the found one before bisecting
SCAN_POINTS = 8
# training values tried between them, at most
# (each found plan's first fit: islands of acceptance around training values) ...
SCAN_SUPPORT = 96
# ... and in the deeper neighbourhoods
DEEP_SCAN_SUPPORT = 96
# copies of a step just across the largest discount steps, at most
ACROSS_STEPS = 3
# the budget: states asked by refinement, as a share of the search's ...
REFINE_SHARE = 5.0
# ... and at least this many per instance
MIN_STATES = 4000
# states a step's pull-back asks about, as estimated to admit candidates
STEP_STATES = SCAN_POINTS + 1 + DEEP_SCAN_SUPPORT // 3 + EDGE_ROUNDS * EDGE_POINTS // 2
# plans of up to this many steps are tried in every order
ALL_ORDERS_UP_TO = 4
# each instance's cheapest distinct plans that the deeper neighbourhoods polish
DEEP_PLANS = 3
# a traded step's shares of the way from its least change to its far end
TRADE_SHARES = (1 / 4, 1 / 16)
# the share of an instance's budget left that a round's orders, trades and
# insertions may use (the joint moves get the rest)
MORE_SHARE = 0.5
# ... and of them and the new plans, that the joint moves polish
JOINT_PLANS = 4
# rounds of the deeper neighbourhoods, at most
MAX_ROUNDS = 4
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


class _Budgeted:
    """A :class:`Trials` that counts the states asked about per instance."""

    def __init__(self, block, budget):
        self.block = block
        self.problem = block.problem
        self.budget = np.asarray(budget, dtype=float)
        self.spent = np.zeros(self.budget.shape[0])
        self.support = SCAN_SUPPORT  # training values a pull-back scans

    def simulate(self, owner, keys, record=False):
        return self.block.simulate(owner, keys, record)

    def judge(self, owner, keys):
        self.spent += np.bincount(owner, minlength=self.spent.shape[0])
        return self.block.judge(owner, keys)

    def left(self):
        return self.budget - self.spent

    def admit(self, owner, estimate):
        """Which rows (sorted by owner, by priority within it) fit their
        instance's budget left, with ``estimate`` states each."""
        if owner.size == 0:
            return np.zeros(0, dtype=bool)
        estimate = np.broadcast_to(np.asarray(estimate, dtype=float), owner.shape)
        total = np.cumsum(estimate)
        starts = np.r_[0, np.flatnonzero(np.diff(owner)) + 1]
        sizes = np.diff(np.r_[starts, owner.size])
        before = np.repeat(total[starts] - estimate[starts], sizes)
        return total - before <= self.left()[owner]


def refine_budget(usage):
    """The states each instance's refinement may ask about: ``REFINE_SHARE``
    times those its search asked about (``usage``: each instance's
    :class:`~sklearn_cscf._model.Usage` after the search), at least
    ``MIN_STATES``."""
    asked = np.array([record.n_asked for record in usage], dtype=float)
    return np.maximum(REFINE_SHARE * asked, MIN_STATES)


def refine(block, fronts, budget=None):
    """Refined fronts of a block, and how many sequences refinement improved.

    Parameters
    ----------
    block : Trials
        The block whose searches produced ``fronts`` (only its ``problem``,
        ``simulate`` and ``judge`` are used).
    fronts : list of (keys, Evaluation)
        Each instance's final front.
    budget : array-like of shape (n_instances,), default=None
        The states each instance's refinement may ask about; ``None``:
        ``MIN_STATES`` each.

    Returns
    -------
    fronts : list of (keys, Evaluation)
        Each instance's front after refinement.
    improved : ndarray of shape (n_instances,)
        Sequences of each new front that are refined ones, cheaper than the
        cheapest sequence the search found.
    """
    n = len(fronts)
    if budget is None:
        budget = np.full(n, MIN_STATES)
    trials = _Budgeted(block, budget)
    problem = block.problem
    n_actions = problem.n_actions
    cost_column = problem.slices["sequence_cost"].start
    counts = [fronts[m][0].shape[0] for m in range(n)]
    found_owner = np.repeat(np.arange(n), counts).astype(np.intp)
    found = np.vstack([keys for keys, _ in fronts]).reshape(-1, 2 * n_actions)
    before = Evaluation.concatenate([evaluation for _, evaluation in fronts])
    found_cost = before.F[:, cost_column]
    least = np.full(n, np.inf)
    np.minimum.at(least, found_owner, found_cost)

    # every sequence found (cheapest first), then every action alone
    single_owner, single_keys = _singles(block, n)
    owner = np.concatenate([found_owner, single_owner])
    keys = np.vstack([found, single_keys])
    priority = np.concatenate([found_cost, np.full(single_owner.size, np.inf)])
    by_owner = np.lexsort((priority, owner))
    owner, keys = owner[by_owner], keys[by_owner].copy()
    if owner.size == 0:
        return fronts, np.zeros(n, dtype=np.intp)
    owner, keys = _fitted(trials, owner, keys)
    pool_owner, pool_keys, pool_cost = _judged(trials, owner, keys)
    trials.support = DEEP_SCAN_SUPPORT
    best = _least_per_owner(pool_owner, pool_cost, n)
    active = np.isfinite(best)
    pool = (pool_owner, pool_keys, pool_cost)
    polished = {"more": set(), "joint": set()}
    for _ in range(MAX_ROUNDS):
        if not active.any():
            break
        # orders and one action more or less, from the cheapest plans; then
        # joint values, from the cheapest plans with the new ones among them
        for name, stages, count in (
            ("more", (_orders, _trades, _more_or_less), DEEP_PLANS),
            ("joint", (_joint,), JOINT_PLANS),
        ):
            base = _bases(*pool, active, polished[name], n_actions, count)
            if base.size == 0:
                continue
            # the broad neighbourhoods may use half of what is left, so that
            # the joint moves always get their turn
            budget = trials.budget
            if name == "more":
                trials.budget = trials.spent + MORE_SHARE * trials.left()
            new = []
            for stage in stages:
                new.append(stage(trials, pool[0][base], pool[1][base]))
            trials.budget = budget
            new_owner = np.concatenate([o for o, _ in new])
            new_keys = np.vstack([k for _, k in new]).reshape(-1, 2 * n_actions)
            order = np.argsort(new_owner, kind="stable")
            pool = _merged(pool, _judged(trials, new_owner[order], new_keys[order]))
        pool_owner, pool_keys, pool_cost = pool
        now = _least_per_owner(pool_owner, pool_cost, n)
        with np.errstate(invalid="ignore"):
            improved = now < best - MOVE_TOLERANCE * np.abs(best)
        best = now
        active &= improved & (trials.left() > 0)

    refined = block.judge(pool_owner, pool_keys) if pool_owner.size else None
    new_fronts = list(fronts)
    improved = np.zeros(n, dtype=np.intp)
    for m, count in enumerate(counts):
        mine = np.flatnonzero(pool_owner == m)
        if mine.size == 0:
            continue
        both = Evaluation.concatenate([fronts[m][1], refined.take(mine)])
        both_keys = np.vstack([fronts[m][0], pool_keys[mine]])
        front = pareto_front(both)
        new_fronts[m] = (both_keys[front], both.take(front))
        came_refined = front[front >= count]
        cheaper = both.F[came_refined, cost_column] < least[m] - COST_TOLERANCE
        improved[m] = int(cheaper.sum())
    return new_fronts, improved


def _least_per_owner(owner, cost, n):
    least = np.full(n, np.inf)
    if owner.size:
        np.minimum.at(least, owner, cost)
    return least


def _judged(trials, owner, keys):
    """The feasible rows (sorted by owner), distinct per owner, and their
    costs."""
    if owner.size == 0:
        return owner, keys, np.empty(0)
    judged = trials.judge(owner, keys)
    cost = judged.F[:, trials.problem.slices["sequence_cost"].start]
    keep = np.flatnonzero(judged.feasible)
    owner, keys, cost = owner[keep], keys[keep], cost[keep]
    sequence = judged.sequence_key[keep]
    distinct = _distinct(owner, sequence)
    return owner[distinct], keys[distinct], cost[distinct]


def _distinct(owner, sequence):
    """Indices of the first row of each distinct (owner, sequence), in order."""
    if owner.size == 0:
        return np.empty(0, dtype=np.intp)
    tagged = np.array(
        [bytes(s) + int(o).to_bytes(8, "little") for o, s in zip(owner, sequence)],
        dtype=object,
    )
    return first_occurrences(tagged)


def _merged(old, new):
    """Two pools of (owner, keys, cost) in one, sorted by owner (old first)."""
    owner = np.concatenate([old[0], new[0]])
    keys = np.vstack([old[1], new[1]])
    cost = np.concatenate([old[2], new[2]])
    order = np.argsort(owner, kind="stable")
    return owner[order], keys[order], cost[order]


def _bases(owner, keys, cost, active, polished, n_actions, count):
    """Rows of the pool that the deeper neighbourhoods start from: each active
    instance's ``count`` cheapest distinct plans (actions and order),
    the cheapest sequence of each, not polished before (recorded in
    ``polished``), cheapest first."""
    order, _ = decode_order(keys, n_actions)
    plans = order_keys(order)
    rows = []
    for m in np.flatnonzero(active).tolist():
        mine = np.flatnonzero(owner == m)
        ranked = mine[np.argsort(cost[mine], kind="stable")]
        first = ranked[first_occurrences(plans[ranked])][:count]
        for r in first.tolist():
            signature = (m, bytes(keys[r].tobytes()))
            if signature not in polished:
                polished.add(signature)
                rows.append(r)
    return np.asarray(rows, dtype=np.intp)


def _genotypes(order, values, n_actions):
    """Genotypes applying ``order`` (action indices, ``-1`` padded) with the
    value keys ``values``."""
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


def _fitted(trials, owner, keys, last=None, hold=None):
    """Each row's steps pulled back in order (``last``: a position per row
    pulled back after the others, -1 none; ``hold``: rows whose ``last``
    step keeps its value), then each step dropped where the sequence stays
    valid and no dearer; only the rows whose estimated states fit their
    instance's budget are polished. Returns the admitted rows."""
    n_actions = trials.problem.n_actions
    max_length = trials.problem.settings.max_sequence_length
    _, lengths = decode_order(keys, n_actions, max_length)
    admitted = trials.admit(owner, STEP_STATES * np.maximum(lengths, 1) + lengths)
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
        _pull_back(trials, owner, keys, positions)
    if last is not None:
        _pull_back(trials, owner, keys, last)  # held rows: -2 - p < 0, none
    for position in reversed(range(width)):
        _drop(trials, owner, keys, position)
    return owner, keys


def _orders(trials, owner, keys):
    """Every other order of each plan of up to ``ALL_ORDERS_UP_TO`` steps,
    adjacent swaps of longer ones, values re-fitted in the new order."""
    n_actions = trials.problem.n_actions
    max_length = trials.problem.settings.max_sequence_length
    order, lengths = decode_order(keys, n_actions, max_length)
    sources, orders = [], []
    for length in np.unique(lengths).tolist():
        if length < 2:
            continue
        rows = np.flatnonzero(lengths == length)
        if length <= ALL_ORDERS_UP_TO:
            moves = list(permutations(range(length)))[1:]
        else:
            moves = []
            for p in range(length - 1):
                move = list(range(length))
                move[p], move[p + 1] = move[p + 1], move[p]
                moves.append(tuple(move))
        for move in moves:
            new = order[rows].copy()
            new[:, :length] = order[rows][:, list(move)]
            sources.append(rows)
            orders.append(new)
    if not sources:
        return _none(n_actions)
    source = np.concatenate(sources)
    new_order = np.vstack(orders)
    by_row = np.argsort(source, kind="stable")  # owner order kept
    source, new_order = source[by_row], new_order[by_row]
    new_owner = owner[source]
    new_keys = _genotypes(new_order, keys[source, n_actions:], n_actions)
    # where the found values are not valid in the new order, every step
    # starts from the far end of its values
    admitted = trials.admit(new_owner, 1)
    new_owner, new_keys, new_order = (
        new_owner[admitted],
        new_keys[admitted],
        new_order[admitted],
    )
    if new_owner.size == 0:
        return _none(n_actions)
    judged = trials.judge(new_owner, new_keys)
    lost = np.flatnonzero(~judged.feasible)
    if lost.size:
        new_keys[lost] = _far(trials.problem, new_keys[lost], new_order[lost])
    return _fitted(trials, new_owner, new_keys)


def _far(problem, keys, order):
    """The genotypes with every active step's value key at the far end of its
    values, on the side of its current key."""
    n_actions = problem.n_actions
    keys = keys.copy()
    for a, action in enumerate(problem.actions):
        rows = np.flatnonzero((order == a).any(axis=1))
        if rows.size == 0:
            continue
        direction = action.space.direction
        current = keys[rows, n_actions + a]
        if direction == "increase":
            far = np.ones(rows.size)
        elif direction == "decrease":
            far = np.zeros(rows.size)
        elif getattr(action.space, "rank_of_code", None) is not None:
            far = current  # an unordered category has no far end
        else:
            far = np.where(current >= 0.5, 1.0, 0.0)
        keys[rows, n_actions + a] = far
    return keys


def _joint(trials, owner, keys):
    """Two steps moved together along the decision boundary (see the module's
    docstring): a pattern search over each sequence's ordered pairs of
    steps, in lock step over the rows. Returns the rows it improved."""
    problem = trials.problem
    n_actions = problem.n_actions
    max_length = problem.settings.max_sequence_length
    keys = keys.copy()
    _, lengths = decode_order(keys, n_actions, max_length)
    keep = lengths >= 2
    owner, keys, lengths = owner[keep], keys[keep], lengths[keep]
    if owner.size == 0:
        return _none(n_actions)
    cost = _costs(trials, owner, keys)
    share = np.full(owner.size, JOINT_FIRST_SHARE)
    halvings = np.zeros(owner.size, dtype=np.intp)
    improved = np.zeros(owner.size, dtype=bool)
    width = int(lengths.max())
    extra_owner, extra_keys = [], []
    if problem.graph.edges:
        across = _across(trials, owner, keys, lengths)
        extra_owner.append(across[0])
        extra_keys.append(across[1])
    for _ in range(JOINT_ROUNDS):
        live = np.flatnonzero((halvings < JOINT_SHARES) & np.isfinite(cost))
        if live.size == 0:
            break
        paths = trials.simulate(owner[live], keys[live], record=True)
        sources, trial_keys, refit = [], [], []
        for i in range(width):
            inside = np.flatnonzero(paths.lengths > i)
            if inside.size == 0:
                continue
            least = _least_keys(trials, paths, inside, i)
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
                    moved = keys[rows].copy()
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
        admitted = trials.admit(
            owner[source], SCAN_POINTS + 2 + EDGE_ROUNDS * EDGE_POINTS // 2
        )
        source, trial, refit = source[admitted], trial[admitted], refit[admitted]
        tried = np.zeros(owner.size, dtype=bool)
        tried[source] = True
        halvings[~tried] = JOINT_SHARES  # out of budget or nothing to move
        if source.size == 0:
            break
        # the step that makes up is re-fitted by the even grid and bisection
        # (the training values were scanned when its plan was fitted)
        support, trials.support = trials.support, 0
        _pull_back(trials, owner[source], trial, refit)
        trials.support = support
        price = _costs(trials, owner[source], trial)
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
    genotypes = [keys[rows], *extra_keys]
    return np.concatenate(owners), np.vstack(genotypes).reshape(-1, 2 * n_actions)


def _trades(trials, owner, keys):
    """Each step pushed toward the far end of its values (all the way, and
    ``TRADE_SHARES`` of the way from its least change), the other steps then
    re-fitted and the pushed one last: a jump to another corner of the
    decision boundary, where a tree's staircase may be cheaper than anything
    the joint moves reach step by step."""
    problem = trials.problem
    n_actions = problem.n_actions
    max_length = problem.settings.max_sequence_length
    order, lengths = decode_order(keys, n_actions, max_length)
    several = np.flatnonzero(lengths >= 2)
    if several.size == 0:
        return _none(n_actions)
    paths = trials.simulate(owner[several], keys[several], record=True)
    two_sided = np.array([action.space.two_sided for action in problem.actions])
    sources, copies, last = [], [], []
    for p in range(int(lengths.max())):
        inside = np.flatnonzero(lengths[several] > p)
        if inside.size == 0:
            continue
        rows = several[inside]
        least = _least_keys(trials, paths, inside, p)
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
    return _refit_last(trials, owner, sources, copies, last)


def _across(trials, owner, keys, lengths):
    """Copies whose step that sets a source of the feature graph is just
    across the largest steps of its discounts (see
    :func:`_across_discount_steps`), the other steps then re-fitted."""
    sources, copies, last = [], [], []
    for position in range(int(lengths.max())):
        rows = np.flatnonzero(lengths > position)
        if rows.size == 0:
            continue
        paths = trials.simulate(owner[rows], keys[rows], record=True)
        pushed = np.full(owner.size, position)
        source, copy = _across_discount_steps(trials, keys, pushed, rows, paths)
        sources.append(source)
        copies.append(copy)
        last.append(np.full(source.size, position))
    # the other steps adapt to it, then it is pulled back last
    return _refit_last(trials, owner, sources, copies, last)


def _refit_last(trials, owner, sources, copies, last):
    """The copies ``copies`` of rows ``sources`` (lists of parts) re-fitted,
    each one's step ``last`` after the others, in the order of their rows."""
    if not sources:
        return _none(trials.problem.n_actions)
    source = np.concatenate(sources)
    by_row = np.argsort(source, kind="stable")
    copy = np.vstack(copies)[by_row]
    last = np.concatenate(last)[by_row]
    return _fitted(trials, owner[source[by_row]], copy, last)


def _more_or_less(trials, owner, keys):
    """One step dropped, one action inserted at any position, or one action
    swapped for another on the same feature; each re-fitted."""
    problem = trials.problem
    n_actions = problem.n_actions
    max_length = problem.settings.max_sequence_length
    order, lengths = decode_order(keys, n_actions, max_length)
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
        dropped = _without(order[rows], np.full(rows.size, p))
        add(rows, dropped, values[rows], np.full(rows.size, -1))
    paths = trials.simulate(owner, keys, record=True)
    inside = np.arange(width)[None, :] < lengths[:, None]
    dearest_at = np.argmax(np.where(inside, paths.step_cost, -np.inf), axis=1)
    for a, action in enumerate(problem.actions):
        space = action.space
        missing = ~(order == a).any(axis=1)
        lacking = missing if max_length is None else missing & (lengths < max_length)
        for value_key in space.far_keys(INSERTED_VALUES):
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
        for value_key in space.far_keys(INSERTED_VALUES):
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
                    kept = _without(order[rows], dearest_at[rows])
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
                value[:, b] = other.space.far_keys(INSERTED_VALUES)[0]
                add(rows, swapped, value, np.full(rows.size, p))
    if not sources:
        return _none(n_actions)
    source = np.concatenate(sources)
    # by instance, then rank, then plan (the cheapest first)
    by_row = np.lexsort((source, np.concatenate(ranks), owner[source]))
    source = source[by_row]
    new_order = np.vstack(orders)[by_row]
    new_keys = _genotypes(new_order, np.vstack(new_values)[by_row], n_actions)
    last = np.concatenate(last)[by_row]
    hold = np.concatenate(held)[by_row]
    return _fitted(trials, owner[source], new_keys, last, hold)


def _without(order, positions):
    """Each row of ``order`` without its step ``positions[row]``, the later
    steps moved up and the row padded with ``-1``."""
    keep = np.arange(order.shape[1])[None, :] != positions[:, None]
    shorter = np.full(order.shape, -1)
    shorter[:, :-1] = order[keep].reshape(order.shape[0], order.shape[1] - 1)
    return shorter


def _costs(trials, owner, keys):
    """Sequence cost of each genotype, ``inf`` where it is not valid."""
    judged = trials.judge(owner, keys)
    cost = judged.F[:, trials.problem.slices["sequence_cost"].start]
    return np.where(judged.feasible, cost, np.inf)


def _none(n_actions):
    return np.empty(0, dtype=np.intp), np.empty((0, 2 * n_actions))


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
        for value_key in action.space.far_keys(INSERTED_VALUES):
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


def _key_resolution(block, paths, rows, positions):
    """The width of one value in key space of each row's step ``positions``
    (``1 / number of values`` reachable; 0 for a continuous range)."""
    action = paths.order[rows, positions]
    width = np.zeros(rows.shape[0])
    for a in np.unique(action).tolist():
        chosen = action == a
        compiled = block.problem.actions[a]
        current = paths.states[rows[chosen], positions[chosen], compiled.feature]
        count = compiled.space.value_count(current)
        with np.errstate(divide="ignore"):
            width[chosen] = np.where(count >= 1, 1.0 / count, 0.0)
    return width


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
    # keys closer than one value's width of keys hold no value between them
    resolution = np.maximum(_key_resolution(block, paths, rows, steps), KEY_TOLERANCE)
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
        judged = block.judge(
            owner[rows[at]], _with_keys(keys, rows[at], column[at], points.ravel())
        )
        price = np.where(judged.feasible, judged.F[:, cost], np.inf).reshape(
            points.shape
        )
        # walked from the valid key on: a point counts where it is no dearer
        # than every one counted before it; the last one counted is kept
        running = bar[index].copy()
        last = np.full(index.shape[0], -1)
        for j in range(EDGE_POINTS):
            ok = price[:, j] <= _bar(running)
            running = np.where(ok, np.minimum(running, price[:, j]), running)
            last[ok] = j
        some = last >= 0
        kept = np.arange(index.shape[0])[some]
        valid_key[index[some]] = points[kept, last[some]]
        bar[index] = running
        after = last + 1
        inner = after < EDGE_POINTS
        trial_key[index[inner]] = points[np.flatnonzero(inner), after[inner]]
    keys[rows, column] = valid_key


def _cheapest_on_grid(block, owner, keys, rows, column, grid, current):
    """Each row's genotype tried with every value key of its row of ``grid``
    in ``column`` (one model call): the key of the cheapest valid sequence
    (the first among equals; ``current`` where none is valid), the key before
    it in the grid (to bisect toward), its cost (``inf``: none valid) and
    whether there is anything between the two to bisect."""
    cost = block.problem.slices["sequence_cost"].start
    # a row's repeated keys (equal keys lie side by side: the grid is sorted
    # by distance) are asked about once: the grid's width depends on the
    # other rows of the block, what a row asks about must not
    first = np.ones(grid.shape, dtype=bool)
    first[:, 1:] = grid[:, 1:] != grid[:, :-1]
    at, point = np.nonzero(first)
    judged = block.judge(
        owner[rows[at]], _with_keys(keys, rows[at], column[at], grid[at, point])
    )
    price = np.full(grid.shape, np.inf)
    price[at, point] = np.where(judged.feasible, judged.F[:, cost], np.inf)
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
    even[:, -1] = current  # exactly: the rows' padding repeats it
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
    width = int(min(count.max(initial=0), getattr(block, "support", SCAN_SUPPORT)))
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

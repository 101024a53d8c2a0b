"""Refinement's local search: the stages run round after round on each
instance's cheapest plans, within each instance's budget, and the fronts
filtered again (see :mod:`sklearn_cscf._engine._refine`)."""

import numpy as np

from sklearn_cscf._engine._brkga import Evaluation, pareto_front
from sklearn_cscf._engine._genotypes import decode_order
from sklearn_cscf._engine._hashing import first_occurrences
from sklearn_cscf._engine._refine._fit import (
    COST_TOLERANCE,
    MOVE_TOLERANCE,
    fitted,
)
from sklearn_cscf._engine._refine._moves import (
    fitted_together,
    joint_moves,
    more_or_less_proposals,
    order_proposals,
    reordered,
    singles,
    trade_proposals,
)
from sklearn_cscf._engine._simulation import order_keys
from sklearn_cscf._rows import take_rows

# the budget: states asked by refinement, as a share of the search's ...
REFINE_SHARE = 5.0
# ... and at least this many per instance
MIN_STATES = 4000
# each instance's cheapest distinct plans that the deeper neighbourhoods polish
DEEP_PLANS = 3
# the share of an instance's budget left that a round's orders, trades and
# insertions may use (the joint moves get the rest)
MORE_SHARE = 0.5
# ... and of them and the new plans, that the joint moves polish
JOINT_PLANS = 4
# rounds of the deeper neighbourhoods, at most
MAX_ROUNDS = 4
# the broad neighbourhoods' candidates, before they are fitted
PROPOSALS = (order_proposals, trade_proposals, more_or_less_proposals)


def refine_budget(asked):
    """The states each instance's refinement may ask about: ``REFINE_SHARE``
    times those its search asked about (``asked``, one per instance), at
    least ``MIN_STATES``."""
    return np.maximum(REFINE_SHARE * np.asarray(asked, dtype=float), MIN_STATES)


def refine(evaluator, fronts, budget=None):
    """Refined fronts of a block, and how many sequences refinement improved.

    Parameters
    ----------
    evaluator : Evaluator
        The block's :class:`~sklearn_cscf._engine._evaluator.Evaluator`,
        which every candidate is simulated, judged and priced by; its count
        of the states asked about is what ``budget`` limits (through
        :meth:`~sklearn_cscf._engine._evaluator.Evaluator.admit`).
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
    evaluator.limit_to(budget)
    problem = evaluator.problem
    n_actions = problem.n_actions
    cost_column = problem.slices["sequence_cost"].start
    counts = [fronts[m][0].shape[0] for m in range(n)]
    found_owner = np.repeat(np.arange(n), counts).astype(np.intp)
    found = np.vstack([keys for keys, _ in fronts]).reshape(-1, 2 * n_actions)
    before = Evaluation.concatenate([evaluation for _, evaluation in fronts])
    found_cost = before.F[:, cost_column]
    least = _least_per_owner(found_owner, found_cost, n)

    # every sequence found (cheapest first), then every action alone
    single_owner, single_keys = singles(evaluator, n)
    owner = np.concatenate([found_owner, single_owner])
    keys = np.vstack([found, single_keys])
    priority = np.concatenate([found_cost, np.full(single_owner.size, np.inf)])
    by_owner = np.lexsort((priority, owner))
    owner, keys = owner[by_owner], keys[by_owner].copy()
    if owner.size == 0:
        evaluator.limit_to(np.full(n, np.inf))
        return fronts, np.zeros(n, dtype=np.intp)
    owner, keys = fitted(evaluator, owner, keys)
    pool_owner, pool_keys, pool_cost = _judged(evaluator, owner, keys)
    best = _least_per_owner(pool_owner, pool_cost, n)
    active = np.isfinite(best)
    pool = (pool_owner, pool_keys, pool_cost)
    polished = {"more": set(), "joint": set()}
    for _ in range(MAX_ROUNDS):
        if not active.any():
            break
        # orders and one action more or less, from the cheapest plans; then
        # joint values, from the cheapest plans with the new ones among them
        for name, count in (("more", DEEP_PLANS), ("joint", JOINT_PLANS)):
            base = _bases(*pool, active, polished[name], n_actions, count)
            if base.size == 0:
                continue
            base_owner, base_keys = pool[0][base], pool[1][base]
            limit = evaluator.limit
            if name == "more":
                # the broad neighbourhoods may use half of what is left, so
                # that the joint moves always get their turn; their proposals
                # are fitted together where the budget admits every one
                # either way (a step's pull-back: one model call for all)
                evaluator.limit = evaluator.asked + MORE_SHARE * evaluator.left()
                parts = [
                    propose(evaluator, base_owner, base_keys) for propose in PROPOSALS
                ]
                new = fitted_together(evaluator, parts)
            else:
                new = [joint_moves(evaluator, base_owner, base_keys)]
            evaluator.limit = limit
            new_owner = np.concatenate([o for o, _ in new])
            new_keys = np.vstack([k for _, k in new]).reshape(-1, 2 * n_actions)
            order = np.argsort(new_owner, kind="stable")
            pool = _merged(pool, _judged(evaluator, new_owner[order], new_keys[order]))
        pool_owner, pool_keys, pool_cost = pool
        now = _least_per_owner(pool_owner, pool_cost, n)
        with np.errstate(invalid="ignore"):
            improved = now < best - MOVE_TOLERANCE * np.abs(best)
        best = now
        active &= improved & (evaluator.left() > 0)
    # what follows is outside the budget
    evaluator.limit_to(np.full(n, np.inf))

    refined = evaluator.judge(pool_owner, pool_keys) if pool_owner.size else None
    new_fronts = _filtered(fronts, pool_owner, pool_keys, refined)
    new_fronts = _filtered(new_fronts, *_cheaper_orders(evaluator, new_fronts))
    improved = np.zeros(n, dtype=np.intp)
    for m, (keys, evaluation) in enumerate(new_fronts):
        came_refined = ~_found_in(keys, fronts[m][0])
        cheaper = evaluation.F[came_refined, cost_column] < least[m] - COST_TOLERANCE
        improved[m] = int(cheaper.sum())
    return new_fronts, improved


def _cheaper_orders(evaluator, fronts):
    """The same steps of every sequence of ``fronts`` in another order, with
    the same values, where that is valid and cheaper (it then dominates the
    sequence: see :func:`~sklearn_cscf._engine._refine._moves.reordered`): the
    instance of each, the genotypes and their evaluation."""
    n_actions = evaluator.problem.n_actions
    counts = [keys.shape[0] for keys, _ in fronts]
    owner = np.repeat(np.arange(len(fronts), dtype=np.intp), counts)
    keys = np.vstack([keys for keys, _ in fronts]).reshape(-1, 2 * n_actions)
    source, other_keys = reordered(evaluator, owner, keys)
    if source.size == 0:
        return source, other_keys, None
    judged = evaluator.judge(owner[source], other_keys)
    column = evaluator.problem.slices["sequence_cost"].start
    cost = np.concatenate([evaluation.F[:, column] for _, evaluation in fronts])
    was = cost[source]
    cheaper = judged.feasible & (
        judged.F[:, column] < was - COST_TOLERANCE * np.maximum(np.abs(was), 1.0)
    )
    return owner[source[cheaper]], other_keys[cheaper], judged.take(cheaper)


def _filtered(fronts, owner, keys, evaluation):
    """Each instance's front with its rows of ``keys`` (judged ``evaluation``),
    filtered again for dominance and distinctness (the front's rows first)."""
    new_fronts = list(fronts)
    for m, (front_keys, front_evaluation) in enumerate(fronts):
        mine = np.flatnonzero(owner == m)
        if mine.size == 0:
            continue
        both = Evaluation.concatenate([front_evaluation, evaluation.take(mine)])
        both_keys = np.vstack([front_keys, keys[mine]])
        front = pareto_front(both)
        new_fronts[m] = (both_keys[front], both.take(front))
    return new_fronts


def _found_in(keys, found):
    """Which rows of ``keys`` are rows of ``found`` (genotypes the search
    found)."""
    found = {row.tobytes() for row in found}
    return np.array([row.tobytes() in found for row in keys], dtype=bool)


def _least_per_owner(owner, cost, n):
    least = np.full(n, np.inf)
    if owner.size:
        np.minimum.at(least, owner, cost)
    return least


def _judged(evaluator, owner, keys):
    """The feasible rows (sorted by owner), distinct per owner, and their
    costs."""
    if owner.size == 0:
        return owner, keys, np.empty(0)
    judged = evaluator.judge(owner, keys)
    cost = judged.F[:, evaluator.problem.slices["sequence_cost"].start]
    keep = np.flatnonzero(judged.feasible)
    owner, keys, cost = owner[keep], keys[keep], cost[keep]
    if owner.size == 0:
        return owner, keys, cost
    # the first row of each distinct (owner, sequence)
    distinct = first_occurrences(judged.sequence_key[keep], groups=owner)
    return owner[distinct], keys[distinct], cost[distinct]


def _merged(old, new):
    """Two pools of (owner, keys, cost) in one, sorted by owner (old first)."""
    owner = np.concatenate([old[0], new[0]])
    keys = np.vstack([old[1], new[1]])
    cost = np.concatenate([old[2], new[2]])
    order = np.argsort(owner, kind="stable")
    return owner[order], take_rows(keys, order), cost[order]


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

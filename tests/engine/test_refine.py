"""Refinement and the stopping rule (issue 14): training values tried as step
values, the cheapest valid value rather than the nearest, inserted enabling
steps, ``n_generations="auto"``, the same cheapest plan whatever the seed."""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _line import RuleModel

from sklearn_cscf import Action, FeatureGraph, SequentialCounterfactualExplainer
from sklearn_cscf._engine._genotypes import genotypes
from sklearn_cscf._spaces import DiscreteSpace, RangeSpace

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_exact import captured_evaluator  # noqa: E402

SEEDS = range(5)


# ---------------------------------------------------------------------- #
# the values a step's pull-back tries
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize("direction", ["any", "increase", "decrease"])
@pytest.mark.parametrize("step", [None, 1.0, 0.7])
def test_scan_keys_are_the_keys_of_the_reachable_training_values(direction, step):
    rng = np.random.default_rng(1)
    support = np.unique(rng.uniform(0, 100, 60).round(1))
    space = RangeSpace(0, 100, direction, step, support=support)
    current = rng.uniform(0, 100, 25)
    keys = space.scan_keys(current)
    assert keys.shape == (25, support.shape[0])
    low, width = (np.broadcast_to(a, current.shape) for a in space._interval(current))
    for row in range(current.shape[0]):
        found = ~np.isnan(keys[row])
        values, valid = space.interpolate(
            keys[row, found], np.full(found.sum(), current[row])
        )
        assert valid.all()
        # each key gives its training value (the nearest grid point)
        tolerance = 1e-9 if step is None else step / 2 + 1e-9
        np.testing.assert_allclose(values, support[found], atol=tolerance)
        if step is None:  # every reachable training value, and only those
            reachable = (support >= low[row]) & (support <= low[row] + width[row])
            np.testing.assert_array_equal(found, reachable)


@pytest.mark.parametrize(
    "space",
    [
        RangeSpace(0, 10, "increase", 1.0),
        RangeSpace(0, 10, "decrease", 0.7),
        RangeSpace(0, 10, "any", 2.5),
        DiscreteSpace([1.0, 3.0, 5.0, 9.0], "increase"),
        DiscreteSpace([1.0, 3.0, 5.0, 9.0], "decrease"),
        DiscreteSpace([1.0, 3.0, 5.0, 9.0], "any"),
        DiscreteSpace([2.0, 0.0, 1.0], "increase", np.array([1, 2, 0, -1])),
    ],
)
def test_value_count_is_what_interpolate_reaches(space):
    # refinement bisects no finer than one value: the count must be exact
    current = np.array([0.0, 1.0, 3.0, 4.2, 9.0, 10.0])
    if space.direction != "any" and getattr(space, "rank_of_code", None) is not None:
        current = np.array([0.0, 1.0, 2.0])  # category codes
    keys = np.linspace(0, 1, 2001)
    counts = space.value_count(current)
    for value, count in zip(current, counts):
        values, valid = space.interpolate(keys, np.full(keys.shape, value))
        reached = np.unique(values[valid]).size if valid.any() else 0
        assert count == reached, (value, count, reached)


@pytest.mark.parametrize(
    "space",
    [
        RangeSpace(0, 10, "any"),
        RangeSpace(0, 10, "increase"),
        RangeSpace(0, 10, "decrease", 0.7),
        RangeSpace(0, 10, "any", 2.5),
        DiscreteSpace([1.0, 3.0, 5.0, 9.0], "increase"),
        DiscreteSpace([1.0, 3.0, 5.0, 9.0], "any"),
        DiscreteSpace([2.0, 0.0, 1.0], "increase", np.array([1, 2, 0, -1])),
    ],
)
def test_key_of_finds_the_key_of_each_reachable_value(space):
    # refinement's last pass sets each step's value again from another state
    rng = np.random.default_rng(0)
    current = np.array([0.0, 1.0, 2.0, 4.2, 9.0])
    if getattr(space, "rank_of_code", None) is not None:
        current = np.array([0.0, 1.0, 2.0])  # category codes
    keys = rng.uniform(0, 1, 200)
    for value in current:
        start = np.full(keys.shape, value)
        values, valid = space.interpolate(keys, start)
        found = space.key_of(values, start)
        # every reachable value is found, and set exactly
        assert np.isfinite(found[valid]).all()
        again, _ = space.interpolate(np.nan_to_num(found[valid]), start[valid])
        np.testing.assert_array_equal(again, values[valid])
    # a value out of reach has no key
    assert np.isnan(space.key_of(np.array([-5.0]), np.array([current[-1]])))[0]


def test_the_sides_of_a_space():
    assert RangeSpace(0, 10, "any").two_sided
    assert not RangeSpace(0, 10, "decrease").two_sided
    assert DiscreteSpace([1.0, 2.0], "any").two_sided
    categories = DiscreteSpace(np.arange(20.0), "any", np.arange(21) - 0)
    assert not categories.two_sided  # unordered: no sides


def test_scan_keys_of_a_list_are_its_reachable_values():
    space = DiscreteSpace([1.0, 3.0, 5.0, 9.0], "increase")
    keys = space.scan_keys(np.array([0.0, 3.0, 9.0]))
    for row, expected in enumerate([[1, 3, 5, 9], [5, 9], []]):
        found = ~np.isnan(keys[row])
        values, _ = space.interpolate(keys[row, found], np.full(found.sum(), 0.0))
        if row:
            values, _ = space.interpolate(
                keys[row, found], np.full(found.sum(), [0.0, 3.0, 9.0][row])
            )
        assert values.tolist() == expected


def test_a_range_without_training_values_has_none_to_scan():
    space = RangeSpace(0, 10, "any")
    assert space.scan_keys(np.array([1.0, 2.0])).shape == (2, 0)
    # training values outside the range are not reachable
    outside = RangeSpace(0, 10, "any", support=np.array([20.0, 30.0]))
    assert outside.support is None


# ---------------------------------------------------------------------- #
# islands of acceptance: the least change whatever the seed
# ---------------------------------------------------------------------- #
class IslandModel:
    """Accepts an income in [52, 53] (a tree's island around a training
    value) or of 90 and more; a duck-typed fitted classifier."""

    classes_ = np.array([0, 1])

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        income = np.asarray(X["income"], dtype=float)
        accept = ((income >= 52) & (income <= 53)) | (income >= 90)
        return np.column_stack([1.0 - accept, accept.astype(float)])

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


@pytest.fixture(scope="module")
def island_data():
    rng = np.random.default_rng(0)
    income = np.concatenate([rng.uniform(0, 50, 300).round(), [52.5, 95.0, 120.0]])
    X = pd.DataFrame({"income": income, "age": rng.uniform(20, 60, income.size)})
    rows = pd.DataFrame({"income": [10.0, 30.0], "age": [30.0, 40.0]})
    return X, rows


@pytest.mark.parametrize("seed", SEEDS)
def test_a_single_step_is_the_least_change_that_flips_the_model(island_data, seed):
    X, rows = island_data
    actions = [
        Action(
            "earn",
            "income",
            values=(0.0, 150.0),
            direction="increase",
            cost=lambda b, a: (a["income"] - b["income"]) / 10,
        )
    ]
    explainer = SequentialCounterfactualExplainer(
        IslandModel(),
        actions=actions,
        population_size=30,
        n_generations=5,
        random_state=seed,
    ).fit(X)
    frame = explainer.explain(rows)
    assert (frame["status"] == "ok").all()
    least = frame.groupby("instance")["new_number"].min()
    # the island's lower edge (the key range is 150: bisection to 2**-17)
    np.testing.assert_allclose(least, 52.0, atol=150 * 2.0**-16)
    assert (least >= 52.0).all()


# ---------------------------------------------------------------------- #
# an enabling step: crossing a discount threshold first
# ---------------------------------------------------------------------- #
class StudyModel:
    """Accepts five more years of education (from 0); hours do not matter."""

    classes_ = np.array([0, 1])

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        accept = np.asarray(X["education"], dtype=float) >= 5
        return np.column_stack([1.0 - accept, accept.astype(float)])

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


def test_a_cheap_step_that_crosses_a_discount_threshold_is_inserted():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "education": rng.integers(0, 12, 300).astype(float),
            "hours": rng.integers(5, 60, 300).astype(float),
        }
    )
    rows = pd.DataFrame({"education": [0.0, 0.0], "hours": [20.0, 24.0]})
    actions = [
        Action(
            "study",
            "education",
            values=(0.0, 20.0),
            direction="increase",
            step=1.0,
            cost=lambda b, a: a["education"] - b["education"],
        ),
        Action(
            "change_hours",
            "hours",
            values=(1.0, 80.0),
            step=1.0,
            cost=lambda b, a: 0.01 * np.abs(a["hours"] - b["hours"]),
        ),
    ]
    # studying costs half while working less than 20 hours
    graph = FeatureGraph().add_edge(
        "hours", "education", lambda x: np.where(x["hours"] < 20, 0.5, 1.0)
    )
    costs = []
    for seed in SEEDS:
        explainer = SequentialCounterfactualExplainer(
            StudyModel(),
            actions=actions,
            feature_graph=graph,
            population_size=12,
            n_generations=2,
            random_state=seed,
        ).fit(X)
        frame = explainer.explain(rows)
        costs.append(frame.groupby("instance")["sequence_cost"].min().to_numpy())
    # 20 -> 19 hours (0.01), 24 -> 19 hours (0.05), then 5 levels at half price
    np.testing.assert_allclose(np.array(costs), [[2.51, 2.55]] * len(SEEDS))


# ---------------------------------------------------------------------- #
# n_generations="auto"
# ---------------------------------------------------------------------- #
def auto_explainer(model, X, random_state=0):
    """An ``n_generations="auto"`` explainer of the island data, fitted: earn
    up to 150 or age up to 90."""
    actions = [
        Action("earn", "income", values=(0.0, 150.0), direction="increase"),
        Action("age", "age", values=(20.0, 90.0), direction="increase"),
    ]
    return SequentialCounterfactualExplainer(
        model,
        actions=actions,
        population_size=30,
        n_generations="auto",
        random_state=random_state,
    ).fit(X)


def test_auto_judges_every_plan_at_its_far_ends_first(island_data):
    X, rows = island_data
    explainer = auto_explainer(IslandModel(), X)
    frame, details = explainer.explain(rows, return_details=True)
    assert (frame["status"] == "ok").all()
    # earning 150 is accepted: the plans at their far ends, judged in one
    # call, give refinement what it starts from; no generation of the search
    assert (details["n_generations"] == 0).all()
    assert (details["n_model_calls"] < 30).all()
    fixed, fixed_details = explainer.set_params(n_generations=150).explain(
        rows, return_details=True
    )
    assert (fixed_details["n_generations"] == 150).all()
    # the same cheapest plan either way (to the bisection's resolution)
    pd.testing.assert_series_equal(
        frame.groupby("instance")["sequence_cost"].min(),
        fixed.groupby("instance")["sequence_cost"].min(),
        rtol=1e-4,
    )


class OnlyIslandModel(IslandModel):
    """Accepts an income in [52, 53] at an age of 85 or more only: no plan at
    its far ends does, and the spread of genotypes judged with them misses
    the small corner; the score rises toward it (a gap the search follows)."""

    def predict_proba(self, X):
        income = np.asarray(X["income"], dtype=float)
        age = np.asarray(X["age"], dtype=float)
        accept = (income >= 52) & (income <= 53) & (age >= 85)
        closer = 0.2 * np.exp(-np.abs(income - 52.5) / 20) + 0.2 * age / 90
        score = np.where(accept, 1.0, closer)
        return np.column_stack([1.0 - score, score])


def test_auto_searches_the_rows_no_plan_at_its_far_ends_solves(island_data):
    X, rows = island_data
    # a seed whose search finds the corner for both rows
    explainer = auto_explainer(OnlyIslandModel(), X, random_state=1)
    frame, details = explainer.explain(rows, return_details=True)
    assert (frame["status"] == "ok").all()
    # at least 30 generations of the search, the last 25 without a new
    # cheapest plan; far from the cap of 300
    assert (details["n_generations"] >= 30).all()
    assert (details["n_generations"] < 300).all()


def test_auto_generations_give_up_on_rows_without_any_plan(island_data):
    X, rows = island_data
    never = [Action("age", "age", values=(20.0, 90.0), direction="increase")]
    explainer = SequentialCounterfactualExplainer(
        IslandModel(),
        actions=never,
        population_size=10,
        n_generations="auto",
        random_state=0,
    ).fit(X)
    frame, details = explainer.explain(rows, return_details=True)
    # no age the action allows reaches the island: out of reach
    assert (frame["status"] == "unreachable").all()
    assert (details["n_generations"] == 150).all()


def test_n_generations_must_be_a_positive_number_or_auto(island_data):
    X, _ = island_data
    with pytest.raises(ValueError, match="n_generations"):
        SequentialCounterfactualExplainer(IslandModel(), n_generations="fast").fit(X)


# ---------------------------------------------------------------------- #
# the local search's neighbourhoods (issue 21), each on a problem where it
# alone finds the cheaper plan
# ---------------------------------------------------------------------- #
def _block_of(explainer, row):
    """The engine's evaluator of one row, as ``explain`` builds it (the exact
    reference's own capture, ``bench_exact.captured_evaluator``)."""
    block = captured_evaluator(explainer, row)
    assert block is not None, "the row needed no search"
    return block


def _genotype(block, steps):
    """The genotype applying ``steps`` (action index, value key) in order."""
    n_actions = block.problem.n_actions
    order, values = np.full((1, n_actions), -1), np.full((1, n_actions), 0.5)
    for position, (action, value) in enumerate(steps):
        order[0, position], values[0, action] = action, value
    return genotypes(order, values, n_actions)


def _least_cost(block, keys):
    judged = block.judge(np.zeros(keys.shape[0], np.intp), keys)
    cost = judged.F[:, block.problem.slices["sequence_cost"].start]
    return np.where(judged.feasible, cost, np.inf).min(initial=np.inf)


def _stages(block, keys):
    """The least cost after the fit alone, and after each neighbourhood
    (each from ``keys``)."""
    from sklearn_cscf._engine._refine import _fit, _moves

    block.limit_to([1e9])
    trials = block
    owner = np.zeros(keys.shape[0], np.intp)
    _, fitted = _fit.fitted(trials, owner, keys.copy())
    out = {"fit": _least_cost(block, fitted)}
    for name, stage in (
        ("orders", _moves.order_proposals),
        ("joint", _moves.joint_moves),
        ("trades", _moves.trade_proposals),
        ("more_or_less", _moves.more_or_less_proposals),
    ):
        found = stage(trials, owner, keys.copy())
        if name != "joint":  # proposals, fitted as refinement fits them
            found = _fit.fitted(trials, *found)
        found = found[1]
        out[name] = min(_least_cost(block, found), _least_cost(block, keys))
    return out


def _frame(**columns):
    return pd.DataFrame({k: np.asarray(v, dtype=float) for k, v in columns.items()})


def _raised_squared(name):
    """``raise_<name>``: the feature raised within [0, 20], its squared change
    the cost."""
    return Action(
        f"raise_{name}",
        name,
        values=(0.0, 20.0),
        direction="increase",
        cost=lambda b, a: (a[name] - b[name]) ** 2,
    )


def _b_dearer_below_one_a(step=None):
    """Data, actions and model where the order matters: ``a >= 1`` and
    ``b >= 5`` are both needed, and raising b costs twice as much while a is
    below 1 (``step``: set_a's grid)."""
    X = _frame(a=np.linspace(0, 5, 50), b=np.linspace(0, 20, 50))
    actions = [
        Action(
            "set_a",
            "a",
            values=(0.0, 5.0),
            direction="increase",
            step=step,
            cost=lambda b, a: a["a"] - b["a"],
        ),
        Action(
            "raise_b",
            "b",
            values=(0.0, 20.0),
            direction="increase",
            cost=lambda b, a: (a["b"] - b["b"]) * np.where(b["a"] < 1, 2, 1),
        ),
    ]
    model = RuleModel(lambda X: (X["a"] >= 1) & (X["b"] >= 5))
    return X, actions, model


def test_a_scan_asks_once_about_the_keys_giving_a_step_the_same_value(monkeypatch):
    from sklearn_cscf._engine._refine import _fit

    # set_a takes the whole numbers 0..5: of the scan's keys from the least
    # change (a = 0) to the found one (a = 5), several give the same value
    X, actions, model = _b_dearer_below_one_a(step=1.0)
    explainer = SequentialCounterfactualExplainer(model, actions=actions).fit(X)
    block = _block_of(explainer, _frame(a=[0.0], b=[0.0]))
    keys = _genotype(block, [(0, 0.99), (1, 0.5)])  # a = 5, then b = 10
    asked = []
    price = block.price
    monkeypatch.setattr(
        block, "price", lambda owner, k: asked.append(k.copy()) or price(owner, k)
    )
    block.limit_to([1e9])
    trials = block
    _fit.pull_back(trials, np.zeros(1, np.intp), keys, np.array([0]))
    space = block.problem.actions[0].space
    n_actions = block.problem.n_actions

    def values(k):
        return space.interpolate(k[:, n_actions], np.zeros(k.shape[0]))[0]

    scan = values(asked[0])
    # every value once, each asked about once
    np.testing.assert_array_equal(np.sort(scan), np.arange(6.0))
    # ... while the keys left out still count against the budget
    assert trials.asked[0] > sum(k.shape[0] for k in asked)
    # and the least valid value is found: a = 1
    assert values(keys)[0] == 1.0


def test_the_orders_neighbourhood_finds_the_cheaper_order():
    # raising b costs twice as much while a is below 1
    X, actions, model = _b_dearer_below_one_a()
    explainer = SequentialCounterfactualExplainer(model, actions=actions).fit(X)
    block = _block_of(explainer, _frame(a=[0.0], b=[0.0]))
    # b first (5 x 2 = 10), then a (1): 11; a first: 1 + 5 = 6
    costs = _stages(block, _genotype(block, [(1, 0.5), (0, 0.5)]))
    assert costs["fit"] == pytest.approx(11.0, abs=1e-3)
    assert costs["orders"] == pytest.approx(6.0, abs=1e-3)
    assert costs["joint"] > 10.0


def test_the_joint_neighbourhood_spreads_one_change_over_two_steps():
    # squared changes: a + b >= 10 costs least at a = b = 5 (50)
    X = _frame(a=np.linspace(0, 20, 50), b=np.linspace(0, 20, 50))
    actions = [_raised_squared(name) for name in ("a", "b")]
    model = RuleModel(lambda X: X["a"] + X["b"] >= 10)
    explainer = SequentialCounterfactualExplainer(model, actions=actions).fit(X)
    block = _block_of(explainer, _frame(a=[0.0], b=[0.0]))
    # found: a = 2, b = 16; the fit pulls a back to 0 (dropped), b to 10
    costs = _stages(block, _genotype(block, [(0, 0.1), (1, 0.8)]))
    assert costs["fit"] > 60
    assert costs["orders"] > 60
    assert costs["joint"] == pytest.approx(50.0, rel=5e-3)


def test_the_more_or_less_neighbourhood_inserts_the_step_that_pays():
    # a >= 10, or a >= 4 with the flag (the flag costs 1): 100 against 17
    X = _frame(a=np.linspace(0, 20, 50), flag=np.r_[np.zeros(25), np.ones(25)])
    actions = [
        _raised_squared("a"),
        Action("set_flag", "flag", values=[1.0], cost=lambda b, a: 1.0 + 0 * a["a"]),
    ]
    model = RuleModel(lambda X: (X["a"] >= 10) | ((X["a"] >= 4) & (X["flag"] == 1)))
    explainer = SequentialCounterfactualExplainer(model, actions=actions).fit(X)
    block = _block_of(explainer, _frame(a=[0.0], flag=[0.0]))
    costs = _stages(block, _genotype(block, [(0, 0.7)]))
    assert costs["fit"] == pytest.approx(100.0, rel=1e-3)
    assert costs["joint"] >= 100.0
    assert costs["more_or_less"] == pytest.approx(17.0, rel=1e-3)


def test_the_trades_neighbourhood_crosses_to_the_other_side_of_a_step():
    # b - a >= 10 with squared changes: lowering a helps, raising it hurts;
    # found: a raised to 2, b to 12 (148); a pulled back alone gives a = 0,
    # b = 10 (100); a pushed a quarter of the way down, b re-fitted: 62.5
    X = _frame(a=np.linspace(-10, 10, 50), b=np.linspace(0, 20, 50))
    actions = [
        Action(
            "change_a",
            "a",
            values=(-10.0, 10.0),
            cost=lambda b, a: (a["a"] - b["a"]) ** 2,
        ),
        _raised_squared("b"),
    ]
    model = RuleModel(lambda X: X["b"] - X["a"] >= 10)
    explainer = SequentialCounterfactualExplainer(model, actions=actions).fit(X)
    block = _block_of(explainer, _frame(a=[0.0], b=[0.0]))
    costs = _stages(block, _genotype(block, [(0, 0.6), (1, 0.6)]))
    assert costs["fit"] == pytest.approx(100.0, rel=1e-3)
    for name in ("orders", "joint"):
        assert costs[name] >= 100.0 - 1e-6, name
    assert costs["trades"] == pytest.approx(62.5, rel=1e-2)


def test_the_more_or_less_neighbourhood_replaces_the_dearest_step():
    # a >= 2, and the flag (5) or c >= 1 (1 a unit): found a and the flag,
    # 4 + 5; a and c cost 4 + 1. Dropping the flag (the dearest step) alone
    # is not valid, and c inserted beside it only adds to the cost
    X = _frame(
        a=np.linspace(0, 20, 50),
        flag=np.r_[np.zeros(25), np.ones(25)],
        c=np.linspace(0, 100, 50),
    )
    actions = [
        _raised_squared("a"),
        Action("set_flag", "flag", values=[1.0], cost=lambda b, a: 5.0 + 0 * a["a"]),
        Action(
            "raise_c",
            "c",
            values=(0.0, 100.0),
            direction="increase",
            cost=lambda b, a: a["c"] - b["c"],
        ),
    ]
    model = RuleModel(lambda X: (X["a"] >= 2) & ((X["flag"] == 1) | (X["c"] >= 1)))
    explainer = SequentialCounterfactualExplainer(model, actions=actions).fit(X)
    block = _block_of(explainer, _frame(a=[0.0], flag=[0.0], c=[0.0]))
    costs = _stages(block, _genotype(block, [(0, 0.1), (1, 0.5)]))
    assert costs["fit"] == pytest.approx(9.0, rel=1e-3)
    for name in ("orders", "joint", "trades"):
        assert costs[name] >= 9.0 - 1e-6, name
    assert costs["more_or_less"] == pytest.approx(5.0, rel=1e-3)


# ---------------------------------------------------------------------- #
# every seed reaches the exact least cost of a small German-like problem
# ---------------------------------------------------------------------- #
class LinearScore:
    """Accepts ``w . x >= 1``; a duck-typed fitted classifier."""

    classes_ = np.array([0, 1])
    weights = np.array([1 / 40, 1 / 55, 1 / 70])

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        score = np.asarray(X[["a", "b", "c"]], dtype=float) @ self.weights
        accept = (score >= 3.0).astype(float)
        return np.column_stack([1.0 - accept, accept])

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


def test_every_seed_reaches_the_exact_least_cost_of_squared_relative_changes():
    # min sum (d_i / x_i)^2 subject to sum w_i d_i >= g: every step helps,
    # d_i proportional to w_i x_i^2, least cost g^2 / sum (w_i x_i)^2
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(10, 100, (300, 3)).round(), columns=["a", "b", "c"])
    actions = [
        Action(
            f"raise_{name}",
            name,
            values=(0.0, 400.0),
            direction="increase",
            cost=lambda b, a, name=name: ((a[name] - b[name]) / b[name]) ** 2,
        )
        for name in ("a", "b", "c")
    ]
    rows = pd.DataFrame({"a": [40.0, 60.0], "b": [50.0, 30.0], "c": [70.0, 40.0]})
    model = LinearScore()
    x = rows.to_numpy()
    gap = 3.0 - x @ model.weights
    exact = gap**2 / ((model.weights * x) ** 2).sum(axis=1)
    for seed in range(3):
        explainer = SequentialCounterfactualExplainer(
            model, actions=actions, population_size=200, random_state=seed
        ).fit(X)
        frame = explainer.explain(rows)
        least = frame.groupby("instance")["sequence_cost"].min().to_numpy()
        np.testing.assert_allclose(least, exact, rtol=0.01)
        assert (least >= exact * (1 - 1e-6)).all()


# ---------------------------------------------------------------------- #
# no reported sequence is dearer than another order of its steps
# ---------------------------------------------------------------------- #
def test_no_reported_sequence_is_dearer_than_another_order_of_its_steps():
    from itertools import permutations

    from sklearn_cscf import replay

    X, actions, model = _b_dearer_below_one_a(step=1.0)
    rows = _frame(a=[0.0, 0.0], b=[0.0, 2.0])
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=actions,
        population_size=30,
        max_plans=None,
        all_orders=True,
        random_state=0,
    ).fit(X)
    frame = explainer.explain(rows)
    ok = frame[frame["status"] == "ok"]
    checked = 0
    for (instance, solution), steps in ok.groupby(["instance", "solution"]):
        cost = steps["sequence_cost"].iloc[0]
        for order in list(permutations(range(len(steps))))[1:]:
            other = steps.iloc[list(order)].copy()
            other["step"] = np.arange(1, len(other) + 1)
            replayed = replay(explainer, rows, other)
            valid = bool(
                replayed[
                    ["in_space", "in_direction", "precondition", "postcondition"]
                ].all(axis=None)
                and replayed["accepted"].iloc[-1]
            )
            if valid:
                checked += 1
                assert replayed["sequence_cost"].iloc[-1] >= cost - 1e-9
    assert checked >= 1


def _step_values(block, keys):
    """Each genotype's steps as (action, the value it sets), in order."""
    paths = block.simulate(np.zeros(keys.shape[0], np.intp), keys, record=True)
    return [
        [
            (int(paths.order[r, p]), float(paths.new_values[r, p]))
            for p in range(paths.lengths[r])
        ]
        for r in range(keys.shape[0])
    ]


def _waits_and_studies():
    """``study`` raises edu and, as its consequence, age by as much (a year a
    level); ``wait`` raises age; ``title`` is an unordered category. Values
    are continuous, on a grid and in a list, so that each kind of value space
    has its value keys found again."""
    X = pd.DataFrame(
        {
            "age": np.linspace(20, 70, 40),
            "edu": np.linspace(5, 16, 40),
            "title": ["a", "b", "c", "d"] * 10,
        }
    )
    actions = [
        Action(
            "study",
            "edu",
            values=(5.0, 16.0),
            direction="increase",
            effects={"age": lambda b, a: b["age"] + (a["edu"] - b["edu"])},
            cost=lambda b, a: a["edu"] - b["edu"],
        ),
        Action("wait", "age", values=(20.0, 70.0), direction="increase", step=0.5),
        Action("retitle", "title", values=["c", "a", "d"], cost=lambda b, a: 1.0),
    ]
    model = RuleModel(lambda X: (X["edu"] >= 12) & (X["age"] >= 40))
    return X, actions, model


@pytest.mark.parametrize("wait_key", [0.6, 0.05])
def test_the_same_steps_in_another_order_set_the_same_values(wait_key):
    from itertools import permutations

    from sklearn_cscf._engine._refine._moves import reordered

    X, actions, model = _waits_and_studies()
    explainer = SequentialCounterfactualExplainer(model, actions=actions).fit(X)
    row = pd.DataFrame({"age": [25.0], "edu": [8.0], "title": ["b"]})
    block = _block_of(explainer, row)
    # retitle, wait to an age, then study (which adds to the age)
    keys = _genotype(block, [(2, 0.9), (1, wait_key), (0, 0.55)])
    steps = _step_values(block, keys)[0]
    source, others = reordered(block, np.zeros(1, np.intp), keys)
    assert (source == 0).all()
    found = _step_values(block, others)
    for other in found:  # each action sets exactly the value it set before
        assert sorted(other) == sorted(steps)
    orders = [tuple(a for a, _ in other) for other in found]
    assert len(set(orders)) == len(orders)
    expected = set(permutations(range(3))) - {(2, 1, 0)}
    (_, age), (_, edu) = steps[1], steps[2]
    if age < 25.0 + edu - 8.0:
        # studying first carries the age past the wait's: the wait must
        # come first
        expected = {o for o in expected if o.index(1) < o.index(0)}
    assert set(orders) == expected
    assert len(expected) == (5 if wait_key > 0.5 else 2)


def test_a_dearer_order_of_the_same_steps_leaves_the_front():
    from sklearn_cscf._engine._refine._polish import _cheaper_orders, _filtered

    X, actions, model = _b_dearer_below_one_a()
    explainer = SequentialCounterfactualExplainer(model, actions=actions).fit(X)
    block = _block_of(explainer, _frame(a=[0.0], b=[0.0]))
    # b first (to 10, at twice the cost), then a; a first is 10 cheaper
    dearer = _genotype(block, [(1, 0.5), (0, 0.5)])
    front = [(dearer, block.judge(np.zeros(1, np.intp), dearer))]
    assert front[0][1].feasible.all()
    kept_keys, kept = _filtered(front, *_cheaper_orders(block, front))[0]
    assert kept_keys.shape[0] == 1
    assert [a for a, _ in _step_values(block, kept_keys)[0]] == [0, 1]
    assert sorted(_step_values(block, kept_keys)[0]) == sorted(
        _step_values(block, dearer)[0]
    )
    cost = block.problem.slices["sequence_cost"].start
    assert kept.F[0, cost] == pytest.approx(front[0][1].F[0, cost] - 10.0)


# ---------------------------------------------------------------------- #
# bounded model calls, wide data
# ---------------------------------------------------------------------- #
class Refusing:
    """Refuses any call of more than ``limit`` rows."""

    classes_ = np.array([0, 1])

    def __init__(self, limit):
        self.limit = limit
        self.largest = 0

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        if len(X) > self.limit:
            raise MemoryError(f"{len(X)} rows: at most {self.limit}")
        self.largest = max(self.largest, len(X))
        accept = np.asarray(X["a"], dtype=float) + np.asarray(X["b"]) >= 10
        return np.column_stack([1.0 - accept, accept.astype(float)])

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


@pytest.mark.parametrize("max_model_rows", [None, 40])
def test_a_model_refusing_large_calls_explains_every_row(max_model_rows):
    from sklearn_cscf._engine._evaluator import MIN_CALL_ROWS

    X = _frame(a=np.linspace(0, 20, 50), b=np.linspace(0, 20, 50))
    actions = [_raised_squared(name) for name in ("a", "b")]
    rows = _frame(a=[0.0, 1.0, 2.0, 3.0], b=[0.0, 2.0, 1.0, 3.0])
    population, batch = 20, 2
    model = Refusing(np.inf)  # fit probes the model on X
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=actions,
        population_size=population,
        n_generations=10,
        batch_size=batch,
        max_model_rows=max_model_rows,
        random_state=0,
    ).fit(X)
    # None: a generation of the block, or MIN_CALL_ROWS where that is more
    limit = max_model_rows or max(population * batch, MIN_CALL_ROWS)
    model.limit, model.largest = limit, 0
    frame = explainer.explain(rows)
    assert (frame["status"] == "ok").all()
    assert frame["instance"].nunique() == 4
    assert 0 < model.largest <= limit


@pytest.mark.slow
def test_a_thousand_features_with_actions_explain_a_row():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 1000))).add_prefix("x")
    y = (X.iloc[:, :5].sum(axis=1) > 0).astype(int)
    model = LogisticRegression().fit(X, y)
    row = X[model.predict(X) == 0].head(1)
    explainer = SequentialCounterfactualExplainer(
        model, population_size=40, n_generations=5, random_state=0
    ).fit(X)
    frame = explainer.explain(row)
    assert (frame["status"] == "ok").all()

"""Refinement and the stopping rule (issue 14): training values tried as step
values, the cheapest valid value rather than the nearest, inserted enabling
steps, ``n_generations="auto"``, the same cheapest plan whatever the seed."""

import numpy as np
import pandas as pd
import pytest

from sklearn_cscf import Action, FeatureGraph, SequentialCounterfactualExplainer
from sklearn_cscf._spaces import DiscreteSpace, RangeSpace

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
def test_auto_generations_stop_once_the_cheapest_plans_settle(island_data):
    X, rows = island_data
    actions = [
        Action("earn", "income", values=(0.0, 150.0), direction="increase"),
        Action("age", "age", values=(20.0, 90.0), direction="increase"),
    ]
    explainer = SequentialCounterfactualExplainer(
        IslandModel(),
        actions=actions,
        population_size=30,
        n_generations="auto",
        random_state=0,
    ).fit(X)
    frame, details = explainer.explain(rows, return_details=True)
    assert (frame["status"] == "ok").all()
    # at least 30 generations, the last 25 without a new cheapest plan; far
    # from the cap of 300
    assert (details["n_generations"] >= 30).all()
    assert (details["n_generations"] < 300).all()
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

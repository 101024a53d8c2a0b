"""Tests of the synthetic credit problem: data, actions and feature graph."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_cscf import Action, FeatureGraph, SequentialCounterfactualExplainer
from sklearn_cscf.datasets import (
    credit_actions,
    credit_feature_graph,
    make_credit_applicants,
)

COLUMNS = [
    "age",
    "education",
    "employment",
    "hours_per_week",
    "savings",
    "debt",
    "housing",
]


@pytest.fixture(scope="module")
def applicants():
    return make_credit_applicants(1000, random_state=0)


@pytest.fixture(scope="module")
def model(applicants):
    preprocess = make_column_transformer(
        (
            OneHotEncoder(handle_unknown="ignore"),
            make_column_selector(dtype_include="category"),
        ),
        remainder=StandardScaler(),
    )
    pipeline = make_pipeline(preprocess, LogisticRegression(max_iter=1000))
    return pipeline.fit(applicants.data, applicants.target)


def state(**columns):
    """A mapping column -> 1-D array, as user callables receive it."""
    return {name: np.asarray(values) for name, values in columns.items()}


# ---------------------------------------------------------------------- #
# the data
# ---------------------------------------------------------------------- #
def test_shapes_and_names(applicants):
    assert applicants.data.shape == (1000, 7)
    assert applicants.target.shape == (1000,)
    assert applicants.frame.shape == (1000, 8)
    assert applicants.feature_names == COLUMNS
    assert list(applicants.data.columns) == COLUMNS
    assert list(applicants.frame.columns) == [*COLUMNS, "approved"]
    assert applicants.target.name == "approved"
    assert applicants.target_names.tolist() == ["rejected", "approved"]
    assert "approved" in applicants.DESCR
    pd.testing.assert_frame_equal(applicants.frame[COLUMNS], applicants.data)
    pd.testing.assert_series_equal(applicants.frame["approved"], applicants.target)


def test_dtypes(applicants):
    data = applicants.data
    for name in ["age", "hours_per_week"]:
        assert pd.api.types.is_integer_dtype(data[name])
    for name in ["savings", "debt"]:
        assert pd.api.types.is_float_dtype(data[name])
    for name in ["education", "employment", "housing"]:
        assert isinstance(data[name].dtype, pd.CategoricalDtype)
    education = data["education"].dtype
    assert education.ordered
    assert list(education.categories) == ["none", "high-school", "bachelor", "master"]
    assert not data["employment"].dtype.ordered
    assert set(applicants.target.unique()) == {0, 1}
    assert applicants.data.notna().all().all()


def test_value_ranges(applicants):
    data = applicants.data
    assert data["age"].between(18, 70).all()
    assert data["hours_per_week"].between(0, 70).all()
    assert ((data["hours_per_week"] == 0) == (data["employment"] == "unemployed")).all()
    assert (data["savings"] >= 0).all()
    assert (data["debt"] >= 0).all()
    young = data["age"] < 23
    assert not (data.loc[young, "education"] == "master").any()


def test_deterministic_with_random_state():
    first = make_credit_applicants(300, random_state=42)
    second = make_credit_applicants(300, random_state=42)
    pd.testing.assert_frame_equal(first.frame, second.frame)
    other = make_credit_applicants(300, random_state=43)
    assert not first.frame.equals(other.frame)
    from_generator = make_credit_applicants(300, random_state=np.random.default_rng(42))
    pd.testing.assert_frame_equal(first.frame, from_generator.frame)


def test_leaves_the_global_random_state_alone():
    np.random.seed(0)
    before = np.random.get_state()[1].copy()
    make_credit_applicants(100)
    assert np.array_equal(np.random.get_state()[1], before)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_class_balance(seed):
    share = make_credit_applicants(2000, random_state=seed).target.mean()
    assert 0.28 <= share <= 0.42


@pytest.mark.parametrize("n_samples", [0, -5, 2.5])
def test_rejects_bad_n_samples(n_samples):
    with pytest.raises(ValueError, match="n_samples"):
        make_credit_applicants(n_samples)


# ---------------------------------------------------------------------- #
# the actions and the graph
# ---------------------------------------------------------------------- #
def test_six_distinct_actions_on_existing_columns():
    actions = credit_actions()
    assert len(actions) == 6
    assert all(isinstance(action, Action) for action in actions)
    assert len({action.name for action in actions}) == 6
    for action in actions:
        assert set(action.affected_features) <= set(COLUMNS)


def test_actions_use_every_feature_of_action():
    actions = credit_actions()
    assert {a.direction for a in actions} == {"any", "increase", "decrease"}
    assert any(isinstance(a.values, list) for a in actions)
    assert any(isinstance(a.values, tuple) for a in actions)
    assert any(isinstance(a.values, str) for a in actions)  # a fixed value
    assert any(a.values is None for a in actions)  # learned in fit
    assert any(a.step is not None for a in actions)
    assert any(a.effects for a in actions)
    assert any(a.precondition is not None for a in actions)
    assert any(a.postcondition is not None for a in actions)
    assert all(a.cost is not None for a in actions)


def test_get_degree_adds_study_years_to_age():
    get_degree = credit_actions()[0]
    before = state(education=["none", "high-school"], age=[30, 63])
    after = state(education=["high-school", "master"], age=[30, 63])
    assert get_degree.cost(before, after).tolist() == [2.0, 5.0]
    new_age = get_degree.effects["age"](before, after)
    assert new_age.tolist() == [32.0, 68.0]
    aged = state(education=after["education"], age=new_age)
    assert get_degree.postcondition(before, aged).tolist() == [True, False]


def test_pay_off_debt_comes_out_of_savings():
    pay = {a.name: a for a in credit_actions()}["pay_off_debt"]
    before = state(debt=[10_000.0, 10_000.0], savings=[12_000.0, 3_000.0])
    after = state(debt=[0.0, 0.0], savings=[12_000.0, 3_000.0])
    savings = pay.effects["savings"](before, after)
    assert savings.tolist() == [2_000.0, -7_000.0]
    after = state(debt=[0.0, 0.0], savings=savings)
    assert pay.postcondition(before, after).tolist() == [True, False]
    assert pay.cost(before, after).tolist() == [0.5, 0.5]


def test_graph_edges_refer_to_existing_columns():
    graph = credit_feature_graph()
    assert isinstance(graph, FeatureGraph)
    assert len(graph) == 4
    for source, target, _ in graph.edges:
        assert source in COLUMNS
        assert target in COLUMNS


def test_graph_discounts_at_a_few_points():
    graph = credit_feature_graph()
    x = state(
        education=["none", "bachelor", "master"],
        hours_per_week=[0, 40, 60],
        employment=["unemployed", "full-time", "self-employed"],
    )
    np.testing.assert_allclose(graph.feature_discount("employment", x), [1, 0.7, 0.55])
    # mean of education (1, 0.8, 0.7) and hours (1, 0.8, 0.6)
    np.testing.assert_allclose(graph.feature_discount("savings", x), [1, 0.8, 0.65])
    np.testing.assert_allclose(graph.feature_discount("debt", x), [1, 0.8, 0.8])
    # paying off debt changes debt and savings (Eq. 2: mean of both)
    np.testing.assert_allclose(graph.discount(["debt", "savings"], x), [1, 0.8, 0.725])


def test_actions_and_graph_resolve_in_fit(applicants, model):
    explainer = SequentialCounterfactualExplainer(
        model, actions=credit_actions(), feature_graph=credit_feature_graph()
    ).fit(applicants.data)
    resolved = {action.name: action for action in explainer.actions_}
    assert list(resolved) == [action.name for action in credit_actions()]
    # pay_off_debt's range is learned from the data
    assert resolved["pay_off_debt"].values == (0.0, applicants.data["debt"].max())


def test_explanations_respect_the_actions(applicants, model):
    data = applicants.data
    rejected = data[model.predict(data) == 0].head(2)
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=credit_actions(),
        feature_graph=credit_feature_graph(),
        population_size=60,
        n_generations=8,
        random_state=0,
    ).fit(data)
    frame, states = explainer.explain(rejected, return_states=True)
    assert set(frame["instance"]) == set(rejected.index)
    assert (frame["status"] == "ok").all()
    assert (states["savings"] >= 0).all()
    assert (states["age"] <= 70).all()
    degree = frame[frame["action"] == "get_degree"]
    order = ["none", "high-school", "bachelor", "master"]
    for old, new in zip(degree["old_value"], degree["new_value"]):
        assert order.index(new) > order.index(old)

"""Calls of user callables and the checks of what they return
(sklearn_cscf._callable_checks)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_cscf import Action, FeatureGraph, SequentialCounterfactualExplainer
from sklearn_cscf._callable_checks import as_array, call, describe_error

WHOLE_COLUMNS = "receives whole columns"


def test_a_callable_written_for_one_value_is_told_about_whole_columns():
    def cost(before, after):
        return 1.0 if after["worst area"] < 500 else 2.0

    columns = {"worst area": np.array([100.0, 900.0])}
    with pytest.raises(ValueError, match=WHOLE_COLUMNS) as error:
        call(cost, "Action 'a': cost", columns, columns)
    message = str(error.value)
    assert "ambiguous" in message  # numpy's own words are kept
    assert "np.where(a['worst area'] < 500, 1.0, 2.0)" in message
    assert isinstance(error.value.__cause__, ValueError)
    assert describe_error(error.value).startswith("Action 'a': cost raised")


def test_float_of_a_column_and_a_tau_get_the_hint_too():
    columns = {"age": np.array([30.0, 40.0])}
    with pytest.raises(TypeError, match=WHOLE_COLUMNS) as error:
        call(lambda b, a: float(a["age"]), "Action 'a': cost", columns, columns)
    assert "np.where" in str(error.value)
    with pytest.raises(ValueError, match="tau=lambda s: np.where") as error:
        call(lambda s: 0.5 if s["age"] > 35 else 1.0, "tau of edge", columns)


def test_other_errors_are_left_as_they_are():
    columns = {"age": np.array([30.0, 40.0])}
    with pytest.raises(KeyError) as error:
        call(lambda b, a: a["no_such"], "Action 'a': cost", columns, columns)
    assert WHOLE_COLUMNS not in str(error.value)


def test_a_result_of_the_wrong_shape_says_callables_get_columns():
    with pytest.raises(ValueError, match="whole columns"):
        as_array(np.ones((2, 2)), 2, "Action 'a': cost", float)
    # a scalar is one value for every candidate
    assert as_array(3.0, 2, "Action 'a': cost", float).tolist() == [3.0, 3.0]


def test_a_natural_but_scalar_cost_marks_rows_with_the_hint():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {"worst area": rng.uniform(0, 1000, 80), "debt": rng.uniform(0, 50, 80)}
    )
    y = (X["worst area"] - X["debt"] > 400).astype(int)
    action = Action(
        "grow",
        "worst area",
        direction="increase",
        cost=lambda b, a: 1.0 if a["worst area"] < 500 else 2.0,
    )
    explainer = SequentialCounterfactualExplainer(
        LogisticRegression().fit(X, y),
        actions=[action],
        feature_graph=FeatureGraph(),
        population_size=10,
        n_generations=2,
        random_state=0,
    ).fit(X)
    with pytest.warns(UserWarning, match="np.where"):
        result = explainer.explain(X[y == 0].head(2))
    assert (result["status"] == "error").all()
    assert result["message"].str.contains(WHOLE_COLUMNS).all()
    assert result["message"].str.contains("np.where").all()

"""The input checks shared by the explainer and replay
(sklearn_cscf._validation)."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from _line import SMALL, line_actions
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from sklearn_cscf import Action, SequentialCounterfactualExplainer, replay
from sklearn_cscf._validation import check_X


def test_check_X_refuses_what_would_be_misread():
    frame = pd.DataFrame({"a": [1.0]})
    assert check_X(frame) is frame
    assert check_X([[1.0, 2.0]]).shape == (1, 2)
    with pytest.raises(TypeError, match="Sparse data"):
        check_X(sp.csr_matrix(np.eye(2)))
    with pytest.raises(ValueError, match="is a Series"):
        check_X(pd.Series([1.0, 2.0]))
    with pytest.raises(ValueError, match="MultiIndex"):
        check_X(pd.DataFrame([[1.0]], columns=pd.MultiIndex.from_tuples([("a", 1)])))
    with pytest.raises(ValueError, match="2-dimensional.*reshape"):
        check_X(np.zeros(3))


@pytest.mark.parametrize(
    "bad, error, match",
    [
        (sp.csr_matrix(np.eye(2)), TypeError, "Sparse data"),
        (pd.Series([1.0, 2.0]), ValueError, "is a Series"),
        (np.zeros(2), ValueError, "2-dimensional"),
    ],
)
def test_replay_checks_X_as_the_explainer_does(bad, error, match):
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 0.0]])
    explainer = SequentialCounterfactualExplainer(
        LogisticRegression().fit(X, [0, 0, 1, 1]),
        population_size=10,
        n_generations=2,
        random_state=0,
    ).fit(X)
    frame = explainer.explain(X[:1])
    with pytest.raises(error, match=match):
        explainer.explain(bad)
    with pytest.raises(error, match=match):
        replay(explainer, bad, frame)


def test_a_nan_goes_to_a_pipeline_that_imputes_it(line_data):
    # an imputing pipeline's tags say it cannot take NaN: the row is explained
    from sklearn.impute import SimpleImputer

    X, y = line_data
    model = make_pipeline(SimpleImputer(), LogisticRegression()).fit(X, y)
    rows = X[model.predict(X) == 0].iloc[:2].copy()
    rows.iloc[0, 1] = np.nan  # no debt known
    explainer = SequentialCounterfactualExplainer(
        model, actions=line_actions(), **SMALL
    ).fit(X)
    frame = explainer.explain(rows)
    assert set(frame["status"]) <= {"ok", "no_counterfactual", "already_target"}
    assert list(frame["instance"].unique()) == list(rows.index)


def test_an_infinite_value_in_a_row_is_refused_by_name(line_data):
    X, y = line_data
    model = LogisticRegression().fit(X, y)
    rows = X.iloc[:2].copy()
    rows.iloc[1, 1] = np.inf
    explainer = SequentialCounterfactualExplainer(
        model, actions=line_actions(), **SMALL
    ).fit(X)
    with pytest.raises(ValueError, match="infinite values in column 'debt'"):
        explainer.explain(rows)


def test_duplicate_index_labels_are_an_error(fitted_line, line_data):
    X, _ = line_data
    rows = X.iloc[:3].set_axis([7, 7, 8])
    with pytest.raises(ValueError, match=r"duplicate index labels \[7\]"):
        fitted_line.explain(rows)


@pytest.mark.parametrize(
    "column",
    [
        pd.to_datetime(["2020-01-01", "2021-06-01", "2022-01-01"]),
        pd.to_timedelta([1, 2, 3], unit="D"),
        [True, False, True],
        pd.Categorical([10.0, 20.0, 30.0]),
        ["10", "20", "30"],
    ],
    ids=["datetime", "timedelta", "bool", "categorical", "text"],
)
def test_a_column_of_another_kind_than_in_fit_is_an_error(fitted_line, column):
    rows = pd.DataFrame({"income": column, "debt": [1.0, 2.0, 3.0]})
    with pytest.raises(TypeError, match="Column 'income' was numeric in fit"):
        fitted_line.explain(rows)


def test_integers_the_float_encoding_would_round_are_an_error(line_data):
    X, y = line_data
    wide = X.assign(customer=np.arange(len(X), dtype=np.int64) + 2**60)
    model = make_pipeline(
        ColumnTransformer([("used", "passthrough", ["income", "debt"])]),
        LogisticRegression(),
    ).fit(X.assign(customer=0), y)
    with pytest.raises(ValueError, match=r"Column 'customer' holds integers beyond"):
        SequentialCounterfactualExplainer(model, actions=line_actions()).fit(wide)
    explainer = SequentialCounterfactualExplainer(
        model, actions=line_actions(), **SMALL
    ).fit(X.assign(customer=np.arange(len(X))))
    with pytest.raises(ValueError, match="beyond 2\\*\\*53"):
        explainer.explain(wide.iloc[:2])


def test_an_array_after_a_dataframe_fit_is_refused(fitted_line, line_data):
    X, _ = line_data
    with pytest.raises(TypeError, match="fitted on a DataFrame"):
        fitted_line.explain(X.iloc[:2].to_numpy())


def test_a_dataframe_after_an_array_fit_is_refused(line_data):
    X, y = line_data
    explainer = SequentialCounterfactualExplainer(
        LogisticRegression().fit(X.to_numpy(), y),
        actions=[Action("earn", 0, direction="increase")],
        **SMALL,
    ).fit(X.to_numpy())
    with pytest.raises(TypeError, match="fitted on an array"):
        explainer.explain(X.iloc[:2])


def test_multiindex_columns_are_refused(fitted_line, line_data):
    X, _ = line_data
    rows = X.iloc[:2].copy()
    rows.columns = pd.MultiIndex.from_tuples([("a", "income"), ("a", "debt")])
    with pytest.raises(ValueError, match="MultiIndex columns"):
        fitted_line.explain(rows)


def test_columns_in_another_order_are_refused(fitted_line, line_data):
    X, _ = line_data
    with pytest.raises(ValueError, match=r"same names, same order"):
        fitted_line.explain(X.iloc[:2][["debt", "income"]])


@pytest.mark.parametrize("as_frame", [True, False], ids=["DataFrame", "array"])
def test_a_0_column_x_is_named_as_such(logistic, line_data, as_frame):
    X, y = line_data
    empty = X.iloc[:, :0] if as_frame else np.empty((len(X), 0))
    with pytest.raises(ValueError, match=r"0 feature\(s\).*X has no columns"):
        SequentialCounterfactualExplainer(**SMALL).fit(empty, y)

"""Trust every row (issue 8): the model's own decision decides, nothing is
silent, every row gets an answer.

Each test is named after the hostile input it tries.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import FixedThresholdClassifier, TunedThresholdClassifierCV
from sklearn.pipeline import make_pipeline

from sklearn_cscf import Action, FeatureGraph, SequentialCounterfactualExplainer

SMALL = {"population_size": 40, "n_generations": 10, "random_state": 0}


@pytest.fixture(scope="module")
def line_data():
    """Accepted when income - debt is large: two numeric features."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {"income": rng.uniform(0, 100, 400), "debt": rng.uniform(0, 50, 400)}
    )
    y = (X["income"] - X["debt"] + rng.normal(0, 8, 400) > 40).astype(int)
    return X, y


def line_actions(**extra):
    return [
        Action("earn", "income", values=(0.0, 200.0), direction="increase", **extra),
        Action("repay", "debt", values=(0.0, 50.0), direction="decrease"),
    ]


def final_states(frame, states):
    """The last state of every reported sequence."""
    ok = frame[frame["status"] == "ok"]
    keys = ok.groupby(["instance", "solution"])["length"].first().reset_index()
    merged = keys.merge(
        states,
        left_on=["instance", "solution", "length"],
        right_on=["instance", "solution", "step"],
    )
    return merged[list(states.columns[3:])]


# ---------------------------------------------------------------------- #
# the model's decision decides
# ---------------------------------------------------------------------- #
class ArgmaxFreeModel:
    """Duck-typed: predict accepts only when P(1) >= 0.8 (not the arg-max)."""

    classes_ = np.array([0, 1])

    def __init__(self, model):
        self.model = model

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        return self.model.predict_proba(X)

    def predict(self, X):
        return (self.predict_proba(X)[:, 1] >= 0.8).astype(int)


class PredictOnly:
    classes_ = np.array([0, 1])

    def __init__(self, model):
        self.model = model

    def __sklearn_is_fitted__(self):
        return True

    def predict(self, X):
        return self.model.predict(X)


def thresholded(name, X, y):
    base = LogisticRegression(max_iter=1000)
    if name == "fixed-threshold":
        return FixedThresholdClassifier(base, threshold=0.9).fit(X, y)
    if name == "tuned-threshold":
        return TunedThresholdClassifierCV(
            base, scoring="precision", cv=3, random_state=0
        ).fit(X, y)
    if name == "duck-typed":
        return ArgmaxFreeModel(base.fit(X, y))
    return PredictOnly(base.fit(X, y))


@pytest.mark.parametrize(
    "name", ["fixed-threshold", "tuned-threshold", "duck-typed", "predict-only"]
)
def test_thresholded_models_agree_with_predict_on_every_reported_state(line_data, name):
    X, y = line_data
    model = thresholded(name, X, y)
    explainer = SequentialCounterfactualExplainer(
        model, actions=line_actions(), **SMALL
    ).fit(X)
    assert explainer.uses_predict_
    rows = X.iloc[:30]
    frame, states = explainer.explain(rows, return_states=True)
    status = frame.groupby("instance", sort=False)["status"].first()
    predicted = pd.Series(model.predict(rows), index=rows.index)
    # already_target exactly where the model's own predict accepts
    assert (status == "already_target").tolist() == (predicted == 1).tolist()
    assert (status[predicted == 0] == "ok").any()
    finals = final_states(frame, states)
    assert len(finals) and (model.predict(finals) == 1).all()
    # transform's states are accepted too, and score counts what predict says
    out = explainer.transform(rows)
    solved = status.to_numpy() != "no_counterfactual"
    assert (model.predict(out[solved]) == 1).all()


def test_a_0_9_threshold_is_not_reached_at_probability_0_5(line_data):
    X, y = line_data
    model = FixedThresholdClassifier(LogisticRegression(), threshold=0.9).fit(X, y)
    explainer = SequentialCounterfactualExplainer(
        model, actions=line_actions(), **SMALL
    ).fit(X)
    frame = explainer.explain(X[model.predict(X) == 0].iloc[:5])
    ok = frame[frame["status"] == "ok"]
    last = ok.groupby(["instance", "solution"])["target_proba"].last()
    assert (last >= 0.9 - 1e-9).all()


def test_an_argmax_model_is_searched_by_its_probabilities(line_data):
    X, y = line_data
    explainer = SequentialCounterfactualExplainer(
        LogisticRegression().fit(X, y), actions=line_actions(), **SMALL
    ).fit(X)
    assert not explainer.uses_predict_


# ---------------------------------------------------------------------- #
# probabilities that are not probabilities
# ---------------------------------------------------------------------- #
class BrokenProba:
    """predict_proba returns ``bad`` for the rows where income > limit."""

    classes_ = np.array([0, 1])

    def __init__(self, model, bad, limit=-np.inf):
        self.model, self.bad, self.limit = model, bad, limit

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        proba = self.model.predict_proba(X)
        proba[np.asarray(X["income"]) > self.limit] = self.bad
        return proba


@pytest.mark.parametrize(
    "bad", [np.nan, np.inf, [1.5, -0.5]], ids=["nan", "inf", "outside"]
)
def test_nan_infinite_or_out_of_range_probabilities_are_an_error(line_data, bad):
    X, y = line_data
    model = BrokenProba(LogisticRegression().fit(X, y), bad)
    with pytest.raises(ValueError, match="not probabilities"):
        SequentialCounterfactualExplainer(model, actions=line_actions()).fit(X)


def test_a_model_turning_nan_for_some_states_marks_those_rows_error(line_data):
    X, y = line_data
    model = BrokenProba(LogisticRegression().fit(X, y), np.nan, limit=1e9)
    explainer = SequentialCounterfactualExplainer(
        model, actions=line_actions(), **SMALL
    ).fit(X)
    model.limit = 95.0  # from now on, states with income > 95 get NaN
    rows = X[(X["income"] < 60) & (model.model.predict(X) == 0)].iloc[:3]
    with pytest.warns(UserWarning, match=r"3 of 3 rows could not be explained"):
        frame = explainer.explain(rows)
    assert frame["status"].tolist() == ["error"] * 3
    assert frame["message"].str.contains("not probabilities").all()


# ---------------------------------------------------------------------- #
# costs that are not costs, rows with holes
# ---------------------------------------------------------------------- #
def test_a_nan_in_a_row_never_gives_a_nan_cost(line_data):
    X, y = line_data
    model = LogisticRegression().fit(X, y)
    rows = X[model.predict(X) == 0].iloc[:3].copy()
    rows.iloc[0, 0] = np.nan  # no income known
    explainer = SequentialCounterfactualExplainer(
        _NanTolerant(model), actions=line_actions(), **SMALL
    ).fit(X)
    frame = explainer.explain(rows)
    ok = frame[frame["status"] == "ok"]
    assert np.isfinite(ok[["effort", "cost", "sequence_cost"]]).all().all()
    first = frame[frame["instance"] == rows.index[0]]
    assert "earn" not in set(first["action"].dropna())  # no price for it


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


def test_a_nan_the_model_refuses_marks_only_that_row_error(line_data):
    X, y = line_data
    model = LogisticRegression().fit(X, y)
    rows = X[model.predict(X) == 0].iloc[:3].copy()
    rows.iloc[1, 0] = np.nan
    explainer = SequentialCounterfactualExplainer(
        model, actions=line_actions(), **SMALL
    ).fit(X)
    with pytest.warns(UserWarning, match="1 of 3 rows"):
        frame = explainer.explain(rows)
    status = frame.groupby("instance", sort=False)["status"].first()
    assert status[rows.index[1]] == "error"
    assert "NaN" in frame.loc[frame["instance"] == rows.index[1], "message"].iloc[0]
    assert (status.drop(rows.index[1]) != "error").all()


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


class _NanTolerant:
    """Reads a missing income as 0."""

    classes_ = np.array([0, 1])

    def __init__(self, model):
        self.model = model

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        return self.model.predict_proba(X.fillna(0.0))

    def predict(self, X):
        return self.model.predict(X.fillna(0.0))


def test_an_infinite_cost_is_never_reported(line_data):
    X, y = line_data
    model = LogisticRegression().fit(X, y)
    actions = [
        Action(
            "earn",
            "income",
            values=(0.0, 200.0),
            direction="increase",
            cost=lambda b, a: np.where(a["income"] > 70, np.inf, 0.1),
        ),
        Action("repay", "debt", values=(0.0, 50.0), direction="decrease"),
    ]
    explainer = SequentialCounterfactualExplainer(model, actions=actions, **SMALL).fit(
        X
    )
    frame = explainer.explain(X[model.predict(X) == 0].iloc[:4])
    ok = frame[frame["status"] == "ok"]
    assert np.isfinite(ok["sequence_cost"]).all()
    assert (ok.loc[ok["action"] == "earn", "new_number"] <= 70).all()


def test_a_cost_passing_nan_through_for_invalid_steps_does_not_raise(line_data):
    X, y = line_data
    model = LogisticRegression().fit(X, y)
    # NaN exactly where the precondition fails: those steps are invalid anyway
    actions = line_actions(
        cost=lambda b, a: np.where(b["debt"] < 30, a["income"] - b["income"], np.nan),
        precondition=lambda b: b["debt"] < 30,
    )
    explainer = SequentialCounterfactualExplainer(model, actions=actions, **SMALL).fit(
        X
    )
    rows = X[model.predict(X) == 0].iloc[:6]
    frame = explainer.explain(rows)
    assert set(frame["status"]) <= {"ok", "no_counterfactual"}
    ok = frame[frame["status"] == "ok"]
    earned = ok[ok["action"] == "earn"]
    assert np.isfinite(earned["cost"]).all()


# ---------------------------------------------------------------------- #
# inputs that would be misread
# ---------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def fitted_line(line_data):
    X, y = line_data
    return SequentialCounterfactualExplainer(
        LogisticRegression().fit(X, y), actions=line_actions(), **SMALL
    ).fit(X)


def test_duplicate_index_labels_are_an_error(fitted_line, line_data):
    X, _ = line_data
    rows = X.iloc[:3].set_axis([7, 7, 8])
    with pytest.raises(ValueError, match=r"duplicate index labels \[7\]"):
        fitted_line.explain(rows)


@pytest.mark.parametrize(
    ("target", "match"), [([1, 5], r"\[5\] are not"), ([], "an empty set")]
)
def test_a_set_of_target_classes_must_name_known_classes(line_data, target, match):
    X, y = line_data
    explainer = SequentialCounterfactualExplainer(
        LogisticRegression().fit(X, y), actions=line_actions(), target_class=target
    )
    with pytest.raises(ValueError, match=match):
        explainer.fit(X)


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


# ---------------------------------------------------------------------- #
# every row accounted for
# ---------------------------------------------------------------------- #
class FailsOnSomeRows:
    """predict_proba raises for any state with ``zip == 13`` (a feature no
    action changes, so only the one person with it is affected)."""

    classes_ = np.array([0, 1])

    def __init__(self, model):
        self.model = model

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        if (np.asarray(X["zip"]) == 13).any():
            raise RuntimeError("cannot score zip 13")
        return self.model.predict_proba(X[["income", "debt"]])

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_model_raising_for_one_row_marks_only_that_row(line_data, n_jobs):
    X, y = line_data
    inner = LogisticRegression().fit(X, y)
    X = X.assign(zip=np.arange(len(X)) % 10)
    explainer = SequentialCounterfactualExplainer(
        FailsOnSomeRows(inner), actions=line_actions(), n_jobs=n_jobs, **SMALL
    ).fit(X)
    rejected = X[inner.predict(X[["income", "debt"]]) == 0]
    rows = pd.concat([rejected.iloc[:1], rejected.iloc[[1]].assign(zip=13)])
    rows = pd.concat([rows, rejected.iloc[[2]]])
    with pytest.warns(UserWarning, match=r"1 of 3 rows could not be explained"):
        frame = explainer.explain(rows)
    status = frame.groupby("instance", sort=False)["status"].first()
    failed = rows.index[1]
    assert status.loc[failed] == "error"
    assert (status.drop(failed) == "ok").all()
    message = frame.loc[frame["instance"] == failed, "message"].iloc[0]
    assert message == (
        "the estimator's predict_proba raised RuntimeError: cannot score zip 13"
    )
    assert frame["instance"].drop_duplicates().tolist() == list(rows.index)


def test_a_callable_raising_for_one_row_names_the_action(line_data):
    X, y = line_data
    model = LogisticRegression().fit(X, y)

    def fragile_cost(b, a):
        if (b["debt"] == 0).any():
            raise KeyError("no debt on record")
        return np.abs(a["debt"] - b["debt"])

    actions = [
        Action("earn", "income", values=(0.0, 200.0), direction="increase"),
        Action(
            "repay", "debt", values=(0.0, 50.0), direction="decrease", cost=fragile_cost
        ),
    ]
    explainer = SequentialCounterfactualExplainer(model, actions=actions, **SMALL).fit(
        X
    )
    rows = pd.DataFrame({"income": [5.0, 10.0], "debt": [0.0, 40.0]}, ["a", "b"])
    with pytest.warns(UserWarning, match="1 of 2 rows"):
        frame = explainer.explain(rows)
    failed = frame[frame["status"] == "error"]
    assert failed["instance"].tolist() == ["a"]
    assert failed["message"].iloc[0] == (
        "Action 'repay': cost raised KeyError: 'no debt on record'"
    )
    explainer.set_params(errors="raise")
    with pytest.raises(KeyError, match="no debt on record"):
        explainer.explain(rows)


def test_no_warning_when_every_row_is_explained(fitted_line, line_data):
    X, _ = line_data
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = fitted_line.explain(X.iloc[:3])
    assert frame["message"].isna().all()


def test_empty_x_gives_an_empty_frame_with_every_column(fitted_line, line_data):
    X, _ = line_data
    frame, states, details = fitted_line.explain(
        X.iloc[:0], return_states=True, return_details=True
    )
    full = fitted_line.explain(X.iloc[:2])
    assert frame.empty and list(frame.columns) == list(full.columns)
    assert dict(frame.dtypes) == dict(full.dtypes)
    assert states.empty and list(states.columns) == [
        "instance",
        "solution",
        "step",
        "income",
        "debt",
    ]
    assert details.empty


def test_graph_tau_raising_is_named(line_data):
    X, y = line_data

    def tau(x):
        raise ArithmeticError("bad tau")

    model = LogisticRegression().fit(X, y)
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=line_actions(),
        feature_graph=FeatureGraph().add_edge("debt", "income", tau),
        **SMALL,
    ).fit(X)
    with pytest.warns(UserWarning, match="1 of 1 rows"):
        frame = explainer.explain(X[model.predict(X) == 0].iloc[:1])
    assert frame["message"].tolist() == [
        "tau of edge 'debt' -> 'income' raised ArithmeticError: bad tau"
    ]

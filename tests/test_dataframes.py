"""polars frames give the plans pandas frames give; the model is handed the
kind of frame it was fitted on; a failed fit leaves the explainer unfitted."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_cscf import (
    Action,
    SequentialCounterfactualExplainer,
    choose_plan,
    describe,
    replay,
)
from sklearn_cscf._dataframes import frame_library, to_pandas
from sklearn_cscf.datasets import make_credit_applicants

pl = pytest.importorskip("polars")

TEXT = ["education", "employment", "housing"]
SMALL = {"population_size": 40, "n_generations": 8, "random_state": 0, "n_jobs": 1}


@pytest.fixture(scope="module")
def credit():
    bunch = make_credit_applicants(300, random_state=0)
    # text columns, as read from a CSV: the same data in pandas and polars
    X = bunch.data.astype(dict.fromkeys(TEXT, str))
    model = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), TEXT),
            remainder=StandardScaler(),
        ),
        LogisticRegression(max_iter=1000),
    ).fit(X, bunch.target)
    rejected = X[model.predict(X) == 0].head(3).reset_index(drop=True)
    return X, bunch.target, model, rejected


class SeesOnlyPolars:
    """A fitted classifier that fails on anything but a polars frame."""

    classes_ = np.array([0, 1])

    def __init__(self, kinds):
        self.kinds = kinds

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        self.kinds.add(type(X).__module__.split(".")[0])
        if not isinstance(X, pl.DataFrame):
            raise TypeError(f"polars only, got {type(X).__name__}")
        p = (X["savings"].to_numpy() > 30_000).astype(float)
        return np.column_stack([1 - p, p])

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(axis=1)]


def test_polars_gives_the_plans_of_pandas(credit):
    X, _, model, rejected = credit
    by_pandas = SequentialCounterfactualExplainer(model, **SMALL).fit(X)
    by_polars = SequentialCounterfactualExplainer(model, **SMALL).fit(pl.from_pandas(X))
    rejected_pl = pl.from_pandas(rejected)
    expected, expected_states = by_pandas.explain(rejected, return_states=True)
    got, got_states = by_polars.explain(rejected_pl, return_states=True)
    assert (expected["status"] == "ok").any()
    pd.testing.assert_frame_equal(got, expected)
    pd.testing.assert_frame_equal(got_states, expected_states)
    pd.testing.assert_frame_equal(
        by_polars.transform(rejected_pl), by_pandas.transform(rejected)
    )
    checked = replay(by_polars, rejected_pl, got, got_states)
    assert checked["passed"].all()
    assert describe(got, got_states, X=rejected_pl) == describe(
        expected, expected_states, X=rejected
    )
    assert by_polars.feature_names_in_.tolist() == list(X.columns)


def test_the_model_is_handed_polars_when_fitted_on_polars(credit):
    X, _, _, rejected = credit
    kinds = set()
    model = SeesOnlyPolars(kinds)
    explainer = SequentialCounterfactualExplainer(
        model, actions=[Action("save", "savings", direction="increase")], **SMALL
    ).fit(pl.from_pandas(X))
    explanations = explainer.explain(pl.from_pandas(rejected))
    assert kinds == {"polars"}
    assert (explanations["status"] == "ok").all()
    assert replay(explainer, pl.from_pandas(rejected), explanations)["passed"].all()


def test_an_unfitted_model_is_fitted_on_the_polars_frame(credit):
    X, y, _, rejected = credit
    explainer = SequentialCounterfactualExplainer(**SMALL).fit(pl.from_pandas(X), y)
    # the default pipeline was fitted on polars, so it knows polars' names
    assert list(explainer.estimator_.feature_names_in_) == list(X.columns)
    explanations = explainer.explain(pl.from_pandas(rejected))
    assert set(explanations["status"]) <= {"ok", "no_counterfactual", "already_target"}


def test_polars_errors_name_polars(credit):
    X, _, model, _ = credit
    explainer = SequentialCounterfactualExplainer(model, **SMALL)
    with pytest.raises(TypeError, match=r"LazyFrame; collect it first"):
        explainer.fit(pl.from_pandas(X).lazy())
    with pytest.raises(ValueError, match=r"polars Series"):
        explainer.fit(pl.from_pandas(X)["age"])
    explainer.fit(pl.from_pandas(X))
    wrong = pl.from_pandas(X).rename({"age": "years"})
    with pytest.raises(ValueError, match=r"'years'") as info:
        explainer.explain(wrong.head(2))
    assert "not a DataFrame" not in str(info.value)
    assert "ndarray" not in str(info.value)
    # the frames explain returns are pandas; a polars one is named as such
    explanations = explainer.explain(pl.from_pandas(X).head(2))
    with pytest.raises(TypeError, match=r"polars DataFrame; pass the pandas"):
        choose_plan(pl.from_pandas(explanations))


def test_frame_kinds():
    frame = pd.DataFrame({"a": [1, 2]})
    assert frame_library(frame) == "pandas"
    assert frame_library(pl.from_pandas(frame)) == "polars"
    assert frame_library(frame.to_numpy()) is None
    assert to_pandas(frame) is frame
    ordered = pl.DataFrame(
        {"level": pl.Series(["hi", "lo"], dtype=pl.Enum(["lo", "hi"]))}
    )
    converted = to_pandas(ordered)["level"]
    assert converted.cat.ordered
    assert converted.cat.categories.tolist() == ["lo", "hi"]
    unordered = to_pandas(
        pl.DataFrame({"c": pl.Series(["b", "a"]).cast(pl.Categorical)})
    )
    assert unordered["c"].cat.categories.tolist() == ["a", "b"]


# ---------------------------------------------------------------------- #
# a failed fit
# ---------------------------------------------------------------------- #
def test_a_failed_fit_leaves_the_explainer_unfitted(credit):
    X, _, model, rejected = credit
    explainer = SequentialCounterfactualExplainer(
        model, actions=[Action("x", "no_such_column")]
    )
    with pytest.raises(ValueError, match="no_such_column"):
        explainer.fit(X)
    assert not hasattr(explainer, "estimator_")
    assert not hasattr(explainer, "classes_")
    with pytest.raises(NotFittedError):
        explainer.explain(rejected)
    # a fitted explainer whose refit fails is as it was before, not
    # half-refitted
    explainer.set_params(actions=None).fit(X)
    before = dict(vars(explainer))
    explainer.set_params(actions=[Action("x", "no_such_column")])
    with pytest.raises(ValueError):
        explainer.fit(X[X.columns[::-1]])  # n_features_in_ etc. set anew
    assert {k: v for k, v in vars(explainer).items() if k != "actions"} == {
        k: v for k, v in before.items() if k != "actions"
    }
    assert all(vars(explainer)[k] is v for k, v in before.items() if k != "actions")
    # and its parameters are untouched
    assert explainer.get_params()["estimator"] is model


def test_a_polars_enum_keeps_the_declared_order_of_pandas_categories(credit):
    X, _, model, rejected = credit
    # categories declared in an order that is not sorted; a polars Enum is
    # ordered, like a pandas ordered category (a polars Categorical holds no
    # order at all: its labels are sorted, see the user guide)
    declared = {name: sorted(X[name].unique(), reverse=True) for name in TEXT}
    as_categories = {
        name: pd.CategoricalDtype(labels, ordered=True)
        for name, labels in declared.items()
    }
    X_pd, rejected_pd = X.astype(as_categories), rejected.astype(as_categories)
    enums = [pl.col(name).cast(pl.Enum(labels)) for name, labels in declared.items()]
    X_pl = pl.from_pandas(X).with_columns(enums)
    rejected_pl = pl.from_pandas(rejected).with_columns(enums)
    by_pandas = SequentialCounterfactualExplainer(model, **SMALL).fit(X_pd)
    by_polars = SequentialCounterfactualExplainer(model, **SMALL).fit(X_pl)
    assert by_polars.categories_ == by_pandas.categories_
    assert by_pandas.categories_["housing"] == declared["housing"]
    expected = by_pandas.explain(rejected_pd)
    assert (expected["status"] == "ok").any()
    pd.testing.assert_frame_equal(by_polars.explain(rejected_pl), expected)
    # polars has no index: instance is the row's position in the polars frame
    assert by_polars.explain(rejected_pl[1:])["instance"].iloc[0] == 0

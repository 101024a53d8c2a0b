"""The black box during explain (sklearn_cscf._engine._model): model calls,
decisions, checked answers, and the model's handling end to end."""

import warnings

import numpy as np
import pandas as pd
import pytest
from _line import (
    SMALL,
    Wrapping,
    earn,
    final_states,
    line_actions,
    repay,
)
from _models import Counted, Scaled, Thresholded, line_model
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import FixedThresholdClassifier, TunedThresholdClassifierCV

from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf._engine._model import (
    ModelAdapter,
    decisions_now,
)
from sklearn_cscf._schema import FeatureSchema


@pytest.fixture
def schema():
    return FeatureSchema(pd.DataFrame({"p": [0.0, 0.5, 1.0], "z": [1.0, 2.0, 3.0]}))


def states(*ps):
    return np.array([[p, 0.0] for p in ps])


# ---------------------------------------------------------------------- #
# decisions
# ---------------------------------------------------------------------- #
def test_use_predict_decides_by_predict_not_the_arg_max(schema):
    rows = states(0.3, 0.6, 0.9)
    counted = Counted()
    by_predict = ModelAdapter(counted, schema, Thresholded.classes_, True)
    answers = by_predict.answer(rows)
    # P(yes) = 0.6 is the arg-max, but predict says "no" below 0.8
    assert answers.decision.tolist() == [0, 0, 1]
    np.testing.assert_allclose(answers.output[:, 1], [0.3, 0.6, 0.9])
    by_arg_max = ModelAdapter(Thresholded(), schema, Thresholded.classes_, False)
    assert by_arg_max.answer(rows).decision.tolist() == [0, 1, 1]
    # one call of each method per batch, counted once
    assert counted.calls == [("predict_proba", 3), ("predict", 3)]


def test_a_classifier_without_predict_proba_decides_by_predict(schema):
    class Labels:
        classes_ = np.array([0, 1])

        def predict(self, X):
            return (np.asarray(X, dtype=float)[:, 0] > 0.5).astype(int)

    model = ModelAdapter(Labels(), schema, Labels.classes_)
    assert model.use_predict and not model.has_output
    answers = model.answer(states(0.2, 0.7))
    assert answers.decision.tolist() == [0, 1]
    assert answers.output is None


def test_a_regressor_answers_its_prediction_rounded_and_exact(schema):
    class Exact:
        def predict(self, X):
            return np.asarray(X, dtype=float)[:, 0] / 3.0

    answers = ModelAdapter(Exact(), schema, None).answer(states(1.0, 0.5))
    assert answers.decision.tolist() == [0, 0]
    np.testing.assert_array_equal(answers.output[:, 1], [1 / 3, 0.5 / 3])
    np.testing.assert_allclose(answers.output[:, 0], answers.output[:, 1], rtol=1e-11)


def test_probabilities_are_checked(schema):
    class Broken(Thresholded):
        def predict_proba(self, X):
            return np.full((len(X), 2), 1.5)

    with pytest.raises(ValueError, match="not probabilities"):
        ModelAdapter(Broken(), schema, Broken.classes_).answer(states(0.1))

    class Narrow(Thresholded):
        def predict_proba(self, X):
            return np.ones((len(X), 1))

    with pytest.raises(ValueError, match=r"expected \(1, 2\)"):
        ModelAdapter(Narrow(), schema, Narrow.classes_).answer(states(0.1))


def test_labels_outside_classes_are_refused(schema):
    model = ModelAdapter(Thresholded(), schema, Thresholded.classes_, True)
    with pytest.raises(ValueError, match="not labels in classes_"):
        model.decision_of(np.array(["maybe"]))


def test_decisions_now_name_the_rows_the_model_fails_on():
    X = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0]})
    schema = FeatureSchema(X)
    model = LogisticRegression().fit(X, [0, 0, 1, 1])

    class FailsOnTwo:
        classes_ = model.classes_

        def predict_proba(self, rows):
            if (rows["x"] == 2.0).any():
                raise ValueError("not this one")
            return model.predict_proba(rows)

        def predict(self, rows):
            return self.classes_[self.predict_proba(rows).argmax(axis=1)]

    encoded = schema.encode(X)
    answers, failures = decisions_now(model, schema, model.classes_, encoded, "warn")
    assert answers.decision.tolist() == [0, 0, 1, 1] and failures == {}
    broken = FailsOnTwo()
    answers, failures = decisions_now(broken, schema, broken.classes_, encoded, "warn")
    assert answers.decision.tolist() == [0, 0, -1, 1]
    assert list(failures) == [2] and "not this one" in failures[2]
    with pytest.raises(ValueError, match="not this one"):
        decisions_now(broken, schema, broken.classes_, encoded, "raise")


# ---------------------------------------------------------------------- #
# what kind of model
# ---------------------------------------------------------------------- #


# ---------------------------------------------------------------------- #
# issue 23: answers that are not probabilities, classes named twice
# ---------------------------------------------------------------------- #


@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_probabilities_not_summing_to_one_are_refused(factor):
    X, inner = line_model()
    schema = FeatureSchema(X)
    adapter = ModelAdapter(Scaled(inner, factor), schema, inner.classes_)
    with pytest.raises(ValueError, match="do not sum to 1.*not the probabilities"):
        adapter.answer(schema.encode(X.iloc[:5]))
    from sklearn_cscf import SequentialCounterfactualExplainer

    with pytest.raises(ValueError, match="do not sum to 1"):
        SequentialCounterfactualExplainer(Scaled(inner, factor)).fit(X)


def test_probabilities_a_little_off_one_pass():
    X, inner = line_model()
    schema = FeatureSchema(X)
    adapter = ModelAdapter(Scaled(inner, 1 + 1e-7), schema, inner.classes_)
    assert adapter.answer(schema.encode(X.iloc[:5])).decision.shape == (5,)


def test_a_model_fitted_without_names_warns_once_not_per_call():
    import warnings

    from sklearn.datasets import load_breast_cancer

    from sklearn_cscf import SequentialCounterfactualExplainer, make_actions

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X = X.iloc[:, :5]
    model = LogisticRegression(max_iter=1000).fit(X.values, y)  # no names
    rows = X[model.predict(X.values) == 0].head(2)
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=make_actions(X),
        population_size=20,
        n_generations=3,
        random_state=0,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        explainer.fit(X)
        explainer.explain(rows)
    messages = [str(w.message) for w in caught]
    assert not [m for m in messages if m.startswith("X has feature names")]
    ours = [m for m in messages if "fitted without feature names" in m]
    assert len(ours) == 1
    assert "'mean radius', 'mean texture'" in ours[0]
    # the per-call warning is silenced only around the explainer's calls
    with pytest.warns(UserWarning, match="X has feature names"):
        model.predict(X)


def test_a_cloned_fitted_model_points_to_frozen_estimator(
    credit_compact_and_full, credit_data
):
    explainer, _, _ = credit_compact_and_full
    X, _ = credit_data
    with pytest.raises(ValueError, match="FrozenEstimator"):
        clone(explainer).fit(X)


class ArgmaxFreeModel(Wrapping):
    """Duck-typed: predict accepts only when P(1) >= 0.8 (not the arg-max)."""

    def predict_proba(self, X):
        return self.model.predict_proba(X)

    def predict(self, X):
        return (self.predict_proba(X)[:, 1] >= 0.8).astype(int)


class PredictOnly(Wrapping):
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


class Noisy:
    """Duck-typed: the probability of class 1 with noise of sd ``sd`` on
    every call (a model that is not deterministic)."""

    classes_ = np.array([0, 1])

    def __init__(self, model, sd=0.15):
        self.model, self.sd = model, sd
        self.rng = np.random.default_rng(0)

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        p = self.model.predict_proba(X)[:, 1]
        p = np.clip(p + self.rng.normal(0, self.sd, p.shape[0]), 0.0, 1.0)
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


class SecondThoughts:
    """Duck-typed, without ``predict``: the logistic model's answer the 1st,
    3rd, 5th ... time a row is asked, a rejection the 2nd, 4th ... time. The
    search asks about each state once (it remembers answers); a fresh call
    about a final state is its second."""

    classes_ = np.array([0, 1])

    def __init__(self, model):
        self.model, self.asked = model, {}

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        proba = self.model.predict_proba(X)
        for r, row in enumerate(np.asarray(X, dtype=float)):
            key = row.tobytes()
            self.asked[key] = self.asked.get(key, 0) + 1
            if self.asked[key] % 2 == 0:
                proba[r] = [1.0, 0.0]
        return proba


def test_a_model_whose_answers_vary_is_named_at_fit(logistic, line_data):
    X, _ = line_data
    with pytest.warns(UserWarning, match="not deterministic.*checked with a fresh"):
        SequentialCounterfactualExplainer(Noisy(logistic), **SMALL).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a deterministic model: no warning
        SequentialCounterfactualExplainer(logistic, **SMALL).fit(X)


def test_plans_a_fresh_call_does_not_accept_are_not_reported_ok(logistic, line_data):
    X, _ = line_data
    model = SecondThoughts(logistic)
    with pytest.warns(UserWarning, match="not deterministic"):
        explainer = SequentialCounterfactualExplainer(
            model, actions=[earn(), repay()], **SMALL
        ).fit(X)
    rows = X[logistic.predict(X) == 0].iloc[:4]
    # the search finds plans the model accepted once; asked again about their
    # final states, it rejects every one: none may be reported "ok"
    frame = explainer.explain(rows)
    assert set(frame["status"]) == {"no_counterfactual"}
    # the same search with a model that keeps its word reports plans
    ok = SequentialCounterfactualExplainer(
        logistic, actions=[earn(), repay()], **SMALL
    ).fit(X)
    assert (ok.explain(rows)["status"] == "ok").all()


def test_a_deterministic_model_is_not_asked_again(logistic, line_data):
    X, _ = line_data
    explainer = SequentialCounterfactualExplainer(
        logistic, actions=[earn(), repay()], **SMALL
    ).fit(X)
    assert explainer._fitted.varies is False


class FailingFit(LogisticRegression):
    def fit(self, X, y):
        raise ArithmeticError("singular matrix")


class FailingProba(LogisticRegression):
    def predict_proba(self, X):
        raise OSError("model server down")


def test_fit_names_the_estimator_and_what_it_was_doing(line_data):
    X, y = line_data
    explainer = SequentialCounterfactualExplainer(FailingFit(), **SMALL)
    with pytest.raises(ArithmeticError) as caught:
        explainer.fit(X, y)
    message = str(caught.value)
    assert "The estimator FailingFit raised ArithmeticError in its fit" in message
    assert "singular matrix" in message
    assert isinstance(caught.value.__cause__, ArithmeticError)
    assert str(caught.value.__cause__) == "singular matrix"

    fitted = FailingProba().fit(X, y)
    in_fit = "FailingProba raised OSError in its predict_proba, which the explainer"
    with pytest.raises(OSError, match=in_fit) as caught:
        SequentialCounterfactualExplainer(fitted, **SMALL).fit(X)
    assert str(caught.value.__cause__) == "model server down"


def test_the_default_model_is_fitted_under_the_thread_limits_of_explain(
    credit_data, monkeypatch
):
    # issue 37: 16.8 CPU seconds on a busy 2-core machine, 0.84 with one
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_info, threadpool_limits

    seen = []
    fit = HistGradientBoostingClassifier.fit

    def counting(self, X, y, *args, **kwargs):
        seen.append(
            {pool["user_api"]: pool["num_threads"] for pool in threadpool_info()}
        )
        return fit(self, X, y, *args, **kwargs)

    monkeypatch.setattr(HistGradientBoostingClassifier, "fit", counting)
    X, y = credit_data
    with threadpool_limits(limits=3):  # whatever the machine's cores
        SequentialCounterfactualExplainer(random_state=0).fit(X, y)
        after = {pool["user_api"]: pool["num_threads"] for pool in threadpool_info()}
    (inside,) = seen
    assert inside and set(inside.values()) == {1}
    assert set(after.values()) == {3}  # the caller's limits are restored


def test_a_model_failing_in_fit_names_its_method_and_why_an_array_fails(
    credit_data, credit_model
):
    # issue 37: "raised KeyError in fit" though it was the model's predict
    # inside the explainer's fit, on an array without the column names
    X, _ = credit_data
    with pytest.raises(ValueError) as caught:
        SequentialCounterfactualExplainer(credit_model).fit(X.to_numpy())
    message = str(caught.value)
    assert message.startswith(
        "The estimator Pipeline raised ValueError in its predict_proba, which "
        "the explainer's fit calls on 300 rows of the X given to it (asked "
        "about 300 rows in one call; the explainer's max_model_rows sets the "
        "most rows per call): "
    )
    assert message.endswith(
        "The model was fitted on named columns ('income', 'debt', 'age', "
        "'hours', 'education', ...), and X has none (an array): pass X as a "
        "DataFrame with those columns."
    )

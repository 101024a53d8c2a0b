"""Trust, round two (issue 16): no silent callables, honest models, clear
messages.

Each test is named after the hostile input it tries. Checkpoints are tested in
``test_checkpoints.py``, nullable dtypes in ``test_schema.py``, labels through
CSV and parquet in ``test_reporting.py``.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression

from sklearn_cscf import Action, FeatureGraph, SequentialCounterfactualExplainer

SMALL = {"population_size": 40, "n_generations": 10, "random_state": 0}


@pytest.fixture(scope="module")
def line_data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {"income": rng.uniform(0, 100, 400), "debt": rng.uniform(0, 50, 400)}
    )
    y = (X["income"] - X["debt"] + rng.normal(0, 8, 400) > 40).astype(int)
    return X, y


@pytest.fixture(scope="module")
def logistic(line_data):
    return LogisticRegression().fit(*line_data)


@pytest.fixture(scope="module")
def nan_tolerant(line_data):
    """The library's own default model: it takes NaN without a word."""
    return HistGradientBoostingClassifier(random_state=0).fit(*line_data)


def earn(**extra):
    return Action("earn", "income", values=(0.0, 200.0), direction="increase", **extra)


def repay(**extra):
    return Action("repay", "debt", values=(0.0, 50.0), direction="decrease", **extra)


def explain_rows(model, line_data, actions, graph=None, n=3, **params):
    X, _ = line_data
    explainer = SequentialCounterfactualExplainer(
        model, actions=actions, feature_graph=graph, **{**SMALL, **params}
    ).fit(X)
    rows = X[model.predict(X) == 0].iloc[:n]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return explainer.explain(rows, return_states=True)


def only_message(frame):
    """The message of rows that all failed the same way (counts aside: the
    first message, after checking that every row has one of its kind)."""
    assert (frame["status"] == "error").all(), frame[["status", "message"]]
    messages = frame["message"].unique().tolist()
    kinds = {m.split(";")[0].split(" with ")[0] for m in messages}
    assert len(kinds) == 1, messages
    return messages[0]


# ---------------------------------------------------------------------- #
# callables that return nothing, NaN, masked or the wrong kind of values
# ---------------------------------------------------------------------- #
def forgot_return(b, a):
    0.1 * np.abs(a["income"] - b["income"])  # noqa: B018 - the bug under test


@pytest.mark.parametrize(
    "cost, expected",
    [
        (forgot_return, "returned None"),
        (
            lambda b, a: np.ma.masked_all(len(a["income"])),
            "masked array with",
        ),
        (lambda b, a: np.full(len(a["income"]), "0.5"), "must return numbers"),
        (lambda b, a: [None] * len(a["income"]), "got NoneType None"),
        (lambda b, a: np.full(len(a["income"]), 1 + 1j), "must return numbers"),
    ],
    ids=["None", "masked", "text", "list of None", "complex"],
)
def test_a_cost_returning_no_number_is_an_error_naming_it(
    logistic, line_data, cost, expected
):
    frame, _ = explain_rows(logistic, line_data, [earn(cost=cost), repay()])
    message = only_message(frame)
    assert message.startswith("Action 'earn': cost") or "Action 'earn': cost" in (
        message
    )
    assert expected in message


@pytest.mark.parametrize(
    "cost",
    [
        lambda b, a: np.full(len(a["income"]), np.nan),
        lambda b, a: np.nan,
        lambda b, a: np.where(a["income"] > 1e9, 1.0, np.nan),
    ],
    ids=["NaN array", "NaN", "NaN but where unreachable"],
)
def test_a_cost_pricing_no_step_is_an_error_at_fit_naming_it(logistic, line_data, cost):
    X, _ = line_data
    explainer = SequentialCounterfactualExplainer(
        logistic, actions=[earn(cost=cost), repay()], **SMALL
    )
    with pytest.raises(ValueError, match="Action 'earn': cost returned NaN for every"):
        explainer.fit(X)


def test_a_partly_masked_cost_is_an_error_too(logistic, line_data):
    def cost(b, a):
        values = np.ma.masked_array(np.full(len(a["income"]), 0.2))
        values[0] = np.ma.masked
        return values

    frame, _ = explain_rows(logistic, line_data, [earn(cost=cost), repay()])
    assert "masked" in only_message(frame)


def test_a_cost_with_nan_for_some_steps_still_prices_the_others(logistic, line_data):
    # NaN is "no price" for one step; only NaN for all of them is a bug
    def cost(b, a):
        return np.where(a["income"] > 90, np.nan, 0.1)

    frame, _ = explain_rows(logistic, line_data, [earn(cost=cost), repay()])
    assert set(frame["status"]) <= {"ok", "no_counterfactual"}
    assert (frame.loc[frame["action"] == "earn", "new_number"] <= 90).all()


@pytest.mark.parametrize("model_name", ["nan_tolerant", "logistic"])
def test_an_effect_forgetting_return_is_an_error_naming_it(
    request, line_data, model_name
):
    # with a model that takes NaN (the default estimator does), the NaN
    # would otherwise come back in an "ok" plan; with one that does not,
    # it would be blamed on the model
    model = request.getfixturevalue(model_name)

    def effect(b, a):
        b["debt"] - 1.0  # noqa: B018 - the bug under test

    frame, states = explain_rows(model, line_data, [earn(effects={"debt": effect})])
    message = only_message(frame)
    assert "Action 'earn': effect on 'debt'" in message
    assert "returned None" in message
    assert "Input X contains NaN" not in message


@pytest.mark.parametrize(
    "value, expected",
    [(np.nan, "missing value (NaN or None)"), (np.inf, "infinite values")],
    ids=["NaN", "inf"],
)
def test_an_effect_returning_nan_or_inf_is_blamed_on_the_effect(
    logistic, line_data, value, expected
):
    def effect(b, a):
        return np.full(len(b["debt"]), value)

    frame, _ = explain_rows(logistic, line_data, [earn(effects={"debt": effect})])
    message = only_message(frame)
    assert "Action 'earn': effect on 'debt'" in message and expected in message
    assert "Input X contains" not in message


def test_an_effect_passing_a_missing_value_on_stays_allowed(logistic, line_data):
    # a row with no debt known: an effect that keeps it unknown is no bug
    X, _ = line_data
    rows = X[logistic.predict(X) == 0].iloc[:2].copy()
    rows.iloc[0, 1] = np.nan

    class Tolerant:
        classes_ = np.array([0, 1])

        def __sklearn_is_fitted__(self):
            return True

        def predict_proba(self, X):
            return logistic.predict_proba(X.fillna(0.0))

        def predict(self, X):
            return logistic.predict(X.fillna(0.0))

    explainer = SequentialCounterfactualExplainer(
        Tolerant(),
        actions=[earn(effects={"debt": lambda b, a: b["debt"] + 1.0})],
        **SMALL,
    ).fit(X)
    frame = explainer.explain(rows)
    assert "error" not in set(frame["status"])


@pytest.mark.parametrize(
    "condition, expected",
    [
        (lambda b: None, "returned None"),
        (lambda b: np.ma.masked_all(len(b["debt"]), dtype=bool), "masked"),
        (lambda b: np.full(len(b["debt"]), "yes"), "must return booleans"),
    ],
    ids=["None", "masked", "text"],
)
def test_a_condition_returning_no_booleans_is_an_error_naming_it(
    logistic, line_data, condition, expected
):
    frame, _ = explain_rows(logistic, line_data, [earn(precondition=condition)])
    message = only_message(frame)
    assert "Action 'earn': precondition" in message and expected in message


@pytest.mark.parametrize(
    "tau, expected",
    [
        (lambda x: None, "returned None"),
        (lambda x: np.full(len(x["debt"]), np.nan), "values in [0, 1]"),
        (lambda x: np.ma.masked_all(len(x["debt"])), "masked"),
        (lambda x: np.full(len(x["debt"]), "0.5"), "must return numbers"),
    ],
    ids=["None", "NaN", "masked", "text"],
)
def test_a_tau_returning_no_discount_is_an_error_naming_it(
    logistic, line_data, tau, expected
):
    graph = FeatureGraph([("debt", "income", tau)])
    frame, _ = explain_rows(logistic, line_data, [earn(), repay()], graph=graph)
    message = only_message(frame)
    assert "tau of edge 'debt' -> 'income'" in message and expected in message


# ---------------------------------------------------------------------- #
# callables get copies they cannot use to change the states
# ---------------------------------------------------------------------- #
def test_a_tau_cannot_corrupt_the_reported_states(logistic, line_data):
    def vandal(x):
        for name in ("income", "debt"):
            values = x[name]
            values.setflags(write=True)  # its own copy: allowed, and harmless
            values[:] = -1.0
            if values.base is not None:  # pragma: no cover - would be a leak
                values.base.setflags(write=True)
                values.base[...] = -1.0
        return 0.5

    graph = FeatureGraph([("debt", "income", vandal)])
    clean = FeatureGraph([("debt", "income", lambda x: 0.5)])
    frame, states = explain_rows(logistic, line_data, [earn(), repay()], graph=graph)
    expected, expected_states = explain_rows(
        logistic, line_data, [earn(), repay()], graph=clean
    )
    assert (frame["status"] == "ok").any()
    assert (states[["income", "debt"]] >= 0).all().all()
    pd.testing.assert_frame_equal(frame, expected)
    pd.testing.assert_frame_equal(states, expected_states)


def test_an_action_cannot_write_through_the_base_of_what_it_gets(logistic, line_data):
    seen = []

    def cost(b, a):
        for view in (b, a):
            values = view["debt"]
            seen.append(values.base is None or not values.base.flags.writeable)
            base = values.base
            if base is not None and base.flags.writeable:  # pragma: no cover
                base[...] = 999.0
        return 0.1

    frame, states = explain_rows(logistic, line_data, [earn(cost=cost), repay()])
    assert seen and all(seen)
    assert not (states["debt"] == 999.0).any()


# ---------------------------------------------------------------------- #
# what fit refuses up front
# ---------------------------------------------------------------------- #
def test_a_fixed_category_with_a_typo_is_an_error_at_fit():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "job": rng.choice(["clerk", "manager", "nurse"], 200),
            "income": rng.uniform(0, 100, 200),
        }
    )
    y = (X["job"] == "manager").astype(int)
    explainer = SequentialCounterfactualExplainer(
        actions=[Action("promote", "job", values="Manager")], **SMALL
    )
    with pytest.raises(ValueError, match=r"'Manager'.*close matches: \['manager'\]"):
        explainer.fit(X, y)


def test_a_column_whose_span_overflows_is_refused_naming_it(logistic):
    X = pd.DataFrame({"income": [-1.7e308, 0.0, 1.7e308], "debt": [1.0, 2.0, 3.0]})
    explainer = SequentialCounterfactualExplainer(logistic, **SMALL)
    with pytest.raises(ValueError, match="Column 'income' spans"):
        explainer.fit(X)


def test_an_action_range_whose_span_overflows_is_refused_naming_it():
    with pytest.raises(ValueError, match="Action 'earn'.*wider than the largest"):
        Action("earn", "income", values=(-1.7e308, 1.7e308))


# ---------------------------------------------------------------------- #
# model honesty
# ---------------------------------------------------------------------- #
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


# ---------------------------------------------------------------------- #
# messages that name the culprit
# ---------------------------------------------------------------------- #
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
    with pytest.raises(OSError, match="FailingProba raised OSError in fit") as caught:
        SequentialCounterfactualExplainer(fitted, **SMALL).fit(X)
    assert str(caught.value.__cause__) == "model server down"


@pytest.mark.parametrize("as_frame", [True, False], ids=["DataFrame", "array"])
def test_a_0_column_x_is_named_as_such(logistic, line_data, as_frame):
    X, y = line_data
    empty = X.iloc[:, :0] if as_frame else np.empty((len(X), 0))
    with pytest.raises(ValueError, match=r"0 feature\(s\).*X has no columns"):
        SequentialCounterfactualExplainer(**SMALL).fit(empty, y)


def test_n_jobs_0_is_refused_at_fit_naming_it(logistic, line_data):
    X, _ = line_data
    with pytest.raises(ValueError, match="'n_jobs' parameter.*Got 0 instead"):
        SequentialCounterfactualExplainer(logistic, n_jobs=0, **SMALL).fit(X)

"""Actions applied to batches of states (sklearn_cscf._compiled_actions):
costs, effects and conditions that return no usable value are errors naming
them, missing values price no step, and callables get copies they cannot
write through."""

import numpy as np
import pandas as pd
import pytest
from _line import SMALL, Wrapping, earn, explain_rows, line_actions, only_message, repay
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression

from sklearn_cscf import Action, SequentialCounterfactualExplainer


class _NanTolerant(Wrapping):
    """Reads a missing income as 0."""

    def predict_proba(self, X):
        return self.model.predict_proba(X.fillna(0.0))

    def predict(self, X):
        return self.model.predict(X.fillna(0.0))


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


@pytest.fixture(scope="module")
def nan_tolerant(line_data):
    """The library's own default model: it takes NaN without a word."""
    return HistGradientBoostingClassifier(random_state=0).fit(*line_data)


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

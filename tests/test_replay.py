"""Tests of sklearn_cscf.replay: the paper's worked example replays to its
hand-computed costs, reported sequences replay cleanly, and a tampered frame
(a wrong value, cost or state, a repeated action, a value outside the space)
is caught; frames that do not fit X or the explainer raise clear errors."""

import numpy as np
import pandas as pd
import pytest

from sklearn_cscf import Action, SequentialCounterfactualExplainer, replay
from sklearn_cscf._replay import COLUMNS

SMALL = {"population_size": 30, "n_generations": 8, "random_state": 0}

# the worked example of METHOD.md: x0 = (Seller, HS, Germany)
WORKED_ACTIONS = {
    "a1_job": ("job", "Seller", "Developer", 10.0),
    "a2_education": ("education", "HS", "BSc", 5.0),
    "a3_location": ("location", "Germany", "US", 15.0),
}
# every order with its discounts (Eq. 1-2 on the state before each step),
# computed by hand; S1 = <a3, a1, a2> and S2 = <a2, a3, a1> are the paper's
WORKED_ORDERS = {
    ("a1_job", "a2_education", "a3_location"): ([1.0, 0.5, 1.0], 27.5),
    ("a1_job", "a3_location", "a2_education"): ([1.0, 1.0, 1.0], 30.0),
    ("a2_education", "a1_job", "a3_location"): ([0.5, 0.75, 1.0], 25.0),
    ("a2_education", "a3_location", "a1_job"): ([0.5, 1.0, 0.5], 22.5),
    ("a3_location", "a1_job", "a2_education"): ([1.0, 0.75, 1.0], 27.5),
    ("a3_location", "a2_education", "a1_job"): ([1.0, 1.0, 0.5], 25.0),
}


def hand_frame(order, discounts, total):
    """The rows ``explain`` would report for ``order``, from the hand values."""
    rows = []
    for t, (name, discount) in enumerate(zip(order, discounts), start=1):
        feature, old, new, effort = WORKED_ACTIONS[name]
        rows.append(
            {
                "instance": 0,
                "plan": 0,
                "solution": 0,
                "step": t,
                "action": name,
                "feature": feature,
                "old_value": old,
                "new_value": new,
                "old_number": np.nan,
                "new_number": np.nan,
                "effort": effort,
                "discount": discount,
                "cost": effort * discount,
                "target_proba": 1.0 if t == len(order) else 0.0,
                "sequence_cost": total,
                "sequence_effort": 30.0,
                "gower_distance": 1.0,
                "length": len(order),
                "target_class": 1,
                "status": "ok",
            }
        )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def worked_explainer(worked_model, worked_X, worked_actions, worked_graph):
    return SequentialCounterfactualExplainer(
        worked_model,
        actions=worked_actions,
        feature_graph=worked_graph,
        population_size=60,
        n_generations=20,
        random_state=0,
    ).fit(worked_X)


@pytest.fixture(scope="module")
def worked_explained(worked_explainer, worked_X):
    return worked_explainer.explain(worked_X, return_states=True)


@pytest.mark.parametrize("order", list(WORKED_ORDERS), ids="-".join)
def test_worked_example_orders_replay_to_hand_costs(worked_explainer, worked_X, order):
    discounts, total = WORKED_ORDERS[order]
    replayed = replay(worked_explainer, worked_X, hand_frame(order, discounts, total))

    assert replayed["passed"].all(), replayed["problems"].tolist()
    steps = replayed[replayed["step"] > 0]
    np.testing.assert_allclose(steps["discount"], discounts)
    np.testing.assert_allclose(
        steps["cost"], [WORKED_ACTIONS[a][3] * g for a, g in zip(order, discounts)]
    )
    assert replayed["sequence_cost"].iloc[0] == pytest.approx(total)
    # only the final state (Developer, BSc, US) is accepted
    assert replayed["accepted"].tolist() == [False, False, False, True]
    assert replayed["final"].tolist() == [False, False, False, True]
    assert replayed[["job", "education", "location"]].iloc[-1].tolist() == [
        "Developer",
        "BSc",
        "US",
    ]


def test_worked_example_search_result_replays(worked_explainer, worked_X):
    explanations, states = worked_explainer.explain(worked_X, return_states=True)
    replayed = replay(worked_explainer, worked_X, explanations, states)

    assert replayed["passed"].all(), replayed["problems"].tolist()
    cheapest = replayed[(replayed["instance"] == 0) & (replayed["solution"] == 0)]
    assert cheapest["action"].dropna().tolist() == [
        "a2_education",
        "a3_location",
        "a1_job",
    ]
    np.testing.assert_allclose(cheapest["cost"].dropna(), [2.5, 15.0, 5.0])
    assert cheapest["sequence_cost"].iloc[0] == pytest.approx(22.5)
    # the accepted row: one row, step 0, already of the target class
    accepted = replayed[replayed["instance"] == 1]
    assert accepted["status"].tolist() == ["already_target"]
    assert accepted["step"].tolist() == [0]
    assert accepted["accepted"].all() and accepted["final"].all()


def test_worked_example_without_graph_costs_30(worked_model, worked_X, worked_actions):
    explainer = SequentialCounterfactualExplainer(
        worked_model, actions=worked_actions
    ).fit(worked_X)
    for order in WORKED_ORDERS:
        frame = hand_frame(order, [1.0, 1.0, 1.0], 30.0)
        replayed = replay(explainer, worked_X, frame)
        assert replayed["passed"].all(), replayed["problems"].tolist()
        assert replayed["sequence_cost"].iloc[0] == pytest.approx(30.0)


# ---------------------------------------------------------------------- #
# the output frame
# ---------------------------------------------------------------------- #
def test_columns_and_dtypes(worked_explainer, worked_X, worked_explained):
    explanations, _ = worked_explained
    replayed = replay(worked_explainer, worked_X, explanations)

    assert list(replayed.columns) == [*COLUMNS, "job", "education", "location"]
    assert replayed["solution"].dtype == "Int64"
    assert replayed["step"].dtype == "Int64"
    for column in ("repeated", "in_space", "in_direction", "precondition"):
        assert replayed[column].dtype == "boolean"
    for column in ("accepted", "final", "passed"):
        assert replayed[column].dtype == bool
    # the states keep the dtypes of X
    assert replayed["education"].dtype == worked_X["education"].dtype
    # step 0 carries no step: its checks are missing, not False
    start = replayed[replayed["step"] == 0]
    assert start["in_space"].isna().all() and start["action"].isna().all()


def test_empty_frame(worked_explainer, worked_X, worked_explained):
    explanations, _ = worked_explained
    replayed = replay(worked_explainer, worked_X, explanations.iloc[:0])
    assert replayed.empty
    assert list(replayed.columns) == [*COLUMNS, "job", "education", "location"]


# ---------------------------------------------------------------------- #
# tampering with the worked example (categories)
# ---------------------------------------------------------------------- #
def cheapest_rows(explanations):
    return explanations.index[
        (explanations["instance"] == 0) & (explanations["solution"] == 0)
    ]


def problems_of(replayed):
    return "; ".join(replayed["problems"])


def test_repeated_action_is_caught(worked_explainer, worked_X, worked_explained):
    explanations, _ = worked_explained
    rows = cheapest_rows(explanations)
    tampered = explanations.copy()
    # <a2, a3, a1> becomes <a2, a3, a2>
    tampered.loc[rows[2], ["action", "feature", "new_value"]] = [
        "a2_education",
        "education",
        "BSc",
    ]
    replayed = replay(worked_explainer, worked_X, tampered)

    assert replayed["repeated"].sum() == 1
    assert "action 'a2_education' repeated" in problems_of(replayed)
    # the final state misses the new job: the model does not accept it
    assert "not the target 1" in problems_of(replayed)
    assert not replayed["passed"].all()


def test_value_outside_the_space_is_caught(
    worked_explainer, worked_X, worked_explained
):
    explanations, _ = worked_explained
    tampered = explanations.copy()
    tampered.loc[cheapest_rows(explanations)[0], "new_value"] = "PhD"
    replayed = replay(worked_explainer, worked_X, tampered)

    assert replayed["in_space"].sum() == replayed["step"].gt(0).sum() - 1
    assert "new value 'PhD' outside the value space" in problems_of(replayed)


def test_wrong_discount_and_cost_are_caught(
    worked_explainer, worked_X, worked_explained
):
    explanations, _ = worked_explained
    first = cheapest_rows(explanations)[0]
    tampered = explanations.copy()
    tampered.loc[first, "cost"] = 5.0  # the effort, undiscounted
    assert "cost: reported 5, replayed effort x discount 2.5" in problems_of(
        replay(worked_explainer, worked_X, tampered)
    )
    tampered.loc[first, "discount"] = 1.0  # consistent, yet not the graph's
    problems = problems_of(replay(worked_explainer, worked_X, tampered))
    assert "discount: reported 1, replayed 0.5" in problems
    assert "cost: reported 5 is not" not in problems


def test_wrong_sequence_cost_is_caught(worked_explainer, worked_X, worked_explained):
    explanations, _ = worked_explained
    tampered = explanations.copy()
    tampered.loc[cheapest_rows(explanations), "sequence_cost"] = 20.0
    problems = problems_of(replay(worked_explainer, worked_X, tampered))
    assert "sequence_cost: reported 20, replayed sum of costs 22.5" in problems


def test_wrong_status_is_caught(worked_explainer, worked_X, worked_explained):
    explanations, _ = worked_explained
    tampered = explanations.copy()
    tampered["status"] = tampered["status"].replace(
        {"already_target": "no_counterfactual"}
    )
    problems = problems_of(replay(worked_explainer, worked_X, tampered))
    assert "status 'no_counterfactual', but the model reaches the target 1" in problems


def test_a_short_sequence_is_caught(worked_explainer, worked_X, worked_explained):
    explanations, _ = worked_explained
    rows = cheapest_rows(explanations)
    tampered = explanations.drop(index=rows[2])
    tampered.loc[rows[:2], "length"] = 2
    problems = problems_of(replay(worked_explainer, worked_X, tampered))
    assert "the model predicts 0 after the last step, not the target 1" in problems


def test_wrong_state_is_caught(worked_explainer, worked_X, worked_explained):
    explanations, states = worked_explained
    tampered = states.copy()
    tampered.loc[tampered.index[1], "location"] = "US"
    problems = problems_of(replay(worked_explainer, worked_X, explanations, tampered))
    assert "state: location reported 'US', replayed 'Germany'" in problems
    missing = states.drop(index=states.index[1])
    problems = problems_of(replay(worked_explainer, worked_X, explanations, missing))
    assert "no reported state for this step" in problems


# ---------------------------------------------------------------------- #
# tampering with numbers: the credit problem (ranges, effects, conditions)
# ---------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def credit_explainer(credit_data, credit_model, credit_actions, credit_graph):
    X, _ = credit_data
    return SequentialCounterfactualExplainer(
        credit_model,
        actions=credit_actions,
        feature_graph=credit_graph,
        immutable_features=["region"],
        **SMALL,
    ).fit(X)


@pytest.fixture(scope="module")
def credit_explained(credit_explainer, credit_rejected):
    return credit_explainer.explain(credit_rejected, return_states=True)


def test_credit_sequences_replay(credit_explainer, credit_rejected, credit_explained):
    explanations, states = credit_explained
    replayed = replay(credit_explainer, credit_rejected, explanations, states)

    assert replayed["passed"].all(), replayed.loc[~replayed["passed"], "problems"]
    assert set(replayed["action"].dropna()) >= {"increase_income", "get_degree"}
    # consequences are replayed: a degree adds two years of age per level
    age_before = replayed.groupby(["instance", "solution"])["age"].shift()
    degree = replayed["action"] == "get_degree"
    levels = {"HS": 0, "BSc": 1, "MSc": 2}
    gained = replayed["new_value"].map(levels) - replayed["old_value"].map(levels)
    np.testing.assert_allclose(
        replayed.loc[degree, "age"], age_before[degree] + 2 * gained[degree]
    )


def numeric_step(explanations, action="increase_income"):
    rows = explanations.index[explanations["action"] == action]
    assert len(rows), f"no {action} step in the frame"
    return rows[0]


def test_wrong_new_value_is_caught(credit_explainer, credit_rejected, credit_explained):
    explanations, states = credit_explained
    row = numeric_step(explanations)
    tampered = explanations.copy()
    # still in the value space and the direction, but not what was reported
    tampered.loc[row, "new_number"] += 1.0
    replayed = replay(credit_explainer, credit_rejected, tampered, states)
    problems = problems_of(replayed)

    assert replayed["in_space"].all() and replayed["in_direction"].all()
    assert "effort: reported" in problems
    assert "state: income reported" in problems


def test_numeric_value_outside_the_space_is_caught(
    credit_explainer, credit_rejected, credit_explained
):
    explanations, _ = credit_explained
    row = numeric_step(explanations)
    tampered = explanations.copy()
    tampered.loc[row, "new_number"] = 250.0  # the range is (0, 200)
    replayed = replay(credit_explainer, credit_rejected, tampered)

    assert replayed["in_space"].sum() == replayed["step"].gt(0).sum() - 1
    assert "new value 250.0 outside the value space" in problems_of(replayed)


def test_against_the_direction_is_caught(
    credit_explainer, credit_rejected, credit_explained
):
    explanations, _ = credit_explained
    row = numeric_step(explanations)
    tampered = explanations.copy()
    tampered.loc[row, "new_number"] = tampered.loc[row, "old_number"] - 1.0
    replayed = replay(credit_explainer, credit_rejected, tampered)

    assert replayed["in_direction"].sum() == replayed["step"].gt(0).sum() - 1
    assert "against the direction 'increase'" in problems_of(replayed)


def test_off_grid_value_is_caught(credit_explainer, credit_rejected, credit_explained):
    # change_hours: the learned range of whole hours
    explanations, _ = credit_explained
    action = credit_explainer.actions_[-1]
    assert (action.name, action.step) == ("change_hours", 1.0)
    tampered = explanations.iloc[:1].copy()
    instance = tampered["instance"].iloc[0]
    hours = credit_rejected.loc[instance, "hours"]
    tampered[["action", "feature", "old_number"]] = ["change_hours", "hours", hours]
    tampered["old_value"] = str(hours)
    tampered["new_number"] = action.values[0] + 0.5
    replayed = replay(credit_explainer, credit_rejected, tampered)
    assert "outside the value space" in problems_of(replayed)


def test_failing_condition_is_caught(credit_explainer, credit_rejected):
    # increase_income needs age < 65
    old = credit_rejected.iloc[[0]].copy()
    old["age"] = 70
    frame = pd.DataFrame(
        {
            "instance": old.index,
            "solution": [0],
            "step": [1],
            "action": ["increase_income"],
            "feature": ["income"],
            "old_value": [str(old["income"].iloc[0])],
            "new_value": ["200"],
            "old_number": [old["income"].iloc[0]],
            "new_number": [200.0],
            "effort": [0.0],
            "discount": [1.0],
            "cost": [0.0],
            "target_proba": [np.nan],
            "sequence_cost": [0.0],
            "length": [1],
            "target_class": ["good"],
            "status": ["ok"],
        }
    )
    replayed = replay(credit_explainer, old, frame)
    step = replayed[replayed["step"] == 1]
    assert step["precondition"].tolist() == [False]
    assert step["postcondition"].tolist() == [True]
    assert "precondition fails" in step["problems"].iloc[0]


def test_array_input():
    """An array X: instances are row positions, features column positions."""
    X = np.array([[0.0, 10.0], [5.0, 2.0], [10.0, 0.0]])
    explainer = SequentialCounterfactualExplainer(
        Threshold(), actions=[Action("raise", 0, values=(0.0, 10.0))], **SMALL
    ).fit(X)
    explanations, states = explainer.explain(X, return_states=True)
    replayed = replay(explainer, X, explanations, states)

    assert replayed["passed"].all(), replayed["problems"].tolist()
    assert replayed["target_proba"].isna().all()  # no predict_proba
    assert list(replayed.columns[-2:]) == [0, 1]


def test_read_back_from_csv(tmp_path, credit_explainer, credit_rejected):
    explanations, states = credit_explainer.explain(
        credit_rejected.iloc[:2], return_states=True
    )
    explanations.to_csv(tmp_path / "e.csv", index=False)
    states.to_csv(tmp_path / "s.csv", index=False)
    replayed = replay(
        credit_explainer,
        credit_rejected,
        pd.read_csv(tmp_path / "e.csv"),
        pd.read_csv(tmp_path / "s.csv"),
    )
    assert replayed["passed"].all(), replayed["problems"].tolist()


# ---------------------------------------------------------------------- #
# errors
# ---------------------------------------------------------------------- #
def test_errors(worked_explainer, worked_X, worked_explained):
    explanations, _ = worked_explained
    with pytest.raises(TypeError, match="explanations must be the DataFrame"):
        replay(worked_explainer, worked_X, explanations.to_numpy())
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['new_number'\]"):
        replay(worked_explainer, worked_X, explanations.drop(columns="new_number"))
    with pytest.raises(ValueError, match="Instance 7 of the frame is not a row of X"):
        replay(worked_explainer, worked_X, explanations.assign(instance=7))
    with pytest.raises(ValueError, match="'fly' is not one of the explainer"):
        replay(worked_explainer, worked_X, explanations.assign(action="fly"))
    wrong = replay(worked_explainer, worked_X, explanations.assign(target_class="y"))
    assert "target_class: reported 'y', expected 1" in problems_of(wrong)
    gap = explanations.copy()
    gap.loc[cheapest_rows(explanations)[1], "step"] = 5
    with pytest.raises(ValueError, match=r"the steps are \[1, 3, 5\]"):
        replay(worked_explainer, worked_X, gap)
    mixed = explanations.copy()
    mixed.loc[cheapest_rows(explanations)[0], "status"] = "no_counterfactual"
    with pytest.raises(ValueError, match="has sequences and the statuses"):
        replay(worked_explainer, worked_X, mixed)
    with pytest.raises(ValueError, match="feature names"):
        replay(worked_explainer, worked_X.rename(columns={"job": "work"}), explanations)
    with pytest.raises(TypeError, match="states must be the DataFrame"):
        replay(worked_explainer, worked_X, explanations, states=[])


class Threshold:
    """A fitted duck-typed classifier: class 1 where the first column >= 5."""

    classes_ = np.array([0, 1])

    def __sklearn_is_fitted__(self):
        return True

    def predict(self, X):
        return (np.asarray(X)[:, 0].astype(float) >= 5).astype(int)


def test_a_feature_named_like_a_column():
    X = pd.DataFrame({"cost": [1.0, 7.0], "job": ["Seller", "Developer"]})
    explainer = SequentialCounterfactualExplainer(
        Threshold(), actions=[Action("a", "cost")]
    ).fit(X)
    frame = pd.DataFrame(columns=["instance", "status", *COLUMNS])
    frame = frame.assign(old_number=[], new_number=[], length=[], target_class=[])
    with pytest.raises(ValueError, match=r"features \['cost'\] of X"):
        replay(explainer, X, frame)


def test_duplicated_index(worked_explainer, worked_X, worked_explained):
    explanations, _ = worked_explained
    X = worked_X.set_axis([0, 0])
    with pytest.raises(ValueError, match="labels several rows of X"):
        replay(worked_explainer, X, explanations)


def test_not_fitted():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        replay(SequentialCounterfactualExplainer(), pd.DataFrame(), pd.DataFrame())


# ---------------------------------------------------------------------- #
# what to reach: sets of classes, "opposite", a margin, a regressor's range
# ---------------------------------------------------------------------- #
class Bands:
    """Three classes by bands of x: "low" below 3, "high" above 7, else "mid"."""

    classes_ = np.array(["high", "low", "mid"])

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        x = np.asarray(X["x"], dtype=float)
        logits = np.column_stack([x - 7.0, 3.0 - x, np.zeros_like(x)])
        exp = np.exp(logits - logits.max(axis=1, keepdims=True))
        return exp / exp.sum(axis=1, keepdims=True)


BANDS_X = pd.DataFrame({"x": [1.0, 5.0, 9.0, 0.0, 10.0]})


@pytest.mark.parametrize(
    ("target", "names"),
    [
        ("opposite", {"not low", "not mid", "not high"}),
        (["high", "low"], {"high or low"}),
        ("high", {"high"}),
    ],
)
def test_class_targets(target, names):
    explainer = SequentialCounterfactualExplainer(
        Bands(),
        actions=[Action("move", "x", values=(0.0, 10.0))],
        target_class=target,
        **SMALL,
    ).fit(BANDS_X)
    rows = BANDS_X.iloc[:3]
    explanations, states = explainer.explain(rows, return_states=True)
    replayed = replay(explainer, rows, explanations, states)

    assert replayed["passed"].all(), replayed["problems"].tolist()
    assert set(replayed["target_class"]) == names
    # the probability of the acceptable classes together
    final = replayed[replayed["final"] & (replayed["status"] == "ok")]
    assert (final["target_proba"] > 1 / 3).all()
    wrong = explanations.assign(target_class="low")
    if target != "opposite":
        assert not replay(explainer, rows, wrong)["passed"].all()


def test_a_margin_over_the_decision():
    explainer = SequentialCounterfactualExplainer(
        Bands(),
        actions=[Action("move", "x", values=(0.0, 10.0))],
        target_class="high",
        min_target_proba=0.9,
        **SMALL,
    ).fit(BANDS_X)
    rows = BANDS_X.iloc[[1, 2]]  # x = 9 is "high" with less than 0.9
    explanations = explainer.explain(rows)
    replayed = replay(explainer, rows, explanations)

    assert replayed["passed"].all(), replayed["problems"].tolist()
    assert (replayed.loc[replayed["final"], "target_proba"] >= 0.9).all()
    assert (replayed["predicted"].iloc[[0, -1]] == "high").tolist() == [False, True]


class Double:
    """A fitted duck-typed regressor: twice x."""

    def __sklearn_is_fitted__(self):
        return True

    def predict(self, X):
        return 2.0 * np.asarray(X["x"], dtype=float)


def test_a_regressor_range():
    explainer = SequentialCounterfactualExplainer(
        Double(),
        actions=[Action("move", "x", values=(0.0, 10.0))],
        target_range=(12.0, 16.0),
        target_margin=0.5,
        **SMALL,
    ).fit(BANDS_X)
    explanations, states = explainer.explain(BANDS_X, return_states=True)
    replayed = replay(explainer, BANDS_X, explanations, states)

    assert replayed["passed"].all(), replayed["problems"].tolist()
    assert set(replayed["target_class"]) == {"[12, 16]"}
    final = replayed.loc[replayed["final"] & (replayed["status"] == "ok")]
    assert final["predicted"].between(12.5, 15.5).all()
    assert replayed["target_proba"].isna().all()
    tampered = explanations.copy()
    tampered.loc[tampered["status"] == "ok", "prediction"] += 1.0
    assert "prediction: reported" in problems_of(replay(explainer, BANDS_X, tampered))


def test_a_row_that_failed_is_not_asked_again():
    def cost(b, a):
        if (b["x"] == 0.0).any():
            raise RuntimeError("no cost from zero")
        return np.abs(a["x"] - b["x"])

    explainer = SequentialCounterfactualExplainer(
        Bands(),
        actions=[Action("move", "x", values=(0.0, 10.0), cost=cost)],
        target_class="high",
        **SMALL,
    ).fit(BANDS_X)
    rows = BANDS_X.iloc[[1, 3]]
    with pytest.warns(UserWarning):
        explanations = explainer.explain(rows)
    assert explanations["status"].tolist()[-1] == "error"
    replayed = replay(explainer, rows, explanations)

    assert replayed["passed"].all(), replayed["problems"].tolist()
    error = replayed[replayed["status"] == "error"]
    assert error["predicted"].isna().all() and not error["accepted"].any()


# ---------------------------------------------------------------------- #
# replay knows every kind the search knows
# ---------------------------------------------------------------------- #
def _kinds(module, suffix):
    """The classes of ``module`` (defined there) whose names end in ``suffix``."""
    import inspect

    return {
        name
        for name, obj in inspect.getmembers(module, inspect.isclass)
        if name.endswith(suffix) and obj.__module__ == module.__name__
    }


def test_replay_derives_every_kind_of_value_space_and_target_of_the_search():
    from types import SimpleNamespace

    from sklearn_cscf import Action, _spaces
    from sklearn_cscf._compiled_actions import CompiledAction
    from sklearn_cscf._engine._targets import make_target
    from sklearn_cscf._replay._spaces import SPACE_KINDS, value_space
    from sklearn_cscf._replay._verdict import TARGET_KINDS, target_kind
    from sklearn_cscf._schema import FeatureSchema

    # both sides list the same kinds: a kind added to the search alone fails
    assert (
        _kinds(_spaces, "Space")
        == set(SPACE_KINDS)
        == {
            "RangeSpace",
            "DiscreteSpace",
        }
    )
    from sklearn_cscf._engine import _targets

    assert (
        _kinds(_targets, "Target")
        == set(TARGET_KINDS)
        == {
            "ClassTarget",
            "RangeTarget",
        }
    )
    # and each kind the search compiles an action to is replayed by its own
    X = pd.DataFrame({"income": [0.0, 50.0], "job": ["none", "clerk"]})
    schema = FeatureSchema(X)
    defined = [
        Action("learned", "income"),
        Action("range", "income", values=(0, 80)),
        Action("listed", "income", values=[10, 20]),
        Action("category", "job", values=["none", "clerk", "boss"]),
    ]
    seen = set()
    for action in defined:
        compiled = CompiledAction(action, schema)
        kind = type(compiled.space).__name__
        categorical = bool(schema.is_categorical[compiled.feature])
        replayed = value_space(compiled.resolved(), categorical)
        assert type(replayed) is SPACE_KINDS[kind], action.name
        seen.add(kind)
    assert seen == set(SPACE_KINDS)
    for classes, params in [
        (np.array([0, 1]), {}),
        (None, {"target_range": (0, 1)}),
    ]:
        kind = type(make_target(classes, **params)).__name__
        assert target_kind(SimpleNamespace(classes=classes)) == kind


# ---------------------------------------------------------------------- #
# issue 23: min_target_proba, as the explainer compares it
# ---------------------------------------------------------------------- #
class NearlyCertain:
    """P(1) = ``high`` once income passes 80 (0.2 below); by default
    0.99999999995: 1.0 at the explainer's 10 decimals, a hair below it
    unrounded."""

    classes_ = np.array([0, 1])

    def __init__(self, high=0.99999999995):
        self.high = high

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        income = np.asarray(X["income"], dtype=float)
        p = np.where(income > 80, self.high, 0.2)
        return np.column_stack([1 - p, p])

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


def _nearly_certain(min_target_proba, high=0.99999999995):
    X = pd.DataFrame({"income": np.linspace(0, 100, 60)})
    explainer = SequentialCounterfactualExplainer(
        NearlyCertain(high),
        actions=[Action("earn", "income", values=(0.0, 100.0), direction="increase")],
        min_target_proba=min_target_proba,
        population_size=20,
        n_generations=5,
        random_state=0,
    ).fit(X)
    return explainer, X.iloc[:3]


def test_a_plan_reported_ok_at_min_target_proba_one_replays():
    explainer, rows = _nearly_certain(1.0)
    frame = explainer.explain(rows)
    assert (frame["status"] == "ok").all()
    replayed = replay(explainer, rows, frame)
    assert replayed["problems"].map(len).eq(0).all(), problems_of(replayed)


def test_replay_says_the_threshold_when_the_class_alone_is_reached():
    explainer, rows = _nearly_certain(0.6, high=0.7)
    frame = explainer.explain(rows)
    assert (frame["status"] == "ok").all()
    explainer.min_target_proba = 0.8  # replayed against a higher threshold
    problems = problems_of(replay(explainer, rows, frame))
    assert (
        "the model predicts 1 (target_proba 0.7) after the last step, not the "
        "target 1 with target_proba >= 0.8 (min_target_proba)"
    ) in problems


def test_replay_rounds_probabilities_as_the_explainer_does():
    from sklearn_cscf._engine._model import PROBA_DECIMALS as explainer_decimals
    from sklearn_cscf._replay._verdict import PROBA_DECIMALS

    assert PROBA_DECIMALS == explainer_decimals

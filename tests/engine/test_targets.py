"""What must be reached (issue 10): a set of classes on a three-class data set,
a margin over the decision, and a range of a regressor's output."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _line import line_actions
from sklearn.datasets import load_diabetes, load_iris
from sklearn.linear_model import LogisticRegression, Ridge

from sklearn_cscf import Action, SequentialCounterfactualExplainer

SMALL = {"population_size": 40, "n_generations": 10, "random_state": 0}


def final_states(frame, states):
    """The last state of every reported sequence, in the frame's order."""
    ok = frame[frame["status"] == "ok"]
    keys = ok.groupby(["instance", "solution"], sort=False)["length"].first()
    keys = keys.reset_index()
    merged = keys.merge(
        states,
        left_on=["instance", "solution", "length"],
        right_on=["instance", "solution", "step"],
    )
    return merged[list(states.columns[3:])]


# ---------------------------------------------------------------------- #
# three classes
# ---------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def iris():
    data = load_iris(as_frame=True)
    X, y = data.data, data.target
    model = LogisticRegression(max_iter=2000).fit(X, y)
    actions = [
        Action("grow_petals", "petal length (cm)", direction="increase"),
        Action("widen_petals", "petal width (cm)", direction="increase"),
        Action("shrink_sepals", "sepal width (cm)", direction="decrease"),
    ]
    return X, model, actions


def test_a_set_of_classes_is_reached_by_any_of_them(iris):
    X, model, actions = iris
    explainer = SequentialCounterfactualExplainer(
        model, actions=actions, target_class=[1, 2], **SMALL
    ).fit(X)
    setosa = X[model.predict(X) == 0].iloc[:4]
    others = X[model.predict(X) != 0].iloc[:2]
    frame, states = explainer.explain(pd.concat([setosa, others]), return_states=True)
    status = frame.groupby("instance", sort=False)["status"].first()
    assert (status.loc[setosa.index] == "ok").all()
    assert (status.loc[others.index] == "already_target").all()
    assert set(frame["target_class"]) == {"1 or 2"}
    finals = final_states(frame, states)
    assert np.isin(model.predict(finals), [1, 2]).all()
    # the reported probability is that of the acceptable classes together
    ok = frame[frame["status"] == "ok"]
    last = ok.groupby(["instance", "solution"], sort=False)["target_proba"].last()
    np.testing.assert_allclose(
        last.to_numpy(), model.predict_proba(finals)[:, 1:].sum(axis=1), atol=1e-9
    )


def test_opposite_on_three_classes_is_any_other_class(iris):
    X, model, actions = iris
    explainer = SequentialCounterfactualExplainer(
        model, actions=actions, target_class="opposite", **SMALL
    ).fit(X)
    rows = pd.concat([X[model.predict(X) == c].iloc[:2] for c in (0, 1)])
    frame, states = explainer.explain(rows, return_states=True)
    now = pd.Series(model.predict(rows), index=rows.index)
    targets = frame.groupby("instance", sort=False)["target_class"].first()
    assert targets.tolist() == [f"not {c}" for c in now]
    ok = frame[frame["status"] == "ok"]
    assert len(ok)
    for (label, _), steps in ok.groupby(["instance", "solution"]):
        path = states[(states["instance"] == label) & (states["solution"] == _)]
        final = path[path["step"] == steps["length"].iloc[0]].iloc[:, 3:]
        assert model.predict(final)[0] != now[label]


# ---------------------------------------------------------------------- #
# a margin
# ---------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def line(line_data, logistic):
    return line_data[0], logistic, line_actions()


def test_a_margin_is_reached_by_every_plan(line):
    X, model, actions = line
    plain = SequentialCounterfactualExplainer(model, actions=actions, **SMALL).fit(X)
    robust = SequentialCounterfactualExplainer(
        model, actions=actions, min_target_proba=0.7, **SMALL
    ).fit(X)
    proba = model.predict_proba(X)[:, 1]
    rejected = X[proba < 0.5].iloc[:4]
    barely = X[(proba > 0.5) & (proba < 0.7)].iloc[:2]
    rows = pd.concat([rejected, barely])
    lasts = {}
    for name, explainer in (("plain", plain), ("robust", robust)):
        frame = explainer.explain(rows)
        ok = frame[frame["status"] == "ok"]
        lasts[name] = ok.groupby(["instance", "solution"])["target_proba"].last()
        status = frame.groupby("instance", sort=False)["status"].first()
        if name == "plain":
            assert (status.loc[barely.index] == "already_target").all()
        else:  # accepted, but not by the margin: they need recourse too
            assert (status.loc[barely.index] == "ok").all()
    assert (lasts["robust"] >= 0.7 - 1e-9).all()
    assert (lasts["plain"] < 0.7).any()


def test_a_margin_needs_probabilities(line):
    X, model, actions = line

    class PredictOnly:
        classes_ = np.array([0, 1])

        def __sklearn_is_fitted__(self):
            return True

        def predict(self, X):
            return model.predict(X)

    with pytest.raises(ValueError, match="min_target_proba needs a classifier"):
        SequentialCounterfactualExplainer(
            PredictOnly(), actions=actions, min_target_proba=0.7
        ).fit(X)


# ---------------------------------------------------------------------- #
# a regressor
# ---------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def diabetes():
    data = load_diabetes(as_frame=True)
    X, y = data.data, data.target
    model = Ridge(alpha=0.1).fit(X, y)
    actions = [
        Action("change_bmi", "bmi", cost=lambda b, a: np.abs(a["bmi"] - b["bmi"])),
        Action("change_bp", "bp", cost=lambda b, a: 2 * np.abs(a["bp"] - b["bp"])),
        Action("change_s5", "s5", cost=lambda b, a: np.abs(a["s5"] - b["s5"])),
    ]
    return X, model, actions


@pytest.mark.parametrize("margin", [0.0, 10.0])
def test_a_regressor_reaches_a_range_of_its_output(diabetes, margin):
    X, model, actions = diabetes
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=actions,
        target_range=(200.0, np.inf),
        target_margin=margin,
        **SMALL,
    ).fit(X)
    assert explainer.classes_ is None and explainer.uses_predict_
    predicted = model.predict(X)
    low = X[predicted < 150].iloc[:4]
    high = X[predicted > 230].iloc[:1]
    frame, states = explainer.explain(pd.concat([low, high]), return_states=True)
    status = frame.groupby("instance", sort=False)["status"].first()
    assert (status.loc[low.index] == "ok").all()
    assert status.loc[high.index[0]] == "already_target"
    assert set(frame["target_class"]) == {"[200, inf]"}
    finals = final_states(frame, states)
    assert (model.predict(finals) >= 200.0 + margin - 1e-9).all()
    # the prediction after each step, as the model gives it
    ok = frame[frame["status"] == "ok"]
    assert ok["target_proba"].isna().all()
    after = states[states["step"] > 0].iloc[:, 3:]
    np.testing.assert_allclose(
        np.sort(ok["prediction"].to_numpy()),
        np.sort(model.predict(after)),
        rtol=1e-9,
    )


def test_a_regressor_giving_tiny_outputs_keeps_their_sign(diabetes):
    # outputs near the smallest float are kept, not turned into NaN; None is
    # an open end of the range
    X, _, actions = diabetes
    model = Ridge().fit(X, X["bmi"] * 1e-300)
    rows = X[model.predict(X) < 0].iloc[:2]
    explainer = SequentialCounterfactualExplainer(
        model, actions=actions, target_range=(0.0, None), **SMALL
    ).fit(X)
    frame = explainer.explain(rows)
    assert set(frame["target_class"]) == {"[0, inf]"}
    status = frame.groupby("instance", sort=False)["status"].first()
    assert (status == "ok").all()
    ok = frame[frame["status"] == "ok"]
    last = ok.groupby(["instance", "solution"])["prediction"].last()
    assert (last >= 0).all() and np.isfinite(last).all()


def test_a_prediction_on_the_bound_reaches_the_range(diabetes):
    # the model's own number decides, not its rounding to 12 digits
    X, model, actions = diabetes
    rows = X.iloc[np.argsort(model.predict(X))[[100, 200, 300]]]
    bound = float(model.predict(rows.iloc[[1]])[0])
    assert float(f"{bound:.12g}") != bound  # rounding would move it
    explainer = SequentialCounterfactualExplainer(
        model, actions=actions, target_range=(bound, None), **SMALL
    ).fit(X)
    details = explainer.explain(rows, return_details=True)[1]
    reached = model.predict(rows) >= bound
    assert reached[1]
    status = details["status"].to_numpy()
    assert (status[reached] == "already_target").all()
    assert (status[~reached] != "already_target").all()


def test_rows_all_in_the_range_warn_about_the_range(diabetes):
    X, model, actions = diabetes
    rows = X[model.predict(X) > 200].iloc[:2]
    explainer = SequentialCounterfactualExplainer(
        model, actions=actions, target_range=(200.0, None), **SMALL
    ).fit(X)
    with pytest.warns(UserWarning, match=r"predicted in the target range \[200, inf\]"):
        explainer.explain(rows)


def test_target_range_is_for_regressors_and_checked(diabetes, line):
    X, model, actions = diabetes
    with pytest.raises(TypeError, match="give the output range to reach"):
        SequentialCounterfactualExplainer(model, actions=actions).fit(X)
    with pytest.raises(ValueError, match="low < high"):
        SequentialCounterfactualExplainer(
            model, actions=actions, target_range=(5, 1)
        ).fit(X)
    with pytest.raises(ValueError, match="no room"):
        SequentialCounterfactualExplainer(
            model, actions=actions, target_range=(0, 1), target_margin=0.5
        ).fit(X)
    Xl, classifier, line_actions = line
    with pytest.raises(ValueError, match="classifier"):
        SequentialCounterfactualExplainer(
            classifier, actions=line_actions, target_range=(0, 1)
        ).fit(Xl)


# ---------------------------------------------------------------------- #
# plausibility
# ---------------------------------------------------------------------- #
def test_plausibility_is_the_distance_to_accepted_real_rows(line):
    X, model, actions = line
    explainer = SequentialCounterfactualExplainer(
        model, actions=actions, plausibility=3, **SMALL
    ).fit(X)
    rows = X[model.predict(X) == 0].iloc[:3]
    frame, states = explainer.explain(rows, return_states=True)
    assert (
        "plausibility"
        not in SequentialCounterfactualExplainer(model, actions=actions, **SMALL)
        .fit(X)
        .explain(rows)
        .columns
    )
    ok = frame[frame["status"] == "ok"]
    reported = ok.groupby(["instance", "solution"], sort=False)["plausibility"].first()
    finals = final_states(frame, states).to_numpy(dtype=float)
    accepted = X[model.predict(X) == 1].to_numpy(dtype=float)  # < 1000 rows
    span = X.max().to_numpy() - X.min().to_numpy()
    for final, value in zip(finals, reported):
        gower = (np.abs(accepted - final) / span).mean(axis=1)
        assert value == pytest.approx(np.sort(gower)[:3].mean(), rel=1e-9)
    assert ((reported >= 0) & (reported <= 1)).all()


def test_training_rows_are_kept_only_with_plausibility(line):
    X, model, actions = line
    plain = SequentialCounterfactualExplainer(model, actions=actions, **SMALL).fit(X)
    assert plain._fitted.reference is None  # a pickle of it holds no training rows
    rows = X[model.predict(X) == 0].iloc[:1]
    with pytest.raises(ValueError, match="plausibility was turned on after fit"):
        plain.set_params(plausibility=True).explain(rows)
    assert "plausibility" in plain.fit(X).explain(rows).columns


@pytest.mark.slow  # runs an example script (pytest -m slow; a step of .ci/run)
def test_the_beyond_the_paper_example_runs(tmp_path):
    example = Path(__file__).resolve().parents[2] / "examples" / "beyond_the_paper.py"
    completed = subprocess.run(
        [
            sys.executable,
            str(example),
            "--n-instances",
            "2",
            "--population-size",
            "40",
            "--generations",
            "8",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    for setting in ("default", "plausibility", "margin 0.6", "both"):
        assert setting in out
    assert "most plausible" in out
    assert "Diabetes (a Ridge regressor)" in out and "prediction" in out
    assert "P(1 or 2)" in out


# ---------------------------------------------------------------------- #
# the targets themselves (sklearn_cscf._engine._targets)
# ---------------------------------------------------------------------- #
def test_make_target_codes_and_names_of_each_kind_of_target_class():
    from sklearn_cscf._engine._targets import ClassTarget, make_target

    classes = np.array(["a", "b", "c"])
    decision = np.array([0, 2, -1])
    one = make_target(classes, target_class="c")
    assert isinstance(one, ClassTarget)
    assert one.codes(decision).tolist() == [2, 2, 2]
    assert str(one.names[2]) == "c"
    several = make_target(classes, target_class=["a", "c"])
    assert several.codes(decision).tolist() == [6, 6, 6]
    assert several.accept[6].tolist() == [True, False, True]
    assert several.names[6] == "a or c"
    # "opposite": from each row's decision; unknown where the model failed
    opposite = make_target(classes, target_class="opposite")
    assert opposite.codes(decision).tolist() == [3, 5, -1]
    assert opposite.names[5] == "not c"
    assert opposite.accept[5].tolist() == [True, True, False]
    # a binary model: the positive class, or the other one
    binary = np.array([0, 1])
    assert make_target(binary).codes(np.array([0, 1])).tolist() == [1, 1]
    flip = make_target(binary, target_class="opposite")
    assert flip.codes(np.array([0, 1])).tolist() == [1, 0]
    assert flip.names.tolist() == [0, 1]  # labels, not text


def test_make_target_of_a_range_and_its_errors():
    from sklearn_cscf._engine._targets import RangeTarget, make_target

    target = make_target(None, target_range=(None, 10), target_margin=1.0)
    assert isinstance(target, RangeTarget)
    assert (target.low, target.high, target.margin) == (-np.inf, 10.0, 1.0)
    assert target.names.tolist() == ["[-inf, 10]"]
    assert target.codes(np.array([0, 0])).tolist() == [0, 0]
    with pytest.raises(ValueError, match="leaves no room"):
        make_target(None, target_range=(0, 1), target_margin=0.5)
    with pytest.raises(ValueError, match="low < high"):
        make_target(None, target_range=(2, 1))
    with pytest.raises(ValueError, match="two numbers"):
        make_target(None, target_range="high")
    with pytest.raises(ValueError, match=r"\['z'\] are not classes"):
        make_target(np.array(["a", "b"]), target_class=["a", "z"])


def test_every_row_already_accepted_warns_about_the_target(
    credit_compact_and_full, credit_data, credit_model
):
    explainer, _, _ = credit_compact_and_full
    X, _ = credit_data
    accepted = X[credit_model.predict(X) == "good"].iloc[:3]
    with pytest.warns(UserWarning, match=r"Every row .* target class 'good'"):
        explainer.explain(accepted)


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

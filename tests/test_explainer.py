"""Integration tests of SequentialCounterfactualExplainer (issue 2).

The worked example of METHOD.md, the tidy output frame and its states, the
reproducibility guarantees, one classifier call per generation, the action
constraints and value spaces (hypothesis), the scikit-learn API, estimator and
target handling, array input and input errors.
"""

import numpy as np
import pandas as pd
import pytest
from _line import RuleModel
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from sklearn_cscf import Action, SequentialCounterfactualExplainer
from sklearn_cscf._sklearn_compat import InvalidParameterError

REQUIRED_COLUMNS = [
    "instance",
    "solution",
    "step",
    "action",
    "feature",
    "old_value",
    "new_value",
    "effort",
    "discount",
    "cost",
    "target_proba",
    "sequence_cost",
    "sequence_effort",
    "gower_distance",
    "length",
    "status",
]
FEATURES = ["income", "debt", "age", "hours", "education", "housing", "region"]
NUMERIC = {"income", "debt", "age", "hours"}
EDUCATION = ["HS", "BSc", "MSc"]  # the order of the get_degree action
SMALL = {"population_size": 40, "n_generations": 12, "random_state": 0}


# ---------------------------------------------------------------------- #
# helpers
# ---------------------------------------------------------------------- #
def raw_value(step, which):
    """A step's old or new raw value: the number, or the label as text."""
    number = getattr(step, f"{which}_number")
    return getattr(step, f"{which}_value") if np.isnan(number) else number


class CountingClassifier:
    """Duck-typed fitted wrapper recording the rows of every predict_proba."""

    def __init__(self, model):
        self.model = model
        self.classes_ = model.classes_
        self.batch_sizes = []

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        self.batch_sizes.append(len(X))
        return self.model.predict_proba(X)


class PredictOnly:
    """Duck-typed fitted wrapper exposing ``predict`` but no ``predict_proba``."""

    def __init__(self, model):
        self.model = model
        self.classes_ = model.classes_

    def __sklearn_is_fitted__(self):
        return True

    def predict(self, X):
        return self.model.predict(X)


def credit_explainer(model, actions, graph=None, **params):
    params = {**SMALL, **params}
    params.setdefault("immutable_features", ["region"])
    return SequentialCounterfactualExplainer(
        model, actions=actions, feature_graph=graph, **params
    )


def solutions(frame):
    """The ``ok`` rows grouped by (instance, solution), steps in order."""
    ok = frame[frame["status"] == "ok"].sort_values(["instance", "solution", "step"])
    return ok.groupby(["instance", "solution"], sort=True)


def final_states(frame, states, columns):
    """The last state of every (instance, solution) of the frame."""
    ok = frame[frame["status"] == "ok"]
    last = ok.groupby(["instance", "solution"])["length"].first().reset_index()
    last = last.rename(columns={"length": "step"})
    merged = last.merge(states, on=["instance", "solution", "step"], how="left")
    assert len(merged) == len(last)
    return merged[columns]


def state_mapping(row, columns):
    """One state as the mapping user callables receive (1-D arrays)."""
    return {
        name: np.array([row[name]], dtype=float if name in NUMERIC else object)
        for name in columns
    }


def expected_discount(edges, affected, before):
    """Eq. 1-2 of METHOD.md, from the edges of the graph."""
    per_feature = []
    for h in affected:
        taus = [float(np.asarray(tau(before))[0]) for _, t, tau in edges if t == h]
        if taus:
            per_feature.append(np.mean(taus))
    return float(np.mean(per_feature)) if per_feature else 1.0


# ---------------------------------------------------------------------- #
# fixtures of this module (fitted once)
# ---------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def credit_fitted(credit_data, credit_model, credit_actions, credit_graph):
    X, _ = credit_data
    return credit_explainer(credit_model, credit_actions, credit_graph).fit(X)


@pytest.fixture(scope="module")
def credit_batch(credit_rejected, credit_accepted):
    """Rejected and accepted rows under a non-default (string) index."""
    batch = pd.concat([credit_rejected.iloc[:4], credit_accepted.iloc[:2]])
    batch.index = [f"person_{k}" for k in [5, 3, 0, 4, 2, 1]]
    return batch


@pytest.fixture(scope="module")
def credit_result(credit_fitted, credit_batch):
    return credit_fitted.explain(credit_batch, return_states=True)


# ---------------------------------------------------------------------- #
# the worked example of METHOD.md
# ---------------------------------------------------------------------- #
def test_worked_example_least_cost_sequence(
    worked_model, worked_X, worked_actions, worked_graph
):
    explainer = SequentialCounterfactualExplainer(
        worked_model,
        actions=worked_actions,
        feature_graph=worked_graph,
        population_size=40,
        n_generations=15,
        random_state=0,
    ).fit(worked_X)
    frame = explainer.explain(worked_X.iloc[:1])

    assert (frame["status"] == "ok").all()
    best = frame[frame["solution"] == 0].sort_values("step")
    assert best["action"].tolist() == ["a2_education", "a3_location", "a1_job"]
    assert best["feature"].tolist() == ["education", "location", "job"]
    np.testing.assert_allclose(best["effort"], [5.0, 15.0, 10.0])
    np.testing.assert_allclose(best["discount"], [0.5, 1.0, 0.5])
    np.testing.assert_allclose(best["cost"], [2.5, 15.0, 5.0])
    np.testing.assert_allclose(best["sequence_cost"], 22.5)
    np.testing.assert_allclose(best["sequence_effort"], 30.0)
    assert frame["sequence_cost"].min() == pytest.approx(22.5)
    # only the accepted state is classified as the target
    np.testing.assert_allclose(best["target_proba"], [0.0, 0.0, 1.0])


def test_worked_example_without_graph_costs_30(worked_model, worked_X, worked_actions):
    explainer = SequentialCounterfactualExplainer(
        worked_model,
        actions=worked_actions,
        feature_graph=None,
        population_size=40,
        n_generations=15,
        random_state=0,
    ).fit(worked_X)
    frame = explainer.explain(worked_X.iloc[:1])

    assert (frame["status"] == "ok").all()
    np.testing.assert_allclose(frame["discount"], 1.0)
    np.testing.assert_allclose(frame["sequence_cost"], 30.0)
    assert (frame["length"] == 3).all()
    for _, steps in solutions(frame):
        assert sorted(steps["action"]) == ["a1_job", "a2_education", "a3_location"]


@pytest.fixture
def worked_without_location(worked_model, worked_X, worked_actions):
    """The worked example without the action that moves to the US."""
    return SequentialCounterfactualExplainer(
        worked_model,
        actions=worked_actions[:2],
        population_size=30,
        n_generations=8,
        random_state=0,
    ).fit(worked_X)


@pytest.fixture
def three_statuses(make_worked_frame):
    return make_worked_frame(
        [
            ("Seller", "HS", "Germany"),  # needs the US: no counterfactual
            ("Seller", "HS", "US"),  # job and degree are enough
            ("Developer", "BSc", "US"),  # accepted already
        ],
        index=["in_germany", "in_us", "accepted"],
    )


def test_statuses_and_one_row_per_unexplained_instance(
    worked_without_location, three_statuses
):
    frame = worked_without_location.explain(three_statuses)

    assert set(frame["instance"]) == {"in_germany", "in_us", "accepted"}
    status = {label: set(s) for label, s in frame.groupby("instance")["status"]}
    assert status["in_germany"] == {"unreachable"}  # no action moves it
    assert status["in_us"] == {"ok"}
    assert status["accepted"] == {"already_target"}
    for label in ["in_germany", "accepted"]:
        rows = frame[frame["instance"] == label]
        assert len(rows) == 1
        assert rows[["solution", "step", "length"]].isna().all(axis=None)
    best = frame[(frame["instance"] == "in_us") & (frame["solution"] == 0)]
    assert sorted(best["action"]) == ["a1_job", "a2_education"]


def test_transform_and_score_on_all_statuses(worked_without_location, three_statuses):
    out = worked_without_location.transform(three_statuses)

    assert list(out.columns) == list(three_statuses.columns)
    assert out.index.equals(three_statuses.index)
    assert out.loc["in_germany"].isna().all()
    assert out.loc["accepted"].tolist() == ["Developer", "BSc", "US"]
    assert out.loc["in_us"].tolist() == ["Developer", "BSc", "US"]
    # one of the two rows needing recourse has a sequence
    assert worked_without_location.score(three_statuses) == pytest.approx(0.5)
    assert worked_without_location.score(three_statuses.loc[["accepted"]]) == 1.0
    assert worked_without_location.score(three_statuses.loc[["in_germany"]]) == 0.0


# ---------------------------------------------------------------------- #
# the output frame
# ---------------------------------------------------------------------- #
def test_output_has_required_columns(credit_result):
    frame, _ = credit_result
    assert set(REQUIRED_COLUMNS) <= set(frame.columns)
    assert not frame.columns.duplicated().any()


def test_every_row_appears_under_its_index_label(credit_result, credit_batch):
    frame, _ = credit_result
    assert set(frame["instance"]) == set(credit_batch.index)
    accepted = credit_batch.index[-2:]
    for label in accepted:
        rows = frame[frame["instance"] == label]
        assert rows["status"].tolist() == ["already_target"]
    rejected = frame[frame["instance"].isin(credit_batch.index[:4])]
    assert set(rejected["status"]) <= {"ok", "no_counterfactual"}
    assert (rejected["status"] == "ok").any()


def test_steps_costs_and_solution_numbering(credit_result):
    frame, _ = credit_result
    ok = frame[frame["status"] == "ok"]
    assert len(ok)
    np.testing.assert_allclose(ok["cost"], ok["effort"] * ok["discount"])
    assert (ok["effort"] >= 0).all()
    assert ((ok["discount"] >= 0) & (ok["discount"] <= 1)).all()
    for _, steps in solutions(frame):
        length = int(steps["length"].iloc[0])
        assert (steps["length"] == length).all()
        assert steps["step"].tolist() == list(range(1, length + 1))
        assert steps["sequence_cost"].nunique() == 1
        assert steps["sequence_cost"].iloc[0] == pytest.approx(steps["cost"].sum())
        assert steps["sequence_effort"].iloc[0] == pytest.approx(steps["effort"].sum())
        assert steps["gower_distance"].nunique() == 1
        # each action at most once per sequence
        assert steps["action"].is_unique
    for _, rows in ok.groupby("instance"):
        per_solution = rows.groupby("solution")
        numbers = sorted(per_solution.groups)
        assert numbers == list(range(len(numbers)))
        costs = per_solution["sequence_cost"].first().sort_index().to_numpy()
        assert np.all(np.diff(costs) >= 0)
        orders = rows.sort_values("step").groupby("solution")["action"].agg(tuple)
        assert orders.is_unique


def test_gower_distance_and_target_proba_match_states(
    credit_result, credit_fitted, credit_batch, credit_model
):
    frame, states = credit_result
    ok = frame[frame["status"] == "ok"]
    finals = final_states(frame, states, FEATURES)
    keys = ok.groupby(["instance", "solution"]).first().reset_index()
    ranges = credit_fitted.feature_ranges_
    for (_, key), (_, final) in zip(keys.iterrows(), finals.iterrows()):
        x0 = credit_batch.loc[key["instance"]]
        parts = [
            abs(float(final[f]) - float(x0[f])) / (ranges[f][1] - ranges[f][0])
            if f in NUMERIC
            else float(final[f] != x0[f])
            for f in FEATURES
        ]
        assert key["gower_distance"] == pytest.approx(np.mean(parts))
    proba = credit_model.predict_proba(finals)[:, 1]
    last = ok[ok["step"] == ok["length"]].sort_values(["instance", "solution"])
    np.testing.assert_allclose(last["target_proba"].to_numpy(), proba, atol=1e-12)
    assert (credit_model.predict(finals) == "good").all()


@pytest.mark.filterwarnings("ignore:Every row of X is already")
@pytest.mark.parametrize("index", ["default", "strings"])
def test_dtypes_do_not_depend_on_the_batch(
    credit_fitted, credit_rejected, credit_accepted, index
):
    accepted, rejected = credit_accepted, credit_rejected.iloc[:2]
    if index == "strings":
        accepted = accepted.set_axis([f"a{k}" for k in range(len(accepted))])
        rejected = rejected.set_axis([f"r{k}" for k in range(len(rejected))])
    only_accepted = credit_fitted.explain(accepted)
    with_ok = credit_fitted.explain(rejected)
    assert set(only_accepted["status"]) == {"already_target"}
    assert "ok" in set(with_ok["status"])
    pd.testing.assert_series_equal(only_accepted.dtypes, with_ok.dtypes)
    for name in ["solution", "step", "length"]:
        assert with_ok[name].dtype == "Int64"
        assert only_accepted[name].dtype == "Int64"


def test_return_states_follow_the_steps(
    credit_result, credit_batch, credit_model, credit_actions
):
    frame, states = credit_result
    affected = {a.name: set(a.affected_features) for a in credit_actions}
    assert list(states.columns[:3]) == ["instance", "solution", "step"]
    assert list(states.columns[3:]) == FEATURES
    n_checked = 0
    for (label, s), steps in solutions(frame):
        path = states[(states["instance"] == label) & (states["solution"] == s)]
        path = path.sort_values("step").reset_index(drop=True)
        length = int(steps["length"].iloc[0])
        assert path["step"].tolist() == list(range(length + 1))
        x0 = credit_batch.loc[label]
        for f in FEATURES:
            if f in NUMERIC:
                assert float(path.loc[0, f]) == pytest.approx(float(x0[f]))
            else:
                assert path.loc[0, f] == x0[f]
        for t, step in enumerate(steps.itertuples(), start=1):
            before, after = path.loc[t - 1], path.loc[t]
            assert before[step.feature] == raw_value(step, "old")
            assert after[step.feature] == raw_value(step, "new")
            changed = {f for f in FEATURES if before[f] != after[f]}
            assert changed <= affected[step.action]
        final = path.loc[[length], FEATURES]
        assert credit_model.predict(final)[0] == "good"
        n_checked += 1
    assert n_checked > 0


# ---------------------------------------------------------------------- #
# reproducibility
# ---------------------------------------------------------------------- #
def test_same_output_for_n_jobs_1_and_2(
    credit_data, credit_model, credit_actions, credit_graph, credit_rejected
):
    X, _ = credit_data
    rows = credit_rejected.iloc[:2]
    serial = credit_explainer(credit_model, credit_actions, credit_graph, n_jobs=1).fit(
        X
    )
    parallel = credit_explainer(
        credit_model, credit_actions, credit_graph, n_jobs=2
    ).fit(X)
    expected = serial.explain(rows)
    assert (expected["status"] == "ok").any()
    pd.testing.assert_frame_equal(parallel.explain(rows), expected)


def test_row_alone_equals_row_inside_a_batch(credit_fitted, credit_rejected):
    target = credit_rejected.index[2]
    others = list(credit_rejected.index[[0, 4]])

    def rows_of(batch):
        frame = credit_fitted.explain(credit_rejected.loc[batch])
        return frame[frame["instance"] == target].reset_index(drop=True)

    alone = rows_of([target])
    assert (alone["status"] == "ok").all()
    pd.testing.assert_frame_equal(rows_of([others[0], target, others[1]]), alone)
    pd.testing.assert_frame_equal(rows_of([*others, target]), alone)
    pd.testing.assert_frame_equal(rows_of([target]), alone)


# ---------------------------------------------------------------------- #
# classifier calls: one per generation for a whole block, never a state twice
# ---------------------------------------------------------------------- #
class RecordingClassifier(CountingClassifier):
    """Also keeps every row it was asked about."""

    def __init__(self, model):
        super().__init__(model)
        self.rows = []

    def predict_proba(self, X):
        self.rows.append(X.copy())
        return super().predict_proba(X)


@pytest.mark.parametrize("elite_fraction", [0.2, 0.02])
def test_one_classifier_call_per_generation_and_no_state_asked_twice(
    credit_data, credit_model, credit_actions, credit_rejected, elite_fraction
):
    X, _ = credit_data
    size, generations = 50, 9
    recorder = RecordingClassifier(credit_model)
    explainer = credit_explainer(
        recorder,
        credit_actions,
        population_size=size,
        n_generations=generations,
        elite_fraction=elite_fraction,
        refine=False,
    ).fit(X)
    recorder.batch_sizes.clear()
    recorder.rows.clear()
    frame, details = explainer.explain(credit_rejected.iloc[:1], return_details=True)
    assert (frame["status"] == "ok").all()

    calls = recorder.batch_sizes
    # which rows need recourse; at most one call per generation; the states
    # after every step of the reported sequences
    assert calls[0] == 1
    assert 1 + 1 + 1 <= len(calls) <= 1 + generations + 1
    assert calls[1] <= size  # the distinct states of the initial population
    asked = pd.concat(recorder.rows[1:], ignore_index=True)
    assert not asked.duplicated().any()  # remembered states are not asked again
    # fewer rows than population x generations: elites and repeated states
    assert len(asked) < size * generations
    assert details["n_model_rows"].tolist() == [len(asked)]
    assert details["n_model_calls"].tolist() == [len(calls) - 1]
    assert details["n_generations"].tolist() == [generations]


@pytest.mark.slow  # several seconds: CI's slow step runs it
@pytest.mark.parametrize("refine", [False, True])
def test_a_block_of_instances_shares_each_classifier_call(
    credit_data,
    credit_model,
    credit_actions,
    credit_rejected,
    credit_accepted,
    refine,
    monkeypatch,
):
    from sklearn_cscf._engine._refine import _fit

    # the block's schedule as it is without asking ahead: a row alone asks
    # ahead deeper than a row of a block (what a call asks ahead of need is
    # bounded per call), which the last lines check
    ahead = _fit.AHEAD_ROWS
    monkeypatch.setattr(_fit, "AHEAD_ROWS", 0)
    X, _ = credit_data
    generations = 5
    recorder = RecordingClassifier(credit_model)
    explainer = credit_explainer(
        recorder,
        credit_actions,
        population_size=30,
        n_generations=generations,
        refine=refine,
    ).fit(X)
    batch = pd.concat([credit_rejected.iloc[:4], credit_accepted.iloc[:1]])
    recorder.batch_sizes.clear()
    explainer.explain(batch)
    assert recorder.batch_sizes[0] == 5  # which rows need recourse
    together = len(recorder.batch_sizes)
    if not refine:
        # four instances in one block: the calls of one instance
        assert together <= 1 + generations + 1
    # each instance alone: the block's refinement runs in lock step, each
    # round one call for all of them, so the block needs about as many calls
    # as its instance that needs the most, not their sum
    alone = []
    for k in range(4):
        recorder.batch_sizes.clear()
        explainer.explain(batch.iloc[k : k + 1])
        alone.append(len(recorder.batch_sizes))
    assert together <= max(alone) + (max(alone) - 1 - generations) // 2
    if refine:
        assert together < sum(alone) / 2

    explainer.set_params(batch_size=1)  # four blocks of one instance
    recorder.batch_sizes.clear()
    explainer.explain(batch)
    assert len(recorder.batch_sizes) >= 1 + 4 * generations
    assert len(recorder.batch_sizes) > together

    if refine:
        # asking ahead: a row alone needs fewer calls, with the same answers
        frame = explainer.set_params(batch_size=64).explain(batch.iloc[1:2])
        monkeypatch.setattr(_fit, "AHEAD_ROWS", ahead)
        recorder.batch_sizes.clear()
        ahead_frame = explainer.explain(batch.iloc[1:2])
        assert len(recorder.batch_sizes) < alone[1]
        pd.testing.assert_frame_equal(ahead_frame, frame)


# ---------------------------------------------------------------------- #
# constraints and value spaces (hypothesis)
# ---------------------------------------------------------------------- #
LEVELS = ["low", "mid", "high"]


def low_x(X):
    return X["x"] < 3.0


def low_level(X):
    return np.asarray(X["level"], dtype=object) == "low"


def move(**params):
    return Action("move", "x", **params)


def switch(**params):
    return Action("switch", "level", values=LEVELS, **params)


# x = 5 and level = "mid"; the model accepts x < 3 (or level "low"). No value
# the action allows reaches it: "unreachable"; a value that does, but a
# constraint forbids: "no_counterfactual" (None), as the probes of
# reachability do not check constraints
@pytest.mark.parametrize(
    ("action", "rule", "status"),
    [
        (move(values=(0.0, 10.0), direction="increase"), low_x, "unreachable"),
        (move(values=(0.0, 10.0), direction="decrease"), low_x, "ok"),
        (move(values=(0.0, 10.0)), low_x, "ok"),
        (move(values=(4.0, 10.0)), low_x, "unreachable"),
        (move(values=[1.0, 2.0, 8.0], direction="increase"), low_x, "unreachable"),
        (move(values=[1.0, 2.0, 8.0], direction="decrease"), low_x, "ok"),
        (move(values=2.5), low_x, "ok"),
        (move(values=4.0), low_x, "unreachable"),
        (switch(direction="increase"), low_level, "unreachable"),
        (switch(direction="decrease"), low_level, "ok"),
        (move(values=(0.0, 10.0), precondition=lambda b: b["x"] > 6), low_x, None),
        (move(values=(0.0, 10.0), precondition=lambda b: b["x"] > 4), low_x, "ok"),
        (
            move(values=(0.0, 10.0), postcondition=lambda b, a: a["x"] >= 0.8 * b["x"]),
            low_x,
            None,
        ),
        (
            move(values=(0.0, 10.0), postcondition=lambda b, a: a["x"] >= 0.5 * b["x"]),
            low_x,
            "ok",
        ),
    ],
    ids=[
        "range-increase",
        "range-decrease",
        "range-any",
        "range-above-target",
        "list-increase",
        "list-decrease",
        "fixed-accepted",
        "fixed-rejected",
        "categories-increase",
        "categories-decrease",
        "precondition-false",
        "precondition-true",
        "postcondition-false",
        "postcondition-satisfiable",
    ],
)
def test_value_spaces_directions_and_constraints_bind(action, rule, status):
    X = pd.DataFrame({"x": [0.0, 5.0, 10.0], "level": ["low", "mid", "high"]})
    explainer = SequentialCounterfactualExplainer(
        RuleModel(rule), actions=[action], **SMALL
    ).fit(X)
    frame = explainer.explain(X.iloc[[1]])  # x = 5, level = "mid"

    assert frame["status"].unique().tolist() == [status or "no_counterfactual"]
    if status == "ok":
        for step in frame.itertuples():
            if action.feature == "x":
                assert raw_value(step, "new") < 3.0
                if action.direction == "decrease":
                    assert raw_value(step, "new") <= raw_value(step, "old")
                if isinstance(action.values, list):
                    assert raw_value(step, "new") in action.values
                before = {"x": np.array([raw_value(step, "old")])}
                after = {"x": np.array([raw_value(step, "new")])}
                if action.precondition is not None:
                    assert action.precondition(before).all()
                if action.postcondition is not None:
                    assert action.postcondition(before, after).all()
            else:
                assert raw_value(step, "new") == "low"


instances = st.fixed_dictionaries(
    {
        "income": st.floats(10.0, 150.0),
        "debt": st.floats(0.0, 80.0),
        "age": st.integers(18, 70),
        "hours": st.integers(10, 60),
        "education": st.sampled_from(EDUCATION),
        "housing": st.sampled_from(["rent", "own", "free"]),
        "region": st.sampled_from(["north", "south", "east"]),
    }
)


def check_value_space(name, old, new, hours_range):
    if name == "increase_income":
        assert 0.0 <= new <= 200.0 and new >= old
    elif name == "reduce_debt":
        assert 0.0 <= new <= 100.0 and new <= old
    elif name == "get_degree":
        assert EDUCATION.index(new) > EDUCATION.index(old)
    elif name == "buy_house":
        assert new == "own"
    elif name == "change_hours":
        low, high = hours_range
        assert low <= new <= high and float(new).is_integer()
    else:  # pragma: no cover - every action is listed above
        raise AssertionError(name)


@pytest.mark.slow  # several seconds: CI's slow step runs it
@settings(max_examples=20, deadline=None)
@given(instance=instances, seed=st.integers(0, 10_000))
def test_returned_steps_respect_actions(
    instance,
    seed,
    credit_data,
    credit_model,
    credit_actions,
    credit_edges,
    credit_graph,
):
    X, _ = credit_data
    row = pd.DataFrame([instance])[FEATURES]
    explainer = credit_explainer(
        credit_model,
        credit_actions,
        credit_graph,
        population_size=30,
        n_generations=8,
        random_state=seed,
    ).fit(X)
    frame, states = explainer.explain(row, return_states=True)

    rejected = credit_model.predict(row)[0] == "bad"
    statuses = set(frame["status"])
    if not rejected:
        assert statuses == {"already_target"}
        return
    assert statuses in ({"ok"}, {"no_counterfactual"})
    actions = {a.name: a for a in credit_actions}
    hours_range = (X["hours"].min(), X["hours"].max())
    for (label, s), steps in solutions(frame):
        path = states[(states["instance"] == label) & (states["solution"] == s)]
        path = path.sort_values("step").reset_index(drop=True)
        for t, step in enumerate(steps.itertuples(), start=1):
            action = actions[step.action]
            before = state_mapping(path.loc[t - 1], FEATURES)
            after = state_mapping(path.loc[t], FEATURES)
            old, new = raw_value(step, "old"), raw_value(step, "new")
            assert before[step.feature][0] == old
            assert after[step.feature][0] == new
            check_value_space(action.name, old, new, hours_range)
            for f in set(FEATURES) - set(action.affected_features):
                assert before[f][0] == after[f][0]
            if action.precondition is not None:
                assert np.all(action.precondition(before))
            if action.postcondition is not None:
                assert np.all(action.postcondition(before, after))
            for other, effect in (action.effects or {}).items():
                direct = {**before, step.feature: after[step.feature]}
                assert after[other][0] == pytest.approx(effect(before, direct)[0])
            if action.cost is None:  # default: |delta| / range of the values
                effort = abs(new - old) / (hours_range[1] - hours_range[0])
            else:
                effort = float(np.asarray(action.cost(before, after)).ravel()[0])
            assert step.effort == pytest.approx(effort)
            assert step.discount == pytest.approx(
                expected_discount(credit_edges, action.affected_features, before)
            )
        final = path.loc[[len(path) - 1], FEATURES]
        assert credit_model.predict(final)[0] == "good"


# ---------------------------------------------------------------------- #
# transform, score, model selection, scikit-learn API
# ---------------------------------------------------------------------- #
def test_transform_is_the_least_cost_final_state(
    credit_fitted, credit_batch, credit_result
):
    out = credit_fitted.transform(credit_batch)
    frame, states = credit_result

    assert list(out.columns) == list(credit_batch.columns)
    assert out.index.equals(credit_batch.index)
    for label in credit_batch.index:
        status = frame.loc[frame["instance"] == label, "status"].iloc[0]
        if status == "already_target":
            expected = credit_batch.loc[label]
        elif status == "ok":
            length = frame.loc[
                (frame["instance"] == label) & (frame["solution"] == 0), "length"
            ].iloc[0]
            expected = states[
                (states["instance"] == label)
                & (states["solution"] == 0)
                & (states["step"] == length)
            ].iloc[0]
        else:
            assert out.loc[label].isna().all()
            continue
        for f in FEATURES:
            if f in NUMERIC:
                assert float(out.loc[label, f]) == pytest.approx(float(expected[f]))
            else:
                assert out.loc[label, f] == expected[f]


@pytest.mark.filterwarnings("ignore:Every row of X is already")
def test_score_is_the_share_found(
    credit_fitted, credit_batch, credit_result, credit_accepted
):
    frame, _ = credit_result
    status = frame.groupby("instance")["status"].first()
    needing = status[status != "already_target"]
    assert len(needing)
    expected = float((needing == "ok").mean())
    assert credit_fitted.score(credit_batch) == pytest.approx(expected)
    assert credit_fitted.score(credit_accepted) == 1.0


def test_grid_search_over_parameters(
    credit_data, credit_pipeline, credit_actions, credit_rejected, credit_accepted
):
    X, y = credit_data
    # both folds hold the same rows, so each sees every category and class
    block = pd.concat([credit_rejected.iloc[:3], credit_accepted.iloc[:3]])
    block_y = y[block.index]
    assert set(block_y) == {"bad", "good"}
    X_grid = pd.concat([block, block], ignore_index=True)
    y_grid = np.concatenate([block_y, block_y])
    explainer = credit_explainer(
        credit_pipeline, credit_actions, population_size=20, n_generations=4
    )
    grid = {"max_sequence_length": [1, None]}
    search = GridSearchCV(explainer, grid, cv=KFold(2)).fit(X_grid, y_grid)

    scores = search.cv_results_["mean_test_score"]
    assert len(scores) == 2
    assert np.all((scores >= 0) & (scores <= 1))
    assert search.best_params_ in list(search.cv_results_["params"])
    # the scores are the explainer's own score on the held-out fold
    params = search.cv_results_["params"][0]
    manual = clone(explainer).set_params(**params).fit(block, block_y)
    assert search.cv_results_["split0_test_score"][0] == pytest.approx(
        manual.score(block)
    )


def test_grid_search_keeps_a_frozen_model_fitted(
    credit_data, credit_pipeline, credit_actions, credit_rejected
):
    # cloning an explainer clones (unfits) its model; FrozenEstimator keeps the
    # fitted black box as it is, so GridSearchCV needs no y
    from sklearn.frozen import FrozenEstimator

    credit_pipeline.fit(*credit_data)
    coef = credit_pipeline[-1].coef_.copy()
    explainer = credit_explainer(
        FrozenEstimator(credit_pipeline),
        credit_actions,
        population_size=20,
        n_generations=4,
    )
    rows = pd.concat([credit_rejected.iloc[:4]] * 2, ignore_index=True)
    search = GridSearchCV(explainer, {"max_sequence_length": [1, 3]}, cv=KFold(2)).fit(
        rows
    )
    assert search.best_estimator_.estimator_.estimator is credit_pipeline
    np.testing.assert_array_equal(credit_pipeline[-1].coef_, coef)
    assert len(search.cv_results_["mean_test_score"]) == 2


def test_explain_flags_are_keyword_only(credit_fitted, credit_batch):
    # a flag by position would read as a row selection or a typo
    with pytest.raises(TypeError, match="positional"):
        credit_fitted.explain(credit_batch, True)
    with pytest.raises(TypeError, match="positional"):
        credit_fitted.explain(credit_batch, False, True)


def test_get_params_set_params_and_clone(
    worked_model, worked_X, worked_actions, worked_graph
):
    explainer = SequentialCounterfactualExplainer(
        worked_model,
        actions=worked_actions,
        feature_graph=worked_graph,
        population_size=30,
        n_generations=6,
        random_state=3,
    )
    params = explainer.get_params()
    for name in [
        "estimator",
        "actions",
        "feature_graph",
        "target_class",
        "immutable_features",
        "population_size",
        "n_generations",
        "mutant_fraction",
        "crossover_bias",
        "n_jobs",
        "random_state",
        "verbose",
    ]:
        assert name in params
    assert params["population_size"] == 30
    assert params["mutant_fraction"] == 0.2
    assert params["crossover_bias"] == 0.7
    assert explainer.set_params(n_generations=10) is explainer
    assert explainer.get_params()["n_generations"] == 10

    copy = clone(explainer)
    assert copy is not explainer
    assert copy.get_params()["n_generations"] == 10
    assert copy.get_params()["random_state"] == 3
    with pytest.raises(NotFittedError):
        copy.explain(worked_X)
    pd.testing.assert_frame_equal(
        copy.fit(worked_X).explain(worked_X), explainer.fit(worked_X).explain(worked_X)
    )


def test_fit_returns_self_and_sets_fitted_attributes(
    credit_fitted, credit_data, credit_model, credit_actions
):
    X, _ = credit_data
    explainer = credit_explainer(credit_model, credit_actions)
    assert explainer.fit(X) is explainer
    assert credit_fitted.n_features_in_ == X.shape[1]
    assert list(credit_fitted.feature_names_in_) == FEATURES
    assert credit_fitted.feature_kinds_["income"] == "numeric"
    assert credit_fitted.feature_kinds_["education"] == "categorical"
    assert credit_fitted.feature_ranges_["hours"] == (
        X["hours"].min(),
        X["hours"].max(),
    )
    assert [a.name for a in credit_fitted.actions_] == [a.name for a in credit_actions]


def test_default_actions_leave_immutable_features_alone(
    credit_data, credit_model, credit_rejected
):
    X, _ = credit_data
    explainer = SequentialCounterfactualExplainer(
        credit_model, immutable_features=["region", "age"], **SMALL
    ).fit(X)
    mutable = [f for f in FEATURES if f not in {"region", "age"}]
    assert sorted(a.feature for a in explainer.actions_) == sorted(mutable)
    frame = explainer.explain(credit_rejected.iloc[:2])

    ok = frame[frame["status"] == "ok"]
    assert len(ok)
    assert set(ok["feature"]) <= set(mutable)
    for step in ok.itertuples():
        if step.feature in NUMERIC:  # the observed range
            low, high = X[step.feature].min(), X[step.feature].max()
            assert low <= raw_value(step, "new") <= high
        else:  # an observed category
            assert raw_value(step, "new") in set(X[step.feature])


def test_resolved_actions_reproduce_the_learned_ones(
    credit_data, credit_model, credit_rejected
):
    X, _ = credit_data
    learned = SequentialCounterfactualExplainer(
        credit_model, immutable_features=["region"], **SMALL
    ).fit(X)
    hours = next(a for a in learned.actions_ if a.feature == "hours")
    # an integer column: its observed range, stepped in whole hours
    assert hours.values == (X["hours"].min(), X["hours"].max())
    assert hours.step == 1.0
    education = next(a for a in learned.actions_ if a.feature == "education")
    assert set(education.values) == set(X["education"])
    explicit = SequentialCounterfactualExplainer(
        credit_model, actions=learned.actions_, **SMALL
    ).fit(X)
    rows = credit_rejected.iloc[:2]
    pd.testing.assert_frame_equal(learned.explain(rows), explicit.explain(rows))


def test_max_sequence_length_and_early_stopping(
    worked_model, worked_X, worked_actions, worked_graph
):
    params = {"actions": worked_actions, "feature_graph": worked_graph}
    # the worked example needs all three actions
    short = SequentialCounterfactualExplainer(
        worked_model, max_sequence_length=2, **params, **SMALL
    ).fit(worked_X)
    assert short.explain(worked_X.iloc[:1])["status"].tolist() == ["no_counterfactual"]

    counter = CountingClassifier(worked_model)
    early = SequentialCounterfactualExplainer(
        counter,
        n_iter_no_change=3,
        population_size=40,
        n_generations=60,
        random_state=0,
        **params,
    ).fit(worked_X)
    frame = early.explain(worked_X.iloc[:1])
    assert len(counter.batch_sizes) < 1 + 60 + 1
    np.testing.assert_allclose(frame["sequence_cost"], 22.5)


# ---------------------------------------------------------------------- #
# the estimator
# ---------------------------------------------------------------------- #
def test_estimator_none_fits_a_default_classifier(
    credit_data, credit_actions, credit_rejected
):
    X, y = credit_data
    explainer = credit_explainer(
        None, credit_actions, population_size=30, n_generations=6
    )
    # the default boosting model is slow on small batches with many threads
    with threadpool_limits(limits=1, user_api="openmp"):
        explainer.fit(X, y)
        rows = credit_rejected[explainer.estimator_.predict(credit_rejected) == "bad"]
        frame, states = explainer.explain(rows.iloc[:2], return_states=True)
        finals = final_states(frame, states, FEATURES)
        predicted = explainer.estimator_.predict(finals)
    check_is_fitted(explainer.estimator_)
    assert explainer.classes_.tolist() == ["bad", "good"]
    assert (frame["status"] == "ok").any()
    assert (predicted == "good").all()


@pytest.mark.parametrize("estimator", [None, "unfitted"])
def test_missing_y_raises(estimator, credit_data, credit_pipeline, credit_actions):
    X, _ = credit_data
    if estimator == "unfitted":
        estimator = credit_pipeline
    explainer = credit_explainer(estimator, credit_actions)
    with pytest.raises(ValueError, match="y"):
        explainer.fit(X)


def test_unfitted_estimator_is_cloned_and_fitted(
    credit_data, credit_pipeline, credit_actions, credit_model
):
    X, y = credit_data
    pipeline = credit_pipeline
    explainer = credit_explainer(pipeline, credit_actions).fit(X, y)
    assert explainer.estimator_ is not pipeline
    with pytest.raises(NotFittedError):
        check_is_fitted(pipeline)
    np.testing.assert_array_equal(
        explainer.estimator_.predict(X), credit_model.predict(X)
    )


def test_fitted_estimator_and_duck_typed_wrapper_are_used_as_is(
    credit_fitted, credit_model, worked_model, worked_X, worked_actions
):
    assert credit_fitted.estimator_ is credit_model
    assert not hasattr(worked_model, "get_params")
    explainer = SequentialCounterfactualExplainer(
        worked_model, actions=worked_actions, **SMALL
    ).fit(worked_X)
    assert explainer.estimator_ is worked_model
    assert explainer.classes_.tolist() == [0, 1]


# ---------------------------------------------------------------------- #
# the target class
# ---------------------------------------------------------------------- #
def test_target_none_on_binary_is_the_second_class(credit_result, credit_fitted):
    frame, _ = credit_result
    assert credit_fitted.classes_[1] == "good"
    assert (frame["target_class"] == "good").all()


def test_target_opposite(
    credit_data, credit_model, credit_actions, credit_rejected, credit_accepted
):
    X, _ = credit_data
    explainer = credit_explainer(
        credit_model, credit_actions, target_class="opposite"
    ).fit(X)
    batch = pd.concat([credit_rejected.iloc[:2], credit_accepted.iloc[:2]])
    frame, states = explainer.explain(batch, return_states=True)

    assert "already_target" not in set(frame["status"])
    predicted = pd.Series(credit_model.predict(batch), index=batch.index)
    opposite = predicted.map({"bad": "good", "good": "bad"})
    targets = frame.groupby("instance")["target_class"].first()
    assert targets.sort_index().tolist() == opposite.sort_index().tolist()
    ok = frame[frame["status"] == "ok"]
    assert len(ok)
    finals = final_states(frame, states, FEATURES)
    wanted = ok.groupby(["instance", "solution"])["target_class"].first()
    np.testing.assert_array_equal(credit_model.predict(finals), wanted.to_numpy())


def test_target_explicit_label(
    credit_data, credit_model, credit_actions, credit_rejected
):
    X, _ = credit_data
    explainer = credit_explainer(credit_model, credit_actions, target_class="bad").fit(
        X
    )
    # the accepted rows closest to the decision boundary can be turned down
    good = credit_model.predict_proba(X)[:, 1]
    borderline = X.iloc[np.argsort(np.where(good > 0.5, good, np.inf))[:2]]
    batch = pd.concat([credit_rejected.iloc[:2], borderline])
    frame, states = explainer.explain(batch, return_states=True)

    status = frame.groupby("instance")["status"].first()
    assert (status[credit_rejected.index[:2]] == "already_target").all()
    assert (status[borderline.index] != "already_target").all()
    assert (frame["target_class"] == "bad").all()
    assert (frame["status"] == "ok").any()
    finals = final_states(frame, states, FEATURES)
    assert (credit_model.predict(finals) == "bad").all()


def test_target_explicit_label_multiclass(credit_data, credit_pipeline, credit_actions):
    X, _ = credit_data
    # three classes, ordered by income minus debt
    wealth = X["income"] - X["debt"]
    y = np.select([wealth < 20, wealth < 70], ["low", "mid"], "high")
    model = credit_pipeline.fit(X, y)
    explainer = credit_explainer(model, credit_actions, target_class="high").fit(X)
    rows = X[model.predict(X) == "low"].iloc[:2]
    frame, states = explainer.explain(rows, return_states=True)

    assert (frame["status"] == "ok").any()
    assert (frame["target_class"] == "high").all()
    finals = final_states(frame, states, FEATURES)
    assert (model.predict(finals) == "high").all()
    high = list(model.classes_).index("high")
    ok = frame[frame["status"] == "ok"]
    last = ok[ok["step"] == ok["length"]].sort_values(["instance", "solution"])
    np.testing.assert_allclose(
        last["target_proba"], model.predict_proba(finals)[:, high], atol=1e-12
    )


def test_no_target_on_multiclass_means_any_other_class(
    credit_data, credit_pipeline, credit_actions
):
    X, _ = credit_data
    y = np.select([X["income"] < 50, X["income"] < 100], ["low", "mid"], "high")
    model = credit_pipeline.fit(X, y)
    explainer = credit_explainer(model, credit_actions).fit(X)
    rows = X.iloc[:3]
    frame = explainer.explain(rows)
    targets = frame.groupby("instance", sort=False)["target_class"].first()
    assert targets.tolist() == [f"not {c}" for c in model.predict(rows)]


def test_multiclass_plans_say_which_class_they_reach(
    tmp_path, credit_data, credit_pipeline, credit_actions
):
    from sklearn_cscf import read_explanations, replay, write_explanations

    X, _ = credit_data
    y = np.select([X["income"] < 50, X["income"] < 100], ["low", "mid"], "high")
    model = credit_pipeline.fit(X, y)
    explainer = credit_explainer(model, credit_actions).fit(X)
    rows = X[model.predict(X) == "low"].iloc[:3]
    frame, states = explainer.explain(rows, return_states=True)
    ok = frame[frame["status"] == "ok"]
    assert len(ok)
    # the class of the last state, one per sequence, as the model says
    finals = final_states(frame, states, FEATURES)
    reached = ok.groupby(["instance", "solution"])["reached_class"].agg(
        ["first", "nunique"]
    )
    assert (reached["nunique"] == 1).all()
    assert reached["first"].tolist() == model.predict(finals).tolist()
    assert set(reached["first"]) <= {"mid", "high"}
    assert frame["reached_class"].dtype == frame["target_class"].dtype
    assert frame.loc[frame["status"] != "ok", "reached_class"].isna().all()
    # files give it back, and replay takes the frame as it is
    for name in ("plans.csv", "plans.parquet"):
        write_explanations(frame, tmp_path / name)
        pd.testing.assert_frame_equal(read_explanations(tmp_path / name), frame)
    replayed = replay(explainer, rows, frame, states)
    assert replayed["passed"].all(), replayed["problems"].tolist()


def test_invalid_target_class_is_named(credit_data, credit_model, credit_actions):
    X, _ = credit_data
    explainer = credit_explainer(credit_model, credit_actions, target_class="excellent")
    with pytest.raises(ValueError, match="excellent"):
        explainer.fit(X)


def test_model_with_only_predict(
    credit_data, credit_model, credit_actions, credit_rejected
):
    X, _ = credit_data
    model = PredictOnly(credit_model)
    assert not hasattr(model, "predict_proba")
    explainer = credit_explainer(model, credit_actions).fit(X)
    frame, states = explainer.explain(credit_rejected.iloc[:2], return_states=True)

    ok = frame[frame["status"] == "ok"]
    assert len(ok)
    assert ok["target_proba"].isna().all()
    finals = final_states(frame, states, FEATURES)
    assert (credit_model.predict(finals) == "good").all()


# ---------------------------------------------------------------------- #
# numpy input
# ---------------------------------------------------------------------- #
def test_numpy_input_with_integer_columns(credit_data):
    X_frame, _ = credit_data
    X = X_frame[["income", "debt", "age"]].to_numpy(dtype=float)
    y = (X[:, 0] - X[:, 1] > 40).astype(int)
    model = LogisticRegression(max_iter=1000).fit(X, y)
    actions = [
        Action("earn", 0, values=(0.0, 200.0), direction="increase"),
        Action("pay", 1, direction="decrease"),
    ]
    explainer = SequentialCounterfactualExplainer(
        model, actions=actions, immutable_features=[2], **SMALL
    ).fit(X)
    rows = X[model.predict(X) == 0][:3]
    frame, states = explainer.explain(rows, return_states=True)

    assert set(frame["instance"]) == {0, 1, 2}
    ok = frame[frame["status"] == "ok"]
    assert len(ok)
    assert set(ok["feature"]) <= {0, 1}
    assert set(ok["action"]) <= {"earn", "pay"}
    assert list(states.columns) == ["instance", "solution", "step", 0, 1, 2]
    finals = final_states(frame, states, [0, 1, 2]).to_numpy(dtype=float)
    assert (model.predict(finals) == 1).all()
    # the immutable column never changes
    instance = ok.groupby(["instance", "solution"])["instance"].first().to_numpy()
    np.testing.assert_array_equal(finals[:, 2], rows[instance, 2])

    # transform: one row per input row, the final state of solution 0
    out = explainer.transform(rows)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == [0, 1, 2]
    assert out.index.equals(pd.RangeIndex(3))
    out = np.asarray(out, dtype=float)
    assert out.shape == rows.shape
    status = frame.groupby("instance")["status"].first()
    best = final_states(frame[frame["solution"] == 0], states, [0, 1, 2])
    best.index = ok[ok["solution"] == 0]["instance"].unique()
    for r in range(3):
        if status[r] == "ok":
            np.testing.assert_allclose(out[r], best.loc[r].to_numpy(dtype=float))
        else:
            assert np.isnan(out[r]).all()


# ---------------------------------------------------------------------- #
# input errors
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "action",
    [
        Action("earn", "salary", values=(0.0, 10.0)),
        Action(
            "earn",
            "income",
            values=(0.0, 200.0),
            effects={"salary": lambda b, a: a["income"]},
        ),
    ],
)
def test_action_on_unknown_column(action, credit_data, credit_model):
    X, _ = credit_data
    explainer = credit_explainer(credit_model, [action])
    with pytest.raises(ValueError, match="salary"):
        explainer.fit(X)


def test_unknown_immutable_feature_is_named(credit_data, credit_model, credit_actions):
    X, _ = credit_data
    explainer = credit_explainer(
        credit_model, credit_actions, immutable_features=["salary"]
    )
    with pytest.raises(ValueError, match="salary"):
        explainer.fit(X)


@pytest.mark.parametrize(
    ("immutable", "action"),
    [("age", "get_degree"), ("income", "increase_income")],
)
def test_immutable_feature_changed_by_an_action(
    immutable, action, credit_data, credit_model, credit_actions
):
    X, _ = credit_data
    explainer = credit_explainer(
        credit_model, credit_actions, immutable_features=[immutable]
    )
    with pytest.raises(ValueError, match=f"(?s){action}.*{immutable}"):
        explainer.fit(X)


@pytest.mark.parametrize(
    "params",
    [
        {"population_size": 1},
        {"n_generations": 0},
        {"crossover_bias": 1.5},
        {"mutant_fraction": -0.1},
        {"elite_fraction": 1.0},
    ],
)
def test_invalid_parameters(params, credit_data, credit_model, credit_actions):
    X, _ = credit_data
    explainer = credit_explainer(credit_model, credit_actions, **params)
    name = next(iter(params))
    with pytest.raises(InvalidParameterError, match=name) as error:
        explainer.fit(X)
    assert isinstance(error.value, ValueError)


@pytest.mark.parametrize("method", ["explain", "transform", "score"])
def test_methods_before_fit(method, credit_model, credit_actions, credit_rejected):
    explainer = credit_explainer(credit_model, credit_actions)
    with pytest.raises(NotFittedError):
        getattr(explainer, method)(credit_rejected)


def test_an_unseen_category_the_model_rejects_marks_only_its_row(
    credit_data, credit_actions, credit_rejected, credit_pipeline
):
    X, y = credit_data
    strict = credit_pipeline
    strict.set_params(columntransformer__categories__handle_unknown="error")
    strict.fit(X, y)
    explainer = credit_explainer(strict, credit_actions).fit(X)
    rows = credit_rejected.iloc[:2].copy()
    rows["housing"] = ["castle", rows["housing"].iloc[1]]
    with pytest.warns(UserWarning, match="1 of 2 rows"):
        frame = explainer.explain(rows)
    status = frame.groupby("instance", sort=False)["status"].first()
    assert status.iloc[0] == "error" and status.iloc[1] != "error"
    message = frame.loc[frame["instance"] == rows.index[0], "message"].iloc[0]
    assert "castle" in message


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_wrong_number_of_columns(credit_fitted, credit_rejected):
    with pytest.raises(ValueError, match="region"):
        credit_fitted.explain(credit_rejected.drop(columns="region"))
    with pytest.raises(TypeError, match="fitted on a DataFrame"):
        credit_fitted.explain(credit_rejected.iloc[:, :3].to_numpy())


def test_progress_bar_counts_every_instance(
    worked_model, make_worked_frame, worked_actions, worked_graph, capsys
):
    rows = make_worked_frame(
        [("Seller", "HS", "Germany"), ("Seller", "BSc", "Germany"), ("X", "HS", "US")]
    )
    explainer = SequentialCounterfactualExplainer(
        worked_model,
        actions=worked_actions,
        feature_graph=worked_graph,
        population_size=30,
        n_generations=3,
        random_state=0,
        verbose=1,
    ).fit(rows)
    explainer.explain(rows)
    err = capsys.readouterr().err
    assert "3/3" in err and "100%" in err
    explainer.set_params(verbose=0).explain(rows)
    assert capsys.readouterr().err == ""


def test_explain_leaves_the_global_random_state_alone(
    worked_model, worked_X, worked_actions
):
    np.random.seed(0)
    before = np.random.get_state()[1].copy()
    SequentialCounterfactualExplainer(
        worked_model, actions=worked_actions, population_size=20, n_generations=2
    ).fit(worked_X).explain(worked_X)
    np.testing.assert_array_equal(np.random.get_state()[1], before)


def test_imbalanced_learn_pipeline_as_the_black_box(
    credit_data, credit_pipeline, credit_actions, credit_rejected
):
    # the usual set-up: a resampling imbalanced-learn pipeline, fitted or not
    from imblearn.pipeline import make_pipeline as make_imblearn_pipeline
    from imblearn.under_sampling import RandomUnderSampler

    X, y = credit_data
    encode, classifier = credit_pipeline.steps[0][1], credit_pipeline.steps[1][1]
    model = make_imblearn_pipeline(
        encode, RandomUnderSampler(random_state=0), classifier
    )
    explainer = credit_explainer(model, credit_actions).fit(X, y)
    assert explainer.estimator_ is not model  # an unfitted model is cloned
    assert list(explainer.classes_) == ["bad", "good"]
    rows = credit_rejected.iloc[:2]
    frame = explainer.explain(rows)
    assert set(frame["instance"]) == set(rows.index)
    fitted = credit_explainer(explainer.estimator_, credit_actions).fit(X)
    assert fitted.estimator_ is explainer.estimator_  # a fitted one is used as is
    pd.testing.assert_frame_equal(fitted.explain(rows), frame)


def test_whole_numbers_read_as_whole_next_to_status_rows():
    # status rows have no old/new value; they must not turn the whole-number
    # values of the other rows into floats
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {"income": rng.integers(0, 100, 200), "debt": rng.integers(0, 50, 200)}
    )
    y = (X["income"] - X["debt"] > 40).astype(int)
    explainer = SequentialCounterfactualExplainer(
        LogisticRegression().fit(X, y),
        actions=[Action("earn_more", "income", direction="increase")],
        population_size=40,
        n_generations=10,
        random_state=0,
    ).fit(X)
    alone = explainer.explain(pd.DataFrame({"income": [30], "debt": [20]}))
    mixed = explainer.explain(pd.DataFrame({"income": [30, 90], "debt": [20, 0]}))

    assert mixed["status"].tolist()[-1] == "already_target"
    solved = mixed[mixed["status"] == "ok"]
    assert len(solved) == len(alone)
    for column in ("old_value", "new_value"):
        assert mixed[column].dtype == "string"
        values = solved[column].tolist()
        assert all(v.isdigit() for v in values), values  # whole numbers: "41"
        assert values == alone[column].tolist()
    for column in ("old_number", "new_number"):
        assert mixed[column].dtype == np.float64
        assert solved[column].tolist() == alone[column].tolist()
        assert all(float(v).is_integer() for v in solved[column])
    assert mixed["old_value"].isna().tolist()[-1]
    assert np.isnan(mixed["old_number"].tolist()[-1])


@pytest.mark.parametrize("meta", ["GridSearchCV", "cross_validate"])
def test_a_failed_fit_inside_a_meta_estimator_raises_its_own_error(
    meta, credit_data, credit_model, credit_actions
):
    # scikit-learn (1.9) sets a callback context on the clone around fit; a
    # failed fit must leave it there, so that fit's own error is what the
    # user sees: here, a clone of a fitted model is unfitted and y is missing
    from sklearn.model_selection import cross_validate

    X, _ = credit_data
    explainer = credit_explainer(credit_model, credit_actions)
    with pytest.raises(ValueError, match="FrozenEstimator"):
        if meta == "GridSearchCV":
            grid = GridSearchCV(
                explainer, {"max_sequence_length": [1, None]}, cv=2, error_score="raise"
            )
            grid.fit(X)
        else:
            cross_validate(explainer, X, cv=2, error_score="raise")


def test_a_failed_fit_keeps_what_was_there_before_it(credit_data, credit_model):
    X, _ = credit_data
    explainer = credit_explainer(credit_model, [Action("x", "no_such_column")])
    explainer.set_by_someone_else = "kept"  # e.g. a meta-estimator's context
    before = dict(vars(explainer))
    with pytest.raises(ValueError, match="no_such_column"):
        explainer.fit(X)
    assert vars(explainer) == before
    with pytest.raises(NotFittedError):
        check_is_fitted(explainer)


def test_n_jobs_0_is_refused_at_fit_naming_it(logistic, line_data):
    X, _ = line_data
    with pytest.raises(ValueError, match="'n_jobs' parameter.*Got 0 instead"):
        SequentialCounterfactualExplainer(logistic, n_jobs=0, **SMALL).fit(X)

"""sklearn_cscf.metrics: the metrics on hand-built frames, the scorer inside a
real GridSearchCV, the README's grid-search snippet and examples/tune_budget.py.
"""

import io
import re
import subprocess
import sys
import warnings
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import GridSearchCV, KFold, PredefinedSplit

from sklearn_cscf import SequentialCounterfactualExplainer, metrics
from sklearn_cscf._frames import COLUMNS
from sklearn_cscf.metrics import (
    ExplanationScorer,
    combined_score,
    diversity,
    mean_sequence_cost,
    mean_sequence_length,
    seconds_per_row,
    validity,
)

ROOT = Path(__file__).resolve().parents[1]
ALL_SCORES = [
    "validity",
    "neg_mean_sequence_cost",
    "neg_mean_sequence_length",
    "diversity",
    "neg_seconds_per_row",
    "combined",
]
TINY = {"population_size": 30, "n_generations": 5, "random_state": 0}


# ---------------------------------------------------------------------- #
# Hand-built frames
# ---------------------------------------------------------------------- #
def frame(*instances):
    """A frame with the columns of explain.

    Each instance is ``(label, status)`` or ``(label, [(cost, [actions]),
    ...])``: its sequences with their cost and actions in order, numbered
    ``solution`` 0, 1, ... as listed.
    """
    records = []
    for label, spec in instances:
        if isinstance(spec, str):
            records.append({"instance": label, "status": spec})
            continue
        for solution, (cost, actions) in enumerate(spec):
            for step, action in enumerate(actions, 1):
                records.append(
                    {
                        "instance": label,
                        "solution": solution,
                        "step": step,
                        "action": action,
                        "cost": cost / len(actions),
                        "sequence_cost": cost,
                        "length": len(actions),
                        "status": "ok",
                    }
                )
    return pd.DataFrame.from_records(records, columns=list(COLUMNS))


def details(*rows):
    """Details of ``(status, cpu_seconds)`` rows, taking twice as long on
    the wall clock (a busy machine)."""
    statuses, seconds = zip(*rows) if rows else ((), ())
    return pd.DataFrame(
        {
            "instance": range(len(rows)),
            "status": pd.array(statuses, dtype="string"),
            "total_seconds": [2 * s for s in seconds],
            "cpu_seconds": seconds,
        }
    )


# three instances needing recourse (two solved) and one that does not
MIXED = frame(
    (10, [(2.0, ["a", "b"]), (2.5, ["b", "a"]), (4.0, ["c"])]),
    (11, "no_counterfactual"),
    (12, [(1.0, ["c"])]),
    (13, "already_target"),
)


def test_validity_counts_rows_needing_recourse():
    assert validity(MIXED) == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    "explanations",
    [
        frame((0, "already_target"), (1, "already_target")),
        frame(),  # no row at all
    ],
    ids=["all-already-target", "empty"],
)
def test_no_row_needing_recourse_is_perfect_and_free(explanations):
    assert validity(explanations) == 1.0
    assert mean_sequence_cost(explanations) == 0.0
    assert mean_sequence_length(explanations) == 0.0
    assert diversity(explanations) == 0.0
    assert combined_score(explanations) == 1.0


def test_nothing_solved_is_documented_not_nan():
    explanations = frame((0, "no_counterfactual"), (1, "error"), (2, "already_target"))
    assert validity(explanations) == 0.0
    assert mean_sequence_cost(explanations) == np.inf
    assert mean_sequence_length(explanations) == np.inf
    assert mean_sequence_cost(explanations, nothing_solved=99.0) == 99.0
    assert mean_sequence_length(explanations, nothing_solved=7) == 7.0
    assert diversity(explanations) == 0.0
    assert diversity(explanations, measure="jaccard") == 0.0
    # the cost term is at its maximum, cost_weight: finite
    assert combined_score(explanations, cost_weight=0.25) == -0.25


def test_an_error_status_is_a_failure():
    explanations = frame((0, [(1.0, ["a"])]), (1, "error"))
    explanations["message"] = [None, "the model raised"]
    assert validity(explanations) == 0.5
    assert mean_sequence_cost(explanations) == 1.0


def test_a_missing_status_is_a_failure():
    explanations = frame((0, [(1.0, ["a"])]), (1, "no_counterfactual"))
    explanations["status"] = pd.array(["ok", pd.NA], dtype="string")
    assert validity(explanations) == 0.5
    rows = details(("ok", 1.0), ("ok", 2.0))
    rows["status"] = pd.array([pd.NA, "already_target"], dtype="string")
    assert seconds_per_row(rows) == 3.0


def test_cost_and_length_of_each_least_cost_sequence():
    # instance 10: 2.0 (2 steps); instance 12: 1.0 (1 step)
    assert mean_sequence_cost(MIXED) == pytest.approx(1.5)
    assert mean_sequence_length(MIXED) == pytest.approx(1.5)


def test_least_cost_does_not_rely_on_the_order_of_solutions():
    # a frame that keeps some sequences only, the cheapest not numbered 0
    explanations = frame((0, [(5.0, ["a", "b", "c"]), (1.0, ["c"])]))
    assert mean_sequence_cost(explanations) == 1.0
    assert mean_sequence_length(explanations) == 1.0
    # equal costs: the length of the one numbered first
    tie = frame((0, [(2.0, ["a", "b"]), (2.0, ["c"])]))
    assert mean_sequence_length(tie) == 2.0


def test_diversity_counts_plans_not_orders():
    # instance 10: {a, b} in two orders and {c}; instance 12: {c}
    assert diversity(MIXED) == pytest.approx((2 + 1) / 2)
    # instance 10: {a, b} and {c} share nothing; instance 12 has one plan
    assert diversity(MIXED, measure="jaccard") == pytest.approx((1.0 + 0.0) / 2)


def test_jaccard_diversity_of_overlapping_plans():
    explanations = frame((0, [(1.0, ["a", "b"]), (2.0, ["b", "c"]), (3.0, ["a"])]))
    # {a,b}-{b,c}: 1 - 1/3; {a,b}-{a}: 1 - 1/2; {b,c}-{a}: 1
    expected = np.mean([2 / 3, 1 / 2, 1.0])
    assert diversity(explanations, measure="jaccard") == pytest.approx(expected)
    assert diversity(explanations) == 3.0


def test_metrics_read_a_frame_back_from_csv(tmp_path):
    path = tmp_path / "explanations.csv"
    MIXED.to_csv(path, index=False)
    read = pd.read_csv(path)
    for metric in (validity, mean_sequence_cost, mean_sequence_length, diversity):
        assert metric(read) == pytest.approx(metric(MIXED))


def test_instance_labels_of_any_kind():
    explanations = frame(
        ("b", [(3.0, ["x"])]), ("a", [(1.0, ["y", "x"])]), ("c", "no_counterfactual")
    )
    assert mean_sequence_cost(explanations) == 2.0
    assert validity(explanations) == pytest.approx(2 / 3)


def test_seconds_per_row_needing_recourse():
    rows = details(("ok", 0.5), ("no_counterfactual", 1.5), ("already_target", 0.0))
    assert seconds_per_row(rows) == 1.0
    assert seconds_per_row(MIXED.head(0), rows) == 1.0
    assert seconds_per_row(rows, clock="wall") == 2.0  # wall-clock seconds
    assert seconds_per_row(details(("already_target", 0.0))) == 0.0
    assert seconds_per_row(details()) == 0.0
    # details saved by 0.1 hold wall-clock seconds only
    old = rows.drop(columns="cpu_seconds")
    assert seconds_per_row(old, clock="wall") == 2.0
    with pytest.raises(ValueError, match="no cpu_seconds.*clock='wall'"):
        seconds_per_row(old)


def test_combined_score_known_values():
    # validity 2/3, mean least cost 1.5
    assert combined_score(MIXED, cost_weight=0.5, cost_scale=1.5) == pytest.approx(
        2 / 3 - 0.5 * 0.5
    )
    assert combined_score(MIXED, cost_weight=0.0) == pytest.approx(2 / 3)
    rows = details(("ok", 1.0), ("no_counterfactual", 3.0), ("ok", 2.0))
    score = combined_score(
        MIXED, rows, cost_weight=0.0, time_weight=0.3, time_scale=2.0
    )
    assert score == pytest.approx(2 / 3 - 0.3 * 0.5)
    wall = combined_score(
        MIXED, rows, cost_weight=0.0, time_weight=0.3, time_scale=2.0, clock="wall"
    )
    assert wall == pytest.approx(2 / 3 - 0.3 * 4 / 6)


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="unpack"):
        validity((MIXED, details()))
    with pytest.raises(TypeError, match="DataFrame"):
        validity(MIXED.to_dict())
    with pytest.raises(ValueError, match=r"\['sequence_cost'\]"):
        mean_sequence_cost(MIXED.drop(columns="sequence_cost"))
    with pytest.raises(ValueError, match="measure"):
        diversity(MIXED, measure="entropy")
    with pytest.raises(ValueError, match="cpu_seconds"):
        seconds_per_row(details().drop(columns=["total_seconds", "cpu_seconds"]))
    with pytest.raises(ValueError, match="clock"):
        seconds_per_row(details(), clock="cpu_time")
    with pytest.raises(TypeError, match="details"):
        seconds_per_row([1.0])
    with pytest.raises(ValueError, match="needs the details"):
        combined_score(MIXED, time_weight=1.0)
    with pytest.raises(ValueError, match="cost_scale"):
        combined_score(MIXED, cost_scale=0.0)
    with pytest.raises(ValueError, match="cost_weight"):
        combined_score(MIXED, cost_weight=-1)
    with pytest.raises(ValueError, match="nothing_solved"):
        mean_sequence_cost(MIXED, nothing_solved="high")


# ---------------------------------------------------------------------- #
# The scorer on frames
# ---------------------------------------------------------------------- #
def test_scorer_returns_every_score_greater_is_better():
    rows = details(
        ("ok", 0.2), ("no_counterfactual", 0.4), ("ok", 0.3), ("already_target", 0)
    )
    scores = ExplanationScorer(cost_scale=1.5).score_frames(MIXED, rows)
    assert list(scores) == ALL_SCORES
    assert scores == pytest.approx(
        {
            "validity": 2 / 3,
            "neg_mean_sequence_cost": -1.5,
            "neg_mean_sequence_length": -1.5,
            "diversity": 1.5,
            "neg_seconds_per_row": -0.3,
            "combined": combined_score(MIXED, rows, cost_scale=1.5),
        }
    )
    single = ExplanationScorer("neg_mean_sequence_cost").score_frames(MIXED, rows)
    assert single == -1.5
    some = ExplanationScorer(["diversity", "validity"]).score_frames(MIXED, rows)
    assert list(some) == ["diversity", "validity"]


def test_scorer_combined_is_finite_when_nothing_is_solved():
    explanations = frame((0, "no_counterfactual"))
    scores = ExplanationScorer().score_frames(
        explanations, details(("no_counterfactual", 0.1))
    )
    assert scores["combined"] == -0.5
    assert scores["neg_mean_sequence_cost"] == -np.inf
    assert np.isfinite([scores[k] for k in ("validity", "diversity", "combined")]).all()


def test_scorer_parameters_are_checked_and_shown():
    with pytest.raises(ValueError, match="scores must name"):
        ExplanationScorer("accuracy")
    with pytest.raises(ValueError, match="scores must name"):
        ExplanationScorer([])
    with pytest.raises(ValueError, match="time_scale"):
        ExplanationScorer(time_scale=-1)
    assert repr(ExplanationScorer()) == "ExplanationScorer()"
    assert (
        repr(ExplanationScorer("combined", cost_scale=5.0, time_weight=0.1))
        == "ExplanationScorer('combined', cost_scale=5.0, time_weight=0.1)"
    )


def test_scorer_needs_an_explainer(credit_model, credit_rejected):
    with pytest.raises(TypeError, match="explain method"):
        ExplanationScorer()(credit_model, credit_rejected)


def test_public_surface():
    import sklearn_cscf

    assert "metrics" in sklearn_cscf.__all__
    assert sklearn_cscf.metrics is metrics
    assert set(metrics.__all__) == {
        "ExplanationScorer",
        "combined_score",
        "diversity",
        "mean_sequence_cost",
        "mean_sequence_length",
        "seconds_per_row",
        "validity",
    }


# ---------------------------------------------------------------------- #
# The scorer on a real explainer
# ---------------------------------------------------------------------- #
@pytest.fixture
def count_explain(monkeypatch):
    """Count the calls of SequentialCounterfactualExplainer.explain."""
    calls = []
    original = SequentialCounterfactualExplainer.explain

    def counting(self, X, *args, **kwargs):
        calls.append(len(X))
        return original(self, X, *args, **kwargs)

    monkeypatch.setattr(SequentialCounterfactualExplainer, "explain", counting)
    return calls


def fit_on_train_explain_folds(X_train, rejected, n_splits=2):
    """``(X, cv)`` for GridSearchCV: every fold fits on ``X_train`` (and the
    other folds) and explains its share of ``rejected``."""
    X = pd.concat([X_train, rejected], ignore_index=True)
    folds = np.r_[np.full(len(X_train), -1), np.arange(len(rejected)) % n_splits]
    return X, PredefinedSplit(folds)


def frozen_explainer(model, actions, **params):
    return SequentialCounterfactualExplainer(
        FrozenEstimator(model), actions=actions, **{**TINY, **params}
    )


@pytest.mark.slow  # several seconds: CI's slow step runs it
def test_scorer_agrees_with_the_metrics_and_score(
    credit_data,
    credit_model,
    credit_actions,
    credit_rejected,
    credit_accepted,
    count_explain,
):
    X, _ = credit_data
    explainer = frozen_explainer(credit_model, credit_actions).fit(X)
    rows = pd.concat([credit_rejected, credit_accepted])
    scores = ExplanationScorer()(explainer, rows)
    assert len(count_explain) == 1
    explanations, found = explainer.explain(rows, return_details=True)
    assert scores["validity"] == validity(explanations) == explainer.score(rows)
    assert scores["neg_mean_sequence_cost"] == -mean_sequence_cost(explanations)
    assert scores["neg_mean_sequence_length"] == -mean_sequence_length(explanations)
    assert scores["diversity"] == diversity(explanations)
    assert scores["neg_seconds_per_row"] <= 0
    assert len(found) == len(rows)


@pytest.mark.slow  # several seconds: CI's slow step runs it
def test_grid_search_explains_once_per_candidate_and_fold(
    credit_data, credit_model, credit_actions, credit_rejected, count_explain
):
    X, cv = fit_on_train_explain_folds(credit_data[0], credit_rejected)
    grid = {"population_size": [4, 30], "n_generations": [2, 5]}
    search = GridSearchCV(
        frozen_explainer(credit_model, credit_actions),
        grid,
        scoring=ExplanationScorer(),
        refit="combined",
        cv=cv,
    ).fit(X)
    # four candidates, two folds, three people each; the refit explains no one
    assert count_explain == [3] * (4 * 2)
    for name in ALL_SCORES:
        assert f"mean_test_{name}" in search.cv_results_
    # search.score explains once and gives the refit score (time_weight=0:
    # the same on every call)
    count_explain.clear()
    score = search.score(credit_rejected)
    assert len(count_explain) == 1
    assert score == ExplanationScorer("combined")(
        search.best_estimator_, credit_rejected
    )


def test_refit_chooses_by_validity_where_budgets_differ(
    credit_data, credit_model, credit_actions, credit_rejected
):
    X, cv = fit_on_train_explain_folds(credit_data[0], credit_rejected)
    # two individuals in one generation rarely find a sequence; thirty do
    # (refinement, which also tries every action alone, is off: the search's
    # budget alone decides)
    grid = {"population_size": [2, 30], "n_generations": [1, 5]}
    search = GridSearchCV(
        frozen_explainer(credit_model, credit_actions, refine=False),
        grid,
        scoring=ExplanationScorer(),
        refit="validity",
        cv=cv,
    ).fit(X)
    results = pd.DataFrame(search.cv_results_)
    assert results["mean_test_validity"].nunique() > 1
    best = results.loc[search.best_index_]
    assert best["mean_test_validity"] == results["mean_test_validity"].max()
    assert search.best_params_["population_size"] == 30
    assert search.best_index_ != 0  # not merely the first candidate


def test_refit_on_cost_chooses_what_validity_cannot(
    credit_data, credit_model, credit_actions, credit_rejected
):
    X, cv = fit_on_train_explain_folds(credit_data[0], credit_rejected)
    # without refinement a longer search finds cheaper sequences, while every
    # candidate finds one for the same people
    grid = {"n_generations": [1, 3, 12]}
    explainer = frozen_explainer(
        credit_model, credit_actions, refine=False, population_size=40
    )
    by = {}
    for refit in ("validity", "neg_mean_sequence_cost", "combined"):
        search = GridSearchCV(
            explainer,
            grid,
            scoring=ExplanationScorer(cost_scale=5.0),
            refit=refit,
            cv=cv,
        ).fit(X)
        by[refit] = search.best_params_
    results = pd.DataFrame(search.cv_results_)
    assert results["mean_test_validity"].nunique() == 1  # a tie: the first wins
    assert by["validity"] == {"n_generations": 1}
    assert by["neg_mean_sequence_cost"] == {"n_generations": 12}
    assert by["combined"] == {"n_generations": 12}


# scikit-learn's standard deviation of two infinite fold scores is NaN
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_a_fold_without_sequences_ranks_last_and_combined_stays_finite(
    make_worked_frame, worked_model, worked_actions
):
    # the worked example needs all three actions: one step solves nothing
    rejected = make_worked_frame(
        [
            ("Seller", "HS", "Germany"),
            ("Seller", "BSc", "Germany"),
            ("Developer", "HS", "Germany"),
            ("Seller", "HS", "US"),
        ]
    )
    explainer = SequentialCounterfactualExplainer(
        worked_model, actions=worked_actions, **TINY
    )
    search = GridSearchCV(
        explainer,
        {"max_sequence_length": [1, 3]},
        scoring=ExplanationScorer(),
        refit="combined",
        cv=KFold(2),
    )
    with pytest.warns(UserWarning, match="non-finite"):
        search.fit(rejected)
    results = search.cv_results_
    assert results["mean_test_validity"].tolist() == [0.0, 1.0]
    assert results["mean_test_neg_mean_sequence_cost"][0] == -np.inf
    assert results["rank_test_neg_mean_sequence_cost"].tolist() == [2, 1]
    assert np.isfinite(results["mean_test_combined"]).all()
    assert search.best_params_ == {"max_sequence_length": 3}


# ---------------------------------------------------------------------- #
# The README's snippet and the example
# ---------------------------------------------------------------------- #
README_MARKER = "<!-- tests/test_metrics.py runs this snippet -->"


def readme_snippet():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert README_MARKER in text, "the README lost its grid-search snippet"
    after = text.split(README_MARKER, 1)[1]
    match = re.match(r"\s*```python\n(.*?)```", after, flags=re.S)
    assert match, "the marker must come right before a python code block"
    return match.group(1)


@pytest.mark.slow  # several seconds: CI's slow step runs it
def test_readme_grid_search_snippet_runs_as_written():
    code = readme_snippet()
    printed = io.StringIO()
    with redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
    # the snippet says what it prints, in a comment on the print line
    expected = re.search(r"print\(.*\)\s*#\s*(.+)", code).group(1).strip()
    assert printed.getvalue().strip() == expected


def run_tune_budget(cwd, *args, timeout=300):
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "tune_budget.py"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.slow  # runs an example script (pytest -m slow; a step of .ci/run)
def test_tune_budget_prints_the_table_and_the_choice(tmp_path):
    completed = run_tune_budget(
        tmp_path, "--quick", "--n-instances", "4", "--seed", "0", "--time-weight", "0"
    )
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert "mean least cost" in out and "validity" in out and "CPU s / person" in out
    chosen = re.search(r"Chosen: population_size=(\d+), n_generations=(\d+)", out)
    assert chosen
    table = pd.read_csv(tmp_path / "tune_budget.csv")
    assert len(table) == 4  # the quick grid: two populations, two lengths
    assert table["validity"].between(0, 1).all()
    assert (table["CPU s / person"] >= 0).all()
    population, generations = (int(group) for group in chosen.groups())
    best = table[(table["population"] == population)]
    best = best[best["generations"] == generations]
    assert best["rank"].tolist() == [1]


@pytest.mark.parametrize(
    "option, value",
    [("--n-instances", "1"), ("--time-weight", "-1"), ("--n-jobs", "0")],
)
def test_tune_budget_rejects_bad_options(tmp_path, option, value):
    completed = run_tune_budget(tmp_path, option, value, timeout=120)
    assert completed.returncode == 2
    assert option in completed.stderr
    assert "Traceback" not in completed.stderr
    assert not list(tmp_path.iterdir())


def test_seconds_per_row_takes_what_combined_score_takes(dummies_explained):
    _, _, explanations, details = dummies_explained
    new = seconds_per_row(explanations, details)
    assert new > 0
    assert seconds_per_row(details) == new  # the call of version 0.1
    assert combined_score(explanations, details, time_weight=1.0) < combined_score(
        explanations, details
    )
    with pytest.raises(ValueError, match=r"seconds_per_row\(explanations, details\)"):
        seconds_per_row(explanations)


# ---------------------------------------------------------------------- #
# issue 37: time is CPU time, in the explaining process and its workers
# ---------------------------------------------------------------------- #
class Sleepy:
    """A fitted model that waits 10 ms at each call: wall-clock time that
    costs no CPU (a busy machine, a remote model)."""

    def __init__(self, model):
        self.model = model
        self.classes_ = model.classes_

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        import time

        time.sleep(SLEEP)
        return self.model.predict_proba(X)

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(axis=1)]


SLEEP = 0.01


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_the_time_scored_is_cpu_time_not_waiting(
    credit_data, credit_model, credit_actions, credit_rejected, n_jobs
):
    X, _ = credit_data
    explainer = SequentialCounterfactualExplainer(
        Sleepy(credit_model),
        actions=credit_actions,
        n_jobs=n_jobs,
        batch_size=1,
        refine=False,
        **TINY,
    ).fit(X)
    rows = credit_rejected.head(2)
    explanations, found = explainer.explain(rows, return_details=True)
    searched = found["status"] != "already_target"
    assert searched.any()
    # every searched row has CPU seconds, in the main process or a worker
    assert (found.loc[searched, "cpu_seconds"] > 0).all()
    # the model slept at every call: wall-clock time, not CPU time
    slept = SLEEP * found["n_model_calls"].sum()
    assert found["total_seconds"].sum() >= slept
    assert found["cpu_seconds"].sum() < found["total_seconds"].sum() - 0.5 * slept
    scores = ExplanationScorer().score_frames(explanations, found)
    assert -scores["neg_seconds_per_row"] == pytest.approx(
        seconds_per_row(explanations, found)
    )
    assert seconds_per_row(explanations, found) < seconds_per_row(
        explanations, found, clock="wall"
    )


def test_a_grid_search_over_an_unfrozen_fitted_model_says_so_at_once(
    credit_data, credit_model, credit_actions, credit_rejected
):
    # issue 37: "All the 4 fits failed", the library's message buried in
    # scikit-learn's traceback
    X, _ = credit_data
    explainer = SequentialCounterfactualExplainer(
        credit_model, actions=credit_actions, **TINY
    )
    search = GridSearchCV(
        explainer,
        {"population_size": [4, 8]},
        scoring=ExplanationScorer(),
        refit="combined",
        cv=PredefinedSplit([-1] * len(X) + [0, 1] * 2),
    )
    rows = pd.concat([X, credit_rejected.head(4)])
    with pytest.warns(UserWarning, match=r"FrozenEstimator\(model\)") as caught:
        with pytest.raises(ValueError, match="fits failed"):
            search.fit(rows)
    first = next(w for w in caught if "FrozenEstimator" in str(w.message))
    assert "clone holds an unfitted copy of its fitted Pipeline" in str(first.message)
    # a frozen model is kept as it is, and a clone of it is fitted: no warning
    frozen = explainer.set_params(estimator=FrozenEstimator(credit_model))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        clone(frozen).fit(X)

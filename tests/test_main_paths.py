"""The main paths of the library, from pandas and from polars, with every
warning an error: fit (the default model), explain, transform, score, the
text, the choice of a plan, the metrics, saving and reading, replay and the
plots. The one warning left is the one an unseen category at explain gets,
naming its column and values (issue 37)."""

import re
import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest

from sklearn_cscf import (
    SequentialCounterfactualExplainer,
    choose_plan,
    describe,
    make_actions,
    read_explanations,
    replay,
    summarize_recourse,
    write_explanations,
)
from sklearn_cscf.datasets import make_credit_applicants
from sklearn_cscf.metrics import ExplanationScorer
from sklearn_cscf.plotting import (
    ActionFlowDisplay,
    ParetoFrontDisplay,
    ProbabilityByStepDisplay,
    RecourseSummaryDisplay,
    TargetProbabilityDisplay,
)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TEXT = ["education", "employment", "housing"]
SMALL = {"population_size": 30, "n_generations": 6, "random_state": 0, "n_jobs": 1}


def _data(library):
    bunch = make_credit_applicants(300, random_state=0)
    X = bunch.data.astype(dict.fromkeys(TEXT, str))  # as read from a CSV
    if library == "polars":
        pl = pytest.importorskip("polars")
        return pl.from_pandas(X), bunch.target
    return X, bunch.target


def _with_unseen(rows, library):
    """``rows`` with an unseen employment on the first and an unseen housing
    on the first two."""
    if library == "polars":
        pl = pytest.importorskip("polars")
        first = pl.int_range(pl.len()) == 0
        firsts = pl.int_range(pl.len()) < 2
        return rows.with_columns(
            pl.when(first)
            .then(pl.lit("astronaut"))
            .otherwise(pl.col("employment"))
            .alias("employment"),
            pl.when(firsts)
            .then(pl.lit("boat"))
            .otherwise(pl.col("housing"))
            .alias("housing"),
        )
    rows = rows.copy()
    rows.iloc[0, rows.columns.get_loc("employment")] = "astronaut"
    rows.iloc[:2, rows.columns.get_loc("housing")] = "boat"
    return rows


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_the_main_paths_warn_of_nothing_but_an_unseen_category(library, tmp_path):
    X, y = _data(library)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pandas' deprecations included
        actions = make_actions(
            X,
            ["employment", "housing", "savings", "debt"],
            directions={"savings": "increase", "debt": "decrease"},
            prices={"savings": 1e-4, "debt": 1e-4},
        )
        explainer = SequentialCounterfactualExplainer(actions=actions, **SMALL)
        explainer.fit(X, y)  # the default model, fitted on the way
        decided = explainer.estimator_.predict(X)
        picked = np.flatnonzero(decided == 0)[:4]
        rejected = X[picked.tolist()] if library == "polars" else X.iloc[picked]
        rows = _with_unseen(rejected, library)

        # explain: exactly one warning, naming the columns and their values
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            explanations, states, details = explainer.explain(
                rows, return_states=True, return_details=True
            )
        assert [w.category for w in caught] == [UserWarning], caught
        message = str(caught[0].message)
        assert re.search(r"column 'employment' has 'astronaut' \(1 row\)", message)
        assert re.search(r"column 'housing' has 'boat' \(2 rows\)", message)
        assert caught[0].filename == __file__  # it points at the caller
        assert len(details) == 4  # every row answered

        # every other path: no warning at all
        clean = rejected
        explanations, states, details = explainer.explain(
            clean, return_states=True, return_details=True
        )
        assert (explanations["status"] == "ok").any()
        explainer.transform(clean)
        explainer.score(clean)
        pandas_rows = clean.to_pandas() if library == "polars" else clean
        text = describe(explanations, states, X=pandas_rows)
        assert "Pareto-optimal" in text
        chosen = choose_plan(explanations)
        summarize_recourse(explanations)
        ExplanationScorer().score_frames(explanations, details)
        for name in ("explanations.csv", "explanations.parquet"):
            write_explanations(explanations, tmp_path / name)
            back = read_explanations(tmp_path / name)
            pd.testing.assert_frame_equal(back, explanations)
        assert replay(explainer, clean, explanations, states)["passed"].all()
        person = explanations.loc[explanations["status"] == "ok", "instance"].iloc[0]
        now = explainer.estimator_.predict_proba(clean)[:, 1]
        for display in (
            ActionFlowDisplay.from_explanations(explanations),
            ProbabilityByStepDisplay.from_explanations(explanations, n_boot=20),
            TargetProbabilityDisplay.from_explanations(
                explanations, person, initial_proba=now
            ),
            ParetoFrontDisplay.from_explanations(
                explanations, person, highlight=chosen
            ),
            RecourseSummaryDisplay.from_explanations(explanations),
        ):
            display.figure_.canvas.draw()
        plt.close("all")

"""Small things a new user tripped over (issue 15's slips): parquet round
trips, the metrics' arguments, how warnings name rows, and how a refined
step's numbers read."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_cscf import (
    Action,
    SequentialCounterfactualExplainer,
    describe,
    read_explanations,
)
from sklearn_cscf._reporting import _number_pair
from sklearn_cscf.metrics import combined_score, seconds_per_row


@pytest.fixture(scope="module")
def explained():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "income": rng.uniform(0, 100, 200),
            "debt": rng.uniform(0, 50_000, 200),
            "job": rng.choice(["clerk", "developer"], 200),
        }
    )
    y = ((X["income"] > 50) & (X["debt"] < 20_000)).astype(int)
    model = LogisticRegression(max_iter=2000).fit(pd.get_dummies(X, dtype=float), y)

    class Dummies:
        classes_ = model.classes_

        def __sklearn_is_fitted__(self):
            return True

        def predict_proba(self, frame):
            dummies = pd.get_dummies(frame, dtype=float)
            return model.predict_proba(
                dummies.reindex(columns=model.feature_names_in_, fill_value=0.0)
            )

        def predict(self, frame):
            return self.classes_[self.predict_proba(frame).argmax(axis=1)]

    explainer = SequentialCounterfactualExplainer(
        Dummies(),
        actions=[
            Action("earn", "income", direction="increase"),
            Action("repay", "debt", direction="decrease"),
            Action("retrain", "job", values="developer"),
        ],
        population_size=40,
        n_generations=10,
        random_state=0,
        n_jobs=1,
    ).fit(X)
    rejected = X[Dummies().predict(X) == 0].head(4)
    explanations, details = explainer.explain(rejected, return_details=True)
    assert (explanations["status"] == "ok").any()
    return explainer, rejected, explanations, details


def test_parquet_and_csv_round_trips_give_the_frame_back(explained, tmp_path):
    pytest.importorskip("pyarrow")
    _, _, explanations, _ = explained
    explanations.to_parquet(tmp_path / "e.parquet")
    assert explanations.equals(read_explanations(tmp_path / "e.parquet"))
    assert explanations.equals(read_explanations(str(tmp_path / "e.parquet")))
    explanations.to_csv(tmp_path / "e.csv", index=False)
    assert explanations.equals(read_explanations(tmp_path / "e.csv"))


def test_seconds_per_row_takes_what_combined_score_takes(explained):
    _, _, explanations, details = explained
    new = seconds_per_row(explanations, details)
    assert new > 0
    assert seconds_per_row(details) == new  # the call of version 0.1
    assert combined_score(explanations, details, time_weight=1.0) < combined_score(
        explanations, details
    )
    with pytest.raises(ValueError, match=r"seconds_per_row\(explanations, details\)"):
        seconds_per_row(explanations)


def test_warnings_name_rows_as_plain_numbers(explained):
    explainer, rejected, _, _ = explained
    broken = explainer.actions[:1] + [
        Action("repay", "debt", cost=lambda b, a: 1 / 0),
    ]
    failing = SequentialCounterfactualExplainer(
        explainer.estimator_, actions=broken, population_size=20, n_generations=3
    ).fit(rejected)
    index = pd.Index(np.arange(286, 286 + len(rejected), dtype=np.int64))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        failing.explain(rejected.set_axis(index))
    messages = [str(w.message) for w in caught if "status 'error'" in str(w.message)]
    assert messages
    assert "row 286:" in messages[0]
    assert "np.int64" not in messages[0]


def test_a_numeric_step_reads_at_its_scale():
    # a refined repayment ends just above 0: no spurious digits
    assert _number_pair(43_834.52, 0.081) == ("43,834.52", "0.08")
    # ... but not as 0 (it is not 0): two decimals, as for 2.9962 -> 3.00
    assert _number_pair(100.0, 0.001) == ("100", "0.00")
    assert _number_pair(1_200.0, 15_000.5) == ("1,200", "15,000.50")
    assert _number_pair(18.0, 24.0) == ("18", "24")
    # below 1 the digits that matter stay
    assert _number_pair(0.25, 0.31) == ("0.25", "0.31")
    assert _number_pair(0.0012, 0.0034) == ("0.0012", "0.0034")


def test_describe_shows_steps_at_their_scale(explained):
    _, rejected, explanations, _ = explained
    text = describe(explanations, X=rejected)
    repaid = re.findall(r"repay\s+debt\s+([\d,.]+) -> ([\d,.]+)", text)
    assert repaid
    for old, new in repaid:
        for value in (old, new):
            # at most two decimals, whatever the refinement left
            assert "." not in value or len(value.split(".")[1]) <= 2

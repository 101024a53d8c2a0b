"""A library data scientists keep (issue 9): compact answers, output that
saves, grid search that can be set up, unseen categories, clear warnings.
"""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from sklearn_cscf import SequentialCounterfactualExplainer, read_explanations
from sklearn_cscf._frames import TEXT

SMALL = {"population_size": 40, "n_generations": 10, "random_state": 0}


@pytest.fixture(scope="module")
def explained(credit_data, credit_model, credit_actions, credit_graph, credit_rejected):
    """The credit problem's rejected rows, compact and full."""
    X, _ = credit_data
    explainer = SequentialCounterfactualExplainer(
        credit_model,
        actions=credit_actions,
        feature_graph=credit_graph,
        immutable_features=["region"],
        **SMALL,
    ).fit(X)
    compact_frame = explainer.explain(credit_rejected)
    full = explainer.set_params(max_plans=None, all_orders=True).explain(
        credit_rejected
    )
    explainer.set_params(max_plans=5, all_orders=False)
    return explainer, compact_frame, full


# ---------------------------------------------------------------------- #
# compact answers
# ---------------------------------------------------------------------- #
def sequences(frame):
    ok = frame[frame["status"] == "ok"]
    return ok.groupby(["instance", "solution"]).agg(
        plan=("plan", "first"),
        cost=("sequence_cost", "first"),
        actions=("action", lambda a: frozenset(a)),
    )


def test_by_default_one_order_per_plan_and_a_few_plans(explained):
    _, frame, full = explained
    small, every = sequences(frame), sequences(full)
    assert (small.groupby("instance")["plan"].nunique() <= 5).all()
    # one sequence per plan: its cheapest order
    assert not small.reset_index().duplicated(["instance", "plan"]).any()
    assert len(every) >= len(small)
    for label, mine in small.groupby(level="instance"):
        theirs = every.loc[label]
        # the cheapest sequence is always kept, plans are numbered by cost
        assert mine["cost"].iloc[0] == theirs["cost"].min()
        assert mine["plan"].tolist() == list(range(len(mine)))
        assert mine["cost"].is_monotonic_increasing
        for actions, cost in zip(mine["actions"], mine["cost"]):
            assert cost == theirs.loc[theirs["actions"] == actions, "cost"].min()


# ---------------------------------------------------------------------- #
# output that saves
# ---------------------------------------------------------------------- #
def test_the_frame_round_trips_through_parquet(explained, tmp_path):
    _, frame, _ = explained
    frame.to_parquet(tmp_path / "x.parquet")
    back = pd.read_parquet(tmp_path / "x.parquet")
    # the same values and types (pandas may read text back with another storage)
    pd.testing.assert_frame_equal(back, frame, check_dtype=False, check_exact=True)
    assert dict(back.dtypes.astype(str)) == dict(frame.dtypes.astype(str))


def test_the_frame_round_trips_through_csv(explained, tmp_path):
    _, frame, _ = explained
    frame.to_csv(tmp_path / "x.csv", index=False)
    back = read_explanations(tmp_path / "x.csv")
    pd.testing.assert_frame_equal(back, frame, check_dtype=False, atol=1e-12)
    assert dict(back.dtypes.astype(str)) == dict(frame.dtypes.astype(str))


def test_label_text_survives_csv(tmp_path):
    frame = pd.DataFrame(
        {
            "instance": ["a", "b"],
            "plan": pd.array([0, pd.NA], dtype="Int64"),
            "feature": pd.array(["zip", pd.NA], dtype=TEXT),
            "old_value": pd.array(["NA", pd.NA], dtype=TEXT),
            "new_value": pd.array(["007", pd.NA], dtype=TEXT),
            "cost": [1.5, np.nan],
            "target_class": pd.array(["yes", "yes"], dtype=TEXT),
            "status": pd.array(["ok", "no_counterfactual"], dtype=TEXT),
        }
    )
    frame.to_csv(tmp_path / "x.csv", index=False)
    back = read_explanations(tmp_path / "x.csv")
    pd.testing.assert_frame_equal(
        back, frame.astype({"instance": TEXT}), check_dtype=True
    )


# ---------------------------------------------------------------------- #
# grid search, unseen categories, warnings
# ---------------------------------------------------------------------- #
def test_a_cloned_fitted_model_points_to_frozen_estimator(explained, credit_data):
    explainer, _, _ = explained
    X, _ = credit_data
    with pytest.raises(ValueError, match="FrozenEstimator"):
        clone(explainer).fit(X)


def test_rows_with_categories_unseen_in_fit_are_explained(
    credit_data, credit_model, credit_actions, credit_rejected
):
    X, _ = credit_data
    known = X[X["region"] != "east"]
    explainer = SequentialCounterfactualExplainer(
        credit_model,
        actions=credit_actions,
        immutable_features=["region"],
        **SMALL,
    ).fit(known)
    before = {k: list(v) for k, v in explainer.categories_.items()}
    rows = credit_rejected.assign(region="east")  # the model knows "east"
    frame, states = explainer.explain(rows, return_states=True)
    assert (frame["status"] == "ok").any()
    assert set(frame["status"]) <= {"ok", "no_counterfactual"}
    assert (states["region"] == "east").all()
    # the fitted explainer is unchanged
    assert {k: list(v) for k, v in explainer.categories_.items()} == before
    assert (
        "east"
        not in explainer._fitted.schema.categories[
            explainer._fitted.schema.index["region"]
        ]
    )


def test_every_row_already_accepted_warns_about_the_target(
    explained, credit_data, credit_model
):
    explainer, _, _ = explained
    X, _ = credit_data
    accepted = X[credit_model.predict(X) == "good"].iloc[:3]
    with pytest.warns(UserWarning, match=r"Every row .* target class 'good'"):
        explainer.explain(accepted)


def test_importing_and_explaining_quietly_never_imports_tqdm():
    code = (
        "import sys, numpy as np, pandas as pd\n"
        "from sklearn.linear_model import LogisticRegression\n"
        "import sklearn_cscf\n"
        "X = pd.DataFrame({'a': np.arange(20.0), 'b': np.arange(20.0) % 3})\n"
        "y = (X['a'] > 10).astype(int)\n"
        "e = sklearn_cscf.SequentialCounterfactualExplainer(\n"
        "    LogisticRegression().fit(X, y), population_size=10,\n"
        "    n_generations=2, random_state=0).fit(X)\n"
        "e.explain(X.head(3))\n"
        "print('tqdm' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"
    assert "Tqdm" not in out.stderr

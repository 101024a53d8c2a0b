"""Frames to files and back (``_saving.py``; ``write_explanations`` and
``read_explanations``): labels survive CSV and parquet (issue 16)."""

import datetime
import io

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_cscf import (
    Action,
    SequentialCounterfactualExplainer,
    read_explanations,
    replay,
    write_explanations,
)
from sklearn_cscf._frames import TEXT

SMALL = {"population_size": 30, "n_generations": 6, "random_state": 0}


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {"income": rng.uniform(0, 100, 300), "debt": rng.uniform(0, 50, 300)}
    )
    y = (X["income"] - X["debt"] > 40).astype(int)
    model = LogisticRegression().fit(X, y)
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=[
            Action("earn", "income", values=(0.0, 200.0), direction="increase"),
            Action("repay", "debt", values=(0.0, 50.0), direction="decrease"),
        ],
        **SMALL,
    ).fit(X)
    rejected = X[model.predict(X) == 0].iloc[:4].reset_index(drop=True)
    return explainer, rejected


def relabelled(rows, labels):
    return rows.set_axis(pd.Index(labels, dtype=object))


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_zero_padded_labels_come_back_as_text_and_replay(fitted, tmp_path, suffix):
    explainer, rows = fitted
    rows = relabelled(rows, ["007", "010", "100", "011"])
    frame = explainer.explain(rows)
    write_explanations(frame, tmp_path / f"x{suffix}")
    back = read_explanations(tmp_path / f"x{suffix}")
    assert back["instance"].unique().tolist() == ["007", "010", "100", "011"]
    assert "instance_type" not in back.columns
    checked = replay(explainer, rows, back)
    assert checked["passed"].all(), checked.loc[~checked["passed"], "problems"]


def test_zero_padded_labels_survive_a_plain_to_csv_too(fitted):
    explainer, rows = fitted
    rows = relabelled(rows, ["007", "010", "100", "011"])
    frame = explainer.explain(rows)
    back = read_explanations(io.StringIO(frame.to_csv(index=False)))
    assert back["instance"].unique().tolist() == ["007", "010", "100", "011"]
    # while labels written as whole numbers read as numbers
    plain = explainer.explain(relabelled(rows, [7, 10, 100, 11]))
    back = read_explanations(io.StringIO(plain.to_csv(index=False)))
    assert back["instance"].dtype == np.int64
    assert back["instance"].unique().tolist() == [7, 10, 100, 11]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_labels_1_and_the_text_1_stay_two_instances(fitted, tmp_path, suffix):
    explainer, rows = fitted
    rows = relabelled(rows, ["1", 1, 2.5, "x"])
    frame = explainer.explain(rows)
    assert frame["instance"].nunique() == 4
    write_explanations(frame, tmp_path / f"x{suffix}")
    back = read_explanations(tmp_path / f"x{suffix}")
    pd.testing.assert_frame_equal(back, frame)
    assert [type(v) for v in back["instance"].unique()] == [str, int, float, str]
    checked = replay(explainer, rows, back)
    assert checked["passed"].all(), checked.loc[~checked["passed"], "problems"]


@pytest.mark.parametrize(
    "labels", [[7, 10, 100, 11], ["a", "b", "c", "d"]], ids=["int", "str"]
)
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_written_frame_reads_back_equal(fitted, tmp_path, labels, suffix):
    explainer, rows = fitted
    frame = explainer.explain(rows.set_axis(labels))
    write_explanations(frame, tmp_path / f"x{suffix}")
    back = read_explanations(tmp_path / f"x{suffix}")
    # text labels come back as text; which text dtype the index had is not kept
    as_objects = {"instance": object}
    pd.testing.assert_frame_equal(back.astype(as_objects), frame.astype(as_objects))
    assert back["instance"].dtype == (np.int64 if labels[0] == 7 else "string")


def test_labels_a_file_cannot_give_back_are_refused_at_writing(fitted, tmp_path):
    explainer, rows = fitted
    day = datetime.date(2024, 1, 1)
    frame = explainer.explain(relabelled(rows, [day, "b", "c", "d"]))
    with pytest.raises(TypeError, match=r"'instance' column holds labels of type date"):
        write_explanations(frame, tmp_path / "x.csv")
    assert not (tmp_path / "x.csv").exists()


def test_multiindex_rows_are_refused_up_front(fitted):
    explainer, rows = fitted
    rows = rows.set_axis(
        pd.MultiIndex.from_tuples([("a", 1), ("a", 2), ("b", 1), ("b", 2)])
    )
    with pytest.raises(ValueError, match="MultiIndex of 2 levels.*reset_index"):
        explainer.explain(rows)


def test_a_changed_type_column_is_named(tmp_path):
    frame = pd.DataFrame({"instance": ["x"], "status": ["ok"]})
    write_explanations(frame, tmp_path / "x.csv")
    text = (tmp_path / "x.csv").read_text().replace(",str", ",tuple")
    (tmp_path / "x.csv").write_text(text)
    with pytest.raises(ValueError, match="'instance_type' column names the type"):
        read_explanations(tmp_path / "x.csv")


def test_the_frame_round_trips_through_parquet(credit_compact_and_full, tmp_path):
    _, frame, _ = credit_compact_and_full
    frame.to_parquet(tmp_path / "x.parquet")
    back = pd.read_parquet(tmp_path / "x.parquet")
    # the same values and types (pandas may read text back with another storage)
    pd.testing.assert_frame_equal(back, frame, check_dtype=False, check_exact=True)
    assert dict(back.dtypes.astype(str)) == dict(frame.dtypes.astype(str))


def test_the_frame_round_trips_through_csv(credit_compact_and_full, tmp_path):
    _, frame, _ = credit_compact_and_full
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


def test_parquet_and_csv_round_trips_give_the_frame_back(dummies_explained, tmp_path):
    pytest.importorskip("pyarrow")
    _, _, explanations, _ = dummies_explained
    explanations.to_parquet(tmp_path / "e.parquet")
    assert explanations.equals(read_explanations(tmp_path / "e.parquet"))
    assert explanations.equals(read_explanations(str(tmp_path / "e.parquet")))
    explanations.to_csv(tmp_path / "e.csv", index=False)
    assert explanations.equals(read_explanations(tmp_path / "e.csv"))

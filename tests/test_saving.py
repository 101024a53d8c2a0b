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


# ---------------------------------------------------------------------- #
# issue 23: nothing read or written silently wrong
# ---------------------------------------------------------------------- #
def _read(text):
    return read_explanations(io.StringIO(text))


def test_a_fractional_step_is_an_error_not_truncated():
    with pytest.raises(ValueError, match=r"column 'step' holds 2\.9 in row 0"):
        _read("instance,status,step\n1,ok,2.9\n")


@pytest.mark.parametrize(
    "text, words",
    [
        ("instance,status,step\n1,ok,two\n", r"column 'step' holds 'two' in row 0"),
        (
            "instance,status,step,cost\n1,ok,1,=SUM(A1:A3)\n",
            r"column 'cost' holds '=SUM\(A1:A3\)' \(a spreadsheet formula\?\)",
        ),
        # a column that is not explain's is kept (issue 36: see
        # test_trust.py), not refused for holding text
    ],
)
def test_text_where_a_number_belongs_names_the_column_and_row(text, words):
    with pytest.raises(ValueError, match=words):
        _read(text)


@pytest.mark.parametrize(
    "label, kind, words",
    [
        ("7", "integer", r"'instance_type' column names the type 'integer'"),
        ("abc", "int", r"'instance' column holds 'abc', which is not an int"),
        ("maybe", "bool", r"holds 'maybe', which is not a bool"),
        ("9" * 5000, "int", "a label of 5000 digits"),
    ],
    ids=["unknown type", "not an int", "not a bool", "5000 digits"],
)
def test_bad_instance_type_labels_say_what_to_change(label, kind, words):
    text = f"instance,instance_type,status\n{label},{kind},ok\n"
    with pytest.raises(ValueError, match=words):
        _read(text)


def test_a_thirty_digit_label_reads_back_as_it_was():
    frame = pd.DataFrame(
        {"instance": pd.array([10**29 + 7, 5], dtype=object), "status": ["ok"] * 2}
    )
    buffer = io.StringIO()
    write_explanations(frame, buffer)
    buffer.seek(0)
    assert read_explanations(buffer)["instance"].tolist() == [10**29 + 7, 5]


def test_an_empty_text_label_reads_back_as_empty_text():
    frame = pd.DataFrame({"instance": ["", "a"], "status": ["ok", "ok"]})
    buffer = io.StringIO()
    write_explanations(frame, buffer)
    buffer.seek(0)
    back = read_explanations(buffer)["instance"].tolist()
    assert back == ["", "a"]


@pytest.mark.parametrize("name", ["out.xlsx", "out.json", "out.feather", "out.xls"])
def test_csv_is_not_written_under_another_format_s_extension(tmp_path, name):
    frame = pd.DataFrame({"instance": [1], "status": ["ok"]})
    suffix = name.rsplit(".", 1)[1]
    with pytest.raises(ValueError, match=rf"extension '\.{suffix}'"):
        write_explanations(frame, tmp_path / name)
    assert not (tmp_path / name).exists()
    write_explanations(frame, tmp_path / "out.csv.gz")  # compressed CSV is fine
    assert read_explanations(tmp_path / "out.csv.gz")["instance"].tolist() == [1]


def test_parquet_passed_as_an_open_binary_file_is_read_as_parquet(fitted, tmp_path):
    pytest.importorskip("pyarrow")
    explainer, rows = fitted
    frame = explainer.explain(rows)
    path = tmp_path / "out.parquet"
    write_explanations(frame, path)
    with open(path, "rb") as handle:
        back = read_explanations(handle)
    pd.testing.assert_frame_equal(back, read_explanations(path))

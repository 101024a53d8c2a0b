"""The gap to a reference in benchmarks/bench_consistency.py (each seed's least
cost over the best of all runs, or over bench_exact.py's saved reference):
docs/benchmarks.md reports these shares and gaps, so a wrong row match or a
missing plan counted as near would be a wrong claim; no search is run here.
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import bench_consistency as bench  # noqa: E402


def test_the_gap_is_the_cost_over_the_reference_minus_one():
    costs = np.array([[1.0, 1.005], [2.0, 3.0]])
    gap = bench.gaps(costs, [1.0, 2.0])
    assert gap == pytest.approx(np.array([[0.0, 0.005], [0.0, 0.5]]))
    n, within, worst = bench.gap_summary(gap)
    assert n == 2
    assert within == pytest.approx([1.0, 0.5])
    assert worst == pytest.approx([0.0, 0.5])


def test_a_run_without_a_plan_is_infinitely_far_and_a_row_without_one_is_left_out():
    costs = np.array([[np.nan, 1.0], [5.0, 5.0], [0.0, 0.1]])
    gap = bench.gaps(costs, [1.0, np.nan, 0.0])
    assert np.isinf(gap[0, 0]) and gap[0, 1] == 0.0
    assert np.isnan(gap[1]).all()  # no reference: not compared
    assert gap[2, 0] == 0.0 and np.isinf(gap[2, 1])  # a reference of 0
    n, within, worst = bench.gap_summary(gap)
    assert n == 2
    assert within == pytest.approx([0.5, 0.5])
    assert np.isinf(worst).all()


def test_a_search_cheaper_than_the_reference_has_a_negative_gap():
    n, within, worst = bench.gap_summary(bench.gaps([[0.9], [1.0]], [1.0, 1.0]))
    assert n == 2 and within == pytest.approx([1.0])
    assert worst == pytest.approx([0.0])
    assert bench.gaps([[0.9]], [1.0])[0, 0] == pytest.approx(-0.1)


def test_no_row_with_a_reference():
    n, within, worst = bench.gap_summary(bench.gaps([[1.0, 2.0]], [np.inf]))
    assert n == 0 and np.isnan(within).all() and np.isnan(worst).all()


def test_the_exact_reference_is_matched_by_instance_label(tmp_path, capsys):
    saved = pd.DataFrame(
        {"exact": [0.5, np.inf, 0.2], "seed_0": [0.5, np.nan, 0.3]},
        index=[687, 4, 12],
    )
    saved.to_csv(tmp_path / "exact_german.csv")
    rows = pd.DataFrame(index=[4, 99, 687])
    # a directory: the problem's file; labels, not positions, pick the rows
    exact = bench.exact_reference(tmp_path, "german", rows)
    assert exact[0] == np.inf and np.isnan(exact[1]) and exact[2] == 0.5
    assert "1 of the 3 rows" in capsys.readouterr().out  # row 12: not here
    # a file, read for whichever problem is run
    file = bench.exact_reference(tmp_path / "exact_german.csv", "adult", rows)
    np.testing.assert_array_equal(file, exact)
    assert bench.exact_reference(tmp_path, "adult", rows) is None
    assert bench.exact_reference(None, "german", rows) is None

"""The statistics of benchmarks/bench_paper_network.py on hand-made fronts.

docs/paper.md prints what these functions count, so a miscount would be a
wrong claim about the paper; the search itself is not run here.
"""

import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import bench_paper_network as bench  # noqa: E402

EDU, GAIN, HOURS = bench.EDU, bench.GAIN, bench.HOURS


def front(rows):
    """A frame of 'ok' steps from (instance, plan, solution, actions, cost)."""
    records = []
    for instance, plan, solution, actions, cost in rows:
        for step, action in enumerate(actions, start=1):
            records.append(
                {
                    "instance": instance,
                    "plan": plan,
                    "solution": solution,
                    "step": step,
                    "action": action,
                    "sequence_cost": cost,
                    "sequence_effort": cost * 2,
                    "target_proba": 0.3 + 0.1 * step,
                    # add_education: 9 -> 9.5 in instance 0, 9 -> 11.2 else
                    "old_number": 9.0,
                    "new_number": 9.5 if instance == 0 else 11.2,
                    "status": "ok",
                }
            )
    return pd.DataFrame(records)


ROWS = [
    # instance 0: one plan in two orders, the second cheaper
    (0, 0, 0, [GAIN, EDU], 3.0),
    (0, 0, 1, [EDU, GAIN], 2.0),
    (0, 1, 2, ["wait_years"], 4.0),
    # instance 1: hours before gain once, after it once (two plans)
    (1, 0, 0, [HOURS, GAIN], 1.0),
    (1, 1, 1, [GAIN, "enlist", HOURS], 5.0),
]


def test_sequences_keep_the_order_of_the_steps():
    frame = front(ROWS).sample(frac=1, random_state=0)  # rows shuffled
    table = bench.sequences(frame)
    assert table["actions"].tolist() == [tuple(r[3]) for r in ROWS]
    assert table["sequence_cost"].tolist() == [r[4] for r in ROWS]


def test_order_share_counts_only_sequences_with_both_actions():
    table = bench.sequences(front(ROWS))
    assert bench.order_share(table, GAIN, EDU) == (1, 2)  # edu after gain
    assert bench.order_share(table, HOURS, GAIN) == (1, 2)
    assert bench.order_share(table, EDU, "enlist") == (0, 0)


def test_whole_education_levels_gained():
    table = bench.sequences(front(ROWS))
    levels = table.set_index(["instance", "solution"])["edu_levels"]
    assert levels[(0, 0)] == 0 and levels[(0, 1)] == 0  # 9 -> 9.5
    assert pd.isna(levels[(0, 2)])  # no add_education


def test_cheapest_orders_keep_one_sequence_per_plan():
    cheapest = bench.cheapest_orders(bench.sequences(front(ROWS)))
    assert len(cheapest) == 4
    kept = cheapest.set_index(["instance", "plan"])["actions"]
    assert kept[(0, 0)] == (EDU, GAIN)  # the cheaper order of the two


def test_statistics_count_rows_sequences_plans_and_first_actions():
    frame = front(ROWS)
    stats = bench.statistics(frame, bench.sequences(frame), n_rows=3)
    assert (stats["rows"], stats["solved"]) == (3, 2)
    assert (stats["n_sequences"], stats["n_plans"]) == (5, 4)
    assert stats["per_row"][0] == 2.5  # 3 and 2 sequences
    assert stats["plans_per_row"][0] == 2
    assert stats["firsts"][GAIN] == 2
    assert stats["cheapest_firsts"].get(GAIN, 0) == 1
    assert stats["edu_after_gain"] == (1, 2)
    # instance 0's education step stays within level 9: both orders tie
    assert stats["edu_after_gain_tied"] == 1
    assert stats["cheapest_edu_after_gain"] == (0, 1)
    assert stats["lengths"].to_dict() == {1: 1, 2: 3, 3: 1}


def test_effort_difference_is_positive_when_cscf_is_cheaper():
    cscf = bench.sequences(front([(0, 0, 0, [EDU], 1.0), (1, 0, 0, [EDU], 4.0)]))
    scf = bench.sequences(front([(0, 0, 0, [EDU], 2.0), (1, 0, 0, [EDU], 4.0)]))
    diff = bench.effort_two_steps({"CSCF": cscf, "SCF": scf})
    assert diff.tolist() == [0.5, 0.0]  # (B - A) / max(A, B)


def test_rewrite_replaces_only_the_named_blocks(tmp_path):
    doc = tmp_path / "page.md"
    doc.write_text(
        "intro\n<!-- generated: a -->\nold\nlines\n<!-- /generated: a -->\nkept\n"
    )
    bench.rewrite(doc, {"a": "new"})
    assert doc.read_text() == (
        "intro\n<!-- generated: a -->\nnew\n<!-- /generated: a -->\nkept\n"
    )
    with pytest.raises(SystemExit, match="no generated block 'b'"):
        bench.rewrite(doc, {"b": "x"})


def test_the_page_has_every_block_the_script_writes():
    page = (Path(__file__).resolve().parent.parent / "docs" / "paper.md").read_text()
    for name in (
        "run",
        "statistics",
        "cheapest",
        "first_actions",
        "reached",
        "probability",
        "effort",
    ):
        assert f"<!-- generated: {name} -->" in page
        assert f"<!-- /generated: {name} -->" in page

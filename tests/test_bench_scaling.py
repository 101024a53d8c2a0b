"""The scaling model of benchmarks/bench_scaling.py --simulate, on hand-made
block times: joblib's dispatch, the parent's serial work and the row model.

docs/benchmarks.md prints what this model simulates, so a wrong makespan
would be a wrong claim about many cores; no search is run here.
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import bench_scaling as bench  # noqa: E402


def test_one_worker_runs_the_blocks_one_after_the_other():
    assert bench.dispatch([1.0, 2.0, 3.0], 1) == [1.0, 3.0, 6.0]


def test_a_free_worker_takes_the_next_block_in_submission_order():
    # worker 0 runs the long block; worker 1 the three short ones
    assert bench.dispatch([3.0, 1.0, 1.0, 1.0], 2) == [3.0, 1.0, 2.0, 3.0]
    # greedy in submission order, not longest first: the long block comes
    # last and runs alone (longest first would end at 2)
    assert max(bench.dispatch([1.0, 1.0, 2.0], 2)) == 3.0
    assert max(bench.dispatch([2.0, 1.0, 1.0], 2)) == 2.0


def test_more_workers_than_blocks_leave_workers_idle():
    assert bench.dispatch([2.0, 1.0], 8) == [2.0, 1.0]
    with pytest.raises(ValueError, match="n_workers"):
        bench.dispatch([1.0], 0)


@pytest.mark.parametrize(
    "old, smoothed, new",
    [
        (1, 0.01, 2),  # too fast: at most doubles ...
        (4, 0.03, 8),
        (2, 0.15, 4),  # ... or twice the ideal size: 2 * int(2 * 0.2 / 0.15)
        (1, 0.5, 1),  # between 0.2 s and 2 s: unchanged
        (8, 4.0, 1),  # too slow: 2 * int(8 * 0.2 / 4), at least one
        (1, 3.0, 1),  # a single task is never split
    ],
)
def test_joblibs_automatic_batch_size(old, smoothed, new):
    assert bench._auto_batch_size(old, smoothed) == new


def test_fast_tasks_are_batched_so_a_worker_runs_several_at_once():
    # 2 workers, tasks of 0.01 s: pre-dispatched batches of one, then batches
    # of two once the first ends (at 0.01) -> tasks 4 and 5 run together on
    # the worker freed first
    ends = bench.dispatch([0.01] * 6, 2, pre_dispatch=2)
    assert ends[:2] == pytest.approx([0.01, 0.01])
    assert ends[2:4] == pytest.approx([0.02, 0.03])  # batch [2, 3]
    assert ends[4:] == pytest.approx([0.02, 0.03])  # batch [4, 5]
    # a fixed batch size groups the tasks in twos from the start
    assert bench.dispatch([1.0] * 4, 2, batch_size=2) == [1.0, 2.0, 1.0, 2.0]


def test_the_run_time_adds_the_parents_serial_work():
    # blocks end at 2 and 1; the parent makes the pieces in submission order
    # as they arrive: 2 + 0.5, then 2.5 + 0.5; before 1 s and after 1 s
    assert bench.run_time([2.0, 1.0], [0.5, 0.5], 1.0, 1.0, 2) == 5.0
    assert bench.run_time([2.0, 1.0], [0.0, 0.0], 1.0, 1.0, 2) == 4.0
    # one worker is n_jobs=1: the parent runs the blocks and the pieces
    assert bench.run_time([2.0, 1.0], [0.5, 0.5], 0.0, 0.0, 1) == 4.0


def block(positions, generations, active, generation_cpu, post):
    return {
        "positions": positions,
        "generations": generations,
        "active": active,
        "generation_cpu": generation_cpu,
        "setup": 0.0,
        "post": post,
        "cpu": sum(generation_cpu) + post,
    }


def test_the_row_model_rebuilds_the_blocks_it_was_fitted_on():
    # a generation costs 10 ms plus 2 ms per active row; a block 0.1 s plus
    # 0.1 s per row after the search
    run = {
        "blocks": [
            block([0, 1], [3, 1], [2, 1, 1], [0.014, 0.012, 0.012], 0.3),
            block([2], [2], [1, 1], [0.012, 0.012], 0.2),
        ]
    }
    model = bench.RowModel([run])
    assert model.per_generation == pytest.approx(0.01)
    assert model.per_block == pytest.approx(0.1)
    rows = model.rows(run)
    assert [r[0] for r in rows] == [3, 1, 2]
    assert [r[1] for r in rows] == pytest.approx([0.006, 0.002, 0.004])
    for b in run["blocks"]:
        predicted = model.block([rows[k] for k in b["positions"]])
        assert predicted == pytest.approx(b["cpu"])
    # all three rows in one block: the longest row's 3 generations pay the
    # per-generation cost once, and one block's fixed cost
    assert model.block(rows) == pytest.approx(0.01 * 3 + 0.012 + 0.1 + 3 * 0.1)

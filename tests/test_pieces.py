"""Pieces of the output and their assembly in input order
(sklearn_cscf._pieces)."""

import numpy as np
import pandas as pd
from _results import ACTIONS, SCHEMA, TARGETS, ok_result, quick_result

from sklearn_cscf import replay
from sklearn_cscf._pieces import Output, assemble, make_piece
from sklearn_cscf._status import (
    STATUS_ALREADY_TARGET,
    STATUS_NO_COUNTERFACTUAL,
    STATUS_OK,
)

OUTPUT = Output(SCHEMA, ACTIONS, TARGETS)


def test_a_piece_holds_its_rows_and_the_states_transform_reports():
    results = [ok_result(), quick_result(STATUS_ALREADY_TARGET)]
    piece = make_piece(results, [4, 5], pd.Index(["a", "b"]), OUTPUT, True)
    assert piece.positions.tolist() == [4, 5]
    # 3 steps of the first row, one status row of the second
    assert piece.frame_rows.tolist() == [3, 1]
    assert piece.states_rows.tolist() == [5, 0]
    # the cheapest sequence's final state; the row itself when it is accepted
    np.testing.assert_array_equal(piece.finals[0], results[0].final_state(0))
    np.testing.assert_array_equal(piece.finals[1], results[1].x0)


def test_a_piece_shows_what_max_plans_and_all_orders_keep():
    output = Output(SCHEMA, ACTIONS, TARGETS, max_plans=1, all_orders=False)
    piece = make_piece([ok_result()], [0], pd.RangeIndex(1), output, False)
    # the details count every sequence found, the frame shows the kept ones
    assert piece.details["n_solutions"].tolist() == [2]
    assert piece.frame["solution"].tolist() == [0]
    assert piece.states is None


def test_a_row_without_a_sequence_has_missing_final_states():
    piece = make_piece(
        [quick_result(STATUS_NO_COUNTERFACTUAL)], [0], pd.RangeIndex(1), OUTPUT, False
    )
    assert np.isnan(piece.finals[0, 0]) and piece.finals[0, 1] == -1


def test_pieces_are_assembled_in_input_order():
    index = pd.Index(["r0", "r1", "r2", "r3"])
    # pieces finished out of order, and one whose rows are not consecutive
    first = make_piece(
        [quick_result(STATUS_ALREADY_TARGET), ok_result()],
        [1, 3],
        index[[1, 3]],
        OUTPUT,
        True,
    )
    second = make_piece(
        [ok_result(x0=(40.0, "boss")), quick_result(STATUS_NO_COUNTERFACTUAL)],
        [0, 2],
        index[[0, 2]],
        OUTPUT,
        True,
    )
    frame, states, details, finals = assemble([first, second], 4, SCHEMA.n_features)
    assert details["instance"].tolist() == ["r0", "r1", "r2", "r3"]
    assert frame["instance"].tolist() == ["r0"] * 3 + ["r1", "r2"] + ["r3"] * 3
    assert frame["status"].tolist()[3:5] == [STATUS_ALREADY_TARGET, "no_counterfactual"]
    # each row's own steps stay together and in their order
    assert frame.loc[frame["instance"] == "r0", "step"].tolist() == [1, 1, 2]
    assert frame.index.tolist() == list(range(8))
    assert states["instance"].tolist() == ["r0"] * 5 + ["r3"] * 5
    assert finals[0, 0] == 30.0 and finals[1, 0] == 20.0 and np.isnan(finals[2, 0])


def test_no_rows_assemble_to_empty_frames():
    empty = make_piece([], [], pd.Index([]), OUTPUT, False)
    frame, states, details, finals = assemble([empty], 0, SCHEMA.n_features)
    assert frame.empty and details.empty and states is None
    assert finals.shape == (0, 2)
    assert STATUS_OK not in set(frame["status"])


def sequences(frame):
    ok = frame[frame["status"] == "ok"]
    return ok.groupby(["instance", "solution"]).agg(
        plan=("plan", "first"),
        cost=("sequence_cost", "first"),
        actions=("action", lambda a: frozenset(a)),
    )


def test_by_default_one_order_per_plan_and_a_few_plans(credit_compact_and_full):
    _, frame, full = credit_compact_and_full
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


def test_all_values_adds_the_same_steps_with_other_values(
    credit_compact_and_full, credit_rejected
):
    explainer, _, full = credit_compact_and_full
    try:
        explainer.set_params(max_plans=None, all_orders=True, all_values=True)
        frame = explainer.explain(credit_rejected)
        checked = replay(explainer, credit_rejected, frame)
    finally:
        explainer.set_params(max_plans=5, all_orders=False, all_values=False)
    assert checked["passed"].all()
    every, before = in_order(frame), in_order(full)
    variants = every.groupby(["instance", "steps"], sort=False)
    # the same plans and orders, each at the same cheapest values as before ...
    pd.testing.assert_series_equal(
        variants["cost"].min().sort_index(),
        before.groupby(["instance", "steps"])["cost"].min().sort_index(),
    )
    assert not before.duplicated(["instance", "steps"]).any()
    # ... and some with other values: nearer (Gower distance), but dearer
    assert (variants.size() > 1).any()
    for _, same in variants:
        assert same["cost"].is_monotonic_increasing
        assert (np.diff(same["gower"].to_numpy()) < 0).all()


def in_order(frame):
    """A row per sequence: its steps (actions in order), cost and Gower
    distance, by cost."""
    ok = frame[frame["status"] == "ok"].sort_values("step", kind="stable")
    table = ok.groupby(["instance", "solution"]).agg(
        cost=("sequence_cost", "first"),
        gower=("gower_distance", "first"),
        steps=("action", tuple),
    )
    return table.reset_index().sort_values(["instance", "cost"], kind="stable")

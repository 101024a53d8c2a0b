"""The tidy output frames (sklearn_cscf._frames) from hand-made results."""

import numpy as np
import pandas as pd
import pytest
from _results import ACTIONS, SCHEMA, TARGETS, ok_result, quick_result

from sklearn_cscf._frames import (
    COLUMNS,
    build_details,
    build_frame,
    build_states,
    check_frame,
    display_value,
    is_ok,
    sequences,
)
from sklearn_cscf._status import STATUS_ALREADY_TARGET, STATUS_ERROR, STATUS_OK


def test_one_row_per_step_and_one_per_other_instance():
    results = [ok_result(), quick_result(STATUS_ALREADY_TARGET)]
    index = pd.Index(["ann", "bob"])
    frame = build_frame(results, index, SCHEMA, ACTIONS, TARGETS)
    assert list(frame.columns) == list(COLUMNS)
    assert frame["instance"].tolist() == ["ann"] * 3 + ["bob"]
    ok = frame[frame["status"] == STATUS_OK]
    assert ok["solution"].tolist() == [0, 1, 1]
    assert ok["step"].tolist() == [1, 1, 2]
    assert ok["action"].tolist() == ["earn", "earn", "work"]
    assert ok["old_value"].tolist() == ["10", "10", "none"]
    assert ok["new_value"].tolist() == ["30", "30", "clerk"]
    # categorical features have no numbers
    assert ok["new_number"].iloc[:2].tolist() == [30.0, 30.0]
    assert np.isnan(ok["new_number"].iloc[2])
    assert ok["cost"].tolist() == [2.0, 2.0, 1.0]
    assert ok["sequence_cost"].tolist() == [2.0, 3.0, 3.0]
    assert ok["sequence_effort"].tolist() == [4.0, 6.0, 6.0]
    assert ok["target_proba"].tolist() == [0.6, 0.55, 0.9]
    assert ok["length"].tolist() == [1, 2, 2]
    # both sequences use different sets of actions: two plans
    assert ok["plan"].tolist() == [0, 1, 1]
    assert frame["target_class"].tolist() == ["yes"] * 4
    other = frame.iloc[3]
    assert other["status"] == STATUS_ALREADY_TARGET and pd.isna(other["step"])


def test_extra_objectives_follow_the_gower_distance():
    result = ok_result()
    result.objectives["plausibility"] = np.array([0.1, 0.2])
    frame = build_frame(
        [result],
        pd.RangeIndex(1),
        SCHEMA,
        ACTIONS,
        TARGETS,
        objectives=("plausibility",),
    )
    columns = list(frame.columns)
    assert columns[columns.index("gower_distance") + 1] == "plausibility"
    assert frame["plausibility"].tolist() == [0.1, 0.2, 0.2]


def test_an_unknown_target_is_missing_and_an_error_keeps_its_message():
    failed = quick_result(STATUS_ERROR, message="ValueError: boom")
    failed.target = -1  # the model failed on the row: its target is unknown
    frame = build_frame([failed], pd.Index([7]), SCHEMA, ACTIONS, TARGETS)
    assert pd.isna(frame["target_class"].iloc[0])
    assert frame["message"].iloc[0] == "ValueError: boom"
    assert frame["instance"].dtype == pd.Index([7]).dtype


def test_states_from_the_instance_to_the_last_step():
    results = [ok_result(), quick_result(STATUS_ALREADY_TARGET)]
    states = build_states(results, pd.Index(["ann", "bob"]), SCHEMA)
    # 1 + 1 and 1 + 2 states; an instance without sequences has none
    assert states["step"].tolist() == [0, 1, 0, 1, 2]
    assert states["income"].tolist() == [10.0, 30.0, 10.0, 30.0, 30.0]
    assert states["job"].tolist() == ["none", "none", "none", "none", "clerk"]


def test_details_one_row_per_instance():
    results = [ok_result(), quick_result(STATUS_ERROR, message="boom")]
    details = build_details(results, pd.Index(["ann", "bob"]))
    assert details["n_solutions"].tolist() == [2, 0]
    assert details["status"].tolist() == [STATUS_OK, STATUS_ERROR]
    assert details["message"].tolist()[1] == "boom"


def test_display_values_as_people_read_them():
    assert display_value(SCHEMA, 0, 30.0) == "30"
    assert display_value(SCHEMA, 0, 0.125) == "0.125"
    assert display_value(SCHEMA, 0, np.nan) is None
    assert display_value(SCHEMA, 1, -1.0) is None


# ---------------------------------------------------------------------- #
# the frames the public functions take
# ---------------------------------------------------------------------- #
def test_check_frame_names_the_argument_and_what_gives_it():
    frame = pd.DataFrame({"instance": [0], "status": [STATUS_OK]})
    assert check_frame(frame, ["instance"]) is frame
    with pytest.raises(TypeError, match="explanations must be the DataFrame"):
        check_frame([1], ["instance"])
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['step'\]"):
        check_frame(frame, ["instance", "step"])
    with pytest.raises(TypeError, match="explanations, states = explainer.explain"):
        check_frame((frame, frame), ["instance"], unpack="return_states")


def test_is_ok_treats_a_missing_status_as_not_ok():
    frame = pd.DataFrame({"status": pd.array([STATUS_OK, None, "error"], "string")})
    assert is_ok(frame).tolist() == [True, False, False]


def test_one_table_per_sequence_holds_what_every_reader_needs():
    # a whole frame: two people without a sequence around one with two
    results = [
        quick_result(STATUS_ALREADY_TARGET),
        ok_result(),
        quick_result(STATUS_ALREADY_TARGET),
    ]
    index = pd.Index(["amy", "ann", "bob"])
    frame = build_frame(results, index, SCHEMA, ACTIONS, TARGETS)
    table = sequences(frame.iloc[::-1])  # the steps in any order
    assert table["instance"].tolist() == ["ann", "ann"]
    # the instance's position among the frame's instances (reversed: bob, ann)
    assert table["code"].tolist() == [1, 1]
    assert sequences(frame)["code"].tolist() == [1, 1]
    assert table["solution"].tolist() == [0, 1]
    assert table["actions"].tolist() == [("earn",), ("earn", "work")]
    assert table["length"].tolist() == [1, 2]
    assert table["cost"].tolist() == [2.0, 3.0]
    assert table["sequence_effort"].tolist() == [4.0, 6.0]
    assert table["gower_distance"].notna().all()
    # the probability after the last step, not after the first
    assert table["target_proba"].tolist() == [0.6, 0.9]
    assert table["plan"].tolist() == [0, 1]


def test_the_table_of_sequences_names_a_missing_value():
    frame = build_frame([ok_result()], pd.Index(["ann"]), SCHEMA, ACTIONS, TARGETS)
    frame.loc[2, "gower_distance"] = np.nan
    assert len(sequences(frame)) == 2  # not asked for: no error
    with pytest.raises(
        ValueError, match=r"instance 'ann' has a NaN gower_distance \(solution 1\)"
    ):
        sequences(frame, required=["sequence_cost", "gower_distance"])

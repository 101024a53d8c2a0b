"""Choosing one plan per person, and the summary of the chosen plans."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sklearn_cscf import (
    SequentialCounterfactualExplainer,
    choose_plan,
    describe,
    summarize_recourse,
)
from sklearn_cscf._frames import COLUMNS

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "choose_a_plan.py"


def frame_of(people, failed=(), message=False):
    """A frame like explain's, with its ``message`` column if ``message``.
    ``people`` maps each instance label to its sequences ``(actions,
    sequence_cost, gower_distance[, final proba])``, in solution order;
    ``failed`` holds ``(label, status)`` of the others. Each step costs an
    equal share of the sequence cost, with effort twice that."""
    rows = []
    for label, sequences in people.items():
        plans = {}
        for solution, (actions, cost, gower, *proba) in enumerate(sequences):
            final = proba[0] if proba else 0.9
            plan = plans.setdefault(frozenset(actions), len(plans))
            for step, action in enumerate(actions, start=1):
                rows.append(
                    {
                        "instance": label,
                        "plan": plan,
                        "solution": solution,
                        "step": step,
                        "action": action,
                        "feature": f"{action}_feature",
                        "old_value": str(step - 1),
                        "new_value": str(step),
                        "old_number": float(step - 1),
                        "new_number": float(step),
                        "effort": 2 * cost / len(actions),
                        "discount": 0.5,
                        "cost": cost / len(actions),
                        "target_proba": final * step / len(actions),
                        "sequence_cost": cost,
                        "sequence_effort": 2 * cost,
                        "gower_distance": gower,
                        "length": len(actions),
                        "target_class": 1,
                        "status": "ok",
                    }
                )
    for label, status in failed:
        rows.append({"instance": label, "target_class": 1, "status": status})
    columns = [name for name in COLUMNS if name != "message"]
    frame = pd.DataFrame(rows, columns=columns)
    frame = frame.astype({"plan": "Int64", "solution": "Int64", "step": "Int64"})
    frame = frame.astype({"length": "Int64", "status": "string"})
    if message:
        frame["message"] = pd.array([None] * len(frame), dtype="string")
    return frame


def chosen_solutions(chosen):
    """``{instance: solution}`` of the chosen sequences (statuses for the rest)."""
    return {
        label: (
            int(rows["solution"].iloc[0])
            if rows["status"].iloc[0] == "ok"
            else rows["status"].iloc[0]
        )
        for label, rows in chosen.groupby("instance", sort=False)
    }


# (cost, gower): the front is solutions 0, 1 and 2 (3 is dominated by 1);
# normalised over it, cost (0, 1/3, 1) and gower (1, 1/7, 0): the sums are
# 1, 10/21 and 1, so the knee is solution 1
FRONT = [
    (("save",), 1.0, 0.40),
    (("study",), 2.0, 0.10),
    (("move", "save"), 4.0, 0.05),
    (("quit",), 3.0, 0.30),
]


# ---------------------------------------------------------------------- #
# The knee
# ---------------------------------------------------------------------- #
def test_knee_of_a_hand_computed_front():
    chosen = choose_plan(frame_of({"p": FRONT}))
    assert chosen_solutions(chosen) == {"p": 1}
    assert chosen["action"].tolist() == ["study"]


def test_knee_ignores_dominated_sequences_when_normalising():
    # a dominated, very expensive sequence would squeeze the costs of the
    # front together if it took part in the normalisation
    people = {"p": [*FRONT, (("quit",), 100.0, 0.45)]}
    assert chosen_solutions(choose_plan(frame_of(people))) == {"p": 1}


def test_knee_of_a_single_point_front():
    # solution 1 is cheaper and closer than every other: the front is it alone
    people = {"p": [(("a",), 2.0, 0.3), (("b",), 1.0, 0.1), (("c",), 3.0, 0.2)]}
    assert chosen_solutions(choose_plan(frame_of(people))) == {"p": 1}


def test_knee_of_a_two_point_front_is_the_cheaper():
    # both points lie on the line between the extremes; not numbered by cost
    people = {"p": [(("a",), 3.0, 0.1), (("b",), 1.0, 0.5)]}
    assert chosen_solutions(choose_plan(frame_of(people))) == {"p": 1}


def test_knee_ties_on_a_straight_front_go_to_the_cheapest():
    # three points on a straight line: the normalised sums are all 1 up to
    # rounding (the middle one's is 0.99999999999999989 in floating point)
    people = {"p": [(("a",), 1.2, 0.7 * 0.8), (("b",), 2.0, 0.0), (("c",), 1.0, 0.7)]}
    assert chosen_solutions(choose_plan(frame_of(people))) == {"p": 2}


def test_ties_broken_by_steps_then_gower_then_solution():
    # the same cost and Gower distance: the fewer steps win
    people = {"p": [(("a", "b"), 1.0, 0.2), (("c",), 1.0, 0.2)]}
    assert chosen_solutions(choose_plan(frame_of(people))) == {"p": 1}
    # the cheapest with equal costs and steps: the lower Gower distance
    people = {"p": [(("a",), 1.0, 0.3), (("c",), 1.0, 0.2)]}
    chosen = choose_plan(frame_of(people), method="cheapest")
    assert chosen_solutions(chosen) == {"p": 1}
    # everything equal: the lower solution number
    people = {"p": [(("a",), 1.0, 0.2), (("c",), 1.0, 0.2)]}
    for method in ("knee", "cheapest"):
        assert chosen_solutions(choose_plan(frame_of(people), method=method)) == {
            "p": 0
        }


def test_knee_of_three_objectives():
    # (cost, gower, length): solution 2 is dominated by none (fewest steps);
    # normalised: (0, 1, 1), (1/3, 0, 1) and (1, 0.5, 0): sums 2, 4/3, 1.5
    people = {
        "p": [
            (("a", "b"), 1.0, 0.30),
            (("c", "d"), 2.0, 0.10),
            (("e",), 4.0, 0.20),
        ]
    }
    frame = frame_of(people)
    assert chosen_solutions(choose_plan(frame)) == {"p": 0}  # the two-point front
    objectives = ["sequence_cost", "gower_distance", "length"]
    chosen = choose_plan(frame, objectives=objectives)
    assert chosen_solutions(chosen) == {"p": 1}


def test_knee_of_cost_and_final_probability():
    # the probability after the last step is maximised: normalised cost
    # (0, 1/3, 1) and shortfall from the best probability (1, 1/8, 0)
    people = {
        "p": [
            (("a",), 1.0, 0.1, 0.55),
            (("b", "c"), 2.0, 0.2, 0.90),
            (("d",), 4.0, 0.3, 0.95),
        ]
    }
    chosen = choose_plan(frame_of(people), objectives=["sequence_cost", "target_proba"])
    assert chosen_solutions(chosen) == {"p": 1}
    assert chosen["step"].tolist() == [1, 2]


# ---------------------------------------------------------------------- #
# Weights
# ---------------------------------------------------------------------- #
def test_weights_move_the_choice_along_the_front():
    frame = frame_of({"p": FRONT})
    # normalised (cost, gower): (0, 1), (1/3, 1/7), (1, 0)
    cases = [
        ({"sequence_cost": 1, "gower_distance": 1}, 1),  # the knee
        ({"sequence_cost": 10, "gower_distance": 1}, 0),  # 0.09, 0.32, 0.91
        ({"sequence_cost": 1, "gower_distance": 10}, 2),  # 0.91, 0.16, 0.09
        ({"gower_distance": 1}, 2),
        ({"sequence_cost": 0, "gower_distance": 1}, 2),  # a zero weight: ignored
        ({"sequence_cost": 1}, 0),
    ]
    for weights, solution in cases:
        chosen = choose_plan(frame, method="weighted", weights=weights)
        assert chosen_solutions(chosen) == {"p": solution}, weights


def test_equal_weights_are_the_knee():
    people = {
        "p": FRONT,
        "q": [(("a",), 1.0, 0.5), (("b",), 1.5, 0.2), (("c",), 5.0, 0.0)],
    }
    frame = frame_of(people)
    weighted = choose_plan(
        frame,
        method="weighted",
        weights=pd.Series({"sequence_cost": 2.0, "gower_distance": 2.0}),
    )
    pd.testing.assert_frame_equal(weighted, choose_plan(frame))


def test_weights_on_effort_and_length():
    # (effort, length): (2, 2), (2.4, 1) and (50, 1), the last dominated; the
    # cheapest (solution 2) costs little only thanks to its discounts
    people = {"p": [(("a", "b"), 1.0, 0.2), (("c",), 1.2, 0.2), (("d",), 0.4, 0.9)]}
    frame = frame_of(people)
    frame.loc[frame["solution"] == 2, "sequence_effort"] = 50.0
    # normalised over the front: (0, 1) and (1, 0)
    for weights, solution in [
        ({"sequence_effort": 1, "length": 2}, 1),
        ({"sequence_effort": 2, "length": 1}, 0),
        ({"sequence_effort": 1, "length": 1}, 0),  # a tie: the cheaper
    ]:
        chosen = choose_plan(frame, method="weighted", weights=weights)
        assert chosen_solutions(chosen) == {"p": solution}, weights


# ---------------------------------------------------------------------- #
# The cheapest, and max_steps
# ---------------------------------------------------------------------- #
def test_cheapest_of_at_most_k_steps():
    people = {
        "p": [(("a", "b"), 1.0, 0.3), (("c",), 2.0, 0.4), (("d",), 3.0, 0.1)],
        "q": [(("a", "b", "c"), 1.0, 0.3), (("a", "d"), 2.0, 0.4)],
    }
    frame = frame_of(people)
    assert chosen_solutions(choose_plan(frame, method="cheapest")) == {"p": 0, "q": 0}
    chosen = choose_plan(frame, method="cheapest", max_steps=2)
    assert chosen_solutions(chosen) == {"p": 0, "q": 1}
    chosen = choose_plan(frame, method="cheapest", max_steps=1)
    assert chosen_solutions(chosen) == {"p": 1, "q": "exceeds_max_steps"}
    # max_steps works with every method: the knee of the one-step sequences
    assert chosen_solutions(choose_plan(frame, max_steps=1)) == {
        "p": 1,
        "q": "exceeds_max_steps",
    }


def test_an_instance_without_a_short_enough_sequence_gets_a_status_row():
    frame = frame_of({"q": [(("a", "b", "c"), 1.0, 0.3), (("a", "d"), 2.0, 0.4)]})
    chosen = choose_plan(frame, method="cheapest", max_steps=1)
    assert len(chosen) == 1
    row = chosen.iloc[0]
    assert row["instance"] == "q"
    assert row["status"] == "exceeds_max_steps"
    assert row["target_class"] == 1
    blank = [c for c in frame if c not in ("instance", "target_class", "status")]
    assert chosen[blank].isna().all().all()
    assert list(chosen.columns) == list(frame.columns)  # no message column added
    assert chosen.dtypes.equals(frame.dtypes)
    # with a message column, the message says why
    with_message = frame_of(
        {"q": [(("a", "b", "c"), 1.0, 0.3), (("a", "d"), 2.0, 0.4)]}, message=True
    )
    chosen = choose_plan(with_message, method="cheapest", max_steps=1)
    assert chosen["message"].tolist() == [
        "its shortest sequence has 2 steps (max_steps=1)"
    ]
    assert chosen.dtypes.equals(with_message.dtypes)


# ---------------------------------------------------------------------- #
# The frame that comes back
# ---------------------------------------------------------------------- #
def test_rows_of_the_chosen_sequences_in_frame_order():
    people = {"b": FRONT, "a": [(("x", "y"), 1.0, 0.1)]}
    frame = frame_of(
        people, failed=[("c", "no_counterfactual"), ("d", "already_target")]
    )
    # rows shuffled: the steps come back in order
    shuffled = frame.sample(frac=1.0, random_state=0)
    chosen = choose_plan(shuffled)
    assert (
        chosen["instance"].unique().tolist() == shuffled["instance"].unique().tolist()
    )
    assert chosen.index.equals(pd.RangeIndex(len(chosen)))
    assert list(chosen.columns) == list(frame.columns)
    assert chosen.dtypes.equals(frame.dtypes)
    a = chosen[chosen["instance"] == "a"]
    assert a["step"].tolist() == [1, 2]
    assert a["action"].tolist() == ["x", "y"]
    # the rows are the frame's own, unchanged (plan and solution numbers too)
    expected = frame[(frame["instance"] == "b") & (frame["solution"] == 1)]
    pd.testing.assert_frame_equal(
        chosen[chosen["instance"] == "b"].reset_index(drop=True),
        expected.reset_index(drop=True),
    )
    # the status rows of the instances without a sequence are kept as they are
    others = chosen[chosen["instance"].isin(["c", "d"])]
    assert dict(zip(others["instance"], others["status"])) == {
        "c": "no_counterfactual",
        "d": "already_target",
    }


def test_an_error_row_keeps_its_message():
    frame = frame_of({"p": FRONT}, failed=[("e", "error")], message=True)
    frame.loc[frame["instance"] == "e", "message"] = "predict_proba failed"
    for options in ({}, {"method": "cheapest", "max_steps": 1}):
        chosen = choose_plan(frame, **options)
        error = chosen[chosen["instance"] == "e"]
        assert error[["status", "message"]].values.tolist() == [
            ["error", "predict_proba failed"]
        ]
    summary = summarize_recourse(frame)
    assert summary["n_people"].tolist() == [1]  # of the one person with a plan


def test_choosing_again_changes_nothing():
    frame = frame_of(
        {"p": FRONT, "q": [(("a", "b"), 1.0, 0.3), (("c",), 2.0, 0.1)]},
        failed=[("r", "no_counterfactual")],
    )
    chosen = choose_plan(frame, method="cheapest", max_steps=1)
    for options in (
        {},
        {"method": "cheapest"},
        {"method": "weighted", "weights": {"length": 1}},
        {"max_steps": 1},
    ):
        pd.testing.assert_frame_equal(choose_plan(chosen, **options), chosen)


def test_compacted_frame_with_gaps_in_the_numbers():
    frame = frame_of({"p": FRONT})
    # a compacted frame: solution 0 and plan 0 dropped
    compact = frame[frame["solution"] != 0]
    chosen = choose_plan(compact, method="cheapest")
    assert chosen_solutions(chosen) == {"p": 1}
    assert chosen["plan"].tolist() == [1]


def test_frame_read_back_from_csv(tmp_path):
    frame = frame_of(
        {
            7: FRONT,
            8: [(("a", "b", "c"), 1.0, 0.3), (("a", "d"), 2.0, 0.4)],
        },
        failed=[(9, "no_counterfactual")],
    )
    frame.to_csv(tmp_path / "explanations.csv", index=False)
    back = pd.read_csv(tmp_path / "explanations.csv")
    for options in ({}, {"method": "cheapest", "max_steps": 2}):
        assert chosen_solutions(choose_plan(back, **options)) == chosen_solutions(
            choose_plan(frame, **options)
        )
    # only sequences, numbers as int64: the status row still fits
    ok_only = back[back["status"] == "ok"].astype({"solution": "int64"})
    chosen = choose_plan(ok_only, method="cheapest", max_steps=1)
    assert chosen_solutions(chosen) == {7: 0, 8: "exceeds_max_steps"}
    assert chosen["solution"].isna().tolist() == [False, True]
    # a message column read back all empty (float NaN) takes the message
    frame_of({8: [(("a", "b"), 1.0, 0.3)]}, message=True).to_csv(
        tmp_path / "messages.csv", index=False
    )
    back = pd.read_csv(tmp_path / "messages.csv")
    assert back["message"].dtype == float
    chosen = choose_plan(back, max_steps=1)
    assert chosen["message"].tolist() == [
        "its shortest sequence has 2 steps (max_steps=1)"
    ]


def test_empty_frame():
    frame = frame_of({})
    chosen = choose_plan(frame)
    assert chosen.empty
    assert list(chosen.columns) == list(frame.columns)


# ---------------------------------------------------------------------- #
# Errors
# ---------------------------------------------------------------------- #
@pytest.fixture
def frame():
    return frame_of({"p": FRONT})


def test_not_a_frame(frame):
    with pytest.raises(TypeError, match="DataFrame returned by"):
        choose_plan(frame.to_dict())
    with pytest.raises(TypeError, match="unpack"):
        choose_plan((frame, frame))


def test_missing_columns(frame):
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['gower_distance'\]"):
        choose_plan(frame.drop(columns="gower_distance"))
    # the cheapest needs no Gower distance, nor a length column
    chosen = choose_plan(
        frame.drop(columns=["gower_distance", "length"]), method="cheapest"
    )
    assert chosen_solutions(chosen) == {"p": 0}
    with pytest.raises(ValueError, match=r"\['sequence_effort'\]"):
        choose_plan(
            frame.drop(columns="sequence_effort"),
            method="weighted",
            weights={"sequence_effort": 1},
        )


@pytest.mark.parametrize(
    "options, error, message",
    [
        ({"method": "best"}, ValueError, r"'method' parameter of \w+ must be a str"),
        ({"method": None}, ValueError, r"'method' parameter of \w+ must be a str"),
        ({"method": "weighted"}, ValueError, "needs weights"),
        (
            {"method": "weighted", "weights": {"cost": 1}},
            ValueError,
            "unknown objective 'cost'",
        ),
        (
            {"method": "weighted", "weights": {"length": -1}},
            ValueError,
            r"weights\['length'\] must be a finite number >= 0, got -1",
        ),
        (
            {"method": "weighted", "weights": {"length": float("nan")}},
            ValueError,
            r"weights\['length'\]",
        ),
        (
            {"method": "weighted", "weights": {"length": "1"}},
            TypeError,
            r"weights\['length'\] must be a number",
        ),
        (
            {"method": "weighted", "weights": {"length": 0, "sequence_cost": 0.0}},
            ValueError,
            "all zero",
        ),
        ({"method": "weighted", "weights": {}}, ValueError, "all zero"),
        ({"method": "weighted", "weights": [1, 2]}, TypeError, "must map"),
        ({"weights": {"length": 1}}, ValueError, "weights is for method='weighted'"),
        (
            {"method": "cheapest", "objectives": ["length", "sequence_cost"]},
            ValueError,
            "objectives is for method='knee'",
        ),
        ({"objectives": ["sequence_cost"]}, ValueError, "at least two objectives"),
        (
            {"objectives": ["sequence_cost", "sequence_cost"]},
            ValueError,
            "twice",
        ),
        (
            {"objectives": ["sequence_cost", "distance"]},
            ValueError,
            "unknown objective 'distance'",
        ),
        ({"objectives": "sequence_cost"}, TypeError, "list of objective names"),
        ({"max_steps": 0}, ValueError, "max_steps must be a positive integer"),
        ({"max_steps": 1.5}, ValueError, "max_steps must be a positive integer"),
        ({"max_steps": True}, ValueError, "max_steps must be a positive integer"),
    ],
)
def test_bad_options_name_the_culprit(frame, options, error, message):
    with pytest.raises(error, match=message):
        choose_plan(frame, **options)
    with pytest.raises(error, match=message):
        summarize_recourse(frame, **options)


def test_broken_sequences_and_missing_objectives(frame):
    with pytest.raises(ValueError, match=r"solution 2 of instance 'p' has the steps"):
        choose_plan(frame.drop(index=frame.index[3]))
    missing = frame.copy()
    missing.loc[missing["solution"] == 1, "gower_distance"] = np.nan
    with pytest.raises(ValueError, match="instance 'p' has a NaN gower_distance"):
        choose_plan(missing)
    no_proba = frame.assign(target_proba=np.nan)
    with pytest.raises(ValueError, match="NaN target_proba"):
        choose_plan(no_proba, objectives=["sequence_cost", "target_proba"])
    # the knee of cost and Gower distance needs no probability
    assert chosen_solutions(choose_plan(no_proba)) == {"p": 1}
    no_solution = frame.astype({"solution": "Float64"})
    no_solution.loc[0, "solution"] = np.nan
    with pytest.raises(ValueError, match="has status 'ok' but no solution"):
        choose_plan(no_solution)


# ---------------------------------------------------------------------- #
# summarize_recourse
# ---------------------------------------------------------------------- #
def test_summary_of_hand_built_plans():
    frame = frame_of(
        {
            1: [(("study", "save"), 2.0, 0.1)],
            2: [(("save",), 1.0, 0.1), (("move",), 5.0, 0.0)],
            3: [(("save", "move"), 4.0, 0.2)],
            4: [(("move", "study", "save"), 6.0, 0.2)],
        },
        failed=[(5, "no_counterfactual")],
    )
    summary = summarize_recourse(frame, method="cheapest")
    assert list(summary.columns) == [
        "action",
        "feature",
        "n_people",
        "share",
        "n_first",
        "share_first",
        "mean_step",
        "mean_cost",
        "mean_effort",
    ]
    # save: all four people (steps 2, 1, 1, 3); move: 3 and 4 (steps 2, 1);
    # study: 1 and 4 (steps 1, 2); ties on n_people broken by n_first, name
    assert summary["action"].tolist() == ["save", "move", "study"]
    assert summary["feature"].tolist() == [
        "save_feature",
        "move_feature",
        "study_feature",
    ]
    assert summary["n_people"].tolist() == [4, 2, 2]
    np.testing.assert_allclose(summary["share"], [1.0, 0.5, 0.5])  # of 4, not 5
    assert summary["n_first"].tolist() == [2, 1, 1]
    np.testing.assert_allclose(summary["share_first"], [0.5, 0.25, 0.25])
    np.testing.assert_allclose(summary["mean_step"], [7 / 4, 1.5, 1.5])
    # step costs: save 1 (of 2), 1, 2 (of 4), 2 (of 6); move 2, 2; study 1, 2
    np.testing.assert_allclose(summary["mean_cost"], [1.5, 2.0, 1.5])
    np.testing.assert_allclose(summary["mean_effort"], [3.0, 4.0, 3.0])
    assert summary.index.equals(pd.RangeIndex(3))


def test_summary_chooses_first_or_keeps_a_chosen_frame():
    frame = frame_of({"p": FRONT, "q": [(("save",), 1.0, 0.1)]})
    # the knee: study for p, save for q; the cheapest: save for both
    knee = summarize_recourse(frame)
    assert dict(zip(knee["action"], knee["n_people"])) == {"save": 1, "study": 1}
    cheapest = summarize_recourse(frame, method="cheapest")
    assert dict(zip(cheapest["action"], cheapest["n_people"])) == {"save": 2}
    pd.testing.assert_frame_equal(
        summarize_recourse(choose_plan(frame, method="cheapest")), cheapest
    )
    # a chosen frame is kept, whatever the method
    pd.testing.assert_frame_equal(
        summarize_recourse(choose_plan(frame, method="cheapest"), method="knee"),
        cheapest,
    )


def test_summary_without_any_plan():
    frame = frame_of({}, failed=[(1, "no_counterfactual")])
    summary = summarize_recourse(frame)
    assert summary.empty
    assert "share_first" in summary.columns
    summary = summarize_recourse(frame_of({1: [(("a", "b"), 1.0, 0.1)]}), max_steps=1)
    assert summary.empty


def test_summary_needs_the_step_columns():
    frame = frame_of({"p": FRONT})
    with pytest.raises(ValueError, match=r"\['effort'\]"):
        summarize_recourse(frame.drop(columns="effort"))


# ---------------------------------------------------------------------- #
# A frame from the explainer itself
# ---------------------------------------------------------------------- #
def test_on_a_real_frame(
    credit_data, credit_model, credit_actions, credit_graph, credit_rejected, tmp_path
):
    X, _ = credit_data
    explainer = SequentialCounterfactualExplainer(
        credit_model,
        actions=credit_actions,
        feature_graph=credit_graph,
        immutable_features=["region"],
        population_size=40,
        n_generations=10,
        random_state=0,
    ).fit(X)
    rejected = credit_rejected.iloc[:4]
    explanations = explainer.explain(rejected)
    ok = explanations[explanations["status"] == "ok"]
    assert ok["instance"].nunique() > 0
    sequences = ok.groupby(["instance", "solution"]).first()
    for options in (
        {},
        {"method": "weighted", "weights": {"sequence_cost": 1, "target_proba": 2}},
        {"method": "cheapest", "max_steps": 1},
    ):
        chosen = choose_plan(explanations, **options)
        assert chosen["instance"].unique().tolist() == rejected.index.tolist()
        picked = chosen[chosen["status"] == "ok"]
        assert (picked.groupby("instance")["solution"].nunique() == 1).all()
        for label, rows in picked.groupby("instance"):
            # the rows of one of the instance's own sequences, whole
            solution = rows["solution"].iloc[0]
            own = ok[(ok["instance"] == label) & (ok["solution"] == solution)]
            pd.testing.assert_frame_equal(
                rows.reset_index(drop=True), own.reset_index(drop=True)
            )
    # the cheapest is solution 0 (solutions are numbered by cost)
    cheapest = choose_plan(explanations, method="cheapest")
    assert set(cheapest.loc[cheapest["status"] == "ok", "solution"]) == {0}
    # the knee is on the front of cost and Gower distance
    knee = choose_plan(explanations)
    for label, rows in knee[knee["status"] == "ok"].groupby("instance"):
        mine = sequences.loc[label]
        pick = mine.loc[rows["solution"].iloc[0]]
        better = (mine["sequence_cost"] <= pick["sequence_cost"]) & (
            mine["gower_distance"] <= pick["gower_distance"]
        )
        strictly = (mine["sequence_cost"] < pick["sequence_cost"]) | (
            mine["gower_distance"] < pick["gower_distance"]
        )
        assert not (better & strictly).any()
    # the summary counts the knee plans
    summary = summarize_recourse(explanations)
    assert (
        summary["n_first"].sum()
        == knee.loc[knee["status"] == "ok", "instance"].nunique()
    )
    # and the text of a chosen frame reads like the frame's
    assert "#" in describe(knee)
    # the same choice from the CSV
    explanations.to_csv(tmp_path / "e.csv", index=False)
    back = choose_plan(pd.read_csv(tmp_path / "e.csv"))
    assert chosen_solutions(back) == chosen_solutions(knee)


@pytest.mark.slow  # runs an example script (pytest -m slow; a step of .ci/run)
def test_example_runs_with_a_tiny_budget(tmp_path):
    completed = subprocess.run(
        [
            sys.executable,
            str(EXAMPLE),
            "--n-instances",
            "4",
            "--population-size",
            "60",
            "--generations",
            "10",
            "--output",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert "The plan each method chose" in out
    for name in ("knee", "cost vs margin", "cheapest, 1 step"):
        assert name in out
    assert "The actions of the knee plans:" in out
    assert "n_people" in out and "share_first" in out
    for name in ("pareto_choices.png", "recourse_summary.png"):
        assert (tmp_path / name).stat().st_size > 0


def test_example_rejects_bad_options(tmp_path):
    completed = subprocess.run(
        [sys.executable, str(EXAMPLE), "--n-instances", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 2
    assert "--n-instances" in completed.stderr

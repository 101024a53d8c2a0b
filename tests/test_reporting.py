"""The per-person text: sklearn_cscf.describe and sklearn_cscf.show."""

import io
import re

import numpy as np
import pandas as pd
import pytest

from sklearn_cscf import SequentialCounterfactualExplainer, describe, show
from sklearn_cscf._frames import COLUMNS, format_cost
from sklearn_cscf._reporting import _number_pair, _precise, _value

EDUCATION = pd.CategoricalDtype(["HS", "BSc", "MSc"], ordered=True)
NUMBERS = {"age", "savings", "hours"}


def _x():
    """Four applicants, deliberately not in label order."""
    return pd.DataFrame(
        {
            "age": [20, 35, 50, 41],
            "education": pd.Categorical(["HS", "BSc", "MSc", "HS"], dtype=EDUCATION),
            "savings": [1200.0, 0.0, 52000.0, 10.5],
            "hours": [40, 20, 38, 45],
        },
        index=[7, 3, 5, 9],
    )


def _step(solution, plan, step, action, feature, old, new, effort, discount, proba):
    numeric = feature in NUMBERS
    return {
        "instance": 7,
        "plan": plan,
        "solution": solution,
        "step": step,
        "action": action,
        "feature": feature,
        "old_value": str(old),
        "new_value": str(new),
        "old_number": float(old) if numeric else np.nan,
        "new_number": float(new) if numeric else np.nan,
        "effort": effort,
        "discount": discount,
        "cost": effort * discount,
        "target_proba": proba,
        "target_class": "approved",
        "status": "ok",
    }


def _sequence(rows, gower):
    cost = sum(row["cost"] for row in rows)
    effort = sum(row["effort"] for row in rows)
    for row in rows:
        row.update(
            sequence_cost=cost,
            sequence_effort=effort,
            gower_distance=gower,
            length=len(rows),
        )
    return rows


def _frames():
    """A frame as explain returns it, and its states, checked by hand.

    Applicant 7: plan 0 (study, then save: the study is discounted to half)
    as solution 0, the same plan in the other order (no discount) as
    solution 2, and plan 1 (more hours) as solution 1. Applicants 3, 5 and 9:
    no sequence, already accepted, and an error.
    """
    records = [
        *_sequence(
            [
                _step(0, 0, 1, "get_degree", "education", "HS", "BSc", 3.0, 0.5, 0.3),
                _step(0, 0, 2, "save_money", "savings", 1200, 15000.5, 1.38, 1.0, 0.8),
            ],
            gower=0.25,
        ),
        *_sequence(
            [_step(1, 1, 1, "change_hours", "hours", 40, 50, 3.0, 1.0, 0.6)],
            gower=0.05,
        ),
        *_sequence(
            [
                _step(2, 0, 1, "save_money", "savings", 1200, 15000.5, 1.38, 1.0, 0.5),
                _step(2, 0, 2, "get_degree", "education", "HS", "BSc", 3.0, 1.0, 0.8),
            ],
            gower=0.25,
        ),
        {"instance": 3, "target_class": "approved", "status": "no_counterfactual"},
        {"instance": 5, "target_class": "approved", "status": "already_target"},
        {"instance": 9, "target_class": "approved", "status": "error"},
    ]
    frame = pd.DataFrame.from_records(records, columns=list(COLUMNS))
    frame = frame.astype(
        {name: dtype for name, dtype in COLUMNS.items() if dtype is not None}
    )
    frame["message"] = pd.array(
        [pd.NA] * 7 + ["the model raised ValueError: bad input"], dtype="string"
    )

    x7 = {"age": 20, "education": "HS", "savings": 1200.0, "hours": 40}
    studied = {"education": "BSc", "age": 23}
    saved = {"savings": 15000.5}
    path = [
        (0, 0, x7),
        (0, 1, {**x7, **studied}),
        (0, 2, {**x7, **studied, **saved}),
        (1, 0, x7),
        (1, 1, {**x7, "hours": 50}),
        (2, 0, x7),
        (2, 1, {**x7, **saved}),
        (2, 2, {**x7, **saved, **studied}),
    ]
    states = pd.DataFrame(
        [{"instance": 7, "solution": s, "step": t, **x} for s, t, x in path]
    )
    states = states.astype(
        {"solution": "Int64", "step": "Int64", "education": EDUCATION}
    )
    return frame, states


PROBA = {7: 0.1, 3: 0.2, 5: 0.7, 9: 0.05}

APPLICANT_7 = """\
Applicant 7: age=20, education=HS, savings=1200, hours=40
  P(approved) now 0.10; 3 Pareto-optimal sequence(s) in 2 plan(s):
  #1  cost 2.88 (effort 4.38), 2 step(s), Gower distance 0.250; the same actions in 1 other order(s) cost 4.38
      1. get_degree    education    HS -> BSc        cost 1.50 (3.00 x 0.50)  P(approved) 0.30
         and so: age 20 -> 23
      2. save_money    savings    1200 -> 15,000.50  cost 1.38                P(approved) 0.80
  #2  cost 3.00, 1 step(s), Gower distance 0.050
      1. change_hours  hours        40 -> 50         cost 3.00                P(approved) 0.60"""  # noqa: E501

NO_SEQUENCE = (
    "status: no_counterfactual (no valid sequence found within the search "
    "budget;\n    a larger population_size or n_generations, wider value spaces "
    "or more actions may help)"
)


def test_the_text_of_a_hand_checked_frame():
    frame, states = _frames()
    text = describe(
        frame,
        states,
        X=_x(),
        instance=7,
        initial_proba=PROBA,
        target_name="approved",
        noun="Applicant",
    )
    assert text == APPLICANT_7


def test_status_rows_give_their_hint_or_message():
    frame, states = _frames()
    text = describe(frame, states, instance=[3, 5, 9], initial_proba=PROBA)
    assert text.split("\n\n") == [
        f"Instance 3\n  P(approved) now 0.20; {NO_SEQUENCE}",
        "Instance 5\n  P(approved) now 0.70; status: already_target (the model "
        "already predicts the target class)",
        "Instance 9\n  P(approved) now 0.05; status: error (the model raised "
        "ValueError: bad input)",
    ]


def test_every_instance_in_input_order():
    frame, states = _frames()
    X = _x()
    blocks = describe(frame, states, X=X, noun="Applicant").split("\n\n")
    assert [block.split(":")[0] for block in blocks] == [
        f"Applicant {label}" for label in X.index
    ]
    # without initial_proba, no probability now; the target from the frame
    assert "now" not in blocks[0]
    assert "P(approved) 0.30" in blocks[0]


def test_instance_selects_and_orders():
    frame, states = _frames()
    text = describe(frame, states, instance=[9, 7])
    assert [block.splitlines()[0] for block in text.split("\n\n")] == [
        "Instance 9",
        "Instance 7",
    ]
    assert describe(frame, instance=5) == (
        "Instance 5\n  status: already_target (the model already predicts the "
        "target class)"
    )
    # one instance: a single initial probability will do
    assert "P(approved) now 0.25" in describe(frame, instance=3, initial_proba=0.25)


def test_an_array_of_initial_probabilities_follows_x():
    frame, states = _frames()
    X = _x()
    text = describe(frame, X=X, initial_proba=np.array([0.1, 0.2, 0.7, 0.05]))
    assert text == describe(frame, X=X, initial_proba=pd.Series(PROBA))
    assert "Instance 5: age=50" in text and "P(approved) now 0.70" in text


@pytest.mark.parametrize("max_plans, shown", [(1, ["#1"]), (0, []), (None, None)])
def test_max_plans(max_plans, shown):
    frame, states = _frames()
    text = describe(frame, states, instance=7, max_plans=max_plans)
    headers = [line.split()[0] for line in text.splitlines() if "  #" in line]
    assert headers == (["#1", "#2"] if shown is None else shown)
    counts = text.splitlines()[1]
    if max_plans == 1:
        assert counts.endswith("in 2 plan(s); the cheapest 1:")
    elif max_plans == 0:
        assert counts.endswith("in 2 plan(s)")
        assert len(text.splitlines()) == 2


def test_a_compacted_frame():
    # the cheapest order of each plan only, and plans left out: the plan
    # numbers stay those of the frame
    frame, states = _frames()
    cheapest = frame[frame["solution"].fillna(-1) != 2]
    text = describe(cheapest, states, instance=7)
    assert "other order" not in text
    assert "3 Pareto-optimal" not in text and "2 Pareto-optimal" in text
    only_plan_1 = frame[frame["plan"].fillna(-1) != 0]
    text = describe(only_plan_1, states[states["solution"] == 1], instance=7)
    assert "1 Pareto-optimal sequence(s) in 1 plan(s):" in text
    assert "  #2  cost 3.00, 1 step(s)" in text and "#1" not in text


def test_a_frame_read_back_from_csv():
    frame, states = _frames()
    kwargs = {"X": _x(), "initial_proba": PROBA, "noun": "Applicant"}
    expected = describe(frame, states, **kwargs)

    def round_trip(data):
        buffer = io.StringIO()
        data.to_csv(buffer, index=False)
        buffer.seek(0)
        return pd.read_csv(buffer)

    assert describe(round_trip(frame), round_trip(states), **kwargs) == expected


def test_without_states_or_probabilities():
    frame, _ = _frames()
    frame.loc[frame["status"] == "ok", "target_proba"] = np.nan  # predict only
    text = describe(frame, instance=7, target_name="approved")
    lines = text.splitlines()
    assert "and so" not in text
    assert "P(approved)" not in text
    assert "      1. change_hours  hours        40 -> 50         cost 3.00" in lines


def test_show_prints_the_text(capsys):
    frame, states = _frames()
    show(frame, states, X=_x(), initial_proba=PROBA, noun="Applicant", instance=7)
    assert capsys.readouterr().out == APPLICANT_7 + "\n"


def test_the_text_of_a_real_explanation(
    worked_model, worked_X, worked_actions, worked_graph
):
    # the paper's worked example: study first, then move, then change job
    explainer = SequentialCounterfactualExplainer(
        worked_model,
        actions=worked_actions,
        feature_graph=worked_graph,
        population_size=40,
        n_generations=10,
        random_state=0,
    ).fit(worked_X)
    person = worked_X.iloc[[0]]
    explanations, states = explainer.explain(person, return_states=True)
    lines = describe(explanations, states, X=person).splitlines()
    assert lines[0] == "Instance 0: job=Seller, education=HS, location=Germany"
    assert lines[2].startswith("  #1  cost 22.50 (effort 30.00), 3 step(s)")
    assert [line.split()[1] for line in lines[3:6]] == [
        "a2_education",
        "a3_location",
        "a1_job",
    ]
    assert "HS -> BSc" in lines[3] and "(5.00 x 0.50)" in lines[3]


# ---------------------------------------------------------------------- #
# Bad input
# ---------------------------------------------------------------------- #
def test_errors_for_what_is_not_a_frame_of_explain():
    frame, states = _frames()
    with pytest.raises(TypeError, match="DataFrame returned by"):
        describe(frame.to_dict("records"))
    with pytest.raises(TypeError, match="unpack"):
        describe((frame, states))
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['plan'\]"):
        describe(frame.drop(columns="plan"))
    with pytest.raises(ValueError, match="without a plan or solution"):
        describe(frame.assign(plan=pd.NA))
    with pytest.raises(TypeError, match="states must be"):
        describe(frame, states.to_numpy())
    with pytest.raises(ValueError, match=r"states lacks the column\(s\) \['step'\]"):
        describe(frame, states.drop(columns="step"))
    with pytest.raises(ValueError, match="no state for instance 7, solution 1"):
        describe(frame, states[states["solution"] != 1])
    # the states of orders not shown are not needed
    describe(frame, states[states["solution"] != 2])


def test_errors_for_bad_selections_and_companions():
    frame, _ = _frames()
    with pytest.raises(ValueError, match=r"instance 8 is not in explanations"):
        describe(frame, instance=8)
    with pytest.raises(ValueError, match=r"instance '7' is not in explanations"):
        describe(frame, instance=["7"])
    with pytest.raises(ValueError, match="X has no row labelled 9"):
        describe(frame, X=_x().head(3))
    with pytest.raises(TypeError, match="X must be the DataFrame"):
        describe(frame, X=_x().to_numpy())
    with pytest.raises(ValueError, match="one number per row"):
        describe(frame, X=_x(), initial_proba=np.full((4, 2), 0.5))
    with pytest.raises(ValueError, match="follows the 4 instances of the frame"):
        describe(frame, initial_proba=[0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="follows the 4 rows of X"):
        describe(frame, X=_x(), initial_proba=[0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="single number for 4 instances"):
        describe(frame, initial_proba=0.5)
    for bad in (-1, 1.5, "3", True):
        with pytest.raises(ValueError, match="max_plans must be"):
            describe(frame, max_plans=bad)


@pytest.mark.parametrize(
    "value, text",
    [
        (np.int64(12000), "12,000"),
        (3.0, "3"),
        (-1500.0, "-1500"),
        (-15000.0, "-15,000"),
        (2007, "2007"),  # four digits stay together: a year, not 2,007
        (9999.5, "9999.50"),
        (9999.996, "10,000"),
        (2.5, "2.50"),
        (57442.872122, "57,442.87"),
        (49146.000000001, "49,146"),
        (0.0035, "0.0035"),
        (np.nan, "-"),
        (None, "-"),
        (pd.NA, "-"),
        (True, "True"),
        ("Bachelors", "Bachelors"),
    ],
)
def test_values_for_people(value, text):
    assert _value(value) == text


@pytest.mark.parametrize(
    "value, text", [(0.0, "0.00"), (0.0026, "0.0026"), (1.234, "1.23")]
)
def test_costs_for_people(value, text):
    assert format_cost(value) == text


@pytest.mark.parametrize(
    "old, new, text",
    [
        (5.1, 2.9962, ("5.10", "3.00")),  # not "3": it is not 3
        (5.1, 3.0, ("5.10", "3")),
        (1200.0, 15000.5, ("1200", "15,000.50")),
        (0.251, 0.249, ("0.251", "0.249")),  # not "0.25 -> 0.25"
        (10.001, 10.004, ("10.001", "10.004")),
        (43834.52, 0.081, ("43,834.52", "0.08")),
        (0.25, 0.31, ("0.25", "0.31")),
    ],
)
def test_number_pairs_tell_the_change(old, new, text):
    assert _number_pair(old, new) == text


@pytest.mark.parametrize(
    "value, text", [(0.25, "0.250"), (0.0, "0.000"), (0.00042, "0.00042")]
)
def test_gower_distance_of_a_real_change_is_not_zero(value, text):
    assert _precise(value) == text
    frame, _ = _frames()
    frame["gower_distance"] = value
    assert f"Gower distance {text}" in describe(frame, instance=7)


def test_a_regressor_shows_its_prediction_after_every_step():
    frame, _ = _frames()
    ok = frame["status"] == "ok"
    frame["prediction"] = frame["target_proba"] * 100 + 0.5  # 30.5, 80.5, ...
    frame["target_proba"] = np.nan
    frame["target_class"] = "[60, 100]"
    text = describe(frame, instance=7, initial_proba={7: 12.25})
    lines = text.splitlines()
    assert lines[1].startswith("  prediction now 12.25, to reach [60, 100]; 3 ")
    steps = [line for line in lines if line.startswith("      ")]
    assert [line.split("prediction ")[1] for line in steps] == [
        "30.50",
        "80.50",
        "60.50",
    ]
    assert ok.sum() == 5 and "P(" not in text


def test_an_array_of_initial_probabilities_reads_alike_everywhere():
    """One rule for describe and the plots: an array follows the rows of X,
    or without X the frame's instances in order (explain keeps X's order)."""
    from sklearn_cscf.plotting import TargetProbabilityDisplay

    frame, _ = _frames()
    in_order = [0.1, 0.2, 0.7, 0.05]  # instances 7, 3, 5, 9 as in the frame
    expected = describe(frame, initial_proba=PROBA)
    assert describe(frame, initial_proba=in_order) == expected
    assert describe(frame, X=_x(), initial_proba=in_order).count("now 0.10") == 1
    display = TargetProbabilityDisplay.from_explanations(
        frame, 7, initial_proba=np.array(in_order)
    )
    assert display.initial_proba == 0.1
    assert display.lines_[0].get_ydata()[0] == 0.1


def _two_free_steps(discount=1.0, other_cost=None):
    """Applicant 7 with one plan of two undiscounted steps on two features
    (and, with ``other_cost``, its other order at that cost)."""
    rows = _sequence(
        [
            _step(0, 0, 1, "change_hours", "hours", 40, 50, 1.0, 1.0, 0.3),
            _step(0, 0, 2, "save_money", "savings", 1200, 5000, 2.0, discount, 0.8),
        ],
        gower=0.1,
    )
    if other_cost is not None:
        rows += _sequence(
            [
                _step(1, 0, 1, "save_money", "savings", 1200, 5000, 2.0, 1.0, 0.4),
                _step(
                    1, 0, 2, "change_hours", "hours", 40, 50, other_cost - 2, 1.0, 0.8
                ),
            ],
            gower=0.1,
        )
    frame = pd.DataFrame.from_records(rows, columns=list(COLUMNS))
    return frame.astype(
        {name: dtype for name, dtype in COLUMNS.items() if dtype is not None}
    )


def test_a_plan_whose_order_does_not_matter_says_so():
    text = describe(_two_free_steps(), target_name="approved")
    lines = text.splitlines()
    assert "2 step(s) in any order" in lines[1 + 1]
    # no numbers that would read as a recommended order
    assert lines[3].startswith("      -  change_hours")
    assert lines[4].startswith("      -  save_money")
    # the same when its other order is listed at the same cost
    assert "in any order" in describe(_two_free_steps(other_cost=3.0))


@pytest.mark.parametrize(
    "frame",
    [
        _two_free_steps(discount=0.5),  # the graph eased the second step
        _two_free_steps(other_cost=4.0),  # the other order costs more
    ],
)
def test_a_plan_whose_order_matters_is_numbered(frame):
    text = describe(frame, instance=7)
    assert "in any order" not in text
    assert "      1. change_hours" in text


def test_a_consequence_in_the_states_makes_the_order_matter():
    frame = _two_free_steps()
    x7 = {"age": 20, "education": "HS", "savings": 1200.0, "hours": 40}
    path = [
        (0, x7),
        (1, {**x7, "hours": 50}),
        (2, {**x7, "hours": 50, "savings": 5000.0}),
    ]
    states = pd.DataFrame(
        [{"instance": 7, "solution": 0, "step": t, **x} for t, x in path]
    ).astype({"solution": "Int64", "step": "Int64", "education": EDUCATION})
    assert "in any order" in describe(frame, states)
    aged = states.copy()
    aged.loc[aged["step"] == 2, "age"] = 21  # saving made the applicant older
    assert "in any order" not in describe(frame, aged)


def test_a_consequence_on_another_steps_feature_makes_the_order_matter():
    """Paying off debt out of savings changes the feature of the plan's other
    step: the order matters although no feature outside the plan changed."""
    frame = _two_free_steps()
    x7 = {"age": 20, "education": "HS", "savings": 1200.0, "hours": 40}
    path = [
        (0, x7),
        (1, {**x7, "hours": 50, "savings": 900.0}),  # hours, and savings spent
        (2, {**x7, "hours": 50, "savings": 5000.0}),
    ]
    states = pd.DataFrame(
        [{"instance": 7, "solution": 0, "step": t, **x} for t, x in path]
    ).astype({"solution": "Int64", "step": "Int64", "education": EDUCATION})
    text = describe(frame, states)
    assert "in any order" not in text
    assert "1. change_hours" in text


def test_without_a_graph_the_worked_example_takes_its_steps_in_any_order(
    worked_model, worked_X, worked_actions, worked_graph
):
    person = worked_X.iloc[[0]]
    texts = {}
    for graph in (None, worked_graph):
        explainer = SequentialCounterfactualExplainer(
            worked_model,
            actions=worked_actions,
            feature_graph=graph,
            population_size=40,
            n_generations=10,
            random_state=0,
        ).fit(worked_X)
        explanations, states = explainer.explain(person, return_states=True)
        texts[graph is None] = describe(explanations, states, max_plans=None)
    # constant costs, no consequences: every multi-step plan is order-free
    free = [line for line in texts[True].splitlines() if "step(s)" in line]
    assert any("3 step(s)" in line for line in free)
    assert all(("in any order" in line) == ("1 step(s)" not in line) for line in free)
    # the graph's discount makes the order of the three steps matter
    assert "3 step(s) in any order" not in texts[False]
    assert "      1. a2_education" in texts[False]


def test_a_plan_says_which_class_it_reaches_when_several_would_do():
    frame, _ = _frames()
    frame["target_class"] = "not rejected"
    ok = frame["status"] == "ok"
    frame["reached_class"] = pd.array(
        np.where((frame["solution"] == 1).fillna(False), "waitlisted", "approved"),
        dtype="string",
    )
    frame.loc[~ok, "reached_class"] = pd.NA
    lines = describe(frame, instance=7).splitlines()
    headers = [line for line in lines if line.startswith("  #")]
    assert ", reaches approved" in headers[0] and ", reaches waitlisted" in headers[1]
    # a binary target names the class itself: nothing to add
    frame["reached_class"] = frame["target_class"] = "approved"
    assert "reaches" not in describe(frame, instance=7)


def test_messages_show_plain_labels_not_numpy_scalars():
    from sklearn_cscf.plotting import TargetProbabilityDisplay

    frame, _ = _frames()
    with pytest.raises(ValueError, match=r"instance 460 is not in") as caught:
        show(frame, instance=np.int64(460))
    assert "np.int64" not in str(caught.value)
    with pytest.raises(ValueError) as caught:
        TargetProbabilityDisplay.from_explanations(frame, instance=np.int64(460))
    assert "np.int64" not in str(caught.value)


def test_a_numeric_step_reads_at_its_scale():
    # a refined repayment ends just above 0: no spurious digits
    assert _number_pair(43_834.52, 0.081) == ("43,834.52", "0.08")
    # ... but not as 0 (it is not 0): two decimals, as for 2.9962 -> 3.00
    assert _number_pair(100.0, 0.001) == ("100", "0.00")
    assert _number_pair(1_200.0, 15_000.5) == ("1200", "15,000.50")
    assert _number_pair(18.0, 24.0) == ("18", "24")
    # below 1 the digits that matter stay
    assert _number_pair(0.25, 0.31) == ("0.25", "0.31")
    assert _number_pair(0.0012, 0.0034) == ("0.0012", "0.0034")


def test_describe_shows_steps_at_their_scale(dummies_explained):
    _, rejected, explanations, _ = dummies_explained
    text = describe(explanations, X=rejected)
    repaid = re.findall(r"repay\s+debt\s+([\d,.]+) -> ([\d,.]+)", text)
    assert repaid
    for old, new in repaid:
        for value in (old, new):
            # at most two decimals, whatever the refinement left
            assert "." not in value or len(value.split(".")[1]) <= 2


def test_the_same_steps_with_other_values_are_not_other_orders():
    # all_values=True: plan 1's step again, nearer to the row but dearer
    frame, _ = _frames()
    nearer = _sequence(
        [_step(3, 1, 1, "change_hours", "hours", 40, 48, 3.5, 1.0, 0.55)],
        gower=0.04,
    )
    extra = pd.DataFrame.from_records(nearer, columns=list(COLUMNS)).astype(
        frame.dtypes.to_dict()
    )
    frame = pd.concat([frame.iloc[:5], extra, frame.iloc[5:]], ignore_index=True)
    text = describe(frame, X=_x(), initial_proba=PROBA, target_name="approved")
    lines = text.splitlines()
    assert "4 Pareto-optimal sequence(s) in 2 plan(s)" in lines[1]
    # plan 1 keeps its other order; plan 2 has no other order, one nearer
    assert lines[2].endswith("the same actions in 1 other order(s) cost 4.38")
    second = next(line for line in lines if line.startswith("  #2"))
    assert "other order" not in second
    assert second.endswith("; 1 nearer sequence(s) of the same steps cost 3.50")
    # the shown steps are the cheapest values
    assert "40 -> 50" in text and "40 -> 48" not in text


# ---------------------------------------------------------------------- #
# issue 37: how close to the line a plan ends; wide data; four digits
# ---------------------------------------------------------------------- #
def test_the_frame_says_how_far_past_the_line_each_plan_ends(kinds_explained):
    for kind, (explainer, _, frame, _, _) in kinds_explained.items():
        ok = frame[frame["status"] == "ok"]
        last = ok.sort_values("step").groupby(["instance", "solution"]).last()
        first = ok.groupby(["instance", "solution"])["margin"]
        assert (first.nunique(dropna=False) == 1).all(), kind  # one per plan
        if kind == "binary":  # above the decision threshold 0.5
            expected = last["target_proba"] - 0.5
        elif kind == "regressor":  # inside the range (-inf, 120]
            expected = 120.0 - last["prediction"]
        else:  # no fixed threshold with three classes
            assert last["margin"].isna().all()
            continue
        np.testing.assert_allclose(last["margin"], expected, atol=1e-9)
        assert (last["margin"] >= 0).all(), kind
        # status rows have none
        assert frame.loc[frame["status"] != "ok", "margin"].isna().all()


def test_a_margin_over_the_threshold_is_asked_for_with_min_target_proba(
    kinds_explained, credit_data
):
    explainer, rows, _, _, _ = kinds_explained["binary"]
    wanting = explainer.get_params(deep=False) | {"min_target_proba": 0.6}
    with_margin = (
        SequentialCounterfactualExplainer(**wanting).fit(credit_data[0]).explain(rows)
    )
    ok = with_margin[with_margin["status"] == "ok"]
    assert len(ok) and (ok["margin"] >= 0.1 - 1e-9).all()


def _fragile_frame(margins):
    frame, states = _frames()
    ok = frame["status"] == "ok"
    frame["margin"] = np.nan
    for solution, margin in margins.items():
        at = ok & (frame["solution"] == solution)
        frame.loc[at, "margin"] = margin
    return frame, states


def test_plans_near_the_threshold_are_flagged_fragile_with_the_fix():
    # solution 0 ends at 0.8: margin 0.3; solution 1 at 0.6, say 0.52: 0.02
    frame, states = _fragile_frame({0: 0.3, 1: 0.02, 2: 0.3})
    frame.loc[frame["solution"] == 1, "target_proba"] = 0.52
    text = describe(frame, states, instance=7, target_name="approved")
    lines = text.splitlines()
    assert lines[2] == (
        "  #1  cost 2.88 (effort 4.38), 2 step(s), Gower distance 0.250, margin "
        "0.30; the same "
        "actions in 1 other order(s) cost 4.38"
    )
    header = next(line for line in lines if line.startswith("  #2"))
    assert header.endswith("Gower distance 0.050, margin 0.02 (fragile)")
    note = " ".join(line.strip() for line in lines[lines.index(header) + 2 :])
    assert note == (
        "fragile: a plan ends less than 0.05 above the decision threshold (0.50), "
        "where a retrained or slightly different model may reject it; "
        "min_target_proba=0.6 asks for plans with a margin."
    )
    # a stricter or no flag
    assert "fragile" not in describe(frame, instance=7, fragile=0.01)
    assert "fragile" not in describe(frame, instance=7, fragile=None)
    assert "margin 0.02 (fragile)" in describe(frame, instance=7, fragile=0.3)
    # a frame without margins (saved by 0.1) says nothing of them
    assert "margin" not in describe(frame.drop(columns="margin"), instance=7)


def test_the_text_of_each_kind_of_model_tells_its_margin(kinds_explained):
    for kind, (_, rows, frame, states, now) in kinds_explained.items():
        text = describe(frame, states, X=rows, initial_proba=now, max_plans=None)
        headers = [line for line in text.splitlines() if line.startswith("  #")]
        assert headers, kind
        if kind == "binary":
            assert all(re.search(r", margin \d\.\d\d", h) for h in headers)
        elif kind == "regressor":
            inside = r", margin [\d.,]+ inside the range"
            assert all(re.search(inside, h) for h in headers)
            assert "fragile" not in text
        else:
            assert not any("margin" in h for h in headers)


def test_a_wide_profile_lists_what_the_plans_change():
    frame, states = _frames()
    wide = _x()
    for k in range(20):  # 24 features: too many to list
        wide[f"f{k:02d}"] = float(k)
    text = describe(frame, states, X=wide, instance=7)
    head = " ".join(line.strip() for line in text.splitlines()[:2])
    # the features of the plans' steps and their consequences (age)
    assert head == (
        "Instance 7: age=20, education=HS, savings=1200, hours=40 (and 20 other "
        "features; profile='full' lists them)"
    )
    full = describe(frame, states, X=wide, instance=7, profile="full")
    assert "f19=19" in full and "other features" not in full
    short = describe(frame, X=_x(), instance=7, profile="changed")
    # without states, the steps' own features only (age changes as a consequence)
    assert short.splitlines()[0] == (
        "Instance 7: education=HS, savings=1200, hours=40 (and 1 other feature; "
        "profile='full' lists them)"
    )
    # narrow data: every feature, as before
    assert describe(frame, X=_x(), instance=7).splitlines()[0] == (
        "Instance 7: age=20, education=HS, savings=1200, hours=40"
    )
    # a person without a plan: how many features there are
    assert describe(frame, X=wide, instance=3).splitlines()[0] == (
        "Instance 3 (24 features; profile='full' lists them)"
    )
    with pytest.raises(ValueError, match="profile"):
        describe(frame, X=wide, profile="short")

"""Plots of the tidy explanations frame: the drawn artists and the errors."""

import itertools
import subprocess
import sys
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

from sklearn_cscf import SequentialCounterfactualExplainer, choose_plan
from sklearn_cscf.plotting import (
    ActionFlowDisplay,
    ParetoFrontDisplay,
    ProbabilityByStepDisplay,
    RecourseSummaryDisplay,
    TargetProbabilityDisplay,
    action_colors,
)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

NOT_DRAWN = "tweak counts not drawn:\nsome points look dominated"
COLUMNS = [
    "instance",
    "plan",
    "solution",
    "step",
    "action",
    "target_proba",
    "sequence_cost",
    "gower_distance",
    "length",
]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def make_frame(rows, failed=()):
    """A frame like explain's from ``(instance, plan, solution, step, action,
    proba, cost, gower, length)`` rows, plus status rows ``(instance, status)``."""
    frame = pd.DataFrame(rows, columns=COLUMNS)
    for column in ("plan", "solution", "step", "length"):
        frame[column] = frame[column].astype("Int64")
    frame["status"] = "ok"
    others = pd.DataFrame(list(failed), columns=["instance", "status"])
    return pd.concat([frame, others], ignore_index=True)


@pytest.fixture
def explanations():
    """Instance 'a' with three plans (solutions 2 and 3 share a plan), 'b'
    without any sequence."""
    return make_frame(
        [
            ("a", 0, 0, 1, "study", 0.40, 2.0, 0.30, 2),
            ("a", 0, 0, 2, "save", 0.70, 2.0, 0.30, 2),
            ("a", 1, 1, 1, "move", 0.55, 3.0, 0.10, 1),
            ("a", 0, 2, 1, "save", 0.20, 3.5, 0.30, 2),
            ("a", 0, 2, 2, "study", 0.65, 3.5, 0.30, 2),
            ("a", 2, 3, 1, "save", 0.20, 4.5, 0.05, 3),
            ("a", 2, 3, 2, "study", 0.45, 4.5, 0.05, 3),
            ("a", 2, 3, 3, "move", 0.90, 4.5, 0.05, 3),
        ],
        failed=[("b", "no_counterfactual")],
    )


@pytest.fixture
def population():
    """Three instances: known flows and probabilities by step."""
    return make_frame(
        [
            # instance 1: study -> save (cheapest); save
            (1, 0, 0, 1, "study", 0.3, 1.0, 0.1, 2),
            (1, 0, 0, 2, "save", 0.6, 1.0, 0.1, 2),
            (1, 1, 1, 1, "save", 0.7, 2.0, 0.1, 1),
            # instance 2: save (cheapest); study -> save -> move
            (2, 0, 0, 1, "save", 0.8, 1.0, 0.1, 1),
            (2, 1, 1, 1, "study", 0.2, 2.0, 0.1, 3),
            (2, 1, 1, 2, "save", 0.4, 2.0, 0.1, 3),
            (2, 1, 1, 3, "move", 0.9, 2.0, 0.1, 3),
            # instance 3: move -> study (cheapest)
            (3, 0, 0, 1, "move", 0.1, 1.0, 0.1, 2),
            (3, 0, 0, 2, "study", 0.5, 1.0, 0.1, 2),
        ],
        failed=[(4, "already_target")],
    )


@pytest.fixture
def crowded():
    """One instance, ten plans of close probabilities, costs and distances,
    with long action names: labels that would pile up if placed naively."""
    names = [
        "increase_capital_gain",
        "change_working_hours",
        "add_education",
        "change_capital_loss",
        "wait_years",
    ]
    rows = []
    for plan in range(10):
        length = 1 + plan % 3
        for step in range(1, length + 1):
            rows.append(
                (
                    "p",
                    plan,
                    plan,
                    step,
                    names[(plan + step) % len(names)],
                    0.30 + 0.2 * step + 0.01 * plan,
                    # one far plan squeezes the others together
                    10.0 if plan == 9 else 1.0 + 0.02 * plan,
                    0.5 if plan == 9 else 0.10 + 0.001 * plan,
                    length,
                )
            )
    return make_frame(rows)


def text_boxes(ax):
    """The drawn text boxes of the labels, in pixels, after a draw."""
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [Text.get_window_extent(t, renderer) for t in ax.texts]


def overlapping(boxes, tolerance=0.5):
    """Pairs of boxes sharing more than ``tolerance`` pixels each way."""
    return [
        (i, j)
        for (i, a), (j, b) in itertools.combinations(enumerate(boxes), 2)
        if min(a.x1, b.x1) - max(a.x0, b.x0) > tolerance
        and min(a.y1, b.y1) - max(a.y0, b.y0) > tolerance
    ]


def one_line(text):
    """A title or label as one line (they wrap to fit a narrow panel)."""
    return " ".join(text.split())


def wide():
    """Axes wide enough for a long title to show in full."""
    return plt.subplots(figsize=(18, 4))[1]


def shortened(title, full):
    """Whether each line of ``title`` is that of ``full`` or its start and
    an ellipsis."""
    got, want = title.split("\n"), full.split("\n")
    return len(got) == len(want) and all(
        g == w or (g.endswith("\u2026") and w.startswith(g[:-1]))
        for g, w in zip(got, want)
    )


def legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


# ---------------------------------------------------------------------- #
# plot_target_probability: one person's plans as a step chart
# ---------------------------------------------------------------------- #
def test_step_chart_one_line_per_plan(explanations):
    ax = TargetProbabilityDisplay.from_explanations(explanations, "a", dodge=0).ax_
    lines = ax.get_lines()[:3]
    # plan 0's cheapest order (solution 0), then plans 1 and 2
    assert [line.get_ydata().tolist() for line in lines] == [
        [0.40, 0.70],
        [0.55],
        [0.20, 0.45, 0.90],
    ]
    assert lines[2].get_xdata().tolist() == [1.0, 2.0, 3.0]
    assert legend_texts(ax) == [
        "#1 cost 2.00",
        "#2 cost 3.00",
        "#3 cost 4.50",
        "decision threshold 0.5",
    ]
    # each plan its own marker, every point labelled with its action
    assert len({line.get_marker() for line in lines}) == 3
    assert sorted(t.get_text() for t in ax.texts) == sorted(
        ["study", "save", "move", "save", "study", "move"]
    )


def test_step_chart_decision_line_and_axes(explanations):
    ax = TargetProbabilityDisplay.from_explanations(
        explanations, "a", initial_proba=0.1
    ).ax_
    threshold = ax.get_lines()[-1]
    assert list(threshold.get_ydata()) == [0.5, 0.5]
    assert threshold.get_linestyle() == "--"
    assert ax.get_xticks().tolist() == [0, 1, 2, 3]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["now", "1", "2", "3"]
    low, high = ax.get_xlim()
    assert -1 < low < 0 and 3 < high < 4  # no room for a step 4
    assert ax.get_ylim()[0] <= 0 and ax.get_ylim()[1] >= 1
    ax = TargetProbabilityDisplay.from_explanations(
        explanations, "a", threshold=None
    ).ax_
    assert "decision threshold" not in " ".join(legend_texts(ax))
    ax = TargetProbabilityDisplay.from_explanations(
        explanations, "a", threshold=0.7
    ).ax_
    assert list(ax.get_lines()[-1].get_ydata()) == [0.7, 0.7]


def test_step_chart_x_axis_as_long_as_the_longest_shown_plan(explanations):
    ax = TargetProbabilityDisplay.from_explanations(
        explanations, "a", max_solutions=2
    ).ax_
    assert len(ax.get_lines()) == 3  # two plans and the decision line
    assert ax.get_xticks().tolist() == [1, 2]
    assert ax.get_xlim()[1] < 3


def test_step_chart_starts_from_the_instance(explanations):
    for initial in (0.1, pd.Series({"a": 0.1, "b": 0.9}), {"a": 0.1}):
        ax = TargetProbabilityDisplay.from_explanations(
            explanations, "a", initial_proba=initial
        ).ax_
        for line in ax.get_lines()[:3]:
            assert line.get_xdata()[0] == 0.0
            assert line.get_ydata()[0] == 0.1
        # the instance itself: one black point at step 0
        assert ax.get_lines()[3].get_xydata().tolist() == [[0.0, 0.1]]


def test_step_chart_dodges_plans_apart(explanations):
    ax = TargetProbabilityDisplay.from_explanations(
        explanations, "a", initial_proba=0.1, dodge=0.1, threshold=None
    ).ax_
    firsts = [line.get_xdata()[1] for line in ax.get_lines()[:3]]
    np.testing.assert_allclose(firsts, [0.9, 1.0, 1.1])
    # step 0 is shared, not dodged
    assert {line.get_xdata()[0] for line in ax.get_lines()[:3]} == {0.0}


def test_step_chart_all_orders(explanations):
    ax = TargetProbabilityDisplay.from_explanations(
        explanations, "a", all_orders=True, dodge=0
    ).ax_
    lines = ax.get_lines()[:4]
    assert [line.get_ydata().tolist() for line in lines][1] == [0.20, 0.65]
    other = lines[1]
    assert other.get_linestyle() == "--"
    assert other.get_markerfacecolor() == "white"
    assert other.get_color() == lines[0].get_color()  # the plan's colour
    assert legend_texts(ax)[:3] == [
        "#1 cost 2.00",
        "#1 other order, cost 3.50",
        "#2 cost 3.00",
    ]


def test_step_chart_uses_the_frames_plan_numbers(explanations):
    # a compacted frame: some plans and orders dropped, ids not contiguous
    compact = explanations[explanations["solution"].isin([1, 3])]
    ax = TargetProbabilityDisplay.from_explanations(compact, "a").ax_
    assert legend_texts(ax)[:2] == ["#2 cost 3.00", "#3 cost 4.50"]
    assert ax.get_title() == "Instance a: all 2 plans, step by step"
    ax = TargetProbabilityDisplay.from_explanations(
        explanations, "a", max_solutions=2
    ).ax_
    assert one_line(ax.get_title()) == (
        "Instance a: the cheapest 2 of 3 plans, step by step"
    )


def test_step_chart_labels_never_overlap(crowded):
    ax = TargetProbabilityDisplay.from_explanations(
        crowded, initial_proba=0.2, max_solutions=10
    ).ax_
    assert len(ax.texts) == 19
    assert overlapping(text_boxes(ax)) == []
    # placed at every draw: still apart in a smaller figure
    ax.figure.set_size_inches(6, 4)
    assert overlapping(text_boxes(ax)) == []


def test_step_chart_labels_stay_inside_the_axes(explanations):
    ax = TargetProbabilityDisplay.from_explanations(
        explanations, "a", initial_proba=0.1
    ).ax_
    frame = ax.get_window_extent()
    for box in text_boxes(ax):
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1
        assert frame.y0 <= box.y0 and box.y1 <= frame.y1


def test_step_chart_nan_probability_is_an_error(explanations):
    no_proba = explanations.assign(target_proba=np.nan)
    with pytest.raises(ValueError, match="target_proba is NaN.*no predict_proba"):
        TargetProbabilityDisplay.from_explanations(no_proba, "a")
    some = explanations.copy()
    some.loc[1, "target_proba"] = np.nan
    with pytest.raises(ValueError, match="NaN in 1 of"):
        TargetProbabilityDisplay.from_explanations(some, "a")


@pytest.mark.parametrize("bad", [0, -1, 1.5, "3", True])
def test_max_solutions_must_be_positive(explanations, bad):
    with pytest.raises(ValueError, match="max_solutions"):
        TargetProbabilityDisplay.from_explanations(explanations, "a", max_solutions=bad)


def test_step_chart_bad_initial_proba(explanations):
    with pytest.raises(ValueError, match="no probability for instance 'a'"):
        TargetProbabilityDisplay.from_explanations(
            explanations, "a", initial_proba={"b": 0.1}
        )
    with pytest.raises(ValueError, match="initial_proba must be in"):
        TargetProbabilityDisplay.from_explanations(explanations, "a", initial_proba=1.5)
    with pytest.raises(TypeError, match="'threshold' parameter .* must be a float"):
        TargetProbabilityDisplay.from_explanations(explanations, "a", threshold="0.5")


# ---------------------------------------------------------------------- #
# plot_pareto_front
# ---------------------------------------------------------------------- #
def test_pareto_front_points_by_length(explanations):
    fig, ax = plt.subplots()
    assert ParetoFrontDisplay.from_explanations(explanations, "a", ax=ax).ax_ is ax
    offsets = [c.get_offsets().tolist() for c in ax.collections]
    assert offsets == [[[3.0, 0.10]], [[3.5, 0.30], [2.0, 0.30]], [[4.5, 0.05]]]
    assert legend_texts(ax) == [
        "1 step",
        "2 steps",
        "3 steps",
        "another order of a plan",
        NOT_DRAWN,  # the other order of #1 looks dominated by #1
    ]
    # the other order of plan #1 is hollow, its cheapest filled
    faces = ax.collections[1].get_facecolors()
    np.testing.assert_allclose(faces[0], [1, 1, 1, 1])
    assert to_hex(faces[1]) == to_hex(ax.collections[1].get_edgecolors()[1])
    assert sorted(t.get_text() for t in ax.texts) == ["#1", "#1", "#2", "#3"]
    assert "Gower distance to the person" in ax.get_ylabel()
    assert "(0 = unchanged, 1 = every feature maximally changed)" in one_line(
        ax.get_ylabel()
    )
    assert "sequence cost" in ax.get_xlabel()


def test_pareto_front_merges_orders_on_one_point(explanations):
    same = explanations.copy()
    same.loc[same["solution"] == 2, "sequence_cost"] = 2.0
    ax = ParetoFrontDisplay.from_explanations(same, "a").ax_
    assert sorted(t.get_text() for t in ax.texts) == ["#1 (2 orders)", "#2", "#3"]
    # where the plan's cheapest order lies, no marker is hollow
    faces = ax.collections[1].get_facecolors()
    assert not (faces == 1).all(axis=1).any()
    assert "another order of a plan" not in legend_texts(ax)


def test_pareto_labels_never_overlap(crowded):
    ax = ParetoFrontDisplay.from_explanations(crowded).ax_
    assert len(ax.texts) == 10
    assert overlapping(text_boxes(ax)) == []
    ax.figure.set_size_inches(5, 3.5)
    assert overlapping(text_boxes(ax)) == []


def test_single_instance_needs_no_label(explanations):
    only_a = explanations[explanations["instance"] == "a"]
    assert "Instance a" in ParetoFrontDisplay.from_explanations(only_a).ax_.get_title()


def test_pareto_front_highlights_the_chosen_sequence(explanations):
    # the knee of 'a': the front is solutions 0, 1 and 3, normalised (0, 1),
    # (0.4, 0.2) and (1, 0): solution 1, plan #2
    chosen = choose_plan(explanations)
    ax = ParetoFrontDisplay.from_explanations(explanations, "a", highlight=chosen).ax_
    ring = ax.collections[-1]
    assert ring.get_offsets().tolist() == [[3.0, 0.10]]
    assert to_hex(ring.get_edgecolors()[0]) == "#d62728"
    assert len(ring.get_facecolors()) == 0  # hollow: the point shows through
    assert legend_texts(ax)[-1] == "chosen: #2"
    bold = [t for t in ax.texts if t.get_fontweight() == "bold"]
    assert [t.get_text() for t in bold] == ["#2"]
    assert to_hex(bold[0].get_color()) == "#d62728"
    assert one_line(ax.get_title()).endswith("; chosen #2")
    # a solution number marks that sequence
    ax = ParetoFrontDisplay.from_explanations(explanations, "a", highlight=3).ax_
    assert ax.collections[-1].get_offsets().tolist() == [[4.5, 0.05]]
    # without highlight: no ring, no bold label
    ax = ParetoFrontDisplay.from_explanations(explanations, "a").ax_
    assert len(ax.collections) == 3
    assert not [t for t in ax.texts if t.get_fontweight() == "bold"]


def test_pareto_labels_keep_off_the_ring(crowded):
    ax = ParetoFrontDisplay.from_explanations(crowded, highlight=4).ax_
    boxes = text_boxes(ax)  # after a draw
    x, y = ax.transData.transform(ax.collections[-1].get_offsets()[0])
    r = 7.5 * ax.figure.dpi / 72  # the ring's radius, 7.5 points
    ring = Bbox([[x - r, y - r], [x + r, y + r]])
    assert not [box for box in boxes if box.overlaps(ring)]
    assert overlapping(boxes) == []


def test_pareto_front_by_final_probability(explanations):
    ax = ParetoFrontDisplay.from_explanations(explanations, "a", y="target_proba").ax_
    # the probability after each sequence's last step
    offsets = [c.get_offsets().tolist() for c in ax.collections]
    assert offsets == [[[3.0, 0.55]], [[3.5, 0.65], [2.0, 0.70]], [[4.5, 0.90]]]
    assert "after the last step" in ax.get_ylabel()
    with pytest.raises(
        ValueError, match="'y' parameter of ParetoFrontDisplay.from_explanations"
    ):
        ParetoFrontDisplay.from_explanations(explanations, "a", y="length")
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['target_proba'\]"):
        ParetoFrontDisplay.from_explanations(
            explanations.drop(columns="target_proba"), "a", y="target_proba"
        )


def test_pareto_highlight_errors(explanations):
    with pytest.raises(ValueError, match="holds no row of instance 'a'"):
        ParetoFrontDisplay.from_explanations(
            explanations,
            "a",
            highlight=choose_plan(explanations[explanations["instance"] == "b"]),
        )
    exceeded = pd.DataFrame(
        [
            {
                "instance": "a",
                "solution": None,
                "step": None,
                "action": None,
                "status": "exceeds_max_steps",
            }
        ]
    )
    with pytest.raises(
        ValueError, match="no chosen sequence for instance 'a'.*exceeds_max_steps"
    ):
        ParetoFrontDisplay.from_explanations(explanations, "a", highlight=exceeded)
    with pytest.raises(ValueError, match="holds 4 sequences of instance 'a'"):
        ParetoFrontDisplay.from_explanations(explanations, "a", highlight=explanations)
    with pytest.raises(ValueError, match=r"no solution 7 to highlight.*\[0, 1, 2, 3\]"):
        ParetoFrontDisplay.from_explanations(explanations, "a", highlight=7)
    with pytest.raises(TypeError, match="'highlight' parameter .* 'pandas.DataFrame'"):
        ParetoFrontDisplay.from_explanations(explanations, "a", highlight="1")


# ---------------------------------------------------------------------- #
# plot_recourse_summary
# ---------------------------------------------------------------------- #
@pytest.fixture
def priced(population):
    """The population with the step columns the summary reads: each step
    costs an equal share of its sequence, with twice that effort."""
    cost = population["sequence_cost"] / population["length"].astype(float)
    return population.assign(
        feature=population["action"] + "_feature", cost=cost, effort=2 * cost
    )


def bar_widths(ax):
    first, later = ax.containers
    return (
        [round(float(bar.get_width()), 3) for bar in first],
        [round(float(bar.get_width()), 3) for bar in later],
        [round(float(bar.get_x()), 3) for bar in later],
    )


def test_recourse_summary_bars(priced):
    # the knee is each person's solution 0: 1 study -> save; 2 save;
    # 3 move -> study; 4 is already of the target class
    full = (
        "Actions in each person's plan chosen by the knee of sequence_cost and "
        "gower_distance\n3 of 4 people have a chosen plan; without one: 1 "
        "already_target"
    )
    # a title too long for the axes is shortened, not wrapped
    panel = plt.subplots(1, 3, figsize=(12, 4), layout="constrained")[1][0]
    narrow = RecourseSummaryDisplay.from_explanations(priced, ax=panel).ax_.get_title()
    assert narrow != full and shortened(narrow, full)
    ax = RecourseSummaryDisplay.from_explanations(priced, ax=wide()).ax_
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "save\n2 people (67%), mean cost 0.75",
        "study\n2 people (67%), mean cost 0.50",
        "move\n1 person (33%), mean cost 0.50",
    ]
    first, later, left = bar_widths(ax)
    assert first == [0.333, 0.333, 0.333]  # each starts one person's plan
    assert later == [0.333, 0.333, 0.0]
    assert left == first  # the later part follows the first
    colors = action_colors(["move", "save", "study"])
    first_bars, later_bars = ax.containers
    assert [to_hex(bar.get_facecolor()) for bar in first_bars] == [
        colors["save"],
        colors["study"],
        colors["move"],
    ]
    # the later part: the same colour, light and hatched
    assert later_bars[0].get_hatch() == "///"
    assert later_bars[0].get_facecolor()[3] == pytest.approx(0.3)
    assert to_hex(later_bars[0].get_edgecolor()) == colors["save"]
    assert legend_texts(ax) == ["as the first step", "at a later step"]
    assert ax.get_xlim() == (0.0, 1.0)
    assert "3 people with a chosen plan" in one_line(ax.get_xlabel())
    assert ax.get_title() == full


def test_recourse_summary_of_a_chosen_frame_and_options(priced):
    chosen = choose_plan(priced, method="cheapest", max_steps=1)
    ax = RecourseSummaryDisplay.from_explanations(chosen, ax=wide()).ax_
    assert ax.get_title().startswith("Actions in the chosen plans\n")
    # person 1's one-step plan is save; person 3 has none of one step
    assert one_line(ax.get_title()).endswith(
        "plans 2 of 4 people have a chosen plan; without one: 1 already_target, 1 "
        "exceeds_max_steps"
    )
    assert [t.get_text().split("\n")[0] for t in ax.get_yticklabels()] == ["save"]
    assert legend_texts(ax) == ["as the first step"]  # nothing later
    ax = RecourseSummaryDisplay.from_explanations(
        priced, method="cheapest", max_steps=1, ax=wide()
    ).ax_
    assert "chosen by the cheapest, at most 1 step 2 of" in one_line(ax.get_title())
    ax = RecourseSummaryDisplay.from_explanations(
        priced, method="weighted", weights={"sequence_cost": 1, "length": 2}, ax=wide()
    ).ax_
    assert "the weights sequence_cost=1, length=2" in one_line(ax.get_title())


def test_recourse_summary_colors_axes_and_errors(priced):
    colors = {"save": "#000000", "study": "#111111", "move": "#222222", "x": "red"}
    fig, ax = plt.subplots()
    assert (
        RecourseSummaryDisplay.from_explanations(priced, colors=colors, ax=ax).ax_ is ax
    )
    assert to_hex(ax.containers[0][0].get_facecolor()) == "#000000"
    with pytest.raises(ValueError, match=r"no colour for the action\(s\) \['move'\]"):
        RecourseSummaryDisplay.from_explanations(
            priced, colors={"save": "k", "study": "k"}
        )
    with pytest.raises(ValueError, match="no instance has a chosen plan"):
        RecourseSummaryDisplay.from_explanations(priced[priced["status"] != "ok"])
    with pytest.raises(ValueError, match="unknown objective 'cost'"):
        RecourseSummaryDisplay.from_explanations(
            priced, method="weighted", weights={"cost": 1}
        )
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['effort'\]"):
        RecourseSummaryDisplay.from_explanations(priced.drop(columns="effort"))


# ---------------------------------------------------------------------- #
# plot_action_flow (Fig. 5)
# ---------------------------------------------------------------------- #
def blocks(ax):
    """``{(position, colour): height}`` of the drawn blocks."""
    return {
        (
            round(p.get_x() + p.get_width() / 2),
            to_hex(p.get_facecolor()),
        ): p.get_height()
        for p in ax.patches
        if p.get_gid() == "block"
    }


def bands(ax):
    """``(x where it leaves, height there, height where it arrives)`` per band."""
    out = []
    for p in ax.patches:
        if p.get_gid() == "band":
            v = p.get_path().vertices
            out.append((v[0, 0], v[0, 1] - v[7, 1], v[3, 1] - v[4, 1]))
    return out


def test_action_flow_blocks_and_bands(population):
    ax = ActionFlowDisplay.from_explanations(population).ax_
    colors = action_colors(["move", "save", "study"])
    end = "#c8c8c8"
    assert blocks(ax) == {
        (1, colors["study"]): 2,
        (1, colors["save"]): 2,
        (1, colors["move"]): 1,
        (2, colors["save"]): 2,
        (2, colors["study"]): 1,
        (2, end): 2,
        (3, colors["move"]): 1,
        (3, end): 2,  # instances 1 and 3 stop after step 2
    }
    drawn = bands(ax)
    assert all(left == right for _, left, right in drawn)  # bands keep their size
    # from position 1, every one of the 5 sequences; from 2, the 3 going on
    assert sum(h for x, h, _ in drawn if x < 2) == 5
    assert sum(h for x, h, _ in drawn if 2 < x < 3) == 3
    # move -> study; study -> save twice; save -> end twice
    assert sorted(h for x, h, _ in drawn if x < 2) == [1, 2, 2]
    assert sorted(t.get_text() for t in ax.texts) == sorted(
        ["2", "2", "1", "2", "1", "2", "1", "2"]
    )
    assert ax.get_xticks().tolist() == [1, 2, 3]
    assert "5 sequences of 3 instances" in one_line(ax.get_title())
    assert legend_texts(ax) == ["save", "study", "move", "end (no further step)"]


def test_action_flow_cheapest_only(population):
    ax = ActionFlowDisplay.from_explanations(population, solutions="cheapest").ax_
    colors = action_colors(["move", "save", "study"])  # as for every solution
    assert blocks(ax) == {
        (1, colors["study"]): 1,
        (1, colors["save"]): 1,
        (1, colors["move"]): 1,
        (2, colors["save"]): 1,
        (2, colors["study"]): 1,
        (2, "#c8c8c8"): 1,
    }
    assert sum(h for x, h, _ in bands(ax) if x < 2) == 3
    assert "the cheapest sequence of each of 3 instances" in one_line(ax.get_title())


def test_action_flow_max_length_and_colors(population):
    colors = {"move": "red", "save": "green", "study": "blue"}
    ax = ActionFlowDisplay.from_explanations(
        population, max_length=1, colors=colors
    ).ax_
    assert blocks(ax) == {(1, to_hex("green")): 2}
    assert bands(ax) == []
    with pytest.raises(ValueError, match="no sequence has at most"):
        ActionFlowDisplay.from_explanations(
            population[population["length"] > 1], max_length=1
        )
    with pytest.raises(ValueError, match="no colour for the action.*'study'"):
        ActionFlowDisplay.from_explanations(
            population, colors={"move": "red", "save": "green"}
        )
    with pytest.raises(ValueError, match="'solutions' parameter .* among"):
        ActionFlowDisplay.from_explanations(population, solutions="best")


def test_action_flow_count_labels_never_overlap(crowded):
    many = pd.concat([crowded.assign(instance=k) for k in range(4)], ignore_index=True)
    ax = ActionFlowDisplay.from_explanations(many).ax_
    assert overlapping(text_boxes(ax)) == []


# ---------------------------------------------------------------------- #
# plot_probability_by_step (Fig. 6)
# ---------------------------------------------------------------------- #
def errorbars(ax):
    """``{label: (x, y, low, high)}`` of the drawn error bars."""
    out = {}
    for container in ax.containers:
        line, _, (bars,) = container.lines
        segments = np.array(bars.get_segments())
        out[container.get_label()] = (
            line.get_xdata().tolist(),
            line.get_ydata(),
            segments[:, 0, 1],
            segments[:, 1, 1],
        )
    return out


def test_probability_by_step_means_and_intervals(population):
    ax = ProbabilityByStepDisplay.from_explanations(population, n_boot=300, dodge=0).ax_
    drawn = errorbars(ax)
    assert sorted(drawn) == ["move (2 steps)", "save (4 steps)", "study (3 steps)"]
    x, y, low, high = drawn["save (4 steps)"]
    assert x == [1.0, 2.0]
    np.testing.assert_allclose(y, [(0.7 + 0.8) / 2, (0.6 + 0.4) / 2])
    x, y, low, high = drawn["study (3 steps)"]
    np.testing.assert_allclose(y, [(0.3 + 0.2) / 2, 0.5])
    for _, y, low, high in drawn.values():
        assert (low <= y).all() and (y <= high).all()
    # one value: no spread
    x, y, low, high = drawn["move (2 steps)"]
    assert x == [1.0, 3.0]
    np.testing.assert_allclose(low, y)
    # ... and a hollow marker, explained in the legend
    hollow = [line for line in ax.get_lines() if line.get_markerfacecolor() == "white"]
    assert [line.get_xdata().tolist() for line in hollow] == [[1.0, 3.0], [2.0]]
    assert legend_texts(ax)[-1] == "one step only (no interval)"
    threshold = ax.get_lines()[-1]
    assert list(threshold.get_ydata()) == [0.5, 0.5]
    assert ax.get_xticks().tolist() == [1, 2, 3]


def test_probability_by_step_bootstrap_is_seeded():
    rng = np.random.default_rng(1)
    rows = [
        (k, 0, 0, 1, "save", p, 1.0, 0.1, 1)
        for k, p in enumerate(rng.uniform(0.2, 0.9, 40))
    ]
    frame = make_frame(rows)

    def interval(**params):
        ((_, y, low, high),) = errorbars(
            ProbabilityByStepDisplay.from_explanations(frame, n_boot=400, **params).ax_
        ).values()
        return y[0], low[0], high[0]

    mean, low, high = interval(random_state=3)
    assert low < mean < high
    assert interval(random_state=3) == (mean, low, high)
    assert interval(random_state=np.random.default_rng(3)) == (mean, low, high)
    assert interval(random_state=4) != (mean, low, high)
    # a wider confidence, a wider interval
    _, wide_low, wide_high = interval(random_state=3, confidence=0.99)
    assert wide_low <= low and high <= wide_high


def test_probability_by_step_change_and_median(population):
    initial = pd.Series({1: 0.1, 2: 0.2, 3: 0.0, 4: 0.9})
    ax = ProbabilityByStepDisplay.from_explanations(
        population, measure="change", initial_proba=initial, n_boot=50, dodge=0
    ).ax_
    x, y, _, _ = errorbars(ax)["save (4 steps)"]
    # step 1: 0.7 - 0.1 and 0.8 - 0.2; step 2: 0.6 - 0.3 and 0.4 - 0.2
    np.testing.assert_allclose(y, [0.6, 0.25])
    assert "change" in ax.get_ylabel()
    assert list(ax.get_lines()[-1].get_ydata()) == [0.0, 0.0]  # no change
    ax = ProbabilityByStepDisplay.from_explanations(
        population, statistic="median", solutions="cheapest", n_boot=50, dodge=0
    ).ax_
    x, y, _, _ = errorbars(ax)["study (2 steps)"]
    np.testing.assert_allclose(y, [0.3, 0.5])
    assert ax.get_ylabel().startswith("median")


def test_probability_by_step_errors(population):
    with pytest.raises(ValueError, match="measure='change' needs initial_proba"):
        ProbabilityByStepDisplay.from_explanations(population, measure="change")
    with pytest.raises(ValueError, match="no probability for instance 3"):
        ProbabilityByStepDisplay.from_explanations(
            population, measure="change", initial_proba={1: 0.1, 2: 0.2}
        )
    with pytest.raises(ValueError, match="target_proba is NaN.*no predict_proba"):
        ProbabilityByStepDisplay.from_explanations(
            population.assign(target_proba=np.nan)
        )
    with pytest.raises(ValueError, match="'n_boot' parameter .* an int in the range"):
        ProbabilityByStepDisplay.from_explanations(population, n_boot=0)
    with pytest.raises(ValueError, match=r"'confidence' .* \(0.0, 1.0\)"):
        ProbabilityByStepDisplay.from_explanations(population, confidence=1.0)
    with pytest.raises(ValueError, match="'statistic' parameter .* among"):
        ProbabilityByStepDisplay.from_explanations(population, statistic="mode")
    with pytest.raises(TypeError, match="'random_state' parameter .* 'int'"):
        ProbabilityByStepDisplay.from_explanations(population, random_state="seed")


# ---------------------------------------------------------------------- #
# Errors shared by every plot
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize("display", [TargetProbabilityDisplay, ParetoFrontDisplay])
def test_clear_errors_for_one_instance(explanations, display):
    plot = display.from_explanations
    with pytest.raises(ValueError, match="holds 2 instances"):
        plot(explanations)
    with pytest.raises(ValueError, match="'zzz' is not in explanations"):
        plot(explanations, "zzz")
    with pytest.raises(ValueError, match="no sequence to plot.*no_counterfactual"):
        plot(explanations, "b")
    with pytest.raises(ValueError, match="lacks the column"):
        plot(explanations.drop(columns="sequence_cost"), "a")
    with pytest.raises(TypeError, match="DataFrame returned by explain"):
        plot(explanations.to_numpy(), "a")
    with pytest.raises(ValueError, match=r"solution 3 of instance 'a' has the steps"):
        plot(explanations.drop(index=6), "a")


@pytest.mark.parametrize("display", [TargetProbabilityDisplay, ParetoFrontDisplay])
def test_error_status_shows_its_message(explanations, display):
    plot = display.from_explanations
    failed = pd.DataFrame(
        [{"instance": "c", "status": "error", "message": "predict_proba failed"}]
    )
    frame = pd.concat([explanations, failed], ignore_index=True)
    with pytest.raises(ValueError, match="status 'error': predict_proba failed"):
        plot(frame, "c")


@pytest.mark.parametrize("display", [ActionFlowDisplay, ProbabilityByStepDisplay])
def test_clear_errors_across_instances(population, display):
    plot = display.from_explanations
    with pytest.raises(TypeError, match="DataFrame returned by explain"):
        plot(population.to_dict())
    with pytest.raises(ValueError, match="lacks the column"):
        plot(population.drop(columns="step"))
    none = population[population["status"] != "ok"]
    with pytest.raises(ValueError, match="no sequence to plot.*already_target"):
        plot(none)
    with pytest.raises(ValueError, match="has the steps"):
        plot(population.drop(index=1))


def test_every_plot_draws_into_a_given_axes(population):
    fig, axes = plt.subplots(2, 2)
    assert (
        ActionFlowDisplay.from_explanations(population, ax=axes[0, 0]).ax_ is axes[0, 0]
    )
    assert (
        ProbabilityByStepDisplay.from_explanations(
            population, n_boot=20, ax=axes[0, 1]
        ).ax_
        is axes[0, 1]
    )
    assert (
        TargetProbabilityDisplay.from_explanations(population, 2, ax=axes[1, 0]).ax_
        is axes[1, 0]
    )
    assert (
        ParetoFrontDisplay.from_explanations(population, 2, ax=axes[1, 1]).ax_
        is axes[1, 1]
    )
    fig.canvas.draw()


def test_action_colors():
    colors = action_colors(["b", "a", "b"])
    assert list(colors) == ["b", "a"]
    assert colors["b"] == "#1f77b4"
    assert len(set(action_colors([f"x{i}" for i in range(25)]).values())) == 25


def test_matplotlib_is_imported_lazily():
    code = "import sys, sklearn_cscf.plotting; print('matplotlib' in sys.modules)"
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert completed.stdout.strip() == "False", completed.stderr


# ---------------------------------------------------------------------- #
# A frame from the explainer itself
# ---------------------------------------------------------------------- #
def test_every_plot_on_a_real_frame(
    credit_data, credit_model, credit_actions, credit_graph, credit_rejected
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
    rejected = credit_rejected.iloc[:3]
    frame = explainer.explain(rejected)
    initial = pd.Series(
        credit_model.predict_proba(rejected)[:, 1], index=rejected.index
    )
    solved = frame.loc[frame["status"] == "ok", "instance"].unique()
    assert len(solved) > 0
    ActionFlowDisplay.from_explanations(frame)
    ProbabilityByStepDisplay.from_explanations(
        frame, measure="change", initial_proba=initial
    )
    ax = TargetProbabilityDisplay.from_explanations(
        frame, solved[0], initial_proba=initial
    ).ax_
    first = frame[(frame["instance"] == solved[0]) & (frame["solution"] == 0)]
    np.testing.assert_allclose(
        ax.get_lines()[0].get_ydata()[1:], first["target_proba"].to_numpy()
    )
    ParetoFrontDisplay.from_explanations(frame, solved[0])
    ax.figure.canvas.draw()


@pytest.mark.slow  # runs an example script (pytest -m slow; a step of .ci/run)
def test_gallery_example_writes_every_plot(tmp_path):
    gallery = Path(__file__).resolve().parents[1] / "examples" / "plotting_gallery.py"
    completed = subprocess.run(
        [
            sys.executable,
            str(gallery),
            "--n-instances",
            "3",
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
    for name in (
        "action_flow.png",
        "probability_by_step.png",
        "target_probability.png",
        "pareto_front.png",
        "recourse_summary.png",
    ):
        assert (tmp_path / name).stat().st_size > 0


# ---------------------------------------------------------------------- #
# Plots side by side
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize("layout", ["tight", "constrained"])
def test_a_row_of_three_plots_cuts_nothing_off(population, priced, layout):
    # long action names, as in the paper's actions
    long = {"study": "increase_capital_gain", "save": "change_working_hours"}
    frame = priced.assign(action=priced["action"].replace(long))
    fig, axes = plt.subplots(
        1, 3, figsize=(14, 4), layout="constrained" if layout == "constrained" else None
    )
    ActionFlowDisplay.from_explanations(frame, ax=axes[0])
    ParetoFrontDisplay.from_explanations(frame, 2, ax=axes[1])
    RecourseSummaryDisplay.from_explanations(frame, ax=axes[2])
    if layout == "tight":
        fig.tight_layout()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    page = fig.bbox
    for ax in axes:
        low, high = sorted(ax.get_ylim())
        ticks = [
            t for t, y in zip(ax.get_yticklabels(), ax.get_yticks()) if low <= y <= high
        ]
        texts = [ax.title, ax.xaxis.label, ax.yaxis.label, *ticks]
        for text in texts:
            if text.get_text():
                box = text.get_window_extent(renderer)
                assert page.x0 - 1 <= box.x0 and box.x1 <= page.x1 + 1, text
                assert page.y0 - 1 <= box.y0 and box.y1 <= page.y1 + 1, text
    # no panel's title, labels or legend runs into the next panel's
    panels = [ax.get_tightbbox(renderer) for ax in axes]
    for left, right in itertools.pairwise(panels):
        assert left.x1 <= right.x0 + 1


# ---------------------------------------------------------------------- #
# Displays: the artists, drawing again, the *_kw dictionaries
# ---------------------------------------------------------------------- #
def test_displays_keep_their_axes_figure_and_artists(population, priced):
    flow = ActionFlowDisplay.from_explanations(population)
    assert flow.figure_ is flow.ax_.figure
    assert len(flow.blocks_) == 8 and len(flow.bands_) == 6
    assert [t.get_text() for t in flow.texts_] == [
        str(int(b.get_height())) for b in flow.blocks_
    ]
    assert flow.legend_ is flow.ax_.get_legend()
    steps = ProbabilityByStepDisplay.from_explanations(population, n_boot=20)
    assert sorted(steps.errorbars_) == ["move", "save", "study"]
    assert list(steps.threshold_line_.get_ydata()) == [0.5, 0.5]
    assert len(steps.singles_) == 2  # move and study have a lone point
    chart = TargetProbabilityDisplay.from_explanations(population, 2)
    assert [line.get_label() for line in chart.lines_] == [
        "#1 cost 1.00",
        "#2 cost 2.00",
    ]
    assert [t.get_text() for t in chart.texts_] == ["save", "study", "save", "move"]
    front = ParetoFrontDisplay.from_explanations(population, 2, highlight=1)
    assert sorted(front.scatters_) == [1, 3]
    assert front.ring_.get_offsets().tolist() == [[2.0, 0.1]]
    summary = RecourseSummaryDisplay.from_explanations(priced)
    solid, hatched = summary.bars_
    assert len(solid) == len(hatched) == 3


def test_a_display_draws_again_into_other_axes(population):
    display = ActionFlowDisplay.from_explanations(population, solutions="cheapest")
    first = display.ax_
    fig, ax = plt.subplots()
    assert display.plot(ax=ax) is display
    assert display.ax_ is ax and display.figure_ is fig
    assert blocks(ax) == blocks(first)
    # the constructor takes the data itself
    own = ActionFlowDisplay([("a", "b"), ("a",)], colors={"a": "red", "b": "blue"})
    own.plot()
    assert [t.get_text() for t in own.texts_] == ["2", "1", "1"]


def test_style_dictionaries_reach_matplotlib(population, priced):
    flow = ActionFlowDisplay.from_explanations(
        population, block_kw={"edgecolor": "black"}, band_kw={"alpha": 0.9}
    )
    # the user's name wins over the default's alias (ec)
    assert {to_hex(b.get_edgecolor()) for b in flow.blocks_} == {"#000000"}
    assert {b.get_alpha() for b in flow.bands_} == {0.9}
    chart = TargetProbabilityDisplay.from_explanations(
        population, 2, line_kw={"linewidth": 4}, text_kw={"fontsize": 13}
    )
    assert {line.get_linewidth() for line in chart.lines_} == {4}
    assert {t.get_fontsize() for t in chart.texts_} == {13}
    front = ParetoFrontDisplay.from_explanations(
        population, 2, scatter_kw={"s": 100}, legend_kw={"title": "steps"}
    )
    assert {float(c.get_sizes()[0]) for c in front.scatters_.values()} == {100.0}
    assert front.legend_.get_title().get_text() == "steps"
    steps = ProbabilityByStepDisplay.from_explanations(
        population, n_boot=20, errorbar_kw={"capsize": 0}, threshold_kw={"lw": 3}
    )
    assert steps.threshold_line_.get_linewidth() == 3
    summary = RecourseSummaryDisplay.from_explanations(priced, bar_kw={"height": 0.4})
    assert {round(bar.get_height(), 6) for bar in summary.bars_[0]} == {0.4}


def test_from_explanations_validates_its_arguments(population):
    with pytest.raises(ValueError, match="ActionFlowDisplay.from_explanations"):
        ActionFlowDisplay.from_explanations(population, solutions="best")
    with pytest.raises(TypeError, match="'line_kw' parameter"):
        TargetProbabilityDisplay.from_explanations(population, 2, line_kw="red")
    with pytest.raises(ValueError, match="max_length must be a positive integer"):
        ActionFlowDisplay.from_explanations(population, max_length=True)


# ---------------------------------------------------------------------- #
# What the pictures say (issue 15)
# ---------------------------------------------------------------------- #
def test_titles_name_the_person_and_the_axis_the_class(explanations, population):
    ax = TargetProbabilityDisplay.from_explanations(
        explanations, "a", subject="Person", target_name=">50K"
    ).ax_
    assert ax.get_title().startswith("Person a: ")
    assert ax.get_ylabel() == "P(>50K) after the step"
    assert ParetoFrontDisplay.from_explanations(
        explanations, "a", subject="Person"
    ).ax_.get_title()[:9] == ("Person a:")
    ax = ProbabilityByStepDisplay.from_explanations(
        population, n_boot=20, target_name=">50K"
    ).ax_
    assert ax.get_ylabel() == "mean P(>50K) after the step"
    # without a name: the frame's target class, said as a class
    frame = explanations.assign(target_class=1)
    assert (
        TargetProbabilityDisplay.from_explanations(frame, "a")
        .ax_.get_ylabel()
        .startswith("P(class 1)")
    )
    frame = explanations.assign(target_class="good")
    assert (
        TargetProbabilityDisplay.from_explanations(frame, "a")
        .ax_.get_ylabel()
        .startswith("P(good)")
    )


def test_a_length_has_one_colour_in_every_panel(population):
    # instance 2 has sequences of 1 and 3 steps, instance 1 of 1 and 2 steps
    fig, axes = plt.subplots(1, 2)
    ParetoFrontDisplay.from_explanations(population, 1, ax=axes[0])
    ParetoFrontDisplay.from_explanations(population, 2, ax=axes[1])

    def colors(ax):
        return {
            t.get_text(): to_hex(h.get_color())
            for t, h in zip(ax.get_legend().get_texts(), ax.get_legend().legend_handles)
            if "step" in t.get_text()
        }

    left, right = colors(axes[0]), colors(axes[1])
    assert left["1 step"] == right["1 step"]
    assert sorted(left) == ["1 step", "2 steps"]
    assert sorted(right) == ["1 step", "3 steps"]
    assert len({left["2 steps"], right["3 steps"], left["1 step"]}) == 3


def test_pareto_says_when_a_point_looks_dominated(explanations, population):
    # plan #1's other order (3.5, 0.30) looks dominated by #1 (2.0, 0.30)
    assert NOT_DRAWN in legend_texts(
        ParetoFrontDisplay.from_explanations(explanations, "a").ax_
    )
    # instance 2: (1.0, 0.1) and (2.0, 0.1): the second looks dominated
    assert NOT_DRAWN in legend_texts(
        ParetoFrontDisplay.from_explanations(population, 2).ax_
    )
    # a front that looks like one needs no note
    front = explanations[explanations["solution"].isin([0, 1, 3])]
    assert NOT_DRAWN not in legend_texts(
        ParetoFrontDisplay.from_explanations(front, "a").ax_
    )
    # nor does the probability view, which shows no objective
    ax = ParetoFrontDisplay.from_explanations(explanations, "a", y="target_proba").ax_
    assert NOT_DRAWN not in legend_texts(ax)


DISPLAYS = [
    ActionFlowDisplay,
    ProbabilityByStepDisplay,
    TargetProbabilityDisplay,
    ParetoFrontDisplay,
    RecourseSummaryDisplay,
]
NAMES = [
    "plot_action_flow",
    "plot_probability_by_step",
    "plot_target_probability",
    "plot_pareto_front",
    "plot_recourse_summary",
]


@pytest.mark.parametrize(
    "function",
    [display.from_explanations for display in DISPLAYS],
    ids=lambda f: f.__qualname__,
)
def test_every_public_argument_is_declared_to_validate_params(function):
    import inspect

    constraints = function._skl_parameter_constraints
    names = [p for p in inspect.signature(function).parameters if p != "cls"]
    assert sorted(constraints) == sorted(names)


@pytest.mark.parametrize("display, name", list(zip(DISPLAYS, NAMES)))
def test_the_plot_functions_are_deprecated_aliases_of_the_displays(
    priced, display, name
):
    population = priced
    import warnings

    from sklearn_cscf import plotting

    function = getattr(plotting, name)
    one = name in ("plot_target_probability", "plot_pareto_front")
    args = (population, 2) if one else (population,)
    _, ax = plt.subplots()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert function(*args, ax=ax) is ax
    deprecations = [w for w in caught if issubclass(w.category, FutureWarning)]
    assert len(deprecations) == 1  # once per call
    assert name in str(deprecations[0].message)
    assert "removed in 0.3" in str(deprecations[0].message)
    assert deprecations[0].filename == __file__  # points at the caller
    with pytest.warns(FutureWarning, match=f"{display.__name__}.from_explanations"):
        drawn = function(*args)
    reference = display.from_explanations(*args).ax_
    assert drawn.get_title() == reference.get_title()
    assert len(drawn.get_children()) == len(reference.get_children())
    plt.close("all")


# ---------------------------------------------------------------------- #
# Plots that hold: the user guide's 1 x 3 layout, many plans and actions
# ---------------------------------------------------------------------- #
MANY_ACTIONS = [
    "decrease_mean texture",
    "decrease_worst area",
    "decrease_mean radius",
    "decrease_worst concave points",
    "decrease_mean smoothness",
    "decrease_worst perimeter",
    "decrease_area error",
    "decrease_worst symmetry",
]


def many_plans(n_people=6, n_plans=5, length=7, seed=0):
    """Person 0 with 5 plans of 7 steps; 5 others with 5 plans of 1 to 7
    steps; 8 actions with long names."""
    rng = np.random.default_rng(seed)
    rows = []
    for person in range(n_people):
        for plan in range(n_plans):
            k = length if person == 0 else int(rng.integers(1, length + 1))
            actions = rng.permutation(MANY_ACTIONS)[:k]
            proba = np.sort(rng.uniform(0, 1, k))
            proba[-1] = max(proba[-1], 0.55)
            if plan == 0:  # flat, then up at the last step
                proba[:-1] = np.round(proba[:-1] * 0.05, 2)
            cost = 1.0 + plan + rng.uniform(0, 0.5)
            for t, action in enumerate(actions, start=1):
                rows.append(
                    {
                        "instance": person,
                        "plan": plan,
                        "solution": plan,
                        "step": t,
                        "action": action,
                        "feature": action.split("_", 1)[1],
                        "effort": cost / k,
                        "cost": cost / k,
                        "target_proba": proba[t - 1],
                        "sequence_cost": cost,
                        "gower_distance": 0.05 * (5 - plan) + rng.uniform(0, 0.02),
                        "length": k,
                        "status": "ok",
                        "target_class": "benign",
                    }
                )
    return pd.DataFrame(rows)


def drawn_texts(fig):
    """Every visible, non-empty text of the figure's axes and legends, with
    its box; tick labels only where their tick is in view."""
    renderer = fig.canvas.get_renderer()
    texts = []
    for ax in fig.axes:
        boxes = [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        for axis, (low, high) in (
            (ax.xaxis, sorted(ax.get_xlim())),
            (ax.yaxis, sorted(ax.get_ylim())),
        ):
            for tick in axis.get_major_ticks():
                if low <= tick.get_loc() <= high:
                    boxes.append(tick.label1)
        legend = ax.get_legend()
        if legend is not None:
            boxes += [legend.get_title(), *legend.get_texts()]
        for text in boxes:
            if text.get_visible() and text.get_text().strip():
                texts.append((text, text.get_window_extent(renderer)))
    return texts


def assert_texts_hold(fig):
    fig.canvas.draw()
    page = fig.bbox
    texts = drawn_texts(fig)
    assert len(texts) > 40
    for text, box in texts:
        assert page.x0 - 1 <= box.x0 and box.x1 <= page.x1 + 1, text
        assert page.y0 - 1 <= box.y0 and box.y1 <= page.y1 + 1, text
    for (a, box_a), (b, box_b) in itertools.combinations(texts, 2):
        overlap_x = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
        overlap_y = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
        assert overlap_x <= 1 or overlap_y <= 1, (a, b)


@pytest.mark.parametrize("person", [0, 1])
def test_the_guides_layout_holds_with_many_plans_and_actions(person):
    frame = many_plans()
    fig, axes = plt.subplots(1, 3, figsize=(18, 5), layout="constrained")
    TargetProbabilityDisplay.from_explanations(
        frame, person, initial_proba=0.02, ax=axes[0]
    )
    ProbabilityByStepDisplay.from_explanations(frame, n_boot=50, ax=axes[1])
    ActionFlowDisplay.from_explanations(frame, ax=axes[2])
    assert_texts_hold(fig)
    # the titles keep their lines (shortened, not wrapped)
    assert [ax.get_title().count("\n") for ax in axes] == [0, 1, 1]
    plt.close(fig)


def test_the_guides_layout_holds_for_one_person(priced):
    frame = many_plans()
    fig, axes = plt.subplots(1, 3, figsize=(18, 5), layout="constrained")
    ParetoFrontDisplay.from_explanations(frame, 0, ax=axes[0])
    TargetProbabilityDisplay.from_explanations(frame, 0, ax=axes[1])
    RecourseSummaryDisplay.from_explanations(frame, ax=axes[2])
    assert_texts_hold(fig)
    plt.close(fig)


def test_a_crowded_step_chart_labels_its_points_with_letters():
    frame = many_plans()
    _, axes = plt.subplots(1, 3, figsize=(18, 5), layout="constrained")
    display = TargetProbabilityDisplay.from_explanations(frame, 0, ax=axes[0])
    keys = {t.get_text() for t in display.texts_}
    assert keys <= set("ABCDEFGH") and len(keys) == 8
    legend = legend_texts(display.ax_)
    assert "A  " + display.lines["actions"].iloc[0][0] in legend
    # alone in a large figure, or asked to, the points carry the names
    wide_display = TargetProbabilityDisplay.from_explanations(
        frame, 0, ax=plt.subplots(figsize=(30, 14))[1]
    )
    assert {t.get_text() for t in wide_display.texts_} == set(MANY_ACTIONS)
    named = TargetProbabilityDisplay.from_explanations(frame, 0, step_labels="names")
    assert {t.get_text() for t in named.texts_} == set(MANY_ACTIONS)
    plt.close("all")


def test_sequence_lengths_have_clearly_different_colours():
    from matplotlib.colors import rgb_to_hsv, to_rgb

    from sklearn_cscf.plotting import _style

    # hue families: no two lengths share one (two greens, say)
    bounds = [(345, 35), (35, 70), (70, 170), (170, 200), (200, 255), (255, 300)]
    bounds += [(300, 345)]

    def family(color):
        hue = rgb_to_hsv(to_rgb(color))[0] * 360
        return next(
            k
            for k, (low, high) in enumerate(bounds)
            if (low <= hue < high) or (low > high and (hue >= low or hue < high))
        )

    colours = [_style.length_color(n) for n in range(1, 7)]
    assert len({family(c) for c in colours}) == len(colours)


def crossing_leaders(display):
    """The labels whose leader line crosses another plan's line."""
    display.figure_.canvas.draw()

    def side(a, b, c):
        return (c[0] - a[0]) * (b[1] - a[1]) - (c[1] - a[1]) * (b[0] - a[0])

    crossing = []
    for label in display.texts_:
        arrow = label.arrow_patch
        if arrow is None or not arrow.get_visible():
            continue
        a, b = arrow.get_path().vertices[[0, -1]]
        for line in display.lines_:
            if line is label.line:
                continue
            xy = line.get_transform().transform(line.get_xydata())
            if any(
                side(p, q, a) * side(p, q, b) < 0 and side(a, b, p) * side(a, b, q) < 0
                for p, q in zip(xy[:-1], xy[1:])
            ):
                crossing.append(label.get_text())
                break
    return crossing


@pytest.mark.parametrize("size", [(8, 4.5), (6, 4)])
def test_leader_lines_keep_off_other_plans_lines(crowded, size):
    _, ax = plt.subplots(figsize=size, layout="constrained")
    display = TargetProbabilityDisplay.from_explanations(
        crowded, initial_proba=0.2, max_solutions=10, step_labels="names", ax=ax
    )
    leaders = [t for t in display.texts_ if t.arrow_patch.get_visible()]
    # the ten plans start together: a few leaders in that knot cannot help
    # crossing a neighbour; the others go round
    assert len(crossing_leaders(display)) <= len(leaders) // 3
    plt.close("all")


def test_a_regressors_step_chart_draws_its_predictions_against_the_range(
    explanations,
):
    frame = explanations.assign(
        prediction=explanations["target_proba"] * 100,  # 40, 70, 55, ...
        target_proba=np.nan,
        target_class="[60, 100]",
    )
    display = TargetProbabilityDisplay.from_explanations(
        frame, "a", initial_proba=12.5, dodge=0
    )
    ax = display.ax_
    drawn = [line.get_ydata().tolist() for line in display.lines_]
    expected = [[12.5, 40.0, 70.0], [12.5, 55.0], [12.5, 20.0, 45.0, 90.0]]
    assert [pytest.approx(e) for e in expected] == drawn
    band = display.threshold_line_.get_extents().transformed(ax.transData.inverted())
    assert (band.y0, band.y1) == pytest.approx((60.0, 100.0))
    assert "target range [60, 100]" in legend_texts(ax)
    assert ax.get_ylabel() == "prediction after the step"
    low, high = ax.get_ylim()
    assert low < 12.5 and high > 100.0


def test_many_actions_by_step_keep_their_intervals_plain():
    display = ProbabilityByStepDisplay.from_explanations(many_plans(), n_boot=20)
    assert len(display.errorbars_) == 8
    for container in display.errorbars_.values():
        join, _, bars = container.lines
        assert join.get_linestyle() == ":" and join.get_linewidth() < 1
        assert all(style[1] is None for style in bars[0].get_linestyle())
    plt.close("all")


def test_step_chart_draws_each_order_with_its_cheapest_values(explanations):
    # all_values=True: plan 0's first order again, nearer but dearer
    variant = make_frame(
        [
            ("a", 0, 4, 1, "study", 0.35, 2.8, 0.20, 2),
            ("a", 0, 4, 2, "save", 0.75, 2.8, 0.20, 2),
        ]
    )
    both = pd.concat([explanations, variant], ignore_index=True)
    ax = TargetProbabilityDisplay.from_explanations(
        both, "a", all_orders=True, dodge=0
    ).ax_
    assert legend_texts(ax)[:3] == [
        "#1 cost 2.00",
        "#1 other order, cost 3.50",
        "#2 cost 3.00",
    ]
    drawn = [np.asarray(line.get_ydata()).tolist() for line in ax.get_lines()]
    assert [0.35, 0.75] not in drawn


# ---------------------------------------------------------------------- #
# issue 37: every display for every kind of model it can draw
# ---------------------------------------------------------------------- #
def _band(artist, ax):
    """``(bottom, top)`` of an axhspan, in data coordinates."""
    box = artist.get_extents().transformed(ax.transData.inverted())
    return box.y0, box.y1


@pytest.mark.parametrize("kind", ["binary", "multiclass", "regressor"])
def test_every_display_draws_every_kind_of_model(kinds_explained, kind):
    _, rows, frame, _, now = kinds_explained[kind]
    ok = frame[frame["status"] == "ok"]
    person = ok.groupby("instance")["plan"].nunique().idxmax()
    column = "prediction" if kind == "regressor" else "target_proba"

    flow = ActionFlowDisplay.from_explanations(frame)
    assert flow.blocks_ and sum(b.get_height() for b in flow.blocks_) > 0
    summary = RecourseSummaryDisplay.from_explanations(frame)
    assert summary.bars_ and len(summary.bars_[0]) > 0

    # the step chart: the probability against the decision threshold of a
    # binary model, none for three classes, the prediction against the range
    chart = TargetProbabilityDisplay.from_explanations(frame, person, initial_proba=now)
    first = ok[(ok["instance"] == person) & (ok["solution"] == 0)]
    np.testing.assert_allclose(
        chart.lines_[0].get_ydata()[1:], first.sort_values("step")[column]
    )
    for level in (
        chart,
        ProbabilityByStepDisplay.from_explanations(frame, n_boot=20),
    ):
        line = level.threshold_line_
        if kind == "binary":
            assert line.get_ydata()[0] == 0.5
            assert level.ax_.get_ylim() == pytest.approx((-0.03, 1.03), abs=0.011)
        elif kind == "multiclass":
            assert line is None  # no 0.5 that a plan at 0.45 seems to miss
            assert "decision threshold" not in legend_texts(level.ax_)
        else:
            assert _band(line, level.ax_)[1] == pytest.approx(120.0)
            assert "target range [-inf, 120]" in legend_texts(level.ax_)
    by_step = ProbabilityByStepDisplay.from_explanations(frame, n_boot=20)
    taken = ok.groupby(["action", "step"])[column].mean()
    drawn = by_step.statistics.set_index(["action", "step"])["value"]
    np.testing.assert_allclose(drawn, taken.reindex(drawn.index))
    if kind == "regressor":
        assert by_step.ax_.get_ylabel() == "mean prediction after the step"
        assert by_step.ax_.get_title().startswith("Prediction by step")
        low, high = by_step.ax_.get_ylim()
        assert low < 120 < high and high > ok["prediction"].max()
    change = ProbabilityByStepDisplay.from_explanations(
        frame, measure="change", initial_proba=now, n_boot=20
    )
    assert change.threshold_line_.get_ydata()[0] == 0.0  # the zero line

    # the front: by distance for all; by probability, prediction or margin
    front = ParetoFrontDisplay.from_explanations(frame, person)
    assert front.scatters_
    y = "prediction" if kind == "regressor" else "target_proba"
    by_y = ParetoFrontDisplay.from_explanations(frame, person, y=y)
    lasts = first.sort_values("step")[column].iloc[-1]
    assert lasts in by_y.points["y"].to_numpy()
    if kind == "regressor":
        assert _band(by_y.line_, by_y.ax_)[1] == pytest.approx(120.0)
        with pytest.raises(ValueError, match="y='prediction'"):
            ParetoFrontDisplay.from_explanations(frame, person, y="target_proba")
    if kind == "multiclass":
        with pytest.raises(ValueError, match="NaN margin.*no fixed decision"):
            ParetoFrontDisplay.from_explanations(frame, person, y="margin")
    else:
        margins = ParetoFrontDisplay.from_explanations(frame, person, y="margin")
        assert margins.line_.get_ydata()[0] == 0.0
        assert margins.ax_.get_ylim()[0] < 0 < margins.ax_.get_ylim()[1]
        fragile = "fragile: margin < 0.05" in legend_texts(margins.ax_)
        assert fragile == (kind == "binary")

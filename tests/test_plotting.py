"""Plots of the tidy explanations frame."""

import matplotlib
import numpy as np
import pandas as pd
import pytest

from sklearn_cscf.plotting import plot_pareto_front, plot_target_probability

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture
def explanations():
    """Two instances: 'a' with three sequences, 'b' without any."""
    rows = [
        # instance, solution, step, action, proba, cost, gower, length
        ("a", 0, 1, "study", 0.40, 2.0, 0.30, 2),
        ("a", 0, 2, "save", 0.70, 2.0, 0.30, 2),
        ("a", 1, 1, "move", 0.55, 3.0, 0.10, 1),
        ("a", 2, 1, "save", 0.20, 4.5, 0.05, 3),
        ("a", 2, 2, "study", 0.45, 4.5, 0.05, 3),
        ("a", 2, 3, "move", 0.90, 4.5, 0.05, 3),
    ]
    frame = pd.DataFrame(
        rows,
        columns=[
            "instance",
            "solution",
            "step",
            "action",
            "target_proba",
            "sequence_cost",
            "gower_distance",
            "length",
        ],
    )
    frame["status"] = "ok"
    failed = {"instance": "b", "status": "no_counterfactual"}
    return pd.concat([frame, pd.DataFrame([failed])], ignore_index=True)


def test_target_probability_one_line_per_sequence(explanations):
    ax = plot_target_probability(explanations, "a")
    lines = ax.get_lines()
    assert [line.get_ydata().tolist() for line in lines] == [
        [0.40, 0.70],
        [0.55],
        [0.20, 0.45, 0.90],
    ]
    assert [line.get_xdata().tolist() for line in lines][2] == [1.0, 2.0, 3.0]
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert labels == ["#1 (cost 2.00)", "#2 (cost 3.00)", "#3 (cost 4.50)"]
    # every point is labelled with its action
    assert sorted(t.get_text() for t in ax.texts) == sorted(
        ["study", "save", "move", "save", "study", "move"]
    )


def test_target_probability_starts_from_the_instance(explanations):
    ax = plot_target_probability(explanations, "a", initial_proba=0.1)
    for line in ax.get_lines():
        assert line.get_xdata()[0] == 0.0
        assert line.get_ydata()[0] == 0.1


def test_target_probability_keeps_the_cheapest(explanations):
    ax = plot_target_probability(explanations, "a", max_solutions=2)
    assert len(ax.get_lines()) == 2
    assert ax.get_lines()[1].get_ydata().tolist() == [0.55]


def test_pareto_front_one_point_per_sequence(explanations):
    fig, ax = plt.subplots()
    assert plot_pareto_front(explanations, "a", ax=ax) is ax
    points = ax.collections[0]
    np.testing.assert_allclose(
        points.get_offsets(), [[2.0, 0.30], [3.0, 0.10], [4.5, 0.05]]
    )
    np.testing.assert_allclose(points.get_array(), [2, 1, 3])  # coloured by length
    assert [t.get_text() for t in ax.texts] == ["#1", "#2", "#3"]


def test_single_instance_needs_no_label(explanations):
    only_a = explanations[explanations["instance"] == "a"]
    assert "Instance a" in plot_pareto_front(only_a).get_title()


@pytest.mark.parametrize("plot", [plot_target_probability, plot_pareto_front])
def test_clear_errors(explanations, plot):
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


@pytest.mark.parametrize("bad", [0, -1, 1.5, "3"])
def test_max_solutions_must_be_positive(explanations, bad):
    with pytest.raises(ValueError, match="max_solutions"):
        plot_target_probability(explanations, "a", max_solutions=bad)

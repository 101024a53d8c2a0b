"""Label placement: the home-made engine against adjustText, on the gallery.

Draws the labelled figures of ``examples/plotting_gallery.py`` (the action
flow's counts, and for every person with a sequence the step chart's action
names and the Pareto view's plan numbers), and a crowded person of
tests/test_plotting.py (ten plans of close costs and probabilities, long
action names: 19 and 10 labels; ``crowded_*``), once per engine: with the
plots' own placement (``sklearn_cscf.plotting._labels``, re-placed at every
draw), with adjustText's ``adjust_text`` (run once, after the layout) and
defaults, and with adjustText's boxes grown for the repulsion. For each
figure and engine it prints:

- ``labels``: the labels drawn;
- ``overlaps``: pairs of labels whose boxes overlap (by more than half a
  pixel each way, as tests/test_plotting.py counts them);
- ``outside``: labels not wholly inside the axes;
- ``on marker``: labels covering one of the plot's markers (or within
  4 pixels of its centre);
- ``on line``: labels crossed by one of the plot's lines (the plans' lines
  and the decision threshold of the step chart);
- ``after resize``: overlapping pairs plus labels outside, once the figure
  is redrawn at 6 x 4 inches (a figure put in a notebook cell or a grid);
- ``ms``: the time to place the labels and draw the figure once.

Run ``python benchmarks/bench_labels.py --help`` for the options; with
``--output DIR`` it also writes each figure, per engine, as a PNG. Needs
matplotlib (the ``plot`` extra) and adjustText, which the library itself does
not use: ``pip install adjustText``.
"""

import argparse
import importlib.util
import itertools
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from sklearn_cscf.plotting import (
    ActionFlowDisplay,
    ParetoFrontDisplay,
    TargetProbabilityDisplay,
    _labels,
)

GALLERY = Path(__file__).resolve().parents[1] / "examples" / "plotting_gallery.py"
# adjustText with its defaults, and with boxes grown for the repulsion (so
# that a text keeps a marker's width away from the point it labels)
ENGINES = {
    "home": None,
    "adjustText": {},
    "adjustText, expand 1.6": {"expand": (1.6, 1.9), "force_static": (0.3, 0.5)},
}


def gallery_frame(argv):
    """The gallery's explanations, probabilities now and action colours."""
    spec = importlib.util.spec_from_file_location("plotting_gallery", GALLERY)
    gallery = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gallery)
    return gallery.explain(gallery.parse_args(argv))


class Recorder:
    """Stands in for ``_labels.place_labels``: keeps what it was asked to
    place, so that adjustText can place it after the layout."""

    def __init__(self):
        self.calls = []

    def __call__(self, ax, labels, *, points=(), sizes=None, lines=(), center=False):
        points = np.asarray(points, dtype=float).reshape(-1, 2)
        self.calls.append((ax, list(labels), points, list(lines), center))


def adjust(ax, annotations, points, lines, center, options):
    """Replace the annotations by plain texts at their points, and let
    adjustText move them apart. Markers repel them, and so do points every
    few pixels along the lines (adjustText's way to keep texts off lines:
    its ``objects`` are boxes, which for a slanted line cover the plot).
    Counts sit on their blocks, so they do not repel from where they start."""
    from adjustText import adjust_text

    texts = []
    for note in annotations:
        x, y = note.xy
        bbox = note.get_bbox_patch()
        texts.append(
            ax.text(
                x,
                y,
                note.get_text(),
                fontsize=note.get_fontsize(),
                color=note.get_color(),
                fontweight=note.get_fontweight(),
                ha="center",
                va="center",
                bbox=(
                    {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"}
                    if bbox is not None
                    else None
                ),
            )
        )
        note.remove()
    along = ax.transData.inverted().transform(_labels._line_samples(lines, 6.0))
    repel = np.vstack([points, along]) if len(along) else points
    x, y = (repel[:, 0], repel[:, 1]) if len(repel) else (None, None)
    adjust_text(
        texts,
        x=x,
        y=y,
        ax=ax,
        avoid_self=not center,
        arrowprops={"arrowstyle": "-", "color": "0.4", "lw": 0.6},
        **options,
    )
    return texts


def boxes(ax, texts):
    """The text boxes, in pixels (an annotation's leader line left out)."""
    from matplotlib.text import Text

    renderer = ax.figure.canvas.get_renderer()
    return [Text.get_window_extent(t, renderer) for t in texts]


def measure(ax, texts, points, lines):
    """``(overlapping pairs, labels outside the axes, labels on a marker,
    labels on a line)``."""
    drawn = boxes(ax, texts)
    pairs = sum(
        1
        for a, b in itertools.combinations(drawn, 2)
        if min(a.x1, b.x1) - max(a.x0, b.x0) > 0.5
        and min(a.y1, b.y1) - max(a.y0, b.y0) > 0.5
    )
    frame = ax.get_window_extent()
    outside = sum(
        1
        for b in drawn
        if b.x0 < frame.x0 - 0.5
        or b.x1 > frame.x1 + 0.5
        or b.y0 < frame.y0 - 0.5
        or b.y1 > frame.y1 + 0.5
    )
    xy = ax.transData.transform(points) if len(points) else np.zeros((0, 2))
    along = _labels._line_samples(lines, 2.0)
    on_marker = sum(int(_covers(b, xy, 4.0)) for b in drawn)
    on_line = sum(int(_covers(b, along, 0.0)) for b in drawn)
    return pairs, outside, on_marker, on_line


def _covers(box, xy, margin):
    """Whether ``box``, grown by ``margin`` pixels, holds one of ``xy``."""
    if len(xy) == 0:
        return False
    inside_x = (xy[:, 0] > box.x0 - margin) & (xy[:, 0] < box.x1 + margin)
    inside_y = (xy[:, 1] > box.y0 - margin) & (xy[:, 1] < box.y1 + margin)
    return bool((inside_x & inside_y).any())


def run(figure, draw, engine, output):
    """Draw one figure with one engine; its row of the table."""
    recorder = Recorder()
    if engine != "home":
        original, _labels.place_labels = _labels.place_labels, recorder
        try:
            ax = draw()
        finally:
            _labels.place_labels = original
        ((_, annotations, points, lines, center),) = recorder.calls
        ax.figure.canvas.draw()  # the layout first: adjustText needs it
        start = time.perf_counter()
        texts = adjust(ax, annotations, points, lines, center, ENGINES[engine])
        ax.figure.canvas.draw()
    else:
        original = _labels.place_labels

        def spy(ax, labels, **kw):
            recorder(ax, labels, **kw)
            return original(ax, labels, **kw)

        _labels.place_labels = spy
        try:
            ax = draw()
        finally:
            _labels.place_labels = original
        ((_, texts, points, lines, _),) = recorder.calls
        ax.figure.canvas.draw()  # the layout, as for adjustText
        start = time.perf_counter()
        ax.figure.canvas.draw()  # placed again at this draw
    seconds = time.perf_counter() - start
    pairs, outside, on_marker, on_line = measure(ax, texts, points, lines)
    if output is not None:
        name = engine.replace(", ", "_").replace(" ", "")
        ax.figure.savefig(output / f"{figure}_{name}.png", dpi=100)
    ax.figure.set_size_inches(6, 4)
    ax.figure.canvas.draw()
    small_pairs, small_outside, _, _ = measure(ax, texts, points, lines)
    plt.close(ax.figure)
    return {
        "figure": figure,
        "engine": engine,
        "labels": len(texts),
        "overlaps": pairs,
        "outside": outside,
        "on marker": on_marker,
        "on line": on_line,
        "after resize": small_pairs + small_outside,
        "ms": 1000 * seconds,
    }


def crowded():
    """One person, ten plans of close probabilities, costs and distances,
    with long action names (tests/test_plotting.py's ``crowded``)."""
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
                {
                    "instance": "p",
                    "plan": plan,
                    "solution": plan,
                    "step": step,
                    "action": names[(plan + step) % len(names)],
                    "target_proba": 0.30 + 0.2 * step + 0.01 * plan,
                    # one far plan squeezes the others together
                    "sequence_cost": 10.0 if plan == 9 else 1.0 + 0.02 * plan,
                    "gower_distance": 0.5 if plan == 9 else 0.10 + 0.001 * plan,
                    "length": length,
                    "status": "ok",
                }
            )
    return pd.DataFrame(rows)


def figures(explanations, initial, colors):
    """``(name, function drawing it)`` for each labelled figure."""
    busy = crowded()
    yield (
        "crowded_target_probability",
        lambda: (
            TargetProbabilityDisplay.from_explanations(
                busy, initial_proba=0.2, max_solutions=10
            ).ax_
        ),
    )
    yield "crowded_pareto_front", lambda: ParetoFrontDisplay.from_explanations(busy).ax_
    yield (
        "action_flow",
        lambda: ActionFlowDisplay.from_explanations(explanations, colors=colors).ax_,
    )
    ok = explanations[explanations["status"] == "ok"]
    for person in ok["instance"].unique():
        yield (
            f"target_probability_{person}",
            lambda person=person: (
                TargetProbabilityDisplay.from_explanations(
                    explanations, person, initial_proba=initial
                ).ax_
            ),
        )
        yield (
            f"pareto_front_{person}",
            lambda person=person: (
                ParetoFrontDisplay.from_explanations(explanations, person).ax_
            ),
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-instances", default="8")
    parser.add_argument("--population-size", default="150")
    parser.add_argument("--generations", default="40")
    parser.add_argument("--seed", default="0")
    parser.add_argument(
        "--output", type=Path, default=None, help="write the PNGs to this directory"
    )
    args = parser.parse_args(argv)
    if args.output is not None:
        args.output.mkdir(parents=True, exist_ok=True)
    explanations, initial, colors = gallery_frame(
        [
            "--n-instances",
            args.n_instances,
            "--population-size",
            args.population_size,
            "--generations",
            args.generations,
            "--seed",
            args.seed,
        ]
    )
    rows = [
        run(name, draw, engine, args.output)
        for name, draw in figures(explanations, initial, colors)
        for engine in ENGINES
    ]
    table = pd.DataFrame(rows)
    pd.set_option("display.width", 120)
    print(table.to_string(index=False, float_format="{:.1f}".format))
    kinds = table["figure"].str.replace(r"_[^_]+$", "", regex=True)
    kinds = kinds.where(
        ~table["figure"].str.startswith(("action_flow", "crowded")), table["figure"]
    )
    totals = (
        table.assign(figure=kinds)
        .groupby(["figure", "engine"], sort=False)
        .agg(
            figures=("labels", "size"),
            labels=("labels", "sum"),
            overlaps=("overlaps", "sum"),
            outside=("outside", "sum"),
            on_marker=("on marker", "sum"),
            on_line=("on line", "sum"),
            after_resize=("after resize", "sum"),
            ms_median=("ms", "median"),
        )
    )
    print()
    print(totals.to_string(float_format="{:.1f}".format))


if __name__ == "__main__":
    main()

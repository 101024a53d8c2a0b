"""Plots of the tidy explanations frame (needs the ``plot`` extra: matplotlib).

Across many instances (the paper's Fig. 5 and Fig. 6):

- :func:`plot_action_flow`: how many sequences take each action at each step
  position, and which action follows which (a Sankey-style flow).
- :func:`plot_probability_by_step`: per action and step position, the target
  probability after the step (or its change), with bootstrap intervals.

For one instance:

- :func:`plot_target_probability`: the target probability along the cheapest
  plans, step by step, against the decision threshold.
- :func:`plot_pareto_front`: the Pareto-optimal sequences by sequence cost and
  Gower distance (``highlight=`` marks the one :func:`~sklearn_cscf.choose_plan`
  chose).

Across the plans chosen for many instances:

- :func:`plot_recourse_summary`: how often each action appears in the chosen
  plans, as the first step or later (DiCE's feature importance, per action).

:func:`action_colors` gives each action the colour the plots use for it. Every
plot takes ``ax=`` and returns the matplotlib Axes; matplotlib is imported
only when something is drawn.
"""

import functools
import numbers
from collections.abc import Mapping

import numpy as np
import pandas as pd

from sklearn_cscf._frames import check_frame, is_ok

__all__ = [
    "action_colors",
    "plot_action_flow",
    "plot_pareto_front",
    "plot_probability_by_step",
    "plot_recourse_summary",
    "plot_target_probability",
]

_REQUIRED = {"instance", "solution", "step", "action", "status"}
_SOLUTIONS = ("all", "cheapest")
_MEASURES = ("level", "change")
_STATISTICS = {"mean": np.mean, "median": np.median}
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "h", "<", ">")
_END = "end"
_END_COLOR = "#c8c8c8"
_THRESHOLD_COLOR = "0.3"
_GOWER_LABEL = (
    "Gower distance to the person\n"
    "(0 = unchanged,\n1 = every feature maximally changed)"
)
_COST_LABEL = "sequence cost (sum over the steps of effort × discount)"
_PARETO_Y = {
    "gower_distance": _GOWER_LABEL,
    "target_proba": "target probability after the last step\n(higher: farther past "
    "the decision threshold)",
}
_CHOSEN_COLOR = "#d62728"
_CHOSEN_SIZE = 15.0  # diameter of the ring round the chosen sequence, in points
# the legend sits outside the axes, so that it never covers a line or a label
_LEGEND = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0), "borderaxespad": 0.0}


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "Plotting needs matplotlib; install it with "
            "pip install 'sklearn-cscf[plot]'."
        ) from None
    return plt


# ---------------------------------------------------------------------- #
# Checks
# ---------------------------------------------------------------------- #
def _check_frame(explanations, columns=()):
    return check_frame(
        explanations,
        sorted({*_REQUIRED, *columns}),
        returned_by="explain",
        unpack="return_states",
    )


def _status_text(rows):
    """``status 'x'`` and, when the frame explains it, the message."""
    text = f"status {rows['status'].iloc[0]!r}"
    if "message" in rows.columns:
        messages = rows["message"].dropna()
        if len(messages):
            text += f": {messages.iloc[0]}"
    return text


def _check_steps(ok):
    """Every sequence whole: steps 1..length, each once."""
    holes = ok[["solution", "step", "action"]].isna().any(axis=1).to_numpy()
    if holes.any():
        label = ok["instance"].iloc[int(np.argmax(holes))]
        raise ValueError(
            f"a row of instance {label!r} has status 'ok' but no solution, step "
            "or action; pass the DataFrame returned by explain."
        )
    grouped = ok.groupby(["instance", "solution"], sort=False)
    stats = grouped["step"].agg(["min", "max", "count", "nunique"])
    broken = (
        (stats["min"] != 1)
        | (stats["max"] != stats["count"])
        | (stats["nunique"] != stats["count"])
    )
    if "length" in ok.columns:  # a missing last step shows only here
        broken |= (grouped["length"].first() != stats["count"]).fillna(False)
    if broken.any():
        label, solution = stats.index[broken.to_numpy()][0]
        rows = ok[(ok["instance"] == label) & (ok["solution"] == solution)]
        raise ValueError(
            f"solution {solution} of instance {label!r} has the steps "
            f"{sorted(rows['step'].tolist())}; each sequence needs its rows "
            "for steps 1, 2, ..., length (do not drop step rows)."
        )


def _ok_rows(explanations, columns=()):
    """Every ``status == "ok"`` row of the frame, for plots across instances."""
    _check_frame(explanations, columns)
    ok = explanations[is_ok(explanations)]
    if ok.empty:
        counts = explanations["status"].astype(object).value_counts(dropna=False)
        raise ValueError(
            "explanations holds no sequence to plot: no row has status 'ok' "
            f"(statuses: {counts.to_dict()})."
        )
    _check_steps(ok)
    return ok


def _instance_steps(explanations, instance, columns=()):
    """The label and the ``status == "ok"`` rows of one instance, checked."""
    _check_frame(explanations, columns)
    instances = explanations["instance"].unique().tolist()
    if instance is None:
        if len(instances) != 1:
            raise ValueError(
                f"explanations holds {len(instances)} instances; choose one with "
                f"instance=..., e.g. one of {instances[:5]}."
            )
        instance = instances[0]
    rows = explanations[explanations["instance"] == instance]
    if rows.empty:
        raise ValueError(
            f"instance {instance!r} is not in explanations; it holds "
            f"{instances[:5]}{' ...' if len(instances) > 5 else ''}."
        )
    ok = rows[is_ok(rows)]
    if ok.empty:
        raise ValueError(
            f"instance {instance!r} has no sequence to plot ({_status_text(rows)})."
        )
    _check_steps(ok)
    return instance, ok


def _check_choice(name, value, choices):
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}.")


def _check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")


def _check_real(name, value, *, low=-np.inf, high=np.inf, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {value!r}.")
    if not low <= value <= high or np.isnan(value):
        raise ValueError(f"{name} must be in [{low}, {high}], got {value!r}.")
    return float(value)


def _check_proba(rows, where):
    """Raise when the frame has no target probability to plot."""
    missing = rows["target_proba"].isna().to_numpy()
    if missing.all():
        raise ValueError(
            f"target_proba is NaN for {where}: the model has no predict_proba, "
            "so there is no target probability to plot (plot_pareto_front and "
            "plot_action_flow need none)."
        )
    if missing.any():
        label = rows["instance"].iloc[int(np.argmax(missing))]
        raise ValueError(
            f"target_proba is NaN in {int(missing.sum())} of {len(missing)} step "
            f"rows (e.g. instance {label!r}); fill or drop those sequences first."
        )


def _initial_lookup(initial_proba, instances):
    """``{instance: probability}`` from a number or a mapping, checked."""
    if isinstance(initial_proba, pd.Series | Mapping):
        lookup = {}
        for label in instances:
            if label not in initial_proba:
                raise ValueError(
                    f"initial_proba has no probability for instance {label!r}; "
                    "index it by the instance labels, e.g. pd.Series("
                    "model.predict_proba(X)[:, 1], index=X.index)."
                )
            lookup[label] = _check_real(
                f"initial_proba[{label!r}]", initial_proba[label], low=0, high=1
            )
        return lookup
    if len(instances) != 1:
        raise TypeError(
            "initial_proba must map each instance label to its probability "
            "(a Series indexed like X, or a dict) when several instances are "
            f"plotted, got {type(initial_proba).__name__}."
        )
    return {instances[0]: _check_real("initial_proba", initial_proba, low=0, high=1)}


# ---------------------------------------------------------------------- #
# Sequences
# ---------------------------------------------------------------------- #
def _sequences(ok):
    """One row per sequence: ``instance``, ``solution``, ``plan``, ``actions``
    (a tuple in step order), ``length`` and ``cost``; by instance, then cost."""
    ordered = ok.sort_values("step", kind="stable")
    table = (
        ordered.groupby(["instance", "solution"], sort=False)["action"]
        .agg(lambda names: tuple(str(name) for name in names))
        .rename("actions")
        .reset_index()
    )
    table["length"] = table["actions"].map(len)
    firsts = ordered.groupby(["instance", "solution"], sort=False).first()
    keys = pd.MultiIndex.from_frame(table[["instance", "solution"]])
    if "sequence_cost" in ok.columns:
        table["cost"] = firsts["sequence_cost"].reindex(keys).to_numpy(dtype=float)
    else:  # solutions are numbered by ascending cost
        table["cost"] = table["solution"].to_numpy(dtype=float)
    rank = {label: i for i, label in enumerate(ok["instance"].unique().tolist())}
    table["_rank"] = table["instance"].map(rank)
    table = table.sort_values(["_rank", "cost", "solution"], kind="stable")
    table = table.drop(columns="_rank").reset_index(drop=True)
    if "plan" in ok.columns and not ok["plan"].isna().any():
        table["plan"] = (
            firsts["plan"]
            .reindex(pd.MultiIndex.from_frame(table[["instance", "solution"]]))
            .to_numpy(dtype=int)
        )
    else:  # the frame's rule: the same set of actions, numbered by cost
        plans = []
        for _, group in table.groupby("instance", sort=False):
            ids = {}
            plans += [ids.setdefault(frozenset(a), len(ids)) for a in group["actions"]]
        table["plan"] = plans
    return table


def _scope(table, solutions, max_length=None):
    """What a plot across instances counts, in words."""
    n = table["instance"].nunique()
    instances = f"{n} instance{'s' if n != 1 else ''}"
    if solutions == "cheapest":
        text = f"the cheapest sequence of each of {instances}"
    else:
        text = f"{len(table)} sequence{'s' if len(table) != 1 else ''} of {instances}"
    if max_length is not None:
        text += f", at most {max_length} step{'s' if max_length != 1 else ''}"
    return text


def _select(table, solutions):
    """Every sequence, or each instance's cheapest one."""
    if solutions == "cheapest":
        return table.drop_duplicates("instance", keep="first").reset_index(drop=True)
    return table


# ---------------------------------------------------------------------- #
# Colours
# ---------------------------------------------------------------------- #
def action_colors(actions):
    """The colour of each action in the plots.

    Colours come from matplotlib's ``tab10`` palette (``tab20`` beyond ten
    actions, evenly spaced hues beyond twenty), in the order given. The
    plots colour a frame's actions in sorted order by default; pass the
    result as ``colors=`` to keep the colours fixed across frames that use
    different subsets of the actions (CSCF next to SCF, say).

    Parameters
    ----------
    actions : iterable of str or Action
        The action names (or :class:`~sklearn_cscf.Action` objects), in the
        order that picks their colours; duplicates are ignored.

    Returns
    -------
    colors : dict
        ``{name: "#rrggbb"}``.

    Examples
    --------
    >>> from sklearn_cscf.plotting import action_colors
    >>> action_colors(["study", "save", "move"])
    {'study': '#1f77b4', 'save': '#ff7f0e', 'move': '#2ca02c'}
    """
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    names = list(dict.fromkeys(str(getattr(a, "name", a)) for a in actions))
    if len(names) <= 10:
        palette = [colormaps["tab10"](i) for i in range(len(names))]
    elif len(names) <= 20:
        palette = [colormaps["tab20"](i) for i in range(len(names))]
    else:
        palette = [colormaps["hsv"](i / len(names)) for i in range(len(names))]
    return {name: to_hex(color) for name, color in zip(names, palette)}


def _colors_for(names, colors):
    """The colours of ``names``: from ``colors`` or sorted by name."""
    if colors is None:
        return action_colors(sorted(names))
    if not isinstance(colors, Mapping):
        raise TypeError(
            "colors must map each action name to a colour (e.g. action_colors"
            f"(...)), got {type(colors).__name__}."
        )
    missing = sorted(set(names) - set(colors))
    if missing:
        raise ValueError(f"colors has no colour for the action(s) {missing}.")
    return {name: colors[name] for name in names}


# ---------------------------------------------------------------------- #
# Labels that do not overlap
# ---------------------------------------------------------------------- #
# offsets (in units of the radius) and the text alignment that keeps the
# label on that side of its point: right first, then around the clock
_DIRECTIONS = (
    (1.0, 0.0, "left", "center"),
    (0.7, 0.7, "left", "bottom"),
    (0.7, -0.7, "left", "top"),
    (0.0, 1.0, "center", "bottom"),
    (0.0, -1.0, "center", "top"),
    (-1.0, 0.0, "right", "center"),
    (-0.7, 0.7, "right", "bottom"),
    (-0.7, -0.7, "right", "top"),
)
_RADII = (5.0, 12.0, 20.0, 30.0, 42.0, 56.0, 72.0, 90.0)  # points


def _candidates(radii=_RADII, center=False):
    """``(dx, dy, ha, va, radius)`` label positions, in points, nearest first."""
    out = [(0.0, 0.0, "center", "center", 0.0)] if center else []
    for radius in radii:
        out += [
            (ux * radius, uy * radius, ha, va, radius) for ux, uy, ha, va in _DIRECTIONS
        ]
    return out


def _box(x, y, width, height, ha, va):
    x0 = x - {"left": 0.0, "center": width / 2, "right": width}[ha]
    y0 = y - {"bottom": 0.0, "center": height / 2, "top": height}[va]
    return np.array([x0, y0, x0 + width, y0 + height])


def _overlap(box, boxes):
    """Area of ``box`` shared with each row of ``boxes`` (x0, y0, x1, y1)."""
    if len(boxes) == 0:
        return np.zeros(0)
    width = np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0])
    height = np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1])
    return np.clip(width, 0, None) * np.clip(height, 0, None)


def _inside(box, points):
    if len(points) == 0:
        return 0
    return int(
        (
            (points[:, 0] >= box[0])
            & (points[:, 0] <= box[2])
            & (points[:, 1] >= box[1])
            & (points[:, 1] <= box[3])
        ).sum()
    )


def _line_samples(lines, spacing):
    """Points every ``spacing`` pixels along the drawn lines, in pixels."""
    samples = []
    for line in lines:
        xy = line.get_transform().transform(np.asarray(line.get_xydata(), float))
        xy = xy[np.isfinite(xy).all(axis=1)]
        for start, end in zip(xy[:-1], xy[1:]):
            n = max(int(np.hypot(*(end - start)) / spacing), 1)
            t = np.linspace(0.0, 1.0, n + 1)[:, None]
            samples.append(start + t * (end - start))
    return np.concatenate(samples) if samples else np.zeros((0, 2))


@functools.cache
def _layout_class():
    """The artist placing labels at draw time (matplotlib imported lazily)."""
    from matplotlib.artist import Artist
    from matplotlib.text import Text

    class LabelLayout(Artist):
        """Moves its annotations, each time the axes are drawn, so that no two
        overlap and none covers a marker (nor, where possible, a line).

        Greedy: the labels are placed in order, each at the nearest candidate
        position (around its point, at growing distances, with a leader line
        beyond the first ring) that overlaps no placed label, stays inside
        the axes and covers the fewest markers and line pieces. Placing at
        draw time keeps the labels apart after any resize or layout change.
        """

        zorder = 2.5  # after the lines and markers, before the texts

        def __init__(
            self, labels, *, points=(), lines=(), candidates=None, pad=1.5, sizes=None
        ):
            super().__init__()
            self.labels = list(labels)
            self.points = np.asarray(points, dtype=float).reshape(-1, 2)
            # half the width of the marker at each point, in points
            self.sizes = np.full(len(self.points), 3.0)
            if sizes is not None:
                self.sizes = np.asarray(sizes, dtype=float).reshape(-1)
            self.lines = list(lines)
            self.candidates = candidates or _candidates()
            self.pad = pad  # points around each label kept free
            self.set_in_layout(False)

        def draw(self, renderer):
            if not self.get_visible() or not self.labels:
                return
            ax = self.axes
            pixels = renderer.points_to_pixels(1.0)
            frame = np.asarray(ax.bbox.extents)
            points = ax.transData.transform(self.points) if len(self.points) else []
            markers = np.array(
                [
                    [x - r * pixels, y - r * pixels, x + r * pixels, y + r * pixels]
                    for (x, y), r in zip(points, self.sizes)
                ]
            ).reshape(-1, 4)
            pieces = _line_samples(self.lines, 3.0 * pixels)
            placed = np.zeros((0, 4))
            pad = self.pad * pixels
            for label in self.labels:
                label.xyann = (0.0, 0.0)
                label.set_horizontalalignment("left")
                label.set_verticalalignment("bottom")
                label.update_positions(renderer)
                extent = Text.get_window_extent(label, renderer)
                width, height = extent.width + 2 * pad, extent.height + 2 * pad
                x, y = ax.transData.transform(label.xy)
                best, best_score = None, np.inf
                for dx, dy, ha, va, radius in self.candidates:
                    box = _box(x + dx * pixels, y + dy * pixels, width, height, ha, va)
                    # shift the padded box so that the text keeps its anchor
                    box += np.array(
                        [
                            {"left": -pad, "center": 0, "right": pad}[ha],
                            {"bottom": -pad, "center": 0, "top": pad}[va],
                        ]
                        * 2
                    )
                    clash = _overlap(box, placed).sum()
                    outside = 0.0
                    if not (
                        box[0] >= frame[0]
                        and box[1] >= frame[1]
                        and box[2] <= frame[2]
                        and box[3] <= frame[3]
                    ):
                        outside = width * height - _overlap(box, frame[None])[0]
                    score = (
                        1e6 * clash
                        + 1e3 * outside
                        + 50.0 * (_overlap(box, markers) > 0).sum()
                        + 2.0 * _inside(box, pieces)
                        + 0.2 * radius
                    )
                    if score < best_score:
                        best, best_score = (dx, dy, ha, va, radius, box), score
                    if clash == 0 and outside == 0 and score == 0.2 * radius:
                        break  # free: nothing nearer can be better
                dx, dy, ha, va, radius, box = best
                label.xyann = (dx, dy)
                label.set_horizontalalignment(ha)
                label.set_verticalalignment(va)
                if label.arrow_patch is not None:
                    label.arrow_patch.set_visible(radius > self.candidates[0][4] + 1)
                placed = np.vstack([placed, box])
            self.stale = False

    return LabelLayout


def _annotate(ax, text, xy, *, color="black", fontsize="x-small", leader=True):
    """A label for ``xy``, placed later by a :class:`LabelLayout`."""
    return ax.annotate(
        text,
        xy,
        xytext=(0, 0),
        textcoords="offset points",
        fontsize=fontsize,
        color=color,
        bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8},
        arrowprops=(
            {"arrowstyle": "-", "color": color, "lw": 0.6, "shrinkA": 0, "shrinkB": 3}
            if leader
            else None
        ),
        annotation_clip=False,
    )


def _fmt_cost(value):
    """Two decimals, or two significant digits below 0.01."""
    if value == 0 or abs(value) >= 0.01:
        return f"{value:.2f}"
    return f"{value:.2g}"


def _new_axes(ax, figsize):
    if ax is None:
        ax = _pyplot().subplots(figsize=figsize, layout="constrained")[1]
    return ax


# ---------------------------------------------------------------------- #
# Fig. 5: the action flow
# ---------------------------------------------------------------------- #
def _flows(sequences):
    """Block sizes ``{(position, name): n}`` and band sizes
    ``{(position, source, target): n}``; the target is ``"end"`` when a
    sequence stops after ``position`` while others go on (after the last
    position every sequence stops, which needs no band)."""
    nodes, bands = {}, {}
    last = max(len(actions) for actions in sequences)
    for actions in sequences:
        for t, name in enumerate(actions, start=1):
            nodes[t, name] = nodes.get((t, name), 0) + 1
            if t == last:
                continue
            target = actions[t] if t < len(actions) else _END
            bands[t, name, target] = bands.get((t, name, target), 0) + 1
            if target == _END:
                nodes[t + 1, _END] = nodes.get((t + 1, _END), 0) + 1
    return nodes, bands


def _band_path(x0, x1, top0, bottom0, top1, bottom1):
    from matplotlib.path import Path

    middle = (x0 + x1) / 2
    vertices = [
        (x0, top0),
        (middle, top0),
        (middle, top1),
        (x1, top1),
        (x1, bottom1),
        (middle, bottom1),
        (middle, bottom0),
        (x0, bottom0),
        (x0, top0),
    ]
    codes = [Path.MOVETO] + [Path.CURVE4] * 3 + [Path.LINETO] + [Path.CURVE4] * 3
    return Path(vertices, codes + [Path.CLOSEPOLY])


def plot_action_flow(
    explanations, *, solutions="all", max_length=None, colors=None, ax=None
):
    """Plot which actions the sequences take at each step position (Fig. 5).

    Across every instance of the frame, one column per step position, up to
    the longest sequence: a block per action, as tall as the number of
    sequences taking that action at that position, and a grey ``end`` block
    for the sequences that stopped after the previous step. Bands join
    position ``t`` to ``t + 1``, as wide as the number of sequences going
    from one action to the next (or to ``end``), in the colour of the action
    they leave. Each block is labelled with its count (placed, at every
    draw, so that no two labels overlap); the legend names the actions, the
    most frequent first, in the order of the blocks.

    Parameters
    ----------
    explanations : DataFrame
        The frame returned by
        :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`; the
        instances without a sequence are left out.
    solutions : {"all", "cheapest"}, default="all"
        Count every sequence of the frame (the paper's choice; a compacted
        frame holds only the sequences it kept), or only the cheapest
        sequence of each instance.
    max_length : int, default=None
        Count only the sequences with at most this many steps (the paper's
        ``T <= 2`` panels).
    colors : dict, default=None
        ``{action: colour}``; by default :func:`action_colors` of the sorted
        action names.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure's axes if None.

    Returns
    -------
    ax : matplotlib.axes.Axes
        The axes drawn into.

    See Also
    --------
    plot_probability_by_step : What each action does to the target probability.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from sklearn_cscf.plotting import plot_action_flow
    >>> frame = pd.DataFrame({
    ...     "instance": [1, 1, 2, 2, 2], "solution": [0, 0, 0, 1, 1],
    ...     "step": [1, 2, 1, 1, 2],
    ...     "action": ["study", "save", "save", "study", "save"],
    ...     "status": ["ok"] * 5,
    ... })
    >>> ax = plot_action_flow(frame)
    >>> sorted(t.get_text() for t in ax.texts)  # block sizes
    ['1', '1', '2', '2']
    """
    _check_choice("solutions", solutions, _SOLUTIONS)
    if max_length is not None:
        _check_positive_int("max_length", max_length)
    ok = _ok_rows(explanations)
    # colours from every action of the frame, so that subsets match
    palette = _colors_for(sorted(ok["action"].astype(str).unique()), colors)
    table = _select(_sequences(ok), solutions)
    if max_length is not None:
        table = table[table["length"] <= max_length]
        if table.empty:
            raise ValueError(f"no sequence has at most max_length={max_length} steps.")
    from matplotlib.patches import PathPatch, Rectangle

    ax = _new_axes(ax, (9, 5))
    nodes, bands = _flows(table["actions"])
    totals = pd.Series(
        [n for (_, name), n in nodes.items() if name != _END],
        index=[name for (_, name) in nodes if name != _END],
    )
    totals = totals.groupby(level=0).sum()
    # the most frequent actions on top, in every column; "end" at the bottom
    order = sorted(totals.index, key=lambda name: (-totals[name], name)) + [_END]
    rank = {name: i for i, name in enumerate(order)}
    n_sequences = len(table)
    last = max(t for t, _ in nodes)
    gap = 0.04 * n_sequences
    width = 0.18
    top = n_sequences + gap * (len(order) - 1)

    # blocks, top-aligned, and where their bands attach
    out_edge, in_edge, labels = {}, {}, []
    for t in range(1, last + 1):
        y = top
        for name in order:
            n = nodes.get((t, name), 0)
            if n == 0:
                continue
            out_edge[t, name] = in_edge[t, name] = y
            color = _END_COLOR if name == _END else palette[name]
            block = Rectangle(
                (t - width / 2, y - n), width, n, fc=color, ec="white", lw=0.8
            )
            block.set_gid("block")
            ax.add_patch(block)
            labels.append(
                _annotate(ax, str(n), (t, y - n / 2), fontsize="small", leader=False)
            )
            y -= n + gap
    for (t, source, target), n in sorted(
        bands.items(), key=lambda item: (item[0][0], rank[item[0][1]], rank[item[0][2]])
    ):
        top0, top1 = out_edge[t, source], in_edge[t + 1, target]
        out_edge[t, source], in_edge[t + 1, target] = top0 - n, top1 - n
        band = PathPatch(
            _band_path(
                t + width / 2, t + 1 - width / 2, top0, top0 - n, top1, top1 - n
            ),
            fc=palette[source],
            ec="none",
            alpha=0.35,
            zorder=0.5,
        )
        band.set_gid("band")
        ax.add_patch(band)
    layout = _layout_class()(
        labels, candidates=_candidates(radii=_RADII[1:], center=True)
    )
    ax.add_artist(layout)

    from matplotlib.patches import Patch

    handles = [Patch(fc=palette[name], label=name) for name in order[:-1]]
    if any(name == _END for _, name in nodes):
        handles.append(Patch(fc=_END_COLOR, label="end (no further step)"))
    ax.legend(handles=handles, title="action", fontsize="small", **_LEGEND)
    ax.set_xlim(1 - 0.6, last + 0.6)
    ax.set_ylim(-gap, top + gap)
    ax.set_xticks(range(1, last + 1))
    ax.set_yticks([])
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.set_xlabel("step position (blocks: number of sequences)")
    ax.set_title(
        f"Actions by step position\n{_scope(table, solutions, max_length)}",
        fontsize="medium",
    )
    return ax


# ---------------------------------------------------------------------- #
# Fig. 6: the target probability by step, per action
# ---------------------------------------------------------------------- #
def _step_values(ok, table, measure, initial_proba):
    """The selected step rows with ``value``: the probability after the step,
    or its change over the step."""
    rows = ok.merge(table[["instance", "solution"]], on=["instance", "solution"])
    _check_proba(rows, "every step of the frame")
    rows = rows.sort_values("step", kind="stable")
    rows["value"] = rows["target_proba"].to_numpy(dtype=float)
    if measure == "change":
        if initial_proba is None:
            raise ValueError(
                "measure='change' needs initial_proba, the probability of each "
                "instance itself, for the change made by step 1: e.g. pd.Series("
                "model.predict_proba(X)[:, 1], index=X.index)."
            )
        lookup = _initial_lookup(initial_proba, rows["instance"].unique().tolist())
        # the probability before each step: after the previous one, or now
        before = rows.groupby(["instance", "solution"], sort=False)["value"].shift(1)
        first = (rows["step"] == 1).to_numpy(dtype=bool)
        before[first] = rows.loc[first, "instance"].map(lookup).to_numpy(dtype=float)
        rows["value"] -= before.to_numpy(dtype=float)
    return rows


def _bootstrap(values, statistic, n_boot, confidence, rng):
    """The statistic and its percentile bootstrap interval (widened, in rare
    skewed samples, to contain the statistic itself)."""
    value = statistic(values)
    draws = statistic(
        values[rng.integers(0, len(values), (n_boot, len(values)))], axis=1
    )
    tail = 50 * (1 - confidence)
    low, high = np.percentile(draws, [tail, 100 - tail])
    return value, min(low, value), max(high, value)


def plot_probability_by_step(
    explanations,
    *,
    measure="level",
    statistic="mean",
    solutions="all",
    initial_proba=None,
    n_boot=1000,
    confidence=0.95,
    random_state=0,
    threshold=0.5,
    colors=None,
    dodge=0.08,
    ax=None,
):
    """Plot, per action, the target probability at each step position (Fig. 6).

    Across every instance of the frame, for each action and each step
    position ``t`` where the action is taken: the mean (or median) target
    probability right after the step (``measure="level"``) or its change over
    the step (``measure="change"``), with a percentile bootstrap confidence
    interval. One line per action; the points of the actions are shifted
    sideways a little (``dodge``) so that their intervals stay apart.

    Parameters
    ----------
    explanations : DataFrame
        The frame returned by
        :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`; the
        instances without a sequence are left out.
    measure : {"level", "change"}, default="level"
        The probability after the step (the paper's Fig. 6), or the change
        over the step (which needs ``initial_proba`` for step 1).
    statistic : {"mean", "median"}, default="mean"
        The statistic shown and bootstrapped (the paper shows the median).
    solutions : {"all", "cheapest"}, default="all"
        Every sequence of the frame (the paper's choice), or only the
        cheapest sequence of each instance.
    initial_proba : Series or dict, default=None
        The probability of the target class of each instance itself, indexed
        by the ``instance`` labels (``pd.Series(model.predict_proba(X)[:, 1],
        index=X.index)``); needed by ``measure="change"``.
    n_boot : int, default=1000
        Bootstrap resamples per point.
    confidence : float, default=0.95
        Coverage of the interval: the ``(1 - confidence) / 2`` and
        ``(1 + confidence) / 2`` percentiles of the resampled statistic.
    random_state : int, numpy Generator or None, default=0
        Seed of the bootstrap (``numpy.random.default_rng``); the same seed
        draws the same intervals.
    threshold : float or None, default=0.5
        With ``measure="level"``, a dashed line at this probability (the
        decision threshold of a binary model); None hides it.
    colors : dict, default=None
        ``{action: colour}``; by default :func:`action_colors` of the sorted
        action names.
    dodge : float, default=0.08
        Sideways shift between the actions' points, in steps.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure's axes if None.

    Returns
    -------
    ax : matplotlib.axes.Axes
        The axes drawn into.

    See Also
    --------
    plot_action_flow : Which actions are taken at which step position.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from sklearn_cscf.plotting import plot_probability_by_step
    >>> frame = pd.DataFrame({
    ...     "instance": [1, 1, 2, 2, 2], "solution": [0, 0, 0, 1, 1],
    ...     "step": [1, 2, 1, 1, 2],
    ...     "action": ["study", "save", "save", "study", "save"],
    ...     "target_proba": [0.3, 0.6, 0.7, 0.2, 0.8], "status": ["ok"] * 5,
    ... })
    >>> ax = plot_probability_by_step(frame, n_boot=200, dodge=0)
    >>> [t.get_text() for t in ax.get_legend().get_texts()][:3]
    ['decision threshold 0.5', 'save (3 steps)', 'study (2 steps)']
    >>> save = ax.containers[0].lines[0]  # mean after "save" at steps 1 and 2
    >>> save.get_xdata().tolist(), save.get_ydata().round(2).tolist()
    ([1.0, 2.0], [0.7, 0.7])
    """
    _check_choice("measure", measure, _MEASURES)
    _check_choice("statistic", statistic, tuple(_STATISTICS))
    _check_choice("solutions", solutions, _SOLUTIONS)
    _check_positive_int("n_boot", n_boot)
    confidence = _check_real("confidence", confidence, low=0, high=1)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}.")
    threshold = _check_real("threshold", threshold, allow_none=True)
    dodge = _check_real("dodge", dodge, low=0, high=0.5)
    try:
        rng = np.random.default_rng(random_state)
    except TypeError:
        raise TypeError(
            "random_state must be None, an integer or a numpy Generator, got "
            f"{type(random_state).__name__}."
        ) from None
    ok = _ok_rows(explanations, {"target_proba"})
    table = _select(_sequences(ok), solutions)
    rows = _step_values(ok, table, measure, initial_proba)
    names = sorted(rows["action"].astype(str).unique())
    palette = _colors_for(sorted(ok["action"].astype(str).unique()), colors)
    ax = _new_axes(ax, (9, 5))
    function = _STATISTICS[statistic]
    last = int(rows["step"].max())
    single = None
    for k, name in enumerate(names):
        taken = rows[rows["action"].astype(str) == name]
        steps, sizes, centre, low, high = [], [], [], [], []
        for step, group in taken.groupby("step", sort=True):
            values = group["value"].to_numpy(dtype=float)
            value, lo, hi = _bootstrap(values, function, n_boot, confidence, rng)
            steps.append(int(step))
            sizes.append(len(values))
            centre.append(value)
            low.append(lo)
            high.append(hi)
        centre, x = np.asarray(centre), np.asarray(steps, float)
        x += (k - (len(names) - 1) / 2) * dodge
        marker = _MARKERS[k % len(_MARKERS)]
        ax.errorbar(
            x,
            centre,
            yerr=[centre - np.asarray(low), np.asarray(high) - centre],
            color=palette[name],
            marker=marker,
            markersize=5,
            capsize=3,
            lw=1.4,
            label=f"{name} ({len(taken)} step{'s' if len(taken) != 1 else ''})",
        )
        # a point resting on one step has no interval: hollow, not certain
        alone = np.asarray(sizes) == 1
        if alone.any():
            single = ax.plot(
                x[alone],
                centre[alone],
                ls="",
                marker=marker,
                markersize=5,
                mfc="white",
                mec=palette[name],
                zorder=3,
            )
    if measure == "level":
        if threshold is not None:
            ax.axhline(
                threshold,
                ls="--",
                lw=1,
                color=_THRESHOLD_COLOR,
                zorder=0.5,
                label=f"decision threshold {threshold:g}",
            )
        ax.set_ylim(-0.02, 1.02)
        ax.set_ylabel(f"{statistic} target probability after the step")
    else:
        ax.axhline(0.0, lw=0.8, color=_THRESHOLD_COLOR, zorder=0.5)
        ax.set_ylabel(f"{statistic} change of the target probability over the step")
    ax.set_xticks(range(1, last + 1))
    ax.set_xlim(1 - 0.5, last + 0.5)
    ax.set_xlabel("step position")
    ax.set_title(
        f"Target probability by step, per action\n{_scope(table, solutions)}; "
        f"{statistic} and {confidence:.0%} bootstrap interval",
        fontsize="medium",
    )
    handles, texts = ax.get_legend_handles_labels()
    if single:
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], ls="", marker="o", mfc="white", mec="0.3"))
        texts.append("one step only (no interval)")
    ax.legend(handles, texts, fontsize="small", title="action (steps taken)", **_LEGEND)
    return ax


# ---------------------------------------------------------------------- #
# One instance: the step chart
# ---------------------------------------------------------------------- #
def _shown_lines(sequences, max_solutions, all_orders):
    """``(rank of the plan, sequence row, is another order)`` per line: the
    cheapest ``max_solutions`` lines, grouped by plan."""
    lines, ranks = [], {}
    for _, seq in sequences.iterrows():
        plan = int(seq["plan"])
        other = plan in ranks
        if other and not all_orders:
            continue
        ranks.setdefault(plan, len(ranks))
        lines.append((ranks[plan], seq, other))
        if len(lines) == max_solutions:
            break
    # the orders of a plan next to each other (stable: cheapest first)
    return sorted(lines, key=lambda line: line[0])


def plot_target_probability(
    explanations,
    instance=None,
    *,
    initial_proba=None,
    max_solutions=5,
    all_orders=False,
    threshold=0.5,
    dodge=0.08,
    ax=None,
):
    """Plot the target probability along an instance's cheapest plans.

    A step chart of one instance: one line per plan (its cheapest order, or
    every order with ``all_orders=True``), the cheapest first, from step 0
    (the instance itself, when ``initial_proba`` is given) through each of
    its steps, each point labelled with the step's action. The legend names
    each plan by its number (``#k`` is ``plan`` ``k - 1`` of the frame) and
    its cost. A dashed line marks the decision threshold. Each plan has its
    own marker and is shifted sideways a little (``dodge``), so that plans
    taking the same step stay visible; the labels are placed (at every draw)
    so that none overlaps another.

    Parameters
    ----------
    explanations : DataFrame
        The frame returned by
        :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`, full
        or compacted.
    instance : object, default=None
        The ``instance`` label to plot; may be omitted when the frame holds a
        single instance.
    initial_proba : float, Series or dict, default=None
        The model's probability of the target class for the instance itself
        (``predict_proba``), or a mapping from instance labels to it; if
        given, every line starts from it at step 0 ("now").
    max_solutions : int, default=5
        Draw at most this many lines, the cheapest first.
    all_orders : bool, default=False
        Draw every order of a plan (dashed, with hollow markers, in the
        plan's colour), not only its cheapest.
    threshold : float or None, default=0.5
        A dashed line at this probability (the decision threshold of a binary
        model); None hides it.
    dodge : float, default=0.08
        Sideways shift between the plans' points, in steps; 0 draws every
        point at its whole step.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure's axes if None.

    Returns
    -------
    ax : matplotlib.axes.Axes
        The axes drawn into.

    See Also
    --------
    plot_pareto_front : The sequences by cost and Gower distance.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from sklearn_cscf.plotting import plot_target_probability
    >>> frame = pd.DataFrame({
    ...     "instance": [7, 7, 7], "solution": [0, 0, 1], "step": [1, 2, 1],
    ...     "action": ["study", "save", "move"], "target_proba": [0.3, 0.6, 0.55],
    ...     "sequence_cost": [2.0, 2.0, 3.0], "status": ["ok"] * 3,
    ... })
    >>> ax = plot_target_probability(frame, initial_proba=0.1, dodge=0)
    >>> [line.get_ydata().tolist() for line in ax.get_lines()[:2]]
    [[0.1, 0.3, 0.6], [0.1, 0.55]]
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['#1 cost 2.00', '#2 cost 3.00', 'decision threshold 0.5']
    """
    if isinstance(max_solutions, bool) or not isinstance(
        max_solutions, numbers.Integral
    ):
        raise ValueError(
            f"max_solutions must be a positive integer, got {max_solutions!r}."
        )
    _check_positive_int("max_solutions", max_solutions)
    threshold = _check_real("threshold", threshold, allow_none=True)
    dodge = _check_real("dodge", dodge, low=0, high=0.5)
    instance, steps = _instance_steps(
        explanations, instance, {"target_proba", "sequence_cost"}
    )
    p0 = None
    if initial_proba is not None:
        p0 = _initial_lookup(initial_proba, [instance])[instance]
    sequences = _sequences(steps)
    lines = _shown_lines(sequences, max_solutions, bool(all_orders))
    shown = steps.set_index(["solution", "step"]).sort_index()
    _check_proba(
        pd.concat([steps[steps["solution"] == seq["solution"]] for _, seq, _ in lines]),
        f"instance {instance!r}",
    )
    ax = _new_axes(ax, (8, 4.5))
    first = 0 if p0 is not None else 1
    longest = max(int(seq["length"]) for _, seq, _ in lines)
    labels, points, drawn = [], [], []
    for i, (rank, seq, other) in enumerate(lines):
        rows = shown.loc[seq["solution"]]
        x = rows.index.to_numpy(dtype=float) + (i - (len(lines) - 1) / 2) * dodge
        y = rows["target_proba"].to_numpy(dtype=float)
        if p0 is not None:
            x, y = np.r_[0.0, x], np.r_[p0, y]
        color = f"C{rank % 10}"
        name = f"#{int(seq['plan']) + 1}"
        (line,) = ax.plot(
            x,
            y,
            color=color,
            ls="--" if other else "-",
            lw=1.2 if other else 1.8,
            marker=_MARKERS[rank % len(_MARKERS)],
            markersize=6,
            mfc="white" if other else color,
            label=(
                f"{name} other order, cost {_fmt_cost(seq['cost'])}"
                if other
                else f"{name} cost {_fmt_cost(seq['cost'])}"
            ),
        )
        drawn.append(line)
        start = 1 if p0 is not None else 0
        for xi, yi, action in zip(x[start:], y[start:], rows["action"]):
            points.append((xi, yi))
            labels.append(_annotate(ax, str(action), (xi, yi), color=color))
    if p0 is not None:
        ax.plot([0.0], [p0], "o", color="black", markersize=7, zorder=3)
        points.append((0.0, p0))
    if threshold is not None:
        drawn.append(
            ax.axhline(
                threshold,
                ls="--",
                lw=1,
                color=_THRESHOLD_COLOR,
                zorder=0.5,
                label=f"decision threshold {threshold:g}",
            )
        )
    ax.add_artist(_layout_class()(labels, points=points, lines=drawn))
    ax.set_xticks(range(first, longest + 1))
    ax.set_xticklabels(["now" if t == 0 else str(t) for t in range(first, longest + 1)])
    xs = np.concatenate([line.get_xdata() for line in drawn[: len(lines)]])
    ax.set_xlim(min(first - 0.35, xs.min() - 0.2), max(longest + 0.6, xs.max() + 0.3))
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("step")
    target = ""
    if "target_class" in steps.columns and steps["target_class"].nunique() == 1:
        target = f" (class {steps['target_class'].iloc[0]})"
    ax.set_ylabel(f"target probability{target} after the step")
    n_plans = sequences["plan"].nunique()
    n_shown = len({rank for rank, _, _ in lines})
    if n_plans == 1:
        shown = "its plan"
    elif n_shown == n_plans:
        shown = f"all {n_plans} plans"
    else:
        shown = f"the cheapest {n_shown} of {n_plans} plans"
    ax.set_title(f"Instance {instance}: {shown}, step by step")
    ax.legend(fontsize="small", title="plan", **_LEGEND)
    return ax


# ---------------------------------------------------------------------- #
# One instance: the Pareto view
# ---------------------------------------------------------------------- #
def _highlighted(highlight, instance, steps):
    """The ``solution`` number that ``highlight`` marks for ``instance``."""
    if isinstance(highlight, pd.DataFrame):
        _check_frame(highlight)
        rows = highlight[highlight["instance"] == instance]
        if rows.empty:
            raise ValueError(
                f"highlight holds no row of instance {instance!r}; pass the "
                "frame that choose_plan returned for these explanations."
            )
        ok = rows[is_ok(rows)]
        if ok.empty:
            raise ValueError(
                f"highlight has no chosen sequence for instance {instance!r} "
                f"({_status_text(rows)})."
            )
        solutions = ok["solution"].dropna().unique().tolist()
        if len(solutions) != 1:
            raise ValueError(
                f"highlight holds {len(solutions)} sequences of instance "
                f"{instance!r} (solutions {solutions}); pass the frame that "
                "choose_plan returned, one sequence per instance."
            )
        solution = solutions[0]
    elif isinstance(highlight, numbers.Integral) and not isinstance(highlight, bool):
        solution = highlight
    else:
        raise TypeError(
            "highlight must be the DataFrame returned by choose_plan or a "
            f"solution number, got {type(highlight).__name__}."
        )
    known = steps["solution"].unique().tolist()
    if solution not in known:
        raise ValueError(
            f"instance {instance!r} has no solution {solution!r} to highlight; "
            f"its solutions are {sorted(known)}."
        )
    return solution


def plot_pareto_front(
    explanations, instance=None, *, y="gower_distance", highlight=None, ax=None
):
    """Plot an instance's Pareto-optimal sequences by cost and Gower distance.

    One point per sequence: its sequence cost and the Gower distance between
    the instance and the sequence's final state (0 when nothing changed, 1
    when every feature changed as much as it can: the mean over the features
    of ``|change| / range`` for numbers, 0 or 1 for categories), or, with
    ``y="target_proba"``, the probability of the target class after its last
    step (how far past the decision threshold the sequence ends). The colour
    gives the number of steps (a discrete legend). Each point is labelled
    with its plan number (``#k`` is ``plan`` ``k - 1``; ``(n orders)`` when
    several orders of the plan land on the same point); other orders of a
    plan than its cheapest are hollow. Labels are placed (at every draw) so
    that none overlaps another. With ``highlight``, a red ring marks the
    chosen sequence, whose label is red and bold.

    Parameters
    ----------
    explanations : DataFrame
        The frame returned by
        :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`, full
        or compacted.
    instance : object, default=None
        The ``instance`` label to plot; may be omitted when the frame holds a
        single instance.
    y : {"gower_distance", "target_proba"}, default="gower_distance"
        The vertical axis: the Gower distance, or the probability of the
        target class after the last step (to show a choice that weighs it).
    highlight : DataFrame or int, default=None
        The sequence to mark: the frame returned by
        :func:`~sklearn_cscf.choose_plan` (its sequence for this instance),
        or a ``solution`` number of the instance.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure's axes if None.

    Returns
    -------
    ax : matplotlib.axes.Axes
        The axes drawn into.

    See Also
    --------
    plot_target_probability : The target probability along the plans.
    sklearn_cscf.choose_plan : Choose one sequence per instance, to highlight.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from sklearn_cscf.plotting import plot_pareto_front
    >>> frame = pd.DataFrame({
    ...     "instance": [7, 7, 7], "solution": [0, 0, 1], "step": [1, 2, 1],
    ...     "action": ["study", "save", "move"], "sequence_cost": [2.0, 2.0, 3.0],
    ...     "gower_distance": [0.2, 0.2, 0.1], "length": [2, 2, 1],
    ...     "status": ["ok"] * 3,
    ... })
    >>> ax = plot_pareto_front(frame)
    >>> [c.get_offsets().tolist() for c in ax.collections]  # by length
    [[[3.0, 0.1]], [[2.0, 0.2]]]
    >>> sorted(t.get_text() for t in ax.texts)
    ['#1', '#2']
    >>> from sklearn_cscf import choose_plan
    >>> chosen = choose_plan(frame)  # the knee: of two points, the cheaper
    >>> ax = plot_pareto_front(frame, highlight=chosen)
    >>> ax.collections[-1].get_offsets().tolist()  # the ring
    [[2.0, 0.2]]
    """
    _check_choice("y", y, _PARETO_Y)
    instance, steps = _instance_steps(explanations, instance, {"sequence_cost", y})
    chosen = None
    if highlight is not None:
        chosen = _highlighted(highlight, instance, steps)
    from matplotlib import colormaps
    from matplotlib.lines import Line2D

    sequences = _sequences(steps)
    firsts = steps.groupby("solution").first()
    if y == "target_proba":  # after the last step
        lasts = steps.sort_values("step", kind="stable").groupby("solution").last()
        column = lasts["target_proba"]
    else:
        column = firsts[y]
    sequences["gower"] = column.reindex(sequences["solution"]).to_numpy(dtype=float)
    values = sequences[["cost", "gower"]].to_numpy(dtype=float)
    if not np.isfinite(values).all():
        raise ValueError(
            f"instance {instance!r} has a NaN sequence_cost or {y}; pass the "
            "DataFrame returned by explain."
        )
    # hollow: another order of a plan, not where the plan's cheapest lies
    sequences["other"] = sequences.duplicated("plan")
    sequences["other"] = sequences.groupby(["plan", "cost", "gower"])[
        "other"
    ].transform("all")
    ax = _new_axes(ax, (8, 4.5))
    lengths = sorted(sequences["length"].unique())
    longest = max(max(lengths), 2)
    colormap = colormaps["viridis"]
    handles = []
    for length in lengths:
        color = colormap(0.85 * (length - 1) / (longest - 1))
        # hollow markers first: a filled one at the same place stays visible
        group = sequences[sequences["length"] == length].sort_values(
            "other", ascending=False, kind="stable"
        )
        label = f"{length} step{'s' if length != 1 else ''}"
        ax.scatter(
            group["cost"],
            group["gower"],
            s=45,
            facecolors=[(1, 1, 1, 1) if o else color for o in group["other"]],
            edgecolors=[color] * len(group),
            linewidths=1.5,
            zorder=3,
            label=label,
        )
        handles.append(Line2D([], [], ls="", marker="o", color=color, label=label))
    if sequences["other"].any():
        handles.append(
            Line2D(
                [],
                [],
                ls="",
                marker="o",
                mfc="white",
                mec="0.3",
                label="another order of a plan",
            )
        )
    sizes = np.full(len(values), 3.0)
    title = ""
    if chosen is not None:
        mark = sequences[sequences["solution"] == chosen].iloc[0]
        ax.scatter(
            [mark["cost"]],
            [mark["gower"]],
            s=_CHOSEN_SIZE**2,
            facecolors="none",
            edgecolors=_CHOSEN_COLOR,
            linewidths=2,
            zorder=4,
        )
        handles.append(
            Line2D(
                [],
                [],
                ls="",
                marker="o",
                markersize=_CHOSEN_SIZE,
                mfc="none",
                mec=_CHOSEN_COLOR,
                mew=2,
                label=f"chosen: #{int(mark['plan']) + 1}",
            )
        )
        # the ring is wider than a marker: keep the labels off it
        sizes[(sequences["solution"] == chosen).to_numpy()] = _CHOSEN_SIZE / 2 + 1
        title = f"; chosen #{int(mark['plan']) + 1}"
    labels = []
    for (plan, cost, gower), group in sequences.groupby(
        ["plan", "cost", "gower"], sort=False
    ):
        text = f"#{int(plan) + 1}"
        if len(group) > 1:
            text += f" ({len(group)} orders)"
        if chosen is not None and (group["solution"] == chosen).any():
            label = _annotate(ax, text, (cost, gower), color=_CHOSEN_COLOR)
            label.set_fontweight("bold")
        else:
            label = _annotate(ax, text, (cost, gower))
        labels.append(label)
    ax.add_artist(_layout_class()(labels, points=values, sizes=sizes))
    ax.margins(0.12)
    ax.set_xlabel(_COST_LABEL)
    ax.set_ylabel(_PARETO_Y[y])
    ax.set_title(
        f"Instance {instance}: {len(sequences)} Pareto-optimal sequence(s), "
        f"{sequences['plan'].nunique()} plan(s){title}"
    )
    ax.legend(handles=handles, fontsize="small", title="length", **_LEGEND)
    return ax


# ---------------------------------------------------------------------- #
# Across instances: the chosen plans
# ---------------------------------------------------------------------- #
def _choice_text(method, objectives, weights, max_steps):
    """How each plan was chosen, in words."""
    if method == "knee":
        names = objectives or ("sequence_cost", "gower_distance")
        text = f"the knee of {' and '.join(names)}"
    elif method == "weighted":
        text = "the weights " + ", ".join(
            f"{k}={v:g}" for k, v in dict(weights).items()
        )
    else:
        text = "the cheapest"
    if max_steps is not None:
        text += f", at most {max_steps} step{'s' if max_steps != 1 else ''}"
    return text


def plot_recourse_summary(
    explanations,
    *,
    method="knee",
    objectives=None,
    weights=None,
    max_steps=None,
    colors=None,
    ax=None,
):
    """Plot how often each action appears in the people's chosen plans.

    The bar chart of :func:`~sklearn_cscf.summarize_recourse`, the aggregate
    counterpart of DiCE's feature importance: one bar per action, the most
    used on top, as long as the share of the people with a chosen plan whose
    plan takes it. The solid part counts the plans that start with the
    action (the most common first steps), the light hatched part those that
    take it later. Under each action's name: its number of people, their
    share and the mean cost of its steps. The title says how the plans were
    chosen and how many people have none.

    Parameters
    ----------
    explanations : DataFrame
        The frame returned by
        :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`, or
        the one :func:`~sklearn_cscf.choose_plan` returned.
    method : {"knee", "weighted", "cheapest"}, default="knee"
        How to choose each person's plan, as in
        :func:`~sklearn_cscf.choose_plan`.
    objectives : list of str, default=None
        The objectives of the knee, as in :func:`~sklearn_cscf.choose_plan`.
    weights : dict, default=None
        ``{objective: weight}`` for ``method="weighted"``, as in
        :func:`~sklearn_cscf.choose_plan`.
    max_steps : int, default=None
        Choose among the sequences with at most this many steps.
    colors : dict, default=None
        ``{action: colour}``; by default :func:`action_colors` of the sorted
        action names of the frame.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure's axes if None.

    Returns
    -------
    ax : matplotlib.axes.Axes
        The axes drawn into.

    See Also
    --------
    sklearn_cscf.summarize_recourse : The same numbers, as a table.
    plot_action_flow : The step positions and transitions of the plans.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from sklearn_cscf.plotting import plot_recourse_summary
    >>> chosen = pd.DataFrame({
    ...     "instance": [1, 1, 2, 3, 3], "solution": [0, 0, 2, 1, 1],
    ...     "step": [1, 2, 1, 1, 2],
    ...     "action": ["study", "save", "save", "save", "move"],
    ...     "feature": ["education", "savings", "savings", "savings", "city"],
    ...     "effort": [2.0, 1.0, 3.0, 2.0, 1.0],
    ...     "cost": [2.0, 0.5, 3.0, 2.0, 1.0],
    ...     "sequence_cost": [2.5, 2.5, 3.0, 3.0, 3.0],
    ...     "gower_distance": [0.2, 0.2, 0.1, 0.3, 0.3], "status": ["ok"] * 5,
    ... })
    >>> ax = plot_recourse_summary(chosen)
    >>> for label in ax.get_yticklabels():  # the most used on top
    ...     print(label.get_text().replace("\\n", ": "))
    save: 3 people (100%), mean cost 1.83
    study: 1 person (33%), mean cost 2.00
    move: 1 person (33%), mean cost 1.00
    >>> [round(float(p.get_width()), 2) for p in ax.patches[:3]]  # first steps
    [0.67, 0.33, 0.0]
    """
    from sklearn_cscf.selection import choose_plan, summarize_recourse

    chosen = choose_plan(
        explanations,
        method=method,
        objectives=objectives,
        weights=weights,
        max_steps=max_steps,
    )
    summary = summarize_recourse(chosen)
    n_all = chosen["instance"].nunique()
    ok = chosen[is_ok(chosen)]
    if summary.empty:
        counts = chosen["status"].astype(object).value_counts(dropna=False)
        raise ValueError(
            "no instance has a chosen plan to summarise (statuses: "
            f"{counts.to_dict()})."
        )
    every = explanations[is_ok(explanations)]
    palette = _colors_for(sorted(every["action"].astype(str).unique()), colors)
    n_people = ok["instance"].nunique()
    ax = _new_axes(ax, (9, 1.6 + 0.45 * len(summary)))
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Patch

    y = np.arange(len(summary))
    names = summary["action"].tolist()
    first = summary["share_first"].to_numpy(dtype=float)
    later = summary["share"].to_numpy(dtype=float) - first
    ax.barh(
        y,
        first,
        height=0.7,
        color=[palette[name] for name in names],
        edgecolor=[palette[name] for name in names],
    )
    ax.barh(
        y,
        later,
        left=first,
        height=0.7,
        color=[to_rgba(palette[name], 0.3) for name in names],
        edgecolor=[palette[name] for name in names],
        hatch="///",
        linewidth=0.8,
    )
    # the numbers under each action's name: they never collide with a bar
    ticks = [
        f"{row.action}\n{row.n_people} "
        f"{'person' if row.n_people == 1 else 'people'} ({row.share:.0%}), "
        f"mean cost {_fmt_cost(row.mean_cost)}"
        for row in summary.itertuples()
    ]
    ax.set_yticks(y, ticks, fontsize="small")
    ax.set_ylim(len(summary) - 0.5, -0.5)  # the most used on top
    from matplotlib.ticker import PercentFormatter

    ax.set_xlim(0, 1)
    ax.set_xticks(np.linspace(0, 1, 6))
    ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    ax.grid(axis="x", color="0.9", lw=0.8)
    ax.set_axisbelow(True)
    ax.set_xlabel(
        f"share of the {n_people} {'people' if n_people != 1 else 'person'} "
        "with a chosen plan whose plan takes the action"
    )
    for side in ("right", "top"):
        ax.spines[side].set_visible(False)
    handles = [Patch(fc="0.35", ec="0.35", label="as the first step")]
    if (later > 0).any():
        handles.append(
            Patch(
                fc=to_rgba("0.35", 0.3), ec="0.35", hatch="///", label="at a later step"
            )
        )
    ax.legend(handles=handles, fontsize="small", title="taken", **_LEGEND)
    once = (every.groupby("instance")["solution"].nunique() <= 1).all()
    how = (
        "the chosen plans"
        if once and max_steps is None
        else (
            "each person's plan chosen by "
            + _choice_text(method, objectives, weights, max_steps)
        )
    )
    subtitle = f"{n_people} of {n_all} people have a chosen plan"
    without = chosen.loc[~is_ok(chosen)].drop_duplicates("instance")
    if len(without):
        counts = without["status"].astype(str).value_counts()
        counts = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        subtitle += "; without one: " + ", ".join(f"{n} {k}" for k, n in counts)
    ax.set_title(f"Actions in {how}\n{subtitle}", fontsize="medium")
    return ax

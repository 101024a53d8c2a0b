"""One instance: its Pareto-optimal sequences by cost and Gower distance."""

from numbers import Integral

import numpy as np
import pandas as pd

from sklearn_cscf._frames import FRAGILE, is_regression, target_range
from sklearn_cscf._selection import non_dominated
from sklearn_cscf._sklearn_compat import StrOptions
from sklearn_cscf.plotting import _data, _labels, _style
from sklearn_cscf.plotting._base import Display, validated

# short lines: the labels fit a short panel of a grid
_GOWER_LABEL = (
    "Gower distance to the person\n(0 = unchanged, 1 = every\nfeature maximally "
    "changed)"
)
_COST_LABEL = "sequence cost\n(sum of effort × discount)"
_Y_LABELS = {
    "gower_distance": _GOWER_LABEL,
    "target_proba": "target probability after the last step\n(higher: farther past "
    "the decision threshold)",
    "prediction": "prediction after the last step",
    "margin": "margin: how far past the line\nthe last step ends",
}
# the front is 3-D (cost, distance, tweak counts) and the picture 2-D
_NOT_DRAWN = "tweak counts not drawn:\nsome points look dominated"
_PARAMS = {
    "instance": "no_validation",  # any label of the frame
    "y": [StrOptions(set(_Y_LABELS))],
    "highlight": [pd.DataFrame, Integral, None],
    "subject": [str],
}


class ParetoFrontDisplay(Display):
    """One instance's Pareto-optimal sequences by cost and Gower distance.

    One point per sequence: its sequence cost and the Gower distance between
    the instance and the sequence's final state (0 when nothing changed, 1
    when every feature changed as much as it can), or the probability of the
    target class after its last step. The colour gives the number of steps,
    the same colour for the same length in every figure. Each point is
    labelled with its plan number (``#k`` is ``plan`` ``k - 1``; ``(n
    orders)`` when several orders of the plan land on the same point);
    other orders of a plan than its cheapest are hollow. A red ring marks
    the chosen sequence, if any. The search minimises a third objective,
    the tweak count of each feature, which the picture does not draw: when
    a point looks dominated on the two drawn axes, the legend says so.

    Build it with :meth:`from_explanations`; the constructor takes the
    points.

    Parameters
    ----------
    points : DataFrame
        One row per sequence, with the columns ``solution``, ``plan``,
        ``length``, ``cost``, ``y`` and ``other`` (another order of a plan,
        drawn hollow).
    y : {"gower_distance", "target_proba", "prediction", "margin"}, \
            default="gower_distance"
        What the column ``y`` holds, for the axis label.
    chosen : int, default=None
        The ``solution`` number of the sequence to ring.
    title : str, default=None
        The title of the axes.
    target_range : tuple of float, default=None
        A regressor's range to reach, ``(low, high)``: drawn as a band with
        ``y="prediction"``; with ``y="margin"``, its size sets how small a
        spread of margins is drawn as flat.
    fragile : float, default=None
        With ``y="margin"`` (a classifier's): the margin under which a plan
        is fragile, shaded from the line (margin 0) up.

    Attributes
    ----------
    scatters_ : dict
        ``{length: matplotlib.collections.PathCollection}``.
    texts_ : list of matplotlib.text.Annotation
        The plan labels.
    ring_ : matplotlib.collections.PathCollection or None
        The ring round the chosen sequence.
    line_ : matplotlib.lines.Line2D, matplotlib.patches.Polygon or None
        With ``y="margin"``, the line (margin 0); with ``y="prediction"``,
        the band of the target range.
    legend_ : matplotlib.legend.Legend
    ax_ : matplotlib.axes.Axes
    figure_ : matplotlib.figure.Figure

    See Also
    --------
    TargetProbabilityDisplay : The target probability along the plans.
    sklearn_cscf.choose_plan : Choose one sequence per instance, to highlight.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from sklearn_cscf.plotting import ParetoFrontDisplay
    >>> frame = pd.DataFrame({
    ...     "instance": [7, 7, 7], "solution": [0, 0, 1], "step": [1, 2, 1],
    ...     "action": ["study", "save", "move"], "sequence_cost": [2.0, 2.0, 3.0],
    ...     "gower_distance": [0.2, 0.2, 0.1], "length": [2, 2, 1],
    ...     "status": ["ok"] * 3,
    ... })
    >>> display = ParetoFrontDisplay.from_explanations(
    ...     frame, highlight=1, subject="Person", scatter_kw={"s": 80}
    ... )
    >>> display.points[["solution", "length", "cost", "y"]]
       solution  length  cost    y
    0         0       2   2.0  0.2
    1         1       1   3.0  0.1
    >>> display.ring_.get_offsets().tolist()
    [[3.0, 0.1]]
    >>> display.title
    'Person 7: 2 Pareto-optimal sequences, 2 plans; chosen #2'
    """

    def __init__(
        self,
        points,
        *,
        y="gower_distance",
        chosen=None,
        title=None,
        target_range=None,
        fragile=None,
    ):
        self.points = points
        self.y = y
        self.chosen = chosen
        self.title = title
        self.target_range = target_range
        self.fragile = fragile

    @classmethod
    @validated(_PARAMS, "scatter_kw", "text_kw", "legend_kw")
    def from_explanations(
        cls,
        explanations,
        instance=None,
        *,
        y="gower_distance",
        highlight=None,
        subject="Instance",
        ax=None,
        scatter_kw=None,
        text_kw=None,
        legend_kw=None,
    ):
        """Take an instance's sequences from a frame, and plot them.

        Parameters
        ----------
        explanations : DataFrame
            The frame returned by
            :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`,
            full or compacted.
        instance : object, default=None
            The ``instance`` label to plot; may be omitted when the frame
            holds a single instance.
        y : {"gower_distance", "target_proba", "prediction", "margin"}, \
                default="gower_distance"
            The vertical axis: the Gower distance; the probability of the
            target class after the last step (a classifier), or a
            regressor's prediction; or the frame's ``margin``, how far past
            the line the last step ends (a binary classifier or a
            regressor).
        highlight : DataFrame or int, default=None
            The sequence to mark: the frame returned by
            :func:`~sklearn_cscf.choose_plan` (its sequence for this
            instance), or a ``solution`` number of the instance.
        subject : str, default="Instance"
            The word naming the instance in the title (``"Person"``).
        ax : matplotlib Axes, default=None
            Where to draw; a new figure's axes if None.
        scatter_kw, text_kw, legend_kw : dict, default=None
            Passed on to :meth:`plot`.

        Returns
        -------
        display : ParetoFrontDisplay
            The display, drawn: its ``ax_``, ``figure_`` and artists set.
        """
        instance, steps = _data.instance_steps(
            explanations, instance, {"sequence_cost", y}
        )
        chosen = None
        if highlight is not None:
            chosen = _data.highlighted(highlight, instance, steps)
        points = _data.pareto_points(steps, y)
        sequences = _data.plural(len(points), "Pareto-optimal sequence")
        plans = _data.plural(points["plan"].nunique(), "plan")
        title = f"{subject} {instance}: {sequences}, {plans}"
        if chosen is not None:
            plan = points.loc[points["solution"] == chosen, "plan"].iloc[0]
            title += f"; chosen #{plan + 1}"
        regression = is_regression(steps)
        display = cls(
            points,
            y=y,
            chosen=chosen,
            title=title,
            target_range=target_range(steps) if regression else None,
            fragile=FRAGILE if y == "margin" and not regression else None,
        )
        return display.plot(
            ax=ax, scatter_kw=scatter_kw, text_kw=text_kw, legend_kw=legend_kw
        )

    def plot(self, ax=None, *, scatter_kw=None, text_kw=None, legend_kw=None):
        """Draw the points.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; a new figure's axes if None.
        scatter_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.scatter` for each length.
        text_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.annotate` for each label.
        legend_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.legend`.

        Returns
        -------
        display : ParetoFrontDisplay
            This display, with its ``ax_``, ``figure_`` and artists.
        """
        ax = self._axes(ax)
        points = self.points
        values = points[["cost", "y"]].to_numpy(dtype=float)
        self.scatters_, self.texts_, self.ring_ = {}, [], None
        handles = []
        for length in sorted(points["length"].unique()):
            color = _style.length_color(length)
            # hollow markers first: a filled one at the same place stays visible
            group = points[points["length"] == length].sort_values(
                "other", ascending=False, kind="stable"
            )
            label = _data.plural(length, "step")
            style = {
                "s": 45,
                "facecolors": [(1, 1, 1, 1) if o else color for o in group["other"]],
                "edgecolors": [color] * len(group),
                "linewidths": 1.5,
                "zorder": 3,
                "label": label,
            }
            style = _style.merged(style, scatter_kw, "collection")
            self.scatters_[int(length)] = ax.scatter(group["cost"], group["y"], **style)
            handles.append(_style.handle(marker="o", color=color, label=label))
        if points["other"].any():
            handles.append(
                _style.handle(**_style.HOLLOW, label="another order of a plan")
            )
        # a point another beats on both drawn axes (cost and distance)
        if self.y == "gower_distance" and not non_dominated(values).all():
            handles.append(_style.handle(label=_NOT_DRAWN))
        sizes = np.full(len(values), 3.0)
        if self.chosen is not None:
            at = (points["solution"] == self.chosen).to_numpy()
            mark = points[at].iloc[0]
            self.ring_ = ax.scatter(
                [mark["cost"]],
                [mark["y"]],
                s=_style.CHOSEN_SIZE**2,
                facecolors="none",
                edgecolors=_style.CHOSEN_COLOR,
                linewidths=2,
                zorder=4,
            )
            handles.append(
                _style.handle(
                    marker="o",
                    markersize=_style.CHOSEN_SIZE,
                    mfc="none",
                    mec=_style.CHOSEN_COLOR,
                    mew=2,
                    label=f"chosen: #{int(mark['plan']) + 1}",
                )
            )
            # the ring is wider than a marker: keep the labels off it
            sizes[at] = _style.CHOSEN_SIZE / 2 + 1
        for (plan, cost, y), group in points.groupby(["plan", "cost", "y"], sort=False):
            text = f"#{int(plan) + 1}"
            if len(group) > 1:
                text += f" ({len(group)} orders)"
            style = {}
            if self.chosen is not None and (group["solution"] == self.chosen).any():
                style = {"color": _style.CHOSEN_COLOR, "fontweight": "bold"}
            style = _style.merged(style, text_kw, "text")
            self.texts_.append(_labels.annotate(ax, text, (cost, y), **style))
        _labels.place_labels(ax, self.texts_, points=values, sizes=sizes)
        ax.margins(0.12)
        self.line_ = None
        if self.y in ("prediction", "margin"):
            self._the_line(ax, handles)
        ax.set_xlabel(_COST_LABEL)
        ax.set_ylabel(_Y_LABELS[self.y])
        self._legend(ax, "length", legend_kw, handles)
        return self._finish(ax, self.title)

    def _the_line(self, ax, handles):
        """Where the plans had to get: the target range (a prediction) or
        the line, margin 0 (and the fragile margins above it), in view, and
        the numbers on the axis as they are (no offset)."""
        y = self.points["y"].to_numpy(dtype=float)
        low, high = float(y.min()), float(y.max())
        size = max(abs(low), abs(high))
        if self.target_range is not None:  # a regressor's numbers
            ends = [abs(e) for e in self.target_range if np.isfinite(e)]
            size = max([size, *ends])
        if self.y == "margin":
            low, high = min(low, 0.0), max(high, self.fragile or 0.0)
        # a spread far below the numbers' size (plans refined to the same
        # edge) is drawn as the flat line it is, not blown up
        room = max(high - low, 0.05 * max(size, 1e-3))
        if self.y == "margin":  # the line at the bottom, the margins above
            ax.set_ylim(low - 0.1 * room, low + 1.1 * room)
        else:
            middle = (low + high) / 2
            ax.set_ylim(middle - 0.6 * room, middle + 0.6 * room)
        ax.ticklabel_format(axis="y", style="plain", useOffset=False)
        if self.y == "prediction":
            if self.target_range is not None:  # the range, to where it ends
                self._range_band(ax, self.target_range)
                handles.append(self.threshold_line_)
                self.line_ = self.threshold_line_
            return
        style = {"lw": 1, "ls": "--", "color": _style.THRESHOLD_COLOR, "zorder": 0.5}
        self.line_ = ax.axhline(0.0, label="the line: margin 0", **style)
        handles.append(self.line_)
        if self.fragile:
            label = f"fragile: margin < {self.fragile:g}"
            handles.append(self._band(ax, 0.0, self.fragile, label))

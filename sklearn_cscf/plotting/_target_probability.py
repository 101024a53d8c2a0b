"""One instance: the target probability along its cheapest plans."""

from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
import pandas as pd

from sklearn_cscf._frames import format_cost, is_regression
from sklearn_cscf._sklearn_compat import Interval, StrOptions
from sklearn_cscf.plotting import _data, _labels, _style
from sklearn_cscf.plotting._base import Display, validated

_PARAMS = {
    "instance": "no_validation",  # any label of the frame
    "initial_proba": [Real, pd.Series, Mapping, "array-like", None],
    "max_solutions": [Interval(Integral, 1, None, closed="left")],
    "all_orders": ["boolean"],
    "threshold": [
        Interval(Real, None, None, closed="neither"),
        StrOptions({"auto"}),
        None,
    ],
    "dodge": [Interval(Real, 0, 0.5, closed="both")],
    "step_labels": [StrOptions({"auto", "names", "keys"})],
    "subject": [str],
    "target_name": [str, None],
}


class TargetProbabilityDisplay(Display):
    """The target probability along one instance's plans, step by step.

    One line per plan (its cheapest order, or every order), the cheapest
    first, from step 0 (the instance itself, when its probability is known)
    through each of its steps, each point labelled with the step's action.
    The legend names each plan by its number (``#k`` is ``plan`` ``k - 1``
    of the frame) and its cost. A dashed line marks the decision threshold
    (where the frame knows one: not for three classes or more), a band a
    regressor's target range.
    Each plan has its own marker and colour and is shifted sideways a
    little (``dodge``), so that plans taking the same step stay visible;
    other orders of a plan are dashed, with hollow markers. The labels are
    placed (at every draw) so that none overlaps another.

    Build it with :meth:`from_explanations`; the constructor takes the lines.

    Parameters
    ----------
    lines : DataFrame
        One row per line, with the columns ``plan`` (the frame's plan
        number), ``rank`` (of the plan among those shown: its colour and
        marker), ``other`` (another order of the plan), ``cost``, and
        ``actions`` and ``proba`` (tuples: the action and the target
        probability after each step).
    initial_proba : float, default=None
        The probability of the instance itself, drawn at step 0 ("now").
    threshold : float or None, default=0.5
        A dashed line at this probability; None hides it.
    proba_name : str, default="target probability"
        How the axis names the probability, e.g. ``"P(>50K)"``.
    title : str, default=None
        The title of the axes.
    target_range : tuple of float, default=None
        A regressor's range to reach, ``(low, high)``: the lines are its
        predictions (``proba`` holds them), drawn against the range as a
        band, with the axis fitted to them.

    Attributes
    ----------
    lines_ : list of matplotlib.lines.Line2D
        One line per row of ``lines``.
    texts_ : list of matplotlib.text.Annotation
        The action labels, line by line, step by step.
    start_ : matplotlib.lines.Line2D or None
        The instance itself at step 0.
    threshold_line_ : matplotlib.lines.Line2D or None
    legend_ : matplotlib.legend.Legend
    ax_ : matplotlib.axes.Axes
    figure_ : matplotlib.figure.Figure

    See Also
    --------
    ParetoFrontDisplay : The sequences by cost and Gower distance.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from sklearn_cscf.plotting import TargetProbabilityDisplay
    >>> frame = pd.DataFrame({
    ...     "instance": [7, 7, 7], "solution": [0, 0, 1], "step": [1, 2, 1],
    ...     "action": ["study", "save", "move"], "target_proba": [0.3, 0.6, 0.55],
    ...     "sequence_cost": [2.0, 2.0, 3.0], "status": ["ok"] * 3,
    ... })
    >>> display = TargetProbabilityDisplay.from_explanations(
    ...     frame, initial_proba=0.1, dodge=0, subject="Person",
    ...     target_name="approved", line_kw={"lw": 3},
    ... )
    >>> display.lines[["plan", "actions", "proba"]]
       plan        actions       proba
    0     0  (study, save)  (0.3, 0.6)
    1     1        (move,)     (0.55,)
    >>> display.ax_.get_title()
    'Person 7: all 2 plans, step by step'
    >>> display.ax_.get_ylabel()
    'P(approved) after the step'
    """

    def __init__(
        self,
        lines,
        *,
        initial_proba=None,
        threshold=0.5,
        proba_name="target probability",
        title=None,
        target_range=None,
    ):
        self.target_range = target_range
        self.lines = lines
        self.initial_proba = initial_proba
        self.threshold = threshold
        self.proba_name = proba_name
        self.title = title

    @classmethod
    @validated(_PARAMS, "line_kw", "text_kw", "threshold_kw", "legend_kw")
    def from_explanations(
        cls,
        explanations,
        instance=None,
        *,
        initial_proba=None,
        max_solutions=5,
        all_orders=False,
        threshold="auto",
        dodge=0.08,
        step_labels="auto",
        subject="Instance",
        target_name=None,
        ax=None,
        line_kw=None,
        text_kw=None,
        threshold_kw=None,
        legend_kw=None,
    ):
        """Take an instance's cheapest plans from a frame, and plot them.

        Parameters
        ----------
        explanations : DataFrame
            The frame returned by
            :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`,
            full or compacted.
        instance : object, default=None
            The ``instance`` label to plot; may be omitted when the frame
            holds a single instance.
        initial_proba : float, Series, dict or array-like, default=None
            The model's probability of the target class for the instance
            itself, a mapping from instance labels to it, or an array with
            one per instance in the frame's order (the rows of ``X``); if
            given, every line starts from it at step 0 ("now").
        max_solutions : int, default=5
            Draw at most this many lines, the cheapest first.
        all_orders : bool, default=False
            Draw every order of a plan, not only its cheapest.
        threshold : float, "auto" or None, default="auto"
            A dashed line at this probability; ``"auto"``: at the frame's
            decision threshold (0.5 for a binary model deciding by the
            arg-max of its probabilities), and none where there is no fixed
            one (three classes or more, a threshold of the model's own: the
            frame's ``margin`` is NaN); None hides it. A regressor's frame
            shows its target range as a band instead.
        dodge : float, default=0.08
            Sideways shift between the plans' points, in steps.
        step_labels : {"auto", "names", "keys"}, default="auto"
            How the points name their actions: ``"names"`` writes each
            action's name, ``"keys"`` a letter that the legend explains
            (``A  decrease_mean texture``), ``"auto"`` letters when the names
            would crowd the axes (many plans and steps in a small panel).
        subject : str, default="Instance"
            The word naming the instance in the title (``"Person"``).
        target_name : str, default=None
            The name of the target class, for the axis (``"P(>50K)"``); by
            default the frame's ``target_class``.
        ax : matplotlib Axes, default=None
            Where to draw; a new figure's axes if None.
        line_kw, text_kw, threshold_kw, legend_kw : dict, default=None
            Passed on to :meth:`plot`.

        Returns
        -------
        display : TargetProbabilityDisplay
            The display, drawn: its ``ax_``, ``figure_`` and artists set.
        """
        _data.reject_bool("max_solutions", max_solutions)
        instance, steps = _data.instance_steps(
            explanations, instance, {"target_proba", "sequence_cost"}
        )
        regression = is_regression(steps)
        p0 = _data.initial_lookup(  # None without initial_proba
            initial_proba, explanations, [instance], bounded=not regression
        ).get(instance)
        sequences = _data.sequences(steps)
        column = _data.scored_column(steps)
        lines = _data.plan_lines(steps, sequences, max_solutions, all_orders, column)
        shown = _data.shown_text(sequences["plan"].nunique(), lines["rank"].nunique())
        display = cls(
            lines,
            initial_proba=p0,
            title=f"{subject} {instance}: {shown}, step by step",
            **_data.scale(steps, threshold, target_name),
        )
        return display.plot(
            ax=ax,
            dodge=dodge,
            step_labels=step_labels,
            line_kw=line_kw,
            text_kw=text_kw,
            threshold_kw=threshold_kw,
            legend_kw=legend_kw,
        )

    def plot(
        self,
        ax=None,
        *,
        dodge=0.08,
        step_labels="auto",
        line_kw=None,
        text_kw=None,
        threshold_kw=None,
        legend_kw=None,
    ):
        """Draw the lines.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; a new figure's axes if None.
        dodge : float, default=0.08
            Sideways shift between the plans' points, in steps; 0 draws
            every point at its whole step.
        step_labels : {"auto", "names", "keys"}, default="auto"
            Action names at the points, or letters explained in the legend;
            ``"auto"``: letters when the names would crowd the axes.
        line_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.plot` for each line.
        text_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.annotate` for each label.
        threshold_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.axhline` for the threshold.
        legend_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.legend`.

        Returns
        -------
        display : TargetProbabilityDisplay
            This display, with its ``ax_``, ``figure_`` and artists.
        """
        ax = self._axes(ax)
        p0 = self.initial_proba
        first = 0 if p0 is not None else 1
        n = len(self.lines)
        keys = _step_keys(self.lines, ax, step_labels, text_kw)
        self.lines_, self.texts_, self.start_, self.threshold_line_ = [], [], None, None
        points = []
        for i, line in enumerate(self.lines.itertuples(index=False)):
            steps = np.arange(1, len(line.proba) + 1, dtype=float)
            x = steps + (i - (n - 1) / 2) * dodge
            y = np.asarray(line.proba, dtype=float)
            if p0 is not None:
                x, y = np.r_[0.0, x], np.r_[p0, y]
            color = f"C{line.rank % 10}"
            name, cost = f"#{line.plan + 1}", format_cost(line.cost)
            style = {
                "color": color,
                "ls": "--" if line.other else "-",
                "lw": 1.2 if line.other else 1.8,
                "marker": _style.MARKERS[line.rank % len(_style.MARKERS)],
                "markersize": 6,
                "mfc": "white" if line.other else color,
                "label": f"{name} {'other order, ' if line.other else ''}cost {cost}",
            }
            self.lines_ += ax.plot(x, y, **_style.merged(style, line_kw, "line"))
            start = 1 - first  # the labels name the steps, not the start
            look = _style.merged({"color": color}, text_kw, "text")
            for xi, yi, action in zip(x[start:], y[start:], line.actions):
                points.append((xi, yi))
                label = _labels.annotate(ax, keys.get(action, action), (xi, yi), **look)
                label.line = self.lines_[-1]  # its leader need not avoid it
                self.texts_.append(label)
        if p0 is not None:
            (self.start_,) = ax.plot(
                [0.0], [p0], "o", color="black", markersize=7, zorder=3
            )
            points.append((0.0, p0))
        if self.threshold is not None:
            self._threshold_line(ax, threshold_kw)
        avoid = self.lines_ + ([self.threshold_line_] if self.threshold_line_ else [])
        _labels.place_labels(ax, self.texts_, points=points, lines=avoid)
        longest = max(len(proba) for proba in self.lines["proba"])
        ticks = range(first, longest + 1)
        ax.set_xticks(ticks, ["now" if t == 0 else str(t) for t in ticks])
        xs = np.concatenate([line.get_xdata() for line in self.lines_])
        ax.set_xlim(
            min(first - 0.35, xs.min() - 0.2), max(longest + 0.6, xs.max() + 0.3)
        )
        if self.target_range is None:
            ax.set_ylim(-0.03, 1.03)
        else:  # a regressor: its predictions against the range to reach
            self._range_band(ax, self.target_range)
        ax.set_xlabel("step")
        ax.set_ylabel(f"{self.proba_name} after the step")
        title, (handles, texts) = "plan", ax.get_legend_handles_labels()
        if keys:  # what each letter at the points stands for
            handles += [_style.handle(marker="") for _ in keys]
            texts += [f"{key}  {name}" for name, key in keys.items()]
            title = "plan; actions at the points"
        self._legend(ax, title, legend_kw, handles, texts)
        return self._finish(ax, self.title)


def _step_keys(lines, ax, step_labels, text_kw):
    """``{action: letter}`` when the points show letters, else ``{}``.

    ``"auto"`` shows letters when the names, at their font size, would
    cover more than a sixth of the axes (each label with its padding).
    """
    names = list(dict.fromkeys(a for actions in lines["actions"] for a in actions))
    if step_labels == "names" or not names:
        return {}
    if step_labels == "auto":
        from matplotlib.font_manager import FontProperties

        size = FontProperties(size=(text_kw or {}).get("fontsize", "x-small"))
        size = size.get_size_in_points()
        count = sum(len(actions) for actions in lines["actions"])
        mean = sum(len(a) for actions in lines["actions"] for a in actions) / count
        area = count * (0.55 * size * mean + 4) * (1.4 * size + 4)
        box = ax.get_position()
        room = box.width * ax.figure.get_figwidth() * box.height
        room *= ax.figure.get_figheight() * 72 * 72
        if area <= room / 6:
            return {}
    letters = [chr(ord("A") + k) for k in range(26)]
    letters += [f"{a}{b}" for a in letters for b in letters]
    return dict(zip(names, letters))

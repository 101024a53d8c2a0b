"""Fig. 6 of the paper: per action, the target probability (or a
regressor's prediction) at each step."""

from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
import pandas as pd

from sklearn_cscf._sklearn_compat import Interval, StrOptions
from sklearn_cscf.plotting import _data, _style
from sklearn_cscf.plotting._base import Display, validated

_STATISTICS = {"mean": np.mean, "median": np.median}
_PARAMS = {
    "measure": [StrOptions({"level", "change"})],
    "statistic": [StrOptions(set(_STATISTICS))],
    "solutions": [StrOptions({"all", "cheapest"})],
    "initial_proba": [pd.Series, Mapping, Real, "array-like", None],
    "n_boot": [Interval(Integral, 1, None, closed="left")],
    "confidence": [Interval(Real, 0, 1, closed="neither")],
    "random_state": [None, Integral, np.random.Generator],
    "threshold": [
        Interval(Real, None, None, closed="neither"),
        StrOptions({"auto"}),
        None,
    ],
    "colors": [Mapping, None],
    "dodge": [Interval(Real, 0, 0.5, closed="both")],
    "target_name": [str, None],
}


class ProbabilityByStepDisplay(Display):
    """Target probability by step position, per action (the paper's Fig. 6).

    For each action and each step position ``t`` where the action is taken:
    the mean (or median) target probability right after the step, or its
    change over the step, with a percentile bootstrap confidence interval.
    One line per action; the points of the actions are shifted sideways a
    little (``dodge``) so that their intervals stay apart. A point resting
    on a single step has no interval and is drawn hollow. For a regressor's
    frame, the prediction after the step (or its change), against the
    target range drawn as a band.

    Build it with :meth:`from_explanations`; the constructor takes the
    computed statistics.

    Parameters
    ----------
    statistics : DataFrame
        One row per action and step position, with the columns ``action``,
        ``step``, ``n`` (steps taken there), ``value``, ``low``, ``high``
        (the statistic and its interval) and ``taken`` (the action's steps
        in all).
    colors : dict
        ``{action: colour}`` for every action of ``statistics``.
    measure : {"level", "change"}, default="level"
        What ``value`` is: the probability after the step, or its change.
    statistic : {"mean", "median"}, default="mean"
        The statistic of ``value``, for the axis label.
    confidence : float, default=0.95
        The coverage of the intervals, for the title.
    threshold : float or None, default=0.5
        With ``measure="level"``, a dashed line at this probability.
    proba_name : str, default="target probability"
        How the axis names the probability, e.g. ``"P(>50K)"``.
    subtitle : str, default=None
        What the plot counts, for the title.
    target_range : tuple of float, default=None
        A regressor's range to reach, ``(low, high)``: ``value`` holds its
        predictions, drawn against the range as a band (with
        ``measure="level"``), the axis fitted to them.

    Attributes
    ----------
    errorbars_ : dict
        ``{action: matplotlib.container.ErrorbarContainer}``.
    singles_ : list of matplotlib.lines.Line2D
        The hollow markers of the points resting on one step.
    threshold_line_ : matplotlib.lines.Line2D, matplotlib.patches.Polygon or None
        The decision threshold (or, for a change, the zero line; for a
        regressor's levels, the band of the target range).
    legend_ : matplotlib.legend.Legend
    ax_ : matplotlib.axes.Axes
    figure_ : matplotlib.figure.Figure

    See Also
    --------
    ActionFlowDisplay : Which actions are taken at which step position.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from sklearn_cscf.plotting import ProbabilityByStepDisplay
    >>> frame = pd.DataFrame({
    ...     "instance": [1, 1, 2, 2, 2], "solution": [0, 0, 0, 1, 1],
    ...     "step": [1, 2, 1, 1, 2],
    ...     "action": ["study", "save", "save", "study", "save"],
    ...     "target_proba": [0.3, 0.6, 0.7, 0.2, 0.8], "status": ["ok"] * 5,
    ... })
    >>> display = ProbabilityByStepDisplay.from_explanations(
    ...     frame, n_boot=200, dodge=0, target_name="approved",
    ...     errorbar_kw={"capsize": 0},
    ... )
    >>> display.statistics[["action", "step", "value"]].round(2)
      action  step  value
    0   save     1   0.70
    1   save     2   0.70
    2  study     1   0.25
    >>> display.ax_.get_ylabel()
    'mean P(approved) after the step'
    """

    figsize = (9, 5)

    def __init__(
        self,
        statistics,
        *,
        colors,
        measure="level",
        statistic="mean",
        confidence=0.95,
        threshold=0.5,
        proba_name="target probability",
        subtitle=None,
        target_range=None,
    ):
        self.statistics = statistics
        self.colors = colors
        self.measure = measure
        self.statistic = statistic
        self.confidence = confidence
        self.threshold = threshold
        self.proba_name = proba_name
        self.subtitle = subtitle
        self.target_range = target_range

    @classmethod
    @validated(_PARAMS, "errorbar_kw", "threshold_kw", "legend_kw")
    def from_explanations(
        cls,
        explanations,
        *,
        measure="level",
        statistic="mean",
        solutions="all",
        initial_proba=None,
        n_boot=1000,
        confidence=0.95,
        random_state=0,
        threshold="auto",
        colors=None,
        dodge=0.08,
        target_name=None,
        ax=None,
        errorbar_kw=None,
        threshold_kw=None,
        legend_kw=None,
    ):
        """Compute the statistics of an explanations frame, and plot them.

        Parameters
        ----------
        explanations : DataFrame
            The frame returned by
            :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`;
            the instances without a sequence are left out.
        measure : {"level", "change"}, default="level"
            The probability after the step (the paper's Fig. 6), or the
            change over the step (which needs ``initial_proba`` for step 1).
            For a regressor's frame: its prediction after the step, or the
            change of the prediction.
        statistic : {"mean", "median"}, default="mean"
            The statistic shown and bootstrapped (the paper shows the median).
        solutions : {"all", "cheapest"}, default="all"
            Every sequence of the frame (the paper's choice), or only the
            cheapest sequence of each instance.
        initial_proba : Series, dict or array-like, default=None
            The probability of the target class of each instance itself,
            indexed by the ``instance`` labels (``pd.Series(model.
            predict_proba(X)[:, 1], index=X.index)``), or an array with one
            per instance in the frame's order (the rows of ``X``); needed by
            ``measure="change"``. For a regressor, its prediction
            (``model.predict(X)``).
        n_boot : int, default=1000
            Bootstrap resamples per point.
        confidence : float, default=0.95
            Coverage of the interval: the ``(1 - confidence) / 2`` and
            ``(1 + confidence) / 2`` percentiles of the resampled statistic.
        random_state : int, numpy Generator or None, default=0
            Seed of the bootstrap (``numpy.random.default_rng``).
        threshold : float, "auto" or None, default="auto"
            With ``measure="level"``, a dashed line at this probability;
            ``"auto"``: at the frame's decision threshold (0.5 for a binary
            model deciding by the arg-max of its probabilities), and none
            where there is no fixed one (three classes or more, a threshold
            of the model's own: the frame's ``margin`` is NaN); None hides
            it. A regressor's frame shows its target range as a band
            instead.
        colors : dict, default=None
            ``{action: colour}``; by default
            :func:`~sklearn_cscf.plotting.action_colors` of the sorted action
            names.
        dodge : float, default=0.08
            Sideways shift between the actions' points, in steps.
        target_name : str, default=None
            The name of the target class, for the axis (``"P(>50K)"``); by
            default the frame's ``target_class``.
        ax : matplotlib Axes, default=None
            Where to draw; a new figure's axes if None.
        errorbar_kw, threshold_kw, legend_kw : dict, default=None
            Passed on to :meth:`plot`.

        Returns
        -------
        display : ProbabilityByStepDisplay
            The display, drawn: its ``ax_``, ``figure_`` and artists set.
        """
        _data.reject_bool("n_boot", n_boot)
        rng = np.random.default_rng(random_state)
        ok = _data.ok_rows(explanations, {"target_proba"})
        column = _data.scored_column(ok)
        table = _data.select(_data.sequences(ok), solutions)
        rows = _data.step_values(
            explanations, ok, table, measure, initial_proba, column
        )
        statistics = _data.step_statistics(
            rows, _STATISTICS[statistic], n_boot, confidence, rng
        )
        display = cls(
            statistics,
            colors=_style.colors_for(ok, colors),
            measure=measure,
            statistic=statistic,
            confidence=confidence,
            subtitle=_data.scope(table, solutions),
            **_data.scale(ok, threshold, target_name),
        )
        return display.plot(
            ax=ax,
            dodge=dodge,
            errorbar_kw=errorbar_kw,
            threshold_kw=threshold_kw,
            legend_kw=legend_kw,
        )

    def plot(
        self,
        ax=None,
        *,
        dodge=0.08,
        errorbar_kw=None,
        threshold_kw=None,
        legend_kw=None,
    ):
        """Draw the statistics.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; a new figure's axes if None.
        dodge : float, default=0.08
            Sideways shift between the actions' points, in steps.
        errorbar_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.errorbar` for each action.
        threshold_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.axhline` for the threshold.
        legend_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.legend`.

        Returns
        -------
        display : ProbabilityByStepDisplay
            This display, with its ``ax_``, ``figure_`` and artists.
        """
        ax = self._axes(ax)
        stats = self.statistics
        names = list(dict.fromkeys(stats["action"]))
        self.errorbars_, self.singles_, self.threshold_line_ = {}, [], None
        for k, name in enumerate(names):
            rows = stats[stats["action"] == name]
            x = rows["step"].to_numpy(dtype=float) + (k - (len(names) - 1) / 2) * dodge
            centre, low, high = rows[["value", "low", "high"]].to_numpy(dtype=float).T
            taken = int(rows["taken"].iloc[0])
            marker = _style.MARKERS[k % len(_style.MARKERS)]
            style = {
                "color": self.colors[name],
                "marker": marker,
                "markersize": 5,
                "capsize": 3,
                "lw": 1.4,
                "label": f"{name} ({_data.plural(taken, 'step')})",
            }
            if len(names) > 5:  # many actions: thin dotted joins, plain bars
                style.update(lw=0.9, ls=":", elinewidth=1.2)
            style = _style.merged(style, errorbar_kw, "line")
            yerr = [centre - low, high - centre]
            self.errorbars_[name] = ax.errorbar(x, centre, yerr=yerr, **style)
            # a point resting on one step has no interval: hollow, not certain
            alone = rows["n"].to_numpy() == 1
            if alone.any():
                self.singles_ += ax.plot(
                    x[alone],
                    centre[alone],
                    ls="",
                    marker=marker,
                    markersize=5,
                    mfc="white",
                    mec=self.colors[name],
                    zorder=3,
                )
        if self.measure == "level":
            if self.threshold is not None:
                self._threshold_line(ax, threshold_kw)
            if self.target_range is None:
                ax.set_ylim(-0.02, 1.02)
            else:  # a regressor: its predictions against the range to reach
                self._range_band(ax, self.target_range)
            ylabel = f"{self.statistic} {self.proba_name} after the step"
        else:
            self._threshold_line(ax, threshold_kw, 0.0, lw=0.8)
            ylabel = f"{self.statistic} change of {self.proba_name} over the step"
        ax.set_ylabel(_style.wrap(ylabel, width=40))
        last = int(stats["step"].max())
        ax.set_xticks(range(1, last + 1))
        ax.set_xlim(1 - 0.5, last + 0.5)
        ax.set_xlabel("step position")
        # the actions first, then what a regressor's band stands for
        band = self.threshold_line_ if self.target_range is not None else None
        entries = sorted(
            zip(*ax.get_legend_handles_labels()), key=lambda e: e[0] is band
        )
        handles, texts = [h for h, _ in entries], [t for _, t in entries]
        if self.singles_:
            handles.append(_style.handle(**_style.HOLLOW))
            texts.append("one step only (no interval)")
        self._legend(ax, "action (steps taken)", legend_kw, handles, texts)
        subtitle = f"{self.statistic} and {self.confidence:.0%} bootstrap interval"
        if self.subtitle:
            subtitle = f"{self.subtitle}; {subtitle}"
        what = "Target probability" if self.target_range is None else "Prediction"
        return self._finish(ax, f"{what} by step, per action\n{subtitle}")

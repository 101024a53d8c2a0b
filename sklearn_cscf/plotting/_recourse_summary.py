"""Across people: how often each action appears in the chosen plans."""

from collections.abc import Mapping

import numpy as np

from sklearn_cscf._frames import format_cost, is_ok
from sklearn_cscf._selection import choose_plan, summarize_recourse
from sklearn_cscf._sklearn_compat import StrOptions
from sklearn_cscf.plotting import _data, _style
from sklearn_cscf.plotting._base import Display, validated

_PARAMS = {
    "method": [StrOptions({"knee", "weighted", "cheapest"})],
    # checked by choose_plan, which takes them on
    "objectives": "no_validation",
    "weights": "no_validation",
    "max_steps": "no_validation",
    "colors": [Mapping, None],
}


class RecourseSummaryDisplay(Display):
    """How often each action appears in the people's chosen plans.

    The bar chart of :func:`~sklearn_cscf.summarize_recourse`, the aggregate
    counterpart of DiCE's feature importance: one bar per action, the most
    used on top, as long as the share of the people with a chosen plan
    whose plan takes it. The solid part counts the plans that start with the
    action, the light hatched part those that take it later. Under each
    action's name: its number of people, their share and the mean cost of
    its steps.

    Build it with :meth:`from_explanations`; the constructor takes the
    summary.

    Parameters
    ----------
    summary : DataFrame
        The table returned by :func:`~sklearn_cscf.summarize_recourse`
        (``action``, ``n_people``, ``share``, ``share_first``,
        ``mean_cost``), the most used action first.
    colors : dict
        ``{action: colour}`` for every action of ``summary``.
    n_people : int
        The number of people with a chosen plan, for the axis label.
    title : str, default=None
        The title of the axes.

    Attributes
    ----------
    bars_ : tuple of matplotlib.container.BarContainer
        The first-step parts and the later parts of the bars.
    legend_ : matplotlib.legend.Legend
    ax_ : matplotlib.axes.Axes
    figure_ : matplotlib.figure.Figure

    See Also
    --------
    sklearn_cscf.summarize_recourse : The same numbers, as a table.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from sklearn_cscf.plotting import RecourseSummaryDisplay
    >>> chosen = pd.DataFrame({
    ...     "instance": [1, 1, 2], "solution": [0, 0, 2], "step": [1, 2, 1],
    ...     "action": ["study", "save", "save"],
    ...     "feature": ["education", "savings", "savings"],
    ...     "effort": [2.0, 1.0, 3.0], "cost": [2.0, 0.5, 3.0],
    ...     "sequence_cost": [2.5, 2.5, 3.0], "gower_distance": [0.2, 0.2, 0.1],
    ...     "status": ["ok"] * 3,
    ... })
    >>> display = RecourseSummaryDisplay.from_explanations(
    ...     chosen, bar_kw={"height": 0.5}
    ... )
    >>> display.summary[["action", "n_people", "share_first"]]
      action  n_people  share_first
    0   save         2          0.5
    1  study         1          0.5
    >>> [round(float(bar.get_width()), 2) for bar in display.bars_[1]]  # later
    [0.5, 0.0]
    """

    def __init__(self, summary, *, colors, n_people, title=None):
        self.summary = summary
        self.colors = colors
        self.n_people = n_people
        self.title = title

    @classmethod
    @validated(_PARAMS, "bar_kw", "legend_kw")
    def from_explanations(
        cls,
        explanations,
        *,
        method="knee",
        objectives=None,
        weights=None,
        max_steps=None,
        colors=None,
        ax=None,
        bar_kw=None,
        legend_kw=None,
    ):
        """Choose each person's plan, summarise the actions, and plot them.

        Parameters
        ----------
        explanations : DataFrame
            The frame returned by
            :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`,
            or the one :func:`~sklearn_cscf.choose_plan` returned.
        method : {"knee", "weighted", "cheapest"}, default="knee"
            How to choose each person's plan, as in
            :func:`~sklearn_cscf.choose_plan`.
        objectives : list of str, default=None
            The objectives of the knee, as in :func:`~sklearn_cscf.choose_plan`.
        weights : dict, default=None
            ``{objective: weight}`` for ``method="weighted"``.
        max_steps : int, default=None
            Choose among the sequences with at most this many steps.
        colors : dict, default=None
            ``{action: colour}``; by default
            :func:`~sklearn_cscf.plotting.action_colors` of the sorted action
            names of the frame.
        ax : matplotlib Axes, default=None
            Where to draw; a new figure's axes if None.
        bar_kw, legend_kw : dict, default=None
            Passed on to :meth:`plot`.

        Returns
        -------
        display : RecourseSummaryDisplay
            The display, drawn: its ``ax_``, ``figure_`` and artists set.
        """
        chosen = choose_plan(
            explanations,
            method=method,
            objectives=objectives,
            weights=weights,
            max_steps=max_steps,
        )
        summary = summarize_recourse(chosen)
        if summary.empty:
            counts = chosen["status"].astype(object).value_counts(dropna=False)
            raise ValueError(
                "no instance has a chosen plan to summarise (statuses: "
                f"{counts.to_dict()})."
            )
        every = explanations[is_ok(explanations)]
        palette = _style.colors_for(every, colors)
        n_people = chosen[is_ok(chosen)]["instance"].nunique()
        once = (every.groupby("instance")["solution"].nunique() <= 1).all()
        how = (
            "the chosen plans"
            if once and max_steps is None
            else "each person's plan chosen by "
            + _data.choice_text(method, objectives, weights, max_steps)
        )
        people = chosen["instance"].nunique()
        subtitle = f"{n_people} of {people} people have a chosen plan"
        without = chosen.loc[~is_ok(chosen)].drop_duplicates("instance")
        if len(without):
            counts = without["status"].astype(str).value_counts()
            counts = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
            subtitle += "; without one: " + ", ".join(f"{n} {k}" for k, n in counts)
        title = f"Actions in {how}\n{subtitle}"
        display = cls(summary, colors=palette, n_people=n_people, title=title)
        return display.plot(ax=ax, bar_kw=bar_kw, legend_kw=legend_kw)

    def plot(self, ax=None, *, bar_kw=None, legend_kw=None):
        """Draw the bars.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; a new figure's axes if None.
        bar_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.barh` for both parts of
            the bars.
        legend_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.legend`.

        Returns
        -------
        display : RecourseSummaryDisplay
            This display, with its ``ax_``, ``figure_`` and artists.
        """
        from matplotlib.colors import to_rgba
        from matplotlib.patches import Patch
        from matplotlib.ticker import MaxNLocator, PercentFormatter

        summary, palette = self.summary, self.colors
        ax = self._axes(ax, (9, 1.6 + 0.45 * len(summary)))
        y = np.arange(len(summary))
        names = summary["action"].tolist()
        first = summary["share_first"].to_numpy(dtype=float)
        later = summary["share"].to_numpy(dtype=float) - first
        edges = [palette[name] for name in names]
        style = {"height": 0.7, "color": edges, "edgecolor": edges}
        solid = ax.barh(y, first, **_style.merged(style, bar_kw, "patch"))
        style.update(
            color=[to_rgba(palette[name], 0.3) for name in names],
            hatch="///",
            linewidth=0.8,
        )
        hatched = ax.barh(y, later, left=first, **_style.merged(style, bar_kw, "patch"))
        self.bars_ = (solid, hatched)
        # the numbers under each action's name: they never collide with a bar
        ticks = [
            f"{row.action}\n{row.n_people} "
            f"{'person' if row.n_people == 1 else 'people'} ({row.share:.0%}), "
            f"mean cost {format_cost(row.mean_cost)}"
            for row in summary.itertuples()
        ]
        ax.set_yticks(y, ticks, fontsize="small")
        ax.set_ylim(len(summary) - 0.5, -0.5)  # the most used on top
        ax.set_xlim(0, 1)
        # as many ticks as fit: a narrow panel gets fewer
        ax.xaxis.set_major_locator(MaxNLocator(nbins="auto", steps=[1, 2, 2.5, 5, 10]))
        ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.grid(axis="x", color="0.9", lw=0.8)
        ax.set_axisbelow(True)
        handles = [Patch(fc="0.35", ec="0.35", label="as the first step")]
        if (later > 0).any():
            later_look = {"fc": to_rgba("0.35", 0.3), "ec": "0.35", "hatch": "///"}
            handles.append(Patch(**later_look, label="at a later step"))
        self._legend(ax, "taken", legend_kw, handles)
        people = "people" if self.n_people != 1 else "person"
        xlabel = (
            f"share of the {self.n_people} {people} with a chosen plan whose plan "
            "takes the action"
        )
        ax.set_xlabel(_style.wrap(xlabel, ax=ax))
        return self._finish(ax, self.title)

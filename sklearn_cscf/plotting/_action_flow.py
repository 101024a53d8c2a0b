"""Fig. 5 of the paper: which actions the sequences take at each step position."""

from collections import Counter
from collections.abc import Mapping
from numbers import Integral

from sklearn_cscf._sklearn_compat import Interval, StrOptions
from sklearn_cscf.plotting import _data, _labels, _style
from sklearn_cscf.plotting._base import Display, validated

_PARAMS = {
    "solutions": [StrOptions({"all", "cheapest"})],
    "max_length": [Interval(Integral, 1, None, closed="left"), None],
    "colors": [Mapping, None],
}
_WIDTH = 0.18  # of a block, in steps


def _band_path(t, top0, top1, n):  # n sequences wide, from step t to t + 1
    from matplotlib.path import Path

    x0, x1 = t + _WIDTH / 2, t + 1 - _WIDTH / 2
    middle = (x0 + x1) / 2
    # along the upper edge, down, back along the lower edge, and up
    upper = [(x0, top0), (middle, top0), (middle, top1), (x1, top1)]
    lower = [(x1, top1 - n), (middle, top1 - n), (middle, top0 - n), (x0, top0 - n)]
    vertices = upper + lower + [(x0, top0)]
    codes = [Path.MOVETO] + [Path.CURVE4] * 3 + [Path.LINETO] + [Path.CURVE4] * 3
    return Path(vertices, codes + [Path.CLOSEPOLY])


class ActionFlowDisplay(Display):
    """Action flow by step position (the paper's Fig. 5).

    One column per step position, up to the longest sequence: a block per
    action, as tall as the number of sequences taking that action at that
    position, and a grey ``end`` block for the sequences that stopped after
    the previous step. Bands join position ``t`` to ``t + 1``, as wide as
    the number of sequences going from one action to the next (or to
    ``end``), in the colour of the action they leave. Each block is labelled
    with its count (placed, at every draw, so that no two labels overlap);
    the legend names the actions, the most frequent first.

    Build it with :meth:`from_explanations`; the constructor takes the
    sequences themselves.

    Parameters
    ----------
    sequences : list of tuple of str
        The action names of each sequence, in step order.
    colors : dict
        ``{action: colour}`` for every action of ``sequences``.
    subtitle : str, default=None
        The second line of the title: what the plot counts.

    Attributes
    ----------
    blocks_ : list of matplotlib.patches.Rectangle
        The blocks, column by column, top to bottom.
    bands_ : list of matplotlib.patches.PathPatch
        The bands between the columns.
    texts_ : list of matplotlib.text.Annotation
        The count on each block, in the order of ``blocks_``.
    legend_ : matplotlib.legend.Legend
        The legend of the actions.
    ax_ : matplotlib.axes.Axes
        The axes drawn into.
    figure_ : matplotlib.figure.Figure
        The figure of ``ax_``.

    See Also
    --------
    ProbabilityByStepDisplay : What each action does to the target probability.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from sklearn_cscf.plotting import ActionFlowDisplay
    >>> frame = pd.DataFrame({
    ...     "instance": [1, 1, 2, 2, 2], "solution": [0, 0, 0, 1, 1],
    ...     "step": [1, 2, 1, 1, 2],
    ...     "action": ["study", "save", "save", "study", "save"],
    ...     "status": ["ok"] * 5,
    ... })
    >>> display = ActionFlowDisplay.from_explanations(
    ...     frame, block_kw={"edgecolor": "black"}
    ... )
    >>> [t.get_text() for t in display.texts_]  # block sizes
    ['1', '2', '2', '1']
    >>> len(display.bands_)  # study -> save, save -> end
    2
    """

    hidden_spines = ("left", "right", "top")  # the blocks need no frame
    title_room_left = False  # no tick labels on the left
    figsize = (9, 5)

    def __init__(self, sequences, *, colors, subtitle=None):
        self.sequences = sequences
        self.colors = colors
        self.subtitle = subtitle

    @classmethod
    @validated(_PARAMS, "block_kw", "band_kw", "text_kw", "legend_kw")
    def from_explanations(
        cls,
        explanations,
        *,
        solutions="all",
        max_length=None,
        colors=None,
        ax=None,
        block_kw=None,
        band_kw=None,
        text_kw=None,
        legend_kw=None,
    ):
        """Count the sequences of an explanations frame, and plot them.

        Parameters
        ----------
        explanations : DataFrame
            The frame returned by
            :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`;
            the instances without a sequence are left out.
        solutions : {"all", "cheapest"}, default="all"
            Count every sequence of the frame (the paper's choice; a
            compacted frame holds only the sequences it kept), or only the
            cheapest sequence of each instance.
        max_length : int, default=None
            Count only the sequences with at most this many steps (the
            paper's ``T <= 2`` panels).
        colors : dict, default=None
            ``{action: colour}``; by default
            :func:`~sklearn_cscf.plotting.action_colors` of the sorted action
            names of the frame.
        ax : matplotlib Axes, default=None
            Where to draw; a new figure's axes if None.
        block_kw, band_kw, text_kw, legend_kw : dict, default=None
            Passed on to :meth:`plot`.

        Returns
        -------
        display : ActionFlowDisplay
            The display, drawn: its ``ax_``, ``figure_`` and artists set.
        """
        _data.reject_bool("max_length", max_length)
        ok = _data.ok_rows(explanations)
        # colours from every action of the frame, so that subsets match
        palette = _style.colors_for(ok, colors)
        table = _data.select(_data.sequences(ok), solutions)
        if max_length is not None:
            table = table[table["length"] <= max_length]
            if table.empty:
                raise ValueError(
                    f"no sequence has at most max_length={max_length} steps."
                )
        subtitle = _data.scope(table, solutions, max_length)
        display = cls(list(table["actions"]), colors=palette, subtitle=subtitle)
        return display.plot(
            ax=ax,
            block_kw=block_kw,
            band_kw=band_kw,
            text_kw=text_kw,
            legend_kw=legend_kw,
        )

    def plot(
        self, ax=None, *, block_kw=None, band_kw=None, text_kw=None, legend_kw=None
    ):
        """Draw the flow.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; a new figure's axes if None.
        block_kw : dict, default=None
            Passed to :class:`matplotlib.patches.Rectangle` for each block.
        band_kw : dict, default=None
            Passed to :class:`matplotlib.patches.PathPatch` for each band.
        text_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.annotate` for each count.
        legend_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.legend`.

        Returns
        -------
        display : ActionFlowDisplay
            This display, with its ``ax_``, ``figure_`` and artists.
        """
        from matplotlib.patches import Patch, PathPatch, Rectangle

        ax = self._axes(ax)
        palette, end = self.colors, _data.END
        nodes, bands = _data.flows(self.sequences)
        totals = Counter()
        for (_, name), n in nodes.items():
            totals[name] += n
        # the most frequent actions on top, in every column; "end" at the bottom
        order = sorted(totals.keys() - {end}, key=lambda name: (-totals[name], name))
        order.append(end)
        rank = {name: i for i, name in enumerate(order)}
        n_sequences = len(self.sequences)
        last = max(t for t, _ in nodes)
        gap = 0.04 * n_sequences
        top = n_sequences + gap * (len(order) - 1)

        # blocks, top-aligned, and where their bands attach
        out_edge, in_edge = {}, {}
        self.blocks_, self.bands_, self.texts_ = [], [], []
        font = _style.merged({"fontsize": "small"}, text_kw, "text")
        for t in range(1, last + 1):
            y = top
            for name in order:
                n = nodes.get((t, name), 0)
                if n == 0:
                    continue
                out_edge[t, name] = in_edge[t, name] = y
                color = _style.END_COLOR if name == end else palette[name]
                style = _style.merged(
                    {"fc": color, "ec": "white", "lw": 0.8}, block_kw, "patch"
                )
                block = Rectangle((t - _WIDTH / 2, y - n), _WIDTH, n, **style)
                block.set_gid("block")
                self.blocks_.append(ax.add_patch(block))
                self.texts_.append(
                    _labels.annotate(ax, str(n), (t, y - n / 2), leader=False, **font)
                )
                y -= n + gap
        for (t, source, target), n in sorted(
            bands.items(),
            key=lambda item: (item[0][0], rank[item[0][1]], rank[item[0][2]]),
        ):
            top0, top1 = out_edge[t, source], in_edge[t + 1, target]
            out_edge[t, source], in_edge[t + 1, target] = top0 - n, top1 - n
            path = _band_path(t, top0, top1, n)
            style = {"fc": palette[source], "ec": "none", "alpha": 0.35, "zorder": 0.5}
            band = PathPatch(path, **_style.merged(style, band_kw, "patch"))
            band.set_gid("band")
            self.bands_.append(ax.add_patch(band))
        _labels.place_labels(ax, self.texts_, center=True)

        handles = [Patch(fc=palette[name], label=name) for name in order[:-1]]
        if end in totals:
            handles.append(Patch(fc=_style.END_COLOR, label="end (no further step)"))
        self._legend(ax, "action", legend_kw, handles)
        ax.set_xlim(1 - 0.6, last + 0.6)
        ax.set_ylim(-gap, top + gap)
        ax.set_xticks(range(1, last + 1))
        ax.set_yticks([])
        # the blocks carry their counts: a short label fits a narrow panel
        ax.set_xlabel("step position")
        title = "Actions by step position"
        if self.subtitle:
            title += "\n" + self.subtitle
        return self._finish(ax, title)

"""What every display shares: its axes and figure, its title and its spines;
and the deprecated ``plot_*`` functions, one-line aliases of the displays."""

import warnings

import numpy as np

from sklearn_cscf._sklearn_compat import validate_params
from sklearn_cscf.plotting import _style

# the release that removes the plot_* functions
REMOVED_IN = "0.3"


class Display:
    """The base of the figures: ``from_explanations`` computes what a
    display draws, ``plot`` draws it; this class owns what every ``plot``
    does first and last."""

    figsize = (8, 4.5)  # of a new figure, when no axes are given
    hidden_spines = ("top", "right")
    # whether a centred title may reach over the left of the axes (their
    # tick labels), where it has room
    title_room_left = True

    def _axes(self, ax, figsize=None):
        """``ax``, or the axes of a new figure (``figsize``, else the
        display's) with a constrained layout."""
        if ax is None:
            figsize = figsize or self.figsize
            ax = _style.pyplot().subplots(figsize=figsize, layout="constrained")[1]
        return ax

    def _finish(self, ax, title=None):
        """Hide the spines, fit the title over the axes, keep ``ax_`` and
        ``figure_``; returns the display."""
        for side in self.hidden_spines:
            ax.spines[side].set_visible(False)
        if title:
            fitted = _style.fit(title, ax, room_left=self.title_room_left)
            ax.set_title(fitted, fontsize="medium")
        self.ax_, self.figure_ = ax, ax.figure
        return self

    def _legend(self, ax, title, legend_kw, handles, texts=None):
        """``legend_``, outside the axes on the right, titled ``title``."""
        style = {"fontsize": "small", "title": title, **_style.LEGEND}
        style = _style.merged(style, legend_kw)
        self.legend_ = ax.legend(handles=handles, labels=texts, **style)

    def _threshold_line(self, ax, threshold_kw, y=None, **style):
        """``threshold_line_``: a thin grey line across the axes at ``y``,
        behind the data; by default the dashed decision threshold."""
        if y is None:
            y = self.threshold
            style = {"ls": "--", "label": f"decision threshold {y:g}"}
        style = {"lw": 1, "color": _style.THRESHOLD_COLOR, "zorder": 0.5, **style}
        style = _style.merged(style, threshold_kw, "line")
        self.threshold_line_ = ax.axhline(y, **style)

    def _range_band(self, ax, target_range):
        """``threshold_line_``: a regressor's target range as a grey band
        behind the data, the axis fitted to the data with the range's finite
        ends in view."""
        ax.margins(y=0.08)
        low, high = target_range
        bottom, top = ax.get_ylim()
        # the finite ends of the range in view, with a little room
        span = top - bottom
        if np.isfinite(low) and low < bottom:
            bottom = low - 0.05 * span
        if np.isfinite(high) and high > top:
            top = high + 0.05 * span
        self.threshold_line_ = self._band(
            ax, max(low, bottom), min(high, top), f"target range [{low:g}, {high:g}]"
        )
        ax.set_ylim(bottom, top)

    def _band(self, ax, low, high, label):
        """A grey band from ``low`` to ``high``, behind the data."""
        style = {"color": _style.THRESHOLD_COLOR, "alpha": 0.12, "zorder": 0}
        return ax.axhspan(low, high, label=label, **style)


def validated(params, *styles):
    """``validate_params`` of a ``from_explanations``: its ``params``, its
    ``*_kw`` dictionaries ``styles``, the axes and the frame (checked by
    what reads it, in its own words)."""
    params = {"explanations": "no_validation", "ax": "no_validation", **params}
    styles = {name: [dict, None] for name in styles}
    return validate_params({**params, **styles}, prefer_skip_nested_validation=True)


def deprecated_alias(display, name):
    """``name``, a function that warns once per call and returns
    ``display.from_explanations(*args, **kwargs).ax_``."""
    target = f"{display.__name__}.from_explanations"
    message = (
        f"{name} is deprecated since 0.2 and will be removed in {REMOVED_IN}; "
        f"use {target}(...) (its ax_ is the axes {name} returned)."
    )

    def alias(*args, **kwargs):
        warnings.warn(message, FutureWarning, stacklevel=2)
        return display.from_explanations(*args, **kwargs).ax_

    alias.__name__ = alias.__qualname__ = name
    alias.__module__ = "sklearn_cscf.plotting"
    alias.__doc__ = f"""Deprecated: the axes of :meth:`{target}`.

    .. deprecated:: 0.2
        ``{name}`` will be removed in {REMOVED_IN}; use
        :meth:`{target}`, whose ``ax_`` is the axes returned here.

    Parameters
    ----------
    *args : tuple
        Passed to :meth:`{target}`.
    **kwargs : dict
        Passed to :meth:`{target}`.

    Returns
    -------
    ax : matplotlib.axes.Axes
        The axes drawn into.

    See Also
    --------
    {display.__name__} : The figure, with its artists and style options.
    """
    return alias

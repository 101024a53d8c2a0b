"""What the figures share: matplotlib imported lazily, colours, markers, the
labels' look and the text of axis labels and titles."""

import textwrap

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "h", "<", ">")
END_COLOR = "#c8c8c8"
THRESHOLD_COLOR = "0.3"
CHOSEN_COLOR = "#d62728"
HOLLOW = {"marker": "o", "mfc": "white", "mec": "0.3"}  # a legend's hollow marker
CHOSEN_SIZE = 15.0  # diameter of the ring round the chosen sequence, in points
# the legend sits outside the axes, so that it never covers a line or a label
LEGEND = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0), "borderaxespad": 0.0}
# one colour per sequence length, the same in every panel and figure: hues
# far apart (dark purple, blue, green, amber, vermilion, pink; no two greens),
# from 1 step to 6 or more
LENGTH_COLORS = ("#3d0c5a", "#2f6fb3", "#2a9d3a", "#e0a100", "#d55e00", "#cc79a7")
# titles and axis labels wrap at most at this many characters, and sooner
# over narrow axes (a panel of a 1 x 3 grid)
WRAP = 80


def pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "Plotting needs matplotlib; install it with "
            "pip install 'sklearn-cscf[plot]'."
        ) from None
    return plt


def merged(defaults, kw, artist=None):
    """``defaults`` updated by the user's ``*_kw`` dictionary (None: none).

    With ``artist`` ("line", "patch", "collection" or "text"), matplotlib's
    aliases (``lw`` and ``linewidth``, ``ec`` and ``edgecolor``, ...) first
    become one name, so that the user's setting wins whichever name it uses.
    """
    if artist is None:
        return {**defaults, **(kw or {})}
    from matplotlib.cbook import normalize_kwargs
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.text import Text

    kind = {"line": Line2D, "patch": Patch, "collection": Collection, "text": Text}
    kind = kind[artist]
    return {**normalize_kwargs(defaults, kind), **normalize_kwargs(kw, kind)}


def _room(ax, room_left):
    """How many points of text fit across ``ax``: its width, less the part
    of a legend outside on the right that a centred text would reach."""
    points = ax.get_position().width * ax.figure.get_figwidth() * 72
    legend = ax.get_legend()
    renderer = getattr(ax.figure.canvas, "get_renderer", None)
    if legend is not None and renderer is not None:
        # the legend, outside on the right, narrows the axes once laid
        # out; a centred title may reach over the tick labels on the
        # left as far as over the legend on the right
        extent = legend.get_window_extent(renderer())
        points -= (0.5 if room_left else 1.0) * extent.width * 72 / ax.figure.dpi
    return points


def wrap(text, ax=None, width=WRAP):
    """Each line of ``text`` wrapped at ``width`` characters, or sooner: at
    about as many as fit over ``ax`` (at least 16), so that an axis label
    of a narrow panel of a grid is not cut off."""
    if ax is not None:
        from matplotlib.font_manager import FontProperties

        size = FontProperties(size="medium").get_size_in_points()
        fits = int(_room(ax, room_left=True) / (0.55 * size))
        width = max(16, min(width, fits))
    return "\n".join(
        textwrap.fill(line, width, break_on_hyphens=False) for line in text.split("\n")
    )


def fit(text, ax, room_left=True):
    """Each line of a title shortened, with an ellipsis, to what fits over
    ``ax`` (measured in the title's font): a title keeps its lines in a
    narrow panel instead of wrapping onto many."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    font, measure = FontProperties(size="medium"), TextToPath()
    room = max(_room(ax, room_left), 8 * font.get_size_in_points())

    def width(line):
        return measure.get_text_width_height_descent(line, font, ismath=False)[0]

    lines = []
    for line in text.split("\n"):
        if width(line) > room:
            low, high = 0, len(line)  # the longest start that fits with "..."
            while low < high:
                mid = (low + high + 1) // 2
                if width(line[:mid].rstrip() + "\u2026") <= room:
                    low = mid
                else:
                    high = mid - 1
            line = line[:low].rstrip() + "\u2026"
        lines.append(line)
    return "\n".join(lines)


def length_color(length):
    """The colour of sequences of ``length`` steps, the same in every figure."""
    return LENGTH_COLORS[min(int(length), len(LENGTH_COLORS)) - 1]


def proba_name(steps, target_name=None):
    """``P(<target>)``: the target class by name, from ``target_name`` or the
    frame's ``target_class`` column; ``target probability`` if neither says."""
    if target_name is not None:
        return f"P({target_name})"
    if "target_class" in steps.columns:
        classes = steps["target_class"].dropna().unique()
        if len(classes) == 1:
            label = classes[0]
            return f"P({label})" if isinstance(label, str) else f"P(class {label})"
    return "target probability"


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
    n = len(names)
    if n <= 20:
        palette = [colormaps["tab10" if n <= 10 else "tab20"](i) for i in range(n)]
    else:
        palette = [colormaps["hsv"](i / n) for i in range(n)]
    return {name: to_hex(color) for name, color in zip(names, palette)}


def handle(**style):
    """A legend entry drawn without a line (a marker, or nothing)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], ls="", **style)


def colors_for(rows, colors):
    """The colours of the actions of ``rows``: from ``colors`` (a mapping,
    checked by the public functions' validate_params) or sorted by name."""
    names = sorted(rows["action"].astype(str).unique())
    if colors is None:
        return action_colors(names)
    missing = sorted(set(names) - set(colors))
    if missing:
        raise ValueError(f"colors has no colour for the action(s) {missing}.")
    return {name: colors[name] for name in names}

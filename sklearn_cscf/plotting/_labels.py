"""Labels that do not overlap: a small placement engine run at draw time.

:func:`annotate` makes a label for a point; :func:`place_labels` adds to the
axes an artist that, at every draw, moves the labels so that no two overlap,
none leaves the axes and, where possible, none covers a marker or a line
(benchmarks/bench_labels.py weighs it against the adjustText library).
"""

import functools

import numpy as np

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
    out += [
        (ux * r, uy * r, ha, va, r) for r in radii for ux, uy, ha, va in _DIRECTIONS
    ]
    return out


def _box(x, y, width, height, ha, va):
    x0 = x - {"left": 0.0, "center": width / 2, "right": width}[ha]
    y0 = y - {"bottom": 0.0, "center": height / 2, "top": height}[va]
    return np.array([x0, y0, x0 + width, y0 + height])


def _overlap(box, boxes):
    """Area of ``box`` shared with each row of ``boxes`` (x0, y0, x1, y1)."""
    width = np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0])
    height = np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1])
    return np.clip(width, 0, None) * np.clip(height, 0, None)


def _inside(box, points):
    """How many of ``points`` (rows x, y) lie in ``box``."""
    return int(((points >= box[:2]) & (points <= box[2:])).all(axis=1).sum())


def _line_samples(lines, spacing):
    """Points every ``spacing`` pixels along the drawn lines, in pixels, and
    the line (its position in ``lines``) of each."""
    samples, owners = [], []
    for k, line in enumerate(lines):
        xy = line.get_transform().transform(np.asarray(line.get_xydata(), float))
        xy = xy[np.isfinite(xy).all(axis=1)]
        for start, end in zip(xy[:-1], xy[1:]):
            n = max(int(np.hypot(*(end - start)) / spacing), 1)
            t = np.linspace(0.0, 1.0, n + 1)[:, None]
            samples.append(start + t * (end - start))
            owners.append(np.full(n + 1, k))
    if not samples:
        return np.zeros((0, 2)), np.zeros(0, dtype=int)
    return np.concatenate(samples), np.concatenate(owners)


def _crossings(anchor, box, pieces, near):
    """How many line samples ``pieces`` lie on the leader from ``anchor`` to
    the nearest point of ``box`` (within ``near`` pixels of it), leaving out
    those at the anchor itself."""
    end = np.clip(anchor, box[:2], box[2:])
    span = end - anchor
    length2 = float(span @ span)
    if length2 == 0.0:
        return 0
    t = np.clip((pieces - anchor) @ span / length2, 0.0, 1.0)
    gap = np.hypot(*(anchor + t[:, None] * span - pieces).T)
    away = np.hypot(*(pieces - anchor).T) > 3 * near
    return int(((gap <= near) & away).sum())


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
            sizes = np.full(len(self.points), 3.0) if sizes is None else sizes
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
            points = self.points
            if len(points):
                points = ax.transData.transform(points)
            half = (self.sizes * pixels)[:, None]  # each marker's box
            markers = np.hstack([points - half, points + half])
            pieces, owners = _line_samples(self.lines, 3.0 * pixels)
            placed = np.zeros((0, 4))
            pad = self.pad * pixels
            for label in self.labels:
                label.xyann = (0.0, 0.0)
                label.set(horizontalalignment="left", verticalalignment="bottom")
                label.update_positions(renderer)
                extent = Text.get_window_extent(label, renderer)
                width, height = extent.width + 2 * pad, extent.height + 2 * pad
                x, y = ax.transData.transform(label.xy)
                # the lines of other plans, which a leader should not cross
                own = getattr(label, "line", None)
                others = pieces
                if own is not None and own in self.lines:
                    others = pieces[owners != self.lines.index(own)]
                best, best_score = None, np.inf
                for dx, dy, ha, va, radius in self.candidates:
                    box = _box(x + dx * pixels, y + dy * pixels, width, height, ha, va)
                    # shift the padded box so that the text keeps its anchor
                    dx_pad = {"left": -pad, "center": 0, "right": pad}[ha]
                    dy_pad = {"bottom": -pad, "center": 0, "top": pad}[va]
                    box += np.array([dx_pad, dy_pad, dx_pad, dy_pad])
                    clash = _overlap(box, placed).sum()
                    outside = 0.0
                    if not (
                        (box[:2] >= frame[:2]).all() and (box[2:] <= frame[2:]).all()
                    ):
                        outside = width * height - _overlap(box, frame[None])[0]
                    crossed = 0
                    if own is not None and radius > self.candidates[0][4] + 1:
                        crossed = _crossings(
                            np.array([x, y]), box, others, 1.5 * pixels
                        )
                    score = (
                        1e6 * clash
                        + 1e3 * outside
                        + 50.0 * (_overlap(box, markers) > 0).sum()
                        + 150.0 * crossed
                        + 2.0 * _inside(box, pieces)
                        + 0.2 * radius
                    )
                    if score < best_score:
                        best, best_score = (dx, dy, ha, va, radius, box), score
                    if clash == 0 and outside == 0 and score == 0.2 * radius:
                        break  # free: nothing nearer can be better
                dx, dy, ha, va, radius, box = best
                label.xyann = (dx, dy)
                label.set(horizontalalignment=ha, verticalalignment=va)
                if label.arrow_patch is not None:
                    label.arrow_patch.set_visible(radius > self.candidates[0][4] + 1)
                placed = np.vstack([placed, box])
            self.stale = False

    return LabelLayout


def annotate(ax, text, xy, *, leader=True, **kw):
    """A label for ``xy``, placed later by :func:`place_labels`; ``kw`` (a
    ``text_kw``) overrides the look: ``color``, ``fontsize``, ``bbox``, ..."""
    style = {
        "fontsize": "x-small",
        "color": "black",
        "bbox": {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"},
        **kw,
    }
    if style["bbox"] is not None:
        style["bbox"] = {"alpha": 0.8, **style["bbox"]}
    arrow = None
    if leader:
        arrow = {"arrowstyle": "-", "color": style["color"], "lw": 0.6}
        arrow.update(shrinkA=0, shrinkB=3)
    return ax.annotate(
        text,
        xy,
        xytext=(0, 0),
        textcoords="offset points",
        arrowprops=arrow,
        annotation_clip=False,
        **style,
    )


def place_labels(ax, labels, *, points=(), sizes=None, lines=(), center=False):
    """Place ``labels`` (from :func:`annotate`) at every draw of ``ax``.

    ``points`` (data coordinates) are the markers to keep clear, ``sizes``
    their half widths in points, ``lines`` the Line2D to avoid where
    possible; ``center=True`` tries the point itself first (a count on its
    block). Returns the artist placing them.
    """
    candidates = _candidates(radii=_RADII[1:], center=True) if center else None
    layout = _layout_class()(
        labels, points=points, lines=lines, candidates=candidates, sizes=sizes
    )
    return ax.add_artist(layout)

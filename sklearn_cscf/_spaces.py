"""Compiled value spaces: vectorised interpolation of value keys.

A step's value key in ``[0, 1]`` picks its value in the space that the
action's values give, from the feature's value before the step:
:class:`RangeSpace` (a numeric range, optionally on a grid) and
:class:`DiscreteSpace` (an ordered list of numbers or category codes). Each
also gives the key of the least change and the keys of the values worth
trying (those seen in training, or every value of a list).
"""

import numpy as np

# halvings of the key interval with which a range finds the key of a value
KEY_BISECTIONS = 60


class RangeSpace:
    """A numeric range ``[low, high]``, optionally on a grid of ``step``."""

    def __init__(self, low, high, direction, step=None, support=None):
        self.low = float(low)
        self.high = float(high)
        self.direction = direction
        self.step = step
        self.span = self.high - self.low
        # with a step: grid points low + k * step, k = 0 .. top
        self.top = None if step is None else float(np.floor(self.span / step + 1e-9))
        # values worth trying (those seen in training), within the range
        if support is not None:
            support = np.asarray(support, dtype=float)
            support = support[(support >= self.low) & (support <= self.high)]
        self.support = support if support is not None and support.size else None

    def _interval(self, current):
        """Start and width of the values reachable from ``current`` (a scalar
        where it does not depend on ``current``)."""
        if self.direction == "any":
            return self.low, self.span
        if self.direction == "increase":
            low = np.maximum(current, self.low)
            return low, self.high - low
        return self.low, np.minimum(current, self.high) - self.low

    def _grid_window(self, low, width):
        """The first grid index and the number of grid points of a one-way
        interval (see :meth:`_interval`)."""
        if self.direction == "increase":
            k_low = np.maximum(np.ceil((low - self.low) / self.step - 1e-9), 0)
            return k_low, self.top + 1 - k_low
        count = np.minimum(np.floor(width / self.step + 1e-9), self.top) + 1
        return np.zeros(np.shape(width)), count

    def interpolate(self, keys, current):
        """Values for keys in [0, 1] given current values; and which are valid."""
        low, width = self._interval(current)
        if self.direction == "any":
            valid = np.ones(current.shape, dtype=bool)
        else:
            valid = width >= 0  # False where current is NaN
        if self.step is None:
            values = low + keys * width
            if self.direction == "any":
                return values, valid
            return np.where(valid, values, current), valid
        top = self.top
        if self.direction == "any":
            k = np.minimum(np.floor(keys * (top + 1)), top)
            # the clamp only removes rounding (0.1 + 2 * 0.1 > 0.3)
            return np.minimum(self.low + k * self.step, self.high), valid
        k_low, n = self._grid_window(low, width)
        valid &= n >= 1
        k = k_low + np.minimum(np.floor(keys * n), n - 1)
        # grid points within rounding of the current value never go backwards
        values = np.minimum(np.maximum(self.low + k * self.step, low), low + width)
        return np.where(valid, values, current), valid

    def least_change_key(self, current):
        """The value key that changes ``current`` least (NaN if none does)."""
        if self.direction == "increase":
            key = np.zeros(current.shape)
        elif self.direction == "decrease":
            key = np.ones(current.shape)
        elif not self.span > 0:
            key = np.full(current.shape, np.nan)
        elif self.step is None:
            key = np.clip((current - self.low) / self.span, 0.0, 1.0)
        else:  # the middle of the key interval of the nearest grid point
            k = np.clip(np.round((current - self.low) / self.step), 0, self.top)
            key = (k + 0.5) / (self.top + 1)
        return np.where(np.isnan(current), np.nan, key)

    def scan_keys(self, current):
        """Value keys of the training values reachable from each ``current``
        (shape ``(n, n_support)``, NaN where one is not reachable)."""
        n = current.shape[0]
        if self.support is None:
            return np.empty((n, 0))
        low, width = (
            np.broadcast_to(a, current.shape) for a in self._interval(current)
        )
        values = self.support[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.step is None:
                keys = (values - low[:, None]) / width[:, None]
                inside = (keys >= 0) & (keys <= 1) & (width[:, None] > 0)
                return np.where(inside, keys, np.nan)
            k = np.round((values - self.low) / self.step)
            if self.direction == "any":
                k_low, count = np.zeros(n), np.full(n, self.top + 1)
            else:
                k_low, count = self._grid_window(low, width)
            position = k - k_low[:, None]
            keys = (position + 0.5) / count[:, None]
            inside = (position >= 0) & (position < count[:, None])
        return np.where(inside, keys, np.nan)

    def key_of(self, value, current):
        """A value key with which the step sets ``value`` from ``current``
        exactly (NaN where none does): values grow with the key, so the least
        key reaching the value, by bisection."""
        low, high = np.zeros(value.shape), np.ones(value.shape)
        for _ in range(KEY_BISECTIONS):
            middle = (low + high) / 2
            below = self.interpolate(middle, current)[0] < value
            low, high = np.where(below, middle, low), np.where(below, high, middle)
        reached, valid = self.interpolate(high, current)
        return np.where(valid & (reached == value), high, np.nan)

    @property
    def two_sided(self):
        """Whether values lie on both sides of the current one."""
        return self.direction == "any"

    def small_change_key(self, current, least, far, share):
        """The value key of a small change from ``current`` toward the far key
        ``far``: the value moved by ``share`` of its magnitude (of the span's
        hundredth, at least)."""
        interval = self._interval(current)
        low, width = (np.broadcast_to(x, current.shape) for x in interval)
        size = np.maximum(np.abs(current), self.span / 100)
        target = current + np.where(far > least, 1.0, -1.0) * share * size
        with np.errstate(invalid="ignore", divide="ignore"):
            key = np.clip((target - low) / width, 0.0, 1.0)
        return np.where(width > 0, key, least)

    def value_count(self, current):
        """How many values a step can take from ``current`` (``inf``: a
        continuous range), as :meth:`interpolate` counts them."""
        current = np.asarray(current, dtype=float)
        if self.step is None:
            return np.full(current.shape, np.inf)
        if self.direction == "any":
            return np.full(current.shape, self.top + 1)
        with np.errstate(invalid="ignore"):
            _, count = self._grid_window(*self._interval(current))
        return np.nan_to_num(count, nan=0.0)

    def describe(self):
        return (self.low, self.high)


class DiscreteSpace:
    """An ordered list of values: numbers, or codes of categories."""

    def __init__(self, values, direction, rank_of_code=None):
        self.values = np.asarray(values, dtype=float)
        self.direction = direction
        # categorical features: rank of each category code in the list (-1:
        # not in it); the last slot is the missing value.
        self.rank_of_code = rank_of_code

    def _window(self, current):
        """The first slot and the number of the values reachable from each
        ``current`` one way (``"increase"`` or ``"decrease"``)."""
        n_all = self.values.shape[0]
        if self.rank_of_code is None:
            if self.direction == "increase":
                start = np.searchsorted(self.values, current, side="right")
                count = n_all - start
            else:
                start = np.zeros(current.shape, dtype=np.intp)
                count = np.searchsorted(self.values, current, side="left")
            return start, np.where(np.isnan(current), 0, count)
        # the last slot (-1) serves missing values (code -1) and categories
        # added by actions compiled after this one: neither is in the list
        last = self.rank_of_code.shape[0] - 1
        rank = self.rank_of_code[np.minimum(current.astype(np.intp), last)]
        if self.direction == "increase":
            return rank + 1, np.where(rank >= 0, n_all - rank - 1, 0)
        return np.zeros(current.shape, dtype=np.intp), np.maximum(rank, 0)

    def interpolate(self, keys, current):
        n_all = self.values.shape[0]
        if self.direction == "any":
            index = np.minimum((keys * n_all).astype(np.intp), n_all - 1)
            return self.values[index], np.ones(current.shape, dtype=bool)
        start, n = self._window(current)
        valid = n >= 1
        index = start + np.minimum((keys * n).astype(np.intp), n - 1)
        index[~valid] = 0  # any in-bounds index: these values are not used
        return np.where(valid, self.values[index], current), valid

    def scan_keys(self, current):
        """Value keys of every value reachable from each ``current`` (shape
        ``(n, n_values)``, NaN where one is not reachable)."""
        n_all = self.values.shape[0]
        slots = np.arange(n_all)[None, :]
        if self.direction == "any":
            return np.broadcast_to((slots + 0.5) / n_all, (current.shape[0], n_all))
        start, count = self._window(current)
        position = slots - start[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            keys = (position + 0.5) / count[:, None]
        return np.where((position >= 0) & (position < count[:, None]), keys, np.nan)

    def least_change_key(self, current):
        """The value key that changes ``current`` least (NaN if none does):
        the nearest later (earlier) value for ``"increase"`` (``"decrease"``),
        the nearest number for ``"any"``; unordered categories have none."""
        if self.direction == "increase":
            key = np.zeros(current.shape)
        elif self.direction == "decrease":
            key = np.ones(current.shape)
        elif self.rank_of_code is not None:
            key = np.full(current.shape, np.nan)
        else:
            n_all = self.values.shape[0]
            nearest = np.abs(current[:, None] - self.values[None, :]).argmin(axis=1)
            key = (nearest + 0.5) / n_all
        if self.rank_of_code is None:
            return np.where(np.isnan(current), np.nan, key)
        return np.where(current < 0, np.nan, key)

    def key_of(self, value, current):
        """A value key with which the step sets ``value`` from ``current``
        (NaN where none does): the key of its slot among the reachable
        values."""
        slot = self.values[None, :] == value[:, None]
        keys = self.scan_keys(current)[np.arange(value.size), slot.argmax(axis=1)]
        return np.where(slot.any(axis=1), keys, np.nan)

    @property
    def two_sided(self):
        """Whether values lie on both sides of the current one, in an order
        (an ordered list free both ways; not unordered categories)."""
        return self.direction == "any" and self.rank_of_code is None

    def small_change_key(self, current, least, far, share):
        """The value key ``share`` of the way from the least change ``least``
        toward the far key ``far``."""
        del current
        return least + share * (far - least)

    def value_count(self, current):
        """How many values a step can take from ``current``, as
        :meth:`interpolate` counts them."""
        current = np.asarray(current, dtype=float)
        n_all = self.values.shape[0]
        if self.direction == "any":
            return np.full(current.shape, float(n_all))
        if self.rank_of_code is not None:
            current = np.nan_to_num(current, nan=-1)  # a missing category
        return self._window(current)[1].astype(float)

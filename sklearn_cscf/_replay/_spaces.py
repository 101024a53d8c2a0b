"""Value spaces as replay derives them from ``explainer.actions_``, on its
own: a numeric range (on a grid or not), or a list of allowed values."""

import numpy as np
import pandas as pd

from sklearn_cscf._replay._util import is_missing


class Range:
    """A numeric range ``[low, high]``, on the grid ``low + k * step`` if any."""

    def __init__(self, low, high, step):
        self.low, self.high, self.step = float(low), float(high), step
        self.scale = self.high - self.low if self.high > self.low else None

    def contains(self, value, context):
        if is_missing(value):
            return False
        tol = context.tolerance(self.low, self.high)
        if not self.low - tol <= value <= self.high + tol:
            return False
        if self.step is None:
            return True
        k = (value - self.low) / self.step
        return abs(k - round(k)) * self.step <= max(1e-8 * self.step, tol)

    def follows(self, direction, old, new, context):
        if direction == "any":
            return True
        if is_missing(old) or is_missing(new):
            return False
        tol = context.tolerance(old, new, self.low, self.high)
        if direction == "increase":  # the part [old, high]
            return old <= self.high + tol and new >= old - tol
        return old >= self.low - tol and new <= old + tol  # [low, old]


class List:
    """Allowed values in order: numbers (sorted) or categories (as listed)."""

    def __init__(self, values, categorical):
        self.values = list(values)
        self.categorical = categorical
        if categorical:
            self.scale = None
        else:
            self.values = sorted(float(v) for v in self.values)
            span = self.values[-1] - self.values[0]
            self.scale = span if span > 0 else None

    def position(self, value, context):
        """Index of ``value`` in the list, or None."""
        if is_missing(value):
            return None
        for k, item in enumerate(self.values):
            if self.categorical and str(item) == str(value):
                return k
            if not self.categorical and context.close(item, float(value)):
                return k
        return None

    def contains(self, value, context):
        return self.position(value, context) is not None

    def follows(self, direction, old, new, context):
        if direction == "any":
            return True
        if is_missing(old) or is_missing(new):
            return False
        if not self.categorical:  # strictly larger (smaller) numbers
            return new > old if direction == "increase" else new < old
        before, after = self.position(old, context), self.position(new, context)
        if before is None or after is None:
            return False
        return after > before if direction == "increase" else after < before


def value_space(action, categorical):
    """The value space of a resolved action (``explainer.actions_``)."""
    values = action.values
    if isinstance(values, tuple):
        return Range(values[0], values[1], action.step)
    if isinstance(values, list | np.ndarray | pd.Index | pd.Series | range):
        return List(values, categorical)
    return List([values], categorical)


# replay's own value space for each kind the search compiles an action to
# (sklearn_cscf._compiled_actions): a kind added there needs its replay here
SPACE_KINDS = {"RangeSpace": Range, "DiscreteSpace": List}

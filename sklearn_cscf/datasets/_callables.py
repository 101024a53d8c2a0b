"""Small callables the built-in actions are made of: efforts and conditions.

They are module-level classes rather than closures, so that the standard
pickler stores the built-in actions by reference (a saved explainer embeds no
code) and their repr says what they compute, e.g. ``AbsoluteChange('age',
per=1)``. Each receives the mappings ``before`` and ``after`` (column name ->
1-D array of raw values) that every user callable receives.
"""

import operator

import numpy as np

_OPERATORS = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


class _Feature:
    """A callable on one feature, shown as ``Name('feature', key=value)``."""

    def __init__(self, feature):
        self.feature = feature

    def _repr_args(self):
        return []

    def __repr__(self):
        args = ", ".join([repr(self.feature), *self._repr_args()])
        return f"{type(self).__name__}({args})"


class _PerUnit(_Feature):
    """An effort of ``feature`` in units of ``per``."""

    def __init__(self, feature, per=1):
        super().__init__(feature)
        self.per = per

    def _repr_args(self):
        return [f"per={self.per!r}"]


class AbsoluteChange(_PerUnit):
    """Effort ``abs(after - before) / per`` of ``feature``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_cscf.datasets._callables import AbsoluteChange
    >>> effort = AbsoluteChange("hours", per=10)
    >>> effort
    AbsoluteChange('hours', per=10)
    >>> effort({"hours": np.array([40, 40])}, {"hours": np.array([20, 45])})
    array([2. , 0.5])
    """

    def __call__(self, before, after):
        return np.abs(after[self.feature] - before[self.feature]) / self.per


class Increase(_PerUnit):
    """Effort ``(after - before) / per`` of ``feature`` (it only grows)."""

    def __call__(self, before, after):
        return (after[self.feature] - before[self.feature]) / self.per


class Decrease(_PerUnit):
    """Effort ``(before - after) / per`` of ``feature`` (it only shrinks)."""

    def __call__(self, before, after):
        return (before[self.feature] - after[self.feature]) / self.per


class RelativeChangeSquared(_Feature):
    """Effort ``((after - before) / before) ** 2`` of ``feature``.

    Valid values are at least 1 (the value spaces start there); the base is
    clipped to 1 so that a candidate already made infeasible (say a loan
    duration rounded down to 0) gets a finite effort instead of a division by
    zero.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_cscf.datasets._callables import RelativeChangeSquared
    >>> effort = RelativeChangeSquared("credit")
    >>> effort({"credit": np.array([1000.0, 0.0])},
    ...        {"credit": np.array([1500.0, 2.0])})
    array([0.25, 4.  ])
    """

    def __call__(self, before, after):
        base = np.maximum(before[self.feature], 1.0)
        return ((after[self.feature] - before[self.feature]) / base) ** 2


class FixedEffort:
    """The same effort, ``float(value)``, for every candidate.

    Examples
    --------
    >>> from sklearn_cscf.datasets._callables import FixedEffort
    >>> FixedEffort(5)({}, {})
    5.0
    """

    def __init__(self, value):
        self.value = value

    def __call__(self, before, after):
        return float(self.value)

    def __repr__(self):
        return f"FixedEffort({self.value!r})"


class Compare(_Feature):
    """Condition ``feature <op> value``, e.g. ``Compare('age', '<', 120)``.

    As a precondition (``condition(before)``) it tests the state before the
    step, as a postcondition (``condition(before, after)``) the state after.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_cscf.datasets._callables import Compare
    >>> young = Compare("age", "<", 65)
    >>> young
    Compare('age', '<', 65)
    >>> young({"age": np.array([30, 70])})
    array([ True, False])
    >>> young({"age": np.array([30, 70])}, {"age": np.array([66, 64])})
    array([False,  True])
    """

    def __init__(self, feature, op, value):
        if op not in _OPERATORS:
            raise ValueError(f"op must be one of {list(_OPERATORS)}, got {op!r}.")
        super().__init__(feature)
        self.op = op
        self.value = value

    def __call__(self, before, after=None):
        state = before if after is None else after
        return _OPERATORS[self.op](state[self.feature], self.value)

    def _repr_args(self):
        return [repr(self.op), repr(self.value)]


class Between(_Feature):
    """Condition ``low <= feature <= high``, on the state as :class:`Compare`."""

    def __init__(self, feature, low, high):
        super().__init__(feature)
        self.low = low
        self.high = high

    def __call__(self, before, after=None):
        values = (before if after is None else after)[self.feature]
        return (values >= self.low) & (values <= self.high)

    def _repr_args(self):
        return [repr(self.low), repr(self.high)]

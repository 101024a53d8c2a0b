"""Actions: what a person can do, what it costs, and what else it changes.

An :class:`Action` directly sets one feature to a value taken from its
feasible value space, may change other features as a consequence, and may
carry hard constraints. The explainer resolves actions against the columns of
``X`` in ``fit``; the private :class:`CompiledAction` then applies an action
to a whole batch of candidates at once (``_compiled_actions``).
"""

from collections.abc import Mapping
from inspect import signature
from numbers import Real

import numpy as np

from sklearn_cscf._pickling import PortableCallables, portable
from sklearn_cscf._validation import is_listlike

__all__ = ["Action"]

DIRECTIONS = ("any", "increase", "decrease")


def _describe(value):
    return f"{type(value).__name__} {value!r}"


class Action(PortableCallables):
    """One action a person can take: set ``feature`` to a new value.

    Parameters
    ----------
    name : str
        Unique name of the action, shown in the explanations.
    feature : str or int
        The column the action sets directly.
    values : None, tuple, list or scalar, default=None
        The feasible value space.

        - ``None``: learned in ``fit``; numeric features take any value in the
          observed ``[min, max]`` (whole numbers when the column only holds
          whole numbers), categorical features any observed category (a pandas
          ordered ``Categorical`` gives their order).
        - ``(low, high)``: a numeric range.
        - a list: the allowed values, in order (categories, or numbers).
        - a scalar: a fixed target; the action always sets exactly that value.
    direction : {"any", "increase", "decrease"}, default="any"
        Restricts the value space relative to the value the feature has when
        the action is applied. For a numeric range, ``"increase"`` keeps the
        part ``[current, high]``; for a list, ``"increase"`` keeps the values
        strictly after the current one (numbers: larger ones; categories: later
        ones in the list). A step whose restricted value space is empty is
        infeasible, and so is the whole sequence.
    cost : callable, default=None
        ``cost(before, after) -> efforts``: the action effort ``b``, one
        non-negative value per candidate. ``before`` and ``after`` map every
        column name to a 1-D array of raw values (numbers, or category labels),
        one entry per candidate. Default: ``abs(delta) / (high - low)`` for a
        numeric value space, ``1.0`` for categories or a fixed value.
    effects : dict, default=None
        ``{other_feature: fn(before, after) -> new_values}``: consequences on
        other features. ``after`` already holds the direct change (and the
        effects listed before this one).
    precondition : callable, default=None
        ``precondition(before) -> bool array``: the step is only valid where
        it holds.
    postcondition : callable, default=None
        ``postcondition(before, after) -> bool array``: the step is only valid
        where it holds.
    step : float, default=None
        Grid spacing of a numeric range: values are ``low + k * step``. For
        example ``step=1`` makes an action change a count in whole units.

    See Also
    --------
    FeatureGraph : Consequential discounts between features.
    SequentialCounterfactualExplainer : Searches sequences of actions.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_cscf import Action
    >>> study = Action(
    ...     "get_degree", "education", values=["HS", "BSc", "MSc"],
    ...     direction="increase", cost=lambda b, a: 4.0,
    ...     effects={"age": lambda b, a: b["age"] + 4},
    ... )
    >>> study
    Action('get_degree', feature='education', values=['HS', 'BSc', 'MSc'], direction='increase', effects=['age'])
    >>> study.affected_features
    ['education', 'age']
    """  # noqa: E501

    def __init__(
        self,
        name,
        feature,
        values=None,
        direction="any",
        cost=None,
        effects=None,
        precondition=None,
        postcondition=None,
        step=None,
    ):
        if not isinstance(name, str) or not name:
            raise TypeError(f"Action name must be a non-empty str, got {name!r}.")
        if direction not in DIRECTIONS:
            raise ValueError(
                f"Action {name!r}: direction must be one of {DIRECTIONS}, got "
                f"{direction!r}."
            )
        for label, fn in (
            ("cost", cost),
            ("precondition", precondition),
            ("postcondition", postcondition),
        ):
            if fn is not None and not callable(fn):
                raise TypeError(
                    f"Action {name!r}: {label} must be callable, got {_describe(fn)}."
                )
        if effects is not None:
            if not isinstance(effects, Mapping):
                raise TypeError(
                    f"Action {name!r}: effects must be a dict "
                    f"{{feature: fn(before, after)}}, got {_describe(effects)}."
                )
            for target, fn in effects.items():
                if not callable(fn):
                    raise TypeError(
                        f"Action {name!r}: the effect on {target!r} must be "
                        f"callable, got {_describe(fn)}."
                    )
                if target == feature:
                    raise ValueError(
                        f"Action {name!r}: {target!r} is the feature the action "
                        "sets directly; it cannot also be an effect."
                    )
        if step is not None and (
            not isinstance(step, Real) or isinstance(step, bool) or not step > 0
        ):
            raise ValueError(f"Action {name!r}: step must be a positive number.")
        _check_values(name, values)
        self.name = name
        self.feature = feature
        self.values = values
        self.direction = direction
        self.cost = cost
        self.effects = dict(effects) if effects is not None else None
        self.precondition = precondition
        self.postcondition = postcondition
        self.step = step

    @property
    def affected_features(self):
        """Every feature the action changes: its own, then its consequences."""
        return [self.feature, *(self.effects or {})]

    def __repr__(self):
        parts = [repr(self.name), f"feature={self.feature!r}"]
        if self.values is not None:
            parts.append(f"values={self.values!r}")
        if self.direction != "any":
            parts.append(f"direction={self.direction!r}")
        if self.step is not None:
            parts.append(f"step={self.step!r}")
        if self.effects:
            parts.append(f"effects={list(self.effects)!r}")
        return f"Action({', '.join(parts)})"

    def __getstate__(self):
        # callables the standard pickler cannot store go by value (cloudpickle)
        what = f"Action {self.name!r}:"
        state = dict(self.__dict__)
        for key in ("cost", "precondition", "postcondition"):
            state[key] = portable(state[key], f"{what} {key}")
        if self.effects is not None:
            state["effects"] = {
                target: portable(fn, f"{what} effect on {target!r}")
                for target, fn in self.effects.items()
            }
        return state

    def _replace(self, **changes):
        params = {key: getattr(self, key) for key in signature(Action).parameters}
        params.update(changes)
        return Action(**params)


def _check_values(name, values):
    if values is None or isinstance(values, str):
        return
    if isinstance(values, tuple):
        if len(values) != 2 or not all(
            isinstance(v, Real) and not isinstance(v, bool) for v in values
        ):
            raise ValueError(
                f"Action {name!r}: a tuple of values must be a numeric range "
                f"(low, high), got {values!r}."
            )
        low, high = values
        if not (np.isfinite(low) and np.isfinite(high) and low <= high):
            raise ValueError(
                f"Action {name!r}: the range (low, high) = {values!r} needs finite "
                "bounds with low <= high."
            )
        with np.errstate(over="ignore"):
            span = np.float64(high) - np.float64(low)
        if not np.isfinite(span):
            raise ValueError(
                f"Action {name!r}: the range (low, high) = {values!r} is wider "
                "than the largest float; its default cost would be 0. Rescale "
                "the feature."
            )
        return
    if is_listlike(values):
        items = list(values)
        if not items:
            raise ValueError(f"Action {name!r}: the list of values is empty.")
        if len(set(map(_key, items))) != len(items):
            raise ValueError(f"Action {name!r}: the list of values has duplicates.")


def _key(value):
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value

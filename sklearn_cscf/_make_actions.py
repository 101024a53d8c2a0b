"""Actions from a few declarations, DiCE-style: :func:`make_actions`.

One :class:`~sklearn_cscf.Action` per feature that may change, with a value
space, a direction and a cost that reads in the feature's own units. The
costs are small callable objects (``PerUnitCost``, ``PerLevelCost``,
``ChangeCost``) that pickle by reference and say what they charge.
"""

import difflib
import re
import warnings
from collections import Counter
from collections.abc import Mapping
from numbers import Real

import numpy as np
import pandas as pd

from sklearn_cscf._input_frames import to_pandas
from sklearn_cscf._schema import FeatureSchema
from sklearn_cscf._validation import is_listlike
from sklearn_cscf.actions import DIRECTIONS, Action

__all__ = ["ChangeCost", "PerLevelCost", "PerUnitCost", "make_actions", "unit_scale"]


# ---------------------------------------------------------------------- #
# costs
# ---------------------------------------------------------------------- #
class PerUnitCost:
    """Cost of a numeric change: ``price`` per ``per`` of change,
    ``|after - before| / per * price``.

    ``PerUnitCost("credit_amount", 0.001)`` charges 0.001 per unit of
    change, and so does ``PerUnitCost("credit_amount", 1, per=1000)`` (1
    per 1,000; :func:`make_actions`' default costs are 1 per interquartile
    range). A missing value before or after gives no price, so no step.
    """

    def __init__(self, feature, price=1.0, *, per=1.0):
        self.feature = feature
        self.price = float(price)
        self.per = float(per)

    def __call__(self, before, after):
        change = np.asarray(after[self.feature], dtype=float) - np.asarray(
            before[self.feature], dtype=float
        )
        return np.abs(change) / self.per * self.price

    def __setstate__(self, state):
        # pickled before 0.2: the change that costs 1, as ``unit``
        if "unit" in state:
            state = {"feature": state["feature"], "price": 1.0, "per": state["unit"]}
        self.__dict__.update(state)

    def __repr__(self):
        per = "" if self.per == 1 else f", per={self.per:g}"
        return f"PerUnitCost({self.feature!r}, price={self.price:g}{per})"


class PerLevelCost:
    """Cost of a move along an order of categories: ``price`` times the
    number of levels moved. A value outside the order gives no price, so no
    step."""

    def __init__(self, feature, order, price=1.0):
        self.feature = feature
        self.order = list(order)
        self.price = float(price)
        self._ranks = pd.Index(self.order, dtype=object)

    def __call__(self, before, after):
        old = self._ranks.get_indexer(np.asarray(before[self.feature], dtype=object))
        new = self._ranks.get_indexer(np.asarray(after[self.feature], dtype=object))
        levels = np.abs(new - old).astype(float)
        levels[(old < 0) | (new < 0)] = np.nan
        return levels * self.price

    def __setstate__(self, state):
        # pickled before 0.2: the price of a level as ``per_level``
        if "per_level" in state:
            state = {**state, "price": state["per_level"]}
            del state["per_level"]
        self.__dict__.update(state)

    def __repr__(self):
        return (
            f"PerLevelCost({self.feature!r}, order={self.order!r}, "
            f"price={self.price:g})"
        )


class ChangeCost:
    """Cost of setting an unordered category: ``price`` for a change, 0 for
    keeping the same value."""

    def __init__(self, feature, price=1.0):
        self.feature = feature
        self.price = float(price)

    def __call__(self, before, after):
        # str labels arrive as a str array: compared as they are (fast)
        old, new = np.asarray(before[self.feature]), np.asarray(after[self.feature])
        if old.dtype.kind != "U" or new.dtype.kind != "U":
            old, new = old.astype(object), new.astype(object)
        return np.where(old != new, self.price, 0.0)

    def __setstate__(self, state):
        # pickled before 0.2: the price of a change as ``cost``
        if "cost" in state:
            state = {**state, "price": state["cost"]}
            del state["cost"]
        self.__dict__.update(state)

    def __repr__(self):
        return f"ChangeCost({self.feature!r}, price={self.price:g})"


def unit_scale(values):
    """The change of a numeric feature that costs 1 by default.

    Its interquartile range; where that is 0 (most values equal), twice the
    median absolute deviation, then 1.349 times the standard deviation (each
    equals the interquartile range for normally distributed data), then the
    range, then 1.
    """
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return 1.0
    q25, median, q75 = np.percentile(values, [25, 50, 75])
    for scale in (
        q75 - q25,
        2.0 * np.median(np.abs(values - median)),
        1.349 * values.std(),
        np.ptp(values),
    ):
        if scale > 0 and np.isfinite(scale):
            return float(scale)
    return 1.0


# ---------------------------------------------------------------------- #
# make_actions
# ---------------------------------------------------------------------- #
def make_actions(
    X,
    features_to_vary="all",
    *,
    permitted_range=None,
    immutable=None,
    directions=None,
    prices=None,
    orders=None,
    costs=None,
):
    """One action per feature that may change, from a few declarations.

    The keywords ``features_to_vary`` and ``permitted_range`` mean what they
    mean in DiCE's ``generate_counterfactuals``; the others say what DiCE
    cannot: which way a feature may move, what a change costs, and the order
    of ordered categories. The result is a list of ordinary
    :class:`~sklearn_cscf.Action` objects, to inspect, edit (e.g. add
    ``effects`` or a ``precondition``) and mix with hand-written ones before
    passing them as ``actions=`` to the explainer.

    Parameters
    ----------
    X : DataFrame of shape (n_samples, n_features)
        The data the explainer is fitted on (pandas or polars): each feature's
        kind, its categories and the scale of its default cost come from it.
    features_to_vary : "all" or list of str, default="all"
        The features a person can change (DiCE's keyword); ``None`` is
        ``"all"``. Every other feature is left as it is.
    permitted_range : dict, default=None
        ``{feature: [low, high]}`` for a numeric feature: the values it may
        take; ``{feature: [label, ...]}`` for a categorical one: the values a
        person can choose (DiCE's keyword). Unlisted features take the values
        seen in ``X`` (numbers: ``[min, max]``; whole numbers where ``X``
        holds only whole numbers). A range of such a column is rounded
        inward to whole numbers (``[40.5, 45.5]`` gives 41 to 45); one that
        holds no whole number is an error. For a categorical feature with an
        order, each permitted value must be in the order.
    immutable : list of str, default=None
        Features that never change (age, race, ...), removed from
        ``features_to_vary``. A range, direction, cost or order given for one
        is an error; one given for a feature outside a listed
        ``features_to_vary`` is ignored with a warning.
    directions : dict, default=None
        ``{feature: "increase" | "decrease" | "any"}``: numbers only go up
        (down), categories only later (earlier) in their order. Default
        ``"any"``, except ``"increase"`` for a feature listed in ``orders``.
    prices : dict, default=None
        ``{feature: price}``: what one unit of change costs, with one rule
        for every kind of feature. For a number, the price of a change of 1
        in its own unit: ``{"credit_amount": 0.001}`` charges 1 per 1,000,
        ``{"age": 2}`` 2 per year. For an ordered categorical feature, the
        price of one level; for an unordered one, the price of a change. So
        ``{"hours": 0.5, "job": 0.5}`` charges the same for one more hour
        as for another job. A callable ``cost(before, after)`` is used as it
        is (see :class:`~sklearn_cscf.Action`). Default: a number costs 1
        per interquartile range of the feature in ``X`` (see below), one
        level or one change of category costs 1.
    orders : dict, default=None
        ``{feature: [label, ...]}``: the order of an ordered categorical
        feature, lowest first, e.g. education levels. Moves go one way along
        it (``directions`` can say ``"decrease"`` or ``"any"``) and cost per
        level moved. A pandas ordered ``Categorical`` column (a polars
        ``Enum``) gives its order without this, with direction ``"any"``.
    costs : dict, default=None
        Deprecated since 0.2, removed in 0.3: use ``prices``. It gave a
        number the change that costs 1 (``{"credit_amount": 1000}``) but a
        category the price of a change, two meanings for one keyword; it
        keeps them until it goes, with a ``FutureWarning`` that gives the
        same declarations as ``prices``. Giving both is an error.

    Returns
    -------
    actions : list of Action
        In the order of the columns of ``X``: ``set_<feature>``, or
        ``increase_<feature>`` / ``decrease_<feature>`` when the direction is
        given. Spaces in a feature's name become underscores in the
        action's (``decrease_worst_area`` for ``"worst area"``), unless that
        name is another action's; the action's ``feature`` keeps the
        column's name. Each ``cost`` is a ``PerUnitCost``, ``PerLevelCost``
        or ``ChangeCost`` object (or the callable given), whose ``repr``
        says what it charges.

    Raises
    ------
    ValueError
        For a feature that is not a column of ``X``, or a category label
        that ``X`` does not hold (the message lists the close matches), a
        feature both to vary and immutable, a direction for an unordered
        category, a bad range or a cost that is not a positive number.

    See Also
    --------
    Action : One action, written by hand.
    SequentialCounterfactualExplainer : Takes the actions as ``actions=``.

    Notes
    -----
    Default costs are scale-aware: moving a numeric feature by its
    interquartile range in ``X`` costs 1, whatever its unit (years, hours,
    currency). Where the interquartile range is 0 (a feature that is mostly
    0, like capital gains), twice the median absolute deviation is used,
    then 1.349 standard deviations, then the range. The explainer's own
    ``actions=None`` uses these defaults for every feature not in its
    ``immutable_features``.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_cscf import make_actions
    >>> X = pd.DataFrame({
    ...     "age": [25, 40, 33, 52],
    ...     "savings": [1000.0, 25000.0, 8000.0, 60000.0],
    ...     "education": ["HS", "BSc", "HS", "MSc"],
    ... })
    >>> actions = make_actions(
    ...     X, immutable=["age"],
    ...     directions={"savings": "increase"},
    ...     prices={"savings": 0.0001, "education": 2},  # 1 per 10,000; 2 a level
    ...     orders={"education": ["HS", "BSc", "MSc"]},
    ... )
    >>> for action in actions:
    ...     print(action.name, action.direction, action.cost)
    increase_savings increase PerUnitCost('savings', price=0.0001)
    increase_education increase PerLevelCost('education', order=['HS', 'BSc', 'MSc'], price=2)
    >>> make_actions(X, permitted_range={"education": ["BSc", "Msc"]})
    Traceback (most recent call last):
    ...
    ValueError: permitted_range['education']: 'Msc' is not a value of 'education' in X; did you mean 'MSc'? Its values are ['BSc', 'HS', 'MSc'].
    """  # noqa: E501
    X = to_pandas(X)
    if not isinstance(X, pd.DataFrame):
        raise TypeError(
            "make_actions needs a DataFrame (pandas or polars) with named "
            f"columns, got {type(X).__name__}."
        )
    schema = FeatureSchema(X)
    names = schema.names
    permitted_range = _mapping(permitted_range, "permitted_range", names)
    directions = _mapping(directions, "directions", names)
    prices = _mapping(prices, "prices", names)
    orders = _mapping(orders, "orders", names)
    per = _deprecated_costs(_mapping(costs, "costs", names), prices, schema)
    immutable = _feature_list(immutable, "immutable", names)
    if features_to_vary is None or (
        isinstance(features_to_vary, str) and features_to_vary == "all"
    ):
        varied = [n for n in names if n not in immutable]
    else:
        varied = _feature_list(features_to_vary, "features_to_vary", names)
        both = [n for n in varied if n in immutable]
        if both:
            raise ValueError(
                f"{both} are both in features_to_vary and immutable; a feature "
                "cannot be both."
            )
        varied = [n for n in names if n in set(varied)]
    _check_declared(
        {
            "permitted_range": permitted_range,
            "directions": directions,
            "prices": prices,
            "costs": per,
            "orders": orders,
        },
        varied,
        immutable,
    )
    actions = []
    for name in varied:
        j = schema.index[name]
        permitted, price = permitted_range.get(name), prices.get(name)
        if schema.is_categorical[j]:
            direction, order = directions.get(name), orders.get(name)
            action = _categorical_action(
                name, schema, j, permitted, direction, price, order
            )
        elif name in orders:
            raise ValueError(
                f"orders[{name!r}]: {name!r} is numeric; orders are for "
                "categorical features (a number's order is its own)."
            )
        else:
            whole, direction = bool(schema.is_integer[j]), directions.get(name, "any")
            action = _numeric_action(
                name, X[name], whole, permitted, direction, price, per.get(name)
            )
        actions.append(action)
    if not actions:
        raise ValueError("No feature may change: there is nothing to do.")
    return _without_spaces(actions)


def _without_spaces(actions):
    """The actions, their names' runs of whitespace made underscores
    (``decrease_worst_area``); a name that would then be another's keeps
    its spaces."""
    plain = [re.sub(r"\s+", "_", action.name) for action in actions]
    counts = Counter(plain)
    return [
        action._replace(name=name) if counts[name] == 1 else action
        for action, name in zip(actions, plain)
    ]


def _action(name, direction, **kwargs):
    """The action on feature ``name``: ``set_<name>``, ``increase_<name>``
    or ``decrease_<name>``."""
    prefix = "set" if direction == "any" else direction
    return Action(f"{prefix}_{name}", name, direction=direction, **kwargs)


def _numeric_action(name, column, is_integer, permitted, direction, price, unit):
    """``price`` per unit of change; or, from the deprecated ``costs=``,
    ``unit``: the change that costs 1."""
    _check_direction(name, direction)
    values, step = None, None
    if permitted is not None:
        values = _numeric_range(name, permitted)
        if is_integer:
            values, step = _whole_range(name, values), 1
    if callable(unit):
        cost = unit
    elif unit is not None:
        cost = PerUnitCost(name, per=_positive(unit, f"costs[{name!r}]"))
    elif price is None:
        cost = PerUnitCost(name, per=unit_scale(column))
    elif callable(price):
        cost = price
    else:
        cost = PerUnitCost(name, _positive(price, f"prices[{name!r}]"))
    return _action(name, direction, values=values, cost=cost, step=step)


def _categorical_action(name, schema, j, permitted, direction, price, order):
    known = list(schema.categories[j])
    values = None
    if order is not None:
        if not is_listlike(order) or len(order) < 2:
            raise ValueError(
                f"orders[{name!r}] must be a list of at least two labels, "
                f"lowest first; got {order!r}."
            )
        order = list(order)
        _check_labels(name, order, known, f"orders[{name!r}]")
        if len(set(map(str, order))) != len(order):
            raise ValueError(f"orders[{name!r}] lists a label twice: {order!r}.")
        if direction is None:
            direction = "increase"
    elif schema.ordered[j]:
        order = known
        # the values offered are those X holds, in their order (as for an
        # unordered category): a declared category no row has (a pandas
        # ordered Categorical's or a polars Enum's unused label) is no plan;
        # moves still cost by the levels of the whole order
        observed = set(schema.observed[j])
        values = [label for label in known if label in observed]
    if direction is None:
        direction = "any"
    _check_direction(name, direction)
    if direction != "any" and order is None:
        raise ValueError(
            f"directions[{name!r}] = {direction!r} needs an order of the "
            f"categories of {name!r}; give it in orders={{{name!r}: [...]}}, "
            "lowest first."
        )
    condition = None  # a postcondition
    if values is None:
        values = order
    if permitted is not None:
        if not is_listlike(permitted) or not len(permitted):
            raise ValueError(
                f"permitted_range[{name!r}]: {name!r} is categorical; give the "
                f"values a person can choose as a list, got {permitted!r}."
            )
        permitted = list(permitted)
        _check_labels(name, permitted, known, f"permitted_range[{name!r}]")
        outside = [] if order is None else [v for v in permitted if v not in order]
        if outside:
            raise ValueError(
                f"permitted_range[{name!r}]: {outside[0]!r} is not in "
                f"orders[{name!r}] = {order!r}; a value outside the order "
                "can never be reached. Add it to the order, or leave it out "
                "of permitted_range."
            )
        if order is None:
            values = permitted
        else:
            # the order stays whole, so that moves count its levels; the
            # values reached are limited to the permitted ones (which may
            # name a declared category no row has)
            values = order
            condition = OneOf(name, permitted)
    cost = price
    if not callable(cost):
        cost = _positive(1.0 if cost is None else cost, f"prices[{name!r}]")
        cost = (
            ChangeCost(name, cost) if order is None else PerLevelCost(name, order, cost)
        )
    return _action(name, direction, values=values, cost=cost, postcondition=condition)


def _deprecated_costs(costs, prices, schema):
    """The entries of the deprecated ``costs=`` whose meaning ``prices=``
    does not share: ``{numeric feature: the change that costs 1}``; its
    entries for categories are prices, merged into ``prices``. Warns with
    the same declarations as ``prices=``."""
    if not costs:
        return {}
    if prices:
        raise ValueError(
            "give prices= alone: costs= is its deprecated form (for a number, "
            "the change that costs 1), and both were given."
        )
    translated, numbers = {}, {}
    for name, value in costs.items():
        numeric = not schema.is_categorical[schema.index[name]]
        (numbers if numeric else prices)[name] = value
        if callable(value):
            translated[name] = "<the same callable>"
        elif numeric and isinstance(value, Real) and value > 0:
            translated[name] = _one_over(value)
        else:
            translated[name] = value
    entries = ", ".join(f"{name!r}: {value}" for name, value in translated.items())
    warnings.warn(
        "make_actions(costs=...) is deprecated since 0.2 and will be removed "
        "in 0.3: it read a number's entry as the change that costs 1 and a "
        "category's as the price of a change. Use prices=, the price of one "
        "unit of change for every feature (a number's unit, a level, a "
        f"change); the same declarations are prices={{{entries}}}.",
        FutureWarning,
        stacklevel=3,
    )
    return numbers


def _one_over(unit):
    """``1 / unit`` as a reader writes it: ``0.001``, or ``1 / 6``."""
    price = 1.0 / unit
    text = f"{price:g}"
    return text if float(text) == price else f"1 / {unit:g}"


class OneOf:
    """Postcondition: the feature's new value is one of ``labels``."""

    def __init__(self, feature, labels):
        self.feature = feature
        self.labels = list(labels)
        self._index = pd.Index(self.labels, dtype=object)

    def __call__(self, before, after):
        values = np.asarray(after[self.feature], dtype=object)
        return self._index.get_indexer(values) >= 0

    def __repr__(self):
        return f"OneOf({self.feature!r}, {self.labels!r})"


# ---------------------------------------------------------------------- #
# checks
# ---------------------------------------------------------------------- #
def _did_you_mean(value, candidates):
    same = [c for c in candidates if str(c).casefold() == str(value).casefold()]
    close = [str(c) for c in same] or difflib.get_close_matches(
        str(value), [str(c) for c in candidates], n=3, cutoff=0.6
    )
    if not close:
        return "."
    return "; did you mean " + " or ".join(repr(c) for c in close) + "?"


def _check_features(given, names, what):
    for name in given:
        if name not in names:
            raise ValueError(
                f"{what}: {name!r} is not a column of X{_did_you_mean(name, names)} "
                f"The columns are {names}."
            )


def _mapping(value, what, names):
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{what} must be a dict {{feature: ...}}, got {type(value).__name__}."
        )
    _check_features(value, names, what)
    return dict(value)


def _feature_list(value, what, names):
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not is_listlike(value):
        raise TypeError(
            f"{what} must be a list of column names of X"
            + (' (or "all")' if what == "features_to_vary" else "")
            + f", got {type(value).__name__} {value!r:.60}."
        )
    value = list(value)
    _check_features(value, names, what)
    return value


def _check_labels(name, labels, known, what):
    for label in labels:
        if label not in known:
            raise ValueError(
                f"{what}: {label!r} is not a value of {name!r} in X"
                f"{_did_you_mean(label, known)} Its values are {known}."
            )


def _check_declared(declared, varied, immutable):
    """A range, direction, cost or order given for a feature that does not
    change is an error (immutable) or a warning (not in features_to_vary):
    it would be dropped without a word."""
    varied = set(varied)
    for what, mapping in declared.items():
        for name in mapping:
            if name in immutable:
                raise ValueError(
                    f"{what}[{name!r}] is given, but {name!r} is immutable: an "
                    "immutable feature never changes, so it would be ignored. "
                    f"Remove {name!r} from immutable, or the {what} entry."
                )
            if name not in varied:
                warnings.warn(
                    f"{what}[{name!r}] is ignored: {name!r} is not in "
                    "features_to_vary, so no action changes it.",
                    UserWarning,
                    stacklevel=3,
                )


def _whole_range(name, bounds):
    """A range of a whole-number column, rounded inward to whole numbers."""
    low, high = np.ceil(bounds[0]), np.floor(bounds[1])
    if low > high:
        raise ValueError(
            f"permitted_range[{name!r}] = {list(bounds)} holds no whole number, "
            f"and {name!r} holds only whole numbers in X; give a range that "
            "holds one."
        )
    return (float(low), float(high))


def _check_direction(name, direction):
    if direction not in DIRECTIONS:
        raise ValueError(
            f"directions[{name!r}] must be one of {DIRECTIONS}, got {direction!r}."
        )


def _positive(value, what):
    if (
        not isinstance(value, Real)
        or isinstance(value, bool)
        or not np.isfinite(value)
        or not value > 0
    ):
        raise ValueError(
            f"{what} must be a positive number (or a callable cost(before, "
            f"after)), got {value!r}."
        )
    return float(value)


def _numeric_range(name, permitted):
    try:
        low, high = permitted
        low, high = float(low), float(high)
    except (TypeError, ValueError):
        raise ValueError(
            f"permitted_range[{name!r}]: {name!r} is numeric; give [low, high], "
            f"two numbers, got {permitted!r}."
        ) from None
    if not (np.isfinite(low) and np.isfinite(high) and low <= high):
        raise ValueError(
            f"permitted_range[{name!r}] = {permitted!r} needs finite bounds "
            "with low <= high."
        )
    return (low, high)

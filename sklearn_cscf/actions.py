"""Actions: what a person can do, what it costs, and what else it changes.

An :class:`Action` directly sets one feature to a value taken from its
feasible value space, may change other features as a consequence, and may
carry hard constraints. The explainer resolves actions against the columns of
``X`` in ``fit``; the private :class:`CompiledAction` then applies an action
to a whole batch of candidates at once.
"""

import difflib
import warnings
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
import pandas as pd

from sklearn_cscf._pickling import PortableCallables, portable
from sklearn_cscf._spaces import DiscreteSpace, RangeSpace

__all__ = ["Action"]

DIRECTIONS = ("any", "increase", "decrease")
# rows of fit on which each action's cost is tried once (see probe_costs)
PROBE_ROWS = 256


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
        params = {
            key: getattr(self, key)
            for key in (
                "name",
                "feature",
                "values",
                "direction",
                "cost",
                "effects",
                "precondition",
                "postcondition",
                "step",
            )
        }
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
    if _is_listlike(values):
        items = list(values)
        if not items:
            raise ValueError(f"Action {name!r}: the list of values is empty.")
        if len(set(map(_key, items))) != len(items):
            raise ValueError(f"Action {name!r}: the list of values has duplicates.")


def _is_listlike(values):
    return isinstance(values, list | np.ndarray | pd.Index | pd.Series | range)


def _key(value):
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


class CompiledAction(PortableCallables):
    """An action resolved against the columns: applies it to many candidates."""

    def __init__(self, action, schema):
        self.action = action
        self.name = action.name
        self.feature = schema.column(action.feature, what=f"Action {action.name!r}:")
        self.effects = []
        for target, fn in (action.effects or {}).items():
            k = schema.column(target, what=f"Action {action.name!r}: effect on")
            self.effects.append((k, target, fn))
        self.affects = [self.feature, *(k for k, _, _ in self.effects)]
        self.is_categorical = bool(schema.is_categorical[self.feature])
        self.space = self._compile_space(action, schema)
        self.cost = action.cost
        self.precondition = action.precondition
        self.postcondition = action.postcondition
        self.schema = schema
        self.default_scale = self._default_scale()
        # names of the user callables for error messages
        self._what = {
            "pre": f"Action {self.name!r}: precondition",
            "post": f"Action {self.name!r}: postcondition",
            "cost": f"Action {self.name!r}: cost",
            **{t: f"Action {self.name!r}: effect on {t!r}" for _, t, _ in self.effects},
        }

    def __getstate__(self):
        # the action's callables, stored as Action stores them
        state = dict(self.__dict__)
        for key, what in (
            ("cost", "cost"),
            ("precondition", "pre"),
            ("postcondition", "post"),
        ):
            state[key] = portable(state[key], self._what[what])
        state["effects"] = [
            (k, target, portable(fn, self._what[target]))
            for k, target, fn in self.effects
        ]
        return state

    # -- value space -------------------------------------------------- #
    def _compile_space(self, action, schema):
        j = self.feature
        values, direction = action.values, action.direction
        if self.is_categorical:
            if isinstance(values, tuple):
                raise ValueError(
                    f"Action {action.name!r}: feature {action.feature!r} is "
                    "categorical; a (low, high) range needs a numeric feature. "
                    "Give a list of categories instead."
                )
            if action.step is not None:
                raise ValueError(
                    f"Action {action.name!r}: step only applies to numeric features."
                )
            if values is None:
                labels = schema.observed[j]
                if direction != "any" and not schema.ordered[j]:
                    raise ValueError(
                        f"Action {action.name!r}: direction={direction!r} needs "
                        f"ordered categories, but {action.feature!r} is unordered. "
                        "Give values as a list in order, or use an ordered "
                        "pandas Categorical."
                    )
            elif _is_listlike(values):
                labels = list(values)
            else:
                labels = [values]
            _check_known(action, labels, schema.categories[j])
            for label in labels:
                schema.add_category(j, label)
            codes = schema.encode_labels(j, labels, what=f"Action {action.name!r}")
            rank = np.full(len(schema.categories[j]) + 1, -1, dtype=np.intp)
            rank[codes.astype(np.intp)] = np.arange(len(codes))
            return DiscreteSpace(codes, direction, rank)
        # numeric feature
        if values is None:
            step = action.step
            if step is None and schema.is_integer[j]:
                step = 1.0
            return RangeSpace(
                schema.low[j], schema.high[j], direction, step, _support(schema, j)
            )
        if isinstance(values, tuple):
            return RangeSpace(
                values[0], values[1], direction, action.step, _support(schema, j)
            )
        items = list(values) if _is_listlike(values) else [values]
        try:
            numbers = np.array(items, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(
                f"Action {action.name!r}: feature {action.feature!r} is numeric, "
                f"but the values {items!r} are not all numbers."
            ) from None
        with np.errstate(over="ignore"):
            span = np.ptp(numbers) if numbers.size else 0.0
        if not np.all(np.isfinite(numbers)) or not np.isfinite(span):
            raise ValueError(
                f"Action {action.name!r}: values must be finite numbers whose "
                f"spread fits in a float; got {items!r}."
            )
        if action.step is not None:
            raise ValueError(
                f"Action {action.name!r}: step only applies to a (low, high) range "
                "or a learned range."
            )
        return DiscreteSpace(np.sort(numbers), direction)

    def _default_scale(self):
        """``high - low`` of a numeric value space; ``None``: default effort 1."""
        if self.is_categorical:
            return None
        if isinstance(self.space, RangeSpace):
            span = self.space.span
        else:
            span = np.ptp(self.space.values)
        return float(span) if span > 0 else None

    def resolved(self):
        """The action with its value space (and grid) as resolved in ``fit``."""
        if isinstance(self.space, RangeSpace):
            return self.action._replace(
                values=self.space.describe(), step=self.space.step
            )
        j = self.feature
        labels = [self.schema.decode_value(j, v) for v in self.space.values]
        return self.action._replace(values=labels)

    # -- application -------------------------------------------------- #
    def apply(self, before, keys):
        """Apply the action to candidates ``before`` (rows) with value ``keys``.

        Returns the states after the step, the efforts and which steps are valid.
        """
        n = before.shape[0]
        after = np.empty_like(before)
        effort = np.empty(n)
        valid = np.empty(n, dtype=bool)
        self.apply_into(before, keys, after, effort, valid)
        return after, effort, valid

    def apply_into(self, before, keys, after, effort, valid, check_prices=False):
        """:meth:`apply`, writing into the arrays ``after``, ``effort``, ``valid``.

        A step is invalid where its value space is empty, a condition fails,
        or its effort is not a finite number (its effort is then ``inf``).
        ``check_prices``: a cost giving NaN for every valid step of complete
        states raises :class:`NoPriceError`.
        """
        schema = self.schema
        n = before.shape[0]
        j = self.feature
        new_values, valid[:] = self.space.interpolate(keys, before[:, j])
        view_before = schema.view(before)
        if self.precondition is not None:
            what = self._what["pre"]
            valid &= _as_condition(_call(self.precondition, what, view_before), n, what)
        after[:] = before
        after[:, j] = new_values
        # user callables only read ``after``: writable again just for effects
        after.flags.writeable = False
        view_after = schema.view(after)
        for k, target, fn in self.effects:
            what = self._what[target]
            categorical = schema.is_categorical[k]
            out = _as_array(
                _call(fn, what, view_before, view_after),
                n,
                what,
                object if categorical else float,
            )
            if categorical:
                out = schema.encode_labels(k, out, what=what)
            _check_effect(out, categorical, valid, after, schema, what)
            after.flags.writeable = True
            after[:, k] = out
            after.flags.writeable = False
            view_after.forget(target)
        if self.cost is None:
            if self.default_scale is None:
                effort[:] = 1.0
            else:
                np.divide(
                    np.abs(after[:, j] - before[:, j]), self.default_scale, out=effort
                )
        else:
            what = self._what["cost"]
            effort[:] = _as_array(
                _call(self.cost, what, view_before, view_after), n, what, float
            )
        finite = np.isfinite(effort)
        if not finite.all():  # no price, no step: e.g. a missing value
            if self.cost is not None and check_prices:
                _check_cost(effort, valid, after, schema, self._what["cost"])
            valid &= finite
            effort[~finite] = np.inf
        if n and not effort.min() >= 0:
            raise ValueError(
                f"Action {self.name!r}: cost must return non-negative numbers, "
                f"got {effort[effort < 0][:3].tolist()}."
            )
        if self.postcondition is not None:
            what = self._what["post"]
            valid &= _as_condition(
                _call(self.postcondition, what, view_before, view_after), n, what
            )


def _support(schema, j):
    """The training values of feature ``j`` (None for a schema without them)."""
    support = getattr(schema, "support", None)
    return None if support is None else support[j]


class NoPriceError(ValueError):
    """A cost gave no step a price."""


def probe_costs(actions, schema, X):
    """Try each action with a cost on up to ``PROBE_ROWS`` rows of ``X`` (the
    rows of ``fit``) with random values: a cost that prices no valid step of
    a row with every value (a forgotten ``return``, NaN for all) is an error
    now rather than every row ``"no_counterfactual"`` later. A callable that
    raises here is left to ``explain``, which reports it per row."""
    n = X.shape[0]
    pick = np.sort(np.random.default_rng(0).permutation(n)[:PROBE_ROWS])
    rows = schema.encode(X.iloc[pick] if isinstance(X, pd.DataFrame) else X[pick])
    rows = rows[_complete(rows, schema)]
    if not rows.shape[0]:
        return
    keys = np.random.default_rng(1).random(rows.shape[0])
    for action in actions:
        if action.cost is None:
            continue
        after, effort = np.empty_like(rows), np.empty(rows.shape[0])
        valid = np.empty(rows.shape[0], dtype=bool)
        try:
            action.apply_into(rows, keys, after, effort, valid, check_prices=True)
        except NoPriceError:
            raise
        except Exception:
            continue


def _complete(states, schema):
    """Which states have no missing value (NaN, or category code -1)."""
    missing = np.isnan(states).any(axis=1)
    if schema.is_categorical.any():
        missing |= (states[:, schema.is_categorical] < 0).any(axis=1)
    return ~missing


def _check_effect(out, categorical, valid, after, schema, what):
    """An effect gives a value to every valid step of a state that has all
    its values: NaN or a missing label there is a bug (a forgotten
    ``return``, a wrong formula); infinity always is."""
    if not categorical and np.isinf(out).any():
        raise ValueError(
            f"{what} returned infinite values, e.g. "
            f"{out[np.isinf(out)][:3].tolist()}; it must return finite numbers."
        )
    missing = out < 0 if categorical else np.isnan(out)
    if not missing.any():
        return
    bad = missing & valid & _complete(after, schema)
    if bad.any():
        raise ValueError(
            f"{what} returned a missing value (NaN or None) for a state that "
            "has every value; it must return the new value of the feature (is "
            "a `return` missing?)."
        )


def _check_cost(effort, valid, after, schema, what):
    """NaN marks a step without a price (e.g. from a missing value). On the
    rows of ``fit`` (see :func:`probe_costs`), NaN for every valid step of
    states that have all their values is a bug (a forgotten ``return`` in a
    branch, a wrong formula)."""
    nan = np.isnan(effort)
    if not nan.any():
        return
    rows = valid & _complete(after, schema)
    if rows.any() and nan[rows].all():
        raise NoPriceError(
            f"{what} returned NaN for every candidate (every valid step, on "
            "states with every value); it must return a number per candidate "
            "(is a `return` missing?)."
        )


def _check_known(action, labels, categories):
    """A category an action sets that ``fit`` did not see and that looks like
    a typo of one it did (close by ``difflib``, the same but for case, or the
    same text of another type: ``"1"`` for ``1``) is an error: every plan
    through it would fail without a word. Other new categories are added
    (a category a small sample lacks, e.g. ``"Armed-Forces"``), with a
    warning: the data of ``fit`` never hold them."""
    known = pd.Index(categories, dtype=object)
    text = [str(c) for c in categories]
    for label in labels:
        if _is_missing_label(label) or label in known:
            continue
        close = difflib.get_close_matches(str(label), text, n=3, cutoff=0.6)
        close += [t for t in text if t.lower() == str(label).lower() and t not in close]
        if close:
            raise ValueError(
                f"Action {action.name!r}: {label!r} is not a category of feature "
                f"{action.feature!r} seen in fit; close matches: "
                f"{[categories[text.index(t)] for t in close]}. The known "
                f"categories are {list(categories)}. To introduce a new category "
                "on purpose, make the column a pandas Categorical whose "
                "categories include it."
            )
        warnings.warn(
            f"Action {action.name!r}: {label!r} is not a category of feature "
            f"{action.feature!r} seen in fit (known: {list(categories)}). It is "
            "added, but the data of fit never hold it: a plan through it means "
            "something only if the model knows it. To introduce it on purpose, "
            "make the column a pandas Categorical whose categories include it.",
            UserWarning,
            stacklevel=2,
        )


def _is_missing_label(label):
    return label is None or (isinstance(label, float) and np.isnan(label))


def _call(fn, what, *args):
    """Call a user callable; an exception it raises is marked with its name."""
    try:
        return fn(*args)
    except Exception as exc:
        blame(exc, what)
        raise


def blame(exc, what):
    """Mark ``exc`` as raised by ``what`` (the first mark wins)."""
    if getattr(exc, "sklearn_cscf_culprit", None) is not None:
        return
    try:
        exc.sklearn_cscf_culprit = what
    except AttributeError:  # pragma: no cover - exceptions without a __dict__
        return
    if hasattr(exc, "add_note"):  # Python 3.11+
        exc.add_note(f"Raised by {what}.")


def describe_error(exc):
    """``"<culprit>: <Type>: <message>"``: what failed, for a status message."""
    culprit = getattr(exc, "sklearn_cscf_culprit", None)
    text = f"{type(exc).__name__}: {exc}"
    return f"{culprit} raised {text}" if culprit else text


def _as_condition(result, n, what):
    """A condition's result: booleans, or the numbers 0 and 1 (nothing else)."""
    array = _as_array(result, n, what, None)
    kind = array.dtype.kind
    if kind == "b":
        return array
    if kind in "iuf":
        good = (array == 0) | (array == 1)
    elif kind == "O":
        good = np.array(
            [
                isinstance(v, bool | np.bool_)
                or (isinstance(v, Integral | np.floating) and v in (0, 1))
                for v in array
            ],
            dtype=bool,
        )
    else:
        good = np.zeros(array.shape, dtype=bool)
    if not good.all():
        raise TypeError(
            f"{what} must return booleans (True/False, or 1/0), one per "
            f"candidate; got {array.dtype} values such as "
            f"{array[~good][:3].tolist()}."
        )
    return array.astype(bool)


def _as_array(result, n, what, dtype):
    """Check a user callable returned one value per candidate (or a scalar);
    ``dtype=None`` keeps the values' own dtype. ``None`` (a forgotten
    ``return``), masked values and, for numbers (``dtype=float``), text,
    dates or complex numbers are refused, naming ``what``."""
    if type(result) is np.ndarray and result.shape == (n,) and result.dtype == dtype:
        return result
    if result is None:
        raise TypeError(
            f"{what} returned None; it must return one value per candidate "
            "(is a `return` missing?)."
        )
    if isinstance(result, np.ma.MaskedArray):
        masked = np.ma.getmaskarray(result)
        if masked.any():
            raise TypeError(
                f"{what} returned a masked array with {int(masked.sum())} masked "
                f"value(s) of {masked.size}; return plain values (e.g. "
                "result.filled(...) with the value you mean)."
            )
        result = result.data
    if isinstance(result, pd.Series | pd.Index):
        result = result.to_numpy()
    try:
        raw = np.asarray(result)
    except (TypeError, ValueError) as exc:  # pragma: no cover - ragged input
        raise TypeError(
            f"{what} must return one value per candidate; got "
            f"{type(result).__name__} ({exc})."
        ) from None
    if dtype is float:
        _check_numbers(raw, what)
    try:
        array = raw if dtype is None else raw.astype(dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{what} must return {np.dtype(dtype).name} values, one per "
            f"candidate; got {type(result).__name__} ({exc})."
        ) from None
    if array.ndim == 0:
        return np.full(n, array.item(), dtype=dtype or array.dtype)
    if array.shape != (n,):
        raise ValueError(
            f"{what} must return a 1-D array with one value per candidate "
            f"(shape ({n},)), got shape {array.shape}."
        )
    return array


def _check_numbers(raw, what):
    """Numbers only: no text, dates, complex numbers or None among them."""
    kind = raw.dtype.kind
    if kind in "biuf":
        return
    if kind == "O":
        bad = [
            v
            for v in raw.ravel().tolist()
            if not isinstance(v, Real | np.integer | np.floating)
        ]
        if not bad:
            return
        example = bad[0]
        raise TypeError(
            f"{what} must return numbers, one per candidate; got "
            f"{type(example).__name__} {example!r}"
            + (" (is a `return` missing in a branch?)." if example is None else ".")
        )
    raise TypeError(
        f"{what} must return numbers, one per candidate; got {raw.dtype} values "
        f"such as {raw.ravel()[:3].tolist()}."
    )

"""Actions resolved against the columns of ``fit``: :class:`CompiledAction`
applies an :class:`~sklearn_cscf.actions.Action` to a whole batch of
candidates at once, and :func:`probe_costs` tries each cost once in ``fit``."""

import difflib
import warnings

import numpy as np
import pandas as pd

from sklearn_cscf._callable_checks import as_array, as_condition, call
from sklearn_cscf._pickling import PortableCallables, portable
from sklearn_cscf._schema import is_missing
from sklearn_cscf._spaces import DiscreteSpace, RangeSpace
from sklearn_cscf._validation import is_listlike

# rows of fit on which each action's cost is tried once (see probe_costs)
PROBE_ROWS = 256


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
            elif is_listlike(values):
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
        if values is None or isinstance(values, tuple):
            low, high = (schema.low[j], schema.high[j]) if values is None else values
            step = action.step
            if step is None and values is None and schema.is_integer[j]:
                step = 1.0  # a learned range of whole numbers
            return RangeSpace(low, high, direction, step, _support(schema, j))
        items = list(values) if is_listlike(values) else [values]
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
    def apply(self, before, keys, check_prices=False):
        """Apply the action to candidates ``before`` (rows) with value ``keys``.

        Returns the states after the step, the efforts and which steps are
        valid (see :meth:`apply_into`).
        """
        n = before.shape[0]
        after, effort, valid = np.empty_like(before), np.empty(n), np.empty(n, bool)
        self.apply_into(before, keys, after, effort, valid, check_prices)
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
            valid &= as_condition(call(self.precondition, what, view_before), n, what)
        after[:] = before
        after[:, j] = new_values
        # user callables only read ``after``: writable again just for effects
        after.flags.writeable = False
        view_after = schema.view(after)
        for k, target, fn in self.effects:
            what = self._what[target]
            categorical = schema.is_categorical[k]
            dtype = object if categorical else float
            out = as_array(call(fn, what, view_before, view_after), n, what, dtype)
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
            effort[:] = as_array(
                call(self.cost, what, view_before, view_after), n, what, float
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
            valid &= as_condition(
                call(self.postcondition, what, view_before, view_after), n, what
            )


def _support(schema, j):
    """The training values of feature ``j`` (None for a schema without them)."""
    support = getattr(schema, "support", None)
    return None if support is None else support[j]


class NoPriceError(ValueError):
    """A cost gave no step a price."""


def probe_costs(actions, schema, rows):
    """Try each action with a cost on up to ``PROBE_ROWS`` of the encoded
    ``rows`` (a sample of the rows of ``fit``) with random values: a cost
    that prices no valid step of a row with every value (a forgotten
    ``return``, NaN for all) is an error now rather than every row
    ``"no_counterfactual"`` later. A callable that raises here is left to
    ``explain``, which reports it per row."""
    rows = rows[:PROBE_ROWS]
    rows = rows[_complete(rows, schema)]
    if not rows.shape[0]:
        return
    keys = np.random.default_rng(1).random(rows.shape[0])
    for action in actions:
        if action.cost is None:
            continue
        try:
            action.apply(rows, keys, check_prices=True)
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
        if is_missing(label) or label in known:
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

"""Calls of user callables (an action's cost, effects and conditions, an
edge's tau) and the checks of what they return: an exception is marked with
the callable's name (:func:`blame`, :func:`describe_error`), and a result
must hold one value per candidate."""

from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
import pandas as pd

# what numpy and pandas say when a callable treats a column as one value
_SCALAR_ERRORS = (
    "truth value of an array",
    "truth value of a series",
    "can be converted to python scalars",
    "cannot convert the series to",
)


def call(fn, what, *args):
    """Call a user callable; an exception it raises is marked with its name.

    A callable written for one value at a time (``if a["x"] < 5``,
    ``float(a["x"])``) fails on the whole columns it is given: the error then
    says so, with an ``np.where`` example (the callable's own exception is
    the cause)."""
    try:
        return fn(*args)
    except Exception as exc:
        if isinstance(exc, ValueError | TypeError) and any(
            text in str(exc).lower() for text in _SCALAR_ERRORS
        ):
            hinted = type(exc)(f"{exc}. {columns_hint(what, args)}")
            blame(hinted, what)
            raise hinted from exc
        blame(exc, what)
        raise


def columns_hint(what, args):
    """Callables receive whole columns: how to write one that branches."""
    names = [n for arg in args[-1:] if isinstance(arg, Mapping) for n in arg]
    column = names[0] if names and isinstance(names[0], str) else "feature"
    if len(args) == 1:  # an edge's tau(state)
        example = f"tau=lambda s: np.where(s[{column!r}] < 500, 0.5, 1.0)"
    else:
        example = f"cost=lambda b, a: np.where(a[{column!r}] < 500, 1.0, 2.0)"
    return (
        f"{what} receives whole columns: each argument maps a column name to "
        "a 1-D array with one value per candidate, and it must return one "
        "value per candidate. Write conditions element-wise with NumPy "
        f"instead of `if`, `and`, `or` or float(), e.g. {example}"
    )


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


def as_condition(result, n, what):
    """A condition's result: booleans, or the numbers 0 and 1 (nothing else)."""
    array = as_array(result, n, what, None)
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


def as_array(result, n, what, dtype):
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
        check_numbers(raw, what)
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
            f"(shape ({n},)), got shape {array.shape}. It receives whole "
            "columns (1-D arrays, one value per candidate); compute the "
            "result element-wise, e.g. np.where(a[name] < 500, 1.0, 2.0)."
        )
    return array


def check_numbers(raw, what):
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


def check_tau(values, n, source, target):
    values = as_array(values, n, f"tau of edge {source!r} -> {target!r}", float)
    bad = ~((values >= -1e-12) & (values <= 1 + 1e-12))
    if bad.any():
        raise ValueError(
            f"tau of edge {source!r} -> {target!r} must return values in [0, 1], "
            f"got {values[bad][:3].tolist()}."
        )
    return values

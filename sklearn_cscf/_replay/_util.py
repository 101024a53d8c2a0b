"""Small helpers of replay: missing values, callables' single answers, and
numbers in messages."""

from numbers import Real

import numpy as np
import pandas as pd


def is_missing(value):
    if value is None or value is pd.NA:
        return True
    if isinstance(value, Real) and not isinstance(value, bool | np.bool_):
        return bool(np.isnan(value))
    return False


def one_value(value):
    """The single value a user callable returned for one state."""
    if isinstance(value, pd.Series | pd.Index):
        value = value.to_numpy()
    array = np.asarray(value)
    element = array.item() if array.ndim == 0 else array.reshape(-1)[0]
    return element.item() if isinstance(element, np.generic) else element


def plain_value(value):
    """A NumPy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def as_float(value):
    return np.nan if is_missing(value) else float(value)


def show_value(value):
    return f"{value:.10g}"

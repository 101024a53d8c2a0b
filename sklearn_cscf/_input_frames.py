"""DataFrames beyond pandas, converted at the edge.

The library works on pandas inside. A polars ``X`` is converted to pandas
where it comes in (``fit``, ``explain``, ``transform``, ``replay``,
:func:`~sklearn_cscf.make_actions`), and the model is handed the kind of
frame it was fitted with: an explainer fitted on a polars frame hands its
model polars frames (with the same columns and dtypes), one fitted on pandas
hands it pandas. This follows scikit-learn, where an estimator takes the
kind of frame it was fitted on (a pipeline fitted on polars expects polars).
A pyarrow ``Table`` (or ``RecordBatch``) is converted the same way, its
column names kept, and the model is handed pandas frames.

polars and pyarrow are optional: neither is imported unless one of its
objects is passed.
"""

import numpy as np
import pandas as pd

__all__ = ["frame_library", "to_model_frame", "to_pandas"]


def _polars_kind(obj):
    """``"DataFrame"``, ``"LazyFrame"`` or ``"Series"`` for a polars object."""
    module = type(obj).__module__ or ""
    if module == "polars" or module.startswith("polars."):
        return type(obj).__name__
    return None


def _arrow_kind(obj):
    """``"Table"`` or ``"RecordBatch"`` for a pyarrow table (``None``
    otherwise; pyarrow is not imported)."""
    module = type(obj).__module__ or ""
    if module == "pyarrow" or module.startswith("pyarrow."):
        if type(obj).__name__ in ("Table", "RecordBatch"):
            return type(obj).__name__
    return None


def frame_library(X):
    """``"polars"`` for a polars DataFrame, ``"pandas"`` for a pandas one (or
    a pyarrow table, which the model is handed as pandas), ``None`` for
    anything else."""
    if isinstance(X, pd.DataFrame) or _arrow_kind(X) is not None:
        return "pandas"
    if _polars_kind(X) == "DataFrame":
        return "polars"
    return None


def to_pandas(X, *, name="X"):
    """``X`` as pandas when it is a polars DataFrame or a pyarrow ``Table``
    (or ``RecordBatch``); anything else as it is.

    A polars ``LazyFrame`` or ``Series`` is refused with the fix. Text
    columns come back as pandas' default string dtype, polars
    ``Categorical`` as ``category`` (labels sorted) and ``Enum`` as an
    ordered ``category`` (labels in the Enum's order). A pyarrow table keeps
    its column names (pyarrow's own ``to_pandas``).
    """
    if _arrow_kind(X) is not None:
        return X.to_pandas()
    kind = _polars_kind(X)
    if kind is None:
        return X
    if kind == "LazyFrame":
        raise TypeError(
            f"{name} is a polars LazyFrame; collect it first: {name}.collect()."
        )
    if kind == "Series":
        raise ValueError(
            f"{name} is a polars Series; pass a DataFrame (e.g. "
            f"{name}.to_frame() for one column)."
        )
    if kind != "DataFrame" or not hasattr(X, "to_pandas"):
        raise TypeError(f"{name} is a polars {kind}; pass a polars DataFrame.")
    frame = X.to_pandas()
    for name in frame.columns:
        dtype = frame[name].dtype
        if isinstance(dtype, pd.CategoricalDtype) and not dtype.ordered:
            # polars keeps no order of a Categorical's labels: sort them, as
            # pandas does for a category column made from labels
            try:
                labels = sorted(dtype.categories)
            except TypeError:
                continue
            frame[name] = frame[name].cat.reorder_categories(labels)
    return frame


def to_model_frame(frame, library):
    """A pandas ``frame`` as the kind of frame the model was fitted on."""
    if library == "polars" and isinstance(frame, pd.DataFrame):
        import polars as pl

        return pl.from_pandas(frame, include_index=False)
    return frame


def restore_numbers(column, dtype):
    """Float ``column`` back in the numeric ``dtype`` of its column in ``X``:
    an integer dtype where every value is whole; a pandas nullable dtype
    (``Int64``, ``Float64``) keeps its kind, with ``<NA>`` for a missing value
    (``Float64`` where an ``Int64`` column got a fraction)."""
    if dtype is None or column.dtype.kind != "f":
        return column
    known = column[~np.isnan(column)]
    whole = bool(np.all(known == np.round(known)))
    if isinstance(dtype, pd.api.extensions.ExtensionDtype):
        if dtype.kind in "iu" and whole:
            return pd.array(column, dtype="Float64").astype(dtype)
        if dtype.kind in "iuf":
            return pd.array(column, dtype=dtype if dtype.kind == "f" else "Float64")
        return column
    if dtype.kind in "iu" and whole and np.all(np.isfinite(column)):
        return column.astype(dtype)
    return column

"""Checks of what users give: the rows given to the explainer and to replay,
and list-like values, in one place."""

import numpy as np
import pandas as pd
import scipy.sparse as sp


def check_X(X):
    """``X`` as a DataFrame (as it is) or a 2-D array, or a clear error.

    Refused: MultiIndex columns, sparse matrices, a Series (one row or one
    column, it is ambiguous) and anything that is not 2-dimensional.
    """
    if isinstance(X, pd.DataFrame):
        if isinstance(X.columns, pd.MultiIndex):
            raise ValueError(
                "X has MultiIndex columns; give it one level of column names, "
                "e.g. X.columns = ['_'.join(map(str, c)) for c in X.columns]."
            )
        return X
    if sp.issparse(X):
        raise TypeError(
            "Sparse data is not supported: pass a dense array or a DataFrame "
            "holding the raw features the classifier takes."
        )
    if isinstance(X, pd.Series):
        raise ValueError(
            "X is a Series; pass a DataFrame (e.g. series.to_frame().T for one row)."
        )
    array = np.asarray(X)
    if array.ndim != 2:
        raise ValueError(
            f"Expected a 2-dimensional X (n_samples, n_features), got shape "
            f"{array.shape}. Reshape your data, e.g. X.reshape(1, -1) for a "
            "single row."
        )
    return array


def check_like_fit(X, schema):
    """Rows are matched to the features of ``fit`` by name, never silently by
    position; each row needs its own label."""
    if isinstance(X, pd.DataFrame):
        if not schema.is_frame:
            raise TypeError(
                "The explainer was fitted on an array, so its features have no "
                "names; pass an array (e.g. X.to_numpy()) with the columns in the "
                "order of fit."
            )
        if list(X.columns) != schema.names:
            raise ValueError(
                f"X has the columns {list(X.columns)}; the explainer was fitted "
                f"on {schema.names} (same names, same order)."
            )
        if isinstance(X.index, pd.MultiIndex):
            raise ValueError(
                f"X has a MultiIndex of {X.index.nlevels} levels as row labels; "
                "the output names each row by one label, which files (CSV, "
                "parquet) keep: give X one level, e.g. X.reset_index() or "
                "X.set_axis(['/'.join(map(str, k)) for k in X.index])."
            )
        if X.index.hasnans:
            where = np.flatnonzero(pd.isna(X.index))
            raise ValueError(
                f"X has a missing index label (NaN or None) at row position "
                f"{int(where[0])}"
                + (f" and {where.size - 1} more" if where.size > 1 else "")
                + "; the output names each row by its label, so each row needs "
                "a label of its own (e.g. X.reset_index(drop=True), or fill "
                "them: X.rename(index=...))."
            )
        duplicated = X.index[X.index.duplicated()]
        if len(duplicated):
            raise ValueError(
                f"X has duplicate index labels {duplicated.unique()[:5].tolist()}; "
                "the output names each row by its label, so each row needs its "
                "own (e.g. X.reset_index(drop=True))."
            )
    elif schema.is_frame:
        raise TypeError(
            f"The explainer was fitted on a DataFrame with the columns "
            f"{schema.names}; pass a DataFrame with these columns, not "
            f"{type(X).__name__} matched by position."
        )


def check_finite(encoded, schema):
    """No infinite number. A missing number goes to the model as it is: a
    model that cannot take it fails for that row alone, which is then
    reported with status ``"error"`` (the tags of a pipeline that imputes
    often claim it cannot take NaN, so they are not trusted to refuse)."""
    bad = np.isinf(encoded) & ~schema.is_categorical
    if bad.any():
        column = schema.names[int(np.flatnonzero(bad.any(axis=0))[0])]
        raise ValueError(f"Input X contains infinite values in column {column!r}.")


def check_has_features(X):
    """Refuse an ``X`` without columns (scikit-learn's words, and why)."""
    if X.shape[1] == 0:
        raise ValueError(
            f"0 feature(s) (shape={X.shape}) while a minimum of 1 is "
            "required: X has no columns, so there is no feature to act on."
        )


def is_listlike(values):
    """Whether a user's ``values`` is a list of values (not a scalar, a
    ``(low, high)`` tuple or text)."""
    return isinstance(values, list | np.ndarray | pd.Index | pd.Series | range)

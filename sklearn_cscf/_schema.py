"""What the explainer learns about the columns of ``X`` in ``fit``.

The search works on one float matrix per population (rows = individuals,
columns = features). Numeric features hold their values (``NaN`` when missing);
categorical features hold the code of their category (``-1`` when missing). This
module converts between that encoding and the raw values users and the model
see: the rows handed to the classifier and the mappings given to user
callables.
"""

from collections.abc import Mapping
from decimal import Decimal
from numbers import Real

import numpy as np
import pandas as pd

from sklearn_cscf._input_frames import restore_numbers, to_model_frame


def _is_numeric_column(values):
    """Whether a column (numpy or pandas) holds numbers (bool is categorical)."""
    dtype = getattr(values, "dtype", None)
    if isinstance(dtype, pd.CategoricalDtype):
        return False
    if dtype is not None and dtype.kind != "O":
        return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(
            dtype
        )
    # object column: numeric only when every non-missing entry is a real number
    non_missing = [v for v in values if not is_missing(v)]
    return bool(non_missing) and all(
        isinstance(v, Real) and not isinstance(v, bool | np.bool_) for v in non_missing
    )


# float64 holds every integer up to this size exactly, and no larger one
MAX_EXACT_INTEGER = 2**53


def _check_integers(values, name):
    """Integers the float encoding would round are refused."""
    dtype = getattr(values, "dtype", None)
    if dtype is not None and dtype.kind in "iu":
        array = np.asarray(values)
        too_big = (array > MAX_EXACT_INTEGER) | (array < -MAX_EXACT_INTEGER)
    elif dtype is None or dtype.kind == "O":
        too_big = np.array(
            [
                isinstance(v, int | np.integer) and abs(int(v)) > MAX_EXACT_INTEGER
                for v in values
            ],
            dtype=bool,
        )
    else:
        return
    if too_big.any():
        example = np.asarray(values, dtype=object)[too_big][0]
        raise ValueError(
            f"Column {name!r} holds integers beyond 2**53 (e.g. {example}) that "
            "the explainer's float encoding would round, and the model would see "
            "the rounded value. Drop the column, or encode it (e.g. as text "
            "labels or scaled numbers)."
        )


def _kind(values):
    """What a column holds, in a word, for messages."""
    dtype = getattr(values, "dtype", None)
    if isinstance(dtype, pd.CategoricalDtype):
        return "categorical"
    if dtype is not None and dtype.kind != "O":
        return str(dtype)
    for value in np.asarray(values, dtype=object):
        if not is_missing(value) and (
            not isinstance(value, Real) or isinstance(value, bool | np.bool_)
        ):
            return type(value).__name__
    return "non-numeric"


def _reject_unsupported(values, name):
    """Refuse a column of complex numbers, of intervals, or of lists (or
    other containers) in its cells, naming it and saying what to give instead."""
    dtype = getattr(values, "dtype", None)
    if dtype is not None and dtype.kind == "c":
        raise ValueError(f"Complex data not supported: column {name!r} is complex.")
    if isinstance(dtype, pd.IntervalDtype):
        raise ValueError(
            f"Column {name!r} holds intervals (pandas Interval); the explainer "
            "takes numbers or category labels. Give a number per row (e.g. "
            f"X[{name!r}] = X[{name!r}].array.mid, the midpoint) or a label "
            f"(X[{name!r}] = X[{name!r}].astype(str))."
        )
    if dtype is not None and dtype.kind != "O":
        return
    for value in np.asarray(values, dtype=object):
        if isinstance(value, Decimal):
            raise TypeError(
                f"Column {name!r} holds decimal.Decimal values ({value!r}); the "
                "explainer takes numbers as int or float (a Decimal would be "
                "read as a category label, not a number). Convert the column, "
                f"e.g. X[{name!r}] = X[{name!r}].astype(float), and fit the "
                "model on the same."
            )
        if isinstance(value, pd.Interval):
            raise ValueError(
                f"Column {name!r} holds intervals ({value!r}); the explainer "
                "takes numbers or category labels: give a number (e.g. the "
                "midpoint) or a label (the interval as text) per row."
            )
        if isinstance(value, list | tuple | set | frozenset | dict | np.ndarray):
            raise ValueError(
                f"Column {name!r} holds a {type(value).__name__} in a cell "
                f"({value!r:.60}); the explainer takes one number or one label "
                "per cell. Split it into columns, or join it into a text label "
                f"(e.g. X[{name!r}].map(str))."
            )


def is_missing(value):
    """Whether a raw value is missing (``None`` or a float NaN)."""
    return value is None or (isinstance(value, float) and np.isnan(value))


def _sorted_labels(labels):
    """Sort labels; labels of mixed types are sorted by their string form."""
    try:
        return sorted(labels)
    except TypeError:
        return sorted(labels, key=str)


# distinct training values kept per numeric feature
MAX_SUPPORT = 256


def _support(finite):
    """At most :data:`MAX_SUPPORT` distinct values of ``finite``, sorted: all
    of them, or as many spread evenly over their ranks."""
    distinct = np.unique(finite)
    if distinct.size > MAX_SUPPORT:
        ranks = np.round(np.linspace(0, distinct.size - 1, MAX_SUPPORT))
        distinct = distinct[ranks.astype(np.intp)]
    return distinct


class FeatureSchema:
    """Column kinds, ranges and categories learned from the training data.

    Parameters
    ----------
    X : DataFrame or ndarray of shape (n_samples, n_features)
        The data given to ``fit``.
    """

    def __init__(self, X):
        self.is_frame = isinstance(X, pd.DataFrame)
        if self.is_frame:
            self.names = list(X.columns)
            repeated = X.columns[X.columns.duplicated()].unique().tolist()
            if repeated:
                raise ValueError(
                    f"X has duplicate column names {repeated[:5]}; each feature "
                    "needs its own name (rename or drop the repeated columns, "
                    "e.g. X.loc[:, ~X.columns.duplicated()])."
                )
            columns = [X.iloc[:, j] for j in range(len(self.names))]
        else:
            X = np.asarray(X)
            self.names = list(range(X.shape[1]))
            columns = [X[:, j] for j in range(X.shape[1])]
        self.array_dtype = None if self.is_frame else np.asarray(X).dtype
        n_features = len(self.names)
        self.index = {name: j for j, name in enumerate(self.names)}
        self.is_categorical = np.zeros(n_features, dtype=bool)
        self.low = np.full(n_features, np.nan)
        self.high = np.full(n_features, np.nan)
        self.is_integer = np.zeros(n_features, dtype=bool)
        self.categories = [None] * n_features
        self.observed = [None] * n_features
        # numeric features: distinct training values (at most MAX_SUPPORT,
        # spread over their quantiles), where a tree's splits lie; refinement
        # tries them as values of a step
        self.support = [None] * n_features
        self.ordered = np.zeros(n_features, dtype=bool)
        self.dtypes = [getattr(col, "dtype", None) for col in columns]
        for j, col in enumerate(columns):
            _reject_unsupported(col, self.names[j])
            if _is_numeric_column(col):
                _check_integers(col, self.names[j])
                values = np.asarray(col, dtype=float)
                finite = values[np.isfinite(values)]
                if finite.size == 0:
                    raise ValueError(
                        f"Column {self.names[j]!r} has no finite value to learn a "
                        "range from."
                    )
                self.low[j], self.high[j] = finite.min(), finite.max()
                with np.errstate(over="ignore"):
                    span = self.high[j] - self.low[j]
                if not np.isfinite(span):
                    raise ValueError(
                        f"Column {self.names[j]!r} spans [{self.low[j]:g}, "
                        f"{self.high[j]:g}], a range wider than the largest float: "
                        "its Gower scale and default costs would be infinite. "
                        "Rescale the column (e.g. to other units)."
                    )
                self.is_integer[j] = bool(np.all(finite == np.round(finite)))
                self.support[j] = _support(finite)
            else:
                self._learn_categories(j, col)
        self._lookup = [None] * n_features
        self._labels = [None] * n_features
        self._str_labels = [None] * n_features
        self._typed_labels = [None] * n_features
        self._refresh_lookups()

    def _learn_categories(self, j, col):
        self.is_categorical[j] = True
        dtype = getattr(col, "dtype", None)
        observed = [
            v
            for v in pd.unique(np.asarray(col, dtype=object))
            if not is_missing(v) and v is not pd.NA
        ]
        if isinstance(dtype, pd.CategoricalDtype):
            cats = list(dtype.categories)
            self.ordered[j] = bool(dtype.ordered)
            seen = set(observed)
            self.observed[j] = [c for c in cats if c in seen]
        else:
            cats = _sorted_labels(observed)
            self.observed[j] = list(cats)
        if not cats:
            raise ValueError(f"Column {self.names[j]!r} has no category.")
        self.categories[j] = list(cats)

    def _refresh_lookups(self):
        for j in np.flatnonzero(self.is_categorical):
            cats = self.categories[j]
            self._lookup[j] = pd.Index(cats, dtype=object)
            # code -1 (a missing value) picks the last slot
            self._labels[j] = np.array([*cats, np.nan], dtype=object)
            # string categories decode to a fixed-width str array, whose
            # comparisons (x["job"] == "clerk") are several times faster
            self._str_labels[j] = (
                np.array(cats, dtype=str) if all(type(c) is str for c in cats) else None
            )
            self._typed_labels[j] = None  # built on first use

    # ------------------------------------------------------------------ #
    @property
    def n_features(self):
        return len(self.names)

    @property
    def span(self):
        """Numeric range of each feature (``high - low``); NaN for categories."""
        return self.high - self.low

    def column(self, name, *, what="feature"):
        """Index of column ``name``, or a ``ValueError`` naming it."""
        try:
            return self.index[name]
        except (KeyError, TypeError):
            raise ValueError(
                f"{what} {name!r} is not a column of X; the columns are {self.names}."
            ) from None

    def add_category(self, j, label):
        """Append a category an action introduces (e.g. an unobserved target)."""
        if label not in self._lookup[j] and not is_missing(label):
            self.categories[j].append(label)
            self._refresh_lookups()

    def unseen_categories(self, X):
        """``{j: labels}`` of the categories in ``X`` not known from ``fit``."""
        unseen = {}
        for j in np.flatnonzero(self.is_categorical):
            column = X.iloc[:, j] if isinstance(X, pd.DataFrame) else X[:, j]
            labels = pd.unique(np.asarray(column, dtype=object))
            labels = [v for v in labels if not is_missing(v) and v is not pd.NA]
            if labels:
                known = self._lookup[j].get_indexer(np.asarray(labels, dtype=object))
                new = [v for v, code in zip(labels, known) if code < 0]
                if new:
                    unseen[int(j)] = new
        return unseen

    def encode_labels(self, j, labels, *, what):
        """Codes (float; -1 for a missing value) of labels of categorical ``j``."""
        labels = np.asarray(labels, dtype=object).ravel()
        # an object Index: pandas would otherwise infer (and convert to) a
        # string dtype on every call, the most of its cost
        codes = self._lookup[j].get_indexer(pd.Index(labels, dtype=object))
        unknown = codes < 0
        if unknown.any():
            unknown &= ~pd.isna(labels)  # a missing label has code -1
            if unknown.any():
                raise ValueError(
                    f"{what}: {labels[unknown][0]!r} is not a known category of "
                    f"feature {self.names[j]!r}; known categories are "
                    f"{self.categories[j]}."
                )
        return codes.astype(float)

    def decode_column(self, j, column):
        """Raw values of feature ``j`` from its encoded column."""
        if not self.is_categorical[j]:
            return column
        codes = column.astype(np.intp)
        labels = self._str_labels[j]
        if labels is not None and (codes.size == 0 or codes.min() >= 0):
            return labels[codes]
        return self._labels[j][codes]

    def decode_value(self, j, value):
        """One raw value (a number or a category label)."""
        if not self.is_categorical[j]:
            value = float(value)
            # whole numbers of an integer column read as integers (age 41)
            if self.is_integer[j] and value.is_integer():
                return int(value)
            return value
        if value < 0:
            return np.nan
        return self.categories[j][int(value)]

    def missing_states(self, n):
        """``n`` rows of missing values (NaN; code -1 for categories)."""
        states = np.full((n, self.n_features), np.nan)
        states[:, self.is_categorical] = -1.0
        return states

    # ------------------------------------------------------------------ #
    def encode(self, X):
        """Encode rows of ``X`` (same columns as in ``fit``) as a float matrix."""
        if isinstance(X, pd.DataFrame):
            columns = [X.iloc[:, j] for j in range(X.shape[1])]
        else:
            X = np.asarray(X)
            columns = [X[:, j] for j in range(X.shape[1])]
        encoded = np.empty((len(columns[0]) if columns else 0, self.n_features))
        for j, col in enumerate(columns):
            _reject_unsupported(col, self.names[j])
            if self.is_categorical[j]:
                encoded[:, j] = self.encode_labels(
                    j, np.asarray(col, dtype=object), what="X"
                )
            else:
                encoded[:, j] = self._numbers(j, col)
        return encoded

    def _numbers(self, j, col):
        """A column numeric in ``fit`` as floats; anything else is refused."""
        name = self.names[j]
        if (
            not _is_numeric_column(col)
            and len(col)
            and not pd.isna(np.asarray(col, object)).all()
        ):
            raise TypeError(
                f"Column {name!r} was numeric in fit but holds {_kind(col)} values "
                "in X; pass numbers (as in fit)."
            )
        _check_integers(col, name)
        return np.asarray(col, dtype=float)

    def to_model_input(self, states):
        """Rows in the raw form the classifier was trained on: the model's
        own copy, never a view of ``states`` (a model that changes its input
        in place, scaling it say, must not change the states searched)."""
        if not self.is_frame:
            if not self.is_categorical.any():
                # float states stay float: casting to an integer dtype would
                # silently truncate interpolated values (and NaN)
                if self.array_dtype.kind == "f":
                    return states.astype(self.array_dtype, copy=True)
                return states.copy()
            out = np.empty(states.shape, dtype=object)
            for j in range(self.n_features):
                column = states[:, j]
                if self.is_categorical[j]:
                    column = self._labels[j][column.astype(np.intp)]
                out[:, j] = column
            return out
        # the numeric columns are views of this copy (the categorical ones
        # are built afresh)
        states = np.array(states, dtype=float, copy=True)
        data = {
            name: self._raw_column(j, states[:, j]) for j, name in enumerate(self.names)
        }
        # the kind of frame the explainer was fitted on (polars: converted)
        library = getattr(self, "model_frame", None)
        return to_model_frame(pd.DataFrame(data, copy=False), library)

    def _raw_column(self, j, column):
        """Feature ``j`` as raw values, categories in the dtype seen in ``fit``."""
        if not self.is_categorical[j]:
            return column
        codes = column.astype(np.intp)
        dtype = self.dtypes[j]
        if isinstance(dtype, pd.CategoricalDtype):
            if len(dtype.categories) != len(self.categories[j]):  # added ones
                dtype = pd.CategoricalDtype(self.categories[j], ordered=self.ordered[j])
            return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)
        if isinstance(dtype, pd.api.extensions.ExtensionDtype):
            # e.g. pandas' str dtype: taking from the categories skips the
            # element-wise inference a DataFrame would run on plain labels
            if self._typed_labels[j] is None:
                self._typed_labels[j] = pd.array(
                    [*self.categories[j], None], dtype=dtype
                )
            return self._typed_labels[j].take(codes)
        labels = self._labels[j][codes]
        if dtype is not None and dtype.kind == "b" and codes.min(initial=0) >= 0:
            return labels.astype(bool)
        if dtype is not None and dtype.kind == "O":
            # keep object labels as objects (a DataFrame would infer str)
            return pd.Series(labels, dtype=object, copy=False)
        return labels

    def to_frame(self, states, index=None):
        """Decoded states as a DataFrame with the columns (and dtypes) of ``X``."""
        data = {
            name: self._raw_column(j, states[:, j])
            if self.is_categorical[j]
            else restore_numbers(states[:, j], self.dtypes[j])
            for j, name in enumerate(self.names)
        }
        frame = pd.DataFrame(data, columns=self.names, copy=False)
        if index is not None:
            frame.index = index
        return frame

    def view(self, states):
        """A read-only mapping ``name -> raw values`` over the rows of ``states``."""
        return StateView(self, states)


def plain_missing(X):
    """``X`` with pandas nullable columns (``Int64``, ``Float64``,
    ``boolean``, ``string``, ...) as NumPy columns, ``<NA>`` as ``NaN``:
    what scikit-learn's encoders and a ``ColumnTransformer`` take. The first
    step of the default estimator when ``X`` has such columns."""
    if not isinstance(X, pd.DataFrame):
        return X
    out = {}
    for name in X.columns:
        column = X[name]
        if getattr(column.dtype, "na_value", None) is pd.NA:
            if column.dtype.kind in "iuf":
                column = column.astype(float)
            else:
                values = column.astype(object)
                column = values.where(values.notna(), np.nan)
        out[name] = column
    return pd.DataFrame(out, index=X.index)


class StateView(Mapping):
    """Read-only mapping from column name to a 1-D array of raw values.

    This is what user callables (costs, effects, conditions, tau) receive as
    ``before`` and ``after``: one entry per candidate being evaluated. Numeric
    features give floats; categorical features give their labels. Each
    access gives a read-only copy: nothing a callable does to it (not even
    ``setflags(write=True)`` or a write through ``.base``) reaches the states
    or what other callables see.
    """

    __slots__ = ("_schema", "_states", "_cache")

    def __init__(self, schema, states):
        self._schema = schema
        self._states = states
        self._cache = {}  # decoded columns, never handed out themselves

    def __getitem__(self, name):
        try:
            column = self._cache[name]
        except KeyError:
            j = self._schema.index.get(name)
            if j is None:
                raise KeyError(
                    f"{name!r} is not a feature; the features are {self._schema.names}."
                ) from None
            column = self._schema.decode_column(j, self._states[:, j])
            self._cache[name] = column
        except TypeError:  # unhashable
            raise KeyError(name) from None
        column = column.copy()
        column.flags.writeable = False
        return column

    def forget(self, name):
        """Drop the decoded column ``name`` after its states were changed."""
        self._cache.pop(name, None)

    def __iter__(self):
        return iter(self._schema.names)

    def __len__(self):
        return self._schema.n_features

    def __repr__(self):
        return f"StateView(n_candidates={self._states.shape[0]})"

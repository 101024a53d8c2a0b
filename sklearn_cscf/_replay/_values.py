"""What replay knows of the explainer, and how it holds values.

:class:`Definitions` reads the fitted explainer's public definitions (its
``actions_`` with their learned value spaces, ``feature_graph``,
``feature_kinds_``, ``categories_``, ``feature_ranges_``, the model and
what to reach) and the rows of ``X`` as raw values, never the search's
encoded states or its simulator.
"""

from numbers import Integral

import numpy as np
import pandas as pd

from sklearn_cscf._replay._spaces import value_space
from sklearn_cscf._replay._util import is_missing


class Definitions:
    """What every replayed sequence shares: the explainer's definitions, the
    rows of ``X`` as raw values, and how values compare."""

    def __init__(self, explainer, X, rtol, atol, columns):
        self.explainer = explainer
        self.X = X
        self.rtol, self.atol = float(rtol), float(atol)
        self.is_frame = isinstance(X, pd.DataFrame)
        if self.is_frame:
            self.names = list(X.columns)
            self.index = X.index
        else:
            self.names = list(range(X.shape[1]))
            self.index = pd.RangeIndex(X.shape[0])
        clashes = [name for name in self.names if name in columns]
        if clashes:
            raise ValueError(
                f"The features {clashes} of X have the names of columns of the "
                f"replay ({list(columns)}); rename them to replay."
            )
        kinds = explainer.feature_kinds_
        self.categorical = {name: kinds[name] == "categorical" for name in self.names}
        self.categories = explainer.categories_
        # categories whose labels are all str reach user callables as a str array
        self.str_categories = {
            name: all(type(c) is str for c in cats)
            for name, cats in self.categories.items()
        }
        # labels of each categorical feature by their text (the frame's form)
        self.by_text = {
            name: {str(c): c for c in reversed(cats)}
            for name, cats in self.categories.items()
        }
        self.ranges = explainer.feature_ranges_
        self.actions = {action.name: action for action in explainer.actions_}
        self.spaces = {
            action.name: value_space(action, self.categorical[action.feature])
            for action in explainer.actions_
        }
        self.graph = explainer.feature_graph
        self.max_length = explainer.max_sequence_length
        self.estimator = explainer.estimator_
        # the most states in one model call (an explainer pickled before
        # the parameter existed has none)
        self.max_rows = getattr(explainer, "max_model_rows", None)
        # what to reach: classes (one, a set, "opposite"), or a regressor's range
        classes = explainer.classes_
        self.classes = None if classes is None else np.asarray(classes)
        self.target_class = explainer.target_class
        self.min_proba = explainer.min_target_proba
        self.target_range = explainer.target_range
        self.target_margin = explainer.target_margin or 0.0

    def start_state(self, position):
        """The raw values of row ``position`` of ``X``."""
        if self.is_frame:
            row = [self.X.iloc[position, j] for j in range(len(self.names))]
        else:
            row = list(self.X[position])
        return {name: self.raw(name, value) for name, value in zip(self.names, row)}

    def raw(self, name, value):
        """A value as the replay holds it: a float, or a label (NaN: missing)."""
        if is_missing(value):
            return np.nan
        if self.categorical[name]:
            return value
        return float(value)

    def label(self, name, text):
        """The category of ``name`` written as ``text`` in the frame."""
        if is_missing(text):
            return np.nan
        return self.by_text[name].get(str(text), text)

    def view(self, state):
        """The mapping user callables receive: name -> 1-D array of one value."""
        view = {}
        for name, value in state.items():
            if not self.categorical[name]:
                array = np.array([value], dtype=float)
            elif self.str_categories[name] and isinstance(value, str):
                array = np.array([value], dtype=str)
            else:
                array = np.empty(1, dtype=object)
                array[0] = value
            array.flags.writeable = False
            view[name] = array
        return view

    def same(self, name, a, b):
        """Whether two raw values of feature ``name`` are equal."""
        if is_missing(a) or is_missing(b):
            return is_missing(a) and is_missing(b)
        if self.categorical[name]:
            return str(a) == str(b)
        return self.close(float(a), float(b))

    def close(self, a, b):
        return bool(np.isclose(a, b, rtol=self.rtol, atol=self.atol, equal_nan=True))

    def tolerance(self, *scale):
        return self.atol + self.rtol * max(abs(s) for s in scale)

    def model_input(self, states):
        """The states as rows of the kind ``X`` holds (and the model takes)."""
        columns = {name: [state[name] for state in states] for name in self.names}
        if not self.is_frame:
            if not any(self.categorical.values()):
                dtype = self.X.dtype if self.X.dtype.kind == "f" else float
                return np.array([columns[n] for n in self.names], dtype=dtype).T
            out = np.empty((len(states), len(self.names)), dtype=object)
            for j, name in enumerate(self.names):
                out[:, j] = columns[name]
            return out
        data = {}
        for name, dtype in zip(self.names, self.X.dtypes):
            values = columns[name]
            if not self.categorical[name]:
                data[name] = np.array(values, dtype=float)
            elif isinstance(dtype, pd.CategoricalDtype):
                # labels the explainer does not know (a tampered frame) come last
                known = self.categories[name]
                unknown = {v for v in values if not is_missing(v)} - set(known)
                data[name] = pd.Categorical(
                    values,
                    categories=[*known, *sorted(unknown, key=str)],
                    ordered=dtype.ordered,
                )
            elif dtype.kind == "b" and not any(map(is_missing, values)):
                data[name] = np.array(values, dtype=bool)
            elif isinstance(dtype, pd.api.extensions.ExtensionDtype):
                data[name] = pd.array(values, dtype=dtype)
            else:
                data[name] = pd.Series(values, dtype=object)
        return pd.DataFrame(data, columns=self.names)

    def position(self, label):
        try:
            position = self.index.get_loc(label)
        except (KeyError, TypeError):
            raise ValueError(
                f"Instance {label!r} of the frame is not a row of X (its index "
                "labels, or row positions for an array)."
            ) from None
        if not isinstance(position, Integral):
            raise ValueError(
                f"Instance {label!r} labels several rows of X; the index of X "
                "must identify each instance."
            )
        return int(position)

"""Small duck-typed models shared by the tests of the model's handling."""

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression


class Thresholded:
    """A classifier whose predict is not the arg-max of its probabilities:
    class 1 from P(1) >= 0.8 on, as with a tuned decision threshold."""

    classes_ = np.array(["no", "yes"])

    def predict_proba(self, X):
        p = np.clip(np.asarray(X, dtype=float)[:, 0], 0.0, 1.0)
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        return self.classes_[(self.predict_proba(X)[:, 1] >= 0.8).astype(int)]

    def __sklearn_is_fitted__(self):
        return True


class Counted(Thresholded):
    """Thresholded, with the calls of each method and their rows recorded."""

    def __init__(self):
        self.calls = []

    def predict_proba(self, X):
        self.calls.append(("predict_proba", len(X)))
        return Thresholded.predict_proba(self, X)

    def predict(self, X):
        self.calls.append(("predict", len(X)))
        accepted = Thresholded.predict_proba(self, X)[:, 1] >= 0.8
        return self.classes_[accepted.astype(int)]


class Scaled:
    """Probabilities times ``factor`` (at most 1): rows that do not sum to 1."""

    def __init__(self, model, factor, classes=None):
        self.model, self.factor = model, factor
        self.classes_ = model.classes_ if classes is None else np.asarray(classes)

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        return np.clip(self.model.predict_proba(X) * self.factor, 0.0, 1.0)

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(axis=1)]


def line_model():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(0, 1, 100), "b": rng.uniform(0, 1, 100)})
    y = (X["a"] > X["b"]).astype(int)
    return X, LogisticRegression().fit(X, y)

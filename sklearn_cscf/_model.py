"""The black box: one call to the classifier for a whole batch of states."""

import time

import numpy as np


class ModelAdapter:
    """Calls a fitted classifier on encoded states and times the calls.

    Uses ``predict_proba`` when the model has it (the predicted class is its
    arg-max, so one call gives both), otherwise ``predict``.
    """

    def __init__(self, estimator, schema, classes):
        self.estimator = estimator
        self.schema = schema
        self.classes = np.asarray(classes)
        self.has_proba = hasattr(estimator, "predict_proba")
        self.seconds = 0.0
        self.n_calls = 0

    def predict(self, states):
        """Predicted class index and class probabilities (``None`` if absent)."""
        X = self.schema.to_model_input(states)
        start = time.perf_counter()
        if self.has_proba:
            proba = np.asarray(self.estimator.predict_proba(X), dtype=float)
            out = None
        else:
            proba = None
            out = np.asarray(self.estimator.predict(X))
        self.seconds += time.perf_counter() - start
        self.n_calls += 1
        if proba is not None:
            if proba.shape != (states.shape[0], self.classes.shape[0]):
                raise ValueError(
                    "predict_proba of the estimator returned shape "
                    f"{proba.shape}; expected ({states.shape[0]}, "
                    f"{self.classes.shape[0]}) (rows, classes_)."
                )
            return proba.argmax(axis=1), proba
        match = out[:, None] == self.classes[None, :]
        if not match.any(axis=1).all():
            unknown = out[~match.any(axis=1)][:3]
            raise ValueError(
                f"predict returned labels {unknown.tolist()} that are not in "
                f"classes_ {self.classes.tolist()}."
            )
        return match.argmax(axis=1), None


def target_gap(predicted, proba, target):
    """How far each state is from being classified as ``target`` (0 if it is).

    With probabilities: the lead of the best other class over the target; a
    positive floor keeps every misclassified state above 0.
    """
    reached = predicted == target
    if proba is None:
        return np.where(reached, 0.0, 1.0)
    others = proba.copy()
    others[:, target] = -np.inf
    lead = others.max(axis=1) - proba[:, target]
    return np.where(reached, 0.0, np.maximum(lead, 0.0) + 1e-6)

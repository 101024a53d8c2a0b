"""The line problem of the tests of hostile inputs: two numeric features,
accepted when income - debt is large (the fixtures ``line_data`` and
``logistic`` are in conftest)."""

import warnings

import numpy as np
import pandas as pd

from sklearn_cscf import Action, SequentialCounterfactualExplainer

SMALL = {"population_size": 40, "n_generations": 10, "random_state": 0}


def line_actions(**extra):
    return [
        Action("earn", "income", values=(0.0, 200.0), direction="increase", **extra),
        Action("repay", "debt", values=(0.0, 50.0), direction="decrease"),
    ]


def final_states(frame, states):
    """The last state of every reported sequence."""
    ok = frame[frame["status"] == "ok"]
    keys = ok.groupby(["instance", "solution"])["length"].first().reset_index()
    merged = keys.merge(
        states,
        left_on=["instance", "solution", "length"],
        right_on=["instance", "solution", "step"],
    )
    return merged[list(states.columns[3:])]


def earn(**extra):
    return Action("earn", "income", values=(0.0, 200.0), direction="increase", **extra)


def repay(**extra):
    return Action("repay", "debt", values=(0.0, 50.0), direction="decrease", **extra)


def explain_rows(model, line_data, actions, graph=None, n=3, **params):
    X, _ = line_data
    explainer = SequentialCounterfactualExplainer(
        model, actions=actions, feature_graph=graph, **{**SMALL, **params}
    ).fit(X)
    rows = X[model.predict(X) == 0].iloc[:n]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return explainer.explain(rows, return_states=True)


def only_message(frame):
    """The message of rows that all failed the same way (counts aside: the
    first message, after checking that every row has one of its kind)."""
    assert (frame["status"] == "error").all(), frame[["status", "message"]]
    messages = frame["message"].unique().tolist()
    kinds = {m.split(";")[0].split(" with ")[0] for m in messages}
    assert len(kinds) == 1, messages
    return messages[0]


class OnDummies:
    """A duck-typed fitted classifier for a ``model`` trained on
    ``pd.get_dummies`` of the rows: it one-hot encodes what it is asked about
    (a column it never saw is 0)."""

    def __init__(self, model):
        self.model = model
        self.classes_ = model.classes_

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, frame):
        dummies = pd.get_dummies(frame, dtype=float)
        return self.model.predict_proba(
            dummies.reindex(columns=self.model.feature_names_in_, fill_value=0.0)
        )

    def predict(self, frame):
        return self.classes_[self.predict_proba(frame).argmax(axis=1)]


class RuleModel:
    """A duck-typed fitted classifier accepting the rows where ``rule`` (a
    function of the frame) holds."""

    classes_ = np.array([0, 1])

    def __init__(self, rule):
        self.rule = rule

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        accepted = np.asarray(self.rule(X), dtype=float)
        return np.column_stack([1.0 - accepted, accepted])

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


class Wrapping:
    """A duck-typed fitted binary classifier around a fitted ``model``; a
    subclass says how it answers (``predict_proba`` and ``predict``, or
    only one of them)."""

    classes_ = np.array([0, 1])

    def __init__(self, model):
        self.model = model

    def __sklearn_is_fitted__(self):
        return True

"""What ``fit`` resolves from the explainer's parameters, and what a search
is built from: the actions compiled against the features, the graph, the
rows plausibility compares with, and the plausibility objective."""

import copy

import numpy as np
import pandas as pd

from sklearn_cscf._make_actions import make_actions
from sklearn_cscf._model import decisions_now
from sklearn_cscf._objectives import Plausibility
from sklearn_cscf.actions import Action, CompiledAction
from sklearn_cscf.graph import CompiledGraph

# training rows the plausibility objective compares final states with
PLAUSIBILITY_ROWS = 1000
# neighbours averaged by plausibility=True
PLAUSIBILITY_NEIGHBORS = 5


def compile_actions(actions, schema, immutable_features, X):
    """The :class:`~sklearn_cscf.actions.CompiledAction` of each action.

    ``actions=None`` gives one action per mutable feature (``set_<feature>``,
    any observed value, :func:`~sklearn_cscf.make_actions`' default costs on
    ``X``, the data of ``fit``); no action may change an immutable feature.
    """
    immutable = _immutable_features(immutable_features, schema)
    compiled = [
        CompiledAction(a, schema)
        for a in _resolve_actions(actions, schema, immutable, X)
    ]
    for action in compiled:
        for k in action.affects:
            if schema.names[k] in immutable:
                raise ValueError(
                    f"Action {action.name!r} changes {schema.names[k]!r}, "
                    "which is listed in immutable_features."
                )
    return compiled


def _immutable_features(immutable_features, schema):
    if immutable_features is None:
        return set()
    immutable = list(np.asarray(immutable_features, dtype=object).ravel())
    for name in immutable:
        schema.column(name, what="immutable_features:")
    return set(immutable)


def _resolve_actions(actions, schema, immutable, X):
    if actions is None:
        # make_actions' defaults: costs per interquartile range, per change
        frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(X)
        if all(name in immutable for name in frame.columns):
            raise ValueError("Every feature is immutable: there is nothing to do.")
        return make_actions(frame, immutable=list(immutable))
    actions = list(actions)
    if not actions:
        raise ValueError("actions is empty; give at least one Action.")
    names = set()
    for action in actions:
        if not isinstance(action, Action):
            raise TypeError(
                "actions must hold Action objects, got "
                f"{type(action).__name__}: {action!r}."
            )
        if action.name in names:
            raise ValueError(f"Two actions are named {action.name!r}.")
        names.add(action.name)
    return actions


def compiled_for(X, schema, actions, graph, feature_graph):
    """The schema, actions and graph to explain ``X`` with: those of ``fit``
    (given), or copies that also know the categories ``X`` brings."""
    unseen = schema.unseen_categories(X)
    if not unseen:
        return schema, actions, graph
    schema = copy.deepcopy(schema)
    for j, labels in unseen.items():
        for label in labels:
            schema.add_category(j, label)
    actions = [CompiledAction(a.action, schema) for a in actions]
    return schema, actions, CompiledGraph(feature_graph, schema, actions)


def reference_rows(schema, X):
    """Up to ``PLAUSIBILITY_ROWS`` encoded rows of ``X`` (drawn once, seeded)."""
    rows = schema.encode(X)
    if rows.shape[0] > PLAUSIBILITY_ROWS:
        pick = np.random.default_rng(0).choice(
            rows.shape[0], PLAUSIBILITY_ROWS, replace=False
        )
        rows = rows[np.sort(pick)]
    return rows


def plausibility_objective(
    plausibility,
    reference,
    schema,
    actions,
    target,
    codes,
    *,
    estimator,
    classes,
    errors,
):
    """The plausibility objective for rows of target ``codes``, or None.

    ``reference`` holds the rows kept in ``fit`` (None when plausibility was
    off then); one is a neighbour for a code when the model's answer about
    it reaches that code's target.
    """
    if plausibility is False:
        return None
    if reference is None:
        raise ValueError(
            "plausibility was turned on after fit: fit the explainer again "
            "(it keeps training rows to compare with only when plausibility "
            "is on at fit)."
        )
    k = PLAUSIBILITY_NEIGHBORS if plausibility is True else plausibility
    answers, _ = decisions_now(estimator, schema, classes, reference, errors)
    known = answers.decision >= 0
    accepted = {}
    for code in np.unique(codes[codes >= 0]).tolist():
        mask = np.zeros(known.shape[0], dtype=bool)
        mask[known] = target.gap(answers.take(known), np.full(known.sum(), code)) == 0
        accepted[code] = mask
    changed = sorted({k for action in actions for k in action.affects})
    return Plausibility(schema, reference, accepted, changed, k)


def feature_info(schema):
    """The fitted explainer's ``feature_kinds_``, ``feature_ranges_`` and
    ``categories_``."""
    kinds = {
        name: "categorical" if schema.is_categorical[j] else "numeric"
        for j, name in enumerate(schema.names)
    }
    ranges = {
        name: (float(schema.low[j]), float(schema.high[j]))
        for j, name in enumerate(schema.names)
        if not schema.is_categorical[j]
    }
    categories = {
        name: list(schema.categories[j])
        for j, name in enumerate(schema.names)
        if schema.is_categorical[j]
    }
    return kinds, ranges, categories

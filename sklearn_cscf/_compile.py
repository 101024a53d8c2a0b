"""What ``fit`` resolves from the explainer's parameters and ``X``, in one
function (:func:`resolve`), and what a search is built from: the actions
compiled against the features, the graph, the rows plausibility compares
with (and the model's answers about them), and the plausibility objective.

``X`` is encoded once; the model and the costs are probed on one seeded
sample of its rows (:func:`probe_sample`)."""

import copy
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sklearn_cscf._answers import Answers
from sklearn_cscf._compiled_actions import CompiledAction, probe_costs
from sklearn_cscf._compiled_graph import CompiledGraph
from sklearn_cscf._feature_names import quiet_names, warn_fitted_without_names
from sklearn_cscf._input_frames import frame_library
from sklearn_cscf._make_actions import make_actions
from sklearn_cscf._model import (
    answers_vary,
    decisions_now,
    fit_model,
    model_classes,
    needs_predict,
)
from sklearn_cscf._objectives import Plausibility
from sklearn_cscf._schema import FeatureSchema
from sklearn_cscf._targets import make_target
from sklearn_cscf.actions import Action

# training rows the plausibility objective compares final states with
PLAUSIBILITY_ROWS = 1000
# neighbours averaged by plausibility=True
PLAUSIBILITY_NEIGHBORS = 5
# rows of fit on which the model and the costs are probed (one sample)
PROBE_ROWS = 2000


@dataclass
class Reference:
    """The rows plausibility compares final states with, and the model's
    answers about them (asked once, in ``fit``)."""

    rows: np.ndarray
    answers: Answers


@dataclass
class Fitted:
    """What ``fit`` resolves: all that explaining needs besides the
    explainer's parameters."""

    schema: FeatureSchema
    estimator: object
    classes: np.ndarray | None
    uses_predict: bool
    varies: bool  # the model's answers vary: every reported plan rechecked
    target: object
    actions: list  # CompiledAction
    graph: CompiledGraph
    reference: Reference | None  # only with plausibility


def resolve(params, X, given, y):
    """Resolve the explainer's ``params`` (``get_params(deep=False)``)
    against ``X`` (checked, pandas; ``given``: as the user gave it, polars
    say) and ``y``: fit the model if needed, ask what it is, compile the
    target, the actions and the graph, and probe the costs.

    Returns
    -------
    Fitted
    """
    schema = FeatureSchema(X)
    # the model is handed the kind of frame it is fitted on (polars: polars)
    schema.model_frame = frame_library(given)
    polars = schema.model_frame == "polars"
    estimator = fit_model(
        params["estimator"], given if polars else X, y, schema, params["random_state"]
    )
    regressor = params["target_range"] is not None
    classes = model_classes(estimator, regressor=regressor)
    encoded = schema.encode(X)
    sample = probe_sample(encoded)
    # resolve, fit, its two wrappers, the user
    max_rows = params["max_model_rows"]
    with quiet_names(warn_fitted_without_names(estimator, X, stacklevel=5)):
        # a regressor decides by predict alone
        uses_predict = regressor or needs_predict(
            estimator, schema, sample, classes, max_rows
        )
        # a model whose answers vary has every reported plan checked afresh
        varies = answers_vary(estimator, schema, sample, classes, max_rows)
    target = make_target(
        classes,
        target_class=params["target_class"],
        target_range=params["target_range"],
        target_margin=params["target_margin"],
        min_target_proba=params["min_target_proba"],
        use_predict=uses_predict,
        has_proba=hasattr(estimator, "predict_proba"),
    )
    actions = compile_actions(
        params["actions"], schema, params["immutable_features"], X
    )
    graph = CompiledGraph(params["feature_graph"], schema, actions)
    probe_costs(actions, schema, sample)
    # the rows plausibility compares final states with: kept only when it is
    # on, so that a pickled explainer holds no training rows else
    reference = None
    if params["plausibility"] is not False:
        rows = reference_rows(encoded)
        answers, _ = decisions_now(
            estimator, schema, classes, rows, params["errors"], max_rows
        )
        reference = Reference(rows, answers)
    return Fitted(
        schema=schema,
        estimator=estimator,
        classes=classes,
        uses_predict=uses_predict,
        varies=varies,
        target=target,
        actions=actions,
        graph=graph,
        reference=reference,
    )


def probe_sample(encoded):
    """Up to ``PROBE_ROWS`` encoded rows of ``fit``, in a seeded random
    order: the rows the model (:func:`~sklearn_cscf._model.needs_predict`,
    :func:`~sklearn_cscf._model.answers_vary`) and the costs
    (:func:`~sklearn_cscf._compiled_actions.probe_costs`) are probed on,
    each taking as many as it needs from the front."""
    pick = np.random.default_rng(0).permutation(encoded.shape[0])[:PROBE_ROWS]
    return encoded[pick]


def compile_actions(actions, schema, immutable_features, X):
    """The :class:`~sklearn_cscf._compiled_actions.CompiledAction` of each action.

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


def reference_rows(encoded):
    """Up to ``PLAUSIBILITY_ROWS`` of the encoded rows (drawn once, seeded)."""
    n = encoded.shape[0]
    if n <= PLAUSIBILITY_ROWS:
        return encoded
    pick = np.random.default_rng(0).choice(n, PLAUSIBILITY_ROWS, replace=False)
    return encoded[np.sort(pick)]


def plausibility_objective(plausibility, reference, schema, actions, target, codes):
    """The plausibility objective for rows of target ``codes``, or None.

    ``reference`` holds the rows kept in ``fit`` and the model's answers
    about them (None when plausibility was off then); one is a neighbour for
    a code when the model's answer about it reaches that code's target.
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
    answers = reference.answers
    known = answers.decision >= 0
    accepted = {}
    for code in np.unique(codes[codes >= 0]).tolist():
        mask = np.zeros(known.shape[0], dtype=bool)
        mask[known] = target.gap(answers.take(known), np.full(known.sum(), code)) == 0
        accepted[code] = mask
    changed = sorted({k for action in actions for k in action.affects})
    return Plausibility(schema, reference.rows, accepted, changed, k)


def feature_info(schema):
    """The fitted explainer's ``feature_kinds_``, ``feature_ranges_`` and
    ``categories_``."""
    kinds, ranges, categories = {}, {}, {}
    for j, name in enumerate(schema.names):
        if schema.is_categorical[j]:
            kinds[name] = "categorical"
            categories[name] = list(schema.categories[j])
        else:
            kinds[name] = "numeric"
            ranges[name] = (float(schema.low[j]), float(schema.high[j]))
    return kinds, ranges, categories

"""What ``fit`` resolves from the explainer's parameters and ``X``, in one
function (:func:`resolve`), and what a search is built from: the model
(:func:`fit_model`: the given model, or a fitted clone, or the default
classifier) and what kind it is (:func:`model_classes`: a classifier's
classes, or a regressor; :func:`needs_predict`: whether its ``predict`` is
not the arg-max of its probabilities; :func:`answers_vary`), the actions
compiled against the features, the graph, the rows plausibility compares
with (and the model's answers about them), and the plausibility objective.

``X`` is encoded once; the model and the costs are probed on one seeded
sample of its rows (:func:`probe_sample`)."""

import copy
import warnings
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, fields

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from sklearn_cscf._compiled_actions import CompiledAction, probe_costs
from sklearn_cscf._compiled_graph import CompiledGraph
from sklearn_cscf._engine._brkga import SearchSettings
from sklearn_cscf._engine._feature_names import quiet_names, warn_fitted_without_names
from sklearn_cscf._engine._memo import Answers
from sklearn_cscf._engine._model import (
    PROBA_DECIMALS,
    ModelAdapter,
    batch_note,
    decisions_now,
    in_chunks,
)
from sklearn_cscf._engine._objectives import Plausibility
from sklearn_cscf._engine._targets import make_target
from sklearn_cscf._input_frames import frame_library
from sklearn_cscf._make_actions import make_actions
from sklearn_cscf._schema import FeatureSchema, plain_missing
from sklearn_cscf.actions import Action

# training rows the plausibility objective compares final states with
PLAUSIBILITY_ROWS = 1000
# neighbours averaged by plausibility=True
PLAUSIBILITY_NEIGHBORS = 5
# rows of fit on which the model and the costs are probed (one sample)
PROBE_ROWS = 2000
# rows of fit on which the model is asked twice: do its answers vary?
REPEAT_ROWS = 256


@dataclass(frozen=True)
class Schedule:
    """How the rows of a run are explained: blocks, workers, errors, progress
    and the seed (the explainer's parameters of the same names)."""

    batch_size: int
    n_jobs: int | None
    errors: str
    verbose: int
    random_state: object


@dataclass(frozen=True)
class Settings:
    """The explainer's parameters, resolved once per ``fit`` or ``explain``
    call (:meth:`from_params`) and read by name from then on: what ``fit``
    resolves, how the search runs (:attr:`search`), how the rows are
    scheduled (:attr:`schedule`) and what the output reports. No field has a
    default: the defaults live in the explainer's signature only."""

    estimator: object
    actions: object
    feature_graph: object
    immutable_features: object
    target_class: object
    target_range: object
    target_margin: float
    min_target_proba: float | None
    refine: bool
    plausibility: bool | int
    max_plans: int | None
    all_orders: bool
    all_values: bool
    max_model_rows: int | None
    search: SearchSettings
    schedule: Schedule

    @classmethod
    def from_params(cls, params):
        """The settings of the explainer's ``get_params(deep=False)``; every
        parameter has one place (a parameter none takes is a bug)."""
        parts = {"search": SearchSettings, "schedule": Schedule}
        values = {
            name: part(**{f.name: params[f.name] for f in fields(part)})
            for name, part in parts.items()
        }
        flat = [f.name for f in fields(cls) if f.name not in parts]
        values.update({name: params[name] for name in flat})
        placed = set(flat).union(*({f.name for f in fields(p)} for p in parts.values()))
        if placed != set(params):
            raise RuntimeError(  # a bug, not a user error
                f"parameters without a setting: {sorted(set(params) - placed)}"
            )
        return cls(**values)


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


def resolve(settings, X, given, y):
    """Resolve the explainer's :class:`Settings` against ``X`` (checked,
    pandas; ``given``: as the user gave it, polars say) and ``y``: fit the
    model if needed, ask what it is, compile the target, the actions and the
    graph, and probe the costs.

    Returns
    -------
    Fitted
    """
    schema = FeatureSchema(X)
    # the model is handed the kind of frame it is fitted on (polars: polars)
    schema.model_frame = frame_library(given)
    polars = schema.model_frame == "polars"
    estimator = fit_model(
        settings.estimator,
        given if polars else X,
        y,
        schema,
        settings.schedule.random_state,
    )
    regressor = settings.target_range is not None
    classes = model_classes(estimator, regressor=regressor)
    encoded = schema.encode(X)
    sample = probe_sample(encoded)
    # resolve, fit, its two wrappers, the user
    max_rows = settings.max_model_rows
    with quiet_names(warn_fitted_without_names(estimator, X, stacklevel=5)):
        # a regressor decides by predict alone
        uses_predict = regressor or needs_predict(
            estimator, schema, sample, classes, max_rows
        )
        # a model whose answers vary has every reported plan checked afresh
        varies = answers_vary(estimator, schema, sample, classes, max_rows)
    target = make_target(
        classes,
        target_class=settings.target_class,
        target_range=settings.target_range,
        target_margin=settings.target_margin,
        min_target_proba=settings.min_target_proba,
        use_predict=uses_predict,
        has_proba=hasattr(estimator, "predict_proba"),
    )
    actions = compile_actions(settings.actions, schema, settings.immutable_features, X)
    graph = CompiledGraph(settings.feature_graph, schema, actions)
    probe_costs(actions, schema, sample)
    # the rows plausibility compares final states with: kept only when it is
    # on, so that a pickled explainer holds no training rows else
    reference = None
    if settings.plausibility is not False:
        rows = reference_rows(encoded)
        answers, _ = decisions_now(
            estimator, schema, classes, rows, settings.schedule.errors, max_rows
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


def warn_unfitted_clone(original, cloned, stacklevel=1):
    """Warn when a clone of the explainer holds its fitted model unfitted
    (scikit-learn's ``clone`` of a fitted model, in a grid search say): its
    ``fit`` would need ``y`` and explain another model. ``stacklevel``: the
    frames from the caller to the user."""
    if original is None or not is_fitted(original) or is_fitted(cloned):
        return
    name = type(original).__name__
    warnings.warn(
        f"The explainer's clone holds an unfitted copy of its fitted {name}: "
        "scikit-learn's clone (in GridSearchCV, cross_validate, ...) clones "
        "the model unfitted, so the clone's fit would need y to fit it again, "
        "and explain that model. To explain this fitted model there, wrap "
        "it: SequentialCounterfactualExplainer(FrozenEstimator(model), ...) "
        "with from sklearn.frozen import FrozenEstimator.",
        UserWarning,
        stacklevel=stacklevel + 1,
    )


def probe_sample(encoded):
    """Up to ``PROBE_ROWS`` encoded rows of ``fit``, in a seeded random
    order: the rows the model (:func:`needs_predict`,
    :func:`answers_vary`) and the costs
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


def compiled_for(X, schema, actions, graph, feature_graph, stacklevel=1):
    """The schema, actions and graph to explain ``X`` with: those of ``fit``
    (given), or copies that also know the categories ``X`` brings, which one
    warning names (``stacklevel``: the frames from the caller to the
    user)."""
    unseen = schema.unseen_categories(X)
    if not unseen:
        return schema, actions, graph
    warn_unseen(X, schema, unseen, stacklevel + 1)
    schema = copy.deepcopy(schema)
    for j, labels in unseen.items():
        for label in labels:
            schema.add_category(j, label)
    actions = [CompiledAction(a.action, schema) for a in actions]
    return schema, actions, CompiledGraph(feature_graph, schema, actions)


def warn_unseen(X, schema, unseen, stacklevel):
    """One warning naming each column of ``X`` with categories ``fit`` did
    not see (``unseen``: ``{j: labels}``), its labels and how many rows."""
    parts = []
    for j, labels in unseen.items():
        column = X.iloc[:, j] if isinstance(X, pd.DataFrame) else X[:, j]
        rows = int(pd.Series(np.asarray(column, dtype=object)).isin(labels).sum())
        shown = ", ".join(repr(label) for label in labels[:5])
        more = f" and {len(labels) - 5} more" if len(labels) > 5 else ""
        row_s = "row" if rows == 1 else "rows"
        parts.append(f"column {schema.names[j]!r} has {shown}{more} ({rows} {row_s})")
    warnings.warn(
        "X holds categories that fit did not see: "
        + "; ".join(parts)
        + ". The model was not fitted on them either, so its answers about "
        "these rows (and plans from them) may mean little: an encoder that "
        "ignores unknown categories reads them as no category at all. Fit the "
        "explainer on data holding them, or declare them as categories of a "
        "pandas Categorical, to explain such rows as any other.",
        UserWarning,
        stacklevel=stacklevel + 1,
    )


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


# ---------------------------------------------------------------------- #
# what the model is: fitted if needed, asked what kind it is
# ---------------------------------------------------------------------- #
def model_classes(estimator, regressor):
    """The classes (at least two) of a fitted classifier, or ``None`` for a regressor
    (``regressor``: the explainer was given a ``target_range``); a model of
    the other kind is refused."""
    classes = getattr(estimator, "classes_", None)
    if regressor:
        if classes is not None:
            raise ValueError(
                "target_range is the output range to reach with a regressor; "
                f"this estimator is a classifier (classes {list(classes)}): "
                "use target_class."
            )
        if not hasattr(estimator, "predict"):
            raise TypeError("The regressor has no predict method.")
        return None
    if classes is None:
        raise TypeError(
            "The estimator has no classes_ attribute: for a classifier "
            "the explainer reaches a class; for a regressor, give the "
            "output range to reach as target_range=(low, high)."
        )
    classes = np.asarray(classes)
    repeated = pd.Index(classes.reshape(-1)).duplicated()
    if repeated.any():
        raise ValueError(
            f"The classifier's classes_ {classes.tolist()} name "
            f"{classes.reshape(-1)[repeated].tolist()[0]!r} twice; each column "
            "of predict_proba must be its own class. Fix the model's classes_."
        )
    if classes.shape[0] < 2:
        raise ValueError(
            f"The classifier knows only one class ({classes.tolist()}); "
            "counterfactuals need at least two classes."
        )
    return classes


def needs_predict(estimator, schema, rows, classes, max_rows=None):
    """Whether the model's decisions must come from its ``predict``: it has no
    ``predict_proba``, or its ``predict`` is not the arg-max of its
    probabilities on ``rows`` (encoded rows of the training data), as with a
    tuned decision threshold. The probabilities are checked on the way
    (finite, in [0, 1]). The model is asked about at most ``max_rows`` rows
    per call (``None``: all in one)."""
    if not hasattr(estimator, "predict_proba"):
        return True
    model = ModelAdapter(estimator, schema, classes)
    n = rows.shape[0]

    def proba(part):
        X = schema.to_model_input(part)
        return model.checked_proba(estimator.predict_proba(X), part.shape[0])

    hint = _array_hint(estimator, schema)
    with asking(estimator, _in_fit("predict_proba", n, max_rows), hint):
        chance = in_chunks(rows, max_rows, proba)
    if not model.has_predict:
        return False
    with asking(estimator, _in_fit("predict", n, max_rows), hint):
        decided = in_chunks(
            rows, max_rows, lambda part: model.decide(schema.to_model_input(part))
        )
    return bool((decided != chance.argmax(axis=1)).any())


def _in_fit(method, n, max_rows=None):
    """What the explainer's ``fit`` was doing when the model's ``method``
    raised, in words (with how many rows a call held, and the setting that
    bounds them)."""
    return (
        f"in its {method}, which the explainer's fit calls on {n} rows of the "
        f"X given to it{batch_note(n, max_rows)}"
    )


def _array_hint(estimator, schema):
    """What to do when a model fitted on named columns is asked about an
    array's rows (no names): pass a DataFrame; else nothing."""
    names = getattr(estimator, "feature_names_in_", None)
    if names is None or all(isinstance(name, str) for name in schema.names):
        return ""
    shown = ", ".join(repr(str(name)) for name in list(names)[:5])
    more = ", ..." if len(names) > 5 else ""
    return (
        f" The model was fitted on named columns ({shown}{more}), and X has "
        "none (an array): pass X as a DataFrame with those columns."
    )


@contextmanager
def asking(estimator, doing, hint=""):
    """Re-raise an exception of the model with what was being done (and a
    ``hint`` of what may help): the same type where it can be built from a
    message (else ``RuntimeError``), the model's own exception as its
    ``__cause__``."""
    try:
        yield
    except Exception as exc:
        message = (
            f"The estimator {type(estimator).__name__} raised "
            f"{type(exc).__name__} {doing}: {exc}{hint}"
        )
        try:
            wrapped = type(exc)(message)
        except Exception:
            wrapped = RuntimeError(message)
        raise wrapped from exc


def answers_vary(estimator, schema, rows, classes, max_rows=None):
    """Ask the model twice about the same rows (up to ``REPEAT_ROWS`` of the
    encoded training ``rows``: its probabilities, or its predictions; at
    most ``max_rows`` per call); warn and return True when the answers
    differ: the search remembers answers, so such a model needs every
    reported plan checked afresh."""
    rows = rows[:REPEAT_ROWS]
    method = "predict" if classes is None else "predict_proba"
    if not hasattr(estimator, method):
        method = "predict"

    def ask(part):
        return getattr(estimator, method)(schema.to_model_input(part))

    doing = _in_fit(method, rows.shape[0], max_rows)
    with asking(estimator, doing, _array_hint(estimator, schema)):
        first = in_chunks(rows, max_rows, ask)
        second = in_chunks(rows, max_rows, ask)
    if first.shape == second.shape and (
        np.array_equal(first, second)
        or (
            first.dtype.kind in "fiub"
            and np.allclose(first, second, rtol=0, atol=10.0**-PROBA_DECIMALS)
        )
    ):
        return False
    warnings.warn(
        f"The estimator {type(estimator).__name__} gave different answers "
        f"when its {method} was asked twice about the same rows: it is not "
        "deterministic. Answers are remembered within each search, so the "
        "search sees one answer per state; every reported plan is checked "
        "with a fresh call of the model, and a plan it does not accept then "
        "is not reported.",
        UserWarning,
        stacklevel=6,  # answers_vary, resolve, fit, its two wrappers, the user
    )
    return True


def is_fitted(estimator):
    """Whether ``estimator`` is fitted (a duck-typed model that looks fitted
    is trusted)."""
    if hasattr(estimator, "__sklearn_is_fitted__"):
        return bool(estimator.__sklearn_is_fitted__())
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        return False
    except TypeError:
        # not a scikit-learn estimator: trust it when it looks fitted
        return hasattr(estimator, "classes_")
    return True


def default_estimator(schema, random_state):
    """The classifier fitted when the explainer is given none: histogram
    gradient boosting, with the categorical features one-hot encoded."""
    model = HistGradientBoostingClassifier(random_state=random_state)
    categorical = [schema.names[j] for j in np.flatnonzero(schema.is_categorical)]
    steps = []
    # pandas nullable columns (Int64, string, ...) as NumPy ones, <NA> as NaN
    if any(getattr(d, "na_value", None) is pd.NA for d in schema.dtypes):
        steps.append(FunctionTransformer(plain_missing, feature_names_out="one-to-one"))
    if categorical:
        encode = OneHotEncoder(handle_unknown="ignore", sparse_output=False)
        steps.append(
            ColumnTransformer(
                [("categories", encode, categorical)], remainder="passthrough"
            )
        )
    return make_pipeline(*steps, model) if steps else model


def fit_model(estimator, X, y, schema, random_state):
    """``estimator`` as it is when fitted; otherwise a fitted clone of it (or
    of the default classifier when ``None``, fitted under the thread limits
    of ``explain``: one BLAS/OpenMP thread)."""
    if estimator is not None and is_fitted(estimator):
        return estimator
    if y is None:
        raise ValueError(
            "y is required in fit when the estimator is None or not fitted "
            "yet; pass fit(X, y) or a fitted estimator. Inside GridSearchCV "
            "or cross_validate, which clone the explainer (a clone of a "
            "fitted model is unfitted), wrap the fitted model in "
            "sklearn.frozen.FrozenEstimator to keep it as it is."
        )
    default = estimator is None
    if default:
        estimator = default_estimator(schema, random_state)
    elif not hasattr(estimator, "fit"):
        raise TypeError(
            f"The estimator {type(estimator).__name__} is not fitted and has "
            "no fit method."
        )
    else:
        try:
            estimator = clone(estimator)
        except TypeError as exc:
            raise TypeError(
                f"The unfitted estimator {type(estimator).__name__} cannot be "
                f"cloned ({exc}); fit it first and pass the fitted model."
            ) from None
    # the default model: one BLAS/OpenMP thread, as explain's blocks (on a
    # busy machine its trees train many times faster; the model is the same)
    limits = threadpool_limits(limits=1) if default else nullcontext()
    with (
        limits,
        asking(estimator, "in its fit on the X and y given to the explainer's fit"),
    ):
        return estimator.fit(X, y)

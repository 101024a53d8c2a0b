"""The black box: batched model calls, remembered answers, what the model is.

- :class:`ModelAdapter` calls the fitted model (a classifier or a regressor)
  on encoded states (one call for a whole batch), checks what it returns and
  times the calls.
- :func:`answer_batch` answers a batch of states of many instances: remembered states
  from the block's memo (:mod:`sklearn_cscf._answers`), every other distinct
  state in one model call.
- :func:`decisions_now`: the model's answer about each row to explain, and
  the rows it fails on.
- What the model is: :func:`fit_model` (the given model, or a fitted clone,
  or the default classifier), :func:`model_classes` (a classifier's classes,
  or a regressor) and :func:`needs_predict` (whether its ``predict`` is not
  the arg-max of its probabilities).

What must be reached (the targets) lives in :mod:`sklearn_cscf._targets`.
"""

import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder
from sklearn.utils.validation import check_is_fitted

from sklearn_cscf._answers import Answers, first_rows, state_hashes
from sklearn_cscf._callable_checks import blame, describe_error
from sklearn_cscf._feature_names import fitted_without_names, quiet_names
from sklearn_cscf._rows import put_rows, take_rows
from sklearn_cscf._schema import plain_missing
from sklearn_cscf._workspace import Workspace

# probabilities are kept to this many decimals: a model's arithmetic may round
# the last bits of a row differently in batches of different sizes (BLAS
# kernels), which must not change which sequences are found or reported
PROBA_DECIMALS = 10
# probabilities this far outside [0, 1] are rounding, not an error
PROBA_TOLERANCE = 1e-9
# a row of probabilities may sum this far from 1 (float32, rounding)
PROBA_SUM_TOLERANCE = 1e-3
# a regressor's predictions are kept to this many significant digits
OUTPUT_DIGITS = 12
# rows of fit on which the model is asked twice: do its answers vary?
REPEAT_ROWS = 256


def _round_significant(values, digits):
    """``values`` rounded to ``digits`` significant decimal digits (so that a
    decimal bound such as 0.4 compares as written). Values too small or too
    large to scale (near the limits of floats), 0, infinities and NaN stay as
    they are."""
    values = np.asarray(values, dtype=float)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        magnitude = np.floor(np.log10(np.abs(values)))
        scale = 10.0 ** (digits - 1 - magnitude)
        rounded = np.round(values * scale) / scale
    return np.where(np.isfinite(rounded) & (values != 0), rounded, values)


class ModelAdapter:
    """Calls a fitted model on encoded states, and counts the calls.

    For a classifier (``classes`` given), the decision about a state is the
    model's own: ``predict`` when ``use_predict`` (a model whose ``predict``
    is not the arg-max of its probabilities, e.g. one with a tuned decision
    threshold, or one without ``predict_proba``), otherwise the arg-max of
    ``predict_proba`` (one call gives both). Probabilities are checked:
    finite, in ``[0, 1]``, one column per class. For a regressor
    (``classes=None``), the output is ``predict``, checked finite.
    """

    def __init__(self, estimator, schema, classes, use_predict=False):
        self.estimator = estimator
        self.schema = schema
        self.regression = classes is None
        self.classes = None if self.regression else np.asarray(classes)
        self.has_predict = hasattr(estimator, "predict")
        self.has_proba = not self.regression and hasattr(estimator, "predict_proba")
        self.has_output = self.regression or self.has_proba
        # a regressor's output: its prediction rounded, and as the model gave it
        self.width = 2 if self.regression else self.classes.shape[0]
        self.use_predict = self.regression or use_predict or not self.has_proba
        self.seconds = 0.0
        # fitted on an array, asked about frames: fit said so once
        self.quiet = fitted_without_names(estimator)

    def _call(self, method, X):
        """``estimator.<method>(X)``, timed; an error names the method (and,
        for a call of several rows, the setting that bounds them)."""
        start = time.perf_counter()
        try:
            with quiet_names(self.quiet):
                return getattr(self.estimator, method)(X)
        except Exception as exc:
            blame(exc, f"the estimator's {method}{batch_note(len(X))}")
            raise
        finally:
            self.seconds += time.perf_counter() - start

    def answer(self, states):
        """The model's :class:`Answers` for encoded ``states``."""
        X = self.schema.to_model_input(states)
        proba = self._call("predict_proba", X) if self.has_proba else None
        labels = self._call("predict", X) if self.use_predict else None
        if self.regression:
            values = self._predictions(labels, states.shape[0])
            return Answers(np.zeros(values.shape[0], dtype=np.intp), values)
        if proba is not None:
            proba = self._checked(proba, states.shape[0])
        decision = proba.argmax(axis=1) if labels is None else self.decision_of(labels)
        if proba is not None:
            proba = np.round(proba, PROBA_DECIMALS)
        return Answers(decision, proba)

    def _predictions(self, values, n):
        values = np.asarray(values, dtype=float).reshape(-1)
        if values.shape != (n,) or not np.isfinite(values).all():
            raise ValueError(
                "predict of the regressor must return one finite number per row; "
                f"got shape {np.shape(values)} with "
                f"{int((~np.isfinite(values)).sum())} non-finite value(s)."
            )
        # like probabilities, the last bits may differ between batch sizes:
        # the rounded prediction guides the search and is reported; whether
        # it lies in the range is decided on the model's own number
        return np.column_stack([_round_significant(values, OUTPUT_DIGITS), values])

    def verify(self, states):
        """The model's ``predict`` (class indices) on encoded ``states``."""
        X = self.schema.to_model_input(states)
        return self.decision_of(self._call("predict", X))

    def decide(self, X):
        """The model's own decision (class index) on raw rows ``X``: its
        ``predict`` when it has one."""
        if self.has_predict:
            return self.decision_of(self._call("predict", X))
        return self._checked(self._call("predict_proba", X), len(X)).argmax(axis=1)

    def decision_of(self, labels):
        """Class indices of predicted ``labels``."""
        labels = np.asarray(labels)
        match = labels[:, None] == self.classes[None, :]
        known = match.any(axis=1)
        if labels.ndim != 1 or not known.all():
            unknown = labels[~known][:3] if labels.ndim == 1 else labels.shape
            raise ValueError(
                f"predict of the estimator returned {unknown!r}, not labels in "
                f"classes_ {self.classes.tolist()}, one per row."
            )
        return match.argmax(axis=1)

    def _checked(self, proba, n):
        proba = np.asarray(proba, dtype=float)
        if proba.shape != (n, self.classes.shape[0]):
            raise ValueError(
                "predict_proba of the estimator returned shape "
                f"{proba.shape}; expected ({n}, {self.classes.shape[0]}) "
                "(rows, classes_)."
            )
        bad = ~np.isfinite(proba) | (proba < -PROBA_TOLERANCE)
        bad |= proba > 1 + PROBA_TOLERANCE
        if bad.any():
            raise ValueError(
                "predict_proba of the estimator returned values that are not "
                f"probabilities (finite, in [0, 1]): {proba[bad][:3].tolist()} "
                f"in {int(bad.any(axis=1).sum())} of {n} rows."
            )
        sums = proba.sum(axis=1)
        off = np.abs(sums - 1.0) > PROBA_SUM_TOLERANCE
        if off.any():
            raise ValueError(
                "predict_proba of the estimator returned rows that do not sum to "
                f"1 (sums {np.unique(sums[off])[:3].tolist()} in {int(off.sum())} "
                f"of {n} rows), not the probabilities of its classes_: return one "
                "per class, summing to 1 (normalise the rows, say)."
            )
        return proba


def batch_note(n_rows, max_rows=None):
    """What a failed model call of ``n_rows`` rows says about their number:
    nothing for one row; else how many, and that the explainer's
    ``max_model_rows`` bounds them (a model may refuse large batches)."""
    if n_rows <= 1:
        return ""
    if max_rows is None or n_rows <= max_rows:
        return (
            f" (asked about {n_rows} rows in one call; the explainer's "
            "max_model_rows sets the most rows per call)"
        )
    return f" (asked about {n_rows} rows in calls of at most max_model_rows={max_rows})"


def in_chunks(rows, max_rows, ask):
    """``ask(part)`` for the parts of ``rows`` of at most ``max_rows`` rows
    (``None``: one part), concatenated."""
    n = rows.shape[0]
    if max_rows is None or n <= max_rows:
        return np.asarray(ask(rows))
    return np.concatenate(
        [
            np.asarray(ask(rows[start : start + max_rows]))
            for start in range(0, n, max_rows)
        ]
    )


@dataclass
class Usage:
    """What one instance cost the classifier."""

    n_calls: int = 0  # calls holding at least one of its states
    n_rows: int = 0  # its states sent to the classifier
    n_asked: int = 0  # its states asked for (sent or remembered)
    seconds: float = 0.0  # its share (by rows) of the calls' time


def answer_batch(
    model, memo, usage, groups, states, work=None, max_rows=None, hasher=None
):
    """The :class:`Answers` for ``states`` of several instances, in at most
    one call of ``model`` (a :class:`ModelAdapter`), or one per ``max_rows``
    distinct new states (``None``: one call).

    ``memo`` (:class:`AnswerMemo`) remembers the block's answers, and
    ``usage`` (:class:`Usage`, updated) holds one entry per instance of the
    block; ``groups`` lists, in order, the ``(member, slice)`` of the rows of
    ``states`` belonging to each instance. The work arrays and the answers
    are kept in ``work`` (valid until its next use), or fresh arrays when it
    is ``None``. ``hasher``
    (:class:`~sklearn_cscf._answers.StateHasher`): how the states reached
    from the block's instances are hashed, when known (``None``: every
    column, :func:`state_hashes`).
    """
    n = states.shape[0]
    members = np.array([member for member, _ in groups], dtype=np.intp)
    sizes = np.array([rows.stop - rows.start for _, rows in groups], dtype=np.intp)
    who = np.repeat(members, sizes)
    if hasher is None:
        hashes = state_hashes(states, work)
    else:
        hashes = hasher(states, who, work)
    work = Workspace() if work is None else work
    decision = work.empty("decision", n, np.intp)
    output = work.empty("output", (n, model.width)) if model.has_output else None
    slots = memo.lookup(hashes, who)
    known = slots >= 0
    remembered = memo.answers(slots[known])
    decision[known] = remembered.decision
    if output is not None:
        put_rows(output, np.flatnonzero(known), remembered.output)
    for member, size in zip(members.tolist(), sizes.tolist()):
        usage[member].n_asked += size
    novel = np.flatnonzero(~known)
    if novel.size == 0:
        return Answers(decision, output)
    # each distinct new state is asked once, by its first row (whichever
    # instance reached it first: who is sorted), and each instance remembers
    # its new states once
    inverse, sent = first_rows(hashes[novel])
    owners = who[novel]
    if (owners[sent][inverse] == owners).all():
        # no state reached by two instances (the usual case): each state's
        # first row is its instance's
        pairs = sent
    else:
        _, pairs = first_rows(inverse * np.intp(len(usage)) + owners)
    sent, pairs = novel[sent], novel[pairs]
    seconds = model.seconds
    fresh = _answer_in_chunks(model, states[sent], max_rows)
    seconds = model.seconds - seconds
    decision[novel] = fresh.decision[inverse]
    if output is not None:
        put_rows(output, novel, take_rows(fresh.output, inverse))
    memo.insert(hashes[pairs], who[pairs], Answers(decision, output).take(pairs))
    counts = np.bincount(who[sent], minlength=len(usage))
    for member in np.flatnonzero(counts).tolist():
        record, count = usage[member], int(counts[member])
        record.n_calls += 1
        record.n_rows += count
        record.seconds += seconds * count / sent.size
    return Answers(decision, output)


def _answer_in_chunks(model, states, max_rows):
    """The model's answers about ``states``, in calls of at most ``max_rows``
    rows (``None``: one call). Answers do not depend on the chunks: the
    probabilities are rounded (``PROBA_DECIMALS``)."""
    n = states.shape[0]
    if max_rows is None or n <= max_rows:
        return model.answer(states)
    parts = [
        model.answer(states[start : start + max_rows])
        for start in range(0, n, max_rows)
    ]
    outputs = [part.output for part in parts]
    return Answers(
        np.concatenate([part.decision for part in parts]),
        None if outputs[0] is None else np.concatenate(outputs),
    )


def answers_about(problem, states):
    """The model's :class:`Answers` about encoded ``states``, decided as the
    search of ``problem`` decides (its ``use_predict``), in calls of at most
    ``problem.max_model_rows`` rows (``None``: one call)."""
    model = ModelAdapter(
        problem.estimator, problem.schema, problem.classes, problem.use_predict
    )
    return _answer_in_chunks(model, states, problem.max_model_rows)


# ---------------------------------------------------------------------- #
# what the model is
# ---------------------------------------------------------------------- #
def decisions_now(estimator, schema, classes, encoded, errors, max_rows=None):
    """The model's :class:`Answers` about each row now (its own ``predict``
    decides), in calls of at most ``max_rows`` rows (``None``: one);
    decision ``-1`` where it raised, with the message (``{row: message}``)."""
    model = ModelAdapter(
        estimator, schema, classes, use_predict=hasattr(estimator, "predict")
    )
    n = encoded.shape[0]
    try:
        if n == 0:
            return Answers(np.empty(0, dtype=np.intp), None), {}
        return _answer_in_chunks(model, encoded, max_rows), {}
    except Exception:
        if errors == "raise":
            raise
    # one row at a time: which rows does the model fail on?
    decision = np.full(n, -1, dtype=np.intp)
    output = np.full((n, model.width), np.nan) if model.has_output else None
    failures = {}
    for r in range(n):
        try:
            one = model.answer(encoded[r : r + 1])
        except Exception as exc:
            failures[r] = describe_error(exc)
            continue
        decision[r] = one.decision[0]
        if output is not None:
            output[r] = one.output[0]
    return Answers(decision, output), failures


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

    def proba(part):
        X = schema.to_model_input(part)
        return model._checked(estimator.predict_proba(X), part.shape[0])

    doing = (
        f"in fit, on {rows.shape[0]} rows of the X given to fit"
        f"{batch_note(rows.shape[0], max_rows)}"
    )
    with asking(estimator, doing):
        chance = in_chunks(rows, max_rows, proba)
        if not model.has_predict:
            return False
        decided = in_chunks(
            rows, max_rows, lambda part: model.decide(schema.to_model_input(part))
        )
        return bool((decided != chance.argmax(axis=1)).any())


@contextmanager
def asking(estimator, doing):
    """Re-raise an exception of the model with what was being done: the same
    type where it can be built from a message (else ``RuntimeError``), the
    model's own exception as its ``__cause__``."""
    try:
        yield
    except Exception as exc:
        message = (
            f"The estimator {type(estimator).__name__} raised "
            f"{type(exc).__name__} {doing}: {exc}"
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

    doing = (
        f"in fit, in its {method} on {rows.shape[0]} rows of the X given to fit"
        f"{batch_note(rows.shape[0], max_rows)}"
    )
    with asking(estimator, doing):
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
    of the default classifier when ``None``)."""
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
    if estimator is None:
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
    with asking(estimator, "in its fit on the X and y given to the explainer's fit"):
        return estimator.fit(X, y)

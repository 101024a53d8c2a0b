"""The black box during ``explain``: the only module that calls the model.

- :class:`ModelAdapter` calls the fitted model (a classifier or a regressor)
  on encoded states (one call for a whole batch), checks what it returns and
  times the calls. The block's
  :class:`~sklearn_cscf._engine._evaluator.Evaluator` owns one, with the
  memo of the answers already given.
- :func:`decisions_now`: the model's answer about each row to explain, and
  the rows it fails on.

What the model is (fitted if needed, a classifier or a regressor, deciding by
``predict`` or not) is resolved in ``fit``
(:mod:`sklearn_cscf._compile`); what must be reached (the targets) lives in
:mod:`sklearn_cscf._engine._targets`.
"""

import time

import numpy as np

from sklearn_cscf._callable_checks import blame, describe_error
from sklearn_cscf._engine._feature_names import fitted_without_names, quiet_names
from sklearn_cscf._engine._memo import Answers

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

    @classmethod
    def of(cls, problem):
        """The adapter of the model of ``problem`` (a
        :class:`~sklearn_cscf._engine._block.Problem`), deciding as its
        search decides."""
        return cls(
            problem.estimator, problem.schema, problem.classes, problem.use_predict
        )

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
            proba = self.checked_proba(proba, states.shape[0])
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
        return self.checked_proba(self._call("predict_proba", X), len(X)).argmax(axis=1)

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

    def checked_proba(self, proba, n):
        """``proba`` (what ``predict_proba`` returned for ``n`` rows) as
        floats, checked: one column per class, finite, in [0, 1], rows
        summing to 1; a ``ValueError`` saying what is wrong otherwise."""
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


# ---------------------------------------------------------------------- #
# what the model is
# ---------------------------------------------------------------------- #
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


def _parts(rows, max_rows):
    """``rows`` in parts of at most ``max_rows`` rows (``None``: one part)."""
    n = rows.shape[0]
    if max_rows is None or n <= max_rows:
        return [rows]
    return [rows[start : start + max_rows] for start in range(0, n, max_rows)]


def in_chunks(rows, max_rows, ask):
    """``ask(part)`` for the parts of ``rows`` of at most ``max_rows`` rows
    (``None``: one part), concatenated."""
    parts = [np.asarray(ask(part)) for part in _parts(rows, max_rows)]
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def answer_in_chunks(model, states, max_rows):
    """``model``'s :class:`~sklearn_cscf._engine._memo.Answers` about
    ``states``, in calls of at most ``max_rows`` rows (``None``: one call).
    Answers do not depend on the calls' sizes: the probabilities are rounded
    (``PROBA_DECIMALS``)."""
    parts = [model.answer(part) for part in _parts(states, max_rows)]
    if len(parts) == 1:
        return parts[0]
    outputs = [part.output for part in parts]
    return Answers(
        np.concatenate([part.decision for part in parts]),
        None if outputs[0] is None else np.concatenate(outputs),
    )


def answers_about(problem, states):
    """The model's :class:`~sklearn_cscf._engine._memo.Answers` about encoded
    ``states``, decided as the search of ``problem`` decides (its
    ``use_predict``), in calls of at most ``problem.max_model_rows`` rows
    (``None``: one call)."""
    return answer_in_chunks(ModelAdapter.of(problem), states, problem.max_model_rows)


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
        return answer_in_chunks(model, encoded, max_rows), {}
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

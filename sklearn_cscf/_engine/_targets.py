"""What must be reached: the targets of the search, and how the explainer's
parameters become one.

- :class:`ClassTarget`: an acceptable class, or a set of them (one class,
  several, or every class but the one predicted now), optionally with a
  minimum probability.
- :class:`RangeTarget`: a range of a regressor's output, optionally with a
  margin.
- :func:`make_target`: the target of ``target_class`` (or ``target_range``),
  ``target_margin`` and ``min_target_proba``, checked against the model's
  classes.

A target says how far a model's answer is from what must be reached
(:meth:`~ClassTarget.gap`, 0 once reached), which score the frame reports
after a step, each row's *target code* (which classes it accepts, from the
model's decision about the row now) and the name of each code in the frame.
"""

import warnings

import numpy as np
import pandas as pd

from sklearn_cscf._engine._workspace import Workspace
from sklearn_cscf._status import STATUS_ALREADY_TARGET

# a state that misses the target class is at least this far from it
MIN_GAP = 1e-6
# a margin is kept to the decimals of the probabilities it comes from
PROBA_DECIMALS = 10


class ClassTarget:
    """Reach an acceptable class: the model's decision must be one of them.

    Each instance has a target code, a row of ``accept`` (``(n_codes,
    n_classes)`` bool: which classes are acceptable, one class or a set such
    as every class but the one predicted now); ``code`` is every row's code,
    ``None``: from each row's decision (any class but the one predicted now),
    and ``names`` name the codes in the frame. The gap of a state is 0 when
    the model decides for an acceptable class (and, with ``min_proba``, gives
    the acceptable classes at least that probability together). Otherwise it
    measures how far the state is (at least ``MIN_GAP``): the lead of the
    most probable unacceptable class over the most probable acceptable one
    when the decision is the arg-max of the probabilities; ``1 -
    P(acceptable)`` when the decision is the model's ``predict``
    (``use_predict``: its threshold may lie anywhere); how much probability
    is missing below ``min_proba``; 1 for a model without probabilities. The
    reported score of a state is the probability of the acceptable classes.
    """

    reported = "target_proba"

    def __init__(
        self, accept, use_predict=False, min_proba=None, *, code=None, names=None
    ):
        self.accept = np.asarray(accept, dtype=bool)
        # two classes, one of them acceptable per code: that class (else -1)
        single = (self.accept.sum(axis=1) == 1) & (self.accept.shape[1] == 2)
        self.single = np.where(single, self.accept.argmax(axis=1), -1)
        self.use_predict = use_predict
        self.min_proba = min_proba
        self.code = code
        self.names = names

    def codes(self, decision):
        """Each row's target code, from the model's decision now (-1: unknown)."""
        if self.code is not None:
            return np.full(decision.shape[0], self.code, dtype=np.intp)
        n = self.accept.shape[1]
        codes = 1 - decision if n == 2 else n + decision  # "opposite"
        return np.where(decision >= 0, codes, -1)

    def accepts(self, decision, codes):
        """Whether each decision is an acceptable class."""
        return self.accept[codes, decision]

    def gap(self, answers, codes, work=None):
        """How far each answer is from an acceptable class (0: reached).

        With a :class:`~sklearn_cscf._engine._workspace.Workspace` ``work``, the work
        arrays and the result come from it.
        """
        reached = self.accepts(answers.decision, codes)
        if answers.output is None:
            return np.where(reached, 0.0, 1.0)
        work = Workspace() if work is None else work
        proba, n = answers.output, codes.shape[0]
        distance = work.empty("distance", n)
        single = self.single[codes]
        if (single >= 0).all():
            # two classes: the acceptable one's probability, and the other's
            rows = work.arange(n)
            chance = proba[rows, single]
            if self.use_predict:
                np.subtract(1.0, chance, out=distance)
            else:
                np.subtract(proba[rows, 1 - single], chance, out=distance)
            return self._finished(distance, chance, reached, work)
        accept = work.take("accept", self.accept, codes)
        masked = work.full("gap_masked", proba.shape, 0.0)
        np.copyto(masked, proba, where=accept)
        chance = np.sum(masked, axis=1, out=work.empty("chance", n))
        if self.use_predict:
            np.subtract(1.0, chance, out=distance)
        else:
            # the most probable unacceptable class's lead over the most
            # probable acceptable one
            np.copyto(masked, proba)
            np.copyto(masked, -np.inf, where=accept)
            np.max(masked, axis=1, out=distance)
            np.copyto(masked, proba)
            np.copyto(masked, -np.inf, where=np.logical_not(accept, out=accept))
            best = np.max(masked, axis=1, out=work.empty("gap_best", n))
            np.subtract(distance, best, out=distance)
        return self._finished(distance, chance, reached, work)

    def _finished(self, distance, chance, reached, work):
        """The gap from the raw ``distance`` and the acceptable classes'
        probability ``chance`` (in place)."""
        n = distance.shape[0]
        np.maximum(distance, 0.0, out=distance)
        distance += MIN_GAP
        np.copyto(distance, 0.0, where=reached)
        if self.min_proba is not None:
            short = chance < self.min_proba
            floor = np.subtract(self.min_proba, chance, out=work.empty("floor", n))
            floor += MIN_GAP
            np.maximum(distance, floor, out=floor)
            np.copyto(distance, floor, where=short)
        return distance

    def score(self, answers, codes):
        if answers.output is None:
            return np.full(codes.shape[0], np.nan)
        return np.where(self.accept[codes], answers.output, 0.0).sum(axis=1)

    def margin_of(self, scores, codes):
        """How far each final ``scores`` (the target's probability after a
        plan) lies above the decision threshold: ``p - 0.5`` where the
        decision is the arg-max of two classes' probabilities. NaN where no
        fixed threshold is known: three classes or more (the line is the
        strongest other class's probability, which the score does not
        hold), a model deciding by a threshold of its own (``use_predict``)
        or without probabilities."""
        scores = np.asarray(scores, dtype=float)
        fixed = (self.single[codes] >= 0) & (not self.use_predict)
        return np.where(fixed, np.round(scores - 0.5, PROBA_DECIMALS), np.nan)


class RangeTarget:
    """Reach a range of a regressor's output.

    A state reaches it when the prediction lies in ``[low + margin, high -
    margin]`` (``low`` or ``high`` may be infinite); its gap is otherwise the
    distance to that interval in units of the range's width (at least
    ``MIN_GAP``). The reported score is the prediction.
    """

    reported = "prediction"

    def __init__(self, low, high, margin=0.0):
        self.low, self.high, self.margin = float(low), float(high), float(margin)
        width = self.high - self.low
        self.scale = width if np.isfinite(width) and width > 0 else 1.0
        # one target code, named by the range
        self.names = np.array([f"[{self.low:g}, {self.high:g}]"], dtype=object)

    def codes(self, decision):
        """Each row's target code: 0, the range."""
        return np.zeros(decision.shape[0], dtype=np.intp)

    def accepts(self, decision, codes):
        return np.ones(codes.shape[0], dtype=bool)  # decided by the value alone

    def gap(self, answers, codes, work=None):
        value, exact = answers.output[:, 0], answers.output[:, -1]
        low, high = self.low + self.margin, self.high - self.margin
        distance = np.maximum(np.maximum(low - value, value - high), 0.0) / self.scale
        inside = (exact >= low) & (exact <= high)
        return np.where(inside, 0.0, distance + MIN_GAP)

    def score(self, answers, codes):
        return answers.output[:, 0]

    def margin_of(self, scores, codes):
        """How far inside the range ``[low, high]`` each final prediction
        ``scores`` lies (to the nearer finite end)."""
        scores = np.asarray(scores, dtype=float)
        return np.minimum(scores - self.low, self.high - scores)


# ---------------------------------------------------------------------- #
# the explainer's parameters -> a target
# ---------------------------------------------------------------------- #
def make_target(
    classes,
    *,
    target_class=None,
    target_range=None,
    target_margin=0.0,
    min_target_proba=None,
    use_predict=False,
    has_proba=True,
):
    """The :class:`ClassTarget` of a classifier with ``classes``, or the
    :class:`RangeTarget` of a regressor (``classes=None``): ``target_range``
    with ``target_margin``.

    The keywords ``target_*`` and ``min_target_proba`` are the explainer's
    parameters; ``use_predict``: the classifier's decisions come from its
    ``predict``; ``has_proba``: the model has ``predict_proba``
    (``min_target_proba`` needs it). A :class:`ClassTarget`'s codes ``0 ..
    C-1`` accept one class, ``C .. 2C-1`` every class but one
    (``"opposite"`` on a multiclass model), ``2C`` a set given as
    ``target_class``.
    """
    if min_target_proba is not None and (classes is None or not has_proba):
        raise ValueError(
            "min_target_proba needs a classifier with predict_proba; for a "
            "regressor, use target_margin."
        )
    if classes is None:
        if target_class is not None:
            raise ValueError(
                f"target_class={target_class!r} names a class, but the "
                "estimator is explained as a regressor (target_range="
                f"{target_range!r}): its prediction must reach target_range. "
                "Leave target_class out (or None)."
            )
        low, high = check_range(target_range)
        if not high - low > 2 * target_margin:
            raise ValueError(
                f"target_range={target_range!r} leaves no room inside a "
                f"target_margin of {target_margin!r}."
            )
        return RangeTarget(low, high, target_margin)
    n = classes.shape[0]  # at least two (see _compile.model_classes)
    target = target_class
    accept = np.vstack([np.eye(n, dtype=bool), ~np.eye(n, dtype=bool)])
    names = [*classes.tolist(), *(f"not {c}" for c in classes.tolist())]
    named_set = False
    if isinstance(target, list | tuple | set | frozenset | np.ndarray | pd.Index):
        labels = list(target)
        flags = classes.dtype.kind != "b"  # True == 1 to numpy
        unknown = [
            v
            for v in labels
            if (flags and isinstance(v, bool | np.bool_)) or not (classes == v).any()
        ]
        if not labels or unknown:
            raise ValueError(
                f"target_class={target!r}: "
                + (f"{unknown} are not" if unknown else "an empty set holds no")
                + f" classes of the estimator ({classes.tolist()})."
            )
        chosen = np.isin(classes, labels)
        accept = np.vstack([accept, chosen])
        names.append(" or ".join(str(c) for c in classes[chosen]))
        code = 2 * n
        named_set = True
    elif target is None and n == 2:
        code = 1
    elif target is None or (isinstance(target, str) and target == "opposite"):
        code = None  # from each row's decision
        named_set = n > 2
    else:
        if isinstance(target, bool | np.bool_) and classes.dtype.kind != "b":
            # True == 1 to numpy: a boolean would pick the class 1 (or none)
            raise ValueError(
                f"target_class={target!r} is a boolean, but the estimator's "
                f"classes are {classes.tolist()}: give one of them."
            )
        matches = np.flatnonzero(classes == target)
        if matches.size == 0:
            raise ValueError(
                f"target_class={target!r} is not one of the estimator's "
                f"classes {classes.tolist()}."
            )
        code = int(matches[0])
    # a set of classes has a name, not a label: the column is then text
    names = np.array([str(v) for v in names], dtype=object) if named_set else classes
    return ClassTarget(accept, use_predict, min_target_proba, code=code, names=names)


def check_range(target_range):
    """``(low, high)`` of a target range, checked."""
    try:
        low, high = target_range
        low = -np.inf if low is None else float(low)
        high = np.inf if high is None else float(high)
    except (TypeError, ValueError):
        raise ValueError(
            f"target_range must be (low, high), two numbers; got {target_range!r}."
        ) from None
    if np.isnan(low) or np.isnan(high) or not low < high:
        raise ValueError(
            f"target_range must be (low, high) with low < high; got "
            f"{target_range!r} (use None, -inf or inf for an open end)."
        )
    return low, high


def warn_if_nothing_to_explain(
    statuses, target, codes, *, classes, target_class, target_range, stacklevel=3
):
    """Warn when several rows and every one already reaches the target (one
    accepted row is common; several and nothing else hint at a wrong
    target): is it the right one? ``codes``: each row's target code;
    ``stacklevel``: the frames from the caller to the user's code."""
    if len(statuses) < 2 or not (statuses == STATUS_ALREADY_TARGET).all():
        return
    labels = sorted({str(target.names[t]) for t in codes})
    if classes is None:
        message = (
            f"Every row of X is already predicted in the target "
            f"range {labels[0]}: nothing to explain. Is that the range "
            f"to reach? target_range={target_range!r}."
        )
    else:
        named = "the positive class" if target_class is None else "target_class"
        message = (
            f"Every row of X is already of the target class "
            f"{', '.join(map(repr, labels))}: nothing to explain. Is "
            f"that the class to reach? It is {named} (target_class="
            f"{target_class!r}); the model's classes are "
            f"{classes.tolist()}."
        )
    warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)

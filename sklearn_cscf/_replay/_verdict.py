"""The verdict of replay: the model asked about every replayed state, what
must be reached derived from the explainer's parameters on their own, and
whether each state reaches it as the frame says."""

import numpy as np
import pandas as pd

from sklearn_cscf._input_frames import to_model_frame
from sklearn_cscf._replay._checks import differs
from sklearn_cscf._replay._util import plain_value
from sklearn_cscf._status import STATUS_ALREADY_TARGET, STATUS_ERROR

# the decimals the explainer keeps of a probability (sklearn_cscf._engine._model's
# PROBA_DECIMALS; replay imports nothing of the search, and a test checks
# that the two agree)
PROBA_DECIMALS = 10


def check_reached(defs, records):
    """Ask the model about every state and check its verdicts."""
    # a row that failed in the search (status "error") is not asked again
    asked = [r for r in records if r["status"] != STATUS_ERROR]
    for record in records:
        record.update(predicted=None, target_proba=np.nan, accepted=False)
    predicted, proba, failures = verdicts(defs, [r["state"] for r in asked])
    starts = {}
    for record, label, row, failure in zip(asked, predicted, proba, failures):
        record["predicted"], record["proba"] = label, row
        if failure is not None:
            record["problems"].append(f"the model fails: {failure}")
        if record["step"] == 0:
            starts.setdefault(record["instance"], record)
    for record in asked:
        start = starts[record["instance"]]
        accept, name = TARGET_KINDS[target_kind(defs)](defs, start["predicted"])
        record["target_class"] = name
        record["accepted"], score = reaches(
            defs, record["predicted"], record.get("proba"), accept
        )
        if defs.classes is None:
            record["predicted"] = score
        else:
            record["target_proba"] = score
        check_verdict(defs, record, name, score)


def _bounds(defs):
    """``(low, high)`` of a regressor's ``target_range``, an open end
    (``None``) as an infinity, as the explainer documents it."""
    low, high = defs.target_range
    return (
        -np.inf if low is None else float(low),
        np.inf if high is None else float(high),
    )


def _range(defs, decision):
    """A regressor's range: no classes to accept, and its name in the frame."""
    low, high = _bounds(defs)
    return None, f"[{low:g}, {high:g}]"


def target_kind(defs):
    """The kind of target the explainer has, by the name of the search's
    class for it (:mod:`sklearn_cscf._engine._targets`)."""
    return "ClassTarget" if defs.classes is not None else "RangeTarget"


def check_verdict(defs, record, name, score):
    status, problems = record["status"], record["problems"]
    label = repr(plain_value(record["predicted"]))
    what = "the target" if defs.classes is None else f"the target {plain_value(name)!r}"
    if defs.classes is not None and defs.min_proba is not None:
        # the class alone is not the target: say the threshold, and the score
        what += f" with target_proba >= {defs.min_proba:g} (min_target_proba)"
        if score == score:  # not NaN
            label += f" (target_proba {score:.10g})"
    if record["step"] == 0:
        reported = record["reported_target"]
        if name is not None and (reported is None or str(reported) != str(name)):
            problems.append(
                f"target_class: reported {plain_value(reported)!r}, expected "
                f"{plain_value(name)!r}"
            )
        if status == STATUS_ALREADY_TARGET and not record["accepted"]:
            problems.append(
                f"status 'already_target', but the model predicts {label}, not {what}"
            )
        elif status != STATUS_ALREADY_TARGET and record["accepted"]:
            problems.append(f"status {status!r}, but the model reaches {what}")
        return
    column = "prediction" if defs.classes is None else "target_proba"
    problems += differs(defs, column, record["reported_score"], score)
    if record["final"] and not record["accepted"]:
        problems.append(f"the model predicts {label} after the last step, not {what}")


def verdicts(defs, states):
    """The model's decision on each state, and its probabilities (None
    without ``predict_proba``), in one call of each for all states (or for
    each ``max_model_rows`` of them, the explainer's); a state the model
    fails on gets ``None`` and the error's text."""
    size = defs.max_rows or max(len(states), 1)
    if len(states) <= size:
        return _verdicts(defs, states)
    predicted, proba, failures = [], [], []
    for start in range(0, len(states), size):
        part = _verdicts(defs, states[start : start + size])
        predicted.extend(part[0])
        proba.extend(part[1])
        failures.extend(part[2])
    return predicted, proba, failures


def _verdicts(defs, states):
    try:
        predicted, proba = predict_states(defs, states)
        if proba is None:
            proba = [None] * len(states)
        return predicted, proba, [None] * len(states)
    except Exception:  # one state at a time, to name the ones that fail
        pass
    predicted, proba, failures = [], [], []
    for state in states:
        try:
            label, row = predict_states(defs, [state])
            predicted.append(label[0])
            proba.append(None if row is None else row[0])
            failures.append(None)
        except Exception as exc:
            predicted.append(None)
            proba.append(None)
            failures.append(f"{type(exc).__name__}: {exc}")
    return predicted, proba, failures


def predict_states(defs, states):
    if not states:
        return [], None
    # the kind of frame the explainer was fitted on (polars: converted)
    library = defs.explainer.frame_library_
    data = to_model_frame(defs.model_input(states), library)
    estimator = defs.estimator
    proba = None
    if defs.classes is not None and hasattr(estimator, "predict_proba"):
        proba = np.asarray(estimator.predict_proba(data), dtype=float)
    if hasattr(estimator, "predict"):
        predicted = np.asarray(estimator.predict(data))
    else:
        predicted = defs.classes[proba.argmax(axis=1)]
    return list(predicted), None if proba is None else list(proba)


def target(defs, decision):
    """``(acceptable, name)``: which classes reach the target for an
    instance the model now assigns to ``decision``, and the target's name
    in the frame (see the explainer's ``target_class``)."""
    classes, target = defs.classes, defs.target_class
    if isinstance(target, list | tuple | set | frozenset | np.ndarray | pd.Index):
        accept = np.isin(classes, list(target))
        return accept, " or ".join(str(c) for c in classes[accept])
    if target is None and classes.shape[0] == 2:
        return classes == classes[1], classes[1]
    if target is None or (isinstance(target, str) and target == "opposite"):
        if decision is None:
            return np.zeros(classes.shape[0], dtype=bool), None
        accept = classes != decision
        if classes.shape[0] == 2:
            return accept, classes[accept][0]
        return accept, f"not {decision}"
    return classes == target, target


def reaches(defs, predicted, proba, accept):
    """Whether a state reaches the target, and its score (the probability
    of the acceptable classes, or a regressor's prediction)."""
    if predicted is None:
        return False, np.nan
    if defs.classes is None:
        low, high = _bounds(defs)
        value = float(predicted)
        margin = defs.target_margin
        return bool(low + margin <= value <= high - margin), value
    reached = bool(accept[np.flatnonzero(defs.classes == predicted)].any())
    if proba is None:
        return reached, np.nan
    chance = float(np.asarray(proba)[accept].sum())
    # the explainer keeps probabilities to PROBA_DECIMALS decimals (the last
    # bits differ between batch sizes), and so compares them with the
    # threshold: so does replay, or a plan at 0.99999999995 would be ok for
    # one and not the other with min_target_proba=1.0
    rounded = float(np.round(np.asarray(proba), PROBA_DECIMALS)[accept].sum())
    if defs.min_proba is not None and rounded < defs.min_proba:
        reached = False
    return reached, chance


# what replay derives, on its own, for each kind of target the search knows
TARGET_KINDS = {"ClassTarget": target, "RangeTarget": _range}

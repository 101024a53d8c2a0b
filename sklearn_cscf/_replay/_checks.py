"""The checks of replay: each compares a replayed step with what the frame
reports and names what does not hold.

A step is checked by :data:`STEP_CHECKS` in turn (its own flags, its old
value, its effort, discount and cost, then its sequence's totals); the
sequence's length against ``max_sequence_length``, and each state against
the reported states when given. The model's verdicts are in
:mod:`~sklearn_cscf._replay._verdict`.
"""

import sys
from dataclasses import dataclass

import numpy as np

from sklearn_cscf._replay._util import as_float, is_missing, show_value


@dataclass
class Totals:
    """What replay finds for a whole sequence."""

    cost: float
    effort: float
    gower: float
    length: int


def check_sequence(defs, records, steps, x0):
    """Compare each step and the sequence with what the frame reports."""
    taken = records[1:]
    totals = Totals(
        cost=float(sum(r["cost"] for r in taken)),
        effort=float(sum(r["effort"] for r in taken)),
        gower=gower_distance(defs, x0, taken[-1]["state"]),
        length=len(taken),
    )
    for record in records:
        record["sequence_cost"] = totals.cost
    for record in taken:
        step = record.pop("reported")
        # the score after the step: a probability, or a regressor's output
        record["reported_score"] = as_float(
            getattr(step, "prediction", np.nan)
            if defs.classes is None
            else step.target_proba
        )
        for check in STEP_CHECKS:
            record["problems"].extend(check(defs, record, step, totals))
    if defs.max_length is not None and len(taken) > defs.max_length:
        taken[-1]["problems"].append(
            f"{len(taken)} steps, more than max_sequence_length={defs.max_length}"
        )


def _flags(defs, record, step, totals):
    """The step's own checks: a repeat, the value space, the direction, the
    conditions, the effort."""
    problems = []
    if record["repeated"]:
        problems.append(f"action {record['action']!r} repeated")
    if not record["in_space"]:
        problems.append(f"new value {record['new_value']!r} outside the value space")
    if not record["in_direction"]:
        action = defs.actions[record["action"]]
        problems.append(
            f"new value {record['new_value']!r} against the direction "
            f"{action.direction!r} from {record['old_value']!r}"
        )
    if not record["precondition"]:
        problems.append("precondition fails")
    if not record["postcondition"]:
        problems.append("postcondition fails")
    if not (np.isfinite(record["effort"]) and record["effort"] >= 0):
        problems.append(
            f"effort {show_value(record['effort'])} is not a finite number >= 0"
        )
    return problems


def _old_value(defs, record, step, totals):
    name = record["feature"]
    old = (
        defs.label(name, step.old_value)
        if defs.categorical[name]
        else (np.nan if is_missing(step.old_number) else float(step.old_number))
    )
    if defs.same(name, old, record["old_value"]):
        return []
    return [f"old value: reported {old!r}, replayed {record['old_value']!r}"]


def _costs(defs, record, step, totals):
    """The effort, the discount and the cost, replayed and as reported."""
    problems = [
        *differs(defs, "effort", step.effort, record["effort"]),
        *differs(defs, "discount", step.discount, record["discount"]),
    ]
    reported_cost = as_float(step.cost)
    problems += differs(
        defs, "cost", reported_cost, record["cost"], how="replayed effort x discount"
    )
    product = as_float(step.effort) * as_float(step.discount)
    if not defs.close(reported_cost, product):
        problems.append(
            f"cost: reported {show_value(reported_cost)} is not the reported "
            f"effort x discount {show_value(product)}"
        )
    return problems


def _sequence(defs, record, step, totals):
    """The sequence's totals, on each of its steps."""
    problems = []
    for column, replayed, how in (
        ("sequence_cost", totals.cost, "replayed sum of costs"),
        ("sequence_effort", totals.effort, "replayed sum of efforts"),
        ("gower_distance", totals.gower, "replayed"),
    ):
        if hasattr(step, column):  # sequence_cost: always (a required column)
            problems += differs(defs, column, getattr(step, column), replayed, how)
    if is_missing(step.length) or int(step.length) != totals.length:
        problems.append(f"length: reported {step.length!r}, {totals.length} step(s)")
    return problems


# every step goes through these, in this order
STEP_CHECKS = (_flags, _old_value, _costs, _sequence)


def differs(defs, column, reported, replayed, how="replayed"):
    """``[problem]`` when the reported number is not the replayed one."""
    reported = as_float(reported)
    if defs.close(reported, replayed):
        return []
    return [f"{column}: reported {show_value(reported)}, {how} {show_value(replayed)}"]


def gower_distance(defs, x0, state):
    """Gower distance between ``x0`` and ``state`` (see the user guide): a
    feature's share is capped at the largest float / (4 * n_features), where
    a range below the smallest normal float makes it overflow."""
    cap = sys.float_info.max / (4 * len(defs.names))
    total = 0.0
    for name in defs.names:
        a, b = x0[name], state[name]
        if is_missing(a) or is_missing(b):
            total += float(is_missing(a) != is_missing(b))
        elif defs.categorical[name]:
            total += float(not defs.same(name, a, b))
        else:
            low, high = defs.ranges[name]
            total += min(abs(b - a) / (high - low), cap) if high > low else 0.0
    return total / len(defs.names)


def check_state(defs, record, reported_states):
    key = (record["instance"], record["solution"], record["step"])
    reported = reported_states.get(key)
    if reported is None:
        record["problems"].append("no reported state for this step")
        return
    state = record["state"]
    different = [
        f"{name} reported {reported[name]!r}, replayed {state[name]!r}"
        for name in defs.names
        if not defs.same(name, defs.raw(name, reported[name]), state[name])
    ]
    if different:
        record["problems"].append("state: " + ", ".join(different))

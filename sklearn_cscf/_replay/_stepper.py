"""The stepper of replay: each reported sequence re-applied to its row of
``X`` one step at a time, as a person would take it (the new value, the
action's effects, conditions, effort and the graph's discount), giving one
record per state."""

import numpy as np

from sklearn_cscf._replay._checks import check_sequence, check_state
from sklearn_cscf._replay._util import is_missing, one_value
from sklearn_cscf._status import STATUS_OK


def replay_instance(defs, label, rows, reported_states):
    """The records of one instance: each sequence, or its single row."""
    position = defs.position(label)
    x0 = defs.start_state(position)
    statuses = rows["status"].astype(object).unique().tolist()
    if any(is_missing(status) for status in statuses):
        raise ValueError(f"Instance {label!r} has rows without a status.")
    if STATUS_OK in statuses and len(statuses) > 1:
        raise ValueError(
            f"Instance {label!r} has sequences and the statuses {statuses}; "
            "an instance has either sequences (status 'ok') or one row of "
            "another status."
        )
    target = reported_target(defs, label, rows)
    if statuses != [STATUS_OK]:
        if len(rows) != 1:
            raise ValueError(
                f"Instance {label!r} has status {statuses[0]!r} on "
                f"{len(rows)} rows; a status other than 'ok' has one row."
            )
        record = start_record(defs, label, None, statuses[0], x0, target)
        record["final"] = True
        records = [record]
    else:
        if rows["solution"].isna().any():
            raise ValueError(
                f"Instance {label!r} has 'ok' rows without a solution number."
            )
        records = []
        for solution, steps in rows.groupby("solution", sort=True):
            records.extend(
                replay_sequence(
                    defs, label, int(solution), steps, x0, target, reported_states
                )
            )
    return records


def reported_target(defs, label, rows):
    """The instance's target as the frame names it (missing: unknown)."""
    values = rows["target_class"].astype(object).unique().tolist()
    if len(values) != 1:
        raise ValueError(
            f"Instance {label!r} has the target classes {values}; it needs exactly one."
        )
    return None if is_missing(values[0]) else values[0]


def start_record(defs, label, solution, status, x0, target):
    return {
        "instance": label,
        "solution": solution,
        "step": 0,
        "status": status,
        "reported_target": target,
        "final": False,
        "problems": [],
        "state": dict(x0),
    }


def replay_sequence(defs, label, solution, steps, x0, target, reported_states):
    steps = steps.sort_values("step", kind="stable")
    numbers = steps["step"].tolist()
    if any(is_missing(t) for t in numbers) or [int(t) for t in numbers] != list(
        range(1, len(numbers) + 1)
    ):
        raise ValueError(
            f"Instance {label!r}, solution {solution}: the steps are "
            f"{numbers}; a sequence's steps are numbered 1, 2, ... "
            "without gaps or repeats."
        )
    records = [start_record(defs, label, solution, STATUS_OK, x0, target)]
    state = dict(x0)
    taken = set()
    for step in steps.itertuples(index=False):
        record = replay_step(defs, label, step, state, taken)
        record["solution"] = solution
        state = record["state"]
        taken.add(step.action)
        records.append(record)
    records[-1]["final"] = True
    check_sequence(defs, records, steps, x0)
    if reported_states is not None:
        for record in records:
            check_state(defs, record, reported_states)
    return records


def replay_step(defs, label, step, before, taken):
    """Apply one reported step to the state ``before``, as a person would."""
    action = defs.actions.get(step.action)
    if action is None:
        raise ValueError(
            f"Instance {label!r}, step {step.step}: the action "
            f"{step.action!r} is not one of the explainer's actions "
            f"{list(defs.actions)}."
        )
    name = action.feature
    categorical = defs.categorical[name]
    if categorical:
        new = defs.label(name, step.new_value)
    else:
        new = np.nan if is_missing(step.new_number) else float(step.new_number)
    problems = []
    if str(step.feature) != str(name):
        problems.append(f"feature: reported {step.feature!r}, the action sets {name!r}")
    after = dict(before)
    after[name] = new
    view_before = defs.view(before)
    # each effect sees the direct change and the effects before it
    for target, fn in (action.effects or {}).items():
        value = one_value(fn(view_before, defs.view(after)))
        after[target] = defs.raw(target, value)
    view_after = defs.view(after)
    if action.cost is None:
        effort = default_effort(defs, action, before[name], after[name])
    else:
        effort = float(one_value(action.cost(view_before, view_after)))
    discount = 1.0
    if defs.graph is not None:
        g = defs.graph.discount(action.affected_features, view_before)
        discount = float(one_value(g))
    pre = post = True
    if action.precondition is not None:
        pre = bool(one_value(action.precondition(view_before)))
    if action.postcondition is not None:
        post = bool(one_value(action.postcondition(view_before, view_after)))
    space = defs.spaces[action.name]
    return {
        "instance": label,
        "step": int(step.step),
        "status": STATUS_OK,
        "action": action.name,
        "feature": name,
        "old_value": before[name],
        "new_value": new,
        "effort": effort,
        "discount": discount,
        "cost": effort * discount,
        "repeated": step.action in taken,
        "in_space": space.contains(new, defs),
        "in_direction": space.follows(action.direction, before[name], new, defs),
        "precondition": pre,
        "postcondition": post,
        "final": False,
        "problems": problems,
        "state": after,
        "reported": step,
    }


def default_effort(defs, action, old, new):
    """The effort of an action without ``cost`` (see :class:`Action`)."""
    scale = defs.spaces[action.name].scale
    if scale is None:
        return 1.0
    return abs(new - old) / scale

"""Data preparation of the plots: checks of the explanations frame, and the
plain tables and arrays the figures draw (no matplotlib here)."""

import numbers

import numpy as np
import pandas as pd

from sklearn_cscf._frames import (
    check_frame,
    check_steps,
    initial_values,
    instance_rows,
    is_ok,
    is_regression,
    plural,
    sequences,
    target_range,
)
from sklearn_cscf.plotting._style import proba_name

REQUIRED = {"instance", "solution", "step", "action", "status"}
END = "end"  # the block of the sequences that stopped


def check_explanations(explanations, columns=()):
    return check_frame(
        explanations,
        sorted({*REQUIRED, *columns}),
        returned_by="explain",
        unpack="return_states",
    )


def status_text(rows):
    """``status 'x'`` and, when the frame explains it, the message."""
    text = f"status {rows['status'].iloc[0]!r}"
    if "message" in rows.columns:
        messages = rows["message"].dropna()
        if len(messages):
            text += f": {messages.iloc[0]}"
    return text


def ok_rows(explanations, columns=()):
    """Every ``status == "ok"`` row of the frame, for plots across instances."""
    check_explanations(explanations, columns)
    ok = explanations[is_ok(explanations)]
    if ok.empty:
        counts = explanations["status"].astype(object).value_counts(dropna=False)
        raise ValueError(
            "explanations holds no sequence to plot: no row has status 'ok' "
            f"(statuses: {counts.to_dict()})."
        )
    check_steps(ok)
    return ok


def instance_steps(explanations, instance, columns=()):
    """The label and the ``status == "ok"`` rows of one instance, checked."""
    check_explanations(explanations, columns)
    if instance is None:
        instances = explanations["instance"].unique().tolist()
        if len(instances) != 1:
            raise ValueError(
                f"explanations holds {len(instances)} instances; choose one with "
                f"instance=..., e.g. one of {instances[:5]}."
            )
        instance = instances[0]
    ((instance, positions),) = instance_rows(explanations, [instance])
    rows = explanations.iloc[positions]
    ok = rows[is_ok(rows)]
    if ok.empty:
        raise ValueError(
            f"instance {instance!r} has no sequence to plot ({status_text(rows)})."
        )
    check_steps(ok)
    return instance, ok


def initial_lookup(initial_proba, frame, labels, bounded=True):
    """``{instance: probability}`` for ``labels`` (every one), read by the
    frame's one rule (:func:`~sklearn_cscf._frames.initial_values`); a
    regressor's prediction (``bounded=False``) may be any number."""
    order = frame["instance"].unique().tolist()
    low, high = (0, 1) if bounded else (-np.inf, np.inf)
    return initial_values(initial_proba, labels, order=order, low=low, high=high)


def check_proba(rows, where):
    """Raise when the frame has no target probability to plot."""
    missing = rows["target_proba"].isna().to_numpy()
    if missing.all():
        raise ValueError(
            f"target_proba is NaN for {where}: the model has no predict_proba, "
            "so there is no target probability to plot (ParetoFrontDisplay and "
            "ActionFlowDisplay need none)."
        )
    if missing.any():
        label = rows["instance"].iloc[int(np.argmax(missing))]
        raise ValueError(
            f"target_proba is NaN in {int(missing.sum())} of {len(missing)} step "
            f"rows (e.g. instance {label!r}); fill or drop those sequences first."
        )


def scope(table, solutions, max_length=None):
    """What a plot across instances counts, in words."""
    instances = plural(table["instance"].nunique(), "instance")
    if solutions == "cheapest":
        text = f"the cheapest sequence of each of {instances}"
    else:
        text = f"{plural(len(table), 'sequence')} of {instances}"
    if max_length is not None:
        text += f", at most {plural(max_length, 'step')}"
    return text


def select(table, solutions):
    """Every sequence, or each instance's cheapest one."""
    if solutions == "cheapest":
        return table.drop_duplicates("instance", keep="first").reset_index(drop=True)
    return table


def flows(sequences):
    """Block sizes ``{(position, name): n}`` and band sizes
    ``{(position, source, target): n}``; the target is ``"end"`` when a
    sequence stops after ``position`` while others go on (after the last
    position every sequence stops, which needs no band)."""
    nodes, bands = {}, {}
    last = max(len(actions) for actions in sequences)
    for actions in sequences:
        for t, name in enumerate(actions, start=1):
            nodes[t, name] = nodes.get((t, name), 0) + 1
            if t == last:
                continue
            target = actions[t] if t < len(actions) else END
            bands[t, name, target] = bands.get((t, name, target), 0) + 1
            if target == END:
                nodes[t + 1, END] = nodes.get((t + 1, END), 0) + 1
    return nodes, bands


def step_values(frame, ok, table, measure, initial_proba, column="target_proba"):
    """The selected step rows with ``value``: the ``column`` after the step
    (the probability, or a regressor's prediction), or its change over the
    step."""
    rows = ok.merge(table[["instance", "solution"]], on=["instance", "solution"])
    if column == "target_proba":
        check_proba(rows, "every step of the frame")
    rows = rows.sort_values("step", kind="stable")
    rows["value"] = rows[column].to_numpy(dtype=float)
    if measure == "change":
        if initial_proba is None:
            what, now = _NOW[column]
            raise ValueError(
                f"measure='change' needs initial_proba, the {what} of "
                "each instance itself, for the change made by step 1: e.g. "
                f"pd.Series({now}, index=X.index)."
            )
        labels = rows["instance"].unique().tolist()
        bounded = column == "target_proba"
        lookup = initial_lookup(initial_proba, frame, labels, bounded=bounded)
        # the value before each step: after the previous one, or now
        before = rows.groupby(["instance", "solution"], sort=False)["value"].shift(1)
        first = (rows["step"] == 1).to_numpy(dtype=bool)
        before[first] = rows.loc[first, "instance"].map(lookup).to_numpy(dtype=float)
        rows["value"] -= before.to_numpy(dtype=float)
    return rows


_NOW = {  # what initial_proba is, and how to get it
    "target_proba": ("probability", "model.predict_proba(X)[:, 1]"),
    "prediction": ("prediction", "model.predict(X)"),
}


def scored_column(ok):
    """What a chart of the steps draws: ``"prediction"`` for a regressor's
    frame, else ``"target_proba"``."""
    return "prediction" if is_regression(ok) else "target_proba"


def scale(ok, threshold, target_name):
    """What a chart draws the probabilities (or a regressor's predictions)
    against: the ``proba_name``, ``threshold`` and ``target_range`` of its
    display."""
    if is_regression(ok):
        name = "prediction" if target_name is None else target_name
        return {"proba_name": name, "threshold": None, "target_range": target_range(ok)}
    return {
        "proba_name": proba_name(ok, target_name),
        "threshold": decision_threshold(ok, threshold),
        "target_range": None,
    }


def decision_threshold(ok, threshold):
    """The probability a chart draws its decision line at: ``threshold``
    itself (a number, or None for no line), or for ``"auto"`` the frame's
    own: where its ``margin`` is measured from (0.5 for two classes decided
    by the arg-max of the probabilities); no line where the frame knows no
    fixed threshold (three classes or more, a threshold of the model's
    own: ``margin`` NaN, or a target named ``"not ..."`` or ``"... or
    ..."``); 0.5 for a frame without ``margin`` (saved by version 0.1)."""
    if not (isinstance(threshold, str) and threshold == "auto"):
        return threshold
    if "margin" in ok.columns:
        table = sequences(ok)
        lines = (table["target_proba"] - table["margin"]).dropna().to_numpy(float)
        if not len(lines):
            return None
        return float(np.round(np.median(lines), 6))
    if "target_class" in ok.columns:
        names = ok["target_class"].dropna().astype(str)
        if names.str.startswith("not ").any() or names.str.contains(" or ").any():
            return None
    return 0.5


def bootstrap(values, statistic, n_boot, confidence, rng):
    """The statistic and its percentile bootstrap interval (widened, in rare
    skewed samples, to contain the statistic itself)."""
    value = statistic(values)
    resamples = values[rng.integers(0, len(values), (n_boot, len(values)))]
    draws = statistic(resamples, axis=1)
    tail = 50 * (1 - confidence)
    low, high = np.percentile(draws, [tail, 100 - tail])
    return value, min(low, value), max(high, value)


def highlighted(highlight, instance, steps):
    """The ``solution`` number that ``highlight`` marks for ``instance``."""
    if isinstance(highlight, pd.DataFrame):
        check_explanations(highlight)
        rows = highlight[highlight["instance"] == instance]
        if rows.empty:
            raise ValueError(
                f"highlight holds no row of instance {instance!r}; pass the "
                "frame that choose_plan returned for these explanations."
            )
        ok = rows[is_ok(rows)]
        if ok.empty:
            raise ValueError(
                f"highlight has no chosen sequence for instance {instance!r} "
                f"({status_text(rows)})."
            )
        solutions = ok["solution"].dropna().unique().tolist()
        if len(solutions) != 1:
            raise ValueError(
                f"highlight holds {len(solutions)} sequences of instance "
                f"{instance!r} (solutions {solutions}); pass the frame that "
                "choose_plan returned, one sequence per instance."
            )
        solution = solutions[0]
    elif isinstance(highlight, numbers.Integral) and not isinstance(highlight, bool):
        solution = highlight
    else:
        raise TypeError(
            "highlight must be the DataFrame returned by choose_plan or a "
            f"solution number, got {type(highlight).__name__}."
        )
    known = steps["solution"].unique().tolist()
    if solution not in known:
        raise ValueError(
            f"instance {instance!r} has no solution {solution!r} to highlight; "
            f"its solutions are {sorted(known)}."
        )
    return solution


def choice_text(method, objectives, weights, max_steps):
    """How each plan was chosen, in words."""
    if method == "knee":
        names = objectives or ("sequence_cost", "gower_distance")
        text = f"the knee of {' and '.join(names)}"
    elif method == "weighted":
        text = "the weights " + ", ".join(
            f"{k}={v:g}" for k, v in dict(weights).items()
        )
    else:
        text = "the cheapest"
    if max_steps is not None:
        text += f", at most {plural(max_steps, 'step')}"
    return text


def reject_bool(name, value):
    """``True`` is an integer to Python, not a count to a person."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")


def step_statistics(rows, statistic, n_boot, confidence, rng):
    """Per action (sorted) and step position: ``action``, ``step``, ``n``
    (steps taken), ``value`` (the statistic of ``rows["value"]``), ``low``
    and ``high`` (its bootstrap interval); ``taken`` counts the action's
    steps in all."""
    out = []
    for name, taken in rows.groupby(rows["action"].astype(str), sort=True):
        for step, group in taken.groupby("step", sort=True):
            values = group["value"].to_numpy(dtype=float)
            value, low, high = bootstrap(values, statistic, n_boot, confidence, rng)
            out.append((name, int(step), len(values), value, low, high, len(taken)))
    columns = ["action", "step", "n", "value", "low", "high", "taken"]
    return pd.DataFrame(out, columns=columns)


def plan_lines(steps, sequences, max_solutions, all_orders, column="target_proba"):
    """One row per line of the step chart, the cheapest ``max_solutions``
    lines, grouped by plan: ``plan``, ``rank`` (of the plan among the
    shown), ``other`` (another order of the plan), ``cost``, ``actions`` and
    ``proba`` (tuples, one entry per step: the ``column`` after the step, the
    probability or a regressor's prediction). Each order is drawn with its
    cheapest values (a frame of ``all_values=True`` holds dearer ones)."""
    by_step = steps.set_index(["solution", "step"]).sort_index()
    lines, ranks = [], {}
    for _, seq in sequences.iterrows():
        plan = int(seq["plan"])
        other = plan in ranks
        if (other and not all_orders) or seq["other_values"]:
            continue
        ranks.setdefault(plan, len(ranks))
        rows = by_step.loc[seq["solution"]]
        lines.append((plan, ranks[plan], other, float(seq["cost"]), rows))
        if len(lines) == max_solutions:
            break
    if column == "target_proba":
        where = f"instance {steps['instance'].iloc[0]!r}"
        check_proba(pd.concat([line[-1] for line in lines]), where)
    out = []
    # the orders of a plan next to each other (stable: cheapest first)
    for plan, rank, other, cost, rows in sorted(lines, key=lambda line: line[1]):
        actions = tuple(str(a) for a in rows["action"])
        proba = tuple(rows[column].to_numpy(dtype=float).tolist())
        out.append((plan, rank, other, cost, actions, proba))
    columns = ["plan", "rank", "other", "cost", "actions", "proba"]
    return pd.DataFrame(out, columns=columns)


def shown_text(n_plans, n_shown):
    """Which plans a step chart shows, in words."""
    if n_plans == 1:
        return "its plan"
    if n_shown == n_plans:
        return f"all {n_plans} plans"
    return f"the cheapest {n_shown} of {n_plans} plans"


def pareto_points(steps, y):
    """One row per sequence of one instance, by cost: ``solution``, ``plan``,
    ``length``, ``cost``, ``y`` (the Gower distance, or the probability,
    prediction or margin after the last step) and ``other`` (another order
    of a plan, away from where the plan's cheapest order lies)."""
    if y == "target_proba" and is_regression(steps):
        raise ValueError(
            f"instance {steps['instance'].iloc[0]!r} is a regressor's: it has no "
            "target probability; use y='prediction' (or 'margin')."
        )
    why = None
    if y == "margin":
        why = (
            "margin is NaN where the model has no fixed decision threshold "
            "(three classes or more, a threshold of its own); use "
            "y='target_proba'."
        )
    table = sequences(steps, required=("sequence_cost", y), why=why)
    table["y"] = table[y].to_numpy(dtype=float)
    # hollow: another order of a plan, not where the plan's cheapest lies
    table["other"] = table.duplicated("plan")
    table["other"] = table.groupby(["plan", "cost", "y"])["other"].transform("all")
    columns = ["solution", "plan", "length", "cost", "y", "other"]
    return table[columns].astype({"plan": int, "length": int})

"""The output frame's contract, in one place: its columns, how result
objects become the tidy frames, and how every reader (the text, the choice of
a plan, the metrics, the plots) checks the frame and reads its sequences,
instances, plans and the values of ``initial_proba``."""

import itertools
import numbers
from collections.abc import Mapping
from dataclasses import asdict, fields

import numpy as np
import pandas as pd

from sklearn_cscf._input_frames import frame_library
from sklearn_cscf._result import Diagnostics, jaccard_distance, number_plans, plan_ids
from sklearn_cscf._status import STATUS_OK

DIAGNOSTICS = [f.name for f in fields(Diagnostics)]
# the key columns of the states frame; the features follow them
STATE_KEYS = ("instance", "solution", "step")

# text columns: pandas' string dtype with Python storage, whatever else is
# installed (pyarrow storage changes what groupby aggregations return)
TEXT = pd.StringDtype("python")

# a classifier's plan ending less than this above the decision threshold is
# fragile: the text flags it, the plots shade where it lies
FRAGILE = 0.05

# what returns the frames the public functions take
EXPLAIN = "SequentialCounterfactualExplainer.explain"
# what explain(X, <keyword>=True) returns besides the explanations
_RETURNED_WITH = {"return_states": "states", "return_details": "details"}


def check_frame(
    frame, columns, *, name="explanations", returned_by=EXPLAIN, unpack=None, then=None
):
    """``frame`` when it is a DataFrame holding ``columns``.

    Otherwise a ``TypeError`` (not a DataFrame) or a ``ValueError`` (the
    missing columns) naming the argument ``name`` and ``returned_by``, what
    gives such a frame. With ``unpack`` (``"return_states"`` or
    ``"return_details"``), a tuple is taken for what explain returns with
    that keyword, and the error says how to unpack it (and ``then``, what
    to do next).
    """
    if unpack is not None and isinstance(frame, tuple):
        other = _RETURNED_WITH[unpack]
        raise TypeError(
            f"{name} is a tuple; unpack what explain(X, {unpack}=True) returns: "
            f"explanations, {other} = explainer.explain(X, {unpack}=True)"
            + (f", then {then}." if then else ".")
        )
    if frame_library(frame) == "polars":
        raise TypeError(
            f"{name} is a polars DataFrame; pass the pandas DataFrame returned "
            f"by {returned_by} (e.g. {name}.to_pandas())."
        )
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(
            f"{name} must be the DataFrame returned by {returned_by}, got "
            f"{type(frame).__name__}."
        )
    missing = [c for c in dict.fromkeys(columns) if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{name} lacks the column(s) {missing}; pass the DataFrame returned "
            f"by {returned_by}."
        )
    return frame


def is_ok(frame):
    """Which rows of a frame have status ``"ok"`` (a missing status has not)."""
    return (frame["status"].astype(object) == STATUS_OK).to_numpy(dtype=bool)


COLUMNS = {
    "instance": None,  # dtype of the index of X
    "plan": "Int64",
    "solution": "Int64",
    "step": "Int64",
    "action": TEXT,
    "feature": None,  # text, or the integer positions of array columns
    "old_value": TEXT,
    "new_value": TEXT,
    "old_number": float,
    "new_number": float,
    "effort": float,
    "discount": float,
    "cost": float,
    "target_proba": float,
    "prediction": float,  # a regressor's output after the step
    # how far the plan ends past the line: its last target_proba above the
    # decision threshold, or its last prediction inside the target range
    "margin": float,
    "sequence_cost": float,
    "sequence_effort": float,
    "gower_distance": float,
    "length": "Int64",
    "target_class": None,  # dtype of the classes
    "reached_class": None,  # the model's class after the last step; classes' dtype
    "status": TEXT,
    "message": TEXT,  # what failed, for status "error"
}


def display_value(schema, j, value):
    """A raw value of feature ``j`` as text for people (``None`` if missing)."""
    if schema.is_categorical[j]:
        return None if value < 0 else str(schema.categories[j][int(value)])
    if np.isnan(value):
        return None
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return np.format_float_positional(value, precision=4, unique=True, trim="-")


def format_cost(value):
    """A cost for people: two decimals, or two significant digits below 0.01."""
    if value == 0 or abs(value) >= 0.01:
        return f"{value:.2f}"
    return f"{value:.2g}"


def changed(old, new):
    """Whether a feature's value changed from ``old`` to ``new`` (two missing
    values are no change)."""
    return not (pd.isna(old) and pd.isna(new)) and (
        pd.isna(old) or pd.isna(new) or old != new
    )


def _numeric(schema, j, value):
    return np.nan if schema.is_categorical[j] else float(value)


def build_frame(
    results,
    index,
    schema,
    actions,
    targets,
    reported="target_proba",
    objectives=(),
    classes=None,
    margin=None,
):
    """One row per step of each solution; one status row per other instance.

    ``targets`` names each target code (the class to reach, a set of
    classes, a range); ``reported`` is the column of the score after each
    step (``"target_proba"`` or ``"prediction"``); ``objectives`` are extra
    objectives reported as columns of their own (e.g. plausibility);
    ``classes`` are the model's classes, of which ``reached_class`` names
    the one after the last step (missing for a regressor); ``margin(scores,
    codes)`` says how far each sequence's last score lies past the line (the
    target's ``margin_of``; missing without it).
    """
    records = []
    for label, result in zip(index, results):
        # unknown (-1) when the model failed on an "opposite" row
        target_label = targets[result.target] if result.target >= 0 else None
        if result.status != STATUS_OK:
            records.append(
                {
                    "instance": label,
                    "target_class": target_label,
                    "status": result.status,
                    "message": result.message,
                }
            )
            continue
        plans = plan_ids(result.order, result.lengths)
        margins = np.full(result.n_solutions, np.nan)
        if margin is not None:
            last = result.lengths - 1
            finals = result.step_score[np.arange(result.n_solutions), last]
            codes = np.full(result.n_solutions, result.target, dtype=np.intp)
            margins = margin(finals, codes)
        for s in range(result.n_solutions):
            length = int(result.lengths[s])
            reached = None
            if classes is not None and result.reached is not None:
                reached = classes[result.reached[s]] if result.reached[s] >= 0 else None
            for t in range(length):
                action = actions[result.order[s, t]]
                j = action.feature
                old, new = result.states[s, t, j], result.states[s, t + 1, j]
                records.append(
                    {
                        "instance": label,
                        "plan": plans[s],
                        "solution": s,
                        "step": t + 1,
                        "action": action.name,
                        "feature": schema.names[j],
                        "old_value": display_value(schema, j, old),
                        "new_value": display_value(schema, j, new),
                        "old_number": _numeric(schema, j, old),
                        "new_number": _numeric(schema, j, new),
                        "effort": result.effort[s, t],
                        "discount": result.discount[s, t],
                        "cost": result.step_cost[s, t],
                        reported: result.step_score[s, t],
                        "margin": margins[s],
                        **{name: result.objectives[name][s] for name in objectives},
                        "sequence_cost": result.sequence_cost[s],
                        "sequence_effort": result.sequence_effort[s],
                        "gower_distance": result.objectives["gower_distance"][s],
                        "length": length,
                        "target_class": target_label,
                        "reached_class": reached,
                        "status": STATUS_OK,
                    }
                )
    columns = list(COLUMNS)
    at = columns.index("gower_distance") + 1
    columns[at:at] = list(objectives)  # after gower_distance
    frame = pd.DataFrame.from_records(records, columns=columns)
    dtypes = {name: dtype for name, dtype in COLUMNS.items() if dtype is not None}
    frame = frame.astype({**dtypes, **dict.fromkeys(objectives, float)})
    labels = {
        "instance": index.dtype,
        "feature": _label_dtype(schema.names),
        "target_class": _label_dtype(targets),
        "reached_class": TEXT if classes is None else _label_dtype(classes),
    }
    for name, dtype in labels.items():
        frame[name] = pd.array(frame[name].tolist(), dtype=dtype)
    return frame


def _label_dtype(labels):
    """Numbers keep their (nullable) dtype; other labels are text."""
    labels = np.asarray(labels)
    if labels.dtype.kind == "b":
        return "boolean"
    if labels.dtype.kind in "iu":
        unsigned = "U" if labels.dtype.kind == "u" else ""
        return f"{unsigned}Int{labels.dtype.itemsize * 8}"
    return labels.dtype if labels.dtype.kind == "f" else TEXT


def build_states(results, index, schema):
    """The state after each step (step 0: the instance) of every solution."""
    blocks, keys = [], []
    for label, result in zip(index, results):
        for s in range(result.n_solutions):
            length = int(result.lengths[s])
            blocks.append(result.states[s, : length + 1])
            keys.extend((label, s, t) for t in range(length + 1))
    states = np.vstack(blocks) if blocks else np.empty((0, schema.n_features))
    frame = schema.to_frame(states)
    head = pd.DataFrame(keys, columns=list(STATE_KEYS))
    head["instance"] = pd.array(head["instance"].tolist(), dtype=index.dtype)
    head = head.astype({"solution": "Int64", "step": "Int64"})
    return pd.concat([head, frame.reset_index(drop=True)], axis=1)


def build_details(results, index):
    """One row per instance: its status and diagnostics."""
    rows = [
        {
            "instance": label,
            "status": result.status,
            "n_solutions": result.n_solutions,
            **asdict(result.diagnostics),
            "message": result.message,
        }
        for label, result in zip(index, results)
    ]
    columns = ["instance", "status", "n_solutions", *DIAGNOSTICS, "message"]
    frame = pd.DataFrame.from_records(rows, columns=columns)
    frame["instance"] = pd.array(frame["instance"].tolist(), dtype=index.dtype)
    return frame.astype({"status": TEXT, "message": "string"})


# ---------------------------------------------------------------------- #
# Reading the frame (the text, the choice, the metrics and the plots)
# ---------------------------------------------------------------------- #
def check_steps(ok, returned_by=EXPLAIN):
    """Every sequence of the ``ok`` rows whole: a solution and a step on
    each row, steps 1..length, each once."""
    keys = [c for c in ("solution", "step", "action") if c in ok.columns]
    holes = ok[keys].isna().any(axis=1).to_numpy()
    if holes.any():
        label = ok["instance"].iloc[int(np.argmax(holes))]
        raise ValueError(
            f"a row of instance {label!r} has status 'ok' but no "
            f"{', '.join(keys[:-1])} or {keys[-1]}; pass the DataFrame returned "
            f"by {returned_by}."
        )
    grouped = ok.groupby(["instance", "solution"], sort=False)
    stats = grouped["step"].agg(["min", "max", "count", "nunique"])
    broken = (
        (stats["min"] != 1)
        | (stats["max"] != stats["count"])
        | (stats["nunique"] != stats["count"])
    )
    if "length" in ok.columns:  # a missing last step shows only here
        broken |= (grouped["length"].first() != stats["count"]).fillna(False)
    if broken.any():
        label, solution = stats.index[broken.to_numpy()][0]
        rows = ok[(ok["instance"] == label) & (ok["solution"] == solution)]
        raise ValueError(
            f"solution {solution} of instance {label!r} has the steps "
            f"{sorted(rows['step'].tolist())}; each sequence needs its rows "
            "for steps 1, 2, ..., length (do not drop step rows)."
        )
    return stats


def instance_rows(frame, instance=None):
    """``[(label, positions of its rows), ...]`` for ``instance``: a label or
    a list of labels, in that order (by default every instance, in the
    frame's order); each label as a plain Python value. A label the frame
    does not hold raises a ``ValueError`` naming some it holds."""
    codes, uniques = pd.factorize(frame["instance"], use_na_sentinel=False)
    known = pd.Index(uniques)
    if instance is None:
        chosen = list(range(len(known)))
    else:
        wanted = (
            list(instance)
            if isinstance(instance, list | np.ndarray | pd.Index | pd.Series)
            else [instance]
        )
        chosen = []
        for label in wanted:
            position = known.get_indexer([label])[0] if len(known) else -1
            if position < 0:
                more = " ..." if len(known) > 5 else ""
                raise ValueError(
                    f"instance {plain(label)!r} is not in explanations; it holds "
                    f"{known[:5].tolist()}{more}."
                )
            chosen.append(position)
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(len(known) + 1))
    return [(plain(known[k]), order[starts[k] : starts[k + 1]]) for k in chosen]


def plural(n, noun):
    """``1 plan``, ``2 plans``."""
    return f"{n} {noun}{'s' if n != 1 else ''}"


def plain(label):
    """``label`` as a plain Python value (``460``, not ``np.int64(460)``)."""
    return label.item() if isinstance(label, np.generic) else label


# the frame's per-sequence columns (the same on each step row of a
# sequence), which the table of sequences carries; and the columns it takes
# after the last step
PER_SEQUENCE = (
    "sequence_cost",
    "sequence_effort",
    "gower_distance",
    "plausibility",
    "target_class",
    "reached_class",
    "margin",
)
AFTER_LAST = ("target_proba", "prediction")


def sequences(frame, required=(), why=None):
    """One row per sequence of the ``"ok"`` rows of ``frame``: the table every
    post-hoc reader (the text, the choice of a plan, the plots) reads.

    ``frame`` is a whole frame or its ``"ok"`` rows, their steps checked
    whole (:func:`check_steps`). The columns, as far as the frame has them:

    - ``instance``, and ``code``: the instance's position among the
      frame's instances (as :func:`instance_rows` numbers them);
    - ``solution``, ``plan``, ``actions`` (a tuple in step order),
      ``length`` (its steps), ``cost`` (its ``sequence_cost``; the solution
      number where the frame has none: solutions are numbered by ascending
      cost) and ``other_values`` (the same steps as a cheaper sequence, with
      other values: a frame of ``all_values=True``);
    - each per-sequence column of the frame (``PER_SEQUENCE``:
      ``sequence_cost``, ``sequence_effort``, ``gower_distance``,
      ``plausibility``, ``target_class``, ``reached_class``, ``margin``):
      its value on the sequence's rows;
    - ``target_proba`` and ``prediction``: after the last step.

    By instance (in the frame's order), then cost. ``required`` names the
    columns every step row of a sequence must hold a value of: a missing
    one is a ``ValueError`` naming the instance, the solution and the
    column, then ``why`` (by default: pass explain's frame).
    """
    codes, _ = pd.factorize(frame["instance"], use_na_sentinel=False)
    ok = is_ok(frame)
    steps = frame[ok].assign(code=codes[ok])
    _check_values(steps, required, why)
    ordered = steps.sort_values("step", kind="stable")
    grouped = ordered.groupby(["code", "solution"], sort=False)
    table = grouped.size().rename("length").reset_index()
    if "action" in steps.columns:
        table["actions"] = (
            grouped["action"]
            .agg(lambda names: tuple(str(name) for name in names))
            .to_numpy()
        )
    firsts = [c for c in ("instance", "plan", *PER_SEQUENCE) if c in steps.columns]
    firsts = grouped[firsts].first()  # in the order of table's rows
    for name in firsts.columns:
        table[name] = firsts[name].to_numpy()
    lasts = [c for c in AFTER_LAST if c in steps.columns]
    if lasts:
        lasts = grouped[lasts].last()
        for name in lasts.columns:
            table[name] = lasts[name].to_numpy(dtype=float)
    # without sequence_cost: the solution number (numbered by ascending cost)
    cost = "sequence_cost" if "sequence_cost" in steps.columns else "solution"
    table["cost"] = table[cost].to_numpy(dtype=float)
    numbered = "plan" in steps.columns and not steps["plan"].isna().any()
    table = table.sort_values(["code", "cost", "solution"], kind="stable")
    table = table.reset_index(drop=True)
    if numbered:
        table["plan"] = table["plan"].to_numpy(dtype=int)
    elif "actions" in table:  # the frame's rule: one set of actions, one plan
        table["plan"] = [
            plan
            for _, group in table.groupby("code", sort=False)
            for plan in number_plans(group["actions"])
        ]
    table["other_values"] = (
        table.duplicated(["code", "actions"]) if "actions" in table else False
    )
    head = ["instance", "code", "solution", "plan", "actions", "length", "cost"]
    head = [c for c in head if c in table.columns]
    return table[head + [c for c in table.columns if c not in head]]


def _check_values(steps, required, why):
    """Every step row holds a value of each ``required`` column."""
    needed = [c for c in dict.fromkeys(required) if c in steps.columns]
    if not needed:
        return
    missing = steps[needed].isna().to_numpy()
    if missing.any():
        row, column = np.argwhere(missing)[0]
        label = plain(steps["instance"].iloc[row])
        solution = plain(steps["solution"].iloc[row])
        why = why or f"pass the DataFrame returned by {EXPLAIN}."
        raise ValueError(
            f"instance {label!r} has a NaN {needed[column]} (solution "
            f"{solution}); {why}"
        )


def free_orders(ok, states=None):
    """Whether the steps of each sequence may be taken in any order.

    The rule, from what the frame (and ``states``, when given) shows: a
    sequence of two or more steps has a free order when every step is
    undiscounted (``discount`` 1: no earlier step eased it through the
    feature graph), its steps set different features, every other order of
    its plan listed in the frame costs the same, and, with ``states``, no
    step changed a feature other than its own (a consequence could meet, or
    undo, another step). A cost that reads a feature another step of the plan
    changes (a cost by age, with another step changing age) is not visible
    in the frame; with such costs, read a free order as "no order found
    cheaper".

    Returns
    -------
    Series of bool, indexed by ``(instance, solution)``.
    """
    if "discount" in ok:
        undiscounted = np.isclose(ok["discount"].to_numpy(dtype=float), 1.0)
    else:
        undiscounted = np.zeros(len(ok), dtype=bool)
    grouped = ok.assign(_free=undiscounted).groupby(
        ["instance", "solution"], sort=False
    )
    free = (
        (grouped["step"].count() >= 2)
        & grouped["_free"].all()
        & (grouped["feature"].nunique() == grouped["feature"].size())
    )
    if "plan" in ok and "sequence_cost" in ok:
        table = sequences(ok)
        orders = table[~table["other_values"]]  # each at its cheapest values
        spread = orders.groupby(["instance", "plan"], sort=False)["cost"].agg(
            lambda c: np.ptp(c.to_numpy(dtype=float))
        )
        plans = pd.MultiIndex.from_frame(table[["instance", "plan"]])
        same = np.isclose(spread.reindex(plans).to_numpy(dtype=float), 0.0)
        same = pd.Series(
            same, pd.MultiIndex.from_frame(table[["instance", "solution"]])
        )
        free &= same.reindex(free.index).to_numpy()
    if states is not None and free.any():
        free &= _no_consequences(ok, states).reindex(free.index).fillna(False)
    return free.astype(bool)


def _no_consequences(ok, states):
    """Per ``(instance, solution)``: whether no step changed a feature other
    than its own, as the states show."""
    features, table = state_table(states)
    out = {}
    for (label, solution), seq in ok.groupby(["instance", "solution"], sort=False):
        # each step may change its own feature only: a consequence on another
        # step's feature (paying off debt out of savings) makes order matter
        own = [str(f) for f in seq.sort_values("step")["feature"]]
        path = [table.get((label, int(solution), t)) for t in range(len(own) + 1)]
        out[label, solution] = all(p is not None for p in path) and not any(
            str(name) != mine and changed(old, new)
            for mine, before, after in zip(own, path, path[1:])
            for name, old, new in zip(features, before, after)
        )
    index = pd.MultiIndex.from_tuples(list(out), names=["instance", "solution"])
    return pd.Series(list(out.values()), index=index, dtype=bool)


def state_table(states, labels=None):
    """``(features, {(instance, solution, step): values})`` of a states
    frame (of the instances ``labels`` only, when given); each state's
    values (objects) follow ``features``."""
    if labels is not None:
        states = states[states["instance"].isin(labels)]
    features = states.columns.drop(list(STATE_KEYS))
    keys = zip(
        states["instance"], states["solution"].astype(int), states["step"].astype(int)
    )
    return features, dict(zip(keys, states[features].to_numpy(dtype=object)))


def mean_jaccard_distance(action_sets):
    """The mean Jaccard distance between every two of ``action_sets`` (0
    for fewer than two)."""
    sets = list(action_sets)
    if len(sets) < 2:
        return 0.0
    pairs = itertools.combinations(sets, 2)
    return float(np.mean([jaccard_distance(a, b) for a, b in pairs]))


def initial_values(
    values, labels, *, order, X=None, low=-np.inf, high=np.inf, complete=True
):
    """``{label: number}`` for the instances ``labels`` from ``initial_proba``.

    One rule for every reader: a number (when one instance is read); a dict
    or Series keyed by instance label; or an array-like with one number per
    row of ``X`` (when given) or else per instance of the frame, in the
    frame's order (``order``: explain lists the rows of ``X`` in order).
    ``complete``: every label needs a number (else those without one are
    left out). Each number lies in ``[low, high]``.
    """
    if values is None:
        return {}
    if isinstance(values, pd.Series | Mapping):
        keyed = values
    elif isinstance(values, numbers.Real) or np.ndim(values) == 0:
        if len(labels) != 1:
            raise ValueError(
                f"initial_proba is a single number for {len(labels)} instances; "
                "pass one per instance (a dict or Series keyed by label)."
            )
        keyed = {labels[0]: values}
    else:
        array = np.asarray(values)
        if array.ndim != 1:
            raise ValueError(
                "initial_proba must hold one number per row, e.g. "
                f"model.predict_proba(X)[:, 1]; got shape {array.shape}."
            )
        rows = list(X.index) if X is not None else list(order)
        if len(array) != len(rows):
            where = "rows of X" if X is not None else "instances of the frame"
            raise ValueError(
                f"an array of initial_proba follows the {len(rows)} {where}, "
                f"got {len(array)} numbers; pass one per row, or a Series "
                "indexed by instance label."
            )
        keyed = dict(zip(rows, array.tolist()))
    found = {}
    for label in labels:
        if label not in keyed.keys():
            if complete:
                raise ValueError(
                    f"initial_proba has no probability for instance {label!r}; "
                    "index it by the instance labels, e.g. pd.Series("
                    "model.predict_proba(X)[:, 1], index=X.index)."
                )
            continue
        value = keyed[label]
        name = f"initial_proba[{label!r}]" if len(labels) > 1 else "initial_proba"
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a number, got {value!r}.")
        if not low <= value <= high or np.isnan(value):
            raise ValueError(f"{name} must be in [{low}, {high}], got {value!r}.")
        found[label] = float(value)
    return found


def is_regression(frame):
    """Whether the frame is a regressor's: a ``prediction`` after its steps
    and no target probability."""
    if "prediction" not in frame.columns:
        return False
    no_proba = "target_proba" not in frame or frame["target_proba"].isna().all()
    return bool(no_proba and frame["prediction"].notna().any())


def target_range(frame):
    """``(low, high)`` of a regressor's frame, read from its ``target_class``
    (``"[100, 140]"``, the range as explain names it, to 6 significant
    digits); ``None`` when the frame names no single range."""
    names = frame["target_class"].dropna().astype(str).unique()
    if len(names) != 1:
        return None
    text = names[0].strip()
    if not (text.startswith("[") and text.endswith("]")):
        return None
    try:
        low, high = (float(part) for part in text[1:-1].split(","))
    except ValueError:
        return None
    return low, high

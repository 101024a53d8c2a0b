"""Choosing one plan per person, and what the chosen plans share (the public
names are in :mod:`sklearn_cscf.selection`)."""

import numbers
from collections.abc import Mapping

import numpy as np
import pandas as pd

from sklearn_cscf._frames import (
    check_frame,
    check_steps,
    instance_rows,
    is_ok,
    sequences,
)
from sklearn_cscf._sklearn_compat import StrOptions, validate_params
from sklearn_cscf._status import STATUS_EXCEEDS_MAX_STEPS

__all__ = ["choose_plan", "summarize_recourse"]

# the per-sequence objectives the choice can weigh: columns of the frame
# (target_proba: its value after the last step); all minimised but those in
# _MAXIMISED
_OBJECTIVES = (
    "sequence_cost",
    "sequence_effort",
    "gower_distance",
    "length",
    "target_proba",
)
_MAXIMISED = ("target_proba",)
_KNEE_OBJECTIVES = ("sequence_cost", "gower_distance")
_REQUIRED = ("instance", "solution", "step", "status", "sequence_cost")
_SUMMARY_REQUIRED = ("action", "feature", "cost", "effort")
# scores this close (relative to the best) are ties, broken by the fixed order
_TIE_TOLERANCE = 1e-9
_PARAMS = {
    "explanations": "no_validation",  # check_frame names what gives it
    "method": [StrOptions({"knee", "weighted", "cheapest"})],
    # objectives, weights and max_steps depend on the method: checked below
    "objectives": "no_validation",
    "weights": "no_validation",
    "max_steps": "no_validation",
}
_SUMMARY_COLUMNS = {
    "action": object,
    "feature": object,
    "n_people": "int64",
    "share": float,
    "n_first": "int64",
    "share_first": float,
    "mean_step": float,
    "mean_cost": float,
    "mean_effort": float,
}


@validate_params(_PARAMS, prefer_skip_nested_validation=True)
def choose_plan(
    explanations, *, method="knee", objectives=None, weights=None, max_steps=None
):
    """Choose one sequence per instance from its Pareto-optimal sequences.

    The candidates of an instance are the sequences the frame holds for it
    (all of them, or those a compacted frame kept), with at most
    ``max_steps`` steps when it is given. Each candidate is scored on
    objectives named by the frame's per-sequence columns:
    ``"sequence_cost"``, ``"sequence_effort"`` (the cost without discounts),
    ``"gower_distance"`` and ``"length"`` (the number of steps), all
    minimised, and ``"target_proba"``, the probability of the target class
    after the last step, maximised (a plan that ends farther past the
    decision threshold is safer). Among the candidates:

    - ``method="knee"``: the knee of the front of ``objectives`` (by default
      sequence cost and Gower distance). The front is the candidates that no
      other candidate dominates on these objectives; each objective is
      min-max normalised over the front to [0, 1], 0 being its best value (an
      objective that is the same for the whole front is 0); the knee is the
      sequence with the smallest sum of normalised objectives. With two
      objectives the front's two extremes (say the cheapest and the closest
      sequence) sit at (0, 1) and (1, 0), so this is the point farthest below
      the straight line joining them: the knee of Das (1999) and of the
      Kneedle method, where giving up a little of one objective buys the most
      of the other. A front of one point is its own knee; on a front of two
      points both lie on the line, and the tie-break below picks the cheaper.
    - ``method="weighted"``: the smallest weighted sum of the normalised
      objectives named in ``weights``, normalised as for the knee over the
      front of the objectives with a positive weight. The knee is the
      weighted choice with equal weights on its objectives.
    - ``method="cheapest"``: the smallest ``sequence_cost``; with
      ``max_steps=k``, the cheapest plan of at most ``k`` steps.

    Ties (scores within a relative ``1e-9``) are broken, in this order, by
    the lower sequence cost, the fewer steps, the lower Gower distance (when
    the frame has it) and the lower ``solution`` number, so the choice is
    deterministic.

    Works on the full frame, on a compacted one and on one read back with
    :func:`pandas.read_csv`. Choosing again from a chosen frame returns it
    unchanged, with any method: each instance has one candidate left.

    Parameters
    ----------
    explanations : DataFrame
        The frame returned by
        :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`.
    method : {"knee", "weighted", "cheapest"}, default="knee"
        How to choose, as above.
    objectives : list of str, default=None
        The objectives of the knee, at least two of the names above; default
        ``["sequence_cost", "gower_distance"]``. Only for ``method="knee"``.
    weights : dict, default=None
        ``{objective: weight}`` for ``method="weighted"`` (and only for it):
        objective names as above, weights non-negative numbers, not all zero.
        An objective with weight 0 is ignored.
    max_steps : int, default=None
        Consider only the sequences with at most this many steps.

    Returns
    -------
    chosen : DataFrame
        The rows of the chosen sequences, with the columns (and ``plan`` and
        ``solution`` numbers) of ``explanations``: per instance, in the
        frame's order, the steps of its chosen sequence in order; an instance
        without a sequence keeps its own status row(s); an instance whose
        sequences all have more than ``max_steps`` steps gets one row with
        status ``"exceeds_max_steps"`` (and, when the frame has a ``message``
        column, a message giving its shortest sequence's length). The index
        is a new :class:`~pandas.RangeIndex`.

    Raises
    ------
    TypeError
        If ``explanations`` is not a DataFrame, or ``weights`` not a mapping.
    ValueError
        If the frame lacks a column that the choice needs, holds a broken
        sequence or a NaN objective; if ``method`` is unknown; if
        ``weights`` or ``objectives`` name an unknown objective, if a weight
        is negative or all are zero, or if an option is given to a method
        that does not use it.

    See Also
    --------
    summarize_recourse : What the chosen plans of many people have in common.
    sklearn_cscf.plotting.ParetoFrontDisplay : Mark the chosen sequence with
        ``highlight=``.

    Examples
    --------
    One person with four sequences: (cost, Gower distance) = (1, 0.4),
    (2, 0.1), (4, 0.05) and (3, 0.3), the last dominated by the second.
    Normalised over the front of the first three, the sums are 1, 0.48 and
    1: the knee is solution 1.

    >>> import pandas as pd
    >>> from sklearn_cscf import choose_plan
    >>> frame = pd.DataFrame({
    ...     "instance": [7, 7, 7, 7, 7], "plan": [0, 1, 2, 2, 3],
    ...     "solution": [0, 1, 2, 2, 3], "step": [1, 1, 1, 2, 1],
    ...     "action": ["save", "study", "move", "save", "quit"],
    ...     "sequence_cost": [1.0, 2.0, 4.0, 4.0, 3.0],
    ...     "gower_distance": [0.4, 0.1, 0.05, 0.05, 0.3],
    ...     "length": [1, 1, 2, 2, 1], "status": ["ok"] * 5,
    ... })
    >>> choose_plan(frame)[["solution", "step", "action"]]
       solution  step action
    0         1     1  study
    >>> choose_plan(frame, method="weighted", weights={"gower_distance": 1})[
    ...     ["solution", "step", "action"]]
       solution  step action
    0         2     1   move
    1         2     2   save
    >>> choose_plan(frame, method="cheapest")["solution"].tolist()
    [0]
    >>> choose_plan(frame, max_steps=1)["solution"].tolist()  # front: 0 and 1
    [0]
    """
    return _choose(explanations, method, objectives, weights, max_steps)


@validate_params(_PARAMS, prefer_skip_nested_validation=True)
def summarize_recourse(
    explanations, *, method="knee", objectives=None, weights=None, max_steps=None
):
    """What the chosen plans of many people have in common, per action.

    Chooses one sequence per instance with :func:`choose_plan` (a frame that
    :func:`choose_plan` returned is kept as it is, whatever the options),
    then, for each action taken in a chosen sequence: how many people's
    chosen plan uses it, how many start with it (the most common first
    steps), at which step on average, and what the step costs on average.
    This is the aggregate counterpart of DiCE's feature importance (how often
    each feature changes across counterfactuals) and, on one plan per person,
    of the paper's Fig. 5 (which draws every sequence:
    :class:`~sklearn_cscf.plotting.ActionFlowDisplay`).

    Parameters
    ----------
    explanations : DataFrame
        The frame returned by
        :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`, or
        the one :func:`choose_plan` returned.
    method : {"knee", "weighted", "cheapest"}, default="knee"
        How to choose each person's plan, as in :func:`choose_plan`.
    objectives : list of str, default=None
        The objectives of the knee, as in :func:`choose_plan`.
    weights : dict, default=None
        ``{objective: weight}`` for ``method="weighted"``, as in
        :func:`choose_plan`.
    max_steps : int, default=None
        Choose among the sequences with at most this many steps.

    Returns
    -------
    summary : DataFrame
        One row per action, the most used first (then the most often first,
        then by name), with the columns

        - ``action`` and ``feature``: the action and the feature it sets;
        - ``n_people``: the people whose chosen sequence takes it;
        - ``share``: ``n_people`` over the people with a chosen sequence
          (people without one, or without one of at most ``max_steps``
          steps, are not counted);
        - ``n_first`` and ``share_first``: the same for the people whose
          chosen sequence starts with it;
        - ``mean_step``: the mean step position at which it is taken
          (1 is first);
        - ``mean_cost`` and ``mean_effort``: the mean cost (effort times
          discount) and effort of its steps.

        Empty (with these columns) when no instance has a chosen sequence.

    Raises
    ------
    TypeError
        If ``explanations`` is not a DataFrame, or ``weights`` not a mapping.
    ValueError
        As :func:`choose_plan`, or if the frame lacks the ``action``,
        ``feature``, ``cost`` or ``effort`` column.

    See Also
    --------
    choose_plan : The choice of one sequence per person.
    sklearn_cscf.plotting.RecourseSummaryDisplay : This table as a bar chart.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_cscf import summarize_recourse
    >>> chosen = pd.DataFrame({
    ...     "instance": [1, 1, 2, 3, 3], "solution": [0, 0, 2, 1, 1],
    ...     "step": [1, 2, 1, 1, 2],
    ...     "action": ["study", "save", "save", "save", "move"],
    ...     "feature": ["education", "savings", "savings", "savings", "city"],
    ...     "effort": [2.0, 1.0, 3.0, 2.0, 1.0],
    ...     "cost": [2.0, 0.5, 3.0, 2.0, 1.0],
    ...     "sequence_cost": [2.5, 2.5, 3.0, 3.0, 3.0],
    ...     "gower_distance": [0.2, 0.2, 0.1, 0.3, 0.3], "status": ["ok"] * 5,
    ... })
    >>> summary = summarize_recourse(chosen)  # one sequence each: kept
    >>> summary[["action", "n_people", "share", "n_first", "mean_step"]]
      action  n_people     share  n_first  mean_step
    0   save         3  1.000000        2   1.333333
    1  study         1  0.333333        1   1.000000
    2   move         1  0.333333        0   2.000000
    >>> summary["mean_cost"].round(2).tolist()
    [1.83, 2.0, 1.0]
    """
    chosen = _choose(
        explanations, method, objectives, weights, max_steps, _SUMMARY_REQUIRED
    )
    return _summary(chosen)


# ---------------------------------------------------------------------- #
# The choice
# ---------------------------------------------------------------------- #
def _choose(explanations, method, objectives, weights, max_steps, required=()):
    """The rows of each instance's chosen sequence (or its status rows), the
    options and the frame (with the ``required`` columns) checked."""
    method, columns, weights, max_steps = _check_options(
        method, objectives, weights, max_steps
    )
    # length is counted from the steps when the frame lacks it
    needed = [c for c in (*_REQUIRED, *required, *columns) if c != "length"]
    frame = check_frame(explanations, needed, unpack="return_states")
    ok = is_ok(frame)
    # one row per sequence, each checked whole and holding its objectives
    check_steps(frame[ok][[c for c in frame if c != "action"]])
    table = sequences(
        frame,
        required=["sequence_cost", *columns],
        why="the choice needs every sequence's objectives.",
    )
    table["solution_number"] = pd.to_numeric(table["solution"]).to_numpy(dtype=float)
    chosen, shortest = {}, {}
    for code, candidates in table.groupby("code", sort=False):
        if max_steps is not None:
            shortest[code] = int(candidates["length"].min())
            candidates = candidates[candidates["length"] <= max_steps]
            if candidates.empty:
                continue
        at = _pick(candidates, method, columns, weights, "gower_distance" in frame)
        chosen[code] = candidates["solution"].iloc[at]
    pieces = []
    for code, (_, rows) in enumerate(instance_rows(frame)):
        if code in chosen:
            solution = chosen[code]
            rows = rows[ok[rows]]
            rows = rows[(frame["solution"].iloc[rows] == solution).to_numpy(bool)]
            steps = frame["step"].to_numpy(dtype=float)[rows]
            pieces.append(frame.iloc[rows[np.argsort(steps, kind="stable")]])
        elif code in shortest:
            message = (
                f"its shortest sequence has {shortest[code]} steps "
                f"(max_steps={max_steps})"
            )
            pieces.append(_status_row(frame, rows[0], message))
        else:
            pieces.append(frame.iloc[rows[~ok[rows]]])
    if not pieces:
        return frame.iloc[:0].reset_index(drop=True)
    return pd.concat(pieces, ignore_index=True)


def _pick(candidates, method, columns, weights, has_gower):
    """The position, in ``candidates``, of the chosen sequence."""
    if method == "cheapest":
        score = candidates["sequence_cost"].to_numpy(dtype=float)
        eligible = np.ones(len(candidates), dtype=bool)
    else:
        if method == "knee":
            names, w = list(columns), np.ones(len(columns))
        else:
            names = [name for name in columns if weights[name] > 0]
            w = np.array([weights[name] for name in names], dtype=float)
        signs = np.array([-1.0 if name in _MAXIMISED else 1.0 for name in names])
        values = candidates[names].to_numpy(dtype=float) * signs
        eligible = non_dominated(values)
        front = values[eligible]
        low, high = front.min(axis=0), front.max(axis=0)
        span = np.where(high > low, high - low, 1.0)
        score = ((values - low) / span) @ (w / w.sum())
        score[~eligible] = np.inf
    best = score[eligible].min()
    tied = eligible & (score <= best + _TIE_TOLERANCE * max(1.0, abs(best)))
    keys = [
        candidates["solution_number"].to_numpy(dtype=float),
        candidates["gower_distance"].to_numpy(dtype=float)
        if has_gower
        else np.zeros(len(candidates)),
        candidates["length"].to_numpy(dtype=float),
        candidates["sequence_cost"].to_numpy(dtype=float),
        ~tied,
    ]
    return int(np.lexsort(keys)[0])


def non_dominated(values):
    """Which rows no other row dominates (all objectives minimised); the
    Pareto front's plot uses it too."""
    no_worse = (values[:, None, :] <= values[None, :, :]).all(axis=2)
    better = (values[:, None, :] < values[None, :, :]).any(axis=2)
    dominates = no_worse & better  # [j, i]: row j dominates row i
    return ~dominates.any(axis=0)


def _status_row(frame, position, message):
    """One row of ``frame``'s columns for an instance whose sequences are all
    longer than ``max_steps``: its label and target class, the status, the
    message (when the frame has that column); every other cell missing."""
    source = frame.iloc[position]
    values = {
        "instance": source["instance"],
        "target_class": source.get("target_class"),
        "status": STATUS_EXCEEDS_MAX_STEPS,
        "message": message,
    }
    data = {}
    for name in frame.columns:
        dtype = frame[name].dtype
        value = values.get(name)
        try:
            data[name] = pd.array([value], dtype=dtype)
        except (TypeError, ValueError):
            data[name] = pd.array([value], dtype=_fallback(dtype, value))
    return pd.DataFrame(data)


def _fallback(dtype, value):
    """A dtype for ``value`` in a column of ``dtype`` that cannot hold it: a
    column read back from CSV without missing values (int64, bool) holds the
    missing value in its nullable counterpart; one read back all missing
    (float64, a message column) holds text as text."""
    if value is not None:
        return "string"
    kind = getattr(dtype, "kind", "O")
    return {"i": "Int64", "u": "UInt64", "b": "boolean", "f": float}.get(kind, object)


# ---------------------------------------------------------------------- #
# The summary
# ---------------------------------------------------------------------- #
def _summary(chosen):
    steps = chosen[is_ok(chosen)]
    n_people = steps["instance"].nunique()
    if n_people == 0:
        return pd.DataFrame(
            {name: pd.Series(dtype=dtype) for name, dtype in _SUMMARY_COLUMNS.items()}
        )
    steps = steps.assign(
        action=steps["action"].astype(str),
        feature=steps["feature"].astype(str),
        first=steps["step"].to_numpy(dtype=float) == 1,
    )
    grouped = steps.groupby("action", sort=True)
    summary = pd.DataFrame(
        {
            "feature": grouped["feature"].first(),
            "n_people": grouped["instance"].nunique().astype("int64"),
            "n_first": steps[steps["first"]]
            .groupby("action")["instance"]
            .nunique()
            .reindex(grouped.size().index, fill_value=0)
            .astype("int64"),
            "mean_step": grouped["step"].agg(lambda s: s.to_numpy(float).mean()),
            "mean_cost": grouped["cost"].agg(lambda s: s.to_numpy(float).mean()),
            "mean_effort": grouped["effort"].agg(lambda s: s.to_numpy(float).mean()),
        }
    )
    summary["share"] = summary["n_people"] / n_people
    summary["share_first"] = summary["n_first"] / n_people
    summary = summary.rename_axis("action").reset_index()
    summary = summary.sort_values(
        ["n_people", "n_first", "action"], ascending=[False, False, True], kind="stable"
    )
    return summary[list(_SUMMARY_COLUMNS)].reset_index(drop=True)


# ---------------------------------------------------------------------- #
# Checks
# ---------------------------------------------------------------------- #
def _check_objective(name, where):
    if not isinstance(name, str) or name not in _OBJECTIVES:
        raise ValueError(
            f"{where} names an unknown objective {name!r}; the objectives are "
            f"{list(_OBJECTIVES)}."
        )
    return name


def _check_options(method, objectives, weights, max_steps):
    """``(method, objective columns, weights, max_steps)``, checked."""
    if objectives is not None and method != "knee":
        raise ValueError(
            f"objectives is for method='knee'; method={method!r} does not use it."
        )
    if weights is not None and method != "weighted":
        raise ValueError(
            f"weights is for method='weighted'; method={method!r} does not use "
            "them (pass method='weighted')."
        )
    if max_steps is not None and (
        isinstance(max_steps, bool)
        or not isinstance(max_steps, numbers.Integral)
        or max_steps < 1
    ):
        raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}.")
    if method == "knee":
        objectives = _KNEE_OBJECTIVES if objectives is None else objectives
        if isinstance(objectives, str) or not hasattr(objectives, "__iter__"):
            raise TypeError(
                "objectives must be a list of objective names, e.g. "
                f"['sequence_cost', 'gower_distance'], got {objectives!r}."
            )
        columns = [_check_objective(name, "objectives") for name in objectives]
        if len(set(columns)) != len(columns):
            raise ValueError(f"objectives names an objective twice: {columns}.")
        if len(columns) < 2:
            raise ValueError(
                f"the knee needs at least two objectives, got {columns}; for one, "
                "use method='cheapest' or method='weighted'."
            )
        return method, tuple(columns), None, max_steps
    if method == "weighted":
        return method, *_check_weights(weights), max_steps
    return method, (), None, max_steps


def _check_weights(weights):
    """``(objective columns, {objective: weight})``, checked."""
    if weights is None:
        raise ValueError(
            "method='weighted' needs weights, e.g. weights={'sequence_cost': 2, "
            "'gower_distance': 1}."
        )
    if not isinstance(weights, Mapping | pd.Series):
        raise TypeError(
            "weights must map objective names to weights, e.g. "
            f"{{'sequence_cost': 2, 'gower_distance': 1}}, got "
            f"{type(weights).__name__}."
        )
    checked = {}
    for name, weight in weights.items():
        _check_objective(name, "weights")
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real):
            raise TypeError(f"weights[{name!r}] must be a number, got {weight!r}.")
        if not np.isfinite(weight) or weight < 0:
            raise ValueError(
                f"weights[{name!r}] must be a finite number >= 0, got {weight!r}."
            )
        checked[name] = float(weight)
    if not checked or not any(checked.values()):
        raise ValueError(
            f"weights are all zero (or none is given): {dict(weights)}; give at "
            "least one objective a positive weight."
        )
    return tuple(checked), checked

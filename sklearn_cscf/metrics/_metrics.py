"""The metrics on the frames (the public names are in :mod:`sklearn_cscf.metrics`)."""

from numbers import Real

import numpy as np
import pandas as pd

from sklearn_cscf._frames import EXPLAIN, check_frame, mean_jaccard_distance
from sklearn_cscf._sklearn_compat import Interval, StrOptions, validate_params
from sklearn_cscf._status import STATUS_ALREADY_TARGET, STATUS_OK

__all__ = [
    "combined_score",
    "diversity",
    "mean_sequence_cost",
    "mean_sequence_length",
    "seconds_per_row",
    "validity",
]

# the weights and scales of combined_score and ExplanationScorer
WEIGHT = [Interval(Real, 0, None, closed="left")]  # finite, >= 0
SCALE = [Interval(Real, 0, None, closed="neither")]  # finite, > 0
# the details' column of each clock
CLOCKS = {"cpu": "cpu_seconds", "wall": "total_seconds"}
# the parameters of the means over the solved rows
_SOLVED_MEAN_PARAMS = {
    "explanations": "no_validation",
    "nothing_solved": [Interval(Real, None, None, closed="both")],
}


# ---------------------------------------------------------------------- #
# Metrics on the frames
# ---------------------------------------------------------------------- #
@validate_params({"explanations": "no_validation"}, prefer_skip_nested_validation=True)
def validity(explanations):
    """Share of the rows needing recourse for which a sequence was found.

    Parameters
    ----------
    explanations : DataFrame
        The frame returned by
        :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`.

    Returns
    -------
    float
        The number of rows with status ``"ok"`` divided by the number of rows
        whose status is not ``"already_target"``, in ``[0, 1]``; 1.0 when no
        row needs recourse (there is nothing to fail). A row with any other
        status (``"no_counterfactual"``, ``"unreachable"``, ``"error"``) counts
        as a failure.

    See Also
    --------
    ExplanationScorer : Scores an explainer on data, this among them.
    mean_sequence_cost : The cost of the sequences found.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_cscf.metrics import validity
    >>> frame = pd.DataFrame({
    ...     "instance": [0, 0, 1, 2],
    ...     "status": ["ok", "ok", "no_counterfactual", "already_target"],
    ... })
    >>> validity(frame)  # instance 0 of the two needing recourse
    0.5
    """
    return _validity(_instances(explanations))


@validate_params(_SOLVED_MEAN_PARAMS, prefer_skip_nested_validation=True)
def mean_sequence_cost(explanations, *, nothing_solved=np.inf):
    """Mean cost of each solved row's least-cost sequence.

    Parameters
    ----------
    explanations : DataFrame
        The frame returned by
        :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`.
    nothing_solved : float, default=inf
        The value when rows need recourse but none got a sequence. The
        default, infinity, makes a search that found nothing the most
        expensive; scikit-learn's search then ranks it last, and warns that
        a score is not finite.

    Returns
    -------
    float
        The mean, over the rows with status ``"ok"``, of their smallest
        ``sequence_cost``; 0.0 when no row needs recourse (there is nothing
        to pay); ``nothing_solved`` when rows need recourse but none was
        solved. Rows without a sequence are left out, so compare costs
        together with :func:`validity` (or with :func:`combined_score`).

    See Also
    --------
    combined_score : Validity and cost (and time) in one number.
    mean_sequence_length : The number of steps of the same sequences.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_cscf.metrics import mean_sequence_cost
    >>> frame = pd.DataFrame({
    ...     "instance": [0, 0, 0, 1, 2],
    ...     "solution": [0, 1, 1, 0, None],
    ...     "sequence_cost": [2.0, 3.5, 3.5, 4.0, None],
    ...     "status": ["ok", "ok", "ok", "ok", "no_counterfactual"],
    ... })
    >>> mean_sequence_cost(frame)  # (2.0 + 4.0) / 2
    3.0
    """
    rows = _instances(explanations, ("solution", "sequence_cost"))
    return _solved_mean(rows, "cost", nothing_solved)


@validate_params(_SOLVED_MEAN_PARAMS, prefer_skip_nested_validation=True)
def mean_sequence_length(explanations, *, nothing_solved=np.inf):
    """Mean number of steps of each solved row's least-cost sequence.

    Parameters
    ----------
    explanations : DataFrame
        The frame returned by
        :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`.
    nothing_solved : float, default=inf
        The value when rows need recourse but none got a sequence.

    Returns
    -------
    float
        The mean, over the rows with status ``"ok"``, of the ``length`` of
        their least-cost sequence (of the cheaper-numbered one when two cost
        the same); 0.0 when no row needs recourse; ``nothing_solved`` when
        rows need recourse but none was solved.

    See Also
    --------
    mean_sequence_cost : The cost of the same sequences.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_cscf.metrics import mean_sequence_length
    >>> frame = pd.DataFrame({
    ...     "instance": [0, 0, 0, 1],
    ...     "solution": [0, 0, 1, 0],
    ...     "sequence_cost": [2.0, 2.0, 3.0, 4.0],
    ...     "length": [2, 2, 1, 1],
    ...     "status": ["ok", "ok", "ok", "ok"],
    ... })
    >>> mean_sequence_length(frame)  # (2 + 1) / 2
    1.5
    """
    rows = _instances(explanations, ("solution", "sequence_cost", "length"))
    return _solved_mean(rows, "length", nothing_solved)


@validate_params(
    {
        "explanations": "no_validation",
        "measure": [StrOptions({"plans", "jaccard"})],
    },
    prefer_skip_nested_validation=True,
)
def diversity(explanations, *, measure="plans"):
    """How many different plans each solved row got, or how different they are.

    A plan is the set of actions of a sequence: re-orderings of the same
    actions are one plan (the frame's ``plan`` column).

    Parameters
    ----------
    explanations : DataFrame
        The frame returned by
        :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`.
    measure : {"plans", "jaccard"}, default="plans"
        ``"plans"``: the number of distinct plans of a row. ``"jaccard"``:
        the mean Jaccard distance between the action sets of every two of
        its plans (1 minus shared actions over all actions of the two), 0.0
        for a row with one plan.

    Returns
    -------
    float
        The mean of the measure over the rows with status ``"ok"``; 0.0 when
        no row was solved (no plan at all), including when no row needs
        recourse. Higher is better.

    See Also
    --------
    validity : The share of the rows needing recourse that got a sequence.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_cscf.metrics import diversity
    >>> frame = pd.DataFrame({
    ...     "instance": [0, 0, 0, 0, 0, 1],
    ...     "solution": [0, 0, 1, 1, 2, 0],
    ...     "action": ["study", "save", "save", "study", "work", "save"],
    ...     "status": ["ok"] * 6,
    ... })
    >>> diversity(frame)  # instance 0: {study, save} and {work}; instance 1: one
    1.5
    >>> diversity(frame, measure="jaccard")  # (1.0 + 0.0) / 2
    0.5
    """
    return _solved_mean(_instances(explanations, ("solution", "action")), measure, 0.0)


@validate_params(
    {
        "explanations": "no_validation",
        "details": "no_validation",
        "clock": [StrOptions(set(CLOCKS))],
    },
    prefer_skip_nested_validation=True,
)
def seconds_per_row(explanations, details=None, *, clock="cpu"):
    """Search time per row needing recourse: CPU seconds, or wall-clock ones.

    Takes the two frames of one ``explain(X, return_details=True)`` call,
    as :func:`combined_score` does.

    Parameters
    ----------
    explanations : DataFrame
        The frame returned by
        :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`, as
        every metric takes. The details alone, ``seconds_per_row(details)``
        (the form of version 0.1), still work.
    details : DataFrame, default=None
        The details that ``explain(X, return_details=True)`` returns as its
        last item, one row per row of ``X``: the time is theirs.
    clock : {"cpu", "wall"}, default="cpu"
        ``"cpu"``: the details' ``cpu_seconds``, each row's share of the CPU
        time (``time.process_time``) of the process, or worker, that
        explained it: what the search cost, about the same on a busy machine
        as on an idle one. ``"wall"``: their ``total_seconds``, wall-clock
        seconds, which grow with whatever else runs on the machine (the form
        of version 0.1).

    Returns
    -------
    float
        The sum of the clock's seconds (each row's share of the work, not the
        time a parallel run took from start to end) divided by the number of
        rows whose status is not ``"already_target"``; 0.0 when no row needs
        recourse.

    See Also
    --------
    combined_score : Validity, cost and time in one number.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_cscf.metrics import seconds_per_row
    >>> explanations = pd.DataFrame({
    ...     "instance": [0, 1, 2],
    ...     "status": ["ok", "no_counterfactual", "already_target"],
    ... })
    >>> details = pd.DataFrame({
    ...     "instance": [0, 1, 2],
    ...     "status": ["ok", "no_counterfactual", "already_target"],
    ...     "cpu_seconds": [0.25, 0.75, 0.0],
    ...     "total_seconds": [0.5, 1.5, 0.0],  # a busy machine
    ... })
    >>> seconds_per_row(explanations, details)
    0.5
    >>> seconds_per_row(explanations, details, clock="wall")
    1.0
    """
    column = CLOCKS[clock]
    if details is None:
        if (
            isinstance(explanations, pd.DataFrame)
            and column not in explanations.columns
            and "step" in explanations.columns
        ):
            raise ValueError(
                "seconds_per_row needs the details too: seconds_per_row("
                "explanations, details), both returned by "
                f"{EXPLAIN}(X, return_details=True)."
            )
        details = explanations  # seconds_per_row(details), as in version 0.1
    else:
        check_frame(explanations, ("instance", "status"))
    if (
        clock == "cpu"
        and isinstance(details, pd.DataFrame)
        and column not in details.columns
        and "total_seconds" in details.columns
    ):
        raise ValueError(
            "details has no cpu_seconds (details saved by version 0.1?); pass "
            "clock='wall' to read its total_seconds, wall-clock seconds."
        )
    check_frame(
        details,
        ("status", column),
        name="details",
        returned_by=f"{EXPLAIN}(X, return_details=True) (its last item)",
    )
    needing = _statuses(details) != STATUS_ALREADY_TARGET
    if not needing.any():
        return 0.0
    seconds = details[column].to_numpy(dtype=float)
    return float(np.nansum(seconds) / needing.sum())


@validate_params(
    {
        "explanations": "no_validation",
        "details": "no_validation",
        "cost_weight": WEIGHT,
        "cost_scale": SCALE,
        "time_weight": WEIGHT,
        "time_scale": SCALE,
        "clock": [StrOptions(set(CLOCKS))],
    },
    prefer_skip_nested_validation=True,
)
def combined_score(
    explanations,
    details=None,
    *,
    cost_weight=0.5,
    cost_scale=1.0,
    time_weight=0.0,
    time_scale=1.0,
    clock="cpu",
):
    """Validity minus weighted, normalised cost and time: one number to choose by.

    ``validity - cost_weight * c / (c + cost_scale) - time_weight * t / (t +
    time_scale)``, with ``c`` the :func:`mean_sequence_cost` and ``t`` the
    :func:`seconds_per_row`. Each normalised term is 0 for nothing, 1/2 at its
    scale and tends to 1, so the score is always finite, at most 1.

    Parameters
    ----------
    explanations : DataFrame
        The frame returned by
        :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`.
    details : DataFrame, default=None
        The details of the same call (``return_details=True``); needed when
        ``time_weight`` is not 0.
    cost_weight : float, default=0.5
        Weight of the normalised cost; 0 ignores the cost. With 0.5, solving
        one more row of two is worth more than any saving in cost.
    cost_scale : float, default=1.0
        A typical sequence cost, in the units of the actions' costs: a mean
        cost this large counts half of ``cost_weight``.
    time_weight : float, default=0.0
        Weight of the normalised search time; 0 ignores the time.
    time_scale : float, default=1.0
        A typical number of seconds per row needing recourse.
    clock : {"cpu", "wall"}, default="cpu"
        The seconds of the time term: CPU seconds, or wall-clock ones (see
        :func:`seconds_per_row`).

    Returns
    -------
    float
        The score; greater is better. When nothing was solved the cost term
        is its maximum, ``cost_weight``; when no row needs recourse the score
        is ``1 - time_weight * t / (t + time_scale)``.

    See Also
    --------
    ExplanationScorer : This score as ``"combined"``, for grid search.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_cscf.metrics import combined_score
    >>> frame = pd.DataFrame({
    ...     "instance": [0, 1],
    ...     "solution": [0, None],
    ...     "sequence_cost": [3.0, None],
    ...     "status": ["ok", "no_counterfactual"],
    ... })
    >>> combined_score(frame, cost_weight=0.5, cost_scale=1.0)  # 0.5 - 0.5 * 3 / 4
    0.125
    """
    if time_weight and details is None:
        raise ValueError(
            "time_weight is not 0, so combined_score needs the details: pass "
            f"the last item of {EXPLAIN}(X, return_details=True)."
        )
    rows = _instances(explanations, ("solution", "sequence_cost"))
    seconds = (
        seconds_per_row(explanations, details, clock=clock) if time_weight else 0.0
    )
    valid, cost = _validity(rows), _solved_mean(rows, "cost", np.inf)
    return _combined(
        valid, cost, seconds, cost_weight, cost_scale, time_weight, time_scale
    )


def all_scores(explanations, details, **weights):
    """Every score of :class:`ExplanationScorer`, ``{name: value}`` (greater
    is better), from one read of the frames; ``weights`` are
    :func:`combined_score`'s ``cost_weight``, ``cost_scale``, ``time_weight``
    and ``time_scale``; the time is CPU seconds."""
    rows = _instances(explanations, ("solution", "sequence_cost", "length", "action"))
    seconds = seconds_per_row(explanations, details, clock="cpu")
    valid, cost = _validity(rows), _solved_mean(rows, "cost", np.inf)
    return {
        "validity": valid,
        "neg_mean_sequence_cost": -cost,
        "neg_mean_sequence_length": -_solved_mean(rows, "length", np.inf),
        "diversity": _solved_mean(rows, "plans", 0.0),
        "neg_seconds_per_row": -seconds,
        "combined": _combined(valid, cost, seconds, **weights),
    }


# ---------------------------------------------------------------------- #
# One row per instance
# ---------------------------------------------------------------------- #
def _instances(explanations, columns=()):
    """One row per instance of the frame, in its order: whether it needs
    recourse and is solved, and the measures of its sequences.

    Columns ``needs`` and ``solved``, and, as far as the frame's ``columns``
    allow, ``cost`` (the least sequence cost), ``length`` (of that
    sequence), ``plans`` (distinct action sets) and ``jaccard`` (their mean
    pairwise Jaccard distance); NaN for a row that was not solved.
    """
    frame = check_frame(
        explanations, ("instance", "status", *columns), unpack="return_details"
    )
    status = _statuses(frame)
    codes, labels = pd.factorize(frame["instance"], use_na_sentinel=False)
    first = np.unique(codes, return_index=True)[1]
    rows = pd.DataFrame(index=pd.RangeIndex(len(labels)))
    rows["needs"] = status[first] != STATUS_ALREADY_TARGET
    ok = status == STATUS_OK
    rows["solved"] = np.isin(np.arange(len(labels)), codes[ok])
    if "solution" not in columns:
        return rows
    steps = frame.loc[ok].assign(_code=codes[ok])
    if steps["solution"].isna().any():
        raise ValueError(
            "a row of explanations has status 'ok' but no solution; pass the "
            f"DataFrame returned by {EXPLAIN}."
        )
    keep = ["_code", "solution", *(c for c in columns if c != "solution")]
    by_sequence = steps[keep].groupby(["_code", "solution"], sort=False)
    sequences = pd.DataFrame(index=by_sequence.size().index)
    if "sequence_cost" in columns:
        sequences["cost"] = by_sequence["sequence_cost"].first()
        if "length" in columns:
            sequences["length"] = by_sequence["length"].first()
        # the least-cost sequence of each instance; ties: the first listed
        cheapest = (
            sequences.reset_index()
            .sort_values(["_code", "cost", "solution"], kind="stable")
            .drop_duplicates("_code")
            .set_index("_code")
        )
        for name in sequences.columns:  # the cost, and the length
            rows[name] = cheapest[name].astype(float)
    if "action" in columns:
        # a plan is a set of actions: re-orderings of it are one plan
        plans = by_sequence["action"].agg(frozenset)
        distinct = {
            code: list(dict.fromkeys(sets))
            for code, sets in plans.groupby(level="_code", sort=False)
        }
        rows["plans"] = pd.Series({c: len(s) for c, s in distinct.items()}, dtype=float)
        rows["jaccard"] = pd.Series(
            {c: mean_jaccard_distance(s) for c, s in distinct.items()}, dtype=float
        )
    return rows


def _statuses(frame):
    """The status column as an array of text; a missing status is ``""``
    (a row needing recourse without a sequence)."""
    return frame["status"].astype("string").fillna("").to_numpy(dtype=object)


def _validity(rows):
    needs = rows["needs"].to_numpy()
    if not needs.any():
        return 1.0
    return float((rows["solved"].to_numpy() & needs).sum() / needs.sum())


def _solved_mean(rows, column, nothing_solved):
    if not rows["needs"].any():
        return 0.0
    values = rows.loc[rows["solved"], column]
    return float(values.mean()) if len(values) else float(nothing_solved)


def _combined(valid, cost, seconds, cost_weight, cost_scale, time_weight, time_scale):
    return float(
        valid
        - cost_weight * _normalised(cost, cost_scale)
        - time_weight * _normalised(seconds, time_scale)
    )


def _normalised(value, scale):
    """``value / (value + scale)``: 0 for nothing, 1/2 at ``scale``, 1 at inf."""
    return 1.0 if np.isinf(value) else value / (value + scale)

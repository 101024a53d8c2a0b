"""How good a set of explanations is, and scorers to tune the search with.

Metrics read the frames that
:meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain` returns
(``explain(X, return_details=True)``), and work as well on a frame read back
from CSV:

- :func:`validity`: the share of the rows needing recourse that got a
  sequence;
- :func:`mean_sequence_cost` and :func:`mean_sequence_length`: the cost and
  number of steps of each solved row's least-cost sequence, averaged;
- :func:`diversity`: how many different plans (sets of actions) each solved
  row got, or how different they are;
- :func:`seconds_per_row`: the search time per row needing recourse;
- :func:`combined_score`: validity minus weighted, normalised cost and time,
  one number to choose by.

:class:`ExplanationScorer` is a scikit-learn scorer, ``scorer(explainer, X,
y=None)``: it explains ``X`` once and returns all these scores as a dict
(greater is better: cost, length and time are negated), or one of them.
With :class:`~sklearn.model_selection.GridSearchCV`, pass it as ``scoring=``
and a score's name as ``refit=``.

A row *needs recourse* when its status is not ``"already_target"``; it is
*solved* when its status is ``"ok"``. Any other status (``"no_counterfactual"``,
``"error"``) is a row needing recourse without a sequence.
"""

from numbers import Real

import numpy as np
import pandas as pd

from sklearn_cscf._frames import EXPLAIN, check_frame
from sklearn_cscf._status import STATUS_ALREADY_TARGET, STATUS_OK

__all__ = [
    "ExplanationScorer",
    "combined_score",
    "diversity",
    "mean_sequence_cost",
    "mean_sequence_length",
    "seconds_per_row",
    "validity",
]

_DIVERSITY_MEASURES = ("plans", "jaccard")

# What ExplanationScorer returns, each with greater is better.
SCORES = (
    "validity",
    "neg_mean_sequence_cost",
    "neg_mean_sequence_length",
    "diversity",
    "neg_seconds_per_row",
    "combined",
)


# ---------------------------------------------------------------------- #
# Metrics on the frames
# ---------------------------------------------------------------------- #
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
        status (``"no_counterfactual"``, ``"error"``) counts as a failure.

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
    rows = _instances(explanations)
    return _validity(rows)


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
    _check_real("nothing_solved", nothing_solved)
    rows = _instances(explanations, ("solution", "sequence_cost"))
    return _solved_mean(rows, "cost", nothing_solved)


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
    _check_real("nothing_solved", nothing_solved)
    rows = _instances(explanations, ("solution", "sequence_cost", "length"))
    return _solved_mean(rows, "length", nothing_solved)


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
    if measure not in _DIVERSITY_MEASURES:
        raise ValueError(
            f"measure must be one of {list(_DIVERSITY_MEASURES)}, got {measure!r}."
        )
    rows = _instances(explanations, ("solution", "action"))
    values = rows.loc[rows["solved"], measure]
    return float(values.mean()) if len(values) else 0.0


def seconds_per_row(details):
    """Search time per row needing recourse.

    Parameters
    ----------
    details : DataFrame
        The details that ``explain(X, return_details=True)`` returns as its
        last item, one row per row of ``X``.

    Returns
    -------
    float
        The sum of ``total_seconds`` (each row's share of the work, not the
        wall-clock time of parallel workers) divided by the number of rows
        whose status is not ``"already_target"``; 0.0 when no row needs
        recourse.

    See Also
    --------
    combined_score : Validity, cost and time in one number.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_cscf.metrics import seconds_per_row
    >>> details = pd.DataFrame({
    ...     "status": ["ok", "no_counterfactual", "already_target"],
    ...     "total_seconds": [0.25, 0.75, 0.0],
    ... })
    >>> seconds_per_row(details)
    0.5
    """
    _check_details(details)
    needing = _statuses(details) != STATUS_ALREADY_TARGET
    if not needing.any():
        return 0.0
    seconds = details["total_seconds"].to_numpy(dtype=float)
    return float(np.nansum(seconds) / needing.sum())


def combined_score(
    explanations,
    details=None,
    *,
    cost_weight=0.5,
    cost_scale=1.0,
    time_weight=0.0,
    time_scale=1.0,
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
    _check_weight("cost_weight", cost_weight)
    _check_weight("time_weight", time_weight)
    _check_scale("cost_scale", cost_scale)
    _check_scale("time_scale", time_scale)
    if time_weight and details is None:
        raise ValueError(
            "time_weight is not 0, so combined_score needs the details: pass "
            f"the last item of {EXPLAIN}(X, return_details=True)."
        )
    rows = _instances(explanations, ("solution", "sequence_cost"))
    seconds = seconds_per_row(details) if time_weight else 0.0
    return _combined(
        _validity(rows),
        _solved_mean(rows, "cost", np.inf),
        seconds,
        cost_weight,
        cost_scale,
        time_weight,
        time_scale,
    )


# ---------------------------------------------------------------------- #
# The scorer
# ---------------------------------------------------------------------- #
class ExplanationScorer:
    """Scorer of an explainer on ``X``, all scores from one ``explain`` call.

    ``scorer(explainer, X, y=None)`` runs
    ``explainer.explain(X, return_details=True)`` once and computes, from
    that one result, the scores below (greater is better: cost, length and
    time are negated, as scikit-learn's ``neg_`` scores are):

    - ``"validity"``: :func:`validity`;
    - ``"neg_mean_sequence_cost"``: minus :func:`mean_sequence_cost`;
    - ``"neg_mean_sequence_length"``: minus :func:`mean_sequence_length`;
    - ``"diversity"``: :func:`diversity`, the distinct plans per solved row;
    - ``"neg_seconds_per_row"``: minus :func:`seconds_per_row`;
    - ``"combined"``: :func:`combined_score` with this scorer's weights and
      scales.

    Passed as ``scoring=`` to
    :class:`~sklearn.model_selection.GridSearchCV`, a scorer of several scores
    fills ``cv_results_`` with ``mean_test_<name>`` for each; ``refit=`` names
    the one that picks ``best_params_``: ``"combined"`` trades validity for
    cost (and time). A dict of single-score scorers (``scoring={"validity":
    ExplanationScorer("validity"), ...}``) would run the search once per
    score.

    When a fold solves none of its rows, its cost and length are infinite
    (minus infinity as scores): scikit-learn ranks the candidate last on
    them and warns that a score is not finite. ``"validity"``,
    ``"diversity"`` and ``"combined"`` are always finite.

    Parameters
    ----------
    scores : str or list of str, default=None
        The scores to compute: one name gives a float (a single-metric
        scorer), a list a dict; ``None`` gives a dict of all six.
    cost_weight : float, default=0.5
        Weight of the normalised cost in ``"combined"``.
    cost_scale : float, default=1.0
        A typical sequence cost, in the units of the actions' costs.
    time_weight : float, default=0.0
        Weight of the normalised search time in ``"combined"``.
    time_scale : float, default=1.0
        A typical number of seconds per row needing recourse.

    See Also
    --------
    combined_score : The ``"combined"`` score on frames.
    validity : The share of the rows needing recourse that got a sequence.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.frozen import FrozenEstimator
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn_cscf import Action, SequentialCounterfactualExplainer
    >>> from sklearn_cscf.metrics import ExplanationScorer
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"income": rng.uniform(0, 100, 200),
    ...                   "debt": rng.uniform(0, 50, 200)})
    >>> y = (X["income"] - X["debt"] > 40).astype(int)
    >>> model = LogisticRegression().fit(X, y)
    >>> explainer = SequentialCounterfactualExplainer(
    ...     FrozenEstimator(model),
    ...     actions=[Action("earn_more", "income", values=(0, 200),
    ...                     direction="increase",
    ...                     cost=lambda b, a: (a["income"] - b["income"]) / 10),
    ...              Action("pay_debt", "debt", values=(0, 50),
    ...                     direction="decrease",
    ...                     cost=lambda b, a: (b["debt"] - a["debt"]) / 10)],
    ...     n_generations=5, random_state=0,
    ... )
    >>> search = GridSearchCV(
    ...     explainer, {"population_size": [2, 4, 20]}, cv=2,
    ...     scoring=ExplanationScorer(cost_scale=5.0), refit="combined",
    ... ).fit(X[model.predict(X) == 0].head(6))
    >>> search.best_params_
    {'population_size': 20}
    >>> search.cv_results_["mean_test_validity"].round(2).tolist()
    [0.67, 1.0, 1.0]
    """

    def __init__(
        self,
        scores=None,
        *,
        cost_weight=0.5,
        cost_scale=1.0,
        time_weight=0.0,
        time_scale=1.0,
    ):
        names = SCORES if scores is None else scores
        names = [names] if isinstance(names, str) else list(names)
        unknown = [name for name in names if name not in SCORES]
        if unknown or not names:
            raise ValueError(
                f"scores must name some of {list(SCORES)}, got {scores!r}."
            )
        _check_weight("cost_weight", cost_weight)
        _check_weight("time_weight", time_weight)
        _check_scale("cost_scale", cost_scale)
        _check_scale("time_scale", time_scale)
        self.scores = scores
        self.cost_weight = cost_weight
        self.cost_scale = cost_scale
        self.time_weight = time_weight
        self.time_scale = time_scale

    def __call__(self, estimator, X, y=None):
        """Explain ``X`` once and score the result.

        Parameters
        ----------
        estimator : SequentialCounterfactualExplainer
            A fitted explainer (anything with its ``explain`` method).
        X : DataFrame or array-like of shape (n_samples, n_features)
            The rows to explain.
        y : None
            Ignored; scikit-learn passes the labels of ``X``, if any.

        Returns
        -------
        float or dict
            The score named by ``scores``, or a dict of score name to value
            when ``scores`` is ``None`` or a list.
        """
        if not callable(getattr(estimator, "explain", None)):
            raise TypeError(
                "ExplanationScorer scores an explainer: the estimator needs an "
                f"explain method, and {type(estimator).__name__} has none."
            )
        explanations, details = estimator.explain(X, return_details=True)
        return self.score_frames(explanations, details)

    def score_frames(self, explanations, details):
        """Score the frames of an ``explain`` call already made.

        Parameters
        ----------
        explanations : DataFrame
            The frame returned by
            :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`.
        details : DataFrame
            The details of the same call (``return_details=True``).

        Returns
        -------
        float or dict
            The score named by ``scores``, or a dict of score name to value
            when ``scores`` is ``None`` or a list.
        """
        rows = _instances(
            explanations, ("solution", "sequence_cost", "length", "action")
        )
        seconds = seconds_per_row(details)
        valid = _validity(rows)
        cost = _solved_mean(rows, "cost", np.inf)
        values = {
            "validity": valid,
            "neg_mean_sequence_cost": -cost,
            "neg_mean_sequence_length": -_solved_mean(rows, "length", np.inf),
            "diversity": _diversity(rows, "plans"),
            "neg_seconds_per_row": -seconds,
            "combined": _combined(
                valid,
                cost,
                seconds,
                self.cost_weight,
                self.cost_scale,
                self.time_weight,
                self.time_scale,
            ),
        }
        if isinstance(self.scores, str):
            return values[self.scores]
        names = SCORES if self.scores is None else self.scores
        return {name: values[name] for name in names}

    def __repr__(self):
        defaults = {
            "cost_weight": 0.5,
            "cost_scale": 1.0,
            "time_weight": 0.0,
            "time_scale": 1.0,
        }
        parts = [] if self.scores is None else [repr(self.scores)]
        parts += [
            f"{name}={getattr(self, name)!r}"
            for name, default in defaults.items()
            if getattr(self, name) != default
        ]
        return f"ExplanationScorer({', '.join(parts)})"


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
    solved = np.zeros(len(labels), dtype=bool)
    solved[codes[ok]] = True
    rows["solved"] = solved
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
        rows["cost"] = cheapest["cost"].astype(float)
        if "length" in columns:
            rows["length"] = cheapest["length"].astype(float)
    if "action" in columns:
        # a plan is a set of actions: re-orderings of it are one plan
        plans = by_sequence["action"].agg(frozenset)
        distinct = {
            code: list(dict.fromkeys(sets))
            for code, sets in plans.groupby(level="_code", sort=False)
        }
        rows["plans"] = pd.Series({c: len(s) for c, s in distinct.items()}, dtype=float)
        rows["jaccard"] = pd.Series(
            {c: _mean_jaccard_distance(s) for c, s in distinct.items()}, dtype=float
        )
    return rows


def _statuses(frame):
    """The status column as an array of text; a missing status is ``""``
    (a row needing recourse without a sequence)."""
    return frame["status"].astype("string").fillna("").to_numpy(dtype=object)


def _mean_jaccard_distance(sets):
    if len(sets) < 2:
        return 0.0
    distances = [
        1.0 - len(a & b) / len(a | b) for i, a in enumerate(sets) for b in sets[i + 1 :]
    ]
    return float(np.mean(distances))


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


def _diversity(rows, measure):
    values = rows.loc[rows["solved"], measure]
    return float(values.mean()) if len(values) else 0.0


def _combined(valid, cost, seconds, cost_weight, cost_scale, time_weight, time_scale):
    return float(
        valid
        - cost_weight * _normalised(cost, cost_scale)
        - time_weight * _normalised(seconds, time_scale)
    )


def _normalised(value, scale):
    """``value / (value + scale)``: 0 for nothing, 1/2 at ``scale``, 1 at inf."""
    return 1.0 if np.isinf(value) else value / (value + scale)


# ---------------------------------------------------------------------- #
# Checks
# ---------------------------------------------------------------------- #
def _check_details(details):
    check_frame(
        details,
        ("status", "total_seconds"),
        name="details",
        returned_by=f"{EXPLAIN}(X, return_details=True) (its last item)",
    )


def _check_real(name, value):
    if isinstance(value, bool) or not isinstance(value, Real) or np.isnan(value):
        raise ValueError(f"{name} must be a number, got {value!r}.")


def _check_weight(name, value):
    _check_real(name, value)
    if not 0 <= value < np.inf:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}.")


def _check_scale(name, value):
    _check_real(name, value)
    if not 0 < value < np.inf:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}.")

"""The grid-search scorer: every score from one ``explain`` call."""

import inspect

from sklearn_cscf._sklearn_compat import validate_params
from sklearn_cscf.metrics._metrics import SCALE, WEIGHT, all_scores

# What ExplanationScorer returns, each with greater is better.
SCORES = (
    "validity",
    "neg_mean_sequence_cost",
    "neg_mean_sequence_length",
    "diversity",
    "neg_seconds_per_row",
    "combined",
)
# the options of "combined"
_WEIGHTS = ("cost_weight", "cost_scale", "time_weight", "time_scale")


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
    - ``"neg_seconds_per_row"``: minus :func:`seconds_per_row`, in CPU
      seconds (``time.process_time`` of the process or worker that explained
      each row, shared among its block's rows), not wall-clock ones: a busy
      machine, or candidates of a grid search competing for its cores, do
      not change it much;
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
        A typical number of CPU seconds per row needing recourse.

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
    ...     n_generations=5, refine=False, random_state=0,
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

    @validate_params(
        {
            "scores": "no_validation",  # named below, with the valid names
            "cost_weight": WEIGHT,
            "cost_scale": SCALE,
            "time_weight": WEIGHT,
            "time_scale": SCALE,
        },
        prefer_skip_nested_validation=True,
    )
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
        weights = {name: getattr(self, name) for name in _WEIGHTS}
        values = all_scores(explanations, details, **weights)
        if isinstance(self.scores, str):
            return values[self.scores]
        names = SCORES if self.scores is None else self.scores
        return {name: values[name] for name in names}

    def __repr__(self):
        parts = [] if self.scores is None else [repr(self.scores)]
        # the keyword arguments that differ from their defaults
        parts += [
            f"{name}={getattr(self, name)!r}"
            for name, param in inspect.signature(type(self)).parameters.items()
            if param.kind == param.KEYWORD_ONLY and getattr(self, name) != param.default
        ]
        return f"ExplanationScorer({', '.join(parts)})"

"""SequentialCounterfactualExplainer: parameters, fit, explain, transform, score."""

import copy
import functools
import hashlib
import warnings
from numbers import Integral, Real

import numpy as np
import pandas as pd
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs, parallel_config
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from sklearn_cscf._batches import Output, assemble, make_piece
from sklearn_cscf._checkpoints import Checkpoint, fingerprint
from sklearn_cscf._dataframes import frame_library, to_pandas
from sklearn_cscf._engine import Problem, Shipment, explain_block
from sklearn_cscf._frames import TEXT
from sklearn_cscf._make_actions import make_actions
from sklearn_cscf._model import (
    REPEAT_ROWS,
    Answers,
    ClassTarget,
    ModelAdapter,
    RangeTarget,
    answers_vary,
    asking,
)
from sklearn_cscf._objectives import Plausibility, default_objectives
from sklearn_cscf._result import (
    STATUS_ALREADY_TARGET,
    STATUS_ERROR,
    STATUS_OK,
    InstanceResult,
)
from sklearn_cscf._schema import FeatureSchema, plain_missing
from sklearn_cscf._search import SearchSettings
from sklearn_cscf._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _check_feature_names_in,
    _fit_context,
)
from sklearn_cscf.actions import (
    Action,
    CompiledAction,
    describe_error,
    probe_costs,
)
from sklearn_cscf.graph import CompiledGraph, FeatureGraph

# training rows on which predict is compared with the probabilities' arg-max
DECISION_PROBE = 2000
# training rows the plausibility objective compares final states with
PLAUSIBILITY_ROWS = 1000
# neighbours averaged by plausibility=True
PLAUSIBILITY_NEIGHBORS = 5


def _unfitted_on_failure(fit):
    """``fit`` that leaves the explainer unfitted when it fails: every
    attribute it set (``estimator_``, ``classes_``, ...) is removed, so that
    the next call raises ``NotFittedError``, not a half-fitted state's error."""

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            params = self.get_params(deep=False)
            for name in [n for n in vars(self) if n not in params]:
                delattr(self, name)
            raise

    return wrapper


class SequentialCounterfactualExplainer(TransformerMixin, BaseEstimator):
    """Consequence-aware sequential counterfactuals (CSCF).

    For each instance that a classifier does not assign to the target class,
    searches ordered sequences of actions that turn it, step by step, into one
    that is. Steps cost their effort times a consequential discount from a
    feature graph; the search (a multi-objective BRKGA) returns the
    Pareto-optimal sequences for sequence cost, Gower distance and per-feature
    tweak counts (Naumann & Ntoutsi, ECML PKDD 2021).

    Parameters
    ----------
    estimator : object, default=None
        The black-box classifier, called on rows exactly like the ``X`` given
        to :meth:`explain` (a ``Pipeline`` with its own preprocessing is the
        usual case). A fitted classifier is used as is, including duck-typed
        wrappers exposing ``classes_``, ``predict_proba`` or ``predict`` and
        ``__sklearn_is_fitted__``. An unfitted one is cloned and fitted on
        ``fit(X, y)``. ``None`` fits a histogram gradient boosting classifier
        (categories one-hot encoded) on ``(X, y)``.
    actions : list of Action, default=None
        The actions a person can take. ``None``: one action per mutable
        feature (``set_<feature>``), any observed value or category.
    feature_graph : FeatureGraph, default=None
        Feature relationships for consequential discounts. ``None`` gives the
        SCF variant (every discount is 1).
    target_class : label, list of labels or "opposite", default=None
        The class to reach (for a classifier). ``None``: the positive class
        ``classes_[1]`` of a binary problem; with more classes, as
        ``"opposite"``. A list (or set) of labels: any of these classes will
        do. ``"opposite"``: for each row, any class but the one the model
        predicts for it now.
    target_range : (float, float), default=None
        For a regressor (a model without ``classes_``): the range of its
        prediction to reach, ``(low, high)`` (``None``, ``-inf`` or ``inf``
        for an open end). A sequence is valid when the prediction of its
        final state lies in the range; the frame reports the prediction after
        each step.
    target_margin : float, default=0.0
        With ``target_range``: how far inside the range the prediction must
        lie, so that a small change of the model does not undo the plan.
    min_target_proba : float, default=None
        For a classifier with ``predict_proba``: the probability the target
        class (or classes) must reach besides the model's decision, e.g.
        ``0.6`` for plans with a margin over a 0.5 decision threshold. A row
        the model accepts with less than that needs recourse too.
    immutable_features : list, default=None
        Features that the default actions leave alone, and that no action may
        change.
    population_size : int, default=500
        Individuals per generation.
    n_generations : int or "auto", default="auto"
        Generations (the first evaluates the random initial population).
        ``"auto"`` (beyond the paper) spends them where they are needed: a
        row's search stops once its two cheapest plans (actions and order;
        refinement polishes their values) have not changed for
        ``n_iter_no_change`` generations (25 when ``None``), after at least
        30 and at most 300 generations; a row with no feasible sequence
        after 150 generations stops there. An int runs exactly that many,
        e.g. the paper's budget of 150. ``return_details=True`` reports the
        generations each row ran.
    mutant_fraction : float, default=0.2
        Share of each generation made of fresh random genotypes.
    crossover_bias : float, default=0.7
        Probability that an offspring takes a key from its elite parent.
    elite_fraction : float, default=0.2
        At most this share of the population is kept as elites (the
        non-dominated feasible sequences, thinned by crowding distance).
    max_sequence_length : int, default=None
        At most this many steps per sequence; ``None``: up to every action.
    n_iter_no_change : int, default=None
        With an int ``n_generations``: stop early when the elite set has not
        changed for this many generations (``None`` runs every generation).
        With ``"auto"``: how many generations the cheapest plans must stay
        the same.
    refine : bool, default=True
        After the search, pull every step of each final sequence back to the
        cheapest value that still reaches the target (evenly spaced values
        and the training values between the least change and the found one,
        then bisection; every constraint checked); also try, for each row's
        cheapest plans, one step pushed and the others pulled back, one more
        step inserted first (an enabling step, e.g. one that crosses a
        discount threshold), and every action alone; then keep the
        Pareto-optimal sequences. This goes beyond the paper: random keys
        only approach a range end or the model's decision threshold, and a
        tree model accepts islands of values. ``False`` reports the search's
        front as the paper does.
    plausibility : bool or int, default=False
        Beyond the paper: add an objective measuring how far the final state
        lies from real data that reaches the target, the mean Gower distance
        to its ``k`` nearest training rows that the model assigns to the
        target (``True``: ``k = 5``; an int: that ``k``; up to
        ``PLAUSIBILITY_ROWS`` training rows, drawn once in ``fit``). The
        search then prefers plans that end among people who are accepted,
        and the frame reports it in a ``plausibility`` column. Only then does
        the fitted explainer keep those training rows (and a pickle of it
        hold them); turning it on after ``fit`` needs a new ``fit``.
    max_plans : int or None, default=5
        Report at most this many plans (sets of actions) per row: the
        cheapest, the plan of the nearest sequence (least Gower distance)
        and, with ``plausibility``, of the most plausible; then one after
        another the plan whose actions differ most from those reported (the
        cheaper on a tie). ``None`` reports every plan found.
    all_orders : bool, default=False
        Report every Pareto-optimal order of a reported plan; ``False``
        reports its cheapest order only. ``max_plans=None, all_orders=True``
        gives the whole Pareto set, as the paper does.
    errors : {"warn", "raise"}, default="warn"
        What happens when something raises while a row is explained (an
        action's callable, a tau, the model): ``"warn"`` gives that row the
        status ``"error"`` with a ``message`` naming what failed, finishes
        the other rows, and warns once with the number of failed rows;
        ``"raise"`` re-raises the exception at once.
    batch_size : int, default=64
        Instances searched together, in lock-step: each generation, the new
        states of all of them go to the classifier in one call, which is much
        cheaper per row than one call per instance. Results do not depend on
        it; larger blocks use more memory.
    n_jobs : int, default=None
        Blocks of instances explained in parallel (joblib); ``-1`` uses all
        cores. The estimator and the compiled problem are sent once per
        worker process, not once per instance.
    random_state : int, RandomState instance or None, default=None
        Seeds the search. Each instance gets its own generator, seeded from
        ``random_state`` and the instance's values, so a row's result does not
        depend on ``n_jobs``, on the other rows or on its position.
    verbose : int, default=0
        ``1`` shows a progress bar over instances.

    Attributes
    ----------
    estimator_ : object
        The classifier that is explained.
    classes_ : ndarray or None
        Its classes; ``None`` for a regressor.
    uses_predict_ : bool
        Whether the model's decisions come from its ``predict`` during the
        search: when it has no ``predict_proba``, or its ``predict`` is not
        the arg-max of its probabilities on the training data (e.g. a tuned
        decision threshold). Otherwise the arg-max is used while searching,
        and every reported final state is checked with ``predict``.
    actions_ : list of Action
        The actions with their value spaces resolved against the data.
    feature_kinds_ : dict
        ``"numeric"`` or ``"categorical"`` for each feature.
    feature_ranges_ : dict
        ``(min, max)`` of each numeric feature, the Gower scale.
    categories_ : dict
        The categories of each categorical feature, in order.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Names of the features seen in ``fit`` (only for DataFrames).

    See Also
    --------
    Action : An action, its value space, cost, consequences and constraints.
    FeatureGraph : Feature relationships giving consequential discounts.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_cscf import Action, SequentialCounterfactualExplainer
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"income": rng.uniform(0, 100, 200),
    ...                   "debt": rng.uniform(0, 50, 200)})
    >>> y = (X["income"] - X["debt"] > 40).astype(int)
    >>> model = LogisticRegression().fit(X, y)
    >>> explainer = SequentialCounterfactualExplainer(
    ...     model,
    ...     actions=[Action("earn_more", "income", direction="increase"),
    ...              Action("pay_debt", "debt", direction="decrease")],
    ...     population_size=40, n_generations=10, random_state=0,
    ... ).fit(X)
    >>> rejected = pd.DataFrame({"income": [30.0], "debt": [20.0]})
    >>> result = explainer.explain(rejected)
    >>> result["status"].unique().tolist()
    ['ok']
    >>> bool((result["target_proba"].groupby(result["solution"]).last() > 0.5).all())
    True
    """

    _parameter_constraints: dict = {
        "estimator": [
            HasMethods(["predict_proba"]),
            HasMethods(["predict"]),
            None,
        ],
        "actions": [list, tuple, None],
        "feature_graph": [FeatureGraph, None],
        "target_class": "no_validation",
        "target_range": ["array-like", None],
        "target_margin": [Interval(Real, 0, None, closed="left")],
        "min_target_proba": [Interval(Real, 0, 1, closed="right"), None],
        "immutable_features": ["array-like", None],
        "population_size": [Interval(Integral, 2, None, closed="left")],
        "n_generations": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "mutant_fraction": [Interval(Real, 0, 1, closed="both")],
        "crossover_bias": [Interval(Real, 0, 1, closed="both")],
        "elite_fraction": [Interval(Real, 0, 1, closed="neither")],
        "max_sequence_length": [Interval(Integral, 1, None, closed="left"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left"), None],
        "refine": ["boolean"],
        "plausibility": ["boolean", Interval(Integral, 1, None, closed="left")],
        "errors": [StrOptions({"warn", "raise"})],
        "max_plans": [Interval(Integral, 1, None, closed="left"), None],
        "all_orders": ["boolean"],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [
            Interval(Integral, None, -1, closed="right"),
            Interval(Integral, 1, None, closed="left"),
            None,
        ],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        actions=None,
        feature_graph=None,
        target_class=None,
        target_range=None,
        target_margin=0.0,
        min_target_proba=None,
        immutable_features=None,
        population_size=500,
        n_generations="auto",
        mutant_fraction=0.2,
        crossover_bias=0.7,
        elite_fraction=0.2,
        max_sequence_length=None,
        n_iter_no_change=None,
        refine=True,
        plausibility=False,
        max_plans=5,
        all_orders=False,
        errors="warn",
        batch_size=64,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.actions = actions
        self.feature_graph = feature_graph
        self.target_class = target_class
        self.target_range = target_range
        self.target_margin = target_margin
        self.min_target_proba = min_target_proba
        self.immutable_features = immutable_features
        self.population_size = population_size
        self.n_generations = n_generations
        self.mutant_fraction = mutant_fraction
        self.crossover_bias = crossover_bias
        self.elite_fraction = elite_fraction
        self.max_sequence_length = max_sequence_length
        self.n_iter_no_change = n_iter_no_change
        self.refine = refine
        self.plausibility = plausibility
        self.max_plans = max_plans
        self.all_orders = all_orders
        self.errors = errors
        self.batch_size = batch_size
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ #
    @_fit_context(prefer_skip_nested_validation=False)
    @_unfitted_on_failure
    def fit(self, X, y=None):
        """Learn the features and resolve the actions (and fit the model).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Data from which each feature's kind, range and categories are
            learned (typically the classifier's training data).
        y : array-like of shape (n_samples,), default=None
            Labels; only needed when ``estimator`` is ``None`` or unfitted.

        Returns
        -------
        self : SequentialCounterfactualExplainer
            The fitted explainer.
        """
        given, X = X, _as_2d(to_pandas(X))
        validate_data(self, X, skip_check_array=True, reset=True)
        if X.shape[0] == 0:
            raise ValueError("X has no rows; fit needs data to learn from.")
        if X.shape[1] == 0:
            raise ValueError(
                f"0 feature(s) (shape={X.shape}) while a minimum of 1 is "
                "required: X has no columns, so there is no feature to act on."
            )
        schema = FeatureSchema(X)
        # the model is handed the kind of frame it is fitted on (polars: polars)
        schema.model_frame = frame_library(given)
        polars = schema.model_frame == "polars"
        self.estimator_ = self._fit_estimator(given if polars else X, y, schema)
        classes = getattr(self.estimator_, "classes_", None)
        if self.target_range is not None:
            if classes is not None:
                raise ValueError(
                    "target_range is the output range to reach with a regressor; "
                    f"this estimator is a classifier (classes {list(classes)}): "
                    "use target_class."
                )
            if not hasattr(self.estimator_, "predict"):
                raise TypeError("The regressor has no predict method.")
            self.classes_ = None
            self._resolve_range()
            self.uses_predict_ = True
        else:
            if classes is None:
                raise TypeError(
                    "The estimator has no classes_ attribute: for a classifier "
                    "the explainer reaches a class; for a regressor, give the "
                    "output range to reach as target_range=(low, high)."
                )
            self.classes_ = np.asarray(classes)
            self._resolve_target()
            self.uses_predict_ = _needs_predict(
                self.estimator_, schema, X, self.classes_
            )
        # a model whose answers vary has every reported plan checked afresh
        self._model_varies = answers_vary(
            self.estimator_, schema, _probe_rows(schema, X)[:REPEAT_ROWS], self.classes_
        )
        if self.min_target_proba is not None and (
            self.classes_ is None or not hasattr(self.estimator_, "predict_proba")
        ):
            raise ValueError(
                "min_target_proba needs a classifier with predict_proba; for a "
                "regressor, use target_margin."
            )
        immutable = self._immutable_features(schema)
        actions = self._resolve_actions(X, immutable)
        self._compiled_actions = [CompiledAction(a, schema) for a in actions]
        for action in self._compiled_actions:
            for k in action.affects:
                if schema.names[k] in immutable:
                    raise ValueError(
                        f"Action {action.name!r} changes {schema.names[k]!r}, "
                        "which is listed in immutable_features."
                    )
        self._compiled_graph = CompiledGraph(
            self.feature_graph, schema, self._compiled_actions
        )
        probe_costs(self._compiled_actions, schema, X)
        self._schema = schema
        # the rows plausibility compares final states with: kept only when
        # it is on, so that a pickled explainer holds no training rows else
        self._reference = None
        if self.plausibility is not False:
            rows = schema.encode(X)
            if rows.shape[0] > PLAUSIBILITY_ROWS:
                pick = np.random.default_rng(0).choice(
                    rows.shape[0], PLAUSIBILITY_ROWS, replace=False
                )
                rows = rows[np.sort(pick)]
            self._reference = rows
        self.actions_ = [action.resolved() for action in self._compiled_actions]
        self.feature_kinds_ = {
            name: "categorical" if schema.is_categorical[j] else "numeric"
            for j, name in enumerate(schema.names)
        }
        self.feature_ranges_ = {
            name: (float(schema.low[j]), float(schema.high[j]))
            for j, name in enumerate(schema.names)
            if not schema.is_categorical[j]
        }
        self.categories_ = {
            name: list(schema.categories[j])
            for j, name in enumerate(schema.names)
            if schema.is_categorical[j]
        }
        return self

    def _fit_estimator(self, X, y, schema):
        estimator = self.estimator
        if estimator is not None and _is_fitted(estimator):
            return estimator
        if y is None:
            raise ValueError(
                "y is required in fit when the estimator is None or not fitted "
                "yet; pass fit(X, y) or a fitted estimator. Inside GridSearchCV "
                "or cross_validate, which clone the explainer (a clone of a "
                "fitted model is unfitted), wrap the fitted model in "
                "sklearn.frozen.FrozenEstimator to keep it as it is."
            )
        if estimator is None:
            estimator = _default_estimator(schema, self.random_state)
        elif not hasattr(estimator, "fit"):
            raise TypeError(
                f"The estimator {type(estimator).__name__} is not fitted and has "
                "no fit method."
            )
        else:
            try:
                estimator = clone(estimator)
            except TypeError as exc:
                raise TypeError(
                    f"The unfitted estimator {type(estimator).__name__} cannot be "
                    f"cloned ({exc}); fit it first and pass the fitted model."
                ) from None
        with asking(
            estimator, "in its fit on the X and y given to the explainer's fit"
        ):
            return estimator.fit(X, y)

    def _resolve_target(self):
        """The acceptable classes of each target code.

        Codes ``0 .. C-1`` accept one class, ``C .. 2C-1`` every class but
        one (``"opposite"`` on a multiclass model), ``2C`` a set given as
        ``target_class``.
        """
        classes = self.classes_
        n = classes.shape[0]
        target = self.target_class
        if n < 2:
            raise ValueError(
                f"The classifier knows only one class ({classes.tolist()}); "
                "counterfactuals need at least two classes."
            )
        accept = np.vstack([np.eye(n, dtype=bool), ~np.eye(n, dtype=bool)])
        names = [*classes.tolist(), *(f"not {c}" for c in classes.tolist())]
        self._set_target = False
        if isinstance(target, list | tuple | set | frozenset | np.ndarray | pd.Index):
            labels = list(target)
            unknown = [v for v in labels if not (classes == v).any()]
            if not labels or unknown:
                raise ValueError(
                    f"target_class={target!r}: "
                    + (f"{unknown} are not" if unknown else "an empty set holds no")
                    + f" classes of the estimator ({classes.tolist()})."
                )
            chosen = np.isin(classes, labels)
            accept = np.vstack([accept, chosen])
            names.append(" or ".join(str(c) for c in classes[chosen]))
            self._target_code = 2 * n
            self._set_target = True
        elif target is None and n == 2:
            self._target_code = 1
        elif target is None or (isinstance(target, str) and target == "opposite"):
            self._target_code = None  # from each row's decision
            self._set_target = n > 2
        else:
            matches = np.flatnonzero(classes == target)
            if matches.size == 0:
                raise ValueError(
                    f"target_class={target!r} is not one of the estimator's "
                    f"classes {classes.tolist()}."
                )
            self._target_code = int(matches[0])
        self._accept = accept
        # a set of classes has a name, not a label: the column is then text
        self._target_names = (
            pd.array([str(v) for v in names], dtype=TEXT)
            if self._set_target
            else classes
        )

    def _resolve_range(self):
        low, high = _range(self.target_range)
        if not high - low > 2 * self.target_margin:
            raise ValueError(
                f"target_range={self.target_range!r} leaves no room inside a "
                f"target_margin of {self.target_margin!r}."
            )
        self._target_names = pd.array([f"[{low:g}, {high:g}]"], dtype=TEXT)

    def _target(self):
        """The target object of the search."""
        if self.classes_ is None:
            low, high = _range(self.target_range)
            return RangeTarget(low, high, self.target_margin)
        return ClassTarget(self._accept, self.uses_predict_, self.min_target_proba)

    def _target_codes(self, decision):
        """Each row's target code, from the model's decision now (-1: unknown)."""
        if self.classes_ is None:
            return np.zeros(decision.shape[0], dtype=np.intp)
        if self._target_code is not None:
            return np.full(decision.shape[0], self._target_code, dtype=np.intp)
        n = self.classes_.shape[0]
        codes = 1 - decision if n == 2 else n + decision  # "opposite"
        return np.where(decision >= 0, codes, -1)

    def _immutable_features(self, schema):
        if self.immutable_features is None:
            return set()
        immutable = list(np.asarray(self.immutable_features, dtype=object).ravel())
        for name in immutable:
            schema.column(name, what="immutable_features:")
        return set(immutable)

    def _resolve_actions(self, X, immutable):
        if self.actions is None:
            # make_actions' defaults: costs per interquartile range, per change
            frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(X)
            if all(name in immutable for name in frame.columns):
                raise ValueError("Every feature is immutable: there is nothing to do.")
            return make_actions(frame, immutable=list(immutable))
        actions = list(self.actions)
        if not actions:
            raise ValueError("actions is empty; give at least one Action.")
        names = set()
        for action in actions:
            if not isinstance(action, Action):
                raise TypeError(
                    "actions must hold Action objects, got "
                    f"{type(action).__name__}: {action!r}."
                )
            if action.name in names:
                raise ValueError(f"Two actions are named {action.name!r}.")
            names.add(action.name)
        return actions

    # ------------------------------------------------------------------ #
    def _settings(self):
        return SearchSettings(
            population_size=self.population_size,
            n_generations=self.n_generations,
            mutant_fraction=self.mutant_fraction,
            crossover_bias=self.crossover_bias,
            elite_fraction=self.elite_fraction,
            max_sequence_length=self.max_sequence_length,
            n_iter_no_change=self.n_iter_no_change,
        )

    def _compiled_for(self, X):
        """The schema, actions and graph to explain ``X`` with: those of
        ``fit``, or copies that also know the categories ``X`` brings."""
        unseen = self._schema.unseen_categories(X)
        if not unseen:
            return self._schema, self._compiled_actions, self._compiled_graph
        schema = copy.deepcopy(self._schema)
        for j, labels in unseen.items():
            for label in labels:
                schema.add_category(j, label)
        actions = [CompiledAction(a.action, schema) for a in self._compiled_actions]
        return schema, actions, CompiledGraph(self.feature_graph, schema, actions)

    def _plausibility(self, schema, actions, target, codes):
        """The plausibility objective for rows of target ``codes``, or None."""
        if self.plausibility is False:
            return None
        if self._reference is None:
            raise ValueError(
                "plausibility was turned on after fit: fit the explainer again "
                "(it keeps training rows to compare with only when plausibility "
                "is on at fit)."
            )
        k = PLAUSIBILITY_NEIGHBORS if self.plausibility is True else self.plausibility
        answers, _ = self._decisions(self._reference, schema)
        known = answers.decision >= 0
        accepted = {}
        for code in np.unique(codes[codes >= 0]).tolist():
            mask = np.zeros(known.shape[0], dtype=bool)
            mask[known] = (
                target.gap(answers.take(known), np.full(known.sum(), code)) == 0
            )
            accepted[code] = mask
        changed = sorted({k for action in actions for k in action.affects})
        return Plausibility(schema, self._reference, accepted, changed, k)

    def _problem(self, schema, actions, graph, codes):
        """What every instance's search shares."""
        target = self._target()
        plausibility = self._plausibility(schema, actions, target, codes)
        return Problem(
            schema=schema,
            actions=actions,
            graph=graph,
            objectives=default_objectives(schema, actions, plausibility),
            target=target,
            settings=self._settings(),
            estimator=self.estimator_,
            classes=self.classes_,
            use_predict=self.uses_predict_,
            refine=self.refine,
            recheck=getattr(self, "_model_varies", False),
        )

    def _run(self, X, *, with_states=False, checkpoint=None, shared_checkpoint=False):
        """Explain every row of ``X``: the output frames and, per row, the
        encoded state ``transform`` reports.

        Returns ``(X, frame, states, details, finals, schema)``.
        """
        check_is_fitted(self)
        X = _as_2d(to_pandas(X))
        _check_like_fit(X, self._schema)
        validate_data(self, X, skip_check_array=True, reset=False)
        schema, actions, graph = self._compiled_for(X)
        encoded = schema.encode(X)
        _check_finite(encoded, schema)
        index = X.index if isinstance(X, pd.DataFrame) else pd.RangeIndex(len(X))
        n = encoded.shape[0]
        answers, failures = self._decisions(encoded, schema)
        targets = self._target_codes(answers.decision)
        problem = self._problem(schema, actions, graph, targets)
        known = answers.decision >= 0
        reached = np.zeros(n, dtype=bool)
        reached[known] = problem.target.gap(answers.take(known), targets[known]) == 0
        needing = np.flatnonzero(known & ~reached)
        shipment = Shipment(problem)
        output = Output(
            schema,
            actions,
            self._target_names,
            problem.target.reported,
            ("plausibility",) if self.plausibility is not False else (),
            self.max_plans,
            self.all_orders,
        )
        entropy = _base_entropy(self.random_state)
        store = None
        if checkpoint is not None:
            store = Checkpoint(
                checkpoint,
                fingerprint(
                    problem,
                    encoded,
                    targets,
                    index,
                    self.random_state,
                    (self.max_plans, self.all_orders),
                ),
                entropy,
                shared=shared_checkpoint,
            )
            entropy = store.entropy

        pieces, remaining = [], np.arange(n)
        if store is not None:
            pieces = [
                make_piece(done, rows, index[rows], output, with_states, found=found)
                for rows, done, found in store.load()
            ]
            finished = [p.positions for p in pieces]
            remaining = np.setdiff1d(remaining, np.concatenate([[], *finished]))
        # rows that need no search (already of the target class, or the model
        # failed on them) ride along with the searched rows around them, so
        # that each piece covers consecutive rows
        searched = np.intersect1d(needing, remaining)
        quick = {
            int(r): InstanceResult(
                x0=encoded[r],
                target=int(targets[r]),
                status=STATUS_ERROR if r in failures else STATUS_ALREADY_TARGET,
                message=failures.get(r),
            )
            for r in np.setdiff1d(remaining, searched)
        }
        seeds = [_instance_seed(entropy, encoded[r], targets[r]) for r in searched]
        blocks = _blocks(searched.size, self.batch_size, effective_n_jobs(self.n_jobs))
        tasks = (
            delayed(_explain_block)(
                shipment,
                encoded[searched[block]],
                targets[searched[block]],
                [seeds[k] for k in block],
                self.errors,
            )
            for block in blocks
        )
        # each block's piece also takes the quick rows up to its last row
        ends = [int(searched[block[-1]]) for block in blocks[:-1]] + [n]
        with _progress(self.verbose, searched.size) as progress:
            parallel = Parallel(n_jobs=self.n_jobs, return_as="generator")
            for block, end, found in zip(blocks, ends, parallel(tasks)):
                rows = {int(r): result for r, result in zip(searched[block], found)}
                rows.update({r: quick.pop(r) for r in list(quick) if r <= end})
                pieces.append(self._piece(rows, index, output, with_states, store))
                progress.update(len(found))
        if quick or not pieces:  # quick rows after the last block; or no row
            pieces.append(self._piece(quick, index, output, with_states, store))
        frame, states, details, finals = assemble(pieces, n, schema.n_features)
        _warn_about_errors(details)
        # one accepted row is common; several and nothing else hints at a
        # wrong target class
        if n > 1 and (details["status"] == STATUS_ALREADY_TARGET).all():
            labels = sorted({str(self._target_names[t]) for t in targets})
            if self.classes_ is None:
                message = (
                    f"Every row of X is already predicted in the target "
                    f"range {labels[0]}: nothing to explain. Is that the range "
                    f"to reach? target_range={self.target_range!r}."
                )
            else:
                named = (
                    "the positive class"
                    if self.target_class is None
                    else "target_class"
                )
                message = (
                    f"Every row of X is already of the target class "
                    f"{', '.join(map(repr, labels))}: nothing to explain. Is "
                    f"that the class to reach? It is {named} (target_class="
                    f"{self.target_class!r}); the model's classes are "
                    f"{self.classes_.tolist()}."
                )
            warnings.warn(message, UserWarning, stacklevel=3)
        return X, frame, states, details, finals, schema

    def _piece(self, results, index, output, with_states, store):
        """The output of ``{position: result}`` (saved to ``store``)."""
        positions = np.array(sorted(results), dtype=np.intp)
        return make_piece(
            [results[r] for r in positions],
            positions,
            index[positions],
            output,
            with_states,
            store,
        )

    def _decisions(self, encoded, schema):
        """The model's :class:`Answers` about each row now (its own
        ``predict`` decides); decision ``-1`` where it raised, with the
        message (``{row: message}``)."""
        model = ModelAdapter(
            self.estimator_,
            schema,
            self.classes_,
            use_predict=hasattr(self.estimator_, "predict"),
        )
        n = encoded.shape[0]
        try:
            if n == 0:
                return Answers(np.empty(0, dtype=np.intp), None), {}
            return model.answer(encoded), {}
        except Exception:
            if self.errors == "raise":
                raise
        # one row at a time: which rows does the model fail on?
        decision = np.full(n, -1, dtype=np.intp)
        output = np.full((n, model.width), np.nan) if model.has_output else None
        failures = {}
        for r in range(n):
            try:
                one = model.answer(encoded[r : r + 1])
            except Exception as exc:
                failures[r] = describe_error(exc)
                continue
            decision[r] = one.decision[0]
            if output is not None:
                output[r] = one.output[0]
        return Answers(decision, output), failures

    def explain(
        self,
        X,
        return_states=False,
        return_details=False,
        checkpoint=None,
        shared_checkpoint=False,
    ):
        """Find Pareto-optimal action sequences for every row of ``X``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Instances to explain, with the columns seen in ``fit``.
        return_states : bool, default=False
            Also return the full feature state after every step.
        return_details : bool, default=False
            Also return what explaining each row took (generations, classifier
            calls and rows, seconds).

        Returns
        -------
        explanations : DataFrame
            One row per step of each distinct Pareto-optimal sequence (distinct
            actions or order; the cheapest of each), with columns ``instance``
            (the row's index label), ``plan`` (shared by the sequences using
            the same set of actions in another order; 0, 1, ... in order of
            their cheapest sequence), ``solution`` (0, 1, ... by ascending
            ``sequence_cost``), ``step`` (1 to ``length``), ``action``,
            ``feature``, ``old_value`` and ``new_value`` (the feature before
            and after the step, as text), ``old_number`` and ``new_number``
            (the same as numbers; NaN for categorical features), ``effort``
            (b), ``discount`` (g), ``cost`` (b * g), ``target_proba``
            (probability of the target class after the step; NaN for a model
            without ``predict_proba``),
            ``prediction`` (a regressor's output after the step; NaN for a
            classifier), ``plausibility`` (only with ``plausibility``),
            ``sequence_cost``, ``sequence_effort``, ``gower_distance``,
            ``length``, ``target_class``, ``status`` (``"ok"``) and
            ``message``. Every row of ``X`` is answered, in input order: a
            row with no sequence found has one row with status
            ``"no_counterfactual"``; a row already classified as the target,
            ``"already_target"``; a row whose model call or user callable
            raised (with ``errors="warn"``), ``"error"`` and the ``message``
            naming what failed. ``max_plans`` and ``all_orders`` choose which
            sequences are shown.
        states : DataFrame
            Only with ``return_states=True``: columns ``instance``,
            ``solution``, ``step`` (0 is the instance itself) and the features
            of ``X``, one row per state of each sequence.
        details : DataFrame
            Only with ``return_details=True``: one row per row of ``X``, with
            columns ``instance``, ``status``, ``n_solutions``,
            ``n_generations`` (generations run), ``n_evaluated`` (states
            judged, remembered ones included), ``n_model_calls`` (classifier
            calls holding at least one of its states), ``n_model_rows`` (its
            states sent to the classifier), ``model_seconds`` (its share, by
            rows, of those calls' time), ``total_seconds`` (its share of its
            block's time), ``n_refined`` (sequences of the front, before
            ``max_plans`` and ``all_orders``, made cheaper by refinement) and
            ``message``.

        Other Parameters
        ----------------
        checkpoint : str or path-like, default=None
            A directory where each finished block of rows is saved as soon as
            it is done. Run again with the same explainer and ``X`` (after an
            interruption, say), the rows already there are not searched
            again, and the output is the same as an uninterrupted run's; rows
            that ended in ``"error"`` are tried again. The files are plain
            data (JSON and NumPy ``.npz``), never unpickled. A directory
            holding another run's results, or files its manifest does not
            list or whose content hash differs, is refused. A failed save
            (a full disk) warns and stops checkpointing; every row is still
            returned.
        shared_checkpoint : bool, default=False
            Use a ``checkpoint`` directory that other users can write to
            (writable by all, or owned by someone else). Refused by default:
            whoever can write there can change the results you load.
        """
        _, frame, states, details, _, _ = self._run(
            X,
            with_states=return_states,
            checkpoint=checkpoint,
            shared_checkpoint=shared_checkpoint,
        )
        out = [frame]
        if return_states:
            out.append(states)
        if return_details:
            out.append(details)
        return out[0] if len(out) == 1 else tuple(out)

    def transform(self, X):
        """The final state of the least-cost sequence of each row.

        Runs the search, like :meth:`explain`.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Instances to explain, with the columns seen in ``fit``.

        Returns
        -------
        DataFrame
            Same columns and index as ``X`` (``0..n_features - 1`` and a
            RangeIndex for an array): the row itself where it is already of
            the target class, NaN where no sequence was found.
        """
        X, _, _, _, finals, schema = self._run(X)
        index = X.index if isinstance(X, pd.DataFrame) else pd.RangeIndex(len(X))
        return schema.to_frame(finals, index=index)

    def get_feature_names_out(self, input_features=None):
        """Get the names of the columns of :meth:`transform`: the input features.

        Parameters
        ----------
        input_features : array-like of str, default=None
            Must match ``feature_names_in_`` when given.

        Returns
        -------
        ndarray of str
            The feature names seen in ``fit`` (``x0, x1, ...`` for an array).
        """
        check_is_fitted(self)
        return _check_feature_names_in(self, input_features)

    def fit_transform(self, X, y=None):
        """Fit on ``X``, then return :meth:`transform` of the same ``X``.

        ``fit`` learns each feature's range and categories (the Gower scale,
        the default value spaces) from ``X``. Fitted on the rows to explain,
        say only rejected people, those ranges are theirs alone: the search
        then cannot suggest values only accepted people have. When the rows
        to explain are not the training data, fit on the training data and
        call ``transform`` on the rows.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Rows to learn from and to explain.
        y : array-like of shape (n_samples,), default=None
            Labels; only needed when ``estimator`` is ``None`` or unfitted.

        Returns
        -------
        DataFrame
            The final state of each row's least-cost sequence, as in
            :meth:`transform`.
        """
        return self.fit(X, y).transform(X)

    def score(self, X, y=None):
        """Share of the rows needing recourse for which a sequence was found.

        Rows already classified as the target class do not count; when no row
        needs recourse the score is 1.0. This is
        :func:`sklearn_cscf.metrics.validity` of ``explain(X)``, and it runs
        the search like :meth:`explain`.

        As ``GridSearchCV``'s default scoring it tells candidates apart only
        where some fail to find a sequence: once every candidate finds one for
        every row they all score 1.0 and ``best_params_`` is the first. To
        choose by the cost of the sequences too, pass
        ``scoring=sklearn_cscf.metrics.ExplanationScorer()`` and
        ``refit="combined"``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Instances to explain, with the columns seen in ``fit``.
        y : None
            Ignored; present for the scikit-learn API.

        Returns
        -------
        float
            The share of rows needing recourse that got a sequence, in
            ``[0, 1]``.

        See Also
        --------
        sklearn_cscf.metrics.ExplanationScorer : Validity, cost, length,
            diversity and search time from one explain call, for grid search.
        """
        _, _, _, details, _, _ = self._run(X)
        statuses = details["status"][details["status"] != STATUS_ALREADY_TARGET]
        if statuses.empty:
            return 1.0
        return float((statuses == STATUS_OK).mean())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # missing values go to the model as they are: it decides (fitting an
        # unfitted one raises its own error; a row a fitted one fails on gets
        # the status "error"). Infinities are refused. A model's own tags are
        # not asked: a Pipeline's say False even when it imputes.
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.target_tags.required = False
        # transform returns a DataFrame of float (numeric) and label columns
        tags.transformer_tags.preserves_dtype = []
        tags.non_deterministic = self.random_state is None
        return tags


# ---------------------------------------------------------------------- #
def _explain_block(shipment, x0, targets, seeds, errors):
    """Search and describe a block of encoded instances (a worker's task)."""
    # One BLAS/OpenMP thread, as in joblib's workers: results do not depend on
    # n_jobs, and several workers do not oversubscribe the cores. The model's
    # own joblib calls (a ColumnTransformer's, say) run in place: under the
    # Dask backend they would otherwise become cluster tasks, a round trip
    # through the scheduler at every model call.
    with threadpool_limits(limits=1), parallel_config(backend="sequential"):
        return explain_block(shipment.problem, x0, targets, seeds, errors)


def _warn_about_errors(details):
    failed = details[details["status"] == STATUS_ERROR]
    if len(failed):
        label, message = failed["instance"].iloc[0], failed["message"].iloc[0]
        if isinstance(label, np.generic):  # 286, not np.int64(286)
            label = label.item()
        warnings.warn(
            f"{len(failed)} of {len(details)} rows could not be explained and "
            "have the status 'error' (see the 'message' column; errors='raise' "
            f"raises at once). The first, row {label!r}: {message}",
            UserWarning,
            stacklevel=4,
        )


def _probe_rows(schema, X):
    """Up to ``DECISION_PROBE`` encoded rows of the training data."""
    rows = schema.encode(X)
    if rows.shape[0] > DECISION_PROBE:
        pick = np.random.default_rng(0).choice(
            rows.shape[0], DECISION_PROBE, replace=False
        )
        rows = rows[np.sort(pick)]
    return rows


def _needs_predict(estimator, schema, X, classes):
    """Whether the model's decisions must come from its ``predict``: it has no
    ``predict_proba``, or its ``predict`` is not the arg-max of its
    probabilities on (up to ``DECISION_PROBE`` rows of) the training data, as
    with a tuned decision threshold. The probabilities are checked on the way
    (finite, in [0, 1])."""
    if not hasattr(estimator, "predict_proba"):
        return True
    rows = _probe_rows(schema, X)
    model = ModelAdapter(estimator, schema, classes)
    X_rows = schema.to_model_input(rows)
    doing = f"in fit, on {rows.shape[0]} rows of the X given to fit"
    with asking(estimator, doing):
        chance = model._checked(estimator.predict_proba(X_rows), rows.shape[0])
        if not model.has_predict:
            return False
        return bool((model.decide(X_rows) != chance.argmax(axis=1)).any())


def _blocks(n, batch_size, n_workers):
    """Row positions of each block: at most ``batch_size`` rows, and at least
    one block per worker while there are rows to share."""
    if n == 0:
        return []
    n_blocks = max(-(-n // batch_size), min(n, n_workers))
    return np.array_split(np.arange(n), n_blocks)


class _NoProgress:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n=1):
        pass


def _progress(verbose, total):
    """A tqdm bar over instances when ``verbose``; tqdm is imported only then."""
    if not verbose:
        return _NoProgress()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="Explaining", unit="instance")


def _base_entropy(random_state):
    if random_state is None:
        return np.random.SeedSequence().entropy
    if isinstance(random_state, Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def _instance_seed(entropy, x0, target):
    """Seed from the explainer's entropy and the instance's own values."""
    digest = hashlib.blake2b(
        np.ascontiguousarray(x0, dtype=float).tobytes() + str(int(target)).encode(),
        digest_size=16,
    ).digest()
    words = np.frombuffer(digest, dtype=np.uint32).tolist()
    return np.random.SeedSequence([entropy, *words])


def _as_2d(X):
    if isinstance(X, pd.DataFrame):
        if isinstance(X.columns, pd.MultiIndex):
            raise ValueError(
                "X has MultiIndex columns; give it one level of column names, "
                "e.g. X.columns = ['_'.join(map(str, c)) for c in X.columns]."
            )
        return X
    if sp.issparse(X):
        raise TypeError(
            "Sparse data is not supported: pass a dense array or a DataFrame "
            "holding the raw features the classifier takes."
        )
    if isinstance(X, pd.Series):
        raise ValueError(
            "X is a Series; pass a DataFrame (e.g. series.to_frame().T for one row)."
        )
    array = np.asarray(X)
    if array.ndim != 2:
        raise ValueError(
            f"Expected a 2-dimensional X (n_samples, n_features), got shape "
            f"{array.shape}. Reshape your data, e.g. X.reshape(1, -1) for a "
            "single row."
        )
    return array


def _range(target_range):
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


def _check_finite(encoded, schema):
    """No infinite number. A missing number goes to the model as it is: a
    model that cannot take it fails for that row alone, which is then
    reported with status ``"error"`` (the tags of a pipeline that imputes
    often claim it cannot take NaN, so they are not trusted to refuse)."""
    numbers = encoded[:, ~schema.is_categorical]
    names = [n for n, c in zip(schema.names, schema.is_categorical) if not c]
    bad = np.isinf(numbers)
    if bad.any():
        column = names[int(np.flatnonzero(bad.any(axis=0))[0])]
        raise ValueError(f"Input X contains infinite values in column {column!r}.")


def _check_like_fit(X, schema):
    """Rows are matched to the features of ``fit`` by name, never silently by
    position; each row needs its own label."""
    if isinstance(X, pd.DataFrame):
        if not schema.is_frame:
            raise TypeError(
                "The explainer was fitted on an array, so its features have no "
                "names; pass an array (e.g. X.to_numpy()) with the columns in the "
                "order of fit."
            )
        if list(X.columns) != schema.names:
            raise ValueError(
                f"X has the columns {list(X.columns)}; the explainer was fitted "
                f"on {schema.names} (same names, same order)."
            )
        if isinstance(X.index, pd.MultiIndex):
            raise ValueError(
                f"X has a MultiIndex of {X.index.nlevels} levels as row labels; "
                "the output names each row by one label, which files (CSV, "
                "parquet) keep: give X one level, e.g. X.reset_index() or "
                "X.set_axis(['/'.join(map(str, k)) for k in X.index])."
            )
        duplicated = X.index[X.index.duplicated()]
        if len(duplicated):
            raise ValueError(
                f"X has duplicate index labels {duplicated.unique()[:5].tolist()}; "
                "the output names each row by its label, so each row needs its "
                "own (e.g. X.reset_index(drop=True))."
            )
    elif schema.is_frame:
        raise TypeError(
            f"The explainer was fitted on a DataFrame with the columns "
            f"{schema.names}; pass a DataFrame with these columns, not "
            f"{type(X).__name__} matched by position."
        )


def _is_fitted(estimator):
    if hasattr(estimator, "__sklearn_is_fitted__"):
        return bool(estimator.__sklearn_is_fitted__())
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        return False
    except TypeError:
        # not a scikit-learn estimator: trust it when it looks fitted
        return hasattr(estimator, "classes_")
    return True


def _default_estimator(schema, random_state):
    model = HistGradientBoostingClassifier(random_state=random_state)
    categorical = [schema.names[j] for j in np.flatnonzero(schema.is_categorical)]
    # pandas nullable columns (Int64, string, ...) as NumPy ones, <NA> as NaN
    nullable = any(getattr(d, "na_value", None) is pd.NA for d in schema.dtypes)
    nullable = (
        [FunctionTransformer(plain_missing, feature_names_out="one-to-one")]
        if nullable
        else []
    )
    if not categorical:
        return make_pipeline(*nullable, model) if nullable else model
    encode = ColumnTransformer(
        [
            (
                "categories",
                OneHotEncoder(handle_unknown="ignore", sparse_output=False),
                categorical,
            )
        ],
        remainder="passthrough",
    )
    return make_pipeline(*nullable, encode, model)

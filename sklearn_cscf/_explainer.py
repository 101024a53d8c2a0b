"""SequentialCounterfactualExplainer: parameters, fit, explain, transform, score."""

import hashlib
from numbers import Integral, Real

import numpy as np
import pandas as pd
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context, clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder
from sklearn.utils import check_random_state, get_tags
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import (
    _check_feature_names_in,
    check_is_fitted,
    validate_data,
)
from threadpoolctl import threadpool_limits

from sklearn_cscf._engine import Problem, Shipment, explain_block
from sklearn_cscf._frames import build_details, build_frame, build_states
from sklearn_cscf._model import ClassTarget, ModelAdapter
from sklearn_cscf._objectives import default_objectives
from sklearn_cscf._result import STATUS_ALREADY_TARGET, STATUS_OK, InstanceResult
from sklearn_cscf._schema import FeatureSchema
from sklearn_cscf._search import SearchSettings
from sklearn_cscf.actions import Action, CompiledAction
from sklearn_cscf.graph import CompiledGraph, FeatureGraph


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
    target_class : label or "opposite", default=None
        The class to reach. ``None``: the positive class ``classes_[1]`` of a
        binary problem. ``"opposite"``: for each row, the class the model does
        not predict for it (binary problems).
    immutable_features : list, default=None
        Features that the default actions leave alone, and that no action may
        change.
    population_size : int, default=500
        Individuals per generation.
    n_generations : int, default=150
        Generations (the first evaluates the random initial population).
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
        Stop early when the elite set has not changed for this many
        generations; ``None`` runs every generation.
    refine : bool, default=True
        After the search, pull every step of each final sequence back to the
        least change that still reaches the target (bisection on the step's
        value, every constraint checked), then keep the Pareto-optimal ones.
        This goes beyond the paper: random keys only approach a range end or
        the model's decision threshold. ``False`` reports the search's front
        as the paper does.
    batch_size : int, default=32
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
    classes_ : ndarray
        Its classes.
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
        "immutable_features": ["array-like", None],
        "population_size": [Interval(Integral, 2, None, closed="left")],
        "n_generations": [Interval(Integral, 1, None, closed="left")],
        "mutant_fraction": [Interval(Real, 0, 1, closed="both")],
        "crossover_bias": [Interval(Real, 0, 1, closed="both")],
        "elite_fraction": [Interval(Real, 0, 1, closed="neither")],
        "max_sequence_length": [Interval(Integral, 1, None, closed="left"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left"), None],
        "refine": ["boolean"],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
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
        immutable_features=None,
        population_size=500,
        n_generations=150,
        mutant_fraction=0.2,
        crossover_bias=0.7,
        elite_fraction=0.2,
        max_sequence_length=None,
        n_iter_no_change=None,
        refine=True,
        batch_size=32,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.actions = actions
        self.feature_graph = feature_graph
        self.target_class = target_class
        self.immutable_features = immutable_features
        self.population_size = population_size
        self.n_generations = n_generations
        self.mutant_fraction = mutant_fraction
        self.crossover_bias = crossover_bias
        self.elite_fraction = elite_fraction
        self.max_sequence_length = max_sequence_length
        self.n_iter_no_change = n_iter_no_change
        self.refine = refine
        self.batch_size = batch_size
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ #
    @_fit_context(prefer_skip_nested_validation=False)
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
        X = _as_2d(X)
        validate_data(self, X, skip_check_array=True, reset=True)
        if X.shape[0] == 0:
            raise ValueError("X has no rows; fit needs data to learn from.")
        schema = FeatureSchema(X)
        self.estimator_ = self._fit_estimator(X, y, schema)
        classes = getattr(self.estimator_, "classes_", None)
        if classes is None:
            raise TypeError(
                "The estimator has no classes_ attribute; the explainer needs a "
                "classifier."
            )
        self.classes_ = np.asarray(classes)
        self._resolve_target()
        immutable = self._immutable_features(schema)
        actions = self._resolve_actions(schema, immutable)
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
        self._schema = schema
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
                "yet; pass fit(X, y) or a fitted estimator."
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
        return estimator.fit(X, y)

    def _resolve_target(self):
        classes = self.classes_
        target = self.target_class
        if classes.shape[0] < 2:
            raise ValueError(
                f"The classifier knows only one class ({classes.tolist()}); "
                "counterfactuals need at least two classes."
            )
        if target is None or (isinstance(target, str) and target == "opposite"):
            if classes.shape[0] != 2:
                raise ValueError(
                    f"target_class={target!r} needs a binary classifier; this one "
                    f"has classes {classes.tolist()}. Name the target class."
                )
            self._target_index = None if target is not None else 1
            return
        matches = np.flatnonzero(classes == target)
        if matches.size == 0:
            raise ValueError(
                f"target_class={target!r} is not one of the estimator's classes "
                f"{classes.tolist()}."
            )
        self._target_index = int(matches[0])

    def _immutable_features(self, schema):
        if self.immutable_features is None:
            return set()
        immutable = list(np.asarray(self.immutable_features, dtype=object).ravel())
        for name in immutable:
            schema.column(name, what="immutable_features:")
        return set(immutable)

    def _resolve_actions(self, schema, immutable):
        if self.actions is None:
            actions = [
                Action(f"set_{name}", name)
                for name in schema.names
                if name not in immutable
            ]
            if not actions:
                raise ValueError("Every feature is immutable: there is nothing to do.")
            return actions
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

    def _problem(self):
        """What every instance's search shares."""
        schema = self._schema
        return Problem(
            schema=schema,
            actions=self._compiled_actions,
            graph=self._compiled_graph,
            objectives=default_objectives(schema, self._compiled_actions),
            target=ClassTarget(),
            settings=self._settings(),
            estimator=self.estimator_,
            classes=self.classes_,
            refine=self.refine,
        )

    def _explain_results(self, X):
        """Validated ``X``, its index, and one ``InstanceResult`` per row."""
        check_is_fitted(self)
        X = _as_2d(X)
        validate_data(self, X, skip_check_array=True, reset=False)
        schema = self._schema
        encoded = schema.encode(X)
        index = X.index if isinstance(X, pd.DataFrame) else pd.RangeIndex(len(X))
        model = ModelAdapter(self.estimator_, schema, self.classes_)
        if encoded.shape[0]:
            predicted = model.answer(encoded).decision
        else:
            predicted = np.empty(0, dtype=np.intp)
        if self._target_index is None:  # "opposite"
            targets = 1 - predicted
        else:
            targets = np.full(encoded.shape[0], self._target_index)
        needing = np.flatnonzero(predicted != targets)
        entropy = _base_entropy(self.random_state)
        seeds = [_instance_seed(entropy, encoded[r], targets[r]) for r in needing]
        blocks = _blocks(needing.size, self.batch_size, effective_n_jobs(self.n_jobs))
        shipment = Shipment(self._problem())
        tasks = [
            delayed(_explain_block)(
                shipment,
                encoded[needing[block]],
                targets[needing[block]],
                [seeds[k] for k in block],
            )
            for block in blocks
        ]
        found = []
        with _progress(self.verbose, needing.size) as progress:
            parallel = Parallel(n_jobs=self.n_jobs, return_as="generator")
            for block_results in parallel(tasks):
                found.extend(block_results)
                progress.update(len(block_results))
        results = [
            InstanceResult(x0=x0, target=int(t), status=STATUS_ALREADY_TARGET)
            for x0, t in zip(encoded, targets)
        ]
        for r, result in zip(needing, found):
            results[r] = result
        return X, index, results

    def explain(self, X, return_states=False, return_details=False):
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
            ``sequence_cost``), ``step`` (1..``length``), ``action``,
            ``feature``, ``old_value`` and ``new_value`` (the feature before
            and after the step, as text), ``old_number`` and ``new_number``
            (the same as numbers; NaN for categorical features), ``effort``
            (b), ``discount`` (g), ``cost`` (b * g), ``target_proba``
            (probability of the target class after the step; NaN for a model
            without ``predict_proba``), ``sequence_cost``,
            ``sequence_effort``, ``gower_distance``, ``length``,
            ``target_class`` and ``status`` (``"ok"``). A row with no sequence
            found has one row with status ``"no_counterfactual"``; a row
            already classified as the target, ``"already_target"``.
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
            block's time) and ``n_refined`` (reported sequences made cheaper
            by refinement).
        """
        X, index, results = self._explain_results(X)
        out = [
            build_frame(
                results, index, self._schema, self._compiled_actions, self.classes_
            )
        ]
        if return_states:
            out.append(build_states(results, index, self._schema))
        if return_details:
            out.append(build_details(results, index))
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
        X, index, results = self._explain_results(X)
        states = self._schema.missing_states(len(results))
        for r, result in enumerate(results):
            if result.status == STATUS_ALREADY_TARGET:
                states[r] = result.x0
            elif result.status == STATUS_OK:
                states[r] = result.final_state(0)
        return self._schema.to_frame(states, index=index)

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

    def score(self, X, y=None):
        """Share of the rows needing recourse for which a sequence was found.

        Rows already classified as the target class do not count; when no row
        needs recourse the score is 1.0. Higher is better, so the explainer's
        parameters can be tuned with ``GridSearchCV``.

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
        """
        _, _, results = self._explain_results(X)
        statuses = [r.status for r in results if r.status != STATUS_ALREADY_TARGET]
        if not statuses:
            return 1.0
        return float(np.mean([s == STATUS_OK for s in statuses]))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # missing values are kept as they are: the classifier decides
        tags.input_tags.allow_nan = _estimator_allows_nan(self.estimator)
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.target_tags.required = False
        # transform returns a DataFrame of float (numeric) and label columns
        tags.transformer_tags.preserves_dtype = []
        tags.non_deterministic = self.random_state is None
        return tags


# ---------------------------------------------------------------------- #
def _explain_block(shipment, x0, targets, seeds):
    """Search and describe a block of encoded instances (a worker's task)."""
    # One BLAS/OpenMP thread, as in joblib's workers: results do not depend on
    # n_jobs, and several workers do not oversubscribe the cores.
    with threadpool_limits(limits=1):
        return explain_block(shipment.problem, x0, targets, seeds)


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


def _estimator_allows_nan(estimator):
    if estimator is None:  # the default gradient boosting handles NaN
        return True
    try:
        return get_tags(estimator).input_tags.allow_nan
    except (AttributeError, TypeError, ValueError):
        return True


def _default_estimator(schema, random_state):
    model = HistGradientBoostingClassifier(random_state=random_state)
    categorical = [schema.names[j] for j in np.flatnonzero(schema.is_categorical)]
    if not categorical:
        return model
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
    return make_pipeline(encode, model)

"""SequentialCounterfactualExplainer: parameters, fit, explain, transform, score."""

import functools
import inspect
import os
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_cscf._compile import Settings, feature_info, resolve, warn_unfitted_clone
from sklearn_cscf._driver import run
from sklearn_cscf._input_frames import to_pandas
from sklearn_cscf._sklearn_compat import (
    HasMethods,
    StrictInterval,
    StrOptions,
    check_feature_names_in,
    fit_context,
    validate_parameter_constraints,
)
from sklearn_cscf._status import STATUS_ALREADY_TARGET, STATUS_OK
from sklearn_cscf._validation import check_has_features, check_like_fit, check_X
from sklearn_cscf._version import __version__
from sklearn_cscf.graph import FeatureGraph


def unfitted_on_failure(fit):
    """``fit`` that leaves the explainer as it was before when it fails:
    what it added is removed and what it changed is put back (an unfitted
    explainer stays unfitted, so that the next call raises
    ``NotFittedError``, not a half-fitted state's error). What scikit-learn
    set on the explainer around ``fit`` (its callback context, say) stays."""

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        before = dict(vars(self))
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            for name in [n for n in vars(self) if n not in before]:
                delattr(self, name)
            for name, value in before.items():
                setattr(self, name, value)
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
        (categories one-hot encoded) on ``(X, y)``, with one OpenMP thread as
        ``explain``'s searches have (the same model, trained many times
        faster on a busy machine).
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
        the model accepts with less than that needs recourse too. The
        probabilities are compared at 10 decimals (so is ``replay``).
        Without it, refinement pulls each plan to the least change the model
        accepts, so plans often end just past the threshold: the frame's
        ``margin`` says how far, and :func:`~sklearn_cscf.describe` flags
        plans less than 0.05 above it as fragile. ``None`` keeps the paper's
        definition (the model's decision alone) and every model's own
        threshold; how much margin is enough depends on the model.
    immutable_features : list, default=None
        Features that the default actions leave alone, and that no action may
        change.
    population_size : int, default=500
        Individuals per generation.
    n_generations : int or "auto", default="auto"
        Generations (the first evaluates the random initial population).
        ``"auto"`` (beyond the paper) spends them where they are needed:
        with ``refine=True``, every plan of up to three actions, each step
        at its far end(s) (one or two steps also at a quarter, half and three
        quarters of their range), and a fixed spread of about eight times
        ``population_size`` genotypes (a Sobol design, the same for every row
        and seed) are judged first, in one model call for a row alone (a
        few rows per call in a block; when there are at most three times
        ``population_size`` such plans), and a row with a valid one goes
        straight to refinement, without a search: its plans do not depend
        on ``random_state``. The other rows are searched: a row's search
        stops once its two cheapest plans (actions and order; refinement
        polishes their values) have not changed for
        ``n_iter_no_change`` generations (25 when ``None``), after at least
        30 and at most 300 generations; a row with no feasible sequence
        after 150 generations stops there. An int runs exactly that many,
        e.g. the paper's budget of 150, for every row. ``return_details=True``
        reports the generations each row ran (0: none was needed).
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
        After the search, polish every plan of the front by a bounded local
        search: each step pulled back to the cheapest value that still
        reaches the target (evenly spaced values and training values tried,
        then the edge searched with three points a round), other
        orders, steps traded, an action inserted, dropped or swapped, two
        steps moved together along the decision boundary, the dearest step
        replaced, and every action alone (see the user guide); at most five
        times the states the search asked about. Beyond the paper, which
        ``False`` reproduces.
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
        reports its cheapest order only.
    all_values : bool, default=False
        Report every Pareto-optimal sequence of a reported plan and order:
        the same steps with other values, nearer to the row (a smaller Gower
        distance) but dearer; ``False`` reports the cheapest values of each
        order only. ``max_plans=None, all_orders=True, all_values=True``
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
    max_model_rows : int, default=None
        The most rows sent to the model in one call, in ``fit`` (the rows of
        ``X`` it is asked about) and in :meth:`explain` (the rows to explain,
        each generation's new states, refinement, the probes of
        ``"unreachable"`` and the check of the rows a checkpoint gives back):
        larger batches are sent in chunks. ``None``: every row in one call,
        and while searching at most ``population_size`` times the rows of a
        block, or 4,096 where that is fewer. Set it for a model that refuses
        large batches (a web service with a request limit, a GPU with little
        memory); the answers do not depend on it (probabilities are kept to
        10 decimals).
    n_jobs : int, default=None
        Blocks of instances explained in parallel (joblib); ``-1`` uses all
        cores. No more workers are started than there are blocks of rows to
        search. The estimator and the compiled problem are sent once per
        worker process, not once per instance (so a model that cannot be
        pickled needs ``n_jobs=1``). A worker that dies (killed, out of
        memory) stops the run with an error naming it and the rows it held;
        with a ``checkpoint``, the same call run again resumes.
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
    frame_library_ : str or None
        The kind of frame ``fit`` was given, ``"pandas"`` or ``"polars"``,
        and so the kind the model is handed (a model fitted on polars is
        given polars); ``None`` for an array.
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
        "estimator": [HasMethods(["predict_proba"]), HasMethods(["predict"]), None],
        "actions": [list, tuple, None],
        "feature_graph": [FeatureGraph, None],
        "target_class": "no_validation",
        "target_range": ["array-like", None],
        "target_margin": [StrictInterval(Real, 0, None, closed="left")],
        "min_target_proba": [StrictInterval(Real, 0, 1, closed="right"), None],
        "immutable_features": ["array-like", None],
        "population_size": [StrictInterval(Integral, 2, None, closed="left")],
        "n_generations": [
            StrictInterval(Integral, 1, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "mutant_fraction": [StrictInterval(Real, 0, 1, closed="both")],
        "crossover_bias": [StrictInterval(Real, 0, 1, closed="both")],
        "elite_fraction": [StrictInterval(Real, 0, 1, closed="neither")],
        "max_sequence_length": [StrictInterval(Integral, 1, None, closed="left"), None],
        "n_iter_no_change": [StrictInterval(Integral, 1, None, closed="left"), None],
        "refine": ["boolean"],
        "plausibility": ["boolean", StrictInterval(Integral, 1, None, closed="left")],
        "errors": [StrOptions({"warn", "raise"})],
        "max_plans": [StrictInterval(Integral, 1, None, closed="left"), None],
        "all_orders": ["boolean"],
        "all_values": ["boolean"],
        "batch_size": [StrictInterval(Integral, 1, None, closed="left")],
        "max_model_rows": [StrictInterval(Integral, 1, None, closed="left"), None],
        "n_jobs": [
            StrictInterval(Integral, None, -1, closed="right"),
            StrictInterval(Integral, 1, None, closed="left"),
            None,
        ],
        "random_state": [
            StrictInterval(Integral, 0, 2**32 - 1, closed="both"),
            np.random.RandomState,
            None,
        ],
        "verbose": ["verbose"],
    }

    # the keywords of explain (checked at each call)
    _explain_parameter_constraints: dict = {
        "return_states": ["boolean"],
        "return_details": ["boolean"],
        "checkpoint": [str, os.PathLike, None],
        "shared_checkpoint": ["boolean"],
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
        all_values=False,
        errors="warn",
        batch_size=64,
        max_model_rows=None,
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
        self.all_values = all_values
        self.errors = errors
        self.batch_size = batch_size
        self.max_model_rows = max_model_rows
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ #
    @fit_context(prefer_skip_nested_validation=False)
    @unfitted_on_failure
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
        given, X = X, check_X(to_pandas(X))
        validate_data(self, X, skip_check_array=True, reset=True)
        if X.shape[0] == 0:
            raise ValueError("X has no rows; fit needs data to learn from.")
        check_has_features(X)
        fitted = resolve(Settings.from_params(self.get_params(deep=False)), X, given, y)
        self._fitted = fitted
        self.estimator_ = fitted.estimator
        self.classes_ = fitted.classes
        self.uses_predict_ = fitted.uses_predict
        self.frame_library_ = fitted.schema.model_frame
        self.actions_ = [action.resolved() for action in fitted.actions]
        self.feature_kinds_, self.feature_ranges_, self.categories_ = feature_info(
            fitted.schema
        )
        return self

    # ------------------------------------------------------------------ #
    def _run(self, X, *, with_states=False, checkpoint=None, shared_checkpoint=False):
        """Check ``X`` against ``fit`` and hand it to the run driver."""
        check_is_fitted(self)
        X = check_X(to_pandas(X))
        check_like_fit(X, self._fitted.schema)
        validate_data(self, X, skip_check_array=True, reset=False)
        return run(
            self._fitted,
            Settings.from_params(self.get_params(deep=False)),
            X,
            with_states=with_states,
            checkpoint=checkpoint,
            shared_checkpoint=shared_checkpoint,
            stacklevel=3,
        )

    def explain(
        self,
        X,
        *,
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
            classifier), ``margin`` (how far the sequence ends past the
            line: its last ``target_proba`` above the decision threshold of
            a binary classifier deciding by the arg-max of its
            probabilities, or its last ``prediction`` inside
            ``target_range``; NaN where no fixed threshold is known: three
            classes or more, a threshold of the model's own),
            ``plausibility`` (only with ``plausibility``),
            ``sequence_cost``, ``sequence_effort``, ``gower_distance``,
            ``length``, ``target_class``, ``status`` (``"ok"``) and
            ``message``. Every row of ``X`` is answered, in input order: a
            row with no sequence found has one row with status
            ``"no_counterfactual"`` (``"unreachable"``, with what was tried in
            ``message``, when not even the actions' extremes reach the target);
            a row already classified as the target,
            ``"already_target"``; a row whose model call or user callable
            raised (with ``errors="warn"``), ``"error"`` and the ``message``
            naming what failed. ``max_plans``, ``all_orders`` and
            ``all_values`` choose which sequences are shown.
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
            block's wall-clock time), ``n_refined`` (sequences of the front,
            before ``max_plans`` and ``all_orders``, refined and cheaper than
            the cheapest sequence the search found), ``cpu_seconds`` (its
            share, as of ``total_seconds``, of the CPU time of the process
            or worker that explained its block) and ``message``.

        Other Parameters
        ----------------
        checkpoint : str or path-like, default=None
            A directory where each finished block of rows is saved as soon as
            it is done. Run again with the same explainer and ``X`` (after an
            interruption, say), the rows already there are not searched
            again, and the output is the same as an uninterrupted run's; rows
            that ended in ``"error"`` are tried again. The files are plain
            data (JSON and NumPy ``.npz``), never unpickled. A directory
            holding another run's results (another model type or parameters,
            other rows, ...), or files its manifest does not list or whose
            content hash differs, is refused. The final states of the plans
            loaded are asked about again, in one call: rows whose plans the
            model now rejects (retrained since) are explained again, with a
            warning. A failed save (a full disk, a file-size limit) warns
            and stops checkpointing; every row is still returned. A run holds
            the directory's lock: a second process explaining into it at the
            same time is refused at once. A worker that dies stops the run
            with an error naming it; the same call then resumes. A directory
            that cannot be written to (read-only media) is read, and the
            rows it lacks are explained but not saved.
        shared_checkpoint : bool, default=False
            Use a ``checkpoint`` directory that other users can write to
            (writable by its group or by all, or owned by someone else), and
            so trust every one of them. Refused by default: whoever can write
            there can change the results you load. Must be a boolean, and
            ``True`` needs a ``checkpoint``.
        """
        validate_parameter_constraints(
            self._explain_parameter_constraints,
            {
                "return_states": return_states,
                "return_details": return_details,
                "checkpoint": checkpoint,
                "shared_checkpoint": shared_checkpoint,
            },
            caller_name=f"{type(self).__name__}.explain",
        )
        if shared_checkpoint and checkpoint is None:
            raise ValueError(
                "shared_checkpoint=True trusts a checkpoint directory that "
                "others can write to, but no checkpoint was given "
                "(checkpoint=None): pass the directory as checkpoint=..., or "
                "leave shared_checkpoint out."
            )
        explained = self._run(
            X,
            with_states=return_states,
            checkpoint=checkpoint,
            shared_checkpoint=shared_checkpoint,
        )
        out = [explained.frame]
        if return_states:
            out.append(explained.states)
        if return_details:
            out.append(explained.details)
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
        return self._run(X).final_states()

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
        return check_feature_names_in(self, input_features)

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
        details = self._run(X).details
        statuses = details["status"][details["status"] != STATUS_ALREADY_TARGET]
        if statuses.empty:
            return 1.0
        return float((statuses == STATUS_OK).mean())

    def __sklearn_clone__(self):
        # scikit-learn's clone; a fitted model cloned unfitted is said at once,
        # not as one error buried among a grid search's failed fits
        cloned = super().__sklearn_clone__()
        # this method, sklearn's clone, its caller
        warn_unfitted_clone(self.estimator, cloned.estimator, stacklevel=3)
        return cloned

    # ------------------------------------------------------------------ #
    def __getstate__(self):
        # a copy: object.__getstate__ may give the instance's own __dict__
        state = dict(super().__getstate__())
        # the version that pickled it, checked on load (as scikit-learn
        # does for its own estimators)
        state["_sklearn_cscf_version"] = __version__
        return state

    def __setstate__(self, state):
        state = dict(state)
        pickled_by = state.pop("_sklearn_cscf_version", None)
        if pickled_by != __version__:
            by = (
                f"version {pickled_by}"
                if pickled_by is not None
                else "a version before 0.1.0.dev0 (which records none)"
            )
            warnings.warn(
                f"Trying to unpickle {type(self).__name__} from sklearn-cscf "
                f"{by} when using version {__version__}. This might lead to "
                "breaking code or invalid results: fit the explainer again "
                "with this version (fit searches nothing; it is quick).",
                UserWarning,
                stacklevel=2,
            )
            # parameters added since: their defaults
            signature = inspect.signature(type(self).__init__)
            for name, parameter in signature.parameters.items():
                if name != "self" and name not in state:
                    state[name] = parameter.default
        super().__setstate__(state)

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

"""Replay: re-apply reported sequences from scratch and check every step.

:func:`replay` takes the frame that
:meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain` returns and,
for every reported sequence, starts again from the row of ``X`` and applies
the reported steps one at a time, as a person would: the new value, the
action's consequences, its conditions, its effort and the graph's discount on
the state before the step, then the model's verdict on the new state. It uses
only the public :class:`~sklearn_cscf.Action` and
:class:`~sklearn_cscf.FeatureGraph` definitions (the explainer's ``actions_``
with their learned value spaces, and its ``feature_graph``), never the
search's batched simulator, so it is an independent check of what the search
reports.
"""

from numbers import Real

from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_cscf._frames import check_frame
from sklearn_cscf._input_frames import to_pandas
from sklearn_cscf._replay._frame import COLUMNS, to_frame
from sklearn_cscf._replay._stepper import replay_instance
from sklearn_cscf._replay._util import is_missing
from sklearn_cscf._replay._values import Definitions
from sklearn_cscf._replay._verdict import check_reached
from sklearn_cscf._sklearn_compat import Interval, validate_params
from sklearn_cscf._validation import check_X

# the columns of explain's frame that a replay reads
_REQUIRED = (
    "instance",
    "solution",
    "step",
    "action",
    "feature",
    "old_value",
    "new_value",
    "old_number",
    "new_number",
    "effort",
    "discount",
    "cost",
    "target_proba",
    "sequence_cost",
    "length",
    "target_class",
    "status",
)


@validate_params(
    {
        "explainer": "no_validation",  # check_is_fitted says what is wrong
        "X": "no_validation",  # check_X, as the explainer checks it
        "explanations": "no_validation",  # check_frame names what gives it
        "states": "no_validation",
        "rtol": [Interval(Real, 0, None, closed="left")],
        "atol": [Interval(Real, 0, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def replay(explainer, X, explanations, states=None, *, rtol=1e-9, atol=1e-9):
    """Re-apply every reported sequence to its row of ``X`` and check it.

    For every sequence (instance, solution) of ``explanations``, start again
    from the instance's row of ``X`` and apply the reported steps one at a
    time: set the action's feature to the reported new value (``new_number``
    for numeric features, ``new_value`` for categorical ones), apply the
    action's effects in order, evaluate its precondition on the state before
    and its postcondition on both states, its effort ``b`` on both states and
    the discount ``g`` of :meth:`FeatureGraph.discount
    <sklearn_cscf.FeatureGraph.discount>` on the state before (Eq. 1-2; 1
    without a graph), and ask the model about the new state. The value spaces
    are those the explainer learned in ``fit`` (``explainer.actions_``); what
    must be reached follows its ``target_class`` (a class, a set of classes,
    or ``"opposite"``: any class but the one the model predicts for the row),
    ``min_target_proba`` and, for a regressor, ``target_range`` and
    ``target_margin`` (an open end, ``None``, included). The model is asked
    about all the states at once, or about ``max_model_rows`` of them per
    call when the explainer sets it.

    Each step is then compared with what the frame reports (the old value, the
    effort, the discount, the cost, the probability of the target class or a
    regressor's prediction, the sequence's cost, effort, length and Gower
    distance, the target's name) and, with ``states``,
    with the reported state after the step. Everything that does not hold is
    named in the ``problems`` column; ``passed`` says there is nothing there.

    Parameters
    ----------
    explainer : SequentialCounterfactualExplainer
        The fitted explainer that produced ``explanations``.
    X : DataFrame or array-like of shape (n_samples, n_features)
        The rows given to ``explain`` (more rows are fine), with the columns
        seen in ``fit``. The frame's ``instance`` labels are looked up in
        ``X``'s index (row positions for an array).
    explanations : DataFrame
        The frame returned by ``explainer.explain(X)``, or any subset of its
        rows that keeps whole sequences (a frame read back with
        ``pandas.read_csv`` works too).
    states : DataFrame, default=None
        The states returned with it by ``explain(X, return_states=True)``;
        each replayed state is compared with the reported one.
    rtol, atol : float, default=1e-9
        Relative and absolute tolerance of the numeric comparisons (values,
        efforts, discounts, costs, probabilities, range bounds).

    Returns
    -------
    DataFrame
        One row per state of each sequence, in the frame's order of instances
        and sequences: step 0 (the instance itself), then one row per step;
        and one row (step 0) for each instance without a sequence. Columns:

        - ``instance``, ``solution``, ``step``, ``status``: as in the frame;
        - ``action``, ``feature``, ``old_value``, ``new_value``: the step's
          action, the feature it sets, and that feature's replayed raw value
          before and after the step;
        - ``effort``, ``discount``, ``cost``: the replayed ``b``, ``g`` and
          ``b * g``; ``sequence_cost``: the sum of ``cost`` over the sequence;
        - ``repeated``: the action was already taken earlier in the sequence;
          ``in_space``: the new value lies in the action's value space;
          ``in_direction``: it respects the action's direction from the value
          before the step; ``precondition``, ``postcondition``: what the
          action's conditions return (True without one). These are NA on
          step 0;
        - ``predicted``: the model's ``predict`` of the state (the class of
          largest ``predict_proba`` for a model without ``predict``; a
          regressor's output); ``target_class``: what to reach, named as in
          the frame (a class, ``"a or b"``, ``"not a"``, or a regressor's
          ``"[low, high]"``); ``target_proba``: the ``predict_proba`` of the
          acceptable classes together (NaN without ``predict_proba`` and for
          a regressor); ``accepted``: ``predicted`` is an acceptable class
          (with ``target_proba >= min_target_proba`` when set), or lies in
          the range within the margin. The model is not asked about the row
          of an instance with status ``"error"`` (``predicted`` is missing);
        - ``final``: the row is the final state of its sequence (or the row
          of an instance without a sequence);
        - ``problems``: what is wrong with the row, ``"; "``-separated (empty
          when nothing is); ``passed``: ``problems`` is empty;
        - then the features of ``X``: the replayed state after the step.

    Raises
    ------
    TypeError
        If ``explanations`` or ``states`` is not a DataFrame.
    ValueError
        If the frame does not fit ``X`` or the explainer: a missing column,
        an instance that is not a row of ``X`` (or labels several), an action
        the explainer does not know, a sequence whose steps are not numbered
        ``1, 2, ...``, an instance with both sequences and another status or
        with several targets, or a feature of ``X`` named like a column of
        the replay.

    See Also
    --------
    SequentialCounterfactualExplainer.explain : The frame this function checks.
    FeatureGraph.discount : The discount of a step (Eq. 1-2).

    Notes
    -----
    What ``problems`` can hold, per row:

    - on each step: a repeated action, a new value outside the value space or
      against the direction, a failed pre- or postcondition, an effort that is
      not a finite number >= 0, a feature that is not the action's, a reported
      old value, effort, discount or cost that differs from the replay, a
      reported cost that is not the reported effort times the reported
      discount, a ``target_proba`` (or ``prediction``) that differs from the
      model's, the model failing on the state, and (with ``states``) a state
      that differs from the replay;
    - on each step, about its sequence: a reported ``sequence_cost`` that is
      not the replayed sum of costs, and a ``sequence_effort``, ``length`` or
      ``gower_distance`` that differs from the replay;
    - on the final step: the model does not reach the target;
    - on step 0: a ``target_class`` other than the explainer's target for the
      row; the model already reaches the target for an instance with a
      sequence (or ``"no_counterfactual"``), or does not for an
      ``"already_target"`` instance.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_cscf import Action, SequentialCounterfactualExplainer, replay
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
    >>> explanations, states = explainer.explain(rejected, return_states=True)
    >>> replayed = replay(explainer, rejected, explanations, states)
    >>> bool(replayed["passed"].all())
    True
    >>> final = replayed[replayed["final"]]
    >>> bool(final["accepted"].all())
    True

    A tampered report is caught:

    >>> tampered = explanations.copy()
    >>> tampered.loc[0, "cost"] += 1.0
    >>> checked = replay(explainer, rejected, tampered)
    >>> bool(checked["passed"].all())
    False
    >>> print(checked.loc[~checked["passed"], "problems"].iloc[0])  # doctest: +ELLIPSIS
    cost: reported ..., replayed effort x discount ...
    """
    check_is_fitted(explainer)
    X = check_X(to_pandas(X))
    validate_data(explainer, X, skip_check_array=True, reset=False)
    frame = check_frame(explanations, _REQUIRED, unpack="return_states")
    if states is not None:
        states = check_frame(
            states,
            ("instance", "solution", "step"),
            name="states",
            returned_by="explain(X, return_states=True)",
        )
    defs = Definitions(explainer, X, rtol, atol, COLUMNS)
    reported_states = None if states is None else _state_lookup(states, defs)
    records = []
    for label, rows in _instances(frame):
        records.extend(replay_instance(defs, label, rows, reported_states))
    check_reached(defs, records)
    return to_frame(defs, records)


def _instances(frame):
    """``(label, rows)`` of each instance, in the order of the frame."""
    labels = frame["instance"].tolist()
    first = {}
    for position, label in enumerate(labels):
        first.setdefault(label, []).append(position)
    for label, positions in first.items():
        yield label, frame.iloc[positions]


def _state_lookup(states, defs):
    """``(instance, solution, step) -> row`` of the reported states."""
    missing = [name for name in defs.names if name not in states.columns]
    if missing:
        raise ValueError(f"states lacks the features {missing} of X.")
    keys = zip(*(states[key].tolist() for key in ("instance", "solution", "step")))
    rows = states[defs.names].to_dict("records")
    lookup = {}
    for (label, solution, step), row in zip(keys, rows):
        if is_missing(solution) or is_missing(step):
            continue
        lookup[(label, int(solution), int(step))] = row
    return lookup

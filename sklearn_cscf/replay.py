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

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_cscf._frames import check_frame
from sklearn_cscf._status import STATUS_ALREADY_TARGET, STATUS_ERROR, STATUS_OK
from sklearn_cscf._validation import check_X

__all__ = ["replay"]

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
# the replay's own columns; the features of X follow them
COLUMNS = (
    "instance",
    "solution",
    "step",
    "status",
    "action",
    "feature",
    "old_value",
    "new_value",
    "effort",
    "discount",
    "cost",
    "sequence_cost",
    "repeated",
    "in_space",
    "in_direction",
    "precondition",
    "postcondition",
    "predicted",
    "target_class",
    "target_proba",
    "accepted",
    "final",
    "problems",
    "passed",
)
_CHECKS = ("repeated", "in_space", "in_direction", "precondition", "postcondition")
# text columns: pandas' string dtype with Python storage, as explain's frame
_TEXT = pd.StringDtype("python")


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
    ``target_margin``.

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
    X = check_X(X)
    validate_data(explainer, X, skip_check_array=True, reset=False)
    frame = check_frame(explanations, _REQUIRED, unpack="return_states")
    if states is not None:
        states = check_frame(
            states,
            ("instance", "solution", "step"),
            name="states",
            returned_by="explain(X, return_states=True)",
        )
    context = _Context(explainer, X, rtol, atol)
    reported_states = None if states is None else _state_lookup(states, context)
    records = []
    for label, rows in _instances(frame):
        records.extend(context.replay_instance(label, rows, reported_states))
    context.judge(records)
    return context.to_frame(records)


# ---------------------------------------------------------------------- #
# the explainer, X and the model
# ---------------------------------------------------------------------- #
class _Context:
    """What every replayed sequence shares: the explainer's definitions, the
    rows of ``X`` as raw values, and how to ask the model."""

    def __init__(self, explainer, X, rtol, atol):
        self.explainer = explainer
        self.X = X
        self.rtol, self.atol = float(rtol), float(atol)
        self.is_frame = isinstance(X, pd.DataFrame)
        if self.is_frame:
            self.names = list(X.columns)
            self.index = X.index
        else:
            self.names = list(range(X.shape[1]))
            self.index = pd.RangeIndex(X.shape[0])
        clashes = [name for name in self.names if name in COLUMNS]
        if clashes:
            raise ValueError(
                f"The features {clashes} of X have the names of columns of the "
                f"replay ({list(COLUMNS)}); rename them to replay."
            )
        kinds = explainer.feature_kinds_
        self.categorical = {name: kinds[name] == "categorical" for name in self.names}
        self.categories = explainer.categories_
        # categories whose labels are all str reach user callables as a str array
        self.str_categories = {
            name: all(type(c) is str for c in cats)
            for name, cats in self.categories.items()
        }
        # labels of each categorical feature by their text (the frame's form)
        self.by_text = {
            name: {str(c): c for c in reversed(cats)}
            for name, cats in self.categories.items()
        }
        self.ranges = explainer.feature_ranges_
        self.actions = {action.name: action for action in explainer.actions_}
        self.spaces = {
            action.name: _value_space(action, self.categorical[action.feature])
            for action in explainer.actions_
        }
        self.graph = explainer.feature_graph
        self.max_length = explainer.max_sequence_length
        self.estimator = explainer.estimator_
        # what to reach: classes (one, a set, "opposite"), or a regressor's range
        classes = explainer.classes_
        self.classes = None if classes is None else np.asarray(classes)
        reach = explainer._what_to_reach()
        self.target_class = reach["target_class"]
        self.min_proba = reach["min_target_proba"]
        self.target_range = reach["target_range"]
        self.target_margin = reach["target_margin"] or 0.0

    # -- values ---------------------------------------------------------- #
    def start_state(self, position):
        """The raw values of row ``position`` of ``X``."""
        if self.is_frame:
            row = [self.X.iloc[position, j] for j in range(len(self.names))]
        else:
            row = list(self.X[position])
        return {name: self.raw(name, value) for name, value in zip(self.names, row)}

    def raw(self, name, value):
        """A value as the replay holds it: a float, or a label (NaN: missing)."""
        if _missing(value):
            return np.nan
        if self.categorical[name]:
            return value
        return float(value)

    def label(self, name, text):
        """The category of ``name`` written as ``text`` in the frame."""
        if _missing(text):
            return np.nan
        return self.by_text[name].get(str(text), text)

    def view(self, state):
        """The mapping user callables receive: name -> 1-D array of one value."""
        view = {}
        for name, value in state.items():
            if not self.categorical[name]:
                array = np.array([value], dtype=float)
            elif self.str_categories[name] and isinstance(value, str):
                array = np.array([value], dtype=str)
            else:
                array = np.empty(1, dtype=object)
                array[0] = value
            array.flags.writeable = False
            view[name] = array
        return view

    def same(self, name, a, b):
        """Whether two raw values of feature ``name`` are equal."""
        if _missing(a) or _missing(b):
            return _missing(a) and _missing(b)
        if self.categorical[name]:
            return str(a) == str(b)
        return self.close(float(a), float(b))

    def close(self, a, b):
        return bool(np.isclose(a, b, rtol=self.rtol, atol=self.atol, equal_nan=True))

    def tolerance(self, *scale):
        return self.atol + self.rtol * max(abs(s) for s in scale)

    # -- the model --------------------------------------------------------- #
    def verdicts(self, states):
        """The model's decision on each state, and its probabilities (None
        without ``predict_proba``), in one call of each for all states; a
        state the model fails on gets ``None`` and the error's text."""
        try:
            predicted, proba = self._ask(states)
            if proba is None:
                proba = [None] * len(states)
            return predicted, proba, [None] * len(states)
        except Exception:  # one state at a time, to name the ones that fail
            pass
        predicted, proba, failures = [], [], []
        for state in states:
            try:
                label, row = self._ask([state])
                predicted.append(label[0])
                proba.append(None if row is None else row[0])
                failures.append(None)
            except Exception as exc:
                predicted.append(None)
                proba.append(None)
                failures.append(f"{type(exc).__name__}: {exc}")
        return predicted, proba, failures

    def _ask(self, states):
        if not states:
            return [], None
        data = self.model_input(states)
        estimator = self.estimator
        proba = None
        if self.classes is not None and hasattr(estimator, "predict_proba"):
            proba = np.asarray(estimator.predict_proba(data), dtype=float)
        if hasattr(estimator, "predict"):
            predicted = np.asarray(estimator.predict(data))
        else:
            predicted = self.classes[proba.argmax(axis=1)]
        return list(predicted), None if proba is None else list(proba)

    def target(self, decision):
        """``(acceptable, name)``: which classes reach the target for an
        instance the model now assigns to ``decision``, and the target's name
        in the frame (see the explainer's ``target_class``)."""
        classes, target = self.classes, self.target_class
        if isinstance(target, list | tuple | set | frozenset | np.ndarray | pd.Index):
            accept = np.isin(classes, list(target))
            return accept, " or ".join(str(c) for c in classes[accept])
        if target is None and classes.shape[0] == 2:
            return classes == classes[1], classes[1]
        if target is None or (isinstance(target, str) and target == "opposite"):
            if decision is None:
                return np.zeros(classes.shape[0], dtype=bool), None
            accept = classes != decision
            if classes.shape[0] == 2:
                return accept, classes[accept][0]
            return accept, f"not {decision}"
        return classes == target, target

    def reaches(self, predicted, proba, accept):
        """Whether a state reaches the target, and its score (the probability
        of the acceptable classes, or a regressor's prediction)."""
        if predicted is None:
            return False, np.nan
        if self.classes is None:
            low, high = (float(v) for v in self.target_range)
            value = float(predicted)
            margin = self.target_margin
            return bool(low + margin <= value <= high - margin), value
        reached = bool(accept[np.flatnonzero(self.classes == predicted)].any())
        if proba is None:
            return reached, np.nan
        chance = float(np.asarray(proba)[accept].sum())
        if self.min_proba is not None and chance < self.min_proba:
            reached = False
        return reached, chance

    def model_input(self, states):
        """The states as rows of the kind ``X`` holds (and the model takes)."""
        columns = {name: [state[name] for state in states] for name in self.names}
        if not self.is_frame:
            if not any(self.categorical.values()):
                dtype = self.X.dtype if self.X.dtype.kind == "f" else float
                return np.array([columns[n] for n in self.names], dtype=dtype).T
            out = np.empty((len(states), len(self.names)), dtype=object)
            for j, name in enumerate(self.names):
                out[:, j] = columns[name]
            return out
        data = {}
        for name, dtype in zip(self.names, self.X.dtypes):
            values = columns[name]
            if not self.categorical[name]:
                data[name] = np.array(values, dtype=float)
            elif isinstance(dtype, pd.CategoricalDtype):
                # labels the explainer does not know (a tampered frame) come last
                known = self.categories[name]
                unknown = {v for v in values if not _missing(v)} - set(known)
                data[name] = pd.Categorical(
                    values,
                    categories=[*known, *sorted(unknown, key=str)],
                    ordered=dtype.ordered,
                )
            elif dtype.kind == "b" and not any(map(_missing, values)):
                data[name] = np.array(values, dtype=bool)
            elif isinstance(dtype, pd.api.extensions.ExtensionDtype):
                data[name] = pd.array(values, dtype=dtype)
            else:
                data[name] = pd.Series(values, dtype=object)
        return pd.DataFrame(data, columns=self.names)

    # -- one instance -------------------------------------------------------- #
    def replay_instance(self, label, rows, reported_states):
        """The records of one instance: each sequence, or its single row."""
        position = self.position(label)
        x0 = self.start_state(position)
        statuses = rows["status"].astype(object).unique().tolist()
        if any(_missing(status) for status in statuses):
            raise ValueError(f"Instance {label!r} has rows without a status.")
        if STATUS_OK in statuses and len(statuses) > 1:
            raise ValueError(
                f"Instance {label!r} has sequences and the statuses {statuses}; "
                "an instance has either sequences (status 'ok') or one row of "
                "another status."
            )
        target = self.reported_target(label, rows)
        if statuses != [STATUS_OK]:
            if len(rows) != 1:
                raise ValueError(
                    f"Instance {label!r} has status {statuses[0]!r} on "
                    f"{len(rows)} rows; a status other than 'ok' has one row."
                )
            record = self.start_record(label, None, statuses[0], x0, target)
            record["final"] = True
            records = [record]
        else:
            if rows["solution"].isna().any():
                raise ValueError(
                    f"Instance {label!r} has 'ok' rows without a solution number."
                )
            records = []
            for solution, steps in rows.groupby("solution", sort=True):
                records.extend(
                    self.replay_sequence(
                        label, int(solution), steps, x0, target, reported_states
                    )
                )
        return records

    def position(self, label):
        try:
            position = self.index.get_loc(label)
        except (KeyError, TypeError):
            raise ValueError(
                f"Instance {label!r} of the frame is not a row of X (its index "
                "labels, or row positions for an array)."
            ) from None
        if not isinstance(position, Integral):
            raise ValueError(
                f"Instance {label!r} labels several rows of X; the index of X "
                "must identify each instance."
            )
        return int(position)

    def reported_target(self, label, rows):
        """The instance's target as the frame names it (missing: unknown)."""
        values = rows["target_class"].astype(object).unique().tolist()
        if len(values) != 1:
            raise ValueError(
                f"Instance {label!r} has the target classes {values}; it needs "
                "exactly one."
            )
        return None if _missing(values[0]) else values[0]

    def start_record(self, label, solution, status, x0, target):
        return {
            "instance": label,
            "solution": solution,
            "step": 0,
            "status": status,
            "reported_target": target,
            "final": False,
            "problems": [],
            "state": dict(x0),
        }

    # -- one sequence -------------------------------------------------------- #
    def replay_sequence(self, label, solution, steps, x0, target, reported_states):
        steps = steps.sort_values("step", kind="stable")
        numbers = steps["step"].tolist()
        if any(_missing(t) for t in numbers) or [int(t) for t in numbers] != list(
            range(1, len(numbers) + 1)
        ):
            raise ValueError(
                f"Instance {label!r}, solution {solution}: the steps are "
                f"{numbers}; a sequence's steps are numbered 1, 2, ... "
                "without gaps or repeats."
            )
        records = [self.start_record(label, solution, STATUS_OK, x0, target)]
        state = dict(x0)
        taken = set()
        for step in steps.itertuples(index=False):
            record = self.replay_step(label, step, state, taken)
            record["solution"] = solution
            state = record["state"]
            taken.add(step.action)
            records.append(record)
        records[-1]["final"] = True
        self.check_sequence(records, steps, x0)
        if reported_states is not None:
            for record in records:
                self.check_state(record, reported_states)
        return records

    def replay_step(self, label, step, before, taken):
        """Apply one reported step to the state ``before``, as a person would."""
        action = self.actions.get(step.action)
        if action is None:
            raise ValueError(
                f"Instance {label!r}, step {step.step}: the action "
                f"{step.action!r} is not one of the explainer's actions "
                f"{list(self.actions)}."
            )
        name = action.feature
        categorical = self.categorical[name]
        if categorical:
            new = self.label(name, step.new_value)
        else:
            new = np.nan if _missing(step.new_number) else float(step.new_number)
        problems = []
        if str(step.feature) != str(name):
            problems.append(
                f"feature: reported {step.feature!r}, the action sets {name!r}"
            )
        after = dict(before)
        after[name] = new
        view_before = self.view(before)
        # each effect sees the direct change and the effects before it
        for target, fn in (action.effects or {}).items():
            value = _one(fn(view_before, self.view(after)))
            after[target] = self.raw(target, value)
        view_after = self.view(after)
        effort = (
            self.default_effort(action, before[name], after[name])
            if action.cost is None
            else float(_one(action.cost(view_before, view_after)))
        )
        discount = (
            1.0
            if self.graph is None
            else float(_one(self.graph.discount(action.affected_features, view_before)))
        )
        pre = (
            True
            if action.precondition is None
            else bool(_one(action.precondition(view_before)))
        )
        post = (
            True
            if action.postcondition is None
            else bool(_one(action.postcondition(view_before, view_after)))
        )
        space = self.spaces[action.name]
        record = {
            "instance": label,
            "step": int(step.step),
            "status": STATUS_OK,
            "action": action.name,
            "feature": name,
            "old_value": before[name],
            "new_value": new,
            "effort": effort,
            "discount": discount,
            "cost": effort * discount,
            "repeated": step.action in taken,
            "in_space": space.contains(new, self),
            "in_direction": space.follows(action.direction, before[name], new, self),
            "precondition": pre,
            "postcondition": post,
            "final": False,
            "problems": problems,
            "state": after,
            "reported": step,
        }
        return record

    def default_effort(self, action, old, new):
        """The effort of an action without ``cost`` (see :class:`Action`)."""
        scale = self.spaces[action.name].scale
        if scale is None:
            return 1.0
        return abs(new - old) / scale

    # -- checks -------------------------------------------------------------- #
    def check_sequence(self, records, steps, x0):
        """Compare each step and the sequence with what the frame reports."""
        taken = records[1:]
        sequence_cost = float(sum(r["cost"] for r in taken))
        sequence_effort = float(sum(r["effort"] for r in taken))
        final = taken[-1]["state"]
        gower = self.gower(x0, final)
        for record in records:
            record["sequence_cost"] = sequence_cost
        for record in taken:
            problems = record["problems"]
            step = record.pop("reported")
            # the score after the step: a probability, or a regressor's output
            record["reported_score"] = _float(
                getattr(step, "prediction", np.nan)
                if self.classes is None
                else step.target_proba
            )
            name = record["feature"]
            if record["repeated"]:
                problems.append(f"action {record['action']!r} repeated")
            if not record["in_space"]:
                problems.append(
                    f"new value {record['new_value']!r} outside the value space"
                )
            if not record["in_direction"]:
                action = self.actions[record["action"]]
                problems.append(
                    f"new value {record['new_value']!r} against the direction "
                    f"{action.direction!r} from {record['old_value']!r}"
                )
            if not record["precondition"]:
                problems.append("precondition fails")
            if not record["postcondition"]:
                problems.append("postcondition fails")
            if not (np.isfinite(record["effort"]) and record["effort"] >= 0):
                problems.append(
                    f"effort {_fmt(record['effort'])} is not a finite number >= 0"
                )
            old = (
                self.label(name, step.old_value)
                if self.categorical[name]
                else (np.nan if _missing(step.old_number) else float(step.old_number))
            )
            if not self.same(name, old, record["old_value"]):
                problems.append(
                    f"old value: reported {old!r}, replayed {record['old_value']!r}"
                )
            for column in ("effort", "discount"):
                self.compare(problems, column, getattr(step, column), record[column])
            reported_cost = _float(step.cost)
            self.compare(
                problems,
                "cost",
                reported_cost,
                record["cost"],
                how="replayed effort x discount",
            )
            product = _float(step.effort) * _float(step.discount)
            if not self.close(reported_cost, product):
                problems.append(
                    f"cost: reported {_fmt(reported_cost)} is not the reported "
                    f"effort x discount {_fmt(product)}"
                )
            self.compare(
                problems,
                "sequence_cost",
                step.sequence_cost,
                sequence_cost,
                how="replayed sum of costs",
            )
            if hasattr(step, "sequence_effort"):
                self.compare(
                    problems,
                    "sequence_effort",
                    step.sequence_effort,
                    sequence_effort,
                    how="replayed sum of efforts",
                )
            if hasattr(step, "gower_distance"):
                self.compare(problems, "gower_distance", step.gower_distance, gower)
            if _missing(step.length) or int(step.length) != len(taken):
                problems.append(
                    f"length: reported {step.length!r}, {len(taken)} step(s)"
                )
        if self.max_length is not None and len(taken) > self.max_length:
            taken[-1]["problems"].append(
                f"{len(taken)} steps, more than max_sequence_length={self.max_length}"
            )

    def compare(self, problems, column, reported, replayed, how="replayed"):
        reported = _float(reported)
        if not self.close(reported, replayed):
            problems.append(
                f"{column}: reported {_fmt(reported)}, {how} {_fmt(replayed)}"
            )

    def gower(self, x0, state):
        """Gower distance between ``x0`` and ``state`` (see the user guide)."""
        total = 0.0
        for name in self.names:
            a, b = x0[name], state[name]
            if _missing(a) or _missing(b):
                total += float(_missing(a) != _missing(b))
            elif self.categorical[name]:
                total += float(not self.same(name, a, b))
            else:
                low, high = self.ranges[name]
                total += abs(b - a) / (high - low) if high > low else 0.0
        return total / len(self.names)

    def check_state(self, record, reported_states):
        key = (record["instance"], record["solution"], record["step"])
        reported = reported_states.get(key)
        if reported is None:
            record["problems"].append("no reported state for this step")
            return
        state = record["state"]
        different = [
            f"{name} reported {reported[name]!r}, replayed {state[name]!r}"
            for name in self.names
            if not self.same(name, self.raw(name, reported[name]), state[name])
        ]
        if different:
            record["problems"].append("state: " + ", ".join(different))

    def judge(self, records):
        """Ask the model about every state and check its verdicts."""
        # a row that failed in the search (status "error") is not asked again
        asked = [r for r in records if r["status"] != STATUS_ERROR]
        for record in records:
            record.update(predicted=None, target_proba=np.nan, accepted=False)
        predicted, proba, failures = self.verdicts([r["state"] for r in asked])
        starts = {}
        for record, label, row, failure in zip(asked, predicted, proba, failures):
            record["predicted"], record["proba"] = label, row
            if failure is not None:
                record["problems"].append(f"the model fails: {failure}")
            if record["step"] == 0:
                starts.setdefault(record["instance"], record)
        for record in asked:
            start = starts[record["instance"]]
            accept, name = (None, None)
            if self.classes is not None:
                accept, name = self.target(start["predicted"])
            else:
                low, high = (float(v) for v in self.target_range)
                name = f"[{low:g}, {high:g}]"
            record["target_class"] = name
            record["accepted"], score = self.reaches(
                record["predicted"], record.get("proba"), accept
            )
            if self.classes is None:
                record["predicted"] = score
            else:
                record["target_proba"] = score
            self.check_verdict(record, name, score)

    def check_verdict(self, record, name, score):
        status, problems = record["status"], record["problems"]
        label = _plain(record["predicted"])
        what = "the target" if self.classes is None else f"the target {_plain(name)!r}"
        if record["step"] == 0:
            reported = record["reported_target"]
            if name is not None and (reported is None or str(reported) != str(name)):
                problems.append(
                    f"target_class: reported {_plain(reported)!r}, expected "
                    f"{_plain(name)!r}"
                )
            if status == STATUS_ALREADY_TARGET and not record["accepted"]:
                problems.append(
                    f"status 'already_target', but the model predicts {label!r}, "
                    f"not {what}"
                )
            elif status != STATUS_ALREADY_TARGET and record["accepted"]:
                problems.append(f"status {status!r}, but the model reaches {what}")
            return
        column = "prediction" if self.classes is None else "target_proba"
        self.compare(problems, column, record["reported_score"], score)
        if record["final"] and not record["accepted"]:
            problems.append(
                f"the model predicts {label!r} after the last step, not {what}"
            )

    # -- the frame ------------------------------------------------------------ #
    def to_frame(self, records):
        rows = []
        for record in records:
            row = {column: record.get(column) for column in COLUMNS}
            row["problems"] = "; ".join(record["problems"])
            row["passed"] = not record["problems"]
            rows.append((row, record["state"]))
        head = pd.DataFrame.from_records(
            [row for row, _ in rows], columns=list(COLUMNS)
        )
        head = head.astype(
            {
                "solution": "Int64",
                "step": "Int64",
                "status": _TEXT,
                "action": _TEXT,
                "old_value": object,
                "new_value": object,
                "effort": float,
                "discount": float,
                "cost": float,
                "sequence_cost": float,
                **dict.fromkeys(_CHECKS, "boolean"),
                "target_proba": float,
                "accepted": bool,
                "final": bool,
                "problems": _TEXT,
                "passed": bool,
            }
        )
        head["instance"] = pd.array(head["instance"].tolist(), dtype=self.index.dtype)
        if all(isinstance(name, str) for name in self.names):
            head["feature"] = head["feature"].astype(_TEXT)
        if self.classes is None:  # a regressor: its output, and the range
            head["predicted"] = head["predicted"].astype(float)
            head["target_class"] = head["target_class"].astype(_TEXT)
        else:  # class labels; a set of classes ("a or b", "not a") is text
            for column in ("predicted", "target_class"):
                head[column] = _as_labels(head[column].tolist(), self.classes)
        features = self.model_input([state for _, state in rows])
        if not self.is_frame:
            features = pd.DataFrame(features, columns=self.names)
        else:  # integer columns of X stay integers where every value is whole
            for name, dtype in zip(self.names, self.X.dtypes):
                column = features[name].to_numpy()
                if (
                    dtype.kind in "iu"
                    and np.isfinite(column).all()
                    and (column == np.round(column)).all()
                ):
                    features[name] = column.astype(dtype)
        return pd.concat([head, features.reset_index(drop=True)], axis=1)


# ---------------------------------------------------------------------- #
# value spaces
# ---------------------------------------------------------------------- #
class _Range:
    """A numeric range ``[low, high]``, on the grid ``low + k * step`` if any."""

    def __init__(self, low, high, step):
        self.low, self.high, self.step = float(low), float(high), step
        self.scale = self.high - self.low if self.high > self.low else None

    def contains(self, value, context):
        if _missing(value):
            return False
        tol = context.tolerance(self.low, self.high)
        if not self.low - tol <= value <= self.high + tol:
            return False
        if self.step is None:
            return True
        k = (value - self.low) / self.step
        return abs(k - round(k)) * self.step <= max(1e-8 * self.step, tol)

    def follows(self, direction, old, new, context):
        if direction == "any":
            return True
        if _missing(old) or _missing(new):
            return False
        tol = context.tolerance(old, new, self.low, self.high)
        if direction == "increase":  # the part [old, high]
            return old <= self.high + tol and new >= old - tol
        return old >= self.low - tol and new <= old + tol  # [low, old]


class _List:
    """Allowed values in order: numbers (sorted) or categories (as listed)."""

    def __init__(self, values, categorical):
        self.values = list(values)
        self.categorical = categorical
        if categorical:
            self.scale = None
        else:
            self.values = sorted(float(v) for v in self.values)
            span = self.values[-1] - self.values[0]
            self.scale = span if span > 0 else None

    def position(self, value, context):
        """Index of ``value`` in the list, or None."""
        if _missing(value):
            return None
        for k, item in enumerate(self.values):
            if self.categorical and str(item) == str(value):
                return k
            if not self.categorical and context.close(item, float(value)):
                return k
        return None

    def contains(self, value, context):
        return self.position(value, context) is not None

    def follows(self, direction, old, new, context):
        if direction == "any":
            return True
        if _missing(old) or _missing(new):
            return False
        if not self.categorical:  # strictly larger (smaller) numbers
            return new > old if direction == "increase" else new < old
        before, after = self.position(old, context), self.position(new, context)
        if before is None or after is None:
            return False
        return after > before if direction == "increase" else after < before


def _value_space(action, categorical):
    """The value space of a resolved action (``explainer.actions_``)."""
    values = action.values
    if isinstance(values, tuple):
        return _Range(values[0], values[1], action.step)
    if isinstance(values, list | np.ndarray | pd.Index | pd.Series | range):
        return _List(values, categorical)
    return _List([values], categorical)


# ---------------------------------------------------------------------- #
# the frames
# ---------------------------------------------------------------------- #
def _instances(frame):
    """``(label, rows)`` of each instance, in the order of the frame."""
    labels = frame["instance"].tolist()
    first = {}
    for position, label in enumerate(labels):
        first.setdefault(label, []).append(position)
    for label, positions in first.items():
        yield label, frame.iloc[positions]


def _state_lookup(states, context):
    """``(instance, solution, step) -> row`` of the reported states."""
    missing = [name for name in context.names if name not in states.columns]
    if missing:
        raise ValueError(f"states lacks the features {missing} of X.")
    keys = zip(
        states["instance"].tolist(),
        states["solution"].tolist(),
        states["step"].tolist(),
    )
    rows = states[context.names].to_dict("records")
    lookup = {}
    for (label, solution, step), row in zip(keys, rows):
        if _missing(solution) or _missing(step):
            continue
        lookup[(label, int(solution), int(step))] = row
    return lookup


def _as_labels(values, classes):
    """Class labels in the dtype of ``classes``; other names (a set of
    classes) as text; missing ones (rows the model was not asked about) kept."""
    known = [v for v in values if not _missing(v)]
    if not all((classes == v).any() for v in known):
        return pd.array([None if _missing(v) else str(v) for v in values], _TEXT)
    array = np.asarray(values, dtype=object)
    if len(known) == len(values):
        try:
            return pd.array(array.astype(classes.dtype), dtype=classes.dtype)
        except (TypeError, ValueError):
            pass
    return pd.array(array, dtype=object)


def _one(value):
    """The single value a user callable returned for one state."""
    if isinstance(value, pd.Series | pd.Index):
        value = value.to_numpy()
    array = np.asarray(value)
    element = array.item() if array.ndim == 0 else array.reshape(-1)[0]
    return element.item() if isinstance(element, np.generic) else element


def _missing(value):
    if value is None or value is pd.NA:
        return True
    if isinstance(value, Real) and not isinstance(value, bool | np.bool_):
        return bool(np.isnan(value))
    return False


def _plain(value):
    """A NumPy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _float(value):
    return np.nan if _missing(value) else float(value)


def _fmt(value):
    return f"{value:.10g}"

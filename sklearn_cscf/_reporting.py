"""The explanations as text (the public names are in :mod:`sklearn_cscf.reporting`)."""

import os
import textwrap
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import pandas as pd

from sklearn_cscf._frames import (
    COLUMNS,
    EXPLAIN,
    FRAGILE,
    STATE_KEYS,
    changed,
    check_frame,
    format_cost,
    free_orders,
    initial_values,
    instance_rows,
    plain,
    plural,
    sequences,
    state_table,
)
from sklearn_cscf._input_frames import to_pandas
from sklearn_cscf._saving import read_frame, write_frame
from sklearn_cscf._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    validate_params,
)
from sklearn_cscf._status import (
    STATUS_ALREADY_TARGET,
    STATUS_NO_COUNTERFACTUAL,
    STATUS_OK,
    STATUS_UNREACHABLE,
)

__all__ = ["describe", "read_explanations", "show", "write_explanations"]

# the columns of explain's frame that the text needs: not the typed numbers
# (the values as text stand in) nor the target class (target_name does)
_OPTIONAL = ("old_number", "new_number", "target_class", "reached_class", "margin")
_REQUIRED = tuple(name for name in COLUMNS if name not in _OPTIONAL)
# what a status without sequences means, and what may help
_HINTS = {
    STATUS_NO_COUNTERFACTUAL: (
        "no valid sequence found within the search budget; a larger "
        "population_size or n_generations, wider value spaces or more actions "
        "may help"
    ),
    STATUS_UNREACHABLE: (
        "neither the declared actions at the ends of their values nor each "
        "alone at values between them reach the target; more actions or "
        "wider value spaces may help"
    ),
    STATUS_ALREADY_TARGET: "the model already predicts the target class",
}
# how a header (the profile) or a status too long for a line wraps
_WRAP = {"width": 100, "subsequent_indent": "    ", "break_on_hyphens": False}
# profile="auto" lists every feature of an X of at most this many columns,
# else the features the plans change
_PROFILE_COLUMNS = 15


@validate_params(
    {
        "explanations": "no_validation",  # check_frame names what gives it
        "states": "no_validation",
        "X": "no_validation",
        "instance": "no_validation",
        "initial_proba": "no_validation",
        "target_name": [str, None],
        "max_plans": "no_validation",  # an int >= 0 or None, not a bool: below
        "noun": [str],
        "profile": [StrOptions({"auto", "changed", "full"})],
        "fragile": [Interval(Real, 0, 1, closed="both"), None],
    },
    prefer_skip_nested_validation=True,
)
def describe(
    explanations,
    states=None,
    *,
    X=None,
    instance=None,
    initial_proba=None,
    target_name=None,
    max_plans=3,
    noun="Instance",
    profile="auto",
    fragile=FRAGILE,
):
    """The explanations as text: per instance, its cheapest plans step by step.

    Per instance, in the order of the frame (the order of the rows given to
    ``explain``): a header (``noun``, the instance's label and, with ``X``, its
    profile), the probability of the target class now (with
    ``initial_proba``), then either its status or its plans. A plan is a set of
    actions (the frame's ``plan`` column; ``#1`` is plan 0); each of the
    cheapest ``max_plans`` plans is shown in its cheapest order, one line per
    step: the action, the feature it sets, the old and new values, the step's
    cost (``effort x discount`` when the feature graph discounts it) and the
    probability of the target class after the step. With ``states``, the
    other features each step changes (its consequences) follow the step
    ("and so: age 18 -> 24"). How many other orders of the same plan the frame
    holds, and what they cost, follows the plan's header; so do the nearer
    (and dearer) sequences of the same steps with other values
    (``all_values=True``). The header ends with the plan's ``margin``: how
    far its last probability lies above the decision threshold (a binary
    classifier deciding by the arg-max of its probabilities), or its last
    prediction inside the target range (a regressor). A classifier's plan
    ending less than ``fragile`` above the threshold is flagged fragile: a
    retrained or slightly different model may reject it.

    Works on a full frame and on one that keeps only some orders or plans,
    and on a frame read back with :func:`pandas.read_csv`.

    Parameters
    ----------
    explanations : DataFrame
        The frame returned by
        :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`.
    states : DataFrame, default=None
        The states returned with it by ``explain(X, return_states=True)``;
        gives the consequences of each step.
    X : DataFrame, default=None
        The explained rows, indexed by the frame's ``instance`` labels: each
        instance's profile (``feature=value, ...``) heads its text (see
        ``profile``).
    instance : label or list of labels, default=None
        The instance(s) to describe, in this order; default: every instance of
        the frame, in the frame's order.
    initial_proba : float, dict, Series or array-like, default=None
        The probability of the target class of each instance before any step
        (``model.predict_proba(X)[:, 1]`` for a binary model): a dict or Series
        keyed by instance label, an array in the order of the rows of ``X``
        (or, without ``X``, of the frame's instances: explain keeps the order
        of ``X``), or a number when one instance is described. For a
        regressor, its prediction now (``model.predict(X)``); each step then
        shows the prediction after it (the frame's ``prediction``).
    target_name : str, default=None
        The name of the target class in ``P(target_name)``; default: the
        frame's ``target_class``.
    max_plans : int or None, default=3
        Show at most this many plans per instance, the cheapest first; ``None``
        shows all of them, ``0`` only the header and the counts.
    noun : str, default="Instance"
        What an instance is ("Person", "Applicant"), heading its text.
    profile : {"auto", "changed", "full"}, default="auto"
        With ``X``, which features the header lists: ``"full"`` every column
        of ``X``; ``"changed"`` those the instance's plans change (the
        features of their steps and, with ``states``, their consequences),
        then how many others there are; ``"auto"`` every column of an ``X``
        of at most 15 columns, else those changed (wide data).
    fragile : float or None, default=0.05
        A classifier's plan whose ``margin`` (how far its last probability
        lies above the decision threshold) is below this is flagged
        ``fragile``, and a line under the instance's plans says what that
        means and how to ask for a margin (``min_target_proba``). ``None``
        flags none.

    Returns
    -------
    str
        The text of each instance, separated by blank lines.

    Raises
    ------
    TypeError
        If ``explanations``, ``states`` or ``X`` is not a DataFrame.
    ValueError
        If a frame lacks the columns of ``explain``'s, if ``instance`` names
        an instance the frame does not hold, if ``X`` or ``states`` lack a
        row needed, or if ``initial_proba`` does not fit the instances.

    See Also
    --------
    show : Print this text.
    sklearn_cscf.plotting.TargetProbabilityDisplay : The same steps, plotted.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.compose import make_column_transformer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import OneHotEncoder
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_cscf import Action, SequentialCounterfactualExplainer
    >>> from sklearn_cscf import describe
    >>> X = pd.DataFrame({"job": ["clerk", "developer"] * 10, "age": range(20, 40)})
    >>> y = (X["job"] == "developer").astype(int)
    >>> model = make_pipeline(
    ...     make_column_transformer((OneHotEncoder(), ["job"]), remainder="drop"),
    ...     DecisionTreeClassifier(random_state=0),
    ... ).fit(X, y)
    >>> retrain = Action(
    ...     "retrain", "job", values="developer",
    ...     cost=lambda b, a: 2.0,                       # two years
    ...     effects={"age": lambda b, a: b["age"] + 2},  # that pass
    ... )
    >>> explainer = SequentialCounterfactualExplainer(
    ...     model, actions=[retrain], population_size=40, n_generations=8,
    ...     random_state=0,
    ... ).fit(X)
    >>> rejected = X.head(1)
    >>> explanations, states = explainer.explain(rejected, return_states=True)
    >>> print(describe(
    ...     explanations, states, X=rejected, noun="Person", target_name="hired",
    ...     initial_proba=model.predict_proba(rejected)[:, 1],
    ... ))
    Person 0: job=clerk, age=20
      P(hired) now 0.00; 1 Pareto-optimal sequence(s) in 1 plan(s):
      #1  cost 2.00, 1 step(s), Gower distance 0.553, margin 0.50
          1. retrain  job  clerk -> developer  cost 2.00  P(hired) 1.00
             and so: age 20 -> 22
    """
    frame = check_frame(
        explanations,
        _REQUIRED,
        unpack="return_states",
        then="describe(explanations, states)",
    )
    chosen = instance_rows(frame, instance)
    labels = [label for label, _ in chosen]
    max_plans = _check_max_plans(max_plans)
    X = to_pandas(X)  # polars: its rows are numbered 0, 1, ... as in explain
    people = _rows_of(X, labels)
    order = pd.unique(frame["instance"]).tolist()
    probas = initial_values(initial_proba, labels, order=order, X=X, complete=False)
    path = None if states is None else _state_lookup(states, labels)
    return "\n\n".join(
        _describe_instance(
            label,
            frame.iloc[positions],
            person=people.get(label),
            proba=probas.get(label),
            target_name=target_name,
            max_plans=max_plans,
            noun=noun,
            path=path,
            states=states,
            profile=profile,
            fragile=fragile,
        )
        for label, positions in chosen
    )


def show(explanations, states=None, **options):
    """Print the explanations as text: :func:`describe`, printed.

    Parameters
    ----------
    explanations : DataFrame
        The frame returned by
        :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`.
    states : DataFrame, default=None
        The states returned with it by ``explain(X, return_states=True)``.
    **options
        ``X``, ``instance``, ``initial_proba``, ``target_name``,
        ``max_plans``, ``noun``, ``profile`` and ``fragile``, as for
        :func:`describe`.

    See Also
    --------
    describe : The same text, as a string.
    """
    print(describe(explanations, states, **options))


# ---------------------------------------------------------------------- #
# One instance
# ---------------------------------------------------------------------- #
def _describe_instance(
    label,
    rows,
    *,
    person,
    proba,
    target_name,
    max_plans,
    noun,
    path,
    states,
    profile,
    fragile,
):
    if target_name is None and "target_class" in rows:  # the frame's
        target_name = str(rows["target_class"].iloc[0])
    target_name = target_name or "target"
    ok = rows[rows["status"] == STATUS_OK]
    if person is None:
        lines = [f"{noun} {label}"]
    else:
        changed = _changed_features(label, ok, path, person)
        text = f"{noun} {label}{_profile(person, changed, profile)}"
        lines = textwrap.wrap(text, **_WRAP)
    # a regressor's frame has its prediction after each step, no probability
    regressor = "prediction" in rows and bool(rows["prediction"].notna().any())
    if proba is None:
        head = []
    elif regressor:
        head = [f"prediction now {_value(proba)}, to reach {target_name}"]
    else:
        head = [f"P({target_name}) now {proba:.2f}"]
    if ok.empty:
        status = rows["status"].iloc[0]
        detail = _HINTS.get(status)
        if "message" in rows and not pd.isna(rows["message"].iloc[0]):
            detail = str(rows["message"].iloc[0])
        head.append(f"status: {status}" + (f" ({detail})" if detail else ""))
        lines += textwrap.wrap("; ".join(head), initial_indent="  ", **_WRAP)
        return "\n".join(lines)

    plans = _plans(label, ok)
    n_solutions = sum(len(orders) for orders in plans.values())
    shown = list(plans.items())[:max_plans]  # all of them for None
    counts = f"{n_solutions} Pareto-optimal sequence(s) in {len(plans)} plan(s)"
    if max_plans != 0:
        counts += ":" if len(shown) == len(plans) else f"; the cheapest {len(shown)}:"
    head.append(counts)
    lines.append("  " + "; ".join(head))

    cheapest = [orders[0][1] for _, orders in shown]  # the steps
    cells = [[_step_cells(step) for step in seq.itertuples()] for seq in cheapest]
    widths = [
        max((len(row[k]) for seq in cells for row in seq), default=0) for k in range(5)
    ]
    free = free_orders(ok, states)
    thresholds = []  # of the fragile plans
    for (plan, orders), seq, seq_cells in zip(shown, cheapest, cells):
        anyhow = bool(free.get((label, seq["solution"].iloc[0]), False))
        margin = _margin(orders[0][0], regressor, fragile)
        if margin.fragile:
            thresholds.append(margin.threshold)
        lines.append(_plan_header(plan, orders, anyhow, margin.text))
        for step, (action, feature, old, new, priced) in zip(
            seq.itertuples(), seq_cells
        ):
            line = (
                f"      {'-' if anyhow else f'{int(step.step)}.':<2} "
                f"{action:<{widths[0]}}  "
                f"{feature:<{widths[1]}}  {old:>{widths[2]}} -> "
                f"{new:<{widths[3]}}  {priced:<{widths[4]}}"
            )
            if not pd.isna(step.target_proba):
                line += f"  P({target_name}) {step.target_proba:.2f}"
            elif regressor and not pd.isna(step.prediction):
                line += f"  prediction {_value(step.prediction)}"
            lines.append(line.rstrip())
            if path is not None:
                changed = _consequences(path, label, step)
                if changed:
                    lines.append(f"         and so: {'; '.join(changed)}")
    if thresholds:
        lines += textwrap.wrap(
            _fragile_note(len(thresholds), fragile, max(thresholds)),
            initial_indent="  ",
            **{**_WRAP, "subsequent_indent": "  "},
        )
    return "\n".join(lines)


@dataclass
class _Margin:
    """How a plan's header ends: its margin, and whether it is fragile."""

    text: str = ""
    fragile: bool = False
    threshold: float = np.nan  # the decision threshold the margin is above


def _margin(seq, regressor, fragile):
    """The :class:`_Margin` of the table row ``seq`` of a plan's cheapest
    sequence (nothing where the frame has no margin for it)."""
    margin = getattr(seq, "margin", np.nan)
    if pd.isna(margin):
        return _Margin()
    margin = float(margin)
    if regressor:
        return _Margin(f", margin {_grouped(margin, 2)} inside the range")
    text = f", margin {margin:.2f}"
    if fragile is None or round(margin, 2) >= fragile:  # as shown
        return _Margin(text)
    threshold = float(seq.target_proba) - margin
    return _Margin(f"{text} (fragile)", True, threshold)


def _fragile_note(n, fragile, threshold):
    """What a fragile plan is, and how to ask for plans with a margin."""
    plans = "a plan ends" if n == 1 else f"{n} plans end"
    wanted = min(round(threshold + 0.1, 2), 0.99)
    return (
        f"fragile: {plans} less than {fragile:g} above the decision threshold "
        f"({threshold:.2f}), where a retrained or slightly different model may "
        f"reject {'it' if n == 1 else 'them'}; min_target_proba={wanted:g} asks "
        "for plans with a margin."
    )


def _plans(label, ok):
    """``{plan: [(its row of the table of sequences, its steps), ...]}``,
    cheapest plan and sequence first (a row's ``other_values``: the same
    steps as a cheaper one, see :func:`~sklearn_cscf._frames.sequences`)."""
    if ok[["plan", "solution"]].isna().any().any():
        raise ValueError(
            f"instance {plain(label)!r} has 'ok' rows without a plan or "
            f"solution; pass the DataFrame returned by {EXPLAIN}."
        )
    steps = ok.sort_values("step", kind="stable").groupby("solution", sort=False)
    plans = {}
    for seq in sequences(ok).itertuples():  # by cost
        plans.setdefault(int(seq.plan), []).append((seq, steps.get_group(seq.solution)))
    return dict(sorted(plans.items(), key=lambda item: (item[1][0][0].cost, item[0])))


def _plan_header(plan, orders, anyhow=False, margin=""):
    """The header of a plan: its cheapest sequence (the first of
    ``orders``, and its ``margin`` in words) and the plan's other
    sequences."""
    seq, shown = orders[0]
    cost, effort = float(seq.sequence_cost), float(seq.sequence_effort)
    text = f"  #{plan + 1}  cost {format_cost(cost)}"
    if not np.isclose(cost, effort):
        text += f" (effort {format_cost(effort)})"
    order = " in any order" if anyhow else ""
    gower = _precise(float(seq.gower_distance))
    text += f", {seq.length} step(s){order}, Gower distance {gower}"
    # the class reached, where the target names more than one ("not 0")
    reached = getattr(seq, "reached_class", None)
    target = getattr(seq, "target_class", None)
    if reached is not None and not pd.isna(reached) and str(reached) != str(target):
        text += f", reaches {plain(reached)}"
    text += margin
    # the plan's other sequences: other orders (the cheapest values of each),
    # and the shown steps with other values (all_values: nearer, dearer)
    other_orders = [other.cost for other, _ in orders[1:] if not other.other_values]
    other_values = [
        other.cost
        for other, _ in orders[1:]
        if other.other_values and other.actions == seq.actions
    ]
    if other_orders:
        text += (
            f"; the same actions in {len(other_orders)} other order(s) cost "
            f"{_span(other_orders)}"
        )
    if other_values:
        text += (
            f"; {len(other_values)} nearer sequence(s) of the same steps cost "
            f"{_span(other_values)}"
        )
    return text


def _span(costs):
    low, high = format_cost(min(costs)), format_cost(max(costs))
    return low if low == high else f"{low} to {high}"


def _step_cells(step):
    """The action, feature, old and new values, and the priced cost of a step."""
    priced = f"cost {format_cost(step.cost)}"
    if not pd.isna(step.discount) and not np.isclose(step.discount, 1.0):
        priced += f" ({format_cost(step.effort)} x {step.discount:.2f})"
    old, new = (getattr(step, f"{w}_number", np.nan) for w in ("old", "new"))
    if not (pd.isna(old) or pd.isna(new)):
        old, new = _number_pair(float(old), float(new))
    else:  # the number where there is one, else the text
        old = _value(step.old_value if pd.isna(old) else float(old))
        new = _value(step.new_value if pd.isna(new) else float(new))
    return (str(step.action), str(step.feature), old, new, priced)


def _number_pair(old, new):
    """A numeric step's old and new values, each at a precision that tells
    the change: from 1 up, a whole number whole and any other to two
    decimals (``5.10 -> 3.00`` for 2.9962, never ``5.10 -> 3``); below 1,
    two significant digits; in both cases more digits while two different
    numbers would read the same (``0.251 -> 0.249``, not ``0.25 -> 0.25``)."""
    scale = max(abs(old), abs(new))
    if not np.isfinite(scale):
        return _value(old), _value(new)
    # below 1, two significant digits of the larger
    decimals = 1 - int(np.floor(np.log10(scale))) if 0 < scale < 1 else 2
    while True:
        pair = _fixed(old, decimals), _fixed(new, decimals)
        if old == new or pair[0] != pair[1] or decimals >= 12:
            return pair
        decimals += 1


def _fixed(value, decimals):
    """Thousands separated (from 10,000); whole only when the number is whole
    (not when it rounds to one), else ``decimals`` decimals."""
    value += 0.0  # no -0
    if np.isclose(value, round(value), rtol=0, atol=1e-9) and abs(value) < 1e15:
        return _grouped(round(value), 0)
    return _grouped(value, decimals)


def _grouped(value, decimals):
    """``value`` to ``decimals`` decimals, its thousands separated from
    10,000 up: four digits stay together (a year reads 2007, not 2,007)."""
    comma = "," if abs(round(value, decimals)) >= 10_000 else ""
    return f"{value:{comma}.{decimals}f}"


def _precise(value, decimals=3):
    """``value`` to ``decimals`` decimals, or to two significant digits when
    those would show a number other than 0 as 0 (``0.00042``, not
    ``0.000``)."""
    if value != 0 and abs(value) < 0.5 * 10.0**-decimals:
        return f"{value:.2g}"
    return f"{value:.{decimals}f}"


def _consequences(path, label, step):
    """``"name old -> new"`` for each other feature the step changed."""
    solution, t = int(step.solution), int(step.step)
    before, after = path(label, solution, t - 1), path(label, solution, t)
    return [
        f"{name} {_value(old)} -> {_value(new)}"
        for name, old, new in zip(before.index, before, after)
        if str(name) != str(step.feature) and changed(old, new)
    ]


def _value(value):
    """A raw value for people: thousands separated from 10,000, whole
    numbers whole."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "-"
    if isinstance(value, bool | np.bool_) or not isinstance(value, Real):
        return str(value)
    value = float(value)
    if abs(value) < 1 and not value.is_integer():
        return f"{value:.2g}"
    # whole when two decimals would show zeros (float noise: 49146.0000001)
    if round(value, 2).is_integer() and abs(value) < 1e15:
        return _grouped(value, 0)
    return _grouped(value, 2)


# ---------------------------------------------------------------------- #
# Checks
# ---------------------------------------------------------------------- #
def _check_max_plans(max_plans):
    if max_plans is None:
        return None
    if isinstance(max_plans, bool) or not isinstance(max_plans, Integral):
        raise ValueError(f"max_plans must be an int >= 0 or None, got {max_plans!r}.")
    if max_plans < 0:
        raise ValueError(f"max_plans must be an int >= 0 or None, got {max_plans}.")
    return int(max_plans)


def _rows_of(X, labels):
    """``{label: its row of X}`` (a Series of the features)."""
    if X is None:
        return {}
    if not isinstance(X, pd.DataFrame):
        raise TypeError(
            "X must be the DataFrame of the explained rows (indexed by the "
            f"frame's instance labels), got {type(X).__name__}."
        )
    rows = {}
    for label in labels:
        position = X.index.get_indexer_for([label])
        if not len(position) or position[0] < 0:
            raise ValueError(
                f"X has no row labelled {plain(label)!r}; pass the rows given to "
                "explain."
            )
        rows[label] = X.iloc[position[0]]
    return rows


def _changed_features(label, ok, path, person):
    """The features of ``person`` (a row of X) that the instance's plans
    change: the features of their steps and, with the states (``path``),
    every feature a sequence's last state holds otherwise."""
    names = {str(name) for name in ok["feature"].dropna()}
    if path is not None and not ok.empty:
        for (solution,), seq in ok.groupby(["solution"], sort=False):
            start, end = (path(label, int(solution), t) for t in (0, len(seq)))
            names |= {
                str(name)
                for name, old, new in zip(start.index, start, end)
                if changed(old, new)
            }
    return [name for name in person.index if str(name) in names]


def _profile(person, changed, how):
    """``": feature=value, ..."`` of ``person``: every feature, or those
    ``changed`` and how many others (``how``: "full", "changed", "auto")."""
    if how == "full" or (how == "auto" and len(person) <= _PROFILE_COLUMNS):
        return ": " + ", ".join(f"{k}={_value(v)}" for k, v in person.items())
    others = len(person) - len(changed)
    if not changed:
        return f" ({plural(others, 'feature')}; profile='full' lists them)"
    shown = ", ".join(f"{name}={_value(person[name])}" for name in changed)
    if not others:
        return f": {shown}"
    return (
        f": {shown} (and {plural(others, 'other feature')}; profile='full' lists them)"
    )


def _state_lookup(states, labels):
    """``path(label, solution, step) -> Series`` of the features of a state."""
    check_frame(
        states, STATE_KEYS, name="states", returned_by="explain(X, return_states=True)"
    )
    features, table = state_table(states, labels)

    def path(label, solution, step):
        try:
            values = table[(label, solution, step)]
        except KeyError:
            raise ValueError(
                f"states has no state for instance {plain(label)!r}, solution "
                f"{solution}, step {step}; pass the states returned together "
                "with these explanations."
            ) from None
        return pd.Series(values, index=features)

    return path


@validate_params(
    {"path": [str, os.PathLike, HasMethods(["read"])]},
    prefer_skip_nested_validation=True,
)
def read_explanations(path, **kwargs):
    """Read an explanations frame saved as CSV or parquet, with its types.

    The frame was saved with :func:`write_explanations`,
    ``to_csv(index=False)`` or ``to_parquet``. A CSV file keeps no types:
    read back with :func:`pandas.read_csv` alone, text values that look like
    numbers become numbers, ``"NA"`` becomes a missing value and the
    whole-number columns become floats. This restores
    the types of :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`'s
    frame: text columns as ``string`` (only an empty field is missing),
    ``plan``, ``solution``, ``step`` and ``length`` as ``Int64``, the numbers as
    ``float64``. The labels of ``instance``, ``feature`` and ``target_class``
    get back the types :func:`write_explanations` recorded (so ``"007"``
    stays text and ``"1"`` and ``1`` stay apart). In a file written by
    ``to_csv`` alone, a label column is read as whole numbers where every
    label is written as one (``"7"``, not ``"007"``; ``instance`` as
    ``int64``), as text otherwise. A path ending in ``.parquet`` is read with
    :func:`pandas.read_parquet` (a parquet file keeps every other type by
    itself; its text columns get the storage of ``explain``'s frame, so the
    frame read back equals the one saved).

    Parameters
    ----------
    path : str, path-like or file-like
        The CSV (or parquet) file.
    **kwargs : dict
        Passed on to :func:`pandas.read_csv` (e.g. ``sep``) or
        :func:`pandas.read_parquet`.

    Returns
    -------
    DataFrame
        The explanations frame.

    See Also
    --------
    write_explanations : Save a frame with the types of its labels.
    describe : The per-person text of a frame.

    Examples
    --------
    >>> import io
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"instance": [7], "status": ["ok"], "step": [1],
    ...                       "old_value": ["NA"], "new_value": ["007"]})
    >>> back = read_explanations(io.StringIO(frame.to_csv(index=False)))
    >>> back[["old_value", "new_value"]].iloc[0].tolist()
    ['NA', '007']
    >>> str(back["step"].dtype)
    'Int64'
    """
    return read_frame(path, **kwargs)


@validate_params(
    {
        "explanations": [pd.DataFrame],
        "path": [str, os.PathLike, HasMethods(["write"])],
    },
    prefer_skip_nested_validation=True,
)
def write_explanations(explanations, path, **kwargs):
    """Save an explanations frame as CSV (or parquet) with its labels' types.

    Writes ``explanations.to_csv(path, index=False)`` (``to_parquet`` for a
    path ending in ``.parquet``) with one more column per label column
    (``instance_type``, ``feature_type``, ``target_class_type``) naming the
    type of each label, so that :func:`read_explanations` gives back
    ``"007"`` as text and keeps ``"1"`` and ``1`` apart. Labels may be text,
    whole or real numbers, booleans or timestamps; others are refused with a
    ``TypeError``.

    Parameters
    ----------
    explanations : DataFrame
        The frame of :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`.
    path : str, path-like or file-like
        Where to write.
    **kwargs : dict
        Passed on to :meth:`pandas.DataFrame.to_csv` or
        :meth:`~pandas.DataFrame.to_parquet`.

    See Also
    --------
    read_explanations : Read it back.

    Examples
    --------
    >>> import io
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"instance": ["007", 7], "status": ["ok", "ok"]})
    >>> buffer = io.StringIO()
    >>> write_explanations(frame, buffer)
    >>> _ = buffer.seek(0)
    >>> read_explanations(buffer)["instance"].tolist()
    ['007', 7]
    """
    write_frame(explanations, path, **kwargs)

"""The actions and feature graph of the CSCF paper's two experiments.

Naumann & Ntoutsi (ECML PKDD 2021), Section 5: the Adult (Census Income) and
German Credit data sets, with the actions a person can take, their efforts in
raw feature units, their consequences and constraints, and (for Adult) the
feature-relationship graph of the consequential discounts. The columns are
those of :func:`load_adult` and :func:`load_german_credit`.
"""

import numpy as np

from sklearn_cscf._sklearn_compat import validate_params
from sklearn_cscf.actions import Action
from sklearn_cscf.datasets._callables import (
    AbsoluteChange,
    Between,
    Compare,
    FixedEffort,
    RelativeChangeSquared,
)
from sklearn_cscf.graph import FeatureGraph

__all__ = ["adult_actions", "adult_feature_graph", "german_actions"]

# Adult's education labels, by education_num 1..16
ADULT_EDUCATION = [
    "Preschool",
    "1st-4th",
    "5th-6th",
    "7th-8th",
    "9th",
    "10th",
    "11th",
    "12th",
    "HS-grad",
    "Some-college",
    "Assoc-voc",
    "Assoc-acdm",
    "Bachelors",
    "Masters",
    "Prof-school",
    "Doctorate",
]
_EDUCATION_LABELS = np.array(ADULT_EDUCATION, dtype=object)
MAX_AGE = 120
EDUCATION_YEARS_PER_LEVEL = 2  # the paper: age += 2 * delta education_num
UNSKILLED_NON_RESIDENT = "unemployed/ unskilled - non-resident"
UNSKILLED_RESIDENT = "unskilled - resident"

_CONTINUOUS = {"continuous": ["boolean"]}


def education_label(education_num):
    """Adult's ``education`` label of (possibly fractional) ``education_num``.

    A fractional level counts as the whole level below it, as the paper's
    graph does (``floor``); levels are clipped to 1..16.

    Examples
    --------
    >>> from sklearn_cscf.datasets._paper import education_label
    >>> education_label([9, 13, 13.6, 16.5]).tolist()
    ['HS-grad', 'Bachelors', 'Bachelors', 'Doctorate']
    """
    level = np.clip(np.floor(np.asarray(education_num, dtype=float)), 1, 16)
    return _EDUCATION_LABELS[level.astype(np.intp) - 1]


def _set_unless_so(name, feature, value):
    """Set ``feature`` to ``value`` (effort 5), unless it already holds it."""
    return Action(
        name,
        feature,
        values=value,
        cost=FixedEffort(5),
        precondition=Compare(feature, "!=", value),
    )


def _older_by_study(b, a):
    """``age`` after ``add_education``: two years per education level."""
    delta = a["education_num"] - b["education_num"]
    return b["age"] + EDUCATION_YEARS_PER_LEVEL * delta


def _education_of_new_level(b, a):
    """``education`` after ``add_education``: the label of the new level."""
    return education_label(a["education_num"])


@validate_params(_CONTINUOUS, prefer_skip_nested_validation=True)
def adult_actions(*, continuous=False):
    """The six actions of the paper's Adult (Census Income) experiment.

    On the columns of :func:`load_adult`, efforts in raw units (METHOD.md's
    table; the paper's Section 5):

    - ``wait_years``: ``age`` up to 120 (``direction="increase"``); effort
      ``abs(delta)``.
    - ``change_working_hours``: ``hours_per_week`` anywhere in ``[0, 90]``;
      effort ``abs(delta) / 10``.
    - ``increase_capital_gain``: ``capital_gain`` up to 100,000; effort
      ``abs(delta) / 10000``.
    - ``change_capital_loss``: ``capital_loss`` anywhere in ``[1, 5000]``;
      effort ``abs(delta) / 1000``.
    - ``add_education``: ``education_num`` to a higher level (at most 16);
      effort ``abs(delta)``.
    - ``enlist``: ``occupation`` set to ``"Armed-Forces"``; effort 5.

    Constraints and consequences:

    - ``increase_capital_gain`` requires ``capital_loss < 1`` and
      ``change_capital_loss`` requires ``capital_gain < 1`` (preconditions).
    - ``add_education`` makes the person older, ``age += 2 * delta
      education_num`` (a consequence), valid only if the new age is below 120
      (a postcondition); it also sets ``education`` to the label of the new
      level, so that the two columns stay consistent.
    - ``enlist`` requires an occupation other than ``Armed-Forces``.

    Parameters
    ----------
    continuous : bool, default=False
        The Adult columns only hold whole numbers. By default every action
        keeps them whole: ``education_num`` is raised by whole levels (up to
        16, Doctorate), and age, hours and capital change in whole years,
        hours and dollars. ``True`` gives the paper's continuous variant:
        ``education_num`` anywhere in ``[current, 16.5]`` (its label is that
        of the level below) and real-valued age, hours and capital.

    Returns
    -------
    actions : list of Action
        Six actions, in the order of the table.

    See Also
    --------
    load_adult : The data.
    adult_feature_graph : The paper's discounts between these features.

    Examples
    --------
    >>> from sklearn_cscf.datasets import adult_actions
    >>> [action.name for action in adult_actions()]
    ['wait_years', 'change_working_hours', 'increase_capital_gain', 'change_capital_loss', 'add_education', 'enlist']
    >>> adult_actions()[4].affected_features
    ['education_num', 'age', 'education']
    """  # noqa: E501
    step = None if continuous else 1
    education_values = (1.0, 16.5) if continuous else list(range(1, 17))
    return [
        Action(
            "wait_years",
            "age",
            values=(0, MAX_AGE),
            direction="increase",
            step=step,
            cost=AbsoluteChange("age"),
        ),
        Action(
            "change_working_hours",
            "hours_per_week",
            values=(0, 90),
            step=step,
            cost=AbsoluteChange("hours_per_week", per=10),
        ),
        Action(
            "increase_capital_gain",
            "capital_gain",
            values=(0, 100_000),
            direction="increase",
            step=step,
            cost=AbsoluteChange("capital_gain", per=10_000),
            precondition=Compare("capital_loss", "<", 1),
        ),
        Action(
            "change_capital_loss",
            "capital_loss",
            values=(1, 5_000),
            step=step,
            cost=AbsoluteChange("capital_loss", per=1_000),
            precondition=Compare("capital_gain", "<", 1),
        ),
        Action(
            "add_education",
            "education_num",
            values=education_values,
            direction="increase",
            cost=AbsoluteChange("education_num"),
            effects={"age": _older_by_study, "education": _education_of_new_level},
            postcondition=Compare("age", "<", MAX_AGE),
        ),
        _set_unless_so("enlist", "occupation", "Armed-Forces"),
    ]


def _education_ease(x):
    """``1 - floor(education_num) / 32``: more education, easier changes."""
    return 1.0 - np.floor(x["education_num"]) / 32.0


# exp(80): hours_per_week -> capital_gain falls from about 1 (below 70 h) to 0
_EXP_80 = float(np.exp(80.0))


def _hours_ease_capital(x):
    """``1 - interp(exp(h), [1, exp(80)], [0, 1])``: long hours, easier gains."""
    hours = np.minimum(np.asarray(x["hours_per_week"], dtype=float), 700.0)
    return 1.0 - np.interp(np.exp(hours), [1.0, _EXP_80], [0.0, 1.0])


def _hours_ease_education(x):
    """0.5 below 20 h, 0.6 below 30 h, 0.7 up to 40 h, else 1: time to study."""
    hours = np.asarray(x["hours_per_week"], dtype=float)
    return np.select([hours < 20, hours < 30, hours <= 40], [0.5, 0.6, 0.7], 1.0)


def adult_feature_graph():
    """The paper's feature-relationship graph for Adult (CSCF).

    Each ``tau`` is evaluated on the state before a step (``h`` is
    ``hours_per_week``):

    - ``education_num -> capital_gain``, ``education_num -> occupation`` and
      ``education_num -> workclass``: ``1 - floor(education_num) / 32``.
    - ``hours_per_week -> capital_gain``: ``1 - interp(exp(h), [1, exp(80)],
      [0, 1])``: about 1 below 70 hours, falling to 0 at 80 hours.
    - ``hours_per_week -> education_num``: 0.5 if ``h < 20``, 0.6 if
      ``h < 30``, 0.7 if ``h <= 40``, else 1.

    No action of :func:`adult_actions` changes ``workclass``, so its edge
    never discounts anything; it is kept as in the paper, for user actions
    that do.

    Returns
    -------
    graph : FeatureGraph
        Five edges on the columns of :func:`load_adult`.

    See Also
    --------
    adult_actions : The actions whose costs are discounted.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_cscf.datasets import adult_feature_graph
    >>> graph = adult_feature_graph()
    >>> state = {"education_num": np.array([8, 16]),
    ...          "hours_per_week": np.array([40, 80])}
    >>> graph.feature_discount("capital_gain", state)
    array([0.875, 0.25 ])
    >>> graph.feature_discount("education_num", state)
    array([0.7, 1. ])
    """
    return FeatureGraph(
        [
            ("education_num", "capital_gain", _education_ease),
            ("education_num", "occupation", _education_ease),
            ("education_num", "workclass", _education_ease),
            ("hours_per_week", "capital_gain", _hours_ease_capital),
            ("hours_per_week", "education_num", _hours_ease_education),
        ]
    )


def _scaled_duration(b, a):
    """``loan_duration`` scaled by new / old ``credit_amount``: same instalment."""
    return b["loan_duration"] * (a["credit_amount"] / b["credit_amount"])


def _scaled_duration_rounded(b, a):
    """:func:`_scaled_duration` in whole months."""
    return np.round(_scaled_duration(b, a))


@validate_params(_CONTINUOUS, prefer_skip_nested_validation=True)
def german_actions(*, continuous=False):
    """The seven actions of the paper's German Credit experiment.

    On the columns of :func:`load_german_credit`, efforts in raw units
    (Deutsche Mark, months, years). The paper used no feature graph here
    (SCF).

    - ``wait_years``: ``age_in_years`` up to 120 (``direction="increase"``);
      effort ``abs(delta)``.
    - ``naturalize``: ``foreign_worker`` set to ``"no"``; effort 5.
    - ``change_credit_amount``: ``credit_amount`` anywhere in ``[1, 100000]``;
      effort ``((new - old) / old) ** 2``.
    - ``change_loan_period``: ``loan_duration`` anywhere in ``[1, 120]``;
      effort ``((new - old) / old) ** 2``.
    - ``adjust_loan_period``: ``credit_amount`` anywhere in ``[1, 100000]``,
      with ``loan_duration`` scaled by new / old credit (a consequence);
      effort ``((new - old) / old) ** 2`` of the credit.
    - ``get_guarantor``: ``other_debtors_guarantors`` set to
      ``"guarantor"``; effort 5.
    - ``get_unskilled_job``: ``job`` set to ``"unskilled - resident"``;
      effort 5.

    Constraints:

    - ``naturalize``, ``get_guarantor``: only for someone not already a
      non-foreign worker / with a guarantor.
    - ``change_credit_amount``: only for someone older than 15.
    - ``adjust_loan_period``: a new credit amount with the same monthly
      instalment: the loan duration is scaled by new / old credit (rounded to
      whole months unless ``continuous``) and must stay in ``[1, 120]``
      months (a postcondition); only for credits above 1000 DM.
    - ``get_unskilled_job``: only for someone ``"unemployed/ unskilled -
      non-resident"``.

    Parameters
    ----------
    continuous : bool, default=False
        The German columns only hold whole numbers. By default the actions
        keep them whole (years, Deutsche Mark, months); ``True`` lets ages,
        amounts and durations take real values, as in the paper.

    Returns
    -------
    actions : list of Action
        Seven actions, in the order of the table.

    See Also
    --------
    load_german_credit : The data.

    Examples
    --------
    >>> from sklearn_cscf.datasets import german_actions
    >>> [action.name for action in german_actions()][:4]
    ['wait_years', 'naturalize', 'change_credit_amount', 'change_loan_period']
    >>> german_actions()[4].affected_features
    ['credit_amount', 'loan_duration']
    """  # noqa: E501
    step = None if continuous else 1
    scaled_duration = _scaled_duration if continuous else _scaled_duration_rounded
    return [
        Action(
            "wait_years",
            "age_in_years",
            values=(0, MAX_AGE),
            direction="increase",
            step=step,
            cost=AbsoluteChange("age_in_years"),
        ),
        _set_unless_so("naturalize", "foreign_worker", "no"),
        Action(
            "change_credit_amount",
            "credit_amount",
            values=(1, 100_000),
            step=step,
            cost=RelativeChangeSquared("credit_amount"),
            precondition=Compare("age_in_years", ">", 15),
        ),
        Action(
            "change_loan_period",
            "loan_duration",
            values=(1, 120),
            step=step,
            cost=RelativeChangeSquared("loan_duration"),
        ),
        Action(
            "adjust_loan_period",
            "credit_amount",
            values=(1, 100_000),
            step=step,
            cost=RelativeChangeSquared("credit_amount"),
            effects={"loan_duration": scaled_duration},
            precondition=Compare("credit_amount", ">", 1000),
            postcondition=Between("loan_duration", 1, 120),
        ),
        _set_unless_so("get_guarantor", "other_debtors_guarantors", "guarantor"),
        Action(
            "get_unskilled_job",
            "job",
            values=UNSKILLED_RESIDENT,
            cost=FixedEffort(5),
            precondition=Compare("job", "==", UNSKILLED_NON_RESIDENT),
        ),
    ]

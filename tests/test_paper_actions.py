"""Tests of the CSCF paper's action sets and Adult feature graph
(``datasets/_paper.py``) on hand-made rows of the UCI Adult and German Credit
data: value spaces, directions, consequences, efforts, constraints, the taus of
the Adult graph and the Eq. 2 discounts, and compiling them in ``fit``.
"""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf._compiled_actions import CompiledAction
from sklearn_cscf._compiled_graph import CompiledGraph
from sklearn_cscf._schema import FeatureSchema
from sklearn_cscf._sklearn_compat import InvalidParameterError
from sklearn_cscf.datasets import (
    adult_actions,
    adult_feature_graph,
    german_actions,
    load_adult,
    load_german_credit,
)
from sklearn_cscf.datasets._paper import ADULT_EDUCATION, education_label

KEYS = np.linspace(0.0, 1.0, 21)
FINE_KEYS = np.linspace(0.0, 1.0, 101)

ADULT_NAMES = [
    "wait_years",
    "change_working_hours",
    "increase_capital_gain",
    "change_capital_loss",
    "add_education",
    "enlist",
]
GERMAN_NAMES = [
    "wait_years",
    "naturalize",
    "change_credit_amount",
    "change_loan_period",
    "adjust_loan_period",
    "get_guarantor",
    "get_unskilled_job",
]
ACTION_SETS = {"adult": adult_actions, "german": german_actions}
UNSKILLED_NON_RESIDENT = "unemployed/ unskilled - non-resident"
UNSKILLED_RESIDENT = "unskilled - resident"


# ---------------------------------------------------------------------- #
# helpers
# ---------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def datasets():
    return {"adult": load_adult(), "german": load_german_credit()}


@pytest.fixture(scope="module")
def adult(datasets):
    return datasets["adult"].data


@pytest.fixture(scope="module")
def german(datasets):
    return datasets["german"].data


def make_rows(data, **columns):
    """Copies of the first row of ``data`` with some columns set.

    Each keyword gives a column's values (a scalar is repeated); categorical
    columns keep the loader's dtype, integer columns stay integer for whole
    numbers.
    """
    n = max(np.size(values) for values in columns.values())
    frame = data.iloc[np.zeros(n, dtype=np.intp)].reset_index(drop=True)
    for name, values in columns.items():
        values = list(np.broadcast_to(np.asarray(values, dtype=object), (n,)))
        dtype = data[name].dtype
        if isinstance(dtype, pd.CategoricalDtype):
            column = pd.Categorical(values, dtype=dtype)
            assert not pd.isna(column).any(), f"unknown label in {values}"
        else:
            column = np.asarray(values, dtype=float)
            if np.all(column == np.round(column)):
                column = column.astype(dtype)
        frame[name] = column
    return frame


def with_keys(frame, keys=KEYS):
    """Every row of ``frame`` once per key; the keys in the same order."""
    rows = frame.loc[frame.index.repeat(len(keys))].reset_index(drop=True)
    return rows, np.tile(keys, len(frame))


def compile_actions(data, actions):
    """A schema fitted on the real ``data`` and the actions compiled on it."""
    schema = FeatureSchema(data)
    return schema, [CompiledAction(action, schema) for action in actions]


def apply_step(data, actions, name, frame, keys):
    """Apply action ``name`` to the rows of ``frame`` with value ``keys``.

    Returns the raw states before and after the step (``name -> values``),
    the efforts and which steps are valid. Columns the action does not affect
    must be unchanged.
    """
    schema, compiled = compile_actions(data, actions)
    (action,) = [a for a in compiled if a.name == name]
    before = schema.encode(frame)
    after, effort, valid = action.apply(before, np.asarray(keys, dtype=float))
    others = np.setdiff1d(np.arange(schema.n_features), action.affects)
    np.testing.assert_array_equal(after[:, others], before[:, others])
    return schema.view(before), schema.view(after), effort, valid


def is_whole(values):
    values = np.asarray(values, dtype=float)
    return np.all(values == np.round(values))


def assert_monotone_in_keys(values, n_rows, n_keys):
    """Per row, values never decrease as the key grows."""
    grid = np.asarray(values, dtype=float).reshape(n_rows, n_keys)
    assert np.all(np.diff(grid, axis=1) >= 0)


def tau(graph, source, target):
    (fn,) = [fn for s, t, fn in graph.edges if (s, t) == (source, target)]
    return fn


def graph_state(education_num=9, hours_per_week=40):
    education_num, hours_per_week = np.broadcast_arrays(
        np.asarray(education_num, dtype=float), np.asarray(hours_per_week, float)
    )
    return {
        "education_num": np.atleast_1d(education_num),
        "hours_per_week": np.atleast_1d(hours_per_week),
    }


# ---------------------------------------------------------------------- #
# the action sets themselves
# ---------------------------------------------------------------------- #
def test_adult_education_labels_match_the_loader(adult):
    assert ADULT_EDUCATION == list(adult["education"].cat.categories)
    assert len(ADULT_EDUCATION) == 16
    # the label of every row's education_num is its education
    np.testing.assert_array_equal(
        education_label(adult["education_num"]),
        adult["education"].astype(str).to_numpy(),
    )


@pytest.mark.parametrize("continuous", [False, True])
def test_action_names_and_affected_features(continuous):
    adult = adult_actions(continuous=continuous)
    german = german_actions(continuous=continuous)
    assert [a.name for a in adult] == ADULT_NAMES
    assert [a.name for a in german] == GERMAN_NAMES
    assert {a.name: a.affected_features for a in adult} == {
        "wait_years": ["age"],
        "change_working_hours": ["hours_per_week"],
        "increase_capital_gain": ["capital_gain"],
        "change_capital_loss": ["capital_loss"],
        "add_education": ["education_num", "age", "education"],
        "enlist": ["occupation"],
    }
    assert {a.name: a.affected_features for a in german} == {
        "wait_years": ["age_in_years"],
        "naturalize": ["foreign_worker"],
        "change_credit_amount": ["credit_amount"],
        "change_loan_period": ["loan_duration"],
        "adjust_loan_period": ["credit_amount", "loan_duration"],
        "get_guarantor": ["other_debtors_guarantors"],
        "get_unskilled_job": ["job"],
    }


@pytest.mark.parametrize("make", [adult_actions, german_actions])
@pytest.mark.parametrize("continuous", ["yes", None, 1.0])
def test_continuous_must_be_a_bool(make, continuous):
    with pytest.raises(InvalidParameterError, match="continuous"):
        make(continuous=continuous)


# ---------------------------------------------------------------------- #
# value spaces on real rows: ranges, directions, whole or real numbers
# ---------------------------------------------------------------------- #
# (data set, action, feature, low, high, direction)
NUMERIC_ACTIONS = [
    ("adult", "wait_years", "age", 0, 120, "increase"),
    ("adult", "change_working_hours", "hours_per_week", 0, 90, "any"),
    ("adult", "increase_capital_gain", "capital_gain", 0, 100_000, "increase"),
    ("adult", "change_capital_loss", "capital_loss", 1, 5_000, "any"),
    ("adult", "add_education", "education_num", 1, 16.5, "increase"),
    ("german", "wait_years", "age_in_years", 0, 120, "increase"),
    ("german", "change_credit_amount", "credit_amount", 1, 100_000, "any"),
    ("german", "change_loan_period", "loan_duration", 1, 120, "any"),
    ("german", "adjust_loan_period", "credit_amount", 1, 100_000, "any"),
]


@pytest.mark.parametrize("continuous", [False, True], ids=["whole", "continuous"])
@pytest.mark.parametrize(
    ("dataset", "name", "feature", "low", "high", "direction"),
    NUMERIC_ACTIONS,
    ids=[f"{d}-{n}" for d, n, *_ in NUMERIC_ACTIONS],
)
def test_numeric_value_spaces_on_real_rows(
    datasets, dataset, name, feature, low, high, direction, continuous
):
    data = datasets[dataset].data
    frame, keys = with_keys(data.sample(40, random_state=0).reset_index(drop=True))
    actions = ACTION_SETS[dataset](continuous=continuous)
    before, after, effort, valid = apply_step(data, actions, name, frame, keys)
    if name == "add_education" and not continuous:
        high = 16  # whole levels: Doctorate
    assert valid.any()
    new, old = after[feature][valid], before[feature][valid]
    assert np.all((new >= low) & (new <= high))
    if direction == "increase":
        assert np.all(new >= old)
    else:  # either way: key 0 gives the low end, whatever the current value
        assert after[feature][keys == 0].tolist() == [low] * int((keys == 0).sum())
    # key 1 gives the high end (before any postcondition)
    assert after[feature][keys == 1].tolist() == [high] * int((keys == 1).sum())
    assert np.all(effort[valid] >= 0)
    assert np.all(np.isfinite(effort[valid]))
    numeric = [
        c for c in data.columns if not isinstance(data[c].dtype, pd.CategoricalDtype)
    ]
    if continuous:
        assert not is_whole(new)
    else:
        # every numeric column of every state after the step holds whole numbers
        for column in numeric:
            assert is_whole(after[column]), column


# ---------------------------------------------------------------------- #
# Adult, action by action
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize("continuous", [False, True])
@pytest.mark.parametrize(
    ("dataset", "feature"), [("adult", "age"), ("german", "age_in_years")]
)
def test_wait_years(datasets, dataset, feature, continuous):
    data = datasets[dataset].data
    ages = [17, 39, 90, 119, 120]
    frame, keys = with_keys(make_rows(data, **{feature: ages}))
    actions = ACTION_SETS[dataset](continuous=continuous)
    before, after, effort, valid = apply_step(data, actions, "wait_years", frame, keys)
    old, new = before[feature], after[feature]
    assert valid.all()
    assert np.all((new >= old) & (new <= 120))
    assert_monotone_in_keys(new, len(ages), len(KEYS))
    np.testing.assert_array_equal(new[keys == 0], ages)
    np.testing.assert_array_equal(new[keys == 1], 120)
    np.testing.assert_allclose(effort, np.abs(new - old))
    if continuous:
        np.testing.assert_allclose(new, old + keys * (120 - old))
        assert not is_whole(new)
    else:
        assert is_whole(new)
        # from 39, every whole age up to 120 can be reached with fine keys
        frame, keys = with_keys(
            make_rows(data, **{feature: 39}), np.linspace(0, 1, 401)
        )
        _, after, _, _ = apply_step(data, actions, "wait_years", frame, keys)
        assert set(after[feature].tolist()) == set(range(39, 121))


@pytest.mark.parametrize("continuous", [False, True])
def test_change_working_hours(adult, continuous):
    hours = [1, 40, 99]
    frame, keys = with_keys(make_rows(adult, hours_per_week=hours))
    actions = adult_actions(continuous=continuous)
    before, after, effort, valid = apply_step(
        adult, actions, "change_working_hours", frame, keys
    )
    old, new = before["hours_per_week"], after["hours_per_week"]
    assert valid.all()
    assert np.all((new >= 0) & (new <= 90))
    # the value space does not depend on the current hours: either way
    grid = new.reshape(len(hours), len(KEYS))
    np.testing.assert_array_equal(grid, grid[[0, 0, 0]])
    assert_monotone_in_keys(new, len(hours), len(KEYS))
    np.testing.assert_array_equal(new[keys == 0], 0)
    np.testing.assert_array_equal(new[keys == 1], 90)
    from_40 = old == 40
    assert np.any(new[from_40] < 40) and np.any(new[from_40] > 40)
    np.testing.assert_allclose(effort, np.abs(new - old) / 10)
    if continuous:
        np.testing.assert_allclose(new, 90 * keys)
    else:
        assert is_whole(new)


@pytest.mark.parametrize("continuous", [False, True])
def test_increase_capital_gain(adult, continuous):
    gain = [0, 0, 5000, 99999, 0, 0, 3000]
    loss = [0, 0, 0, 0, 1, 1977, 2]
    frame, keys = with_keys(make_rows(adult, capital_gain=gain, capital_loss=loss))
    actions = adult_actions(continuous=continuous)
    before, after, effort, valid = apply_step(
        adult, actions, "increase_capital_gain", frame, keys
    )
    old, new = before["capital_gain"], after["capital_gain"]
    # precondition: only without capital loss
    np.testing.assert_array_equal(valid, before["capital_loss"] < 1)
    assert np.all(new[valid] >= old[valid])
    assert np.all(new[valid] <= 100_000)
    np.testing.assert_array_equal(new[valid & (keys == 1)], 100_000)
    np.testing.assert_array_equal(new[valid & (keys == 0)], old[valid & (keys == 0)])
    assert_monotone_in_keys(new, len(gain), len(KEYS))
    np.testing.assert_allclose(effort, np.abs(new - old) / 10_000)
    assert is_whole(new) != continuous


@pytest.mark.parametrize("continuous", [False, True])
def test_change_capital_loss(adult, continuous):
    loss = [0, 1000, 4356, 0, 0, 1000]
    gain = [0, 0, 0, 1, 2174, 99999]
    frame, keys = with_keys(make_rows(adult, capital_loss=loss, capital_gain=gain))
    actions = adult_actions(continuous=continuous)
    before, after, effort, valid = apply_step(
        adult, actions, "change_capital_loss", frame, keys
    )
    old, new = before["capital_loss"], after["capital_loss"]
    # precondition: only without capital gain
    np.testing.assert_array_equal(valid, before["capital_gain"] < 1)
    assert np.all((new[valid] >= 1) & (new[valid] <= 5000))
    np.testing.assert_array_equal(new[valid & (keys == 0)], 1)
    np.testing.assert_array_equal(new[valid & (keys == 1)], 5000)
    from_1000 = valid & (old == 1000)
    assert np.any(new[from_1000] < 1000) and np.any(new[from_1000] > 1000)
    np.testing.assert_allclose(effort, np.abs(new - old) / 1000)
    assert is_whole(new[valid]) != continuous


def test_add_education_whole_levels(adult):
    levels = [1, 8, 9, 13, 15, 16]
    keys_ = np.linspace(0.0, 1.0, 33)
    rows = make_rows(
        adult,
        education_num=levels,
        education=[ADULT_EDUCATION[k - 1] for k in levels],
        age=30,
    )
    frame, keys = with_keys(rows, keys_)
    before, after, effort, valid = apply_step(
        adult, adult_actions(), "add_education", frame, keys
    )
    old, new = before["education_num"], after["education_num"]
    # a higher whole level exists below 16 only
    np.testing.assert_array_equal(valid, old < 16)
    assert is_whole(new)
    assert np.all(new[valid] > old[valid]) and np.all(new[valid] <= 16)
    for level in levels[:-1]:
        reached = set(new[valid & (old == level)].astype(int).tolist())
        assert reached == set(range(level + 1, 17)), level
    delta = new - old
    # consequences: two years older per level, and the label of the new level
    np.testing.assert_array_equal(after["age"][valid], 30 + 2 * delta[valid])
    expected = [ADULT_EDUCATION[int(k) - 1] for k in new[valid]]
    assert after["education"][valid].tolist() == expected
    np.testing.assert_array_equal(effort[valid], delta[valid])


def test_add_education_continuous(adult):
    levels = [1, 9, 13, 16]
    rows = make_rows(
        adult,
        education_num=levels,
        education=[ADULT_EDUCATION[k - 1] for k in levels],
        age=30,
    )
    frame, keys = with_keys(rows)
    before, after, effort, valid = apply_step(
        adult, adult_actions(continuous=True), "add_education", frame, keys
    )
    old, new = before["education_num"], after["education_num"]
    assert valid.all()  # [current, 16.5] is never empty, not even at 16
    assert np.all((new >= old) & (new <= 16.5))
    assert_monotone_in_keys(new, len(levels), len(KEYS))
    np.testing.assert_array_equal(new[keys == 0], levels)
    np.testing.assert_array_equal(new[keys == 1], 16.5)
    assert not is_whole(new)
    delta = new - old
    np.testing.assert_allclose(after["age"], 30 + 2 * delta)
    np.testing.assert_allclose(effort, delta)
    expected = [ADULT_EDUCATION[min(int(np.floor(k)), 16) - 1] for k in new]
    assert after["education"].tolist() == expected
    # e.g. 9 -> 12.75 is an Assoc-acdm (level 12), 16.5 a Doctorate
    half = (old == 9) & (keys == 0.5)
    np.testing.assert_allclose(new[half], 12.75)
    assert after["education"][half].tolist() == ["Assoc-acdm"]
    np.testing.assert_allclose(after["age"][half], 37.5)


@pytest.mark.parametrize("continuous", [False, True])
def test_add_education_postcondition_age_below_120(adult, continuous):
    ages = [100, 117, 118, 119]
    rows = make_rows(adult, age=ages, education_num=9, education="HS-grad")
    frame, keys = with_keys(rows, FINE_KEYS)
    actions = adult_actions(continuous=continuous)
    before, after, _, valid = apply_step(adult, actions, "add_education", frame, keys)
    delta = after["education_num"] - before["education_num"]
    np.testing.assert_allclose(after["age"], before["age"] + 2 * delta)
    np.testing.assert_array_equal(valid, after["age"] < 120)
    old_age = before["age"]
    assert valid[old_age == 100].all()  # 100 + 2 * 7.5 < 120
    if continuous:
        # 118: less than one level; 119: less than half a level
        np.testing.assert_array_equal(valid[old_age == 118], delta[old_age == 118] < 1)
        assert valid[old_age == 118].any() and not valid[old_age == 118].all()
        np.testing.assert_array_equal(
            valid[old_age == 119], delta[old_age == 119] < 0.5
        )
    else:
        # 117 + 2 = 119: only the next level; 118 and 119: no level at all
        np.testing.assert_array_equal(valid[old_age == 117], delta[old_age == 117] == 1)
        assert valid[old_age == 117].any()
        assert not valid[old_age >= 118].any()


# ---------------------------------------------------------------------- #
# actions that set a fixed category (both data sets)
# ---------------------------------------------------------------------- #
# (data set, action, feature, the category it sets)
FIXED_ACTIONS = [
    ("adult", "enlist", "occupation", "Armed-Forces"),
    ("german", "naturalize", "foreign_worker", "no"),
    ("german", "get_guarantor", "other_debtors_guarantors", "guarantor"),
    ("german", "get_unskilled_job", "job", UNSKILLED_RESIDENT),
]


@pytest.mark.parametrize("continuous", [False, True])
@pytest.mark.parametrize(
    ("dataset", "name", "feature", "target"),
    FIXED_ACTIONS,
    ids=[name for _, name, *_ in FIXED_ACTIONS],
)
def test_fixed_value_actions(datasets, dataset, name, feature, target, continuous):
    data = datasets[dataset].data
    categories = list(data[feature].cat.categories)
    frame, keys = with_keys(make_rows(data, **{feature: categories}), KEYS[::4])
    actions = ACTION_SETS[dataset](continuous=continuous)
    before, after, effort, valid = apply_step(data, actions, name, frame, keys)
    old = np.asarray(before[feature], dtype=object)
    if name == "get_unskilled_job":
        # only the unemployed / unskilled non-residents
        expected = old == UNSKILLED_NON_RESIDENT
    else:
        # everyone not at the value already
        expected = old != target
    np.testing.assert_array_equal(valid, expected)
    assert valid.any() and not valid.all()
    assert set(after[feature].tolist()) == {target}
    np.testing.assert_array_equal(effort, 5.0)


# ---------------------------------------------------------------------- #
# German, numeric actions
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize("continuous", [False, True])
def test_change_credit_amount(german, continuous):
    credit = [250, 1169, 18424, 5000, 5000, 5000]
    age = [30, 67, 16, 15, 10, 19]
    frame, keys = with_keys(make_rows(german, credit_amount=credit, age_in_years=age))
    actions = german_actions(continuous=continuous)
    before, after, effort, valid = apply_step(
        german, actions, "change_credit_amount", frame, keys
    )
    old, new = before["credit_amount"], after["credit_amount"]
    # precondition: older than 15
    np.testing.assert_array_equal(valid, before["age_in_years"] > 15)
    assert np.all((new[valid] >= 1) & (new[valid] <= 100_000))
    np.testing.assert_array_equal(new[valid & (keys == 0)], 1)
    np.testing.assert_array_equal(new[valid & (keys == 1)], 100_000)
    from_1169 = old == 1169
    assert np.any(new[from_1169] < 1169) and np.any(new[from_1169] > 1169)
    np.testing.assert_allclose(effort[valid], ((new - old) / old)[valid] ** 2)
    assert is_whole(new[valid]) != continuous


@pytest.mark.parametrize("continuous", [False, True])
def test_change_loan_period(german, continuous):
    duration = [4, 24, 72]
    frame, keys = with_keys(make_rows(german, loan_duration=duration))
    actions = german_actions(continuous=continuous)
    before, after, effort, valid = apply_step(
        german, actions, "change_loan_period", frame, keys
    )
    old, new = before["loan_duration"], after["loan_duration"]
    assert valid.all()
    assert np.all((new >= 1) & (new <= 120))
    np.testing.assert_array_equal(new[keys == 0], 1)
    np.testing.assert_array_equal(new[keys == 1], 120)
    assert np.any(new[old == 24] < 24) and np.any(new[old == 24] > 24)
    np.testing.assert_allclose(effort, ((new - old) / old) ** 2)
    # e.g. 24 -> 120 months costs (96 / 24) ** 2 = 16
    np.testing.assert_allclose(effort[(old == 24) & (keys == 1)], 16.0)
    assert is_whole(new) != continuous


@pytest.mark.parametrize("name", ["change_loan_period", "change_credit_amount"])
def test_relative_effort_is_finite_after_an_infeasible_step(german, name):
    # adjust_loan_period can round a duration down to 0 (an infeasible step,
    # rejected by its postcondition); the simulation carries on from that
    # state, so the next relative effort must not divide by zero
    frame, keys = with_keys(make_rows(german, loan_duration=0, credit_amount=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        before, after, effort, _ = apply_step(
            german, german_actions(), name, frame, keys
        )
    feature = "loan_duration" if name == "change_loan_period" else "credit_amount"
    assert np.all(np.isfinite(effort))
    # the base is clipped to 1, the smallest valid value
    np.testing.assert_allclose(effort, (after[feature] - 0.0) ** 2)


@pytest.mark.parametrize("continuous", [False, True])
def test_adjust_loan_period(german, continuous):
    credit = [1000, 1001, 2000, 5000, 18424, 250, 3000]
    duration = [12, 12, 24, 6, 72, 6, 10]
    frame, keys = with_keys(
        make_rows(german, credit_amount=credit, loan_duration=duration), FINE_KEYS
    )
    actions = german_actions(continuous=continuous)
    before, after, effort, valid = apply_step(
        german, actions, "adjust_loan_period", frame, keys
    )
    old_credit, new_credit = before["credit_amount"], after["credit_amount"]
    old_duration, new_duration = before["loan_duration"], after["loan_duration"]
    assert np.all((new_credit >= 1) & (new_credit <= 100_000))
    # consequence: the same instalment, so the duration scales with the credit
    scaled = old_duration * new_credit / old_credit
    if continuous:
        np.testing.assert_allclose(new_duration, scaled)
        assert not is_whole(new_duration[valid])
    else:
        np.testing.assert_array_equal(new_duration, np.round(scaled))
        assert is_whole(new_duration) and is_whole(new_credit)
        assert not is_whole(scaled[valid])  # rounding did happen
    # constraints: a credit above 1000, and 1 <= new duration <= 120 months
    expected = (old_credit > 1000) & (new_duration >= 1) & (new_duration <= 120)
    np.testing.assert_array_equal(valid, expected)
    assert not valid[old_credit <= 1000].any()
    for amount in (1001, 2000, 5000, 18424, 3000):
        rows = old_credit == amount
        assert valid[rows].any() and not valid[rows].all(), amount
    # 24 months at 2000 DM: at most 10000 DM (120 months) ... 100000 is too much
    at_2000 = old_credit == 2000
    assert not valid[at_2000 & (keys == 1)].any()
    assert np.all(new_credit[at_2000 & valid] <= 10_000 + 41)
    np.testing.assert_allclose(
        effort, ((new_credit - old_credit) / old_credit) ** 2, rtol=1e-12
    )


def test_adjust_loan_period_rounds_to_the_nearest_month(german):
    # 10 months at 3000 DM; keys picking new credits near 3000 * k / 10
    credit = np.array([4000, 4100, 4200, 4500, 2900, 7999])
    # any direction on the grid 1, 2, ..., 100000: key (c - 1 + 0.5) / 100000
    keys = (credit - 0.5) / 100_000
    frame = make_rows(german, credit_amount=3000, loan_duration=10)
    frame = frame.loc[frame.index.repeat(len(credit))].reset_index(drop=True)
    _, after, _, valid = apply_step(
        german, german_actions(), "adjust_loan_period", frame, keys
    )
    np.testing.assert_array_equal(after["credit_amount"], credit)
    # 13.33 -> 13, 13.67 -> 14, 14 -> 14, 15 -> 15, 9.67 -> 10, 26.66 -> 27
    np.testing.assert_array_equal(after["loan_duration"], [13, 14, 14, 15, 10, 27])
    assert valid.all()
    _, after, _, _ = apply_step(
        german, german_actions(continuous=True), "adjust_loan_period", frame, keys
    )
    np.testing.assert_allclose(
        after["loan_duration"], 10 * after["credit_amount"] / 3000
    )


# ---------------------------------------------------------------------- #
# the Adult feature graph
# ---------------------------------------------------------------------- #
def test_adult_graph_edges():
    graph = adult_feature_graph()
    assert [(s, t) for s, t, _ in graph.edges] == [
        ("education_num", "capital_gain"),
        ("education_num", "occupation"),
        ("education_num", "workclass"),
        ("hours_per_week", "capital_gain"),
        ("hours_per_week", "education_num"),
    ]


@pytest.mark.parametrize("target", ["capital_gain", "occupation", "workclass"])
@pytest.mark.parametrize(
    ("education_num", "expected"),
    [(1, 31 / 32), (8, 0.75), (8.9, 0.75), (9, 23 / 32), (16, 0.5), (16.5, 0.5)],
)
def test_tau_education(target, education_num, expected):
    fn = tau(adult_feature_graph(), "education_num", target)
    state = graph_state(education_num=[education_num], hours_per_week=[40])
    np.testing.assert_allclose(fn(state), [expected])


@pytest.mark.parametrize(
    ("hours", "expected"),
    [
        (0, 0.5),
        (19, 0.5),
        (19.9, 0.5),
        (20, 0.6),
        (29, 0.6),
        (30, 0.7),
        (40, 0.7),
        (40.5, 1.0),
        (41, 1.0),
        (99, 1.0),
    ],
)
def test_tau_hours_education(hours, expected):
    fn = tau(adult_feature_graph(), "hours_per_week", "education_num")
    np.testing.assert_allclose(fn(graph_state(hours_per_week=[hours])), [expected])


@pytest.mark.parametrize(
    ("hours", "expected", "atol"),
    [
        (0, 1.0, 1e-12),
        (40, 1.0, 1e-12),
        (60, 1.0, 1e-8),
        (70, 1.0, 1e-4),
        (75, 1.0 - np.exp(-5.0), 1e-9),
        (79, 1.0 - np.exp(-1.0), 1e-9),
        (80, 0.0, 1e-12),
        (90, 0.0, 0.0),
        (99, 0.0, 0.0),
        (1000, 0.0, 0.0),
    ],
)
def test_tau_hours_capital_gain(hours, expected, atol):
    fn = tau(adult_feature_graph(), "hours_per_week", "capital_gain")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow in exp, even at 1000 h
        value = fn(graph_state(hours_per_week=[hours]))
    np.testing.assert_allclose(value, [expected], rtol=0, atol=atol)
    if hours == 75:
        assert 0.99 < value[0] < 0.999


def test_tau_hours_capital_gain_falls_from_one_to_zero():
    fn = tau(adult_feature_graph(), "hours_per_week", "capital_gain")
    hours = np.arange(0.0, 100.0, 0.25)
    values = fn(graph_state(hours_per_week=hours))
    assert np.all((values >= 0) & (values <= 1))
    assert np.all(np.diff(values) <= 0)
    assert np.all(values[hours < 70] > 0.9999)
    assert np.all(values[hours >= 80] == 0)


def test_adult_feature_discounts():
    graph = adult_feature_graph()
    state = graph_state(education_num=[8, 16, 9, 1], hours_per_week=[40, 80, 19, 75])
    tau_edu = 1 - np.floor(state["education_num"]) / 32
    tau_hours_cap = [1.0, 0.0, 1.0, 1 - np.exp(-5.0)]
    # Eq. 1: capital_gain has two incoming edges, the others one or none
    np.testing.assert_allclose(
        graph.feature_discount("capital_gain", state),
        (tau_edu + tau_hours_cap) / 2,
        atol=1e-12,
    )
    np.testing.assert_allclose(graph.feature_discount("occupation", state), tau_edu)
    np.testing.assert_allclose(graph.feature_discount("workclass", state), tau_edu)
    np.testing.assert_allclose(
        graph.feature_discount("education_num", state), [0.7, 1.0, 0.5, 1.0]
    )
    for feature in ["age", "education", "hours_per_week", "capital_loss"]:
        assert graph.feature_discount(feature, state) is None


def _expected_discount(name, education_num, hours):
    tau_edu = 1 - np.floor(education_num) / 32
    tau_hours_cap = 1 - np.interp(np.exp(hours), [1, np.exp(80.0)], [0, 1])
    tau_hours_edu = np.select(
        [hours < 20, hours < 30, hours <= 40], [0.5, 0.6, 0.7], 1.0
    )
    return {
        "wait_years": np.ones_like(hours),
        "change_working_hours": np.ones_like(hours),
        "change_capital_loss": np.ones_like(hours),
        # capital_gain: mean of the two taus into it
        "increase_capital_gain": (tau_edu + tau_hours_cap) / 2,
        # education_num, age, education: only education_num has an incoming edge
        "add_education": tau_hours_edu,
        "enlist": tau_edu,
    }[name]


@pytest.mark.parametrize("continuous", [False, True])
@pytest.mark.parametrize("name", ADULT_NAMES)
def test_adult_action_discounts_eq2(adult, name, continuous):
    levels = [1, 8, 9, 13, 16]
    hours = [10, 19, 20, 29, 30, 40, 41, 60, 75, 80]
    education_num, hours_per_week = map(
        np.array, zip(*itertools.product(levels, hours))
    )
    rows = make_rows(
        adult,
        education_num=education_num,
        education=[ADULT_EDUCATION[k - 1] for k in education_num],
        hours_per_week=hours_per_week,
    )
    schema, compiled = compile_actions(adult, adult_actions(continuous=continuous))
    graph = adult_feature_graph()
    compiled_graph = CompiledGraph(graph, schema, compiled)
    states = schema.encode(rows)
    i = ADULT_NAMES.index(name)
    expected = _expected_discount(name, education_num, hours_per_week.astype(float))
    np.testing.assert_allclose(
        compiled_graph.action_discount(states, i), expected, atol=1e-12
    )
    # Eq. 2 of the uncompiled graph on the affected features agrees
    affected = adult_actions(continuous=continuous)[i].affected_features
    np.testing.assert_allclose(
        graph.discount(affected, schema.view(states)), expected, atol=1e-12
    )
    np.testing.assert_allclose(
        compiled_graph.action_discount(states, i),
        expected,
        atol=1e-12,
    )
    if name == "add_education":
        # e.g. 19 h: 0.5, 30 h: 0.7, 41 h: 1
        assert set(np.round(expected, 6).tolist()) == {0.5, 0.6, 0.7, 1.0}


# ---------------------------------------------------------------------- #
# the action sets inside the explainer
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize("continuous", [False, True])
@pytest.mark.parametrize("dataset", ["adult", "german"])
def test_paper_actions_compile_in_fit(datasets, dataset, continuous):
    bunch = datasets[dataset]
    X, y = bunch.data, bunch.target
    model = DummyClassifier(strategy="prior").fit(X, y)
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=ACTION_SETS[dataset](continuous=continuous),
        feature_graph=adult_feature_graph() if dataset == "adult" else None,
        target_class=1,
        population_size=10,
        n_generations=2,
        random_state=0,
    ).fit(X)
    resolved = {action.name: action for action in explainer.actions_}
    names = ADULT_NAMES if dataset == "adult" else GERMAN_NAMES
    assert list(resolved) == names
    step = None if continuous else 1
    if dataset == "adult":
        education = resolved["add_education"]
        if continuous:
            assert education.values == (1.0, 16.5)
        else:
            assert education.values == list(range(1, 17))
        assert resolved["change_capital_loss"].values == (1.0, 5000.0)
        assert resolved["change_capital_loss"].step == step
        assert resolved["enlist"].values == ["Armed-Forces"]
        assert explainer.categories_["occupation"] == list(
            X["occupation"].cat.categories
        )
        assert explainer.categories_["education"] == ADULT_EDUCATION
    else:
        assert resolved["adjust_loan_period"].values == (1.0, 100_000.0)
        assert resolved["adjust_loan_period"].step == step
        assert resolved["change_loan_period"].values == (1.0, 120.0)
        assert resolved["get_unskilled_job"].values == [UNSKILLED_RESIDENT]
        assert resolved["naturalize"].values == ["no"]
        assert resolved["get_guarantor"].values == ["guarantor"]
        for feature in ["job", "foreign_worker", "other_debtors_guarantors"]:
            assert explainer.categories_[feature] == list(X[feature].cat.categories)


def _pipeline():
    preprocess = make_column_transformer(
        (
            OneHotEncoder(handle_unknown="ignore"),
            make_column_selector(dtype_include="category"),
        ),
        remainder=StandardScaler(),
    )
    return make_pipeline(preprocess, LogisticRegression(max_iter=500))


def _relative_squared(feature):
    return lambda b, a: ((a[feature] - b[feature]) / b[feature]) ** 2


def _absolute(feature, per=1.0):
    return lambda b, a: (a[feature] - b[feature]).abs() / per


EFFORTS = {
    "adult": {
        "wait_years": _absolute("age"),
        "change_working_hours": _absolute("hours_per_week", 10),
        "increase_capital_gain": _absolute("capital_gain", 10_000),
        "change_capital_loss": _absolute("capital_loss", 1_000),
        "add_education": _absolute("education_num"),
        "enlist": lambda b, a: 5.0,
    },
    "german": {
        "wait_years": _absolute("age_in_years"),
        "naturalize": lambda b, a: 5.0,
        "change_credit_amount": _relative_squared("credit_amount"),
        "change_loan_period": _relative_squared("loan_duration"),
        "adjust_loan_period": _relative_squared("credit_amount"),
        "get_guarantor": lambda b, a: 5.0,
        "get_unskilled_job": lambda b, a: 5.0,
    },
}


@pytest.mark.parametrize("dataset", ["adult", "german"])
def test_explanations_follow_the_paper_actions(datasets, dataset):
    bunch = datasets[dataset]
    train = bunch.data.sample(min(3000, len(bunch.data)), random_state=0)
    model = _pipeline().fit(train, bunch.target.loc[train.index])
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=ACTION_SETS[dataset](),
        feature_graph=adult_feature_graph() if dataset == "adult" else None,
        target_class=1,
        population_size=40,
        n_generations=8,
        random_state=0,
    ).fit(train)
    rejected = train[model.predict(train) == 0].iloc[:3]
    explanations, states = explainer.explain(rejected, return_states=True)
    ok = explanations[explanations["status"] == "ok"].reset_index(drop=True)
    assert len(ok) > 0
    assert set(ok["action"]) <= set(EFFORTS[dataset])
    # the states before and after each step
    keys = ["instance", "solution", "step"]
    before = ok[keys].merge(states.assign(step=states["step"] + 1), on=keys)
    after = ok[keys].merge(states, on=keys)
    assert len(before) == len(after) == len(ok)
    numeric = [
        c for c in train.columns if not isinstance(train[c].dtype, pd.CategoricalDtype)
    ]
    for column in numeric:  # whole numbers by default
        assert is_whole(states[column]), column
    for name, rows in ok.groupby("action"):
        b, a = before.loc[rows.index], after.loc[rows.index]
        np.testing.assert_allclose(
            rows["effort"], EFFORTS[dataset][name](b, a) * np.ones(len(rows))
        )
        if name == "adjust_loan_period":
            scaled = b["loan_duration"] * a["credit_amount"] / b["credit_amount"]
            np.testing.assert_array_equal(a["loan_duration"], np.round(scaled))
    if dataset == "adult":
        # education stays the label of education_num; age below 120
        np.testing.assert_array_equal(
            education_label(states["education_num"]),
            states["education"].astype(str).to_numpy(),
        )
        assert (states["age"] < 120).all()
        # each step's discount is Eq. 2 on the state before it
        for name, rows in ok.groupby("action"):
            b = before.loc[rows.index]
            expected = _expected_discount(
                name,
                b["education_num"].to_numpy(float),
                b["hours_per_week"].to_numpy(float),
            )
            np.testing.assert_allclose(rows["discount"], expected, atol=1e-9)
        assert (ok["discount"] < 1).any()
    else:
        np.testing.assert_array_equal(ok["discount"], 1.0)  # no graph (SCF)
        assert states["loan_duration"].between(1, 120).all()

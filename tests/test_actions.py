"""Tests of ``Action`` and of the compiled value spaces (``actions.py``)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_cscf import Action
from sklearn_cscf._callable_checks import describe_error
from sklearn_cscf._compiled_actions import CompiledAction
from sklearn_cscf._schema import FeatureSchema
from sklearn_cscf._spaces import DiscreteSpace, RangeSpace

EDUCATION = ["HS", "BSc", "MSc"]


def make_frame():
    return pd.DataFrame(
        {
            "age": [20, 35, 50, 65],  # whole numbers: learned integer range
            "hours": [10.5, 40.0, 60.25, 20.0],  # floats: continuous range
            "education": ["HS", "BSc", "MSc", "HS"],  # unordered object column
            "level": pd.Categorical(
                ["low", "high", "mid", "low"],
                categories=["low", "mid", "high"],
                ordered=True,
            ),
            "color": ["red", "blue", "red", "green"],
        }
    )


@pytest.fixture
def schema():
    return FeatureSchema(make_frame())


def encode(schema, rows):
    """Encode a list of partial rows (dicts); missing columns take defaults."""
    default = {
        "age": 30,
        "hours": 40.0,
        "education": "HS",
        "level": "low",
        "color": "red",
    }
    frame = pd.DataFrame([{**default, **row} for row in rows], columns=schema.names)
    return schema.encode(frame)


def labels(schema, name, states):
    j = schema.index[name]
    return list(schema.decode_column(j, states[:, j]))


# ---------------------------------------------------------------------- #
# Action construction
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize("name", ["", 3, None, ["a"]])
def test_name_must_be_a_non_empty_string(name):
    with pytest.raises(TypeError, match="name must be a non-empty str"):
        Action(name, "age")


def test_bad_direction_names_the_action():
    with pytest.raises(ValueError, match=r"Action 'grow'.*direction.*'up'"):
        Action("grow", "age", direction="up")


@pytest.mark.parametrize("label", ["cost", "precondition", "postcondition"])
def test_non_callable_functions_name_the_action(label):
    with pytest.raises(TypeError, match=rf"Action 'grow': {label} must be callable"):
        Action("grow", "age", **{label: 5})


def test_effects_must_be_a_mapping():
    with pytest.raises(TypeError, match=r"Action 'grow': effects must be a dict"):
        Action("grow", "age", effects=[("hours", lambda b, a: 1)])


def test_effect_functions_must_be_callable():
    with pytest.raises(TypeError, match=r"Action 'grow': the effect on 'hours'"):
        Action("grow", "age", effects={"hours": 3})


def test_effect_on_own_feature_is_rejected():
    with pytest.raises(ValueError, match=r"Action 'grow': 'age' is the feature"):
        Action("grow", "age", effects={"age": lambda b, a: b["age"]})


@pytest.mark.parametrize("step", [0, -1, -0.5, True, "1", float("nan")])
def test_step_must_be_a_positive_number(step):
    with pytest.raises(ValueError, match=r"Action 'grow': step must be a positive"):
        Action("grow", "age", step=step)


@pytest.mark.parametrize(
    "values",
    [
        (1,),
        (1, 2, 3),
        ("a", "b"),
        (True, 2),
        (5, 1),
        (0, float("inf")),
        (float("nan"), 1),
    ],
)
def test_bad_ranges_name_the_action(values):
    with pytest.raises(ValueError, match=r"Action 'grow'"):
        Action("grow", "age", values=values)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([], "empty"),
        (["a", "b", "a"], "duplicates"),
        ([1, 1.0], "duplicates"),
        (np.array([2, 3, 2]), "duplicates"),
        ([[1], [1]], "duplicates"),
    ],
)
def test_bad_lists_name_the_action(values, message):
    with pytest.raises(ValueError, match=rf"Action 'grow'.*{message}"):
        Action("grow", "age", values=values)


def test_valid_action_keeps_its_parameters():
    def cost(b, a):
        return 1.0

    effects = {"hours": lambda b, a: b["hours"]}
    action = Action(
        "grow", "age", values=(0, 10), direction="increase", cost=cost, step=2
    )
    assert action.values == (0, 10)
    assert action.direction == "increase"
    assert action.cost is cost
    assert action.step == 2
    with_effects = Action("grow", "age", effects=effects)
    effects["color"] = lambda b, a: b["color"]
    # the action holds its own copy of the effects
    assert list(with_effects.effects) == ["hours"]


def test_affected_features():
    assert Action("a", "age").affected_features == ["age"]
    action = Action(
        "study",
        "education",
        effects={"age": lambda b, a: b["age"] + 4, "hours": lambda b, a: 0},
    )
    assert action.affected_features == ["education", "age", "hours"]


def test_repr():
    assert repr(Action("a", "age")) == "Action('a', feature='age')"
    assert (
        repr(Action("a", "age", values=(0, 9), direction="decrease", step=3))
        == "Action('a', feature='age', values=(0, 9), direction='decrease', step=3)"
    )
    study = Action(
        "get_degree",
        "education",
        values=EDUCATION,
        direction="increase",
        effects={"age": lambda b, a: b["age"] + 4},
    )
    assert repr(study) == (
        "Action('get_degree', feature='education', values=['HS', 'BSc', 'MSc'], "
        "direction='increase', effects=['age'])"
    )


# ---------------------------------------------------------------------- #
# RangeSpace
# ---------------------------------------------------------------------- #
def test_range_interpolates_linearly():
    space = RangeSpace(18, 38, "any")
    keys = np.array([0.0, 0.12, 0.5, 1.0])
    values, valid = space.interpolate(keys, np.full(4, 25.0))
    np.testing.assert_allclose(values, [18.0, 20.4, 28.0, 38.0])
    assert valid.all()


@pytest.mark.parametrize(
    ("direction", "current", "key", "expected"),
    [
        ("increase", 30.0, 0.0, 30.0),
        ("increase", 30.0, 0.5, 65.0),
        ("increase", 30.0, 1.0, 100.0),
        ("increase", -50.0, 0.5, 50.0),  # below the range: the whole range
        ("decrease", 30.0, 0.0, 0.0),
        ("decrease", 30.0, 0.5, 15.0),
        ("decrease", 30.0, 1.0, 30.0),
        ("decrease", 500.0, 0.25, 25.0),  # above the range: the whole range
        ("any", 30.0, 0.25, 25.0),
    ],
)
def test_range_direction_restricts_to_current(direction, current, key, expected):
    space = RangeSpace(0, 100, direction)
    values, valid = space.interpolate(np.array([key]), np.array([current]))
    assert values[0] == pytest.approx(expected)
    assert valid[0]


@pytest.mark.parametrize(
    ("direction", "current"),
    [("increase", 101.0), ("decrease", -1.0), ("increase", np.nan)],
)
def test_range_empty_restricted_space_is_invalid_and_unchanged(direction, current):
    space = RangeSpace(0, 100, direction)
    values, valid = space.interpolate(np.array([0.3, 0.9]), np.full(2, current))
    assert not valid.any()
    np.testing.assert_array_equal(values, [current, current])


def test_range_step_grid():
    space = RangeSpace(0, 10, "any", step=2.5)
    keys = np.array([0.0, 0.25, 0.45, 0.65, 0.85, 1.0])
    values, valid = space.interpolate(keys, np.zeros(6))
    np.testing.assert_allclose(values, [0.0, 2.5, 5.0, 7.5, 10.0, 10.0])
    assert valid.all()


def test_range_step_grid_with_direction():
    space = RangeSpace(0, 10, "increase", step=2.5)
    values, valid = space.interpolate(np.array([0.0, 0.5, 1.0]), np.full(3, 3.0))
    np.testing.assert_allclose(values, [5.0, 7.5, 10.0])
    assert valid.all()
    space = RangeSpace(1, 10, "decrease", step=3)  # grid 1, 4, 7, 10
    values, valid = space.interpolate(np.array([0.0, 0.99]), np.full(2, 8.0))
    np.testing.assert_allclose(values, [1.0, 7.0])
    assert valid.all()


def test_range_step_without_grid_point_is_invalid():
    # [9, 10] is not empty, but the grid 0, 4, 8 has no point in it
    space = RangeSpace(0, 10, "increase", step=4)
    values, valid = space.interpolate(np.array([0.5]), np.array([9.0]))
    assert not valid[0]
    assert values[0] == 9.0


finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
unit = st.floats(0.0, 1.0)


@settings(max_examples=200, deadline=None)
@given(
    bounds=st.tuples(finite, finite).map(sorted),
    direction=st.sampled_from(["any", "increase", "decrease"]),
    current=st.floats(-2e6, 2e6, allow_nan=False),
    keys=st.lists(unit, min_size=1, max_size=5),
)
def test_range_values_stay_in_restricted_space(bounds, direction, current, keys):
    low, high = bounds
    space = RangeSpace(low, high, direction)
    keys = np.array(keys)
    values, valid = space.interpolate(keys, np.full(keys.shape, current))
    lo = max(low, current) if direction == "increase" else low
    hi = min(high, current) if direction == "decrease" else high
    tol = 1e-9 * (1 + abs(lo) + abs(hi))
    if lo <= hi:
        assert valid.all()
        assert np.all(values >= lo - tol)
        assert np.all(values <= hi + tol)
        np.testing.assert_allclose(values, lo + keys * (hi - lo), atol=tol)
    else:
        assert not valid.any()
        assert np.all(values == current)


@settings(max_examples=200, deadline=None)
@given(
    low=st.integers(-50, 50),
    n_steps=st.integers(0, 30),
    step=st.sampled_from([0.5, 1.0, 2.0, 2.5, 3.0]),
    extra=st.floats(0.0, 0.99),
    direction=st.sampled_from(["any", "increase", "decrease"]),
    current=st.floats(-200, 200, allow_nan=False),
    keys=st.lists(unit, min_size=1, max_size=5),
)
def test_range_step_values_on_grid(low, n_steps, step, extra, direction, current, keys):
    high = low + (n_steps + extra) * step
    space = RangeSpace(low, high, direction, step=step)
    keys = np.array(keys)
    values, valid = space.interpolate(keys, np.full(keys.shape, current))
    lo = max(low, current) if direction == "increase" else low
    hi = min(high, current) if direction == "decrease" else high
    grid = low + step * np.arange(n_steps + 1)
    tol = 1e-9 * step
    reachable = grid[(grid >= lo - tol) & (grid <= hi + tol)]
    if lo <= hi and reachable.size:
        assert valid.all()
        for value in values:
            assert np.isclose(value, reachable).any()
    else:
        assert not valid.any()
        assert np.all(values == current)


# ---------------------------------------------------------------------- #
# DiscreteSpace (numbers)
# ---------------------------------------------------------------------- #
def test_discrete_numbers_any_direction():
    space = DiscreteSpace([0.0, 1.0, 2.0, 3.0], "any")
    keys = np.array([0.0, 0.24, 0.25, 0.8, 1.0])
    values, valid = space.interpolate(keys, np.zeros(5))
    np.testing.assert_array_equal(values, [0, 0, 1, 3, 3])
    assert valid.all()


@pytest.mark.parametrize(
    ("direction", "current", "keys", "expected"),
    [
        ("increase", 3.0, [0.0, 1.0], [7.0, 7.0]),
        ("increase", 2.0, [0.0, 0.6], [3.0, 7.0]),
        ("increase", 0.0, [0.0, 0.5, 1.0], [1.0, 3.0, 7.0]),
        ("decrease", 3.0, [0.0, 1.0], [1.0, 1.0]),
        ("decrease", 8.0, [0.0, 0.5, 1.0], [1.0, 3.0, 7.0]),
        ("decrease", 7.0, [0.0, 0.6], [1.0, 3.0]),
    ],
)
def test_discrete_numbers_direction_is_strict(direction, current, keys, expected):
    space = DiscreteSpace([1.0, 3.0, 7.0], direction)
    keys = np.array(keys)
    values, valid = space.interpolate(keys, np.full(keys.shape, current))
    np.testing.assert_array_equal(values, expected)
    assert valid.all()


@pytest.mark.parametrize(
    ("direction", "current"),
    [("increase", 7.0), ("increase", 9.0), ("decrease", 1.0), ("decrease", np.nan)],
)
def test_discrete_numbers_empty_space_is_invalid(direction, current):
    space = DiscreteSpace([1.0, 3.0, 7.0], direction)
    values, valid = space.interpolate(np.array([0.0, 0.7]), np.full(2, current))
    assert not valid.any()
    np.testing.assert_array_equal(values, [current, current])


@settings(max_examples=200, deadline=None)
@given(
    numbers=st.lists(st.integers(-20, 20), min_size=1, max_size=6, unique=True),
    direction=st.sampled_from(["any", "increase", "decrease"]),
    current=st.floats(-30, 30, allow_nan=False),
    keys=st.lists(unit, min_size=1, max_size=5),
)
def test_discrete_numbers_property(numbers, direction, current, keys):
    allowed = sorted(numbers)
    if direction == "increase":
        allowed = [v for v in allowed if v > current]
    elif direction == "decrease":
        allowed = [v for v in allowed if v < current]
    space = DiscreteSpace(sorted(numbers), direction)
    keys = np.array(keys)
    values, valid = space.interpolate(keys, np.full(keys.shape, current))
    if allowed:
        assert valid.all()
        n = len(allowed)
        expected = [allowed[min(int(k * n), n - 1)] for k in keys]
        np.testing.assert_array_equal(values, expected)
    else:
        assert not valid.any()
        assert np.all(values == current)


# ---------------------------------------------------------------------- #
# CompiledAction: value spaces resolved against the schema
# ---------------------------------------------------------------------- #
def test_learned_integer_column_steps_in_whole_numbers(schema):
    action = CompiledAction(Action("grow", "age"), schema)
    assert isinstance(action.space, RangeSpace)
    resolved = action.resolved()
    assert (resolved.values, resolved.step) == ((20.0, 65.0), 1.0)
    keys = np.linspace(0, 1, 37)
    states = encode(schema, [{"age": 30}] * keys.size)
    after, _, valid = action.apply(states, keys)
    ages = after[:, schema.index["age"]]
    assert valid.all()
    np.testing.assert_array_equal(ages, np.round(ages))
    assert ages.min() == 20 and ages.max() == 65


def test_learned_float_column_is_continuous(schema):
    action = CompiledAction(Action("work", "hours"), schema)
    states = encode(schema, [{}, {}])
    after, _, _ = action.apply(states, np.array([0.5, 0.1]))
    np.testing.assert_allclose(
        after[:, schema.index["hours"]], [10.5 + 0.5 * 49.75, 10.5 + 0.1 * 49.75]
    )


def test_learned_increase_on_integer_column(schema):
    action = CompiledAction(Action("grow", "age", direction="increase"), schema)
    states = encode(schema, [{"age": 60}, {"age": 60}, {"age": 65}])
    after, _, valid = action.apply(states, np.array([0.0, 1.0, 0.5]))
    np.testing.assert_array_equal(after[:, schema.index["age"]], [60, 65, 65])
    assert valid.all()


def test_explicit_step_on_learned_range(schema):
    action = CompiledAction(Action("work", "hours", step=10), schema)
    keys = np.linspace(0, 1, 21)
    after, _, valid = action.apply(encode(schema, [{}] * keys.size), keys)
    hours = after[:, schema.index["hours"]]
    assert valid.all()
    # grid 10.5, 20.5, ..., 50.5 (60.5 > 60.25 is outside)
    assert set(np.round(hours, 9)) == {10.5, 20.5, 30.5, 40.5, 50.5}


def test_categorical_list_any_direction(schema):
    action = CompiledAction(Action("study", "education", values=EDUCATION), schema)
    keys = np.array([0.0, 0.34, 0.67, 1.0])
    states = encode(schema, [{"education": "MSc"}] * 4)
    after, _, valid = action.apply(states, keys)
    assert labels(schema, "education", after) == ["HS", "BSc", "MSc", "MSc"]
    assert valid.all()
    assert action.resolved().values == EDUCATION


def test_categorical_list_increase_is_strictly_later(schema):
    action = CompiledAction(
        Action("study", "education", values=EDUCATION, direction="increase"), schema
    )
    states = encode(
        schema,
        [
            {"education": "HS"},
            {"education": "HS"},
            {"education": "BSc"},
            {"education": "MSc"},
        ],
    )
    after, _, valid = action.apply(states, np.array([0.0, 0.99, 0.0, 0.5]))
    assert labels(schema, "education", after) == ["BSc", "MSc", "MSc", "MSc"]
    assert valid.tolist() == [True, True, True, False]


def test_categorical_list_decrease_is_strictly_earlier(schema):
    action = CompiledAction(
        Action("drop", "education", values=EDUCATION, direction="decrease"), schema
    )
    states = encode(
        schema, [{"education": "MSc"}, {"education": "MSc"}, {"education": "HS"}]
    )
    after, _, valid = action.apply(states, np.array([0.0, 0.9, 0.5]))
    assert labels(schema, "education", after) == ["HS", "BSc", "HS"]
    assert valid.tolist() == [True, True, False]


def test_categorical_current_not_in_list(schema):
    directed = CompiledAction(
        Action("study", "education", values=["BSc", "MSc"], direction="increase"),
        schema,
    )
    after, _, valid = directed.apply(
        encode(schema, [{"education": "HS"}]), np.array([0.9])
    )
    assert not valid[0]
    assert labels(schema, "education", after) == ["HS"]
    free = CompiledAction(Action("any", "education", values=["BSc", "MSc"]), schema)
    after, _, valid = free.apply(encode(schema, [{"education": "HS"}]), np.array([0.9]))
    assert valid[0]
    assert labels(schema, "education", after) == ["MSc"]


def test_learned_ordered_categorical_follows_dtype_order(schema):
    action = CompiledAction(Action("promote", "level", direction="increase"), schema)
    states = encode(schema, [{"level": "low"}, {"level": "low"}, {"level": "high"}])
    after, _, valid = action.apply(states, np.array([0.0, 0.8, 0.5]))
    assert labels(schema, "level", after) == ["mid", "high", "high"]
    assert valid.tolist() == [True, True, False]


@settings(max_examples=100, deadline=None)
@given(
    direction=st.sampled_from(["increase", "decrease"]),
    current=st.sampled_from(EDUCATION),
    keys=st.lists(unit, min_size=1, max_size=5),
)
def test_categorical_direction_property(direction, current, keys):
    schema = FeatureSchema(make_frame())
    action = CompiledAction(
        Action("move", "education", values=EDUCATION, direction=direction), schema
    )
    states = encode(schema, [{"education": current}] * len(keys))
    after, _, valid = action.apply(states, np.array(keys))
    rank = EDUCATION.index(current)
    allowed = EDUCATION[rank + 1 :] if direction == "increase" else EDUCATION[:rank]
    got = labels(schema, "education", after)
    if allowed:
        assert valid.all()
        assert set(got) <= set(allowed)
    else:
        assert not valid.any()
        assert got == [current] * len(keys)


def test_unordered_learned_categorical_rejects_direction(schema):
    with pytest.raises(ValueError, match=r"Action 'paint'.*ordered categories"):
        CompiledAction(Action("paint", "color", direction="increase"), schema)


def test_fixed_categorical_value_appends_unseen_category(schema):
    before = list(schema.categories[schema.index["education"]])
    action = CompiledAction(Action("phd", "education", values="PhD"), schema)
    assert schema.categories[schema.index["education"]] == [*before, "PhD"]
    states = encode(schema, [{"education": "HS"}, {"education": "PhD"}])
    after, effort, valid = action.apply(states, np.array([0.1, 0.9]))
    assert labels(schema, "education", after) == ["PhD", "PhD"]
    np.testing.assert_array_equal(effort, [1.0, 1.0])
    assert valid.all()


@pytest.mark.parametrize(
    "value, close",
    [("Manager", "['manager']"), ("nurses", "['nurse']"), ("CLERK", "['clerk']")],
)
def test_a_fixed_category_that_looks_like_a_typo_is_an_error_at_fit(value, close):
    frame = make_frame().assign(job=["manager", "clerk", "nurse", "clerk"])
    with pytest.raises(ValueError) as caught:
        CompiledAction(Action("promote", "job", values=value), FeatureSchema(frame))
    message = str(caught.value)
    assert f"{value!r} is not a category of feature 'job'" in message
    assert f"close matches: {close}" in message
    assert "pandas Categorical" in message  # how to introduce one on purpose


def test_a_label_of_another_type_than_the_categories_is_an_error():
    frame = pd.DataFrame({"grade": [1, 2, 3, 1], "x": [0.0, 1.0, 2.0, 3.0]})
    frame["grade"] = frame["grade"].astype(object).map(str)  # "1", "2", "3"
    with pytest.raises(
        ValueError, match=r"1 is not a category.*close matches: \['1'\]"
    ):
        CompiledAction(Action("up", "grade", values=[1, 2]), FeatureSchema(frame))


def test_a_category_declared_by_a_categorical_may_be_set_though_unseen():
    frame = make_frame()
    frame["job"] = pd.Categorical(
        ["manager", "clerk", "nurse", "clerk"],
        categories=["manager", "clerk", "nurse", "managers"],
    )
    schema = FeatureSchema(frame)
    CompiledAction(Action("promote", "job", values="managers"), schema)


def test_list_appends_unseen_categories_in_order(schema):
    j = schema.index["color"]
    before = list(schema.categories[j])
    CompiledAction(Action("paint", "color", values=["red", "pink", "cyan"]), schema)
    assert schema.categories[j] == [*before, "pink", "cyan"]


def test_fixed_numeric_value(schema):
    action = CompiledAction(Action("full_time", "hours", values=40), schema)
    states = encode(schema, [{"hours": 10.5}, {"hours": 60.25}])
    after, effort, valid = action.apply(states, np.array([0.0, 1.0]))
    np.testing.assert_array_equal(after[:, schema.index["hours"]], [40, 40])
    np.testing.assert_array_equal(effort, [1.0, 1.0])
    assert valid.all()


def test_two_actions_adding_categories_to_the_same_feature(schema):
    # 'promote' is compiled first; 'pink' and 'cyan' are added afterwards by
    # another action. A state holding one of them is simply not in the list of
    # 'promote', so its step must be invalid (not crash).
    promote = CompiledAction(
        Action("promote", "color", values=["green", "red"], direction="increase"),
        schema,
    )
    CompiledAction(Action("paint", "color", values=["pink", "cyan"]), schema)
    states = encode(schema, [{"color": "cyan"}, {"color": "pink"}, {"color": "green"}])
    after, _, valid = promote.apply(states, np.array([0.5, 0.5, 0.5]))
    assert valid.tolist() == [False, False, True]
    assert labels(schema, "color", after) == ["cyan", "pink", "red"]


# ---------------------------------------------------------------------- #
# Costs, effects and conditions
# ---------------------------------------------------------------------- #
def test_default_cost_of_numeric_range(schema):
    action = CompiledAction(Action("work", "hours", values=(0, 80)), schema)
    states = encode(schema, [{"hours": 20.0}, {"hours": 20.0}, {"hours": 20.0}])
    after, effort, _ = action.apply(states, np.array([0.75, 0.0, 0.25]))
    np.testing.assert_allclose(after[:, schema.index["hours"]], [60, 0, 20])
    np.testing.assert_allclose(effort, [40 / 80, 20 / 80, 0.0])


def test_default_cost_of_learned_range(schema):
    action = CompiledAction(Action("grow", "age"), schema)
    _, effort, _ = action.apply(encode(schema, [{"age": 20}]), np.array([1.0]))
    np.testing.assert_allclose(effort, [45 / 45])


def test_default_cost_of_discrete_numbers(schema):
    action = CompiledAction(Action("work", "hours", values=[10, 20, 50]), schema)
    states = encode(schema, [{"hours": 10.0}, {"hours": 10.0}])
    _, effort, _ = action.apply(states, np.array([0.5, 1.0]))
    np.testing.assert_allclose(effort, [10 / 40, 40 / 40])


def test_default_cost_of_categories_is_one(schema):
    action = CompiledAction(Action("study", "education", values=EDUCATION), schema)
    _, effort, _ = action.apply(encode(schema, [{}, {}]), np.array([0.0, 1.0]))
    np.testing.assert_array_equal(effort, [1.0, 1.0])


def test_invalid_step_has_zero_default_cost(schema):
    action = CompiledAction(
        Action("work", "hours", values=(0, 30), direction="increase"), schema
    )
    after, effort, valid = action.apply(encode(schema, [{"hours": 40.0}]), [0.5])
    assert not valid[0]
    assert after[0, schema.index["hours"]] == 40.0
    assert effort[0] == 0.0


def test_user_callables_receive_raw_values(schema):
    seen = {}

    def cost(before, after):
        seen["cost"] = (list(before["education"]), list(after["education"]))
        seen["age"] = np.asarray(before["age"]).tolist()
        return np.where(after["education"] == "MSc", 3.0, 1.0)

    def precondition(before):
        seen["pre"] = list(before["level"])
        return before["level"] != "high"

    def postcondition(before, after):
        seen["post"] = list(after["education"])
        return after["education"] != "BSc"

    action = CompiledAction(
        Action(
            "study",
            "education",
            values=EDUCATION,
            cost=cost,
            precondition=precondition,
            postcondition=postcondition,
        ),
        schema,
    )
    states = encode(
        schema,
        [
            {"education": "HS", "age": 21, "level": "low"},
            {"education": "BSc", "age": 40, "level": "high"},
            {"education": "HS", "age": 33, "level": "mid"},
        ],
    )
    _, effort, valid = action.apply(states, np.array([1.0, 0.0, 0.5]))
    assert seen["cost"] == (["HS", "BSc", "HS"], ["MSc", "HS", "BSc"])
    assert seen["age"] == [21.0, 40.0, 33.0]
    assert seen["pre"] == ["low", "high", "mid"]
    assert seen["post"] == ["MSc", "HS", "BSc"]
    np.testing.assert_array_equal(effort, [3.0, 1.0, 1.0])
    assert valid.tolist() == [True, False, False]


def test_negative_cost_names_the_action(schema):
    action = CompiledAction(
        Action("work", "hours", cost=lambda b, a: a["hours"] - b["hours"]), schema
    )
    states = encode(schema, [{"hours": 40.0}, {"hours": 40.0}])
    with pytest.raises(ValueError, match=r"Action 'work': cost must return non-neg"):
        action.apply(states, np.array([0.0, 1.0]))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_step_without_a_finite_cost_is_invalid(schema, bad):
    # no price, no step: the step is invalid (as a failed constraint), and its
    # effort is infinite, never a NaN that could be summed into a cost
    action = CompiledAction(
        Action(
            "work",
            "hours",
            cost=lambda b, a: np.where(b["hours"] > 30, bad, 1.0),
        ),
        schema,
    )
    _, effort, valid = action.apply(
        encode(schema, [{"hours": 40.0}, {"hours": 20.0}]), np.array([0.5, 0.5])
    )
    assert valid.tolist() == [False, True]
    assert effort.tolist() == [np.inf, 1.0]


@pytest.mark.parametrize(
    "result",
    [
        np.array(["no", "yes"], dtype=object),
        np.array(["False", "True"]),
        np.array([np.nan, 1.0]),
        np.array([None, True], dtype=object),
        np.array([2, 1]),
        pd.array([pd.NA, True], dtype="boolean"),
    ],
    ids=["no-yes", "text", "nan", "none", "two", "na"],
)
@pytest.mark.parametrize("which", ["precondition", "postcondition"])
def test_conditions_must_be_boolean_like(schema, result, which):
    fn = (lambda b: result) if which == "precondition" else (lambda b, a: result)
    action = CompiledAction(Action("work", "hours", **{which: fn}), schema)
    states = encode(schema, [{"hours": 40.0}, {"hours": 20.0}])
    with pytest.raises(TypeError, match=rf"Action 'work': {which} must return bool"):
        action.apply(states, np.array([0.5, 0.5]))


@pytest.mark.parametrize(
    "result",
    [np.array([0, 1]), np.array([0.0, 1.0]), [False, np.True_], np.array([1, 0], "u1")],
)
def test_conditions_may_be_zeros_and_ones(schema, result):
    action = CompiledAction(
        Action("work", "hours", precondition=lambda b: result), schema
    )
    _, _, valid = action.apply(
        encode(schema, [{"hours": 40.0}, {"hours": 20.0}]), np.array([0.5, 0.5])
    )
    assert valid.tolist() == [bool(v) for v in result]


def test_an_exception_in_a_callable_names_it(schema):
    def cost(b, a):
        raise ZeroDivisionError("boom")

    action = CompiledAction(Action("work", "hours", cost=cost), schema)
    with pytest.raises(ZeroDivisionError) as info:
        action.apply(encode(schema, [{}]), np.array([0.5]))
    assert describe_error(info.value) == (
        "Action 'work': cost raised ZeroDivisionError: boom"
    )


def test_non_numeric_cost_is_rejected(schema):
    action = CompiledAction(Action("work", "hours", cost=lambda b, a: "cheap"), schema)
    with pytest.raises(TypeError, match=r"'work'.*cost"):
        action.apply(encode(schema, [{}]), np.array([0.5]))


@pytest.mark.parametrize(
    ("kwargs", "what"),
    [
        ({"cost": lambda b, a: np.ones(5)}, "cost"),
        ({"precondition": lambda b: np.ones((3, 1), bool)}, "precondition"),
        ({"postcondition": lambda b, a: [True]}, "postcondition"),
        ({"effects": {"age": lambda b, a: np.zeros(2)}}, "effect on 'age'"),
    ],
)
def test_wrong_shape_is_rejected(schema, kwargs, what):
    action = CompiledAction(Action("work", "hours", **kwargs), schema)
    with pytest.raises(ValueError, match=rf"'work'.*{what}.*shape"):
        action.apply(encode(schema, [{}, {}, {}]), np.array([0.1, 0.5, 0.9]))


def test_scalar_results_are_broadcast(schema):
    action = CompiledAction(
        Action(
            "work",
            "hours",
            cost=lambda b, a: 2.5,
            precondition=lambda b: True,
            postcondition=lambda b, a: np.bool_(True),
            effects={"age": lambda b, a: 44, "color": lambda b, a: "blue"},
        ),
        schema,
    )
    after, effort, valid = action.apply(encode(schema, [{}, {}, {}]), np.zeros(3))
    np.testing.assert_array_equal(effort, [2.5, 2.5, 2.5])
    assert valid.all()
    np.testing.assert_array_equal(after[:, schema.index["age"]], [44, 44, 44])
    assert labels(schema, "color", after) == ["blue"] * 3
    blocked = CompiledAction(
        Action("work", "hours", precondition=lambda b: False), schema
    )
    _, _, valid = blocked.apply(encode(schema, [{}, {}]), np.zeros(2))
    assert not valid.any()


def test_effects_see_the_direct_change(schema):
    def age_effect(before, after):
        return before["age"] + (after["hours"] - before["hours"])

    def color_effect(before, after):
        # sees the effect on age listed before it
        return np.where(after["age"] > 50, "blue", "green")

    action = CompiledAction(
        Action(
            "work",
            "hours",
            values=(0, 80),
            effects={"age": age_effect, "color": color_effect},
        ),
        schema,
    )
    states = encode(schema, [{"hours": 20.0, "age": 30}, {"hours": 20.0, "age": 40}])
    after, effort, _ = action.apply(states, np.array([0.5, 0.25]))
    np.testing.assert_allclose(after[:, schema.index["hours"]], [40, 20])
    np.testing.assert_allclose(after[:, schema.index["age"]], [50, 40])
    assert labels(schema, "color", after) == ["green", "green"]
    after, _, _ = action.apply(states, np.array([1.0, 1.0]))
    np.testing.assert_allclose(after[:, schema.index["age"]], [90, 100])
    assert labels(schema, "color", after) == ["blue", "blue"]
    # the inputs are left untouched
    np.testing.assert_allclose(states[:, schema.index["hours"]], [20, 20])


def test_effect_with_unknown_category_names_the_action(schema):
    action = CompiledAction(
        Action("work", "hours", effects={"color": lambda b, a: "purple"}), schema
    )
    with pytest.raises(ValueError, match=r"'work'.*effect on 'color'.*'purple'"):
        action.apply(encode(schema, [{}]), np.array([0.5]))


# ---------------------------------------------------------------------- #
# Compile-time errors
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize(
    ("action", "message"),
    [
        (Action("a", "education", values=(0, 1)), "is categorical"),
        (Action("a", "education", values=EDUCATION, step=1), "step only applies"),
        (Action("a", "hours", values=["low", "high"]), "not all numbers"),
        (Action("a", "hours", values=[1, 2], step=1), "step only applies"),
        (Action("a", "hours", values=[1, np.inf]), "finite"),
        (Action("a", "salary"), "'salary' is not a column"),
        (Action("a", "hours", effects={"x": lambda b, a: 0}), "'x' is not a column"),
    ],
)
def test_compile_errors_name_the_action(schema, action, message):
    with pytest.raises(ValueError, match=rf"Action 'a'.*{message}"):
        CompiledAction(action, schema)


def test_step_grid_never_leaves_the_range_or_goes_backwards_by_rounding():
    # 0.1 + 2 * 0.1 is 0.30000000000000004 in floating point
    anywhere = RangeSpace(0.1, 0.3, "any", step=0.1)
    values, _ = anywhere.interpolate(np.array([0.0, 0.5, 1.0]), np.zeros(3))
    assert values.max() <= 0.3
    # a current value within rounding of a grid point
    up = RangeSpace(0.0, 1.0, "increase", step=0.1)
    current = np.array([0.30000000001, 0.95])
    values, valid = up.interpolate(np.zeros(2), current)
    assert valid.all() and np.all(values >= current)
    down = RangeSpace(0.0, 1.0, "decrease", step=0.1)
    current = np.array([0.29999999999, 0.05])
    values, valid = down.interpolate(np.ones(2), current)
    assert valid.all() and np.all(values <= current)


def test_a_fixed_value_outside_the_categories_warns_at_fit(
    make_worked_frame, worked_model
):
    import warnings

    from sklearn_cscf import SequentialCounterfactualExplainer

    X = make_worked_frame([("Developer", "BSc", "US"), ("Clerk", "HS", "UK")])
    odd = Action("become_zzz", "job", values="zzz")
    explainer = SequentialCounterfactualExplainer(
        worked_model, actions=[odd], random_state=0
    )
    with pytest.warns(UserWarning, match="become_zzz") as caught:
        explainer.fit(X)
    message = str(caught[0].message)
    assert "'zzz' is not a category of feature 'job'" in message
    assert "['Clerk', 'Developer']" in message
    # a known category, and a new one declared by a pandas Categorical, do not
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SequentialCounterfactualExplainer(
            worked_model, actions=[Action("dev", "job", values="Developer")]
        ).fit(X)
        declared = X.assign(
            job=pd.Categorical(X["job"], categories=["Clerk", "Developer", "zzz"])
        )
        SequentialCounterfactualExplainer(worked_model, actions=[odd]).fit(declared)

"""make_actions: DiCE's keywords, directions, prices per unit of change, orders,
immutable features, the values a person can choose, and checked labels."""

import pickle

import numpy as np
import pandas as pd
import pytest
from _line import OnDummies
from sklearn.linear_model import LogisticRegression

from sklearn_cscf import (
    Action,
    SequentialCounterfactualExplainer,
    make_actions,
    replay,
)
from sklearn_cscf._make_actions import (
    ChangeCost,
    PerLevelCost,
    PerUnitCost,
    unit_scale,
)

LEVELS = ["none", "high-school", "bachelor", "master"]


@pytest.fixture
def people():
    rng = np.random.default_rng(0)
    n = 200
    return pd.DataFrame(
        {
            "age": rng.integers(20, 65, n),
            "credit_amount": rng.uniform(500, 20_000, n).round(2),
            "duration": rng.uniform(4.0, 72.0, n),
            "education": rng.choice(LEVELS, n),
            "housing": rng.choice(["rent", "own", "free"], n),
        }
    )


def costs_of(action, before, after):
    """An action's cost for one change, as the explainer calls it."""
    frame = {k: np.asarray([v]) for k, v in before.items()}
    moved = {**frame, **{k: np.asarray([v]) for k, v in after.items()}}
    return float(np.asarray(action.cost(frame, moved)).item())


def by_feature(actions):
    return {action.feature: action for action in actions}


def test_all_features_by_default_and_features_to_vary_like_dice(people):
    actions = make_actions(people)
    assert [a.feature for a in actions] == list(people.columns)
    assert all(a.name == f"set_{a.feature}" for a in actions)
    assert all(isinstance(a, Action) for a in actions)
    chosen = make_actions(people, features_to_vary=["housing", "credit_amount"])
    # in the order of the columns, as DiCE keeps the data's order
    assert [a.feature for a in chosen] == ["credit_amount", "housing"]
    assert [a.feature for a in make_actions(people, None)] == list(people.columns)


def test_permitted_range_like_dice(people):
    actions = by_feature(
        make_actions(
            people,
            permitted_range={
                "duration": [6, 48],
                "age": [20, 70],
                "housing": ["own", "rent"],
            },
        )
    )
    assert actions["duration"].values == (6.0, 48.0)
    assert actions["duration"].step is None
    # a column of whole numbers stays whole
    assert actions["age"].values == (20.0, 70.0) and actions["age"].step == 1
    assert actions["housing"].values == ["own", "rent"]
    assert actions["credit_amount"].values is None  # learned in fit


def test_immutable_features(people):
    actions = make_actions(people, immutable=["age", "housing"])
    assert [a.feature for a in actions] == ["credit_amount", "duration", "education"]
    with pytest.raises(ValueError, match=r"\['age'\] are both in features_to_vary"):
        make_actions(people, ["age", "duration"], immutable=["age"])


def test_directions_name_the_action(people):
    actions = by_feature(make_actions(people, directions={"credit_amount": "decrease"}))
    assert actions["credit_amount"].direction == "decrease"
    assert actions["credit_amount"].name == "decrease_credit_amount"
    with pytest.raises(ValueError, match=r"needs an order of the categories"):
        make_actions(people, directions={"housing": "increase"})
    with pytest.raises(ValueError, match=r"must be one of"):
        make_actions(people, directions={"duration": "up"})


def test_prices_per_unit_of_change(people):
    actions = by_feature(make_actions(people, prices={"credit_amount": 0.001}))
    cost = actions["credit_amount"].cost
    assert isinstance(cost, PerUnitCost) and cost.price == 0.001
    assert costs_of(
        actions["credit_amount"], {"credit_amount": 3000.0}, {"credit_amount": 500.0}
    ) == pytest.approx(2.5)
    assert repr(cost) == "PerUnitCost('credit_amount', price=0.001)"
    with pytest.raises(ValueError, match=r"prices\['duration'\] must be a positive"):
        make_actions(people, prices={"duration": 0})
    mine = make_actions(people, prices={"duration": lambda b, a: 7.0})
    assert by_feature(mine)["duration"].cost(None, None) == 7.0


def test_equal_prices_charge_a_unit_of_a_number_as_a_change_of_category(people):
    # issue 37: costs={"Europe": 0.5, "gender": 0.5} charged 2 per point of
    # Europe and 0.5 per change of gender; one price means one thing now
    actions = by_feature(
        make_actions(
            people,
            orders={"education": LEVELS},
            prices={"age": 0.5, "housing": 0.5, "education": 0.5},
        )
    )
    one_year = costs_of(actions["age"], {"age": 40.0}, {"age": 41.0})
    other_home = costs_of(actions["housing"], {"housing": "rent"}, {"housing": "own"})
    one_level = costs_of(
        actions["education"], {"education": "none"}, {"education": "high-school"}
    )
    assert one_year == other_home == one_level == 0.5


def test_costs_is_deprecated_and_keeps_its_meaning_until_it_goes(people):
    with pytest.warns(FutureWarning, match="costs=.*deprecated") as record:
        old = by_feature(
            make_actions(people, costs={"credit_amount": 1000, "housing": 1.5})
        )
    # the warning gives the same declarations in the new form
    message = str(record[0].message)
    assert "prices={'credit_amount': 0.001, 'housing': 1.5}" in message
    new = by_feature(
        make_actions(people, prices={"credit_amount": 0.001, "housing": 1.5})
    )
    for name in ("credit_amount", "housing"):
        before, after = {name: 3000.0}, {name: 500.0}
        if name == "housing":
            before, after = {name: "rent"}, {name: "own"}
        assert costs_of(old[name], before, after) == pytest.approx(
            costs_of(new[name], before, after)
        )
    assert repr(old["credit_amount"].cost) == (
        "PerUnitCost('credit_amount', price=1, per=1000)"
    )
    with pytest.warns(FutureWarning, match=r"'duration': 1 / 7"):
        make_actions(people, costs={"duration": 7})
    with pytest.raises(ValueError, match="give prices= alone"):
        make_actions(people, costs={"age": 2}, prices={"age": 0.5})


def test_a_cost_pickled_before_prices_loads_with_its_meaning():
    old = PerUnitCost.__new__(PerUnitCost)
    old.__setstate__({"feature": "credit_amount", "unit": 1000.0})
    assert repr(old) == "PerUnitCost('credit_amount', price=1, per=1000)"
    assert old({"credit_amount": [0.0]}, {"credit_amount": [2000.0]})[0] == 2.0
    level = PerLevelCost.__new__(PerLevelCost)
    level.__setstate__(
        {"feature": "education", "order": LEVELS, "per_level": 2.0, "_ranks": None}
    )
    assert level.price == 2.0 and "per_level" not in vars(level)
    change = ChangeCost.__new__(ChangeCost)
    change.__setstate__({"feature": "housing", "cost": 1.5})
    assert repr(change) == "ChangeCost('housing', price=1.5)"
    # and as they are now, through pickle
    import pickle

    for cost in (PerUnitCost("a", 0.5), PerLevelCost("e", LEVELS, 2), ChangeCost("h")):
        assert repr(pickle.loads(pickle.dumps(cost))) == repr(cost)


def test_default_costs_are_scale_aware(people):
    scaled = people.assign(duration_in_days=people["duration"] * 30.0)
    actions = by_feature(make_actions(scaled))
    iqr = np.subtract(*np.percentile(people["duration"], [75, 25]))
    # one interquartile range costs 1, in months and in days alike
    months = costs_of(actions["duration"], {"duration": 10.0}, {"duration": 10 + iqr})
    days = costs_of(
        actions["duration_in_days"],
        {"duration_in_days": 300.0},
        {"duration_in_days": 300 + 30 * iqr},
    )
    assert months == pytest.approx(1.0)
    assert days == pytest.approx(1.0)


def test_unit_scale_falls_back_when_the_iqr_is_zero():
    values = np.array([0.0] * 90 + [1000.0, 5000.0] * 5)
    assert np.subtract(*np.percentile(values, [75, 25])) == 0
    assert unit_scale(values) == pytest.approx(1.349 * values.std())
    assert unit_scale([3.0, 3.0, 3.0]) == 1.0
    assert unit_scale([1.0, 2.0, 3.0, 4.0, 5.0]) == pytest.approx(2.0)


def test_orders_go_one_way_and_cost_per_level(people):
    actions = by_feature(
        make_actions(people, orders={"education": LEVELS}, prices={"education": 2})
    )
    study = actions["education"]
    assert study.name == "increase_education"
    assert study.direction == "increase"
    assert study.values == LEVELS
    assert isinstance(study.cost, PerLevelCost)
    # none -> bachelor: two levels at 2 each
    assert costs_of(study, {"education": "none"}, {"education": "bachelor"}) == 4.0
    down = by_feature(
        make_actions(
            people, orders={"education": LEVELS}, directions={"education": "decrease"}
        )
    )["education"]
    assert down.direction == "decrease" and down.name == "decrease_education"
    with pytest.raises(ValueError, match=r"'age' is numeric"):
        make_actions(people, orders={"age": [1, 2]})


def test_an_ordered_categorical_gives_its_order(people):
    ordered = people.assign(
        education=pd.Categorical(people["education"], LEVELS, ordered=True)
    )
    study = by_feature(make_actions(ordered))["education"]
    assert study.direction == "any"
    assert study.cost.order == LEVELS
    assert costs_of(study, {"education": "master"}, {"education": "none"}) == 3.0


def test_unordered_categories_cost_per_change(people):
    move = by_feature(make_actions(people, prices={"housing": 1.5}))["housing"]
    assert isinstance(move.cost, ChangeCost)
    assert costs_of(move, {"housing": "rent"}, {"housing": "own"}) == 1.5
    assert costs_of(move, {"housing": "rent"}, {"housing": "rent"}) == 0.0


def test_typos_name_the_value_and_the_close_matches(people):
    with pytest.raises(ValueError) as info:
        make_actions(people, permitted_range={"education": ["bachelor", "mastr"]})
    message = str(info.value)
    assert "'mastr' is not a value of 'education'" in message
    assert "did you mean 'master'?" in message
    with pytest.raises(ValueError, match=r"did you mean 'master'\? Its values"):
        make_actions(people, permitted_range={"education": ["MASTER"]})
    with pytest.raises(ValueError, match=r"did you mean 'high-school'\?"):
        make_actions(people, orders={"education": ["none", "highschool", "master"]})
    with pytest.raises(ValueError, match=r"'credit' is not a column of X; did you"):
        make_actions(people, prices={"credit": 0.001})
    with pytest.raises(ValueError, match=r"'zzz' is not a column of X\. The columns"):
        make_actions(people, immutable=["zzz"])


def test_permitted_values_with_an_order_keep_the_levels(people):
    study = by_feature(
        make_actions(
            people,
            orders={"education": LEVELS},
            permitted_range={"education": ["bachelor", "master"]},
        )
    )["education"]
    # the whole order stays, so that a move counts its levels ...
    assert study.values == LEVELS
    # ... and only the permitted values can be reached
    state = {"education": np.array(["none", "none"], dtype=object)}
    after = {"education": np.array(["high-school", "master"], dtype=object)}
    assert study.postcondition(state, after).tolist() == [False, True]


def test_actions_run_in_the_explainer_mixed_with_hand_written_ones(people):
    y = (
        (people["credit_amount"] < 8000) & (people["education"].isin(LEVELS[2:]))
    ).astype(int)
    X = people.assign(
        education=pd.Categorical(people["education"], LEVELS, ordered=True)
    )
    model = LogisticRegression(max_iter=2000).fit(pd.get_dummies(X, dtype=float), y)

    dummies = OnDummies(model)

    actions = make_actions(
        X,
        ["credit_amount", "education"],
        directions={"credit_amount": "decrease"},
        prices={"credit_amount": 0.001},
        orders={"education": LEVELS},
    )
    actions.append(Action("move_home", "housing", values="own", cost=lambda b, a: 5.0))
    explainer = SequentialCounterfactualExplainer(
        dummies,
        actions=actions,
        population_size=60,
        n_generations=15,
        random_state=0,
        n_jobs=1,
    ).fit(X)
    rejected = X[dummies.predict(X) == 0].head(4)
    explanations = explainer.explain(rejected)
    ok = explanations[explanations["status"] == "ok"]
    assert len(ok)
    assert replay(explainer, rejected, explanations)["passed"].all()
    # per-level costs reach the output: each education step costs its levels
    steps = ok[ok["action"] == "increase_education"]
    levels = steps["new_value"].map(LEVELS.index) - steps["old_value"].map(LEVELS.index)
    assert (steps["cost"] == levels).all()
    # the explainer pickles by reference: no callable of make_actions is a lambda
    pickle.loads(pickle.dumps(explainer.actions_[:2]))


def test_the_explainer_default_uses_the_same_costs(people):
    y = (people["credit_amount"] < 8000).astype(int)
    numeric = people[["age", "credit_amount", "duration"]]
    model = LogisticRegression(max_iter=1000).fit(numeric, y)
    explainer = SequentialCounterfactualExplainer(
        model, immutable_features=["age"]
    ).fit(numeric)
    expected = make_actions(numeric, immutable=["age"])
    assert [repr(a.cost) for a in explainer.actions_] == [
        repr(a.cost) for a in expected
    ]
    assert [a.name for a in explainer.actions_] == ["set_credit_amount", "set_duration"]


def test_polars_and_bad_inputs(people):
    pl = pytest.importorskip("polars")
    from_polars = make_actions(pl.from_pandas(people), prices={"credit_amount": 0.01})
    from_pandas = make_actions(people, prices={"credit_amount": 0.01})
    assert [repr(a) for a in from_polars] == [repr(a) for a in from_pandas]
    assert [repr(a.cost) for a in from_polars] == [repr(a.cost) for a in from_pandas]
    with pytest.raises(TypeError, match="needs a DataFrame"):
        make_actions(people.to_numpy())
    with pytest.raises(TypeError, match="prices must be a dict"):
        make_actions(people, prices=[1000])
    with pytest.raises(ValueError, match=r"give \[low, high\], two numbers"):
        make_actions(people, permitted_range={"duration": [1, 2, 3]})
    with pytest.raises(ValueError, match=r"give the values a person can choose"):
        make_actions(people, permitted_range={"housing": "own"})
    with pytest.raises(ValueError, match="nothing to do"):
        make_actions(people, immutable=list(people.columns))


# ---------------------------------------------------------------------- #
# issue 23: nothing declared is dropped or bent without a word
# ---------------------------------------------------------------------- #
def _people():
    return pd.DataFrame(
        {
            "age": [30, 40, 50, 45],
            "education": ["HS", "BSc", "MSc", "HS"],
            "hours": [20.5, 40.0, 35.0, 38.0],
        }
    )


def test_a_whole_number_range_is_rounded_inward():
    (action,) = make_actions(_people(), ["age"], permitted_range={"age": [40.5, 45.5]})
    assert action.values == (41.0, 45.0)
    assert action.step == 1
    grid = np.arange(action.values[0], action.values[1] + 1, action.step)
    assert np.all(grid == np.round(grid))  # never 41.5


def test_a_whole_number_range_without_a_whole_number_is_an_error():
    with pytest.raises(ValueError, match=r"permitted_range\['age'\].*no whole number"):
        make_actions(_people(), permitted_range={"age": [40.2, 40.7]})


@pytest.mark.parametrize(
    "declared",
    [
        {"permitted_range": {"age": [20, 60]}},
        {"directions": {"age": "increase"}},
        {"prices": {"age": 5}},
    ],
)
def test_a_declaration_for_an_immutable_feature_is_an_error(declared):
    with pytest.raises(ValueError, match=r"\['age'\] is given, but 'age' is immutable"):
        make_actions(_people(), immutable=["age"], **declared)


def test_a_declaration_for_a_feature_not_varied_warns():
    with pytest.warns(UserWarning, match=r"prices\['age'\] is ignored"):
        actions = make_actions(_people(), ["hours"], prices={"age": 5})
    assert [a.feature for a in actions] == ["hours"]


def test_a_permitted_category_outside_the_order_is_an_error():
    with pytest.raises(ValueError, match=r"'MSc' is not in orders\['education'\]"):
        make_actions(
            _people(),
            permitted_range={"education": ["BSc", "MSc"]},
            orders={"education": ["HS", "BSc"]},
        )


def test_features_to_vary_that_is_not_a_list_says_so():
    with pytest.raises(TypeError, match="features_to_vary must be a list.*int 5"):
        make_actions(_people(), 5)


def test_duplicate_column_names_are_named():
    X = pd.DataFrame([[1, 2, 3], [4, 5, 6]], columns=["a", "b", "a"])
    with pytest.raises(ValueError, match=r"duplicate column names \['a'\]"):
        make_actions(X)


@pytest.mark.parametrize(
    "column, words",
    [
        (pd.arrays.IntervalArray.from_breaks([0, 1, 2, 3]), "holds intervals"),
        (pd.Series([pd.Interval(0, 1), pd.Interval(1, 2), None], dtype=object),
         "holds intervals"),
        ([[1, 2], [3], [4]], "holds a list in a cell"),
        ([{"a": 1}, {"b": 2}, {"c": 3}], "holds a dict in a cell"),
    ],
)  # fmt: skip
def test_interval_and_list_columns_are_named_with_what_to_give(column, words):
    X = pd.DataFrame({"odd": column, "n": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match=f"Column 'odd' {words}"):
        make_actions(X)
    model = LogisticRegression()
    with pytest.raises(ValueError, match=f"Column 'odd' {words}"):
        SequentialCounterfactualExplainer(model).fit(X, [0, 1, 0])


def test_action_names_have_no_spaces():
    X = pd.DataFrame(
        {"worst area": [1.0, 2.0], "mean  radius": [3.0, 4.0], "set_b": [1, 2]}
    )
    actions = make_actions(X, directions={"worst area": "decrease"})
    assert [a.name for a in actions] == [
        "decrease_worst_area",
        "set_mean_radius",
        "set_set_b",
    ]
    assert [a.feature for a in actions] == ["worst area", "mean  radius", "set_b"]
    # a name that would clash with another action's keeps its spaces
    clash = pd.DataFrame({"a b": [1.0, 2.0], "a_b": [1.0, 3.0]})
    assert [a.name for a in make_actions(clash)] == ["set_a b", "set_a_b"]

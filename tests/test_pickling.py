"""Tests of pickling actions, feature graphs and fitted explainers
(``_pickling.py``): every kind of user callable survives pickle, joblib and
copies; the built-in actions need no cloudpickle; a restored explainer explains
exactly as the original; an unpicklable callable gets an error naming it.
"""

import copy
import functools
import io
import pickle
import subprocess
import sys
import threading

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_cscf import Action, FeatureGraph, SequentialCounterfactualExplainer
from sklearn_cscf._compiled_actions import CompiledAction
from sklearn_cscf._compiled_graph import CompiledGraph
from sklearn_cscf._schema import FeatureSchema
from sklearn_cscf.datasets import (
    adult_actions,
    adult_feature_graph,
    credit_actions,
    credit_feature_graph,
    german_actions,
    load_adult,
    make_credit_applicants,
)

BUDGET = {"population_size": 30, "n_generations": 5, "random_state": 0}
BEFORE = {"x": np.array([1.0, 4.0, 7.0]), "y": np.array([0.0, 3.0, 9.0])}
AFTER = {"x": np.array([2.0, 8.0, 9.0]), "y": np.array([6.0, 12.0, 30.0])}


# ---------------------------------------------------------------------- #
# every kind of callable: cost, effect, precondition, postcondition, tau
# ---------------------------------------------------------------------- #
def module_cost(b, a):
    return np.abs(a["x"] - b["x"]) / 2


def module_effect(b, a):
    return b["y"] + a["x"]


def module_pre(b):
    return b["x"] < 5


def module_post(b, a):
    return a["y"] < 20


def module_tau(x):
    return np.clip(x["y"] / 10, 0, 1)


def weighted_cost(b, a, weight):
    return weight * np.abs(a["x"] - b["x"])


class Linear:
    """A callable object of an importable class: ``weight * x_after + y``."""

    def __init__(self, weight):
        self.weight = weight

    def __call__(self, before, after):
        return self.weight * after["x"] + before["y"]


class Ease:
    """A tau object: ``clip(x[feature] / scale, 0, 1)``."""

    def __init__(self, feature, scale):
        self.feature = feature
        self.scale = scale

    def __call__(self, x):
        return np.clip(x[self.feature] / self.scale, 0, 1)


class Threshold:
    """A condition object: ``state[feature] < limit``."""

    def __init__(self, feature, limit):
        self.feature = feature
        self.limit = limit

    def __call__(self, before, after=None):
        state = before if after is None else after
        return state[self.feature] < self.limit


def closures(per, limit):
    """Functions closing over ``per`` and ``limit``."""

    def cost(b, a):
        return np.abs(a["x"] - b["x"]) / per

    def effect(b, a):
        return b["y"] + per * a["x"]

    def pre(b):
        return b["x"] < limit

    def post(b, a):
        return a["y"] < 4 * limit

    def tau(x):
        return np.where(x["y"] > limit, 0.5, 1.0)

    return {"cost": cost, "effect": effect, "pre": pre, "post": post, "tau": tau}


def nested():
    """Nested functions closing over nothing."""

    def cost(b, a):
        return (a["x"] - b["x"]) ** 2

    def effect(b, a):
        return b["y"] * 2

    def pre(b):
        return b["x"] > 2

    def post(b, a):
        return a["x"] <= 8

    def tau(x):
        return 1 / (1 + x["y"])

    return {"cost": cost, "effect": effect, "pre": pre, "post": post, "tau": tau}


def make_callables(kind):
    if kind == "lambda":
        return {
            "cost": lambda b, a: np.abs(a["x"] - b["x"]) * 1.5,
            "effect": lambda b, a: b["y"] - a["x"],
            "pre": lambda b: b["y"] != 3,
            "post": lambda b, a: a["y"] > 7,
            "tau": lambda x: np.where(x["x"] > 3, 0.25, 1.0),
        }
    if kind == "closure":
        return closures(per=4.0, limit=5.0)
    if kind == "nested":
        return nested()
    if kind == "partial":
        return {
            "cost": functools.partial(weighted_cost, weight=3.0),
            "effect": functools.partial(lambda b, a, k: a["x"] * k, k=10),
            "pre": functools.partial(lambda b, limit: b["x"] < limit, limit=6),
            "post": functools.partial(module_post),
            "tau": functools.partial(lambda x, top: np.minimum(x["y"], top), top=1),
        }
    if kind == "module":
        return {
            "cost": module_cost,
            "effect": module_effect,
            "pre": module_pre,
            "post": module_post,
            "tau": module_tau,
        }
    assert kind == "object"
    return {
        "cost": Linear(0.5),
        "effect": Linear(2.0),
        "pre": Threshold("x", 5),
        "post": Threshold("y", 20),
        "tau": Ease("y", 5),
    }


KINDS = ["lambda", "closure", "nested", "partial", "module", "object"]


def make_action(kind):
    fns = make_callables(kind)
    return Action(
        "act",
        "x",
        values=(0, 10),
        cost=fns["cost"],
        effects={"y": fns["effect"]},
        precondition=fns["pre"],
        postcondition=fns["post"],
    )


def make_graph(kind):
    return FeatureGraph([("y", "x", make_callables(kind)["tau"])])


def outputs(action, graph):
    """What the callables compute on the sample states."""
    return [
        np.asarray(action.cost(BEFORE, AFTER), dtype=float),
        np.asarray(action.effects["y"](BEFORE, AFTER), dtype=float),
        np.asarray(action.precondition(BEFORE), dtype=bool),
        np.asarray(action.postcondition(BEFORE, AFTER), dtype=bool),
        graph.feature_discount("x", BEFORE),
    ]


def joblib_round_trip(obj):
    buffer = io.BytesIO()
    joblib.dump(obj, buffer)
    buffer.seek(0)
    return joblib.load(buffer)


ROUND_TRIPS = {
    **{
        f"pickle-{protocol}": functools.partial(
            lambda obj, protocol: pickle.loads(pickle.dumps(obj, protocol=protocol)),
            protocol=protocol,
        )
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1)
    },
    "joblib": joblib_round_trip,
    "deepcopy": copy.deepcopy,
    "copy": copy.copy,
}


# ---------------------------------------------------------------------- #
# actions and graphs
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize("round_trip", list(ROUND_TRIPS), ids=str)
@pytest.mark.parametrize("kind", KINDS)
def test_actions_and_graphs_compute_the_same_after_a_round_trip(kind, round_trip):
    action, graph = make_action(kind), make_graph(kind)
    expected = outputs(action, graph)
    restored_action = ROUND_TRIPS[round_trip](action)
    restored_graph = ROUND_TRIPS[round_trip](graph)
    assert restored_action is not action and restored_graph is not graph
    assert isinstance(restored_action, Action)
    assert isinstance(restored_graph, FeatureGraph)
    assert repr(restored_action) == repr(action)
    assert repr(restored_graph) == repr(graph)
    assert restored_action.effects.keys() == action.effects.keys()
    for got, want in zip(outputs(restored_action, restored_graph), expected):
        np.testing.assert_array_equal(got, want)
    # copies never pickle: a copy shares the callables, a deep copy the
    # functions (and copies partials and objects), as Python's copies do
    shared = round_trip == "copy" or (
        round_trip == "deepcopy" and kind not in ("partial", "object")
    )
    if shared:
        assert restored_action.cost is action.cost
        assert restored_action.effects["y"] is action.effects["y"]
        assert restored_graph.edges[0][2] is graph.edges[0][2]


@pytest.mark.parametrize("round_trip", ["pickle-0", "pickle-5", "joblib"])
def test_module_level_functions_are_stored_by_reference(round_trip):
    action, graph = make_action("module"), make_graph("module")
    assert b"cloudpickle" not in pickle.dumps((action, graph))
    restored_action, restored_graph = ROUND_TRIPS[round_trip]((action, graph))
    assert restored_action.cost is module_cost
    assert restored_action.effects["y"] is module_effect
    assert restored_action.precondition is module_pre
    assert restored_action.postcondition is module_post
    assert restored_graph.edges[0][2] is module_tau


@pytest.mark.parametrize("kind", ["lambda", "closure", "nested"])
def test_local_functions_are_stored_by_value(kind):
    action = make_action(kind)
    payload = pickle.dumps(action)
    assert b"cloudpickle" in payload
    restored = pickle.loads(payload)
    assert restored.cost is not action.cost
    assert restored.cost.__code__.co_code == action.cost.__code__.co_code


def test_functions_of_main_are_stored_by_value(monkeypatch):
    # a function defined in a notebook or script lives in __main__: the
    # standard pickler stores it by name, which only loads in that session
    def notebook_cost(b, a):
        return 7 * np.abs(a["x"] - b["x"])

    notebook_cost.__module__ = "__main__"
    notebook_cost.__qualname__ = "notebook_cost"
    main = sys.modules["__main__"]
    monkeypatch.setattr(main, "notebook_cost", notebook_cost, raising=False)
    assert pickle.loads(pickle.dumps(notebook_cost)) is notebook_cost
    payload = pickle.dumps(Action("notebook", "x", cost=notebook_cost))
    monkeypatch.delattr(main, "notebook_cost")  # a new session
    restored = pickle.loads(payload)
    assert restored.cost(BEFORE, AFTER).tolist() == [7.0, 28.0, 14.0]


def test_copies_keep_the_callables_and_pickle_nothing():
    lock = threading.Lock()
    action = Action("locked", "x", cost=lambda b, a: float(lock.locked()))
    graph = FeatureGraph([("y", "x", lambda x: 0.5 + 0 * lock.locked())])
    shallow, deep = copy.copy(action), copy.deepcopy(action)
    assert shallow is not action and deep is not action
    assert shallow.cost is action.cost and deep.cost is action.cost
    assert copy.deepcopy(graph).edges[0][2] is graph.edges[0][2]
    assert copy.copy(graph).edges == graph.edges


# ---------------------------------------------------------------------- #
# unpicklable callables
# ---------------------------------------------------------------------- #
def locked_callables():
    lock = threading.Lock()

    def guarded_cost(b, a):
        with lock:
            return np.abs(a["x"] - b["x"])

    def guarded_tau(x):
        with lock:
            return np.ones(len(x["x"]))

    return guarded_cost, guarded_tau


@pytest.mark.parametrize("dump", [pickle.dumps, joblib_round_trip])
def test_an_unpicklable_callable_is_named(dump):
    guarded_cost, guarded_tau = locked_callables()
    action = Action("save_money", "x", cost=guarded_cost)
    with pytest.raises(
        pickle.PicklingError,
        match=r"Action 'save_money': cost <function .*guarded_cost .* cannot be "
        r"pickled, not even by value with cloudpickle: .*_thread.lock",
    ):
        dump(action)
    effect = Action("save_money", "x", effects={"y": guarded_cost})
    with pytest.raises(
        pickle.PicklingError, match=r"Action 'save_money': effect on 'y' <function"
    ):
        dump(effect)
    graph = FeatureGraph([("y", "x", guarded_tau)])
    with pytest.raises(
        pickle.PicklingError, match=r"Edge 'y' -> 'x': tau <function .*guarded_tau"
    ):
        dump(graph)


# ---------------------------------------------------------------------- #
# the built-in actions and graphs: the standard pickler suffices
# ---------------------------------------------------------------------- #
BUILT_IN = {
    "adult_actions": adult_actions,
    "adult_actions_continuous": functools.partial(adult_actions, continuous=True),
    "german_actions": german_actions,
    "german_actions_continuous": functools.partial(german_actions, continuous=True),
    "credit_actions": credit_actions,
}


def action_callables(action):
    return [
        fn
        for fn in (
            action.cost,
            action.precondition,
            action.postcondition,
            *(action.effects or {}).values(),
        )
        if fn is not None
    ]


@pytest.mark.parametrize("make", list(BUILT_IN.values()), ids=list(BUILT_IN))
def test_built_in_actions_pickle_with_the_standard_pickler(make):
    actions = make()
    for action in actions:
        for fn in action_callables(action):
            # the callable itself, without the Action's help
            assert type(pickle.loads(pickle.dumps(fn))) is type(fn), (action, fn)
            assert "<locals>" not in repr(fn) and "lambda" not in repr(fn)
    payload = pickle.dumps(actions)
    assert b"cloudpickle" not in payload  # no code stored by value
    restored = pickle.loads(payload)
    assert [repr(a) for a in restored] == [repr(a) for a in actions]
    for original, copy_ in zip(actions, restored):
        assert [repr(fn) for fn in action_callables(copy_)] == [
            repr(fn) for fn in action_callables(original)
        ]


@pytest.mark.parametrize("make", [adult_feature_graph, credit_feature_graph])
def test_built_in_graphs_pickle_with_the_standard_pickler(make):
    graph = make()
    payload = pickle.dumps(graph)
    assert b"cloudpickle" not in payload
    restored = pickle.loads(payload)
    assert [tau for *_, tau in restored.edges] == [tau for *_, tau in graph.edges]


def test_built_in_callables_read_well_and_compute_the_same_after_pickling():
    adult = {a.name: a for a in adult_actions()}
    assert repr(adult["wait_years"].cost) == "AbsoluteChange('age', per=1)"
    assert (
        repr(adult["change_working_hours"].cost)
        == "AbsoluteChange('hours_per_week', per=10)"
    )
    assert repr(adult["enlist"].cost) == "FixedEffort(5)"
    assert repr(adult["enlist"].precondition) == (
        "Compare('occupation', '!=', 'Armed-Forces')"
    )
    assert repr(adult["add_education"].postcondition) == "Compare('age', '<', 120)"
    german = {a.name: a for a in german_actions()}
    assert repr(german["adjust_loan_period"].postcondition) == (
        "Between('loan_duration', 1, 120)"
    )
    assert repr(german["change_loan_period"].cost) == (
        "RelativeChangeSquared('loan_duration')"
    )
    credit = {a.name: a for a in credit_actions()}
    assert repr(credit["save_money"].cost) == "Increase('savings', per=10000)"
    assert repr(credit["pay_off_debt"].cost) == "Decrease('debt', per=20000)"

    before = {
        "age": np.array([30.0, 119.0]),
        "education_num": np.array([9.0, 13.0]),
        "occupation": np.array(["Sales", "Armed-Forces"]),
        "loan_duration": np.array([12.0, 100.0]),
        "credit_amount": np.array([2000.0, 500.0]),
        "savings": np.array([1000.0, 0.0]),
        "debt": np.array([5000.0, 100.0]),
    }
    after = {
        **before,
        "age": np.array([34.0, 121.0]),
        "education_num": np.array([11.0, 14.0]),
        "loan_duration": np.array([24.0, 130.0]),
        "credit_amount": np.array([4000.0, 1500.0]),
        "savings": np.array([21000.0, 500.0]),
        "debt": np.array([0.0, 50.0]),
    }
    checks = [
        (adult["wait_years"].cost, [4.0, 2.0]),
        (adult["add_education"].cost, [2.0, 1.0]),
        (adult["add_education"].effects["age"], [34.0, 121.0]),
        (adult["add_education"].postcondition, [True, False]),
        (adult["enlist"].cost, 5.0),
        (german["change_loan_period"].cost, [1.0, 0.09]),
        (german["adjust_loan_period"].effects["loan_duration"], [24.0, 300.0]),
        (german["adjust_loan_period"].postcondition, [True, False]),
        (credit["save_money"].cost, [2.0, 0.05]),
        (credit["pay_off_debt"].cost, [0.25, 0.0025]),
    ]
    for fn, expected in checks:
        restored = pickle.loads(pickle.dumps(fn))
        np.testing.assert_allclose(fn(before, after), expected)
        np.testing.assert_allclose(restored(before, after), expected)
    label = adult["add_education"].effects["education"]
    for fn in (label, pickle.loads(pickle.dumps(label))):
        assert fn(before, after).tolist() == ["Assoc-voc", "Masters"]
    precondition = adult["enlist"].precondition
    restored = pickle.loads(pickle.dumps(precondition))
    assert restored(before).tolist() == precondition(before).tolist() == [True, False]


# ---------------------------------------------------------------------- #
# compiled actions and graphs, fitted and cloned explainers
# ---------------------------------------------------------------------- #
def test_compiled_actions_and_graph_apply_the_same_after_pickling(
    credit_data, credit_actions, credit_graph
):
    X, _ = credit_data
    schema = FeatureSchema(X)
    actions = [CompiledAction(action, schema) for action in credit_actions]
    graph = CompiledGraph(credit_graph, schema, actions)
    restored_actions, restored_graph = pickle.loads(pickle.dumps((actions, graph)))
    before = schema.encode(X.head(40))
    keys = np.linspace(0.0, 1.0, 40)
    for original, restored in zip(actions, restored_actions, strict=True):
        assert isinstance(restored, CompiledAction)
        for got, want in zip(
            restored.apply(before, keys), original.apply(before, keys), strict=True
        ):
            np.testing.assert_array_equal(got, want)
    discounts = graph.discounts(before)
    assert discounts.min() < 1  # the graph discounts something here
    np.testing.assert_array_equal(restored_graph.discounts(before), discounts)


def dump_and_load(explainer, how):
    if how == "pickle":
        return pickle.loads(pickle.dumps(explainer))
    return joblib_round_trip(explainer)


@pytest.fixture(scope="module")
def credit_explainer(credit_model, credit_data, credit_actions, credit_graph):
    """A fitted explainer on the credit fixtures (lambdas, closures, a graph)."""
    X, _ = credit_data
    return SequentialCounterfactualExplainer(
        credit_model, actions=credit_actions, feature_graph=credit_graph, **BUDGET
    ).fit(X)


@pytest.fixture(scope="module")
def credit_explanations(credit_explainer, credit_rejected):
    return credit_explainer.explain(credit_rejected, return_states=True)


@pytest.mark.parametrize("how", ["pickle", "joblib"])
def test_fitted_explainer_explains_the_same_after_loading(
    credit_explainer, credit_explanations, credit_rejected, how
):
    frame, states = credit_explanations
    assert (frame["status"] == "ok").any()
    restored = dump_and_load(credit_explainer, how)
    # the model is saved with the explainer
    np.testing.assert_array_equal(
        restored.estimator_.predict_proba(credit_rejected),
        credit_explainer.estimator_.predict_proba(credit_rejected),
    )
    got_frame, got_states = restored.explain(credit_rejected, return_states=True)
    pd.testing.assert_frame_equal(got_frame, frame)
    pd.testing.assert_frame_equal(got_states, states)


def one_hot_pipeline():
    return make_pipeline(
        make_column_transformer(
            (
                OneHotEncoder(handle_unknown="ignore"),
                make_column_selector(dtype_include="category"),
            ),
            remainder=StandardScaler(),
        ),
        LogisticRegression(max_iter=300),
    )


def test_fitted_explainer_on_the_built_in_adult_actions():
    adult = load_adult()
    X = adult.data.iloc[:2000]
    model = one_hot_pipeline().fit(X, adult.target.iloc[:2000])
    rejected = X[model.predict(X) == model.classes_[0]].head(3)
    explainer = SequentialCounterfactualExplainer(
        model, actions=adult_actions(), feature_graph=adult_feature_graph(), **BUDGET
    ).fit(X)
    frame = explainer.explain(rejected)
    assert (frame["status"] == "ok").all()
    payload = pickle.dumps(explainer)
    assert b"cloudpickle" not in payload  # the built-in actions embed no code
    pd.testing.assert_frame_equal(pickle.loads(payload).explain(rejected), frame)
    pd.testing.assert_frame_equal(joblib_round_trip(explainer).explain(rejected), frame)


def test_a_saved_explainer_loads_in_a_new_process(tmp_path):
    applicants = make_credit_applicants(400, random_state=0)
    X = applicants.data
    model = one_hot_pipeline().fit(X, applicants.target)
    rejected = X[model.predict(X) == 0].head(3)
    effort = 4.0
    actions = [
        *credit_actions(),  # by reference
        Action(  # by value: lambdas of this test, closing over ``effort``
            "buy_home",
            "housing",
            values="own",
            cost=lambda b, a: effort,
            precondition=lambda b: b["housing"] != "own",
        ),
    ]
    graph = credit_feature_graph().add_edge(
        "savings", "housing", lambda x: np.where(x["savings"] > 20_000, 0.5, 1.0)
    )
    explainer = SequentialCounterfactualExplainer(
        model, actions=actions, feature_graph=graph, **BUDGET
    ).fit(X)
    frame = explainer.explain(rejected)
    joblib.dump((explainer, rejected, frame), tmp_path / "saved.joblib")
    # a new interpreter, where this test module cannot be imported
    script = (
        "import joblib, pandas as pd\n"
        "explainer, rejected, frame = joblib.load('saved.joblib')\n"
        "pd.testing.assert_frame_equal(explainer.explain(rejected), frame)\n"
        "print(explainer.actions[-1].cost(None, None))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "4.0"


def test_clone_of_an_explainer_with_lambda_actions(
    credit_explainer, credit_explanations, credit_data, credit_rejected
):
    cloned = clone(credit_explainer)
    assert not hasattr(cloned, "actions_")
    assert cloned.actions is not credit_explainer.actions
    for copied, original in zip(cloned.actions, credit_explainer.actions, strict=True):
        assert copied is not original
        assert copied.cost is original.cost  # a lambda, not pickled
    X, y = credit_data  # clone clones the model too: fit it again
    frame, _ = credit_explanations
    cloned.fit(X, y)
    # the clone pickles in turn
    restored = pickle.loads(pickle.dumps(cloned))
    pd.testing.assert_frame_equal(restored.explain(credit_rejected), frame)


def test_clone_needs_no_pickling_and_dump_names_the_culprit(credit_model):
    guarded_cost, guarded_tau = locked_callables()
    explainer = SequentialCounterfactualExplainer(
        credit_model,
        actions=[Action("locked", "income", cost=guarded_cost)],
        feature_graph=FeatureGraph([("debt", "income", guarded_tau)]),
    )
    cloned = clone(explainer)
    assert cloned.actions[0].cost is guarded_cost
    assert cloned.feature_graph.edges[0][2] is guarded_tau
    with pytest.raises(pickle.PicklingError, match="Action 'locked': cost"):
        pickle.dumps(explainer)

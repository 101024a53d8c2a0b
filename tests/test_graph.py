"""Tests of ``FeatureGraph`` (Eq. 1-2), its compiled form and the paper's
worked example (Fig. 2), simulated through ``_simulation.simulate``."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_cscf import Action, FeatureGraph
from sklearn_cscf._compiled_actions import CompiledAction
from sklearn_cscf._compiled_graph import CompiledGraph
from sklearn_cscf._engine._simulation import simulate
from sklearn_cscf._schema import FeatureSchema


def const(value):
    return lambda x: value


# ---------------------------------------------------------------------- #
# Construction
# ---------------------------------------------------------------------- #
def test_empty_graph():
    graph = FeatureGraph()
    assert len(graph) == 0
    assert graph.edges == []
    assert repr(graph) == "FeatureGraph(edges=[])"


def test_add_edge_chains_and_keeps_order():
    graph = FeatureGraph()
    tau_ab, tau_cb = const(0.5), const(0.2)
    assert graph.add_edge("a", "b", tau_ab) is graph
    out = graph.add_edge("c", "b", tau_cb).add_edge("b", "a", const(1.0))
    assert out is graph
    assert len(graph) == 3
    assert [(s, t) for s, t, _ in graph.edges] == [("a", "b"), ("c", "b"), ("b", "a")]
    assert graph.edges[0][2] is tau_ab
    assert graph.incoming("b") == [("a", tau_ab), ("c", tau_cb)]
    assert graph.incoming("c") == []
    assert repr(graph) == ("FeatureGraph(edges=[('a', 'b'), ('c', 'b'), ('b', 'a')])")


def test_constructor_takes_edges():
    tau = const(0.3)
    graph = FeatureGraph([("a", "b", tau), ("c", "b", tau)])
    assert len(graph) == 2
    assert [(s, t) for s, t, _ in graph.edges] == [("a", "b"), ("c", "b")]


@pytest.mark.parametrize("edge", [("a", "b"), ("a", "b", const(1), 4), 7])
def test_constructor_rejects_malformed_edges(edge):
    with pytest.raises(ValueError, match="triple"):
        FeatureGraph([edge])


def test_duplicate_edge_is_rejected():
    graph = FeatureGraph().add_edge("a", "b", const(0.5))
    with pytest.raises(ValueError, match=r"'a' -> 'b' is already in the graph"):
        graph.add_edge("a", "b", const(0.1))
    with pytest.raises(ValueError, match="already"):
        FeatureGraph([("a", "b", const(0.5)), ("a", "b", const(0.5))])
    assert len(graph) == 1


def test_self_loop_is_rejected():
    with pytest.raises(ValueError, match=r"'a' -> 'a' is a self-loop"):
        FeatureGraph().add_edge("a", "a", const(0.5))


@pytest.mark.parametrize("tau", [0.5, None, "x"])
def test_non_callable_tau_is_rejected(tau):
    with pytest.raises(TypeError, match=r"tau of edge 'a' -> 'b' must be callable"):
        FeatureGraph().add_edge("a", "b", tau)


# ---------------------------------------------------------------------- #
# Eq. 1 and Eq. 2 on hand-made graphs
# ---------------------------------------------------------------------- #
def fig2_graph():
    """The graph of the paper's worked example (Fig. 2)."""
    return (
        FeatureGraph()
        .add_edge(
            "location", "education", lambda x: np.where(x["location"] == "US", 1.0, 0.5)
        )
        .add_edge(
            "location", "job", lambda x: np.where(x["location"] == "US", 0.5, 1.0)
        )
        .add_edge(
            "education", "job", lambda x: np.where(x["education"] == "BSc", 0.5, 1.0)
        )
    )


def test_graph_one_fig2_hand_computed():
    graph = fig2_graph()
    state = {
        "job": np.array(["Seller", "Seller", "Seller", "Seller"]),
        "education": np.array(["HS", "BSc", "HS", "BSc"]),
        "location": np.array(["Germany", "Germany", "US", "US"]),
    }
    # job: mean(tau_location, tau_education)
    np.testing.assert_allclose(
        graph.feature_discount("job", state), [1.0, 0.75, 0.75, 0.5]
    )
    # education: only tau_location
    np.testing.assert_allclose(
        graph.feature_discount("education", state), [0.5, 0.5, 1.0, 1.0]
    )
    assert graph.feature_discount("location", state) is None
    np.testing.assert_allclose(graph.discount(["job"], state), [1.0, 0.75, 0.75, 0.5])
    np.testing.assert_allclose(graph.discount(["location"], state), [1, 1, 1, 1])
    # an action changing job and education: mean of both feature discounts;
    # location (no incoming edge) does not count
    np.testing.assert_allclose(
        graph.discount(["job", "education", "location"], state),
        [0.75, 0.625, 0.875, 0.75],
    )


def numeric_graph():
    return (
        FeatureGraph()
        .add_edge("a", "c", lambda x: x["a"] / 10)
        .add_edge("b", "c", lambda x: 1 - x["b"] / 10)
        .add_edge("c", "d", const(0.2))  # scalar: broadcast to every row
    )


def test_graph_two_numeric_hand_computed():
    graph = numeric_graph()
    state = {
        "a": np.array([2.0, 5.0, 10.0]),
        "b": np.array([4.0, 10.0, 0.0]),
        "c": np.array([0.0, 0.0, 0.0]),
        "d": np.array([0.0, 0.0, 0.0]),
    }
    # c: (a/10 + 1 - b/10) / 2
    np.testing.assert_allclose(graph.feature_discount("c", state), [0.4, 0.25, 1.0])
    np.testing.assert_allclose(graph.feature_discount("d", state), [0.2, 0.2, 0.2])
    # Eq. 2: mean over affected features with incoming edges
    np.testing.assert_allclose(graph.discount(["c", "d"], state), [0.3, 0.225, 0.6])
    np.testing.assert_allclose(graph.discount(["d", "c"], state), [0.3, 0.225, 0.6])
    # a has no incoming edge: excluded from the mean (not counted as 1)
    np.testing.assert_allclose(graph.discount(["a", "c"], state), [0.4, 0.25, 1.0])
    np.testing.assert_allclose(graph.discount(["a", "b"], state), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(graph.discount([], state), [1.0, 1.0, 1.0])


STUDY = Action(
    "study",
    "education",
    values=[10.0, 12.0, 16.0],
    effects={"age": lambda b, a: b["age"] + 2 * (a["education"] - b["education"])},
)
WORK = Action("work", "hours", values=(0, 80))
SAVE = Action("save", "wealth", values=(0, 1))
MOVE = Action("move", "city", values=["A", "B"])


def graph_three():
    """A graph where 'study' affects education directly and age as an effect."""
    return (
        FeatureGraph()
        .add_edge("hours", "education", lambda x: np.where(x["hours"] < 20, 0.5, 1.0))
        .add_edge("wealth", "education", const(0.8))
        .add_edge("health", "age", lambda x: x["health"])
        .add_edge("education", "wealth", lambda x: x["education"] / 20)
    )


def test_graph_three_action_with_effect_hand_computed():
    graph = graph_three()
    state = {
        "hours": np.array([10.0, 30.0]),
        "wealth": np.array([0.1, 0.9]),
        "health": np.array([0.3, 1.0]),
        "education": np.array([10.0, 16.0]),
        "age": np.array([20.0, 40.0]),
        "city": np.array(["A", "B"]),
    }
    assert STUDY.affected_features == ["education", "age"]
    # education: (tau_hours + 0.8) / 2; age: health
    np.testing.assert_allclose(graph.feature_discount("education", state), [0.65, 0.9])
    np.testing.assert_allclose(graph.feature_discount("age", state), [0.3, 1.0])
    np.testing.assert_allclose(
        graph.discount(STUDY.affected_features, state), [0.475, 0.95]
    )
    np.testing.assert_allclose(graph.discount(WORK.affected_features, state), [1, 1])
    np.testing.assert_allclose(
        graph.discount(SAVE.affected_features, state), [0.5, 0.8]
    )


@pytest.mark.parametrize("bad", [1.5, -0.25, np.nan])
def test_tau_outside_unit_interval_names_the_edge(bad):
    graph = FeatureGraph().add_edge("a", "b", lambda x: np.array([0.5, bad]))
    state = {"a": np.array([1.0, 2.0]), "b": np.array([0.0, 0.0])}
    with pytest.raises(ValueError, match=r"tau of edge 'a' -> 'b'.*\[0, 1\]"):
        graph.feature_discount("b", state)
    with pytest.raises(ValueError, match=r"'a' -> 'b'"):
        graph.discount(["b"], state)


def test_tau_wrong_shape_names_the_edge():
    graph = FeatureGraph().add_edge("a", "b", lambda x: np.array([0.5, 0.5, 0.5]))
    state = {"a": np.array([1.0, 2.0]), "b": np.array([0.0, 0.0])}
    with pytest.raises(ValueError, match=r"'a' -> 'b'.*shape"):
        graph.feature_discount("b", state)


# ---------------------------------------------------------------------- #
# CompiledGraph agrees with FeatureGraph
# ---------------------------------------------------------------------- #
def graph_three_frame():
    return pd.DataFrame(
        {
            "hours": [0.0, 10.0, 40.0, 80.0],
            "wealth": [0.0, 0.5, 1.0, 0.25],
            "health": [0.0, 0.2, 0.6, 1.0],
            "education": [10.0, 12.0, 16.0, 10.0],
            "age": [18.0, 30.0, 60.0, 90.0],
            "city": ["A", "B", "A", "B"],
        }
    )


def compile_graph_three(graph=None):
    schema = FeatureSchema(graph_three_frame())
    actions = [CompiledAction(a, schema) for a in (STUDY, WORK, SAVE, MOVE)]
    compiled = CompiledGraph(graph_three() if graph is None else graph, schema, actions)
    return schema, actions, compiled


def random_states(schema, n, rng):
    return schema.encode(
        pd.DataFrame(
            {
                "hours": rng.uniform(0, 80, n),
                "wealth": rng.uniform(0, 1, n),
                "health": rng.uniform(0, 1, n),
                "education": rng.choice([10.0, 12.0, 16.0], n),
                "age": rng.uniform(18, 90, n),
                "city": rng.choice(["A", "B"], n),
            }
        )
    )


def step_discounts(compiled, states, actions):
    """The discount of action ``actions[r]`` on state ``states[r]``."""
    return compiled.discounts(states)[np.arange(states.shape[0]), actions]


def test_compiled_step_discounts_hand_computed():
    schema, _, compiled = compile_graph_three()
    states = schema.encode(
        pd.DataFrame(
            {
                "hours": [10.0, 30.0, 10.0, 30.0, 10.0],
                "wealth": [0.1, 0.9, 0.1, 0.9, 0.1],
                "health": [0.3, 1.0, 0.3, 1.0, 0.3],
                "education": [10.0, 16.0, 10.0, 16.0, 10.0],
                "age": [20.0, 40.0, 20.0, 40.0, 20.0],
                "city": ["A", "B", "A", "B", "A"],
            }
        )
    )
    actions = np.array([0, 0, 1, 2, 3])  # study, study, work, save, move
    np.testing.assert_allclose(
        step_discounts(compiled, states, actions), [0.475, 0.95, 1.0, 0.8, 1.0]
    )


@settings(max_examples=50, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 40),
    subset=st.lists(st.integers(0, 3), min_size=1, max_size=4, unique=True),
)
def test_compiled_step_discounts_agree_with_feature_graph(seed, n, subset):
    rng = np.random.default_rng(seed)
    graph = graph_three()
    schema, actions, compiled = compile_graph_three(graph)
    states = random_states(schema, n, rng)
    used = rng.choice(subset, n)
    got = step_discounts(compiled, states, used)
    view = schema.view(states)
    for i in set(used.tolist()):
        rows = used == i
        expected = graph.discount(actions[i].action.affected_features, view)[rows]
        np.testing.assert_allclose(got[rows], expected)


def test_compiled_graph_without_graph_gives_ones():
    schema, _, compiled = compile_graph_three(FeatureGraph())
    states = random_states(schema, 6, np.random.default_rng(0))
    np.testing.assert_array_equal(
        step_discounts(compiled, states, np.array([0, 1, 2, 3, 0, 1])), np.ones(6)
    )
    schema = FeatureSchema(graph_three_frame())
    actions = [CompiledAction(STUDY, schema)]
    none = CompiledGraph(None, schema, actions)
    np.testing.assert_array_equal(step_discounts(none, states, np.zeros(6, int)), 1)


def test_compiled_tau_outside_unit_interval_names_the_edge():
    graph = FeatureGraph().add_edge("health", "age", lambda x: x["health"] + 1)
    schema, _, compiled = compile_graph_three(graph)
    states = random_states(schema, 3, np.random.default_rng(1))
    with pytest.raises(ValueError, match=r"tau of edge 'health' -> 'age'"):
        step_discounts(compiled, states, np.array([0, 0, 1]))


def test_compiled_graph_unknown_column_names_the_edge():
    graph = FeatureGraph().add_edge("salary", "age", const(0.5))
    with pytest.raises(ValueError, match=r"'salary' -> 'age'.*'salary' is not a col"):
        compile_graph_three(graph)


# ---------------------------------------------------------------------- #
# The paper's worked example (Fig. 2), through simulate
# ---------------------------------------------------------------------- #
def fig2_setup(graph):
    frame = pd.DataFrame(
        {
            "job": ["Seller", "Cook", "Seller"],
            "education": ["HS", "BSc", "HS"],
            "location": ["Germany", "US", "Germany"],
        }
    )
    schema = FeatureSchema(frame)
    actions = [
        Action("a1", "job", values="Developer", cost=lambda b, a: 10.0),
        Action("a2", "education", values="BSc", cost=lambda b, a: 5.0),
        Action("a3", "location", values="US", cost=lambda b, a: 15.0),
    ]
    compiled = [CompiledAction(a, schema) for a in actions]
    compiled_graph = CompiledGraph(graph, schema, compiled)
    x0 = schema.encode(
        pd.DataFrame({"job": ["Seller"], "education": ["HS"], "location": ["Germany"]})
    )[0]
    return schema, x0, compiled, compiled_graph


def genotype(order, n_actions=3):
    """Random keys applying the actions of ``order`` (0-based) in that order."""
    keys = np.full(2 * n_actions, 0.5)
    keys[:n_actions] = 0.9  # inactive unless listed
    for position, i in enumerate(order):
        keys[i] = 0.1 * (position + 1)
    return keys


FIG2_COSTS = {
    (0, 1, 2): 10 * 1.0 + 5 * 0.5 + 15 * 1.0,  # 27.5
    (0, 2, 1): 10 * 1.0 + 15 * 1.0 + 5 * 1.0,  # 30
    (1, 0, 2): 5 * 0.5 + 10 * 0.75 + 15 * 1.0,  # 25
    (1, 2, 0): 5 * 0.5 + 15 * 1.0 + 10 * 0.5,  # 22.5  (S2)
    (2, 0, 1): 15 * 1.0 + 10 * 0.75 + 5 * 1.0,  # 27.5  (S1)
    (2, 1, 0): 15 * 1.0 + 5 * 1.0 + 10 * 0.5,  # 25
}


def test_fig2_paper_sequences():
    schema, x0, actions, graph = fig2_setup(fig2_graph())
    keys = np.array([genotype((2, 0, 1)), genotype((1, 2, 0))])  # S1, S2
    paths = simulate(x0, keys, actions, graph, record=True)
    np.testing.assert_array_equal(paths.order, [[2, 0, 1], [1, 2, 0]])
    np.testing.assert_allclose(paths.effort, [[15, 10, 5], [5, 15, 10]])
    np.testing.assert_allclose(paths.discount, [[1.0, 0.75, 1.0], [0.5, 1.0, 0.5]])
    np.testing.assert_allclose(paths.sequence_cost, [27.5, 22.5])
    np.testing.assert_allclose(paths.sequence_effort, [30, 30])
    assert paths.violations.tolist() == [0, 0]
    final = schema.to_frame(paths.final)
    assert final.values.tolist() == [["Developer", "BSc", "US"]] * 2
    # the discount uses the state before the step: S1's second step (a1) sees
    # location = US but still education = HS
    mid = schema.to_frame(paths.states[:, 1])
    assert mid.values.tolist()[0] == ["Seller", "HS", "US"]


@pytest.mark.parametrize("order", sorted(FIG2_COSTS))
def test_fig2_every_order(order):
    _, x0, actions, graph = fig2_setup(fig2_graph())
    paths = simulate(x0, genotype(order)[None, :], actions, graph)
    assert paths.order[0].tolist() == list(order)
    assert paths.sequence_cost[0] == pytest.approx(FIG2_COSTS[order])


def test_fig2_all_orders_in_one_batch_and_minimum():
    _, x0, actions, graph = fig2_setup(fig2_graph())
    orders = list(itertools.permutations(range(3)))
    keys = np.array([genotype(order) for order in orders])
    costs = simulate(x0, keys, actions, graph).sequence_cost
    np.testing.assert_allclose(costs, [FIG2_COSTS[o] for o in orders])
    assert costs.min() == pytest.approx(22.5)
    assert orders[int(np.argmin(costs))] == (1, 2, 0)  # <a2, a3, a1>
    assert np.sum(np.isclose(costs, 22.5)) == 1
    assert sorted(set(np.round(costs, 9))) == [22.5, 25.0, 27.5, 30.0]


def test_fig2_without_graph_every_order_costs_30():
    _, x0, actions, graph = fig2_setup(None)
    keys = np.array([genotype(o) for o in itertools.permutations(range(3))])
    paths = simulate(x0, keys, actions, graph)
    np.testing.assert_allclose(paths.sequence_cost, np.full(6, 30.0))
    np.testing.assert_array_equal(paths.discount, np.ones((6, 3)))

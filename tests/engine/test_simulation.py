"""Batched simulation against a one-candidate-at-a-time reference."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_cscf import Action, FeatureGraph
from sklearn_cscf._compiled_actions import CompiledAction
from sklearn_cscf._compiled_graph import CompiledGraph
from sklearn_cscf._engine._genotypes import decode_order
from sklearn_cscf._engine._simulation import schedule, simulate
from sklearn_cscf._schema import FeatureSchema

LEVELS = ["none", "hs", "bsc", "msc"]


@pytest.fixture(scope="module")
def problem():
    X = pd.DataFrame(
        {
            "age": [20, 40, 60],
            "education": pd.Categorical(
                ["none", "hs", "msc"], categories=LEVELS, ordered=True
            ),
            "job": ["clerk", "none", "manager"],
            "hours": [10.0, 40.0, 60.0],
            "savings": [0.0, 500.0, 9000.0],
        }
    )
    schema = FeatureSchema(X)
    actions = [
        Action(
            "study",
            "education",
            direction="increase",
            cost=lambda b, a: 3.0,
            effects={"age": lambda b, a: b["age"] + 3},
            postcondition=lambda b, a: a["age"] <= 62,
        ),
        Action(
            "work",
            "job",
            values=["clerk", "manager"],
            precondition=lambda b: b["age"] < 60,
            cost=lambda b, a: np.where(a["job"] == "manager", 5.0, 2.0),
        ),
        Action("hours", "hours", values=(0, 80), step=5),
        Action(
            "save",
            "savings",
            direction="increase",
            cost=lambda b, a: (a["savings"] - b["savings"]) / 1000,
        ),
        Action("wait", "age", values=(18, 70), direction="increase", step=1),
    ]
    graph = FeatureGraph(
        [
            (
                "education",
                "job",
                lambda x: np.where(np.isin(x["education"], ["bsc", "msc"]), 0.5, 1.0),
            ),
            ("hours", "savings", lambda x: np.clip(1.2 - x["hours"] / 100, 0, 1)),
            ("job", "savings", lambda x: np.where(x["job"] == "manager", 0.6, 1.0)),
            ("age", "education", lambda x: np.clip(x["age"] / 70, 0, 1)),
        ]
    )
    compiled = [CompiledAction(a, schema) for a in actions]
    return schema, actions, graph, compiled, CompiledGraph(graph, schema, compiled)


def reference(x0, keys, schema, actions, graph, compiled):
    """Each candidate alone, step by step, with FeatureGraph's own Eq. 1-2."""
    n_actions = len(actions)
    order, lengths = decode_order(keys, n_actions)
    finals, efforts, discounts, violations = [], [], [], []
    for r in range(keys.shape[0]):
        state = x0[None, :].copy()
        effort, discount, bad = np.zeros(n_actions), np.ones(n_actions), 0
        for t in range(lengths[r]):
            i = order[r, t]
            g = graph.discount(actions[i].affected_features, schema.view(state))
            after, b, valid = compiled[i].apply(state, keys[r : r + 1, n_actions + i])
            effort[t], discount[t], bad = b[0], g[0], bad + int(not valid[0])
            state = after
        finals.append(state[0])
        efforts.append(effort)
        discounts.append(discount)
        violations.append(bad)
    return np.array(finals), np.array(efforts), np.array(discounts), violations


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), start=st.integers(0, 2), n=st.integers(1, 40))
def test_batched_simulation_equals_one_candidate_at_a_time(problem, seed, start, n):
    schema, actions, graph, compiled, compiled_graph = problem
    x0 = schema.encode(
        pd.DataFrame(
            {
                "age": [20, 40, 60][start],
                "education": pd.Categorical(
                    [["none", "hs", "msc"][start]], categories=LEVELS, ordered=True
                ),
                "job": [["clerk", "none", "manager"][start]],
                "hours": [[10.0, 40.0, 60.0][start]],
                "savings": [[0.0, 500.0, 9000.0][start]],
            }
        )
    )[0]
    keys = np.random.default_rng(seed).random((n, 2 * len(actions)))
    paths = simulate(x0, keys, compiled, compiled_graph, record=True)
    finals, efforts, discounts, violations = reference(
        x0, keys, schema, actions, graph, compiled
    )
    np.testing.assert_allclose(paths.final, finals)
    np.testing.assert_allclose(paths.effort, efforts)
    np.testing.assert_allclose(paths.discount, discounts)
    np.testing.assert_array_equal(paths.violations, violations)
    # the recorded states end in the final state and start at x0
    np.testing.assert_allclose(paths.states[:, 0], np.repeat(x0[None], n, axis=0))
    np.testing.assert_allclose(paths.states[np.arange(n), paths.lengths], finals)
    np.testing.assert_allclose(paths.states[:, -1], finals)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_actions=st.integers(1, 7))
def test_schedule_keeps_each_candidate_in_its_own_order(seed, n_actions):
    keys = np.random.default_rng(seed).random((60, 2 * n_actions))
    order, lengths = decode_order(keys, n_actions)
    rows, steps, starts, ends, batch_actions = schedule(order, n_actions)
    # every step of every candidate is scheduled exactly once
    assert rows.size == lengths.sum()
    pairs = set(zip(rows.tolist(), steps.tolist()))
    assert pairs == {(r, t) for r in range(60) for t in range(lengths[r])}
    position = np.empty(rows.size, dtype=int)
    for b, (start, end) in enumerate(zip(starts, ends)):
        # one action per batch, each candidate at most once in it
        assert set(order[rows[start:end], steps[start:end]]) == {batch_actions[b]}
        assert np.unique(rows[start:end]).size == end - start
        position[start:end] = b
    # a candidate's steps come in increasing batches
    for r in range(60):
        mine = position[rows == r][np.argsort(steps[rows == r])]
        assert np.all(np.diff(mine) > 0)
    # fewer batches than going step by step on populations sharing an order
    shared = np.tile(keys[:1], (60, 1))
    shared[:, n_actions:] = keys[:, n_actions:]
    order, _ = decode_order(shared, n_actions)
    *_, batch_actions = schedule(order, n_actions)
    assert len(batch_actions) == (order[0] >= 0).sum()


def test_an_invalid_step_discounted_to_zero_costs_infinity_without_a_warning():
    from sklearn_cscf._engine._simulation import Trajectories

    effort = np.array([[np.inf, 1.0], [2.0, 0.0]])
    discount = np.array([[0.0, 1.0], [0.5, 1.0]])
    trajectories = Trajectories(
        order=np.array([[0, 1], [1, -1]]),
        lengths=np.array([2, 1]),
        final=np.zeros((2, 1)),
        effort=effort,
        discount=discount,
        new_values=np.zeros((2, 2)),
        violations=np.array([1, 0]),
    )
    with np.errstate(all="raise"):
        cost = trajectories.step_cost
    np.testing.assert_array_equal(cost, [[np.inf, 1.0], [1.0, 0.0]])
    assert trajectories.sequence_cost.tolist() == [np.inf, 1.0]


@pytest.mark.parametrize("n_starts", [1, 3])
def test_known_start_discounts_give_what_the_graph_gives(problem, n_starts):
    # the branch every Block runs: first steps take the discounts known from
    # the start state, later steps ask the graph
    schema, actions, graph, compiled, compiled_graph = problem
    starts = schema.encode(
        pd.DataFrame(
            {
                "age": [20, 40, 60][:n_starts],
                "education": pd.Categorical(
                    ["none", "hs", "msc"][:n_starts], categories=LEVELS, ordered=True
                ),
                "job": ["clerk", "none", "manager"][:n_starts],
                "hours": [10.0, 40.0, 60.0][:n_starts],
                "savings": [0.0, 500.0, 9000.0][:n_starts],
            }
        )
    )
    n = 60
    keys = np.random.default_rng(7).random((n, 2 * len(actions)))
    owner = np.arange(n) % n_starts
    rows = starts[owner]
    known = compiled_graph.discounts(rows)
    plain = simulate(rows, keys, compiled, compiled_graph, record=True)
    given = simulate(
        rows, keys, compiled, compiled_graph, record=True, start_discounts=known
    )
    np.testing.assert_array_equal(given.discount, plain.discount)
    np.testing.assert_array_equal(given.effort, plain.effort)
    np.testing.assert_array_equal(given.final, plain.final)
    np.testing.assert_array_equal(given.states, plain.states)
    # some first steps and some later steps are discounted: both paths run
    first = plain.discount[:, 0]
    assert (first < 1).any() and (plain.discount[:, 1:][plain.lengths > 1] < 1).any()
    # the first step's discount is the known one, not recomputed
    fake = np.full_like(known, 0.25)
    faked = simulate(rows, keys, compiled, compiled_graph, start_discounts=fake)
    has_edge = compiled_graph.has_target[plain.order[:, 0]]
    took = plain.lengths > 0
    np.testing.assert_array_equal(faked.discount[took & has_edge, 0], 0.25)
    np.testing.assert_array_equal(
        faked.discount[:, 1:], plain.discount[:, 1:]
    )  # later steps ask the graph

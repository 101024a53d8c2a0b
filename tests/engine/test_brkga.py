"""Tests of the BRKGA pieces (``_search.py``) and the objectives
(``_objectives.py``)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_cscf import Action
from sklearn_cscf._compiled_actions import CompiledAction
from sklearn_cscf._compiled_graph import CompiledGraph
from sklearn_cscf._engine._brkga import (
    Evaluation,
    biased_crossover,
    pareto_front,
    select_elites,
)
from sklearn_cscf._engine._hashing import first_occurrences, key_hashes
from sklearn_cscf._engine._objectives import affect_matrix, gower_distance, tweak_counts
from sklearn_cscf._engine._simulation import row_bytes, simulate
from sklearn_cscf._schema import FeatureSchema


# ---------------------------------------------------------------------- #
# biased crossover
# ---------------------------------------------------------------------- #
def elite_share(bias, seed=0):
    elites = np.full((3, 40), 0.1)
    others = np.full((7, 40), 0.9)
    children = biased_crossover(elites, others, 5000, bias, np.random.default_rng(seed))
    assert children.shape == (5000, 40)
    assert np.all((children == 0.1) | (children == 0.9))
    return np.mean(children == 0.1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_crossover_takes_keys_from_the_elite_with_probability_bias(seed):
    assert 0.68 <= elite_share(0.7, seed) <= 0.72


@pytest.mark.parametrize("seed", [0, 1])
def test_crossover_bias_direction_is_not_swapped(seed):
    assert 0.28 <= elite_share(0.3, seed) <= 0.32


def test_crossover_extreme_biases():
    assert elite_share(1.0) == 1.0
    assert elite_share(0.0) == 0.0


def test_crossover_uses_one_elite_and_one_other_parent_per_child():
    n_keys = 30
    # each parent row is a constant, distinct value: the source of a key tells
    # which parent it came from
    elites = np.repeat(np.array([[0.01], [0.02], [0.03]]), n_keys, axis=1)
    others = np.repeat(np.array([[0.6], [0.7], [0.8], [0.9]]), n_keys, axis=1)
    children = biased_crossover(elites, others, 500, 0.7, np.random.default_rng(3))
    used_elites = set()
    used_others = set()
    for child in children:
        from_elite = set(child[child < 0.5].tolist())
        from_other = set(child[child > 0.5].tolist())
        assert len(from_elite) <= 1 and len(from_other) <= 1
        used_elites |= from_elite
        used_others |= from_other
    # every parent gets picked at some point
    assert used_elites == {0.01, 0.02, 0.03}
    assert used_others == {0.6, 0.7, 0.8, 0.9}


def test_crossover_and_mutants_take_the_numbers_of_separate_draws():
    # one draw for the coin flips and the mutants: the same numbers as the
    # two draws in a row it replaced, so the search's answers stay the same
    elites, others = np.zeros((3, 6)), np.ones((4, 6))
    out = biased_crossover(elites, others, 5, 0.7, np.random.default_rng(9), 4)
    rng = np.random.default_rng(9)
    rng.integers(3, size=5), rng.integers(4, size=5)  # the parents
    flips = rng.random((5, 6)) < 0.7
    mutants = rng.random((4, 6))
    np.testing.assert_array_equal(out[:5], np.where(flips, 0.0, 1.0))
    np.testing.assert_array_equal(out[5:], mutants)


def test_crossover_without_offspring():
    out = biased_crossover(
        np.zeros((2, 6)), np.ones((3, 6)), 0, 0.7, np.random.default_rng(0)
    )
    assert out.shape == (0, 6)


# ---------------------------------------------------------------------- #
# elites and the Pareto front
# ---------------------------------------------------------------------- #
def evaluation(F, feasible, keys, gap=None):
    F = np.asarray(F, dtype=float)
    feasible = np.asarray(feasible, dtype=bool)
    if gap is None:
        gap = np.where(feasible, 0.0, 1.0)
    gap = np.asarray(gap, dtype=float)
    assert np.array_equal(gap == 0, feasible)
    return Evaluation(F, gap, np.array(keys, dtype=bytes))


def test_pareto_front_feasible_non_dominated_distinct():
    ev = evaluation(
        F=[[1, 5], [2, 2], [3, 3], [1, 5], [0, 9], [5, 0], [0, 0], [6, 6]],
        feasible=[1, 1, 1, 1, 1, 1, 0, 1],
        keys=[b"s0", b"s1", b"s2", b"s0", b"s4", b"s5", b"s6", b"s7"],
    )
    # 2 and 7 are dominated, 3 repeats the sequence of 0, 6 is infeasible
    # (though it would dominate everything)
    assert sorted(pareto_front(ev).tolist()) == [0, 1, 4, 5]
    assert sorted(select_elites(ev, 10).tolist()) == [0, 1, 4, 5]


def test_pareto_front_drops_duplicates_even_when_first_copy_is_infeasible():
    ev = evaluation(
        F=[[1, 1], [1, 1], [2, 0]],
        feasible=[0, 1, 1],
        keys=[b"a", b"a", b"b"],
    )
    assert sorted(pareto_front(ev).tolist()) == [1, 2]


def test_pareto_front_empty_when_nothing_feasible():
    ev = evaluation(F=[[1, 1], [0, 0]], feasible=[0, 0], keys=[b"a", b"b"])
    assert pareto_front(ev).size == 0


def test_elites_are_capped():
    n = 12
    F = [[i, n - 1 - i, 0.5] for i in range(n)]  # all mutually non-dominated
    keys = [f"s{i}".encode() for i in range(n)]
    ev = evaluation(F, [1] * n, keys)
    assert sorted(pareto_front(ev).tolist()) == list(range(n))
    elites = select_elites(ev, 4)
    assert len(elites) == 4
    assert len(set(elites.tolist())) == 4
    assert set(elites.tolist()) <= set(range(n))
    # the extremes of the front have infinite crowding distance
    assert {0, n - 1} <= set(elites.tolist())
    assert select_elites(ev, n).size == n


@settings(max_examples=60, deadline=None)
@given(
    table=st.lists(
        st.tuples(st.integers(0, 4), st.integers(0, 4), st.booleans()),
        min_size=1,
        max_size=8,
    ),
    picks=st.lists(st.integers(0, 7), min_size=1, max_size=30),
    max_elites=st.integers(1, 10),
)
def test_elites_property(table, picks, max_elites):
    # equal decoded sequences (keys) have equal objectives and feasibility
    rows = [table[k % len(table)] for k in picks]
    keys = [f"k{k % len(table)}".encode() for k in picks]
    F = [[a, b] for a, b, _ in rows]
    feasible = [f for _, _, f in rows]
    ev = evaluation(F, feasible, keys)
    elites = select_elites(ev, max_elites).tolist()
    assert len(elites) <= max_elites
    assert len({keys[i] for i in elites}) == len(elites)  # distinct sequences
    if any(feasible):
        assert elites
        for i in elites:
            assert feasible[i]
            # no feasible individual dominates an elite
            for a, b, f in rows:
                if f:
                    assert not (a <= F[i][0] and b <= F[i][1] and [a, b] != F[i])
    else:
        assert len(elites) == min(max_elites, len(set(keys)))


def test_elites_without_feasible_individual_are_closest_to_feasibility():
    ev = evaluation(
        F=[[1, 0], [5, 0], [0, 0], [3, 0], [2, 0]],
        feasible=[0, 0, 0, 0, 0],
        keys=[b"a", b"b", b"b", b"d", b"e"],
        gap=[0.5, 0.1, 0.1, 0.3, 0.1],
    )
    # distinct: 0, 1, 3, 4 (2 repeats the sequence of 1); smallest gaps are
    # 1 and 4, the cheaper one (4) first
    assert sorted(select_elites(ev, 2).tolist()) == [1, 4]
    assert sorted(select_elites(ev, 1).tolist()) == [4]
    assert sorted(select_elites(ev, 3).tolist()) == [1, 3, 4]
    assert sorted(select_elites(ev, 10).tolist()) == [0, 1, 3, 4]


def test_sequence_keys_identify_decoded_sequences():
    frame = pd.DataFrame({"a": [0.0, 10.0], "b": [0.0, 1.0]})
    schema = FeatureSchema(frame)
    actions = [
        CompiledAction(Action("up_a", "a", values=(0, 10)), schema),
        CompiledAction(Action("up_b", "b", values=(0, 1)), schema),
    ]
    graph = CompiledGraph(None, schema, actions)
    x0 = np.array([5.0, 0.5])
    keys = np.array(
        [
            [0.1, 0.9, 0.3, 0.2],  # <(up_a, 3)>
            [0.2, 0.7, 0.3, 0.8],  # same sequence: only inactive/order keys moved
            [0.1, 0.9, 0.4, 0.2],  # <(up_a, 4)>
            [0.1, 0.2, 0.3, 0.2],  # <(up_a, 3), (up_b, 0.2)>
            [0.2, 0.1, 0.3, 0.2],  # <(up_b, 0.2), (up_a, 3)>
        ]
    )
    seq = simulate(x0, keys, actions, graph).sequence_keys()
    assert seq[0] == seq[1]
    assert len({bytes(k) for k in seq}) == 4


# ---------------------------------------------------------------------- #
# objectives
# ---------------------------------------------------------------------- #
@pytest.fixture
def gower_schema():
    return FeatureSchema(
        pd.DataFrame(
            {"a": [0.0, 10.0, 5.0], "b": [0.0, 4.0, 1.0], "c": ["x", "y", "z"]}
        )
    )


def test_gower_distance_hand_computed(gower_schema):
    x0 = gower_schema.encode(pd.DataFrame({"a": [2.0], "b": [1.0], "c": ["x"]}))[0]
    states = gower_schema.encode(
        pd.DataFrame(
            {
                "a": [2.0, 7.0, 2.0, 12.0, 22.0, -3.0],
                "b": [1.0, 1.0, 3.0, 0.0, 1.0, 1.0],
                "c": ["x", "x", "y", "z", "x", "x"],
            }
        )
    )
    expected = [
        0.0,
        (0.5 + 0 + 0) / 3,
        (0 + 0.5 + 1) / 3,
        (1.0 + 0.25 + 1) / 3,
        (2.0 + 0 + 0) / 3,  # outside the learned range: above 1
        (0.5 + 0 + 0) / 3,
    ]
    np.testing.assert_allclose(gower_distance(x0, states, gower_schema), expected)


def test_gower_distance_missing_values(gower_schema):
    x0 = np.array([2.0, 1.0, 0.0])  # c = "x"
    states = np.array(
        [
            [np.nan, 1.0, 0.0],  # missing vs value: 1
            [2.0, 1.0, np.nan],  # missing category: 1
            [np.nan, np.nan, np.nan],
        ]
    )
    np.testing.assert_allclose(
        gower_distance(x0, states, gower_schema), [1 / 3, 1 / 3, 1.0]
    )
    x0_missing = np.array([np.nan, 1.0, np.nan])
    states = np.array(
        [
            [np.nan, 1.0, np.nan],  # both missing: 0
            [4.0, 3.0, np.nan],  # a: 1, b: 0.5, c: 0
            [np.nan, 1.0, 1.0],  # c: 1
        ]
    )
    np.testing.assert_allclose(
        gower_distance(x0_missing, states, gower_schema), [0.0, 0.5, 1 / 3]
    )


def test_tweak_counts_hand_computed():
    affects = np.array(
        [
            [1, 1, 0, 0],  # action 0 changes features 0 and 1
            [0, 1, 0, 0],  # action 1 changes feature 1
            [0, 0, 1, 1],  # action 2 changes features 2 and 3
        ],
        dtype=float,
    )
    order = np.array([[0, 1, -1], [2, -1, -1], [-1, -1, -1], [1, 2, 0]])
    np.testing.assert_array_equal(
        tweak_counts(order, affects),
        [[1, 2, 0, 0], [0, 0, 1, 1], [0, 0, 0, 0], [1, 2, 1, 1]],
    )


def test_affect_matrix_includes_effects():
    schema = FeatureSchema(
        pd.DataFrame({"age": [20.0, 60.0], "edu": [10.0, 16.0], "hours": [0.0, 80.0]})
    )
    actions = [
        CompiledAction(
            Action("study", "edu", effects={"age": lambda b, a: b["age"] + 2}),
            schema,
        ),
        CompiledAction(Action("work", "hours"), schema),
    ]
    matrix = affect_matrix(actions, 3)
    np.testing.assert_array_equal(matrix, [[1, 1, 0], [0, 0, 1]])
    order = np.array([[0, 1], [1, -1]])
    np.testing.assert_array_equal(tweak_counts(order, matrix), [[1, 1, 1], [0, 0, 1]])


def test_gower_distance_on_a_span_below_the_smallest_normal_float():
    # 1 / span would overflow: the distance is divided, finite and warning-free
    schema = FeatureSchema(pd.DataFrame({"a": [0.0, 2e-310], "b": [0.0, 4.0]}))
    x0 = np.array([0.0, 0.0])
    states = np.array([[1e-310, 2.0], [2e-310, 0.0]])
    with np.errstate(all="raise"):
        distance = gower_distance(x0, states, schema)
    np.testing.assert_allclose(distance, [(0.5 + 0.5) / 2, (1.0 + 0.0) / 2])


def test_gower_distance_stays_finite_where_the_quotient_overflows():
    # a step of 1 on a span of 1e-313: |diff| / span overflows; the share is
    # capped so that the distance is finite, far above any ordinary one
    schema = FeatureSchema(pd.DataFrame({"a": [0.0, 1e-313], "b": [0.0, 4.0]}))
    x0 = np.array([0.0, 0.0])
    states = np.array([[1.0, 0.0], [0.0, 4.0]])
    with np.errstate(over="raise", invalid="raise"):
        distance = gower_distance(x0, states, schema)
    assert np.isfinite(distance).all()
    assert distance[0] > 1e300 > distance[1] == 0.5
    # the front of two plans that tie on that capped distance is still found
    ev = evaluation(
        F=[[1.0, distance[0], 0.0], [2.0, distance[0], 1.0]],
        feasible=[1, 1],
        keys=[b"a", b"b"],
    )
    assert pareto_front(ev).tolist() == [0]


def test_pareto_front_with_three_objectives_keeps_what_the_third_saves():
    # cost, distance, tweaks
    ev = evaluation(
        F=[[1, 1, 5], [2, 2, 1], [1, 1, 6], [3, 3, 3], [1, 2, 2]],
        feasible=[1, 1, 1, 1, 1],
        keys=[b"a", b"b", b"c", b"d", b"e"],
    )
    front = sorted(pareto_front(ev).tolist())
    # 1 is dominated on the first two columns by 0, and stays through its
    # third; 2 ties 0 on the first two and is worse on the third: it goes;
    # 3 is dominated by 1 on all three; 4 is worse than 0 on distance, better
    # on tweaks
    assert front == [0, 1, 4]
    assert sorted(select_elites(ev, 10).tolist()) == [0, 1, 4]


def test_pareto_front_with_four_objectives():
    ev = evaluation(
        F=[[1, 1, 1, 5], [1, 1, 1, 4], [1, 1, 2, 0]],
        feasible=[1, 1, 1],
        keys=[b"a", b"b", b"c"],
    )
    # 0 ties 1 on three columns and loses on the fourth; 2 wins on the fourth
    assert sorted(pareto_front(ev).tolist()) == [1, 2]


@pytest.mark.parametrize("collide", [False, True])
def test_first_occurrences_of_byte_keys_are_numpys(collide, monkeypatch):
    # sequence-like keys: small integers and rounded values as floats (their
    # low bits zero), many repeated; by hash, then checked word by word
    import sklearn_cscf._engine._hashing as search

    rng = np.random.default_rng(0)
    rows = np.column_stack(
        [rng.integers(-1, 2, (3000, 3)), rng.integers(0, 3, (3000, 3)) / 4]
    ).astype(float)
    keys = row_bytes(rows)
    if collide:  # every hash equal: the bytes decide
        monkeypatch.setattr(
            search, "word_hashes", lambda w: np.zeros(w.shape[0], np.uint64)
        )
    _, expected = np.unique(keys, return_index=True)
    found = first_occurrences(keys)
    np.testing.assert_array_equal(found, np.sort(expected))
    assert 100 < found.size < 3000
    # the hashes an evaluation carries (every one equal: the bytes decide)
    hashes = np.zeros(keys.shape[0], np.uint64) if collide else key_hashes(keys)
    np.testing.assert_array_equal(first_occurrences(keys, hashes), found)

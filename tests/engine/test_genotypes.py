"""The random-key layout (``_engine/_genotypes.py``): the decoder, on the paper's
Fig. 3 genotype, and decoded sequences applied by ``simulate``; genotypes
written from an order and values, and an action's far ends."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sklearn_cscf import Action
from sklearn_cscf._compiled_actions import CompiledAction
from sklearn_cscf._compiled_graph import CompiledGraph
from sklearn_cscf._engine._genotypes import (
    INACTIVE,
    decode_order,
    far_keys,
    genotypes,
    toward_far_end,
)
from sklearn_cscf._engine._simulation import simulate
from sklearn_cscf._schema import FeatureSchema
from sklearn_cscf._spaces import DiscreteSpace, RangeSpace

FIG3 = np.array([[0.70, 0.45, 0.02, 0.12, 0.80, 0.68]])


def test_fig3_order():
    order, lengths = decode_order(FIG3, 3)
    assert order.tolist() == [[2, 1, -1]]  # a3 then a2; a1 inactive
    assert lengths.tolist() == [2]
    np.testing.assert_array_equal(FIG3[:, 3:], [[0.12, 0.80, 0.68]])


def fig3_setup(a2_values):
    frame = pd.DataFrame(
        {
            "f1": [18.0, 25.0, 38.0],
            "f2": [0, 1, 3] if a2_values is None else ["c0", "c1", "c2"],
            "f3": [6.0, 10.0, 56.0],
        }
    )
    schema = FeatureSchema(frame)
    actions = [
        Action("a1", "f1", values=(18, 38)),
        Action("a2", "f2", values=[0, 1, 2, 3] if a2_values is None else a2_values),
        Action("a3", "f3", values=(6, 56)),
    ]
    compiled = [CompiledAction(a, schema) for a in actions]
    graph = CompiledGraph(None, schema, compiled)
    x0 = schema.encode(frame.iloc[[1]])[0]
    return schema, x0, compiled, graph


def test_fig3_value_keys_interpolate():
    _, x0, actions, _ = fig3_setup(None)
    values = [
        action.space.interpolate(np.array([key]), np.array([x0[action.feature]]))[0]
        for action, key in zip(actions, FIG3[:, 3:][0])
    ]
    np.testing.assert_allclose(np.concatenate(values), [20.4, 3.0, 40.0])


def test_fig3_simulated_sequence():
    schema, x0, actions, graph = fig3_setup(None)
    np.testing.assert_array_equal(x0, [25.0, 1.0, 10.0])
    paths = simulate(x0, FIG3, actions, graph, record=True)
    assert paths.order.tolist() == [[2, 1, -1]]
    assert paths.lengths.tolist() == [2]
    # <(a3, 40), (a2, 3)>
    np.testing.assert_allclose(paths.new_values[0, :2], [40.0, 3.0])
    assert np.isnan(paths.new_values[0, 2])
    # a1 is inactive: f1 keeps its value
    np.testing.assert_allclose(paths.final, [[25.0, 3.0, 40.0]])
    np.testing.assert_allclose(paths.states[0, 1], [25.0, 1.0, 40.0])
    np.testing.assert_allclose(paths.states[0, 2], [25.0, 3.0, 40.0])
    assert paths.violations.tolist() == [0]
    # default efforts: |40 - 10| / 50 and |3 - 1| / 3; nothing past the end
    np.testing.assert_allclose(paths.effort, [[30 / 50, 2 / 3, 0.0]])


def test_fig3_with_categorical_list():
    labels = ["c0", "c1", "c2", "c3"]
    schema, x0, actions, graph = fig3_setup(labels)
    paths = simulate(x0, FIG3, actions, graph)
    final = schema.to_frame(paths.final)
    assert final["f2"].tolist() == ["c3"]  # min(int(0.8 * 4), 3) = 3
    assert final["f3"].tolist() == pytest.approx([40.0])
    assert final["f1"].tolist() == [25.0]
    assert schema.decode_value(1, paths.new_values[0, 1]) == "c3"


# ---------------------------------------------------------------------- #
# decode_order
# ---------------------------------------------------------------------- #
def test_threshold_half_is_active():
    keys = np.array([[0.5, 0.5000001, 0.49999, 1.0, 0, 0, 0, 0]])
    order, lengths = decode_order(keys, 4)
    assert order.tolist() == [[2, 0, -1, -1]]
    assert lengths.tolist() == [2]


def test_zero_key_is_active_and_first():
    order, _ = decode_order(np.array([[0.3, 0.0, 0.1, 0, 0, 0]]), 3)
    assert order.tolist() == [[1, 2, 0]]


def test_ties_keep_a_stable_order():
    keys = np.array([[0.3, 0.3, 0.1, 0.3, 0, 0, 0, 0]])
    order, lengths = decode_order(keys, 4)
    assert order.tolist() == [[2, 0, 1, 3]]
    assert lengths.tolist() == [4]


def test_nan_and_infinite_action_keys_are_inactive():
    keys = np.array([[np.nan, 0.2, np.inf, 0.1, 0, 0, 0, 0]])
    order, lengths = decode_order(keys, 4)
    assert order.tolist() == [[3, 1, -1, -1]]
    assert lengths.tolist() == [2]


def test_max_length_keeps_the_smallest_keys():
    keys = np.array(
        [
            [0.4, 0.1, 0.3, 0.2, 0, 0, 0, 0],
            [0.9, 0.9, 0.05, 0.9, 0, 0, 0, 0],
            [0.4, 0.1, 0.3, 0.2, 0, 0, 0, 0],
        ]
    )
    order, lengths = decode_order(keys[:2], 4, max_length=2)
    assert order.tolist() == [[1, 3, -1, -1], [2, -1, -1, -1]]
    assert lengths.tolist() == [2, 1]
    order, lengths = decode_order(keys, 4, max_length=10)
    assert order.tolist()[0] == [1, 3, 2, 0]
    assert lengths.tolist() == [4, 1, 4]


def test_all_inactive_gives_empty_sequence():
    keys = np.array([[0.51, 0.9, 1.0, 0.2, 0.3, 0.4]])
    order, lengths = decode_order(keys, 3)
    assert order.tolist() == [[-1, -1, -1]]
    assert lengths.tolist() == [0]
    schema, x0, actions, graph = fig3_setup(None)
    paths = simulate(x0, keys, actions, graph)
    np.testing.assert_array_equal(paths.final, x0[None, :])
    assert paths.sequence_cost.tolist() == [0.0]
    assert paths.violations.tolist() == [0]


def test_batch_decodes_each_row_independently():
    keys = np.vstack([FIG3, [[0.1, 0.2, 0.3, 0, 0, 0]], [[0.9, 0.9, 0.9, 0, 0, 0]]])
    order, lengths = decode_order(keys, 3)
    assert order.tolist() == [[2, 1, -1], [0, 1, 2], [-1, -1, -1]]
    assert lengths.tolist() == [2, 3, 0]


@settings(max_examples=200, deadline=None)
@given(
    keys=arrays(
        np.float64,
        st.tuples(st.integers(1, 8), st.integers(2, 12).filter(lambda n: n % 2 == 0)),
        elements=st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.5000001, 0.75, 1.0])
        | st.floats(0, 1),
    ),
    max_length=st.none() | st.integers(0, 6),
)
def test_decode_order_property(keys, max_length):
    n_actions = keys.shape[1] // 2
    order, lengths = decode_order(keys, n_actions, max_length)
    assert order.shape == (keys.shape[0], n_actions)
    for row, seq, length in zip(keys, order, lengths):
        action_keys = row[:n_actions]
        active = [i for i in range(n_actions) if action_keys[i] <= 0.5]
        expected = sorted(active, key=lambda i: (action_keys[i], i))
        if max_length is not None:
            expected = expected[:max_length]
        assert length == len(expected)
        assert seq[:length].tolist() == expected
        assert np.all(seq[length:] == -1)


@settings(max_examples=100, deadline=None)
@given(
    n_actions=st.integers(1, 7),
    data=st.data(),
)
def test_written_genotypes_decode_to_their_order_and_values(n_actions, data):
    rows = data.draw(st.integers(1, 5))
    orders, values = [], []
    for _ in range(rows):
        length = data.draw(st.integers(0, n_actions))
        steps = data.draw(st.permutations(range(n_actions)))[:length]
        orders.append(list(steps) + [-1] * (n_actions - length))
        values.append(
            data.draw(st.lists(st.floats(0, 1), min_size=n_actions, max_size=n_actions))
        )
    order, values = np.array(orders), np.array(values)
    keys = genotypes(order, values, n_actions)
    decoded, lengths = decode_order(keys, n_actions)
    np.testing.assert_array_equal(decoded, order)
    np.testing.assert_array_equal(keys[:, n_actions:], values)
    # the actions left out are INACTIVE, the others below 0.5
    taken = keys[:, :n_actions] <= 0.5
    assert (taken.sum(axis=1) == lengths).all()
    assert (keys[:, :n_actions][~taken] == INACTIVE).all()


UNORDERED = DiscreteSpace(np.arange(20.0), "any", np.arange(21))


@pytest.mark.parametrize(
    "space, far, every, toward",
    [
        (RangeSpace(0, 10, "increase"), [1.0], [1.0], [1.0, 1.0]),
        (RangeSpace(0, 10, "decrease"), [0.0], [0.0], [0.0, 0.0]),
        (RangeSpace(0, 10, "any"), [0.0, 1.0], [0.0, 1.0], [0.0, 1.0]),
        # an ordered list free both ways: its ends; every value when short
        (
            DiscreteSpace([1.0, 2.0, 4.0, 8.0], "any"),
            [0.0, 1.0],
            [0.125, 0.375, 0.625, 0.875],
            [0.0, 1.0],
        ),
        (DiscreteSpace([1.0, 2.0], "increase"), [1.0], [1.0], [1.0, 1.0]),
        # unordered categories have no ends: values spread over the list,
        # and a step keeps its value
        (UNORDERED, "spread", "spread", [0.2, 0.7]),
    ],
)
def test_one_rule_gives_an_actions_far_ends(space, far, every, toward):
    for found, expected in (
        (far_keys(space, 8), far),
        (far_keys(space, 8, every_value=True), every),
    ):
        if expected == "spread":
            assert len(found) == 8 and found == sorted(found)
            assert found[0] == 0.5 / 20 and found[-1] == 19.5 / 20
        else:
            assert found == expected
    np.testing.assert_array_equal(toward_far_end(space, np.array([0.2, 0.7])), toward)
    # a long ordered list gives its ends, even with every_value
    assert far_keys(DiscreteSpace(np.arange(30.0), "any"), 8, every_value=True) == [
        0.0,
        1.0,
    ]

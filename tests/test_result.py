"""The result of one instance (sklearn_cscf._result): sequences kept, plans,
and the views the output reads."""

import numpy as np

from sklearn_cscf._result import InstanceResult, compact, plan_ids
from sklearn_cscf._status import STATUS_NO_COUNTERFACTUAL, STATUS_OK


def result_with_plans(action_sets, n_actions=4):
    """A result whose sequences use ``action_sets`` (cheapest first)."""
    n = len(action_sets)
    order = np.full((n, n_actions), -1)
    for s, actions in enumerate(action_sets):
        order[s, : len(actions)] = actions
    lengths = np.array([len(a) for a in action_sets])
    zeros = np.zeros((n, n_actions))
    return InstanceResult(
        x0=np.zeros(2),
        target=1,
        status=STATUS_OK,
        order=order,
        lengths=lengths,
        effort=zeros,
        discount=zeros + 1,
        step_cost=zeros,
        states=np.zeros((n, n_actions + 1, 2)),
        step_score=zeros,
        objectives={"sequence_cost": np.arange(n, dtype=float)},
    )


def test_the_plans_kept_are_the_cheapest_then_the_most_different():
    result = result_with_plans([[0], [0, 1], [1, 0], [0, 1, 2], [3], [2, 3], [1]])
    kept = compact(result, max_plans=3, all_orders=False)
    sets = [set(kept.order[s, : kept.lengths[s]]) for s in range(kept.n_solutions)]
    # {0} first; {3} shares nothing with it (the cheapest such); then {1}
    # (distance 1 from both) beats {2, 3} (0.5 from {3})
    assert sets == [{0}, {3}, {1}]
    assert kept.sequence_cost.tolist() == [0.0, 4.0, 6.0]
    every_order = compact(result, max_plans=None, all_orders=True)
    assert every_order.n_solutions == 7
    one_order = compact(result, max_plans=None, all_orders=False)
    assert one_order.sequence_cost.tolist() == [0.0, 1.0, 3.0, 4.0, 5.0, 6.0]


def test_the_nearest_and_most_plausible_plans_are_kept():
    result = result_with_plans([[0], [1], [2], [3], [0, 1]])
    result.objectives["gower_distance"] = np.array([0.5, 0.4, 0.3, 0.2, 0.1])
    result.objectives["plausibility"] = np.array([0.5, 0.1, 0.5, 0.5, 0.5])
    kept = compact(result, max_plans=3, all_orders=False)
    # the cheapest {0}, the nearest {0, 1}, the most plausible {1}
    assert kept.sequence_cost.tolist() == [0.0, 1.0, 4.0]


def test_plans_share_a_number_whatever_the_order_of_their_actions():
    order = np.array([[0, 1, -1], [1, 0, -1], [2, -1, -1], [0, 1, 2], [2, -1, -1]])
    lengths = np.array([2, 2, 1, 3, 1])
    # numbered by their first sequence; {0, 1} != {0, 1, 2}
    assert plan_ids(order, lengths).tolist() == [0, 0, 1, 2, 1]


def test_take_keeps_the_chosen_sequences_in_the_order_given():
    result = result_with_plans([[0], [1], [2, 3]])
    result.objectives["gower_distance"] = np.array([0.3, 0.2, 0.1])
    taken = result.take([2, 0])
    assert taken.n_solutions == 2
    assert taken.lengths.tolist() == [2, 1]
    assert taken.order[0, :2].tolist() == [2, 3]
    assert taken.sequence_cost.tolist() == [2.0, 0.0]
    assert taken.objectives["gower_distance"].tolist() == [0.1, 0.3]
    # an instance without sequences takes nothing
    empty = InstanceResult(x0=np.zeros(2), target=1, status=STATUS_NO_COUNTERFACTUAL)
    assert empty.take([0]) is empty and empty.n_solutions == 0


def test_the_final_state_is_the_state_after_the_last_step():
    result = result_with_plans([[0], [1, 2]])
    result.states[1, 2] = [7.0, 8.0]
    assert result.final_state(1).tolist() == [7.0, 8.0]
    assert result.sequence_effort.tolist() == [0.0, 0.0]


def test_compact_keeps_every_sequence_when_asked_for_all():
    result = result_with_plans([[0], [1, 0], [0, 1]])
    assert compact(result, max_plans=None, all_orders=True) is result
    # the cheapest order of each plan
    cheapest = compact(result, max_plans=None, all_orders=False)
    assert cheapest.lengths.tolist() == [1, 2]
    assert cheapest.sequence_cost.tolist() == [0.0, 1.0]

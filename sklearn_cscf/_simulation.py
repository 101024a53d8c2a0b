"""Apply decoded sequences to an instance: states, efforts, discounts, validity.

The loop runs over steps and, within a step, over the actions used at that
step; each action is applied to all candidates that use it there at once.
"""

from dataclasses import dataclass

import numpy as np

from sklearn_cscf._decoding import decode_order, value_keys


@dataclass
class Trajectories:
    """Outcome of simulating many sequences from one instance."""

    order: np.ndarray  # (n, N) action indices in order, -1 padded
    lengths: np.ndarray  # (n,)
    final: np.ndarray  # (n, d) encoded final states
    effort: np.ndarray  # (n, N) effort b of each step (0 past the end)
    discount: np.ndarray  # (n, N) discount g of each step (1 past the end)
    new_values: np.ndarray  # (n, N) encoded value set directly at each step
    violations: np.ndarray  # (n,) number of invalid steps
    states: np.ndarray | None = None  # (n, N + 1, d) states after each step

    @property
    def step_cost(self):
        return self.effort * self.discount

    @property
    def sequence_cost(self):
        return self.step_cost.sum(axis=1)

    @property
    def sequence_effort(self):
        return self.effort.sum(axis=1)


def simulate(x0, keys, actions, graph, max_length=None, record=False):
    """Decode ``keys`` and apply each sequence to the encoded instance ``x0``.

    Parameters
    ----------
    x0 : ndarray of shape (n_features,)
        Encoded instance.
    keys : ndarray of shape (n, 2 * n_actions)
        Random-key genotypes.
    actions : list of CompiledAction
    graph : CompiledGraph
    max_length : int, default=None
    record : bool, default=False
        Also keep the state after every step.

    Returns
    -------
    Trajectories
    """
    n_actions = len(actions)
    order, lengths = decode_order(keys, n_actions, max_length)
    values = value_keys(keys, n_actions)
    n = keys.shape[0]
    state = np.repeat(x0[None, :], n, axis=0)
    effort = np.zeros((n, n_actions))
    discount = np.ones((n, n_actions))
    new_values = np.full((n, n_actions), np.nan)
    violations = np.zeros(n, dtype=np.intp)
    features = np.array([action.feature for action in actions], dtype=np.intp)
    states = None
    if record:
        states = np.empty((n, n_actions + 1, x0.shape[0]))
        states[:] = x0
    for t in range(int(lengths.max(initial=0))):
        # candidates still acting at step t, grouped by the action they apply
        rows = np.flatnonzero(lengths > t)
        used = order[rows, t]
        by_action = np.argsort(used, kind="stable")
        rows, used = rows[by_action], used[by_action]
        starts = np.flatnonzero(used[1:] != used[:-1]) + 1
        starts = np.concatenate(([0], starts)) if used.size else starts
        groups = used[starts]
        ends = np.append(starts[1:], used.shape[0])
        before = state[rows]
        before.flags.writeable = False  # user callables only read states
        step_keys = values[rows, used]
        after = np.empty_like(before)
        step_effort = np.empty(rows.shape[0])
        step_valid = np.empty(rows.shape[0], dtype=bool)
        for i, start, end in zip(groups.tolist(), starts.tolist(), ends.tolist()):
            block = slice(start, end)
            actions[i].apply_into(
                before[block],
                step_keys[block],
                after[block],
                step_effort[block],
                step_valid[block],
            )
        state[rows] = after
        effort[rows, t] = step_effort
        if t == 0:  # every candidate starts from x0: evaluate tau once
            discount[rows, t] = graph.discounts(x0[None, :], used, groups)
        else:
            discount[rows, t] = graph.discounts(before, used, groups)
        new_values[rows, t] = after[np.arange(rows.shape[0]), features[used]]
        violations[rows] += ~step_valid
        if record:
            states[:, t + 1] = state
    return Trajectories(
        order=order,
        lengths=lengths,
        final=state,
        effort=effort,
        discount=discount,
        new_values=new_values,
        violations=violations,
        states=states,
    )

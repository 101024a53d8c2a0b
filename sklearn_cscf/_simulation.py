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


def simulate(x0, keys, actions, graph, max_length=None, record=False, x0_taus=None):
    """Decode ``keys`` and apply each sequence to the encoded instance ``x0``.

    Candidates advance through their own sequences in batches: each batch
    applies one action to every candidate whose next step it is. The action
    picked next is the one most candidates are waiting for, which needs far
    fewer batches (each one call of the action's callables) than going step
    by step when the population shares similar orders.

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
    x0_taus : ndarray of shape (1, n_edges), default=None
        ``graph.edge_values`` of ``x0``, when already known.

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
    states = None
    if record:
        states = np.empty((n, n_actions + 1, x0.shape[0]))
        states[:] = x0
    if x0_taus is None:
        x0_taus = graph.edge_values(x0[None, :])
    discounts = graph.tracker(x0_taus, n)
    progress = np.zeros(n, dtype=np.intp)  # steps taken so far
    waiting = np.flatnonzero(lengths > 0)
    while waiting.size:
        upcoming = order[waiting, progress[waiting]]
        i = int(np.bincount(upcoming, minlength=n_actions).argmax())
        rows = waiting[upcoming == i]
        step = progress[rows]
        action = actions[i]
        before = state[rows]
        before.flags.writeable = False  # user callables only read states
        after = np.empty_like(before)
        step_effort = np.empty(rows.shape[0])
        step_valid = np.empty(rows.shape[0], dtype=bool)
        action.apply_into(before, values[rows, i], after, step_effort, step_valid)
        # tau is evaluated on the state before the step
        discount[rows, step] = discounts.discount(state, rows, i)
        state[rows] = after
        discounts.changed(rows, i)
        effort[rows, step] = step_effort
        new_values[rows, step] = after[:, action.feature]
        violations[rows] += ~step_valid
        if record:
            states[rows, step + 1] = after
        progress[rows] = step + 1
        waiting = waiting[progress[waiting] < lengths[waiting]]
    if record:
        # past the end of a sequence its state stays the final one
        positions = np.arange(n_actions + 1)
        finished = positions[None, :] > lengths[:, None]
        states[finished] = np.repeat(state, finished.sum(axis=1), axis=0)
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

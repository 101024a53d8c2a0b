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


def schedule(order, n_actions):
    """Batches in which the sequences can be applied, one action per batch.

    Each candidate's steps are split into rounds: a new round starts whenever
    its next action has a lower index than the previous one. Batches are the
    (round, action) pairs in lexicographic order, so every candidate's steps
    come in its own order; populations that share similar orders need few
    batches (about 20 per generation for 6 actions, against about 30 when
    going step by step).

    Returns the (candidate, step) pairs sorted by batch, and where each batch
    starts and ends in them, with its action.
    """
    active = order >= 0
    action = np.maximum(order, 0)
    new_round = np.zeros(order.shape, dtype=np.intp)
    new_round[:, 1:] = (action[:, 1:] < action[:, :-1]) & active[:, 1:]
    batch = np.cumsum(new_round, axis=1) * n_actions + action
    rows, steps = np.nonzero(active)
    by_batch = np.argsort(batch[rows, steps], kind="stable")
    rows, steps = rows[by_batch], steps[by_batch]
    batch = batch[rows, steps]
    starts = np.flatnonzero(np.diff(batch)) + 1
    starts = np.concatenate([[0], starts]) if batch.size else starts
    ends = np.append(starts[1:], batch.size)
    return rows, steps, starts, ends, order[rows[starts], steps[starts]]


def simulate(x0, keys, actions, graph, max_length=None, record=False, x0_taus=None):
    """Decode ``keys`` and apply each sequence to the encoded instance ``x0``.

    The steps of all candidates are applied in batches (see :func:`schedule`):
    each batch applies one action to many candidates at once, with one call of
    each of the action's callables.

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
    n = keys.shape[0]
    rows, steps, starts, ends, batch_actions = schedule(order, n_actions)
    step_actions = order[rows, steps]
    step_keys = value_keys(keys, n_actions)[rows, step_actions]
    # per (candidate, step), in batch order
    after = np.empty((rows.shape[0], x0.shape[0]))
    step_effort = np.empty(rows.shape[0])
    step_discount = np.ones(rows.shape[0])
    step_valid = np.empty(rows.shape[0], dtype=bool)
    state = np.repeat(x0[None, :], n, axis=0)
    if x0_taus is None:
        x0_taus = graph.edge_values(x0[None, :])
    x0_discounts = (x0_taus @ graph.edge_weights.T)[0]
    for i, start, end in zip(batch_actions.tolist(), starts.tolist(), ends.tolist()):
        batch = slice(start, end)
        candidates = rows[batch]
        before = state[candidates]
        before.flags.writeable = False  # user callables only read states
        actions[i].apply_into(
            before,
            step_keys[batch],
            after[batch],
            step_effort[batch],
            step_valid[batch],
        )
        if graph.has_target[i]:  # tau is evaluated on the state before the step
            if steps[batch].any():
                step_discount[batch] = graph.action_discount(before, i)
            else:  # every candidate is still at x0
                step_discount[batch] = x0_discounts[i]
        state[candidates] = after[batch]
    effort = np.zeros((n, n_actions))
    effort[rows, steps] = step_effort
    discount = np.ones((n, n_actions))
    discount[rows, steps] = step_discount
    new_values = np.full((n, n_actions), np.nan)
    features = np.array([action.feature for action in actions], dtype=np.intp)
    new_values[rows, steps] = after[np.arange(rows.shape[0]), features[step_actions]]
    violations = np.bincount(rows, weights=~step_valid, minlength=n).astype(np.intp)
    states = None
    if record:
        states = np.empty((n, n_actions + 1, x0.shape[0]))
        states[:, 0] = x0
        states[rows, steps + 1] = after
        # past the end of a sequence its state stays the final one
        finished = np.arange(n_actions + 1)[None, :] > lengths[:, None]
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

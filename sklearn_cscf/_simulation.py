"""Apply decoded sequences to their start states: states, efforts, discounts,
validity.

The candidates may come from many instances at once. The loop runs over
batches of (candidate, step) pairs that use the same action (see
:func:`schedule`); each action is applied to all candidates of a batch at once.
"""

from dataclasses import dataclass

import numpy as np

from sklearn_cscf._decoding import decode_order, value_keys

# decoded values equal to this many decimals make the same sequence
VALUE_DECIMALS = 9


@dataclass
class Trajectories:
    """Outcome of simulating many sequences, each from its start state."""

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
        # an invalid step's infinite effort stays infinite, even discounted
        # to 0 (inf * 0 would be NaN)
        with np.errstate(invalid="ignore"):
            cost = self.effort * self.discount
        return np.where(np.isinf(self.effort), self.effort, cost)

    @property
    def sequence_cost(self):
        return self.step_cost.sum(axis=1)

    @property
    def sequence_effort(self):
        return self.effort.sum(axis=1)

    def take(self, rows):
        """The trajectories of candidates ``rows`` (indices or a mask)."""
        return Trajectories(
            order=self.order[rows],
            lengths=self.lengths[rows],
            final=self.final[rows],
            effort=self.effort[rows],
            discount=self.discount[rows],
            new_values=self.new_values[rows],
            violations=self.violations[rows],
            states=None if self.states is None else self.states[rows],
        )

    def sequence_keys(self):
        """Bytes that are equal exactly when two decoded sequences are equal
        (same actions, order, and values to ``VALUE_DECIMALS`` decimals)."""
        values = np.where(np.isnan(self.new_values), -np.inf, self.new_values)
        rows = np.hstack(
            [self.order.astype(float), np.round(values, VALUE_DECIMALS) + 0.0]
        )
        return _row_bytes(rows)


def _row_bytes(rows):
    rows = np.ascontiguousarray(rows)
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()


def order_keys(order):
    """Bytes that are equal exactly when two sequences use the same actions in
    the same order."""
    return _row_bytes(order.astype(np.int64))


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


def simulate(
    starts, keys, actions, graph, *, max_length=None, record=False, start_discounts=None
):
    """Decode ``keys`` and apply each sequence to its start state.

    The candidates may come from many instances: row ``r`` of ``keys`` is
    applied to row ``r`` of ``starts``. The steps of all candidates are applied
    in batches (see :func:`schedule`): each batch applies one action to many
    candidates at once, with one call of each of the action's callables.

    Parameters
    ----------
    starts : ndarray of shape (n, n_features) or (n_features,)
        Encoded start state (the instance) of each candidate, or one start
        state for all.
    keys : ndarray of shape (n, 2 * n_actions)
        Random-key genotypes.
    actions : list of CompiledAction
    graph : CompiledGraph
    max_length : int, default=None
    record : bool, default=False
        Also keep the state after every step.
    start_discounts : ndarray of shape (n, n_actions), default=None
        The discount of each action on each candidate's start state, when
        already known (a first step needs no tau call then).

    Returns
    -------
    Trajectories
    """
    n_actions = len(actions)
    order, lengths = decode_order(keys, n_actions, max_length)
    n, d = keys.shape[0], np.shape(starts)[-1]
    rows, steps, starts_at, ends, batch_actions = schedule(order, n_actions)
    step_actions = order[rows, steps]
    step_keys = value_keys(keys, n_actions)[rows, step_actions]
    # per (candidate, step), in batch order
    after = np.empty((rows.shape[0], d))
    step_effort = np.empty(rows.shape[0])
    step_discount = np.ones(rows.shape[0])
    step_valid = np.empty(rows.shape[0], dtype=bool)
    state = np.array(np.broadcast_to(starts, (n, d)), dtype=float)
    for i, start, end in zip(batch_actions.tolist(), starts_at.tolist(), ends.tolist()):
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
            step_discount[batch] = _discounts(
                graph, i, before, candidates, steps[batch], start_discounts
            )
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
        states = np.empty((n, n_actions + 1, d))
        states[:, 0] = starts
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


def _discounts(graph, action, before, candidates, steps, start_discounts):
    """Eq. 2 for one batch; first steps take the known start discounts."""
    if start_discounts is None:
        return graph.action_discount(before, action)
    first = steps == 0
    if first.all():
        return start_discounts[candidates, action]
    discount = start_discounts[candidates, action]
    later = ~first
    discount[later] = graph.action_discount(before[later], action)
    return discount

"""Apply decoded sequences to their start states: states, efforts, discounts,
validity.

The candidates may come from many instances at once. The loop runs over
batches of (candidate, step) pairs that use the same action (see
:func:`schedule`); each action is applied to all candidates of a batch at once.
"""

from dataclasses import dataclass, field

import numpy as np

from sklearn_cscf._engine._genotypes import decode_order
from sklearn_cscf._engine._workspace import Workspace
from sklearn_cscf._rows import put_rows, row_cumsum, row_sums, take_rows

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
    # where the arrays derived from these live (see simulate); None: fresh
    work: Workspace | None = field(default=None, repr=False, compare=False)

    @property
    def step_cost(self):
        # an invalid step's infinite effort stays infinite, even discounted
        # to 0 (inf * 0 would be NaN)
        work = Workspace() if self.work is None else self.work
        cost = work.empty("step_cost", self.effort.shape)
        with np.errstate(invalid="ignore"):
            np.multiply(self.effort, self.discount, out=cost)
        infinite = np.isinf(self.effort, out=work.empty("inf", cost.shape, bool))
        np.copyto(cost, self.effort, where=infinite)
        return cost

    @property
    def sequence_cost(self):
        step_cost = self.step_cost
        work = Workspace() if self.work is None else self.work
        out = work.empty("sequence_cost", step_cost.shape[0])
        return row_sums(step_cost, out)

    @property
    def sequence_effort(self):
        return self.effort.sum(axis=1)

    def take(self, rows):
        """The trajectories of candidates ``rows`` (indices or a mask)."""
        return Trajectories(
            order=take_rows(self.order, rows),
            lengths=self.lengths[rows],
            final=take_rows(self.final, rows),
            effort=take_rows(self.effort, rows),
            discount=take_rows(self.discount, rows),
            new_values=take_rows(self.new_values, rows),
            violations=self.violations[rows],
            states=None if self.states is None else take_rows(self.states, rows),
        )

    def sequence_keys(self):
        """Bytes that are equal exactly when two decoded sequences are equal
        (same actions, order, and values to ``VALUE_DECIMALS`` decimals)."""
        work = Workspace() if self.work is None else self.work
        n, n_actions = self.order.shape
        rows = work.empty("sequence_keys", (n, 2 * n_actions))
        rows[:, :n_actions] = self.order
        values = rows[:, n_actions:]
        np.copyto(values, self.new_values)
        missing = np.isnan(values, out=work.empty("nan", values.shape, bool))
        np.copyto(values, -np.inf, where=missing)
        np.round(values, VALUE_DECIMALS, out=values)
        np.add(values, 0.0, out=values)
        return row_bytes(rows)


def row_bytes(rows):
    """Each row of the 2-D array ``rows`` as one item of bytes (a void array:
    equal exactly when the rows are equal bit for bit)."""
    rows = np.ascontiguousarray(rows)
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()


def order_keys(order):
    """Bytes that are equal exactly when two sequences use the same actions in
    the same order."""
    return row_bytes(order.astype(np.int64))


def schedule(order, n_actions, work=None):
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
    work = Workspace() if work is None else work
    n = order.shape[0]
    active = np.greater_equal(order, 0, out=work.empty("active", order.shape, bool))
    action = np.maximum(order, 0, out=work.empty("action", order.shape, np.intp))
    # small batch numbers sort by radix (numpy's stable sort of 16-bit ints)
    small = n_actions * (n_actions + 1) < 2**15
    new_round = work.empty("round", order.shape, np.int16 if small else np.intp)
    new_round[:, 0] = 0
    later = np.less(
        action[:, 1:], action[:, :-1], out=work.empty("later", (n, n_actions - 1), bool)
    )
    np.logical_and(later, active[:, 1:], out=later)
    new_round[:, 1:] = later
    # the batch of each step: round * n_actions + action
    batch = row_cumsum(new_round)
    batch *= n_actions
    batch += action
    # the steps taken, in row-major order, then (stably) by batch
    flat = np.flatnonzero(active)
    # (mode="clip": the indices are valid, and the default mode writes
    # through a copy)
    step_batch = np.take(
        batch.ravel(),
        flat,
        out=work.empty("step_batch", flat.shape, batch.dtype),
        mode="clip",
    )
    by_batch = np.argsort(step_batch, kind="stable")
    flat = np.take(
        flat, by_batch, out=work.empty("flat", flat.shape, np.intp), mode="clip"
    )
    rows = np.floor_divide(flat, n_actions, out=work.empty("rows", flat.shape, np.intp))
    steps = np.remainder(flat, n_actions, out=work.empty("steps", flat.shape, np.intp))
    batch = np.take(
        step_batch,
        by_batch,
        out=work.empty("batch", flat.shape, step_batch.dtype),
        mode="clip",
    )
    change = np.not_equal(
        batch[1:], batch[:-1], out=work.empty("change", max(batch.size - 1, 0), bool)
    )
    starts = np.flatnonzero(change) + 1
    starts = np.concatenate([[0], starts]) if batch.size else starts
    ends = np.append(starts[1:], batch.size)
    return rows, steps, starts, ends, order[rows[starts], steps[starts]]


def simulate(
    starts,
    keys,
    actions,
    graph,
    *,
    max_length=None,
    record=False,
    start_discounts=None,
    work=None,
    decoded=None,
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
    work : Workspace, default=None
        Where the arrays of the result (and those derived from it, such as
        its costs) are kept, valid until the next use of ``work``: the
        search's hot path reuses them from one generation to the next.
        ``None``: fresh arrays.
    decoded : tuple of ndarray, default=None
        The order and lengths of ``keys`` (:func:`decode_order` with
        ``max_length``), when already decoded.

    Returns
    -------
    Trajectories
    """
    given = work
    work = Workspace() if work is None else work
    n_actions = len(actions)
    if decoded is None:
        decoded = decode_order(keys, n_actions, max_length, work)
    order, lengths = decoded
    n, d = keys.shape[0], np.shape(starts)[-1]
    rows, steps, starts_at, ends, batch_actions = schedule(order, n_actions, work)
    n_steps = rows.shape[0]
    # per (candidate, step), in batch order
    step_actions = order[rows, steps]
    step_keys = keys[rows, step_actions + n_actions]  # the value keys V
    after = work.empty("after", (n_steps, d))
    step_effort = work.empty("step_effort", n_steps)
    step_discount = work.full("step_discount", n_steps, 1.0)
    step_valid = work.empty("step_valid", n_steps, bool)
    state = work.empty("state", (n, d))
    np.copyto(state, starts)
    for i, start, end in zip(batch_actions.tolist(), starts_at.tolist(), ends.tolist()):
        batch = slice(start, end)
        candidates = rows[batch]
        before = work.take("before", state, candidates)
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
        put_rows(state, candidates, after[batch])
    effort = work.full("effort", (n, n_actions), 0.0)
    effort[rows, steps] = step_effort
    discount = work.full("discount", (n, n_actions), 1.0)
    discount[rows, steps] = step_discount
    new_values = work.full("new_values", (n, n_actions), np.nan)
    features = np.array([action.feature for action in actions], dtype=np.intp)
    # the value each step set: after[k, features[step_actions[k]]]
    where = np.multiply(
        work.arange(n_steps), d, out=work.empty("where", n_steps, np.intp)
    )
    where += features[step_actions]
    new_values[rows, steps] = np.take(after.ravel(), where)
    # the invalid steps of each candidate (few: counted where they are)
    violations = np.bincount(rows[~step_valid], minlength=n)
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
        work=given,
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
    discount[later] = graph.action_discount(take_rows(before, later), action)
    return discount

"""The model's answers, and the memo of those already given.

- :class:`Answers`: the decisions (and probabilities, or a regressor's
  predictions) for a batch of states.
- :class:`AnswerMemo` remembers, per instance, the answers to states already
  asked (by a 64-bit hash of the encoded state, :func:`state_hashes`), within
  a bounded size.
"""

from dataclasses import dataclass

import numpy as np

from sklearn_cscf._workspace import Workspace

# answers remembered per instance before its memo starts afresh
MEMO_LIMIT = 50_000


@dataclass
class Answers:
    """The model's answers for a batch of states.

    ``decision`` is the index of the predicted class (0 for a regressor);
    ``output`` the class probabilities ``(n, n_classes)``, or a regressor's
    predictions ``(n, 2)`` (rounded, and as the model gave them), or ``None``
    (a classifier without ``predict_proba``).
    """

    decision: np.ndarray
    output: np.ndarray | None

    def take(self, index):
        return Answers(
            self.decision[index], None if self.output is None else self.output[index]
        )


_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)


def _mix_into(z, spare):
    """splitmix64's finaliser of ``z``, element-wise on uint64 (wrapping), in
    place (``spare``: an array of its shape)."""
    for shift, factor in ((30, _MIX_1), (27, _MIX_2), (31, None)):
        np.right_shift(z, np.uint64(shift), out=spare)
        np.bitwise_xor(z, spare, out=z)
        if factor is not None:
            np.multiply(z, factor, out=z)
    return z


def state_hashes(states, work=None):
    """A 64-bit hash of each encoded state (row); equal states hash equally.

    ``-0.0`` and ``0.0`` hash alike, and so do all NaNs. Each column is mixed
    with its own salt, so states differing in any value almost surely differ.
    With a :class:`~sklearn_cscf._workspace.Workspace` ``work``, the work
    arrays and the result come from it.
    """
    d = states.shape[1]
    salts = _mix_into(np.arange(1, d + 1, dtype=np.uint64), np.empty(d, np.uint64))
    work = Workspace() if work is None else work
    canonical = work.empty("hash_states", states.shape)
    np.copyto(canonical, states)
    nan = np.isnan(canonical, out=work.empty("hash_nan", states.shape, bool))
    np.copyto(canonical, np.nan, where=nan)
    np.add(canonical, 0.0, out=canonical)
    bits = canonical.view(np.uint64)
    np.bitwise_xor(bits, salts, out=bits)
    _mix_into(bits, work.empty("hash_spare", states.shape, np.uint64))
    out = work.empty("hashes", states.shape[0], np.uint64)
    return np.bitwise_xor.reduce(bits, axis=1, out=out)


class AnswerMemo:
    """The answers already given for one instance's states, by state hash.

    Holds at most ``limit`` answers; when full, it starts afresh (it is only
    a cache: a forgotten state is asked again). Its arrays live in buffers
    that grow by doubling, so that remembering a generation's states moves
    the remembered ones in place instead of allocating them anew.
    """

    def __init__(self, width, limit=MEMO_LIMIT):
        self.limit = limit
        self.width = width
        self._capacity = 0
        self._reserve(0)
        self._clear()

    def _clear(self):
        self._n = 0
        self._with_output = False

    def _reserve(self, n):
        """Room for ``n`` answers (the remembered ones kept)."""
        if n <= self._capacity and self._capacity:
            return
        capacity = max(n, 2 * self._capacity, 64)
        old = self._capacity and self._n
        for name, shape, dtype in (
            ("_hashes", (capacity,), np.uint64),  # sorted
            ("_slots", (capacity,), np.intp),  # row of each hash in the store
            ("_decision", (capacity,), np.intp),
            ("_output", (capacity, self.width), float),
        ):
            array = np.empty(shape, dtype=dtype)
            if old:
                array[:old] = getattr(self, name)[:old]
            setattr(self, name, array)
        # where the merge of new hashes writes; and its index arithmetic
        self._spare_hashes = np.empty(capacity, dtype=np.uint64)
        self._spare_slots = np.empty(capacity, dtype=np.intp)
        self._moves = np.empty(capacity + 1, dtype=np.intp)
        self._capacity = capacity

    @property
    def hashes(self):
        return self._hashes[: self._n]

    @property
    def slots(self):
        return self._slots[: self._n]

    @property
    def decision(self):
        return self._decision[: self._n]

    @property
    def output(self):
        return self._output[: self._n if self._with_output else 0]

    def __len__(self):
        return self._n

    def lookup(self, hashes):
        """Store row of each hash, ``-1`` where it is not remembered."""
        if len(self) == 0:
            return np.full(hashes.shape, -1, dtype=np.intp)
        remembered = self.hashes
        position = np.searchsorted(remembered, hashes)
        position = np.minimum(position, len(self) - 1)
        found = remembered[position] == hashes
        return np.where(found, self.slots[position], -1)

    def insert(self, hashes, answers):
        """Remember the answers to the states of ``hashes`` (sorted, distinct,
        not yet remembered)."""
        k = hashes.shape[0]
        if len(self) + k > self.limit:
            self._clear()
        m = self._n
        self._reserve(m + k)
        # answers are stored in arrival order: the slots m .. m + k - 1
        self._decision[m : m + k] = answers.decision
        if answers.output is not None:
            self._output[m : m + k] = answers.output
            self._with_output = True
        # the merged order: new hash j goes before remembered hash
        # position[j], i.e. to position[j] + j; remembered hash i moves to
        # i + (new hashes placed at or before i) = cumsum(1 + placed)[i] - 1
        position = np.searchsorted(self._hashes[:m], hashes)
        placed, count = np.unique(position, return_counts=True)
        moves = self._moves[: m + 1]
        moves.fill(1)
        moves[placed] += count
        target = np.cumsum(moves[:m], out=moves[:m])
        target -= 1
        hashes_to, slots_to = self._spare_hashes, self._spare_slots
        hashes_to[target] = self._hashes[:m]
        slots_to[target] = self._slots[:m]
        position += np.arange(k)
        hashes_to[position] = hashes
        slots_to[position] = np.arange(m, m + k)
        self._spare_hashes, self._hashes = self._hashes, hashes_to
        self._spare_slots, self._slots = self._slots, slots_to
        self._n = m + k

    def answers(self, slots):
        output = self.output[slots] if self._with_output else None
        return Answers(self.decision[slots], output)

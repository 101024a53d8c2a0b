"""The model's answers, and the memo of those already given.

- :class:`Answers`: the decisions (and probabilities, or a regressor's
  predictions) for a batch of states.
- :class:`AnswerMemo` remembers the answers to the states the instances of a
  block already asked about (by instance and a 64-bit hash of the encoded
  state, :func:`~sklearn_cscf._engine._hashing.state_hashes`), within a
  bounded size per instance.
"""

from dataclasses import dataclass

import numpy as np

from sklearn_cscf._engine._hashing import MIX_2
from sklearn_cscf._rows import put_rows, take_rows

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
            self.decision[index],
            None if self.output is None else take_rows(self.output, index),
        )


class AnswerMemo:
    """The answers already given to the states of a block's instances, by
    (instance, state hash).

    One open-addressing hash table (linear probing, at most half full) for
    every instance of the block, so that a batch of states of many instances
    is looked up, and remembered, in a few vectorised rounds instead of one
    call per instance. Each instance holds at most ``limit`` answers; when
    one would hold more, its answers are forgotten and it starts afresh (it
    is only a cache: a forgotten state is asked again).

    Parameters
    ----------
    n_members : int
        The instances of the block.
    width : int
        Columns of the model's output (``Answers.output``).
    limit : int, default=MEMO_LIMIT
    """

    def __init__(self, n_members, width, limit=MEMO_LIMIT):
        self.limit = limit
        self.width = width
        self.counts = np.zeros(n_members, dtype=np.intp)  # answers per instance
        self._with_output = False
        self._allocate(1024)

    def _allocate(self, capacity):
        # compact slots (36 bytes with two outputs): the table is the
        # largest array of a block, read and written at random. A slot's
        # instance is stored plus one, 0 marking a free slot
        self._hashes = np.zeros(capacity, dtype=np.uint64)
        self._owners = np.zeros(capacity, dtype=np.int32)
        self._decision = np.zeros(capacity, dtype=np.int32)
        self._output = np.zeros((capacity, self.width))
        self._claims = np.zeros(capacity, dtype=np.int32)  # scratch for _place

    @property
    def capacity(self):
        return self._hashes.shape[0]

    def _members_at(self, slots):
        """The instance of each of ``slots`` (-1: free)."""
        return self._owners[slots].astype(np.intp) - 1

    def __len__(self):
        return int(self.counts.sum())

    def _home(self, hashes, members):
        """The first slot probed for each (hash, member)."""
        mixed = np.bitwise_xor(hashes, members.astype(np.uint64) * MIX_2)
        return (mixed & np.uint64(self.capacity - 1)).astype(np.intp)

    def lookup(self, hashes, members):
        """The slot of each (state hash, instance), ``-1`` where its answer
        is not remembered."""
        n = hashes.shape[0]
        slots = np.full(n, -1, dtype=np.intp)
        position = self._home(hashes, members)
        todo = np.arange(n)
        mask = self.capacity - 1
        owners = members + 1
        while todo.size:
            at = position[todo]
            owner = self._owners[at]
            used = owner != 0
            match = used & (self._hashes[at] == hashes[todo])
            match &= owner == owners[todo]
            slots[todo[match]] = at[match]
            further = used & ~match
            todo = todo[further]
            position[todo] = (at[further] + 1) & mask
        return slots

    def answers(self, slots):
        """The remembered :class:`Answers` at ``slots``."""
        return Answers(
            self._decision, self._output if self._with_output else None
        ).take(slots)

    def insert(self, hashes, members, answers):
        """Remember the answers to the states of ``hashes`` of instances
        ``members`` (distinct pairs, not yet remembered)."""
        k = hashes.shape[0]
        if k == 0:
            return
        adding = np.bincount(members, minlength=self.counts.shape[0])
        full = (self.counts + adding > self.limit) & (adding > 0)
        if full.any():  # those instances start afresh
            member = self._members_at(slice(None))
            self._rehash(keep=(member >= 0) & ~full[member])
            self.counts[full] = 0
        if 2 * (len(self) + k) > self.capacity:
            self._rehash(keep=self._owners != 0, size=len(self) + k)
        self._with_output |= answers.output is not None
        self._place(hashes, members, answers)
        self.counts += adding

    def _rehash(self, keep, size=0):
        """The table again, with the slots ``keep`` only, and room for
        ``size`` answers."""
        rows = np.flatnonzero(keep)
        hashes, members = self._hashes[rows], self._members_at(rows)
        kept = Answers(self._decision, self._output).take(rows)
        capacity = self.capacity
        while 2 * size > capacity:
            capacity *= 2
        self._allocate(capacity)
        self._place_in_empty(hashes, members, kept)

    def _place_in_empty(self, hashes, members, answers):
        """:meth:`_place` into an empty table, without probing: by home slot,
        each pair takes its home or the slot after the one before it,
        whichever is later, which is where probing one at a time in that
        order would put it (a running maximum); the few pushed past the end
        are placed by probing, from the start of the table."""
        home = self._home(hashes, members)
        order = np.argsort(home)
        home = home[order]
        k = np.arange(home.shape[0])
        np.subtract(home, k, out=home)
        slots = np.maximum.accumulate(home)
        slots += k
        inside = slots < self.capacity
        self._store(slots[inside], order[inside], hashes, members, answers)
        beyond = order[~inside]
        if beyond.size:
            self._place(hashes[beyond], members[beyond], answers.take(beyond))

    def _place(self, hashes, members, answers):
        position = self._home(hashes, members)
        mask = self.capacity - 1
        todo = np.arange(hashes.shape[0])
        while todo.size:
            at = position[todo]
            free = np.flatnonzero(self._owners[at] == 0)
            # of the pairs probing a free slot, one of each slot takes it
            self._claims[at[free]] = free
            taking = free[self._claims[at[free]] == free]
            self._store(at[taking], todo[taking], hashes, members, answers)
            placed = np.zeros(todo.shape[0], dtype=bool)
            placed[taking] = True
            todo = todo[~placed]
            position[todo] = (at[~placed] + 1) & mask

    def _store(self, slots, rows, hashes, members, answers):
        """Remember the pairs ``rows`` (and their answers) in ``slots``."""
        self._hashes[slots] = hashes[rows]
        self._owners[slots] = members[rows] + 1
        self._decision[slots] = answers.decision[rows]
        if answers.output is not None:
            put_rows(self._output, slots, take_rows(answers.output, rows))

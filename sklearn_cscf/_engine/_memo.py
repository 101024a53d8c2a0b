"""The model's answers, and the memo of those already given.

- :class:`Answers`: the decisions (and probabilities, or a regressor's
  predictions) for a batch of states.
- :class:`AnswerMemo` remembers the answers to the states the instances of a
  block already asked about (by instance and a 64-bit hash of the encoded
  state, :func:`state_hashes`), within a bounded size per instance.
"""

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sklearn_cscf._engine._workspace import Workspace
from sklearn_cscf._rows import put_rows, row_xor, take_rows

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


@functools.cache
def _salts(d):
    """One 64-bit salt per column of ``d`` columns (read-only)."""
    salts = _mix_into(np.arange(1, d + 1, dtype=np.uint64), np.empty(d, np.uint64))
    salts.flags.writeable = False
    return salts


@functools.cache
def _odd_salts(d):
    salts = _salts(d) | np.uint64(1)
    salts.flags.writeable = False
    return salts


def word_hashes(words):
    """A 64-bit hash of each row of the uint64 array ``words``; equal rows
    hash equally.

    Cheaper than :func:`state_hashes` (each word folded and multiplied by an
    odd salt of its column, the products summed, the sum mixed), and weaker:
    callers check the rows of equal hashes.
    """
    # the high half folded into the low one: floats' low bits are often zero
    bits = np.right_shift(words, np.uint64(32))
    np.bitwise_xor(bits, words, out=bits)
    # the products summed (wrapping): one product with the salts
    hashes = bits @ _odd_salts(words.shape[1])
    return _mix_into(hashes, np.empty_like(hashes))


def first_rows(values):
    """Each value's number among the distinct ``values`` (1-D), numbered in
    the order of their first row, and the first row of each: a hash table
    (linear time), where sorting would take ``n log n``.

    Examples
    --------
    >>> codes, first = first_rows(np.array([7, 3, 7, 5, 3]))
    >>> codes.tolist(), first.tolist()
    ([0, 1, 0, 2, 1], [0, 1, 3])
    """
    codes, _ = pd.factorize(values)
    # the first row of a value is where the running largest number grows
    grows = np.empty(codes.shape[0], dtype=bool)
    grows[:1] = True
    np.greater(codes[1:], np.maximum.accumulate(codes)[:-1], out=grows[1:])
    return codes, np.flatnonzero(grows)


# below this many values, a stable sort finds first rows faster than
# pandas' hash table (whose fixed cost per call dominates small arrays)
SORT_BELOW = 1024


def first_sources(values):
    """For each of ``values`` (1-D), the index of the first row holding it.

    Examples
    --------
    >>> first_sources(np.array([7, 3, 7, 5, 3])).tolist()
    [0, 1, 0, 3, 1]
    """
    n = values.shape[0]
    if n >= SORT_BELOW:
        codes, first = first_rows(values)
        return first[codes]
    # a stable sort keeps equal values in row order: each run starts at its
    # first row
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.empty(n, dtype=bool)
    starts[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    source = np.empty(n, dtype=np.intp)
    source[order] = order[starts][np.cumsum(starts) - 1]
    return source


def state_hashes(states, work=None, columns=None):
    """A 64-bit hash of each encoded state (row); equal states hash equally.

    ``-0.0`` and ``0.0`` hash alike, and so do all NaNs. Each column is mixed
    with its own salt, so states differing in any value almost surely differ.
    With a :class:`~sklearn_cscf._engine._workspace.Workspace` ``work``, the work
    arrays and the result come from it.

    A state's hash is the exclusive or of one word per column: ``columns``
    (indices) hashes only those columns of ``states``, and the exclusive or
    of that and the hash of the other columns is the whole state's hash.

    Examples
    --------
    >>> states = np.array([[1.0, -0.0, np.nan], [1.0, 0.0, np.nan]])
    >>> whole = state_hashes(states)
    >>> bool(whole[0] == whole[1])
    True
    >>> left = state_hashes(states, columns=np.array([0]))
    >>> right = state_hashes(states, columns=np.array([1, 2]))
    >>> bool(((left ^ right) == whole).all())
    True
    """
    salts = _salts(states.shape[1])
    work = Workspace() if work is None else work
    if columns is None:
        canonical = work.empty("hash_states", states.shape)
        np.copyto(canonical, states)
    else:
        salts = salts[columns]
        canonical = work.empty("hash_states", (states.shape[0], columns.shape[0]))
        np.take(states, columns, axis=1, out=canonical, mode="clip")
    nan = np.isnan(canonical, out=work.empty("hash_nan", canonical.shape, bool))
    if nan.any():
        np.copyto(canonical, np.nan, where=nan)
    np.add(canonical, 0.0, out=canonical)
    bits = canonical.view(np.uint64)
    np.bitwise_xor(bits, salts, out=bits)
    _mix_into(bits, work.empty("hash_spare", canonical.shape, np.uint64))
    out = work.empty("hashes", canonical.shape[0], np.uint64)
    return row_xor(bits, out)


class StateHasher:
    """The :func:`state_hashes` of states reached from a block's instances.

    A column that no action changes (its feature or an effect's) holds its
    instance's value in every state reached from it: its share of the hash is
    computed once per instance, and only the other columns are hashed. The
    hashes are those of the whole states.

    Parameters
    ----------
    starts : ndarray of shape (n_members, n_features)
        The encoded instances.
    changing : array-like of int
        The columns some action changes.

    Examples
    --------
    >>> starts = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> hasher = StateHasher(starts, changing=[1])
    >>> states = np.array([[1.0, 7.0, 3.0], [4.0, 7.0, 6.0]])
    >>> bool((hasher(states, np.array([0, 1])) == state_hashes(states)).all())
    True
    """

    def __init__(self, starts, changing):
        changing = np.unique(np.asarray(changing, dtype=np.intp))
        fixed = np.setdiff1d(np.arange(starts.shape[1]), changing)
        self.columns = changing if fixed.size else None
        self.fixed = state_hashes(starts, columns=fixed) if fixed.size else None

    def __call__(self, states, members, work=None):
        """The hashes of ``states``, row ``r`` reached from instance
        ``members[r]``."""
        hashes = state_hashes(states, work, self.columns)
        if self.fixed is not None:
            np.bitwise_xor(hashes, self.fixed[members], out=hashes)
        return hashes


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
        mixed = np.bitwise_xor(hashes, members.astype(np.uint64) * _MIX_2)
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

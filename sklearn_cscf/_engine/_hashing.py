"""Row identity: 64-bit hashes of states and of rows of words, and the first
row of each distinct value, row or (group, row).

- :func:`state_hashes` and :class:`StateHasher` hash encoded states (the
  answer memo's keys); :func:`word_hashes` and :func:`key_hashes` hash rows
  of 64-bit words (canonical genotypes, sequence and plan keys).
- :func:`first_rows`, :func:`first_sources`, :func:`first_equal`,
  :func:`first_occurrences` and :func:`first_rows_of` find, for each row, the
  first row equal to it: by hash, then checked (a collision falls back to
  comparing the rows).
"""

import functools

import numpy as np
import pandas as pd

from sklearn_cscf._engine._workspace import Workspace
from sklearn_cscf._rows import row_xor

MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
MIX_2 = np.uint64(0x94D049BB133111EB)


def _mix_into(z, spare):
    """splitmix64's finaliser of ``z``, element-wise on uint64 (wrapping), in
    place (``spare``: an array of its shape)."""
    for shift, factor in ((30, MIX_1), (27, MIX_2), (31, None)):
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


# mixed into a key's hash to tell the same key of two instances apart
GROUP_SALT = np.uint64(0x9E3779B97F4A7C15)


def first_equal(words, hashes=None, groups=None):
    """For each row of the uint64 array ``words``, the index of the first row
    equal to it: rows told apart by a 64-bit hash (:func:`word_hashes`, or
    ``hashes`` when known), then checked word by word (a collision falls back
    to comparing the rows).

    ``groups``: a group (a non-negative integer) per row; then the first row
    of the same group equal to it.
    """
    if hashes is None:
        hashes = word_hashes(words)
    if groups is not None:
        groups = groups.astype(np.uint64)
        hashes = np.bitwise_xor(hashes, groups * GROUP_SALT)
    source = first_sources(hashes)
    # a first row is equal to itself: only the others are checked
    later = np.flatnonzero(source != np.arange(source.shape[0]))
    equal = (words[source[later]] == words[later]).all()
    if groups is not None:
        equal = equal and (groups[source[later]] == groups[later]).all()
    if not equal:
        if groups is not None:
            words = np.column_stack([words, groups])
        _, first, inverse = np.unique(
            words, axis=0, return_index=True, return_inverse=True
        )
        source = first[inverse.reshape(-1)]
    return source


def first_occurrences(keys, hashes=None, groups=None):
    """Indices of the first occurrence of each distinct key, in input order
    (keys of bytes whose rows are 64-bit words, such as sequence keys, by
    :func:`first_equal`; ``hashes``: their :func:`key_hashes`, when known).

    ``groups``: a group (a non-negative integer) per key; then the first
    occurrence of each distinct (group, key) pair.
    """
    if keys.dtype.kind == "V" and keys.dtype.itemsize % 8 == 0 and keys.size:
        words = key_words(keys)
    else:
        _, inverse = np.unique(keys, return_inverse=True)
        words, hashes = inverse.reshape(-1, 1).astype(np.uint64), None
    return first_rows_of(words, hashes, groups)


def first_rows_of(words, hashes=None, groups=None):
    """Indices of the first of each distinct row of the uint64 array
    ``words`` (of each group, with ``groups``), in order (see
    :func:`first_equal`)."""
    source = first_equal(words, hashes, groups)
    return np.flatnonzero(source == np.arange(words.shape[0]))


def key_hashes(keys):
    """The :func:`word_hashes` of keys of bytes whose rows are 64-bit words
    (sequence or plan keys)."""
    return word_hashes(key_words(keys))


def key_words(keys):
    """Keys of bytes whose rows are 64-bit words, as a 2-D uint64 array."""
    width = keys.dtype.itemsize // 8
    return np.ascontiguousarray(keys).view(np.uint64).reshape(keys.shape[0], width)

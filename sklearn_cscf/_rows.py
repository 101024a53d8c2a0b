"""Rows of 2-D arrays: reductions along short rows, and rows taken and put.

The engine's arrays have a row per candidate and a column per action (or
step): a few columns. numpy reduces each row of such an array on its own,
and along rows of a few elements that cost per row dominates; a loop over
the columns, each step vectorised over every row, is 4 to 6 times faster
(10,000 rows of 6: 125 against 29 us to count, 51 against 9 us for a
cumulative sum of 2,500 rows).

Float sums stay bit-identical to numpy's: the loop adds in numpy's order for
fewer than ``PAIRWISE`` columns (numpy sums 8 elements and more pairwise),
and wider rows are left to numpy, as are rows wider than ``MAX_COLUMNS``.

Rows picked by an index array: numpy's indexing of a 2-D array by an array
of rows (``a[index]``, ``a[index] = values``) goes through a general path
that copies each row's few elements one by one; :func:`take_rows` and
:func:`put_rows` copy whole rows (32,000 rows of 2 floats: 162 against 13 us
to take 25,000 of them, 162 against 18 us to put them; of 9 floats: 234
against 65, 186 against 117).
"""

import functools

import numpy as np

# fewer rows are put by numpy's indexing: the views cost more than they save
PUT_ROWS_FROM = 512

PAIRWISE = 8  # numpy adds this many elements and more pairwise
MAX_COLUMNS = 32  # beyond, numpy's own reduction is about as fast


def row_counts(mask, out):
    """The number of true values in each row of boolean ``mask``, in the
    integer array ``out``.

    Examples
    --------
    >>> row_counts(np.array([[True, False, True], [False, False, False]]),
    ...            np.empty(2, dtype=np.intp)).tolist()
    [2, 0]
    """
    width = mask.shape[1]
    if width > MAX_COLUMNS:
        return np.sum(mask, axis=1, out=out)
    out.fill(0)
    for column in range(width):
        np.add(out, mask[:, column], out=out)
    return out


def row_sums(values, out):
    """``np.sum(values, axis=1, out=out)`` of a float array, bit for bit."""
    width = values.shape[1]
    if width >= PAIRWISE or width == 0:
        return np.sum(values, axis=1, out=out)
    np.copyto(out, values[:, 0])
    for column in range(1, width):
        np.add(out, values[:, column], out=out)
    return out


def row_cumsum(values):
    """The cumulative sums along each row of integer ``values``, in place."""
    width = values.shape[1]
    if width > MAX_COLUMNS:
        return np.cumsum(values, axis=1, out=values)
    for column in range(1, width):
        np.add(values[:, column], values[:, column - 1], out=values[:, column])
    return values


def row_xor(words, out):
    """The bitwise exclusive or of each row of unsigned integer ``words``, in
    ``out``."""
    width = words.shape[1]
    if width > MAX_COLUMNS or width == 0:
        return np.bitwise_xor.reduce(words, axis=1, out=out)
    np.copyto(out, words[:, 0])
    for column in range(1, width):
        np.bitwise_xor(out, words[:, column], out=out)
    return out


def take_rows(array, index):
    """``array[index]``: the rows of an integer or boolean ``index`` (or a
    slice), a copy.

    Examples
    --------
    >>> a = np.arange(6.0).reshape(3, 2)
    >>> take_rows(a, np.array([2, 0])).tolist()
    [[4.0, 5.0], [0.0, 1.0]]
    >>> take_rows(a, np.array([True, False, True])).tolist()
    [[0.0, 1.0], [4.0, 5.0]]
    """
    if array.ndim < 2 or isinstance(index, slice):
        return array[index]
    index = np.asarray(index)
    if index.dtype == bool:
        return np.compress(index, array, axis=0)
    return np.take(array, index, axis=0)


def put_rows(array, index, values):
    """``array[index] = values`` for an integer ``index`` of rows and
    ``values`` of one row each: each row copied whole (as one item of bytes)
    where ``array`` is C-contiguous and the rows are many enough to pay for
    the views.

    Examples
    --------
    >>> a = np.zeros((3, 2))
    >>> put_rows(a, np.array([2, 0]), np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> a.tolist()
    [[3.0, 4.0], [0.0, 0.0], [1.0, 2.0]]
    """
    if array.ndim < 2 or len(index) < PUT_ROWS_FROM or not array.flags.c_contiguous:
        array[index] = values
        return
    row = _row_type(array.itemsize * (array.size // array.shape[0]))
    values = np.ascontiguousarray(values, dtype=array.dtype)
    array.view(row).reshape(-1)[index] = values.view(row).reshape(-1)


@functools.cache
def _row_type(size):
    return np.dtype((np.void, size))

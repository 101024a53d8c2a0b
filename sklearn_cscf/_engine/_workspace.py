"""Work arrays reused from one generation of the search to the next.

Each generation of a block computes the same arrays (states, keys, objective
matrices, hashes), of sizes that only shrink as the searches finish. Allocated
afresh, every one of them over 128 KiB is a new memory mapping under Dask's
workers (whose nanny sets ``MALLOC_TRIM_THRESHOLD_``, which turns off glibc's
adaptive ``mmap`` threshold): a system call, then a page fault and zeroing for
every page touched, then another system call to give it back. A
:class:`Workspace` hands out named arrays carved from buffers it keeps, so
that a block allocates them once.

An array from a workspace is valid until the next request for the same name:
what must outlive a generation is copied out of it.
"""

import math

import numpy as np


class Workspace:
    """Named work arrays, each carved from a buffer kept between requests.

    Examples
    --------
    >>> work = Workspace()
    >>> a = work.empty("states", (3, 2))
    >>> b = work.empty("states", (2, 2))  # the same memory, reshaped
    >>> np.shares_memory(a, b)
    True
    """

    def __init__(self):
        self._buffers = {}

    def empty(self, name, shape, dtype=float):
        """An uninitialised C-contiguous array ``name`` of ``shape``."""
        if type(shape) is tuple:
            size = math.prod(shape)
        else:
            size = int(shape)
            shape = (size,)
        buffer = self._buffers.get(name)
        if buffer is None or buffer.size < size or buffer.dtype != dtype:
            buffer = np.empty(size, dtype=dtype)
            self._buffers[name] = buffer
        return buffer[:size].reshape(shape)

    def full(self, name, shape, value, dtype=float):
        """Array ``name`` of ``shape`` filled with ``value``."""
        array = self.empty(name, shape, dtype)
        array.fill(value)
        return array

    def take(self, name, source, index):
        """``source[index]`` (rows), written into array ``name``."""
        out = self.empty(name, (len(index), *source.shape[1:]), source.dtype)
        # mode="clip": unbuffered (the default mode writes through a copy);
        # the indices are valid
        return np.take(source, index, axis=0, out=out, mode="clip")

    def arange(self, n):
        """``0, 1, ..., n - 1`` (intp), computed once for the largest ``n``."""
        values = self._buffers.get("_arange")
        if values is None or values.size < n:
            values = np.arange(n, dtype=np.intp)
            values.flags.writeable = False
            self._buffers["_arange"] = values
        return values[:n]

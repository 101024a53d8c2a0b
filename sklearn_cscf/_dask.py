"""An opt-in Dask worker set-up: glibc's allocator as fast as in joblib's workers."""

from numbers import Integral

from sklearn_cscf._sklearn_compat import Interval, validate_params

# glibc ignores an mmap threshold above HEAP_MAX_SIZE / 2 (32 MiB on 64 bits)
MAX_MMAP_THRESHOLD = 32 * 2**20


@validate_params(
    {"mmap_threshold": [Interval(Integral, 1, MAX_MMAP_THRESHOLD, closed="both")]},
    prefer_skip_nested_validation=True,
)
def dask_worker_environment(mmap_threshold=MAX_MMAP_THRESHOLD):
    """Dask configuration that starts workers with a fixed glibc mmap threshold.

    Dask's nanny starts each worker process with the variables of its
    ``distributed.nanny.pre-spawn-environ`` setting, among them
    ``MALLOC_TRIM_THRESHOLD_=65536``. Setting it turns off glibc's adaptive
    ``mmap`` threshold, so that every allocation of 128 KiB or more is
    mapped and unmapped afresh (system calls, page faults, zeroing). The
    search keeps its own work arrays from one generation to the next, so it
    barely allocates; what remains is the model's own temporaries (e.g. a
    pipeline's encoded copy of the states it is asked about). This returns
    that setting with ``MALLOC_MMAP_THRESHOLD_`` added, for
    ``dask.config.set`` before the cluster starts its workers: the
    workers then keep freed blocks below ``mmap_threshold`` for reuse, as a
    process started without Dask's variables does.

    Calling it changes nothing: it only returns the configuration. The
    workers must be started by a nanny in a process where the configuration
    is set (``distributed.LocalCluster``, or ``dask worker`` with the
    variable exported); workers already running keep their environment.

    Parameters
    ----------
    mmap_threshold : int, default=33554432
        The ``MALLOC_MMAP_THRESHOLD_`` in bytes: allocations below it come
        from the heap (at most 32 MiB, glibc's limit on 64-bit systems). A
        boolean is refused (``True`` would be 1 byte).

    Returns
    -------
    dict
        ``{"distributed.nanny.pre-spawn-environ": {...}}``: the current
        setting (Dask's defaults and your own) plus
        ``MALLOC_MMAP_THRESHOLD_``.

    Raises
    ------
    ImportError
        When ``distributed`` is not installed (``pip install distributed``).

    Examples
    --------
    >>> import dask
    >>> from sklearn_cscf import dask_worker_environment
    >>> config = dask_worker_environment()
    >>> config["distributed.nanny.pre-spawn-environ"]["MALLOC_MMAP_THRESHOLD_"]
    33554432
    >>> with dask.config.set(config):  # doctest: +SKIP
    ...     cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1)
    """
    if isinstance(mmap_threshold, bool):
        # True is an int (1) to Python: it would set a 1-byte threshold
        raise TypeError(
            "mmap_threshold must be a number of bytes (at most "
            f"{MAX_MMAP_THRESHOLD}), got {mmap_threshold!r}; leave it out for "
            "the default."
        )
    try:
        import dask

        # importing distributed adds its defaults to dask's configuration
        # (among them MALLOC_TRIM_THRESHOLD_); read the setting after it
        import distributed  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "dask_worker_environment configures Dask's workers and needs "
            "distributed: pip install distributed."
        ) from exc
    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", default={}))
    environ["MALLOC_MMAP_THRESHOLD_"] = int(mmap_threshold)
    return {"distributed.nanny.pre-spawn-environ": environ}

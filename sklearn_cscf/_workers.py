"""Blocks of rows over workers: joblib's, or a Dask cluster's, what happens
when a worker dies, and an opt-in Dask worker set-up
(:func:`dask_worker_environment`: glibc's allocator as fast as in joblib's
workers).

:func:`run_blocks` runs a block task over the blocks of a run and yields
their results in order, as they come:

- no more workers than blocks (``n_jobs=1000`` for 4 rows starts 4);
- a problem that cannot be pickled for worker processes is refused before
  any is started, naming the model when it is the culprit;
- under joblib's Dask backend (``parallel_config(backend="dask")``) the
  blocks go to the cluster's client directly, so that a task whose workers
  died comes back as an error (joblib's backend would wait for it forever);
- a worker process that dies (killed, out of memory) raises
  :class:`WorkerDiedError` naming it and the rows it held. Each task
  leaves a mark (its process id and its block) in a private scratch
  directory while it runs, so that the dead process and its block are
  known; the marks are removed with the directory.

The caller keeps what it made of the blocks returned before (a checkpoint
keeps them): the same call run again resumes.
"""

import os
import re
import shutil
import tempfile
from numbers import Integral
from pathlib import Path

import cloudpickle
from joblib import Parallel, delayed, effective_n_jobs
from joblib.parallel import get_active_backend

from sklearn_cscf._sklearn_compat import Interval, validate_params

__all__ = ["WorkerDiedError", "dask_worker_environment", "run_blocks"]

# rows named in a message, at most
SHOWN_ROWS = 10


class WorkerDiedError(RuntimeError):
    """A worker process died while it held rows of the run (killed, out of
    memory, a crash in compiled code); no result came back for them."""


def run_blocks(task, shipment, arguments, n_jobs, labels):
    """``task(shipment, *arguments[k])`` for every block ``k``, over at most
    as many workers as blocks; the results, in the order of the blocks.

    ``shipment`` holds the problem (its ``problem.estimator`` is named when
    it cannot be pickled); ``labels[k]``: the labels of the rows of block
    ``k``, for messages.
    """
    if not arguments:
        return
    n_workers = max(1, min(effective_n_jobs(n_jobs), len(arguments)))
    if n_workers == 1:
        for args in arguments:
            yield task(shipment, *args)
        return
    backend, _ = get_active_backend()
    if not getattr(backend, "uses_threads", False):
        _check_picklable(shipment, n_jobs)
    client = getattr(backend, "client", None)
    if type(backend).__name__ == "DaskDistributedBackend" and client is not None:
        yield from _on_dask(client, task, shipment, arguments, labels)
        return
    marks = Path(tempfile.mkdtemp(prefix="sklearn-cscf-workers-"))
    try:
        tasks = (
            delayed(_marked)(str(marks), k, task, shipment, *args)
            for k, args in enumerate(arguments)
        )
        parallel = Parallel(n_jobs=n_workers, return_as="generator")
        done = 0
        try:
            for result in parallel(tasks):
                yield result
                done += 1
        except Exception as exc:
            if not _died(exc):
                raise
            raise WorkerDiedError(_loky_message(exc, marks, labels, done)) from exc
    finally:
        shutil.rmtree(marks, ignore_errors=True)


def _marked(marks, k, task, shipment, *args):
    """Run ``task`` (in a worker), leaving the mark of block ``k`` meanwhile."""
    mark = Path(marks) / f"block-{k}"
    try:
        mark.write_text(str(os.getpid()))
    except OSError:  # a worker on another machine: no mark, no harm
        mark = None
    try:
        return task(shipment, *args)
    finally:
        if mark is not None:
            mark.unlink(missing_ok=True)


def _died(exc):
    """Whether ``exc`` says that a worker process died."""
    names = {type(e).__name__ for e in (exc, exc.__cause__) if e is not None}
    return bool(names & {"TerminatedWorkerError", "BrokenProcessPool"})


def _loky_message(exc, marks, labels, done):
    """Which rows were lost when a worker died: those of the blocks in
    progress then (the marks their processes left; joblib stops every worker
    when one dies, so each of them is lost), with those processes."""
    running = []
    for mark in sorted(marks.glob("block-*"), key=lambda m: int(m.name[6:])):
        try:
            running.append((int(mark.read_text()), int(mark.name[6:])))
        except (OSError, ValueError):
            continue
    codes = re.search(r"exit codes of the workers are (\{[^}]*\})", str(exc))
    how = f" (exit code {codes.group(1)})" if codes else ""
    if running:
        pids = sorted({pid for pid, _ in running})
        where = "process" if len(pids) == 1 else "processes"
        held = [label for _, k in running for label in labels[k]]
        who = (
            f"A worker process died{how}; the blocks in progress (in worker "
            f"{where} {', '.join(map(str, pids))}) were lost with it:"
        )
    else:  # it died before any block left its mark: those not finished
        held = [label for k in range(done, len(labels)) for label in labels[k]]
        who = f"A worker process died{how} before returning"
    return _died_message(who, held, done)


def _died_message(who, held, done):
    shown = ", ".join(repr(_plain(label)) for label in held[:SHOWN_ROWS])
    more = f" and {len(held) - SHOWN_ROWS} more" if len(held) > SHOWN_ROWS else ""
    return (
        f"{who} the rows {shown}{more} (a worker killed, out of memory, or a "
        "crash in the model): no result came back for them, and the run "
        "stopped. "
        f"The {done} block(s) finished before are in the checkpoint, if one "
        "was given: run the same call again to resume from them (with "
        "n_jobs=1, a smaller batch_size or more memory if workers keep "
        "dying)."
    )


def _plain(label):
    return label.item() if hasattr(label, "item") else label


def _on_dask(client, task, shipment, arguments, labels):
    """The blocks as tasks of a Dask client, their results in order; a
    task whose workers died raises :class:`WorkerDiedError`. Tasks not
    waited for are cancelled."""
    futures = [client.submit(task, shipment, *args, pure=False) for args in arguments]
    done = 0
    try:
        for k, future in enumerate(futures):
            try:
                result = future.result()
            except Exception as exc:
                if type(exc).__name__ != "KilledWorker":
                    raise
                worker = getattr(exc, "last_worker", None)
                address = getattr(worker, "address", worker)
                who = (
                    f"The Dask worker {address} died"
                    if address
                    else "A Dask worker died"
                ) + " (so did every worker that tried this block) holding"
                raise WorkerDiedError(
                    _died_message(who, list(labels[k]), done)
                ) from exc
            yield result
            done += 1
    finally:
        client.cancel(futures[done:])


def _check_picklable(shipment, n_jobs):
    """Refuse, before any worker starts, a problem that cannot be sent to
    worker processes; the model is named when it is the culprit."""
    try:
        shipment.token  # pickles the problem (once; the tasks reuse it)
    except Exception as exc:
        estimator = shipment.problem.estimator
        try:
            cloudpickle.dumps(estimator)
        except Exception as model_exc:
            raise TypeError(
                f"The estimator {type(estimator).__name__} cannot be pickled "
                f"({type(model_exc).__name__}: {model_exc}), and n_jobs="
                f"{n_jobs!r} sends it to worker processes. Explain with "
                "n_jobs=1 (the model stays in this process), or make the "
                "model picklable (drop its open connections, locks or "
                "files; or build them again in __setstate__)."
            ) from model_exc
        raise TypeError(
            "The explainer's actions or feature graph cannot be pickled "
            f"({type(exc).__name__}: {exc}), and n_jobs={n_jobs!r} sends them "
            "to worker processes. Explain with n_jobs=1, or give callables "
            "that pickle."
        ) from exc


# ---------------------------------------------------------------------- #
# the Dask workers' environment
# ---------------------------------------------------------------------- #
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

"""Faults survived (issue 36): a worker process killed mid-run (joblib's loky
workers, a Dask LocalCluster's), checkpointing stopped by a file-size limit,
and no more workers than the work needs.

The worker processes are real and are killed with SIGKILL; every test ends
what it starts (the cluster, the loky workers).
"""

import os
import re
import signal
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
import pytest
from _cluster import loopback_cluster
from _line import SMALL, Wrapping, line_actions
from sklearn.linear_model import LogisticRegression

from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf._checkpoints import MANIFEST

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX")


class SaysWhere(Wrapping):
    """Leaves a file named by the id of the process it answers in, in the
    directory ``where`` (when set): the worker processes it runs in."""

    where = None

    def predict_proba(self, X):
        if self.where is not None:
            (Path(self.where) / str(os.getpid())).touch()
        return self.model.predict_proba(X)

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


def _saved_rows(run):
    import json

    manifest = json.loads((run / MANIFEST).read_text())
    return {r for entry in manifest["pieces"].values() for r in entry["rows"]}


def _kill_when_saved(run, pick_pid, killed):
    """Kill (SIGKILL) the process ``pick_pid()`` gives once a first piece of
    rows is in the checkpoint ``run``."""

    def wait_and_kill():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if list(run.glob("piece-*")):
                pid = pick_pid()
                if pid is not None:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    return
            time.sleep(0.005)

    thread = threading.Thread(target=wait_and_kill, daemon=True)
    thread.start()
    return thread


def _loky_workers():
    return [
        p
        for p in psutil.Process().children(recursive=True)
        if any("LokyProcess" in part for part in p.cmdline())
    ]


def _stop_loky():
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True, kill_workers=True)


@pytest.fixture
def slow_rows(line_data, tmp_path):
    """An explainer whose blocks of two rows take a moment each, and rows
    rejected by its model."""
    X, y = line_data
    inner = LogisticRegression().fit(X, y)
    explainer = SequentialCounterfactualExplainer(
        SaysWhere(inner),
        actions=line_actions(),
        batch_size=2,
        population_size=60,
        n_generations=25,
        random_state=0,
    ).fit(X)
    rows = X[inner.predict(X) == 0].iloc[:16]
    where = tmp_path / "pids"
    where.mkdir()
    return explainer, rows, where


# ---------------------------------------------------------------------- #
# a loky worker killed mid-run
# ---------------------------------------------------------------------- #
@pytest.mark.slow  # more than ten seconds: workers start, die and restart
def test_a_killed_loky_worker_is_named_and_the_same_call_resumes(slow_rows, tmp_path):
    explainer, rows, where = slow_rows
    whole = explainer.set_params(n_jobs=1).explain(rows)
    run, killed = tmp_path / "run", []
    explainer.estimator_.where = str(where)

    def a_worker():
        pids = [int(p.name) for p in where.iterdir() if int(p.name) != os.getpid()]
        return pids[0] if pids else None

    killer = _kill_when_saved(run, a_worker, killed)
    try:
        with pytest.raises(RuntimeError, match="worker process died") as caught:
            explainer.set_params(n_jobs=2).explain(rows, checkpoint=run)
        killer.join(timeout=5)
    finally:
        _stop_loky()
    assert killed, "no worker was killed"
    message = str(caught.value)
    assert "SIGKILL" in message  # the exit code
    assert "run the same call again to resume" in message
    # the rows it names are rows of X that were not saved
    # (the first SHOWN_ROWS of them, "and N more" when more were in flight)
    listed = re.search(r"the rows ([\d, ]+?)(?: and \d+ more)? \(", message)
    assert listed, message
    named = [int(label) for label in listed.group(1).split(", ")]
    saved = _saved_rows(run)
    positions = set(rows.index.get_indexer(named).tolist())
    assert -1 not in positions and not positions & saved
    assert saved  # some rows were finished before
    # the lock is released and every saved row is resumed, with n_jobs=1
    explainer.estimator_.where = None
    resumed = explainer.set_params(n_jobs=1).explain(rows, checkpoint=run)
    pd.testing.assert_frame_equal(resumed, whole, check_exact=True)
    assert _saved_rows(run) == set(range(len(rows)))
    # the rows saved before were not searched again: the pieces written by
    # the resumed run hold the other rows only
    import json

    pieces = json.loads((run / MANIFEST).read_text())["pieces"]
    later = [set(e["rows"]) for name, e in sorted(pieces.items())][-1]
    assert not later & saved


# ---------------------------------------------------------------------- #
# a Dask worker killed mid-run
# ---------------------------------------------------------------------- #
@pytest.mark.slow  # a LocalCluster starts and stops: several seconds
def test_a_killed_dask_worker_is_named_and_the_same_call_resumes(slow_rows, tmp_path):
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    from joblib import parallel_config

    explainer, rows, _ = slow_rows
    whole = explainer.set_params(n_jobs=1).explain(rows)
    run, killed, outcome = tmp_path / "run", [], {}
    # the task of a dead worker fails at once (not retried elsewhere)
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        loopback_cluster(2) as cluster,
        distributed.Client(cluster) as client,
    ):
        pids = client.run(os.getpid)
        killer = _kill_when_saved(run, lambda: next(iter(pids.values())), killed)

        def explain():
            try:
                with parallel_config(backend="dask"):
                    explainer.set_params(n_jobs=2).explain(rows, checkpoint=run)
            except Exception as exc:  # the outcome is checked below
                outcome["error"] = exc
            else:
                outcome["done"] = True

        caller = threading.Thread(target=explain, daemon=True)
        caller.start()
        caller.join(timeout=180)
        killer.join(timeout=5)
        assert not caller.is_alive(), "the run hung after its worker died"
    assert killed, "no worker was killed"
    error = outcome.get("error")
    assert isinstance(error, RuntimeError), outcome
    address = [a for a, pid in pids.items() if pid == killed[0]][0]
    assert f"Dask worker {address} died" in str(error)
    saved = _saved_rows(run)
    assert saved
    # outside the cluster, the same call resumes every saved row
    resumed = explainer.set_params(n_jobs=1).explain(rows, checkpoint=run)
    pd.testing.assert_frame_equal(resumed, whole, check_exact=True)


# ---------------------------------------------------------------------- #
# checkpointing stopped by a file-size limit says so, once per run
# ---------------------------------------------------------------------- #
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX resource limits")
@pytest.mark.parametrize("limit", [150, 2500])  # the manifest itself; a piece
def test_a_file_size_limit_stops_checkpointing_and_says_so_each_run(
    fitted_line, line_data, tmp_path, limit
):
    import resource

    X, _ = line_data
    rows = X[fitted_line.estimator_.predict(X) == 0].iloc[:2]
    explainer = fitted_line.set_params(batch_size=2)
    whole = explainer.explain(rows)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    said = []
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")  # Python's own: once per place
            for _ in range(2):  # twice in one process: each run says so
                frame = explainer.explain(rows, checkpoint=tmp_path / "run")
                pd.testing.assert_frame_equal(frame, whole)  # every row returned
                said.append(
                    [
                        str(w.message)
                        for w in caught
                        if "checkpointing" in str(w.message)
                    ]
                )
                caught.clear()
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        explainer.set_params(batch_size=64)
    assert [len(run) for run in said] == [1, 1], said
    assert "File too large" in said[0][0] and "checkpointing stopped" in said[0][0]


# ---------------------------------------------------------------------- #
# no more workers than blocks
# ---------------------------------------------------------------------- #
class CountsWorkers(Wrapping):
    """Records the worker threads of joblib's pool alive at each call."""

    seen = []

    def predict_proba(self, X):
        names = [t.name for t in threading.enumerate()]
        type(self).seen.append(sum(name.endswith("(worker)") for name in names))
        return self.model.predict_proba(X)

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


def test_n_jobs_is_capped_by_the_blocks_of_work(line_data, logistic):
    from joblib import parallel_config

    X, _ = line_data
    explainer = SequentialCounterfactualExplainer(
        CountsWorkers(logistic), actions=line_actions(), **SMALL
    ).fit(X)
    rows = X[logistic.predict(X) == 0].iloc[:2]
    whole = explainer.set_params(n_jobs=1).explain(rows)
    CountsWorkers.seen = []
    with parallel_config(backend="threading"):
        frame = explainer.set_params(n_jobs=12).explain(rows)
    pd.testing.assert_frame_equal(frame, whole, check_exact=True)
    # two rows: two blocks, so two workers (not twelve)
    assert max(CountsWorkers.seen) == 2, max(CountsWorkers.seen)


@pytest.mark.slow  # loky's worker processes start (seconds)
def test_n_jobs_starts_no_more_worker_processes_than_blocks(fitted_line, line_data):
    X, _ = line_data
    rows = X[fitted_line.estimator_.predict(X) == 0].iloc[:2]
    whole = fitted_line.set_params(n_jobs=1).explain(rows)
    try:
        frame = fitted_line.set_params(n_jobs=12).explain(rows)
        started = _loky_workers()
    finally:
        fitted_line.set_params(n_jobs=None)
        _stop_loky()
    pd.testing.assert_frame_equal(frame, whole, check_exact=True)
    assert len(started) <= 2, [p.pid for p in started]
    assert not _loky_workers()  # ended


def test_an_unpicklable_model_is_named_before_any_worker_starts(line_data, logistic):
    X, _ = line_data

    class Locked(Wrapping):
        def __init__(self, model):
            super().__init__(model)
            self.lock = threading.Lock()

        def predict_proba(self, X):
            with self.lock:
                return self.model.predict_proba(X)

        def predict(self, X):
            return self.predict_proba(X).argmax(axis=1)

    explainer = SequentialCounterfactualExplainer(
        Locked(logistic), actions=line_actions(), n_jobs=2, **SMALL
    ).fit(X)
    rows = X[logistic.predict(X) == 0].iloc[:4]
    with pytest.raises(TypeError, match=r"Locked cannot be pickled.*n_jobs=2"):
        explainer.explain(rows)
    # in one process it is explained
    frame = explainer.set_params(n_jobs=1).explain(rows)
    assert (frame["status"] == "ok").all()
    assert np.isin(rows.index, frame["instance"]).all()

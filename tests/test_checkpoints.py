"""Checkpoints (``_checkpoints.py``): plain data, bound to their run, and
never a way to lose rows or to run code (issue 16).

Each test is named after what it tries.
"""

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _line import SMALL, line_actions
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf._checkpoints import MANIFEST, Checkpoint

ROOT = Path(__file__).resolve().parents[1]


class Interruptible:
    """Counts predict_proba calls; after ``budget`` calls (a class attribute,
    so not part of what is pickled) it raises KeyboardInterrupt. Rows whose
    income and debt are a pair of ``failing`` (a class attribute too) make
    it raise an ``OSError``, as a flaky remote model would (a single value
    could be a training value that refinement tries for other rows too)."""

    classes_ = np.array([0, 1])
    budget = None
    calls = 0
    failing = ()

    def __init__(self, model):
        self.model = model

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        cls = type(self)
        cls.calls += 1
        if cls.budget is not None and cls.calls > cls.budget:
            raise KeyboardInterrupt
        pairs = zip(np.asarray(X["income"]).tolist(), np.asarray(X["debt"]).tolist())
        if any(pair in cls.failing for pair in pairs):
            raise OSError("the model server did not answer")
        return self.model.predict_proba(X)

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


@pytest.fixture
def interruptible(line_data):
    X, y = line_data
    inner = LogisticRegression().fit(X, y)
    explainer = SequentialCounterfactualExplainer(
        Interruptible(inner), actions=line_actions(), batch_size=2, n_jobs=1, **SMALL
    ).fit(X)
    rows = X[inner.predict(X) == 0].iloc[:6]
    yield explainer, rows
    Interruptible.budget, Interruptible.calls, Interruptible.failing = None, 0, ()


def pieces(path):
    return sorted(Path(path).glob("piece-*"))


# ---------------------------------------------------------------------- #
# resuming
# ---------------------------------------------------------------------- #
def test_an_interrupted_run_resumes_where_it_stopped(interruptible, tmp_path):
    explainer, rows = interruptible
    Interruptible.calls = 0
    whole = explainer.explain(rows)
    full_calls = Interruptible.calls

    Interruptible.calls, Interruptible.budget = 0, full_calls // 2
    with pytest.raises(KeyboardInterrupt):
        explainer.explain(rows, checkpoint=tmp_path / "run")
    saved = pieces(tmp_path / "run")
    assert 1 <= len(saved) < 3  # three blocks of two rows; some were done
    assert all(p.suffix == ".npz" for p in saved)

    Interruptible.calls, Interruptible.budget = 0, None
    resumed = explainer.explain(rows, checkpoint=tmp_path / "run")
    pd.testing.assert_frame_equal(resumed, whole, check_exact=True)
    assert Interruptible.calls < full_calls  # the saved rows were not searched
    # a third run finds every row done: only the model's decisions now are
    # asked (predict_proba, and predict, which calls it once more here), and
    # the final states of the loaded plans, in one call (issue 36)
    Interruptible.calls = 0
    again = explainer.explain(rows, checkpoint=tmp_path / "run")
    pd.testing.assert_frame_equal(again, whole, check_exact=True)
    assert Interruptible.calls == 3


def test_states_and_details_come_back_from_a_checkpoint(interruptible, tmp_path):
    explainer, rows = interruptible
    whole = explainer.explain(rows, return_states=True, return_details=True)
    explainer.explain(rows.iloc[:4], checkpoint=tmp_path / "run")
    # the pieces hold the numbers the output is built from: a run asking for
    # states too resumes from them
    Interruptible.calls = 0
    frame, states, details = explainer.explain(
        rows.iloc[:4], checkpoint=tmp_path / "run", return_states=True,
        return_details=True,
    )  # fmt: skip
    assert Interruptible.calls == 3  # nothing searched again; plans checked
    four = whole[0]["instance"].isin(rows.index[:4])
    pd.testing.assert_frame_equal(frame, whole[0][four].reset_index(drop=True))
    pd.testing.assert_frame_equal(
        states,
        whole[1][whole[1]["instance"].isin(rows.index[:4])].reset_index(drop=True),
    )
    pd.testing.assert_frame_equal(
        details.drop(columns=["model_seconds", "total_seconds", "cpu_seconds"]),
        whole[2]
        .iloc[:4]
        .drop(columns=["model_seconds", "total_seconds", "cpu_seconds"])
        .reset_index(drop=True),
        check_dtype=False,
    )


def test_a_checkpoint_of_another_run_is_refused(interruptible, tmp_path):
    explainer, rows = interruptible
    explainer.explain(rows.iloc[:2], checkpoint=tmp_path / "run")
    with pytest.raises(ValueError, match="results of another run"):
        explainer.explain(rows.iloc[:3], checkpoint=tmp_path / "run")
    changes = (
        {"max_plans": 1},
        {"all_orders": True},
        {"all_values": True},
        {"random_state": 1},
    )
    for change in changes:
        changed = clone(explainer).set_params(**change)
        params = explainer.get_params(deep=False)
        changed.__dict__.update(  # fitted as before: only the change differs
            {k: v for k, v in vars(explainer).items() if k not in params}
        )
        with pytest.raises(ValueError, match="results of another run"):
            changed.explain(rows.iloc[:2], checkpoint=tmp_path / "run")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="not a directory"):
        explainer.explain(rows.iloc[:2], checkpoint=tmp_path / "file")


def test_a_resumed_run_without_a_seed_repeats_itself(interruptible, tmp_path):
    explainer, rows = interruptible
    explainer.set_params(random_state=None)
    first = explainer.explain(rows.iloc[:4], checkpoint=tmp_path / "run")
    for piece in pieces(tmp_path / "run")[1:]:
        piece.unlink()  # as if interrupted after the first block
    resumed = explainer.explain(rows.iloc[:4], checkpoint=tmp_path / "run")
    pd.testing.assert_frame_equal(resumed, first, check_exact=True)


def test_rows_that_ended_in_error_are_tried_again_on_resume(interruptible, tmp_path):
    explainer, rows = interruptible
    # a transient failure on row 1 (its income and debt)
    Interruptible.failing = ((rows["income"].iloc[1], rows["debt"].iloc[1]),)
    with pytest.warns(UserWarning, match="1 of 4 rows"):
        first = explainer.explain(rows.iloc[:4], checkpoint=tmp_path / "run")
    assert first.groupby("instance", sort=False)["status"].first().tolist() == [
        "ok",
        "error",
        "ok",
        "ok",
    ]
    Interruptible.failing, Interruptible.calls = (), 0
    resumed = explainer.explain(rows.iloc[:4], checkpoint=tmp_path / "run")
    assert (resumed["status"] == "ok").all()
    pd.testing.assert_frame_equal(resumed, explainer.explain(rows.iloc[:4]))
    # the retried row is saved too: a third run searches nothing
    Interruptible.calls = 0
    explainer.explain(rows.iloc[:4], checkpoint=tmp_path / "run")
    assert Interruptible.calls == 3  # the decisions now, the plans checked


def test_a_failed_save_warns_and_returns_every_row(
    interruptible, tmp_path, monkeypatch
):
    explainer, rows = interruptible
    whole = explainer.explain(rows)
    writes = []
    original = Checkpoint._write

    def disk_full_after_two_writes(self, target, data):
        writes.append(target)
        if len(writes) > 3:  # the manifest, then the first piece
            raise OSError(28, "No space left on device")
        return original(self, target, data)

    monkeypatch.setattr(Checkpoint, "_write", disk_full_after_two_writes)
    with pytest.warns(UserWarning, match="checkpointing stopped") as caught:
        frame = explainer.explain(rows, checkpoint=tmp_path / "run")
    assert sum("checkpointing stopped" in str(w.message) for w in caught) == 1
    pd.testing.assert_frame_equal(frame, whole)
    assert len(writes) == 4  # nothing written after the failure
    # what was saved still resumes
    monkeypatch.setattr(Checkpoint, "_write", original)
    resumed = explainer.explain(rows, checkpoint=tmp_path / "run")
    pd.testing.assert_frame_equal(resumed, whole)


# ---------------------------------------------------------------------- #
# nothing in the directory runs code, or answers for other rows
# ---------------------------------------------------------------------- #
class _Planted:
    """Unpickling this creates the file ``path``."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def test_a_pickle_planted_in_a_fresh_directory_is_never_loaded(interruptible, tmp_path):
    explainer, rows = interruptible
    run, proof = tmp_path / "run", tmp_path / "code-ran"
    run.mkdir()
    (run / "piece-000000000-00002.pkl").write_bytes(pickle.dumps(_Planted(proof)))
    with pytest.raises(ValueError, match=r"piece-000000000-00002\.pkl.*not list"):
        explainer.explain(rows.iloc[:2], checkpoint=run)
    assert not proof.exists()


def test_a_piece_replaced_before_a_resume_is_refused_by_name(interruptible, tmp_path):
    explainer, rows = interruptible
    run, proof = tmp_path / "run", tmp_path / "code-ran"
    explainer.explain(rows.iloc[:4], checkpoint=run)
    first = pieces(run)[0]
    first.write_bytes(pickle.dumps(_Planted(proof)))
    with pytest.raises(ValueError, match=f"{first.name}.*SHA-256 differs"):
        explainer.explain(rows.iloc[:4], checkpoint=run)
    assert not proof.exists()


def test_a_piece_copied_from_another_run_is_refused(interruptible, tmp_path):
    explainer, rows = interruptible
    explainer.explain(rows.iloc[:2], checkpoint=tmp_path / "other")
    explainer.explain(rows.iloc[2:4], checkpoint=tmp_path / "run")
    copied = tmp_path / "run" / "piece-copied.npz"
    copied.write_bytes(pieces(tmp_path / "other")[0].read_bytes())
    with pytest.raises(ValueError, match="piece-copied.npz.*does not list"):
        explainer.explain(rows.iloc[2:4], checkpoint=tmp_path / "run")
    # and over a piece of this run's: the hash differs
    copied.unlink()
    mine = pieces(tmp_path / "run")[0]
    mine.write_bytes(pieces(tmp_path / "other")[0].read_bytes())
    with pytest.raises(ValueError, match=f"{mine.name}.*SHA-256"):
        explainer.explain(rows.iloc[2:4], checkpoint=tmp_path / "run")


def test_stale_pieces_never_answer_for_other_rows(interruptible, tmp_path):
    explainer, rows = interruptible
    explainer.explain(rows.iloc[:2], checkpoint=tmp_path / "run")
    (tmp_path / "run" / MANIFEST).unlink()
    with pytest.raises(ValueError, match="does not list"):
        explainer.explain(rows.iloc[2:4], checkpoint=tmp_path / "run")


@pytest.mark.parametrize(
    "damage",
    ["truncated manifest", "not json", "manifest of another shape", "truncated"],
)
def test_a_corrupt_checkpoint_file_is_named(interruptible, tmp_path, damage):
    explainer, rows = interruptible
    run = tmp_path / "run"
    explainer.explain(rows.iloc[:2], checkpoint=run)
    manifest = run / MANIFEST
    piece = pieces(run)[0]
    if damage == "truncated manifest":
        manifest.write_bytes(manifest.read_bytes()[:20])
        culprit = manifest
    elif damage == "not json":
        manifest.write_bytes(b"\x80\x04K\x01.")
        culprit = manifest
    elif damage == "manifest of another shape":
        stored = json.loads(manifest.read_text())
        stored["pieces"] = [1, 2]
        manifest.write_text(json.dumps(stored))
        culprit = manifest
    else:
        # a truncated piece whose hash the manifest agrees with: the content
        # itself is checked
        data = piece.read_bytes()[:-40]
        stored = json.loads(manifest.read_text())
        import hashlib

        stored["pieces"][piece.name]["sha256"] = hashlib.sha256(data).hexdigest()
        manifest.write_text(json.dumps(stored))
        piece.write_bytes(data)
        culprit = piece
    with pytest.raises(ValueError, match="corrupt") as caught:
        explainer.explain(rows.iloc[:2], checkpoint=run)
    assert str(culprit) in str(caught.value)


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX permissions")
def test_a_directory_others_can_write_to_is_refused_unless_shared(
    interruptible, tmp_path, monkeypatch
):
    explainer, rows = interruptible
    run = tmp_path / "run"
    run.mkdir()
    run.chmod(0o777)
    with pytest.raises(ValueError, match="writable by every user.*shared_checkpoint"):
        explainer.explain(rows.iloc[:2], checkpoint=run)
    frame = explainer.explain(rows.iloc[:2], checkpoint=run, shared_checkpoint=True)
    assert (frame["status"] == "ok").all()
    run.chmod(0o700)
    uid = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: uid + 1)
    with pytest.raises(ValueError, match="owned by another user"):
        explainer.explain(rows.iloc[:2], checkpoint=run)


def test_a_new_directory_is_private(interruptible, tmp_path):
    explainer, rows = interruptible
    explainer.explain(rows.iloc[:2], checkpoint=tmp_path / "run")
    assert (tmp_path / "run").stat().st_mode & 0o077 == 0


# ---------------------------------------------------------------------- #
# the fingerprint is the same in a new process
# ---------------------------------------------------------------------- #
SCRIPT = """
import sys

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from sklearn_cscf import Action, SequentialCounterfactualExplainer


class Wrapped:  # defined in __main__: cloudpickle stores it by value
    classes_ = np.array([0, 1])
    calls = 0

    def __init__(self, model):
        self.model = model

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        type(self).calls += 1
        return self.model.predict_proba(X)

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


class Effort:  # a cost class defined in __main__ too
    def __call__(self, before, after):
        return np.abs(after["debt"] - before["debt"]) / 50


rng = np.random.default_rng(0)
X = pd.DataFrame({"income": rng.uniform(0, 100, 300), "debt": rng.uniform(0, 50, 300)})
y = (X["income"] - X["debt"] > 40).astype(int)
model = Wrapped(LogisticRegression().fit(X, y))
explainer = SequentialCounterfactualExplainer(
    model,
    actions=[
        Action("earn", "income", values=(0.0, 200.0), direction="increase",
               cost=lambda b, a: (a["income"] - b["income"]) / 200),
        Action("repay", "debt", values=(0.0, 50.0), direction="decrease",
               cost=Effort()),
    ],
    population_size=30, n_generations=5, random_state=0, batch_size=2,
).fit(X)
rows = X[model.predict(X) == 0].iloc[:4]
Wrapped.calls = 0
frame = explainer.explain(rows, checkpoint=sys.argv[1])
frame.to_csv(sys.argv[2])
print(Wrapped.calls)
"""


def test_a_checkpoint_resumes_in_a_new_process_with_main_classes(tmp_path):
    script = tmp_path / "run_me.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run(out):
        done = subprocess.run(
            [sys.executable, str(script), str(tmp_path / "run"), str(out)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return int(done.stdout.split()[-1])

    first_calls = run(tmp_path / "first.csv")
    second_calls = run(tmp_path / "second.csv")
    assert first_calls > 2
    # every row loaded: only the decisions now, and the plans checked
    assert second_calls == 3
    assert (tmp_path / "first.csv").read_text() == (tmp_path / "second.csv").read_text()


# ---------------------------------------------------------------------- #
# issue 23: what the model answers counts, not how it pickles
# ---------------------------------------------------------------------- #
SCRIPT_STATEFUL = """
import sys

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from sklearn_cscf import Action, SequentialCounterfactualExplainer

CACHE = {}  # a global answer cache the model reads and fills
SEEN = {"debt", "income", "rate", "age", "zip"}  # a module-level set a cost reads


class Stateful:  # a call counter, a set of strings, a global cache
    classes_ = np.array([0, 1])

    def __init__(self, model):
        self.model = model
        self.calls = 0
        self.names = {"income", "debt", "alpha", "beta", "gamma", "delta"}

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        self.calls += 1
        key = X.to_numpy().tobytes()
        if key not in CACHE:
            CACHE[key] = self.model.predict_proba(X)
        return CACHE[key]

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


def effort(before, after):
    weight = 1.0 if "debt" in SEEN else 2.0
    return weight * np.abs(after["debt"] - before["debt"]) / 50


rng = np.random.default_rng(0)
X = pd.DataFrame({"income": rng.uniform(0, 100, 300), "debt": rng.uniform(0, 50, 300)})
y = (X["income"] - X["debt"] > 40).astype(int)
model = Stateful(LogisticRegression().fit(X, y))
explainer = SequentialCounterfactualExplainer(
    model,
    actions=[
        Action("earn", "income", values=(0.0, 200.0), direction="increase"),
        Action("repay", "debt", values=(0.0, 50.0), direction="decrease",
               cost=effort),
    ],
    population_size=30, n_generations=5, random_state=0, batch_size=2,
).fit(X)
rows = X[model.predict(X) == 0].iloc[:4]
model.calls = 0
frame = explainer.explain(rows, checkpoint=sys.argv[1])
frame.to_csv(sys.argv[2])
print(model.calls)
"""


def _run_script(tmp_path, source, args, seed):
    script = tmp_path / "run_me.py"
    script.write_text(textwrap.dedent(source))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": str(seed)}
    return subprocess.run(
        [sys.executable, str(script), *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )


def test_a_model_with_a_counter_a_set_and_a_cache_resumes_in_a_new_process(
    tmp_path,
):
    # each process has its own hash seed: sets pickle in another order
    first = _run_script(tmp_path, SCRIPT_STATEFUL, [tmp_path / "run", "a.csv"], 1)
    assert first.returncode == 0, first.stderr
    second = _run_script(tmp_path, SCRIPT_STATEFUL, [tmp_path / "run", "b.csv"], 2)
    assert second.returncode == 0, second.stderr
    assert int(first.stdout.split()[-1]) > 2
    assert int(second.stdout.split()[-1]) == 3  # every row loaded, checked
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()


def test_a_retrained_model_is_another_run(interruptible, tmp_path, line_data):
    explainer, rows = interruptible
    explainer.explain(rows.iloc[:2], checkpoint=tmp_path / "run")
    X, y = line_data
    other = clone(explainer)
    # the same type and parameters (a model of other parameters is another
    # run by the fingerprint alone), retrained on other rows
    retrained = LogisticRegression().fit(X.iloc[::3], y.iloc[::3])
    other.set_params(estimator=Interruptible(retrained))
    other.fit(X)
    with pytest.raises(ValueError, match="answered otherwise about row"):
        other.explain(rows.iloc[:2], checkpoint=tmp_path / "run")


# ---------------------------------------------------------------------- #
# issue 23: who is trusted, and what is opened
# ---------------------------------------------------------------------- #
@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX permissions")
def test_a_group_writable_directory_is_refused_unless_shared(interruptible, tmp_path):
    explainer, rows = interruptible
    run = tmp_path / "run"
    run.mkdir()
    run.chmod(0o770)
    with pytest.raises(ValueError, match="writable by its group.*shared_checkpoint"):
        explainer.explain(rows.iloc[:2], checkpoint=run)
    assert not (run / MANIFEST).exists()
    frame = explainer.explain(rows.iloc[:2], checkpoint=run, shared_checkpoint=True)
    assert (frame["status"] == "ok").all()


LOCKER = """
import fcntl, os, sys, time
handle = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(handle, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.readline()
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX locks")
def test_a_second_process_is_refused_at_once_and_no_row_is_lost(
    interruptible, tmp_path
):
    explainer, rows = interruptible
    run = tmp_path / "run"
    explainer.explain(rows.iloc[:2], checkpoint=run)  # two rows saved
    saved = sorted(p.name for p in pieces(run))
    # another process explaining into it now holds the lock
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(run / ".lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(ValueError, match="another process holds its lock"):
            explainer.explain(rows.iloc[:2], checkpoint=run)
    finally:
        holder.communicate("\n", timeout=30)
    # nothing was written or lost: the rows saved before still resume
    assert sorted(p.name for p in pieces(run)) == saved
    Interruptible.calls = 0
    explainer.explain(rows.iloc[:2], checkpoint=run)
    assert Interruptible.calls == 3  # the decisions now, the plans checked
    # and the lock is released after a run, even one that raised
    Interruptible.calls, Interruptible.budget = 0, 3
    with pytest.raises(KeyboardInterrupt):
        explainer.explain(rows.iloc[:4], checkpoint=tmp_path / "other")
    Interruptible.budget = None
    frame = explainer.explain(rows.iloc[:4], checkpoint=tmp_path / "other")
    assert frame["instance"].nunique() == 4


TWO_RUNS = """
import sys
sys.path.insert(0, sys.argv[3])
import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn_cscf import Action, SequentialCounterfactualExplainer

rng = np.random.default_rng(0)
X = pd.DataFrame({"income": rng.uniform(0, 100, 300), "debt": rng.uniform(0, 50, 300)})
y = (X["income"] - X["debt"] > 40).astype(int)
model = LogisticRegression().fit(X, y)
explainer = SequentialCounterfactualExplainer(
    model,
    actions=[
        Action("earn", "income", values=(0.0, 200.0), direction="increase"),
        Action("repay", "debt", values=(0.0, 50.0), direction="decrease"),
    ],
    population_size=30, n_generations=8, random_state=0, batch_size=1, n_jobs=1,
).fit(X)
rows = X[model.predict(X) == 0].iloc[:12]
try:
    frame = explainer.explain(rows, checkpoint=sys.argv[1])
except ValueError as exc:
    print("REFUSED", exc)
else:
    frame.to_csv(sys.argv[2])
    print("DONE", frame["instance"].nunique())
"""


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX locks")
def test_two_concurrent_processes_into_one_directory_lose_no_row(tmp_path):
    script = tmp_path / "two.py"
    script.write_text(textwrap.dedent(TWO_RUNS))
    run = tmp_path / "run"
    started = [
        subprocess.Popen(
            [sys.executable, str(script), str(run), f"{k}.csv", str(ROOT)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        for k in range(2)
    ]
    outs = [p.communicate(timeout=300) for p in started]
    assert all(p.returncode == 0 for p in started), [o[1] for o in outs]
    said = [o[0].strip() for o in outs]
    # each either finished with every row, or was refused at once
    assert all(s.startswith(("DONE 12", "REFUSED")) for s in said), said
    assert any(s.startswith("DONE 12") for s in said)
    for s in said:
        if s.startswith("REFUSED"):
            assert "another process holds its lock" in s
    # the directory resumes every row
    third = subprocess.run(
        [sys.executable, str(script), str(run), "third.csv", str(ROOT)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert third.stdout.startswith("DONE 12"), third.stderr
    done = [k for k, s in enumerate(said) if s.startswith("DONE")][0]
    assert (tmp_path / "third.csv").read_text() == (
        tmp_path / f"{done}.csv"
    ).read_text()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
@pytest.mark.parametrize("which", ["piece", "manifest"])
def test_a_named_pipe_in_the_directory_is_refused_not_read(
    interruptible, tmp_path, which
):
    explainer, rows = interruptible
    run = tmp_path / "run"
    explainer.explain(rows.iloc[:2], checkpoint=run)
    target = pieces(run)[0] if which == "piece" else run / MANIFEST
    target.unlink()
    os.mkfifo(target)
    with pytest.raises(ValueError, match="not a regular file") as caught:
        explainer.explain(rows.iloc[:2], checkpoint=run)
    assert str(target) in str(caught.value)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="/dev/zero")
@pytest.mark.parametrize("which", ["piece", "manifest"])
def test_a_link_to_dev_zero_is_refused_not_read(interruptible, tmp_path, which):
    explainer, rows = interruptible
    run = tmp_path / "run"
    explainer.explain(rows.iloc[:2], checkpoint=run)
    target = pieces(run)[0] if which == "piece" else run / MANIFEST
    target.unlink()
    target.symlink_to("/dev/zero")
    with pytest.raises(ValueError, match="is a link") as caught:
        explainer.explain(rows.iloc[:2], checkpoint=run)
    assert str(target) in str(caught.value)


@pytest.mark.parametrize("which", ["piece", "manifest"])
def test_a_huge_sparse_file_is_refused_by_its_size(interruptible, tmp_path, which):
    explainer, rows = interruptible
    run = tmp_path / "run"
    explainer.explain(rows.iloc[:2], checkpoint=run)
    target = pieces(run)[0] if which == "piece" else run / MANIFEST
    with open(target, "r+b") as handle:
        handle.truncate(8 << 30)  # 8 GB, sparse: never read whole
    with pytest.raises(ValueError, match="8589934592 bytes, more than") as caught:
        explainer.explain(rows.iloc[:2], checkpoint=run)
    assert str(target) in str(caught.value)


def _forge(run, change):
    """Rewrite the first piece with ``change(arrays)`` and its hash."""
    import hashlib
    import io

    piece = pieces(run)[0]
    with np.load(piece, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    change(arrays)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    data = buffer.getvalue()
    piece.write_bytes(data)
    stored = json.loads((run / MANIFEST).read_text())
    entry = stored["pieces"][piece.name]
    entry.update(
        sha256=hashlib.sha256(data).hexdigest(),
        bytes=len(data),
        rows=arrays["positions"].tolist(),
    )
    (run / MANIFEST).write_text(json.dumps(stored))
    return piece


@pytest.mark.parametrize("position", [7, -1, 10**6])
def test_forged_row_positions_outside_x_name_the_piece(
    interruptible, tmp_path, position
):
    explainer, rows = interruptible
    run = tmp_path / "run"
    explainer.explain(rows.iloc[:2], checkpoint=run)

    def outside(arrays):
        arrays["positions"] = arrays["positions"].copy()
        arrays["positions"][0] = position

    piece = _forge(run, outside)
    with pytest.raises(ValueError, match="outside the 2 rows of X") as caught:
        explainer.explain(rows.iloc[:2], checkpoint=run)
    assert str(piece) in str(caught.value)


def test_a_foreign_manifest_is_left_alone(interruptible, tmp_path):
    explainer, rows = interruptible
    run = tmp_path / "project"
    run.mkdir(mode=0o700)
    (run / MANIFEST).write_text(json.dumps({"name": "my web app", "version": 3}))
    (run / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not the manifest of an sklearn-cscf") as e:
        explainer.explain(rows.iloc[:2], checkpoint=run)
    assert "delete" not in str(e.value).lower()
    assert "left alone" in str(e.value)
    assert (run / "notes.txt").exists()

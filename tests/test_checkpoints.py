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
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from sklearn_cscf import Action, SequentialCounterfactualExplainer
from sklearn_cscf._checkpoints import MANIFEST, Checkpoint

SMALL = {"population_size": 40, "n_generations": 10, "random_state": 0}
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def line_data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {"income": rng.uniform(0, 100, 400), "debt": rng.uniform(0, 50, 400)}
    )
    y = (X["income"] - X["debt"] + rng.normal(0, 8, 400) > 40).astype(int)
    return X, y


def line_actions():
    return [
        Action("earn", "income", values=(0.0, 200.0), direction="increase"),
        Action("repay", "debt", values=(0.0, 50.0), direction="decrease"),
    ]


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
    # asked (predict_proba, and predict, which calls it once more here)
    Interruptible.calls = 0
    again = explainer.explain(rows, checkpoint=tmp_path / "run")
    pd.testing.assert_frame_equal(again, whole, check_exact=True)
    assert Interruptible.calls == 2


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
    assert Interruptible.calls == 2  # nothing searched again
    four = whole[0]["instance"].isin(rows.index[:4])
    pd.testing.assert_frame_equal(frame, whole[0][four].reset_index(drop=True))
    pd.testing.assert_frame_equal(
        states,
        whole[1][whole[1]["instance"].isin(rows.index[:4])].reset_index(drop=True),
    )
    pd.testing.assert_frame_equal(
        details.drop(columns=["model_seconds", "total_seconds"]),
        whole[2]
        .iloc[:4]
        .drop(columns=["model_seconds", "total_seconds"])
        .reset_index(drop=True),
        check_dtype=False,
    )


def test_a_checkpoint_of_another_run_is_refused(interruptible, tmp_path):
    explainer, rows = interruptible
    explainer.explain(rows.iloc[:2], checkpoint=tmp_path / "run")
    with pytest.raises(ValueError, match="results of another run"):
        explainer.explain(rows.iloc[:3], checkpoint=tmp_path / "run")
    for change in ({"max_plans": 1}, {"all_orders": True}, {"random_state": 1}):
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
    assert Interruptible.calls == 2


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
    assert second_calls == 2  # every row loaded: only the decisions now
    assert (tmp_path / "first.csv").read_text() == (tmp_path / "second.csv").read_text()

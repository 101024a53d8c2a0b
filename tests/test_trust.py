"""Trust, round four (issue 36): every knob validated, a resume re-checks what
it loads, the model cannot corrupt the search, bounded model calls, files
that read back, no status that claims more than was checked, and the
lenient cases. The faults (workers killed, a file-size limit) are in
test_faults.py.

Each test is named after what it tries.
"""

import errno
import json
import os
import pickle
import subprocess
import sys
import textwrap
import warnings
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _line import SMALL, Wrapping, line_actions
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils._param_validation import make_constraint

import sklearn_cscf._explainer as explainer_module
from sklearn_cscf import (
    Action,
    SequentialCounterfactualExplainer,
    describe,
    make_actions,
    read_explanations,
    replay,
    write_explanations,
)
from sklearn_cscf._status import STATUS_UNREACHABLE

ROOT = Path(__file__).resolve().parents[1]


def _statuses(frame):
    return frame.groupby("instance", sort=False)["status"].first()


# ---------------------------------------------------------------------- #
# every parameter validated
# ---------------------------------------------------------------------- #
# values of the wrong type (or kind) for most parameters; those a parameter's
# constraints accept are not tried on it
WRONG = ("no", True, 2.5, -1, object(), {"a": 1})


def _wrong_values(constraints):
    if constraints == "no_validation":  # target_class: any label of the model
        return ["no", True, 2.5, object()]
    checks = [make_constraint(c) for c in constraints]
    return [v for v in WRONG if not any(c.is_satisfied_by(v) for c in checks)]


def test_no_parameter_takes_a_value_of_the_wrong_type(line_data, logistic):
    X, _ = line_data
    constraints = SequentialCounterfactualExplainer._parameter_constraints
    assert "max_model_rows" in constraints
    tried = 0
    for name, allowed in constraints.items():
        values = _wrong_values(allowed)
        # a boolean is a number to Python: refused unless it means something
        if allowed != "no_validation" and not {"boolean", "verbose"} & {
            c for c in allowed if isinstance(c, str)
        }:
            assert True in values, name
        for value in values:
            params = {"estimator": logistic, "actions": line_actions(), **SMALL}
            explainer = SequentialCounterfactualExplainer(**{**params, name: value})
            with pytest.raises((ValueError, TypeError)) as caught:
                explainer.fit(X)
            assert name in str(caught.value), (name, value, str(caught.value))
            tried += 1
    # explain's keywords, on a fitted explainer
    explainer = SequentialCounterfactualExplainer(
        logistic, actions=line_actions(), **SMALL
    ).fit(X)
    keywords = SequentialCounterfactualExplainer._explain_parameter_constraints
    for name, allowed in keywords.items():
        for value in _wrong_values(allowed):
            with pytest.raises((ValueError, TypeError)) as caught:
                explainer.explain(X.iloc[:1], **{name: value})
            assert name in str(caught.value), (name, value)
            tried += 1
    assert tried > 60


def test_a_boolean_is_not_a_number_of_steps(line_data, logistic):
    X, _ = line_data
    for name in ("max_sequence_length", "batch_size", "max_plans", "n_jobs"):
        explainer = SequentialCounterfactualExplainer(logistic, **{name: True})
        with pytest.raises(ValueError, match=f"'{name}' parameter"):
            explainer.fit(X)


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX permissions")
def test_shared_checkpoint_is_a_boolean_and_needs_a_checkpoint(fitted_line, tmp_path):
    X = pd.DataFrame({"income": [10.0], "debt": [30.0]})
    run = tmp_path / "run"
    run.mkdir()
    run.chmod(0o770)  # group-writable: refused unless shared on purpose
    with pytest.raises(ValueError, match="writable by its group"):
        fitted_line.explain(X, checkpoint=run)
    for truthy in ("no", 1, "yes", [True]):
        with pytest.raises(ValueError, match="'shared_checkpoint' parameter"):
            fitted_line.explain(X, checkpoint=run, shared_checkpoint=truthy)
    assert not (run / "manifest.json").exists()  # nothing was trusted
    with pytest.raises(ValueError, match="no checkpoint was given"):
        fitted_line.explain(X, shared_checkpoint=True)
    frame = fitted_line.explain(X, checkpoint=run, shared_checkpoint=True)
    assert frame["status"].iloc[0] == "ok"


def test_target_class_given_to_a_regressor_is_refused(line_data):
    X, _ = line_data
    model = LinearRegression().fit(X, X["income"] - X["debt"])
    explainer = SequentialCounterfactualExplainer(
        model, target_range=(40, None), target_class=1
    )
    with pytest.raises(ValueError, match="target_class=1 names a class"):
        explainer.fit(X)


# ---------------------------------------------------------------------- #
# a resume re-checks what it loads
# ---------------------------------------------------------------------- #
def test_a_retrained_model_of_the_same_type_has_its_loaded_plans_checked(
    line_data, tmp_path
):
    X, y = line_data
    tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    # the same type and parameters, retrained on other rows
    other = DecisionTreeClassifier(random_state=0).fit(X.iloc[::2], y.iloc[::2])
    # rows both trees reject, with the same (pure-leaf) probabilities
    both = (tree.predict_proba(X)[:, 0] == 1) & (other.predict_proba(X)[:, 0] == 1)
    rows = X[both].iloc[:8]
    params = {"actions": line_actions(), "random_state": 0, "n_generations": 15}
    first = SequentialCounterfactualExplainer(tree, **params).fit(X)
    frame, states = first.explain(rows, checkpoint=tmp_path / "run", return_states=True)
    last = states.groupby(["instance", "solution"]).tail(1)
    rejected = other.predict(last[["income", "debt"]]) == 0
    stale = last["instance"][rejected].unique()
    assert stale.size, "the retrained tree accepts every saved plan"
    second = SequentialCounterfactualExplainer(other, **params).fit(X)
    with pytest.warns(UserWarning, match=rf"{stale.size} of the 8 rows loaded"):
        resumed, states = second.explain(
            rows, checkpoint=tmp_path / "run", return_states=True
        )
    # every reported plan holds for the model now in use
    checked = replay(second, rows, resumed, states)
    assert checked["passed"].all(), checked[~checked["passed"]]
    # the rows whose plans still hold were kept as saved
    kept = ~frame["instance"].isin(stale)
    pd.testing.assert_frame_equal(
        resumed[resumed["instance"].isin(frame["instance"][kept])].reset_index(
            drop=True
        ),
        frame[kept].reset_index(drop=True),
    )


class Noisy(ClassifierMixin, BaseEstimator):
    """A fitted classifier whose probabilities carry a little noise."""

    def __init__(self, base=None, scale=0.01):
        self.base = base
        self.scale = scale

    def __sklearn_is_fitted__(self):
        return True

    @property
    def classes_(self):
        return self.base.classes_

    def predict_proba(self, X):
        proba = self.base.predict_proba(X)
        noise = np.random.default_rng().uniform(-self.scale, self.scale, len(proba))
        shifted = np.clip(proba[:, 1] + noise, 0, 1)
        return np.column_stack([1 - shifted, shifted])


def test_a_noisy_wrapper_around_another_model_is_another_run(line_data, tmp_path):
    X, y = line_data
    logistic = LogisticRegression().fit(X, y)
    tree = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    rows = X[logistic.predict(X) == 0].iloc[:3]
    with pytest.warns(UserWarning, match="not deterministic"):
        first = SequentialCounterfactualExplainer(
            Noisy(logistic), actions=line_actions(), **SMALL
        ).fit(X)
    first_frame = first.explain(rows, checkpoint=tmp_path / "run")
    with pytest.warns(UserWarning, match="not deterministic"):
        second = SequentialCounterfactualExplainer(
            Noisy(tree), actions=line_actions(), **SMALL
        ).fit(X)
    with pytest.raises(ValueError, match="results of another run"):
        second.explain(rows, checkpoint=tmp_path / "run")
    # the same noisy model resumes, its loaded plans kept as they are (its
    # answers vary: its rejections prove nothing)
    with pytest.warns(UserWarning, match="not deterministic"):
        again = SequentialCounterfactualExplainer(
            Noisy(logistic), actions=line_actions(), **SMALL
        ).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resumed = again.explain(rows, checkpoint=tmp_path / "run")
    pd.testing.assert_frame_equal(resumed, first_frame)


def test_a_complete_checkpoint_on_read_only_media_is_read(
    fitted_line, line_data, tmp_path, monkeypatch
):
    X, _ = line_data
    rows = X[fitted_line.estimator_.predict(X) == 0].iloc[:3]
    run = tmp_path / "run"
    explainer = fitted_line.set_params(batch_size=1)  # a piece per row
    try:
        whole = explainer.explain(rows, checkpoint=run)
    finally:
        fitted_line.set_params(batch_size=64)
    real_open = os.open

    def read_only(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)  # as root, chmod would not do
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to save: nothing to say
        frame = fitted_line.explain(rows, checkpoint=run)
    pd.testing.assert_frame_equal(frame, whole)
    # rows it does not hold (two pieces lost) are explained, not saved, and
    # it says so once
    for piece in sorted(run.glob("piece-*"))[:2]:
        piece.unlink()
    with pytest.warns(UserWarning, match="cannot be written to") as caught:
        frame = fitted_line.explain(rows, checkpoint=run)
    pd.testing.assert_frame_equal(frame, whole)
    assert sum("checkpointing stopped" in str(w.message) for w in caught) == 1
    assert len(list(run.glob("piece-*"))) == 1  # nothing written


# ---------------------------------------------------------------------- #
# the model gets a copy
# ---------------------------------------------------------------------- #
class Honest(Wrapping):
    """Answers as its model does."""

    def predict_proba(self, X):
        return self.model.predict_proba(X)

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


class Scribbles(Wrapping):
    """Answers, then overwrites what it was given with zeros (in place)."""

    def predict_proba(self, X):
        proba = self.model.predict_proba(X)
        if isinstance(X, pd.DataFrame):
            X.iloc[:, :] = 0.0
        else:
            X[...] = 0.0
        return proba

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


@pytest.mark.parametrize("as_array", [False, True])
def test_a_model_changing_its_input_in_place_changes_no_answer(line_data, as_array):
    X, y = line_data
    if as_array:
        X = X.to_numpy()
    inner = LogisticRegression().fit(X, y)
    rows = X[inner.predict(X) == 0][:4]
    actions = [
        Action("earn", 0 if as_array else "income", values=(0.0, 200.0)),
        Action("repay", 1 if as_array else "debt", values=(0.0, 50.0)),
    ]
    frames = [
        SequentialCounterfactualExplainer(model, actions=actions, **SMALL)
        .fit(X)
        .explain(rows)
        for model in (Honest(inner), Scribbles(inner))
    ]
    assert (frames[0]["status"] == "ok").all()
    pd.testing.assert_frame_equal(frames[1], frames[0], check_exact=True)


# ---------------------------------------------------------------------- #
# NaN row labels
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize("missing", [np.nan, None])
def test_a_missing_row_label_is_refused(fitted_line, missing):
    rows = pd.DataFrame(
        {"income": [10.0, 20.0], "debt": [30.0, 40.0]},
        index=pd.Index(["a", missing], dtype=object),
    )
    with pytest.raises(ValueError, match="missing index label .* position 1"):
        fitted_line.explain(rows)


# ---------------------------------------------------------------------- #
# open target ranges everywhere
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize("target_range", [(40, None), (None, 0.0)])
def test_an_open_target_range_replays_plots_and_reads(line_data, target_range):
    X, _ = line_data
    model = LinearRegression().fit(X, X["income"] - X["debt"])
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=[
            Action("earn", "income", values=(0.0, 200.0)),
            Action("repay", "debt", values=(0.0, 50.0)),
        ],
        target_range=target_range,
        **SMALL,
    ).fit(X)
    rows = X.iloc[:6]
    frame, states = explainer.explain(rows, return_states=True)
    assert (frame["status"] == "ok").any()
    checked = replay(explainer, rows, frame, states)
    assert checked["passed"].all()
    label = frame.loc[frame["status"] == "ok", "instance"].iloc[0]
    assert "prediction" in describe(frame[frame["instance"] == label])
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from sklearn_cscf.plotting import TargetProbabilityDisplay

    display = TargetProbabilityDisplay.from_explanations(frame, label)
    low, high = display.target_range
    assert np.isinf(high if target_range[1] is None else low)
    plt.close(display.figure_)


# ---------------------------------------------------------------------- #
# bounded model calls, in fit too, and messages that name the setting
# ---------------------------------------------------------------------- #
class Picky(Wrapping):
    """Refuses a call of more than ``limit`` rows, as a web service might;
    records the size of each call."""

    limit = 30  # less than a generation of one row (40)
    sizes = []

    def predict_proba(self, X):
        type(self).sizes.append(len(X))
        if len(X) > type(self).limit:
            raise ValueError(f"batch of {len(X)} rows: at most {self.limit}")
        return self.model.predict_proba(X)

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


def test_bounded_calls_in_fit_and_explain_with_one_setting(line_data, logistic):
    X, _ = line_data  # 400 rows
    rows = X[logistic.predict(X) == 0].iloc[:3]  # 3 x 40 states a generation
    params = {"actions": line_actions(), **SMALL}
    with pytest.raises(ValueError, match="max_model_rows") as caught:
        SequentialCounterfactualExplainer(Picky(logistic), **params).fit(X)
    assert "at most 30" in str(caught.value)  # the model's own words
    Picky.sizes = []
    explainer = SequentialCounterfactualExplainer(
        Picky(logistic), max_model_rows=30, **params
    ).fit(X)
    frame = explainer.explain(rows, checkpoint=None)
    assert max(Picky.sizes) <= 30 and len(Picky.sizes) > 10
    # the chunks change no answer: as one call of a model taking any size
    reference = SequentialCounterfactualExplainer(Honest(logistic), **params)
    pd.testing.assert_frame_equal(frame, reference.fit(X).explain(rows))
    # replay asks in calls of max_model_rows too
    _, states = explainer.explain(rows, return_states=True)
    Picky.sizes = []
    assert replay(explainer, rows, frame, states)["passed"].all()
    assert max(Picky.sizes) <= 30
    # without the setting, each row's error names it
    explainer.set_params(max_model_rows=None)
    with pytest.warns(UserWarning, match="could not be explained"):
        failed = explainer.explain(rows)
    messages = failed["message"].dropna()
    assert (failed["status"] == "error").all()
    assert messages.str.contains("max_model_rows").all(), messages.iloc[0]


# ---------------------------------------------------------------------- #
# write_explanations and read_explanations agree
# ---------------------------------------------------------------------- #
def test_a_users_extra_columns_are_kept_by_the_files(fitted_line, line_data, tmp_path):
    X, _ = line_data
    frame = fitted_line.explain(X[fitted_line.estimator_.predict(X) == 0].iloc[:3])
    n = len(frame)
    frame["note"] = pd.array(["call back"] * (n - 1) + [None], dtype="string")
    frame["rank"] = np.arange(n)
    frame["score"] = np.linspace(0, 1, n)
    frame["chosen"] = np.arange(n) % 2 == 0
    for name in ("e.csv", "e.parquet"):
        write_explanations(frame, tmp_path / name)
        back = read_explanations(tmp_path / name)
        pd.testing.assert_frame_equal(back, frame, check_dtype=False)
        assert back["rank"].dtype.kind == "i" and back["chosen"].dtype == bool
        assert back["note"].tolist()[:1] == ["call back"]
    # text a CSV file would give back as numbers is refused before writing
    frame["code"] = [str(10 + k) for k in range(n)]
    with pytest.raises(ValueError, match=r"Column 'code' .* reads back .* as int"):
        write_explanations(frame, tmp_path / "f.csv")
    assert not (tmp_path / "f.csv").exists()


# ---------------------------------------------------------------------- #
# columns and frames of other kinds
# ---------------------------------------------------------------------- #
def test_a_decimal_column_is_named_with_the_fix(line_data, logistic):
    X, _ = line_data
    X = X.assign(income=[Decimal(str(round(v, 2))) for v in X["income"]])
    explainer = SequentialCounterfactualExplainer(
        logistic,
        actions=[Action("earn", "income", direction="increase")],
    )
    with pytest.raises(TypeError, match=r"'income' holds decimal\.Decimal .*astype"):
        explainer.fit(X)


def test_a_pyarrow_table_keeps_its_column_names(line_data, logistic):
    pa = pytest.importorskip("pyarrow")
    X, _ = line_data
    rows = X[logistic.predict(X) == 0].iloc[:2].reset_index(drop=True)
    by_pandas = SequentialCounterfactualExplainer(
        logistic, actions=line_actions(), **SMALL
    ).fit(X)
    by_arrow = SequentialCounterfactualExplainer(
        logistic, actions=line_actions(), **SMALL
    ).fit(pa.Table.from_pandas(X))
    assert by_arrow.feature_names_in_.tolist() == ["income", "debt"]
    frame = by_arrow.explain(pa.Table.from_pandas(rows))
    pd.testing.assert_frame_equal(frame, by_pandas.explain(rows))


def test_a_polars_enum_and_pandas_categories_give_the_same_actions():
    pl = pytest.importorskip("polars")
    declared = ["car", "education", "vacation", "business"]  # vacation: unused
    purpose = ["car", "education", "business", "car", "business"]
    X = pd.DataFrame({"purpose": purpose, "amount": [1.0, 2.0, 3.0, 4.0, 5.0]})
    ordered = X.astype({"purpose": pd.CategoricalDtype(declared, ordered=True)})
    unordered = X.astype({"purpose": pd.CategoricalDtype(declared)})
    enum = pl.from_pandas(X).with_columns(pl.col("purpose").cast(pl.Enum(declared)))

    def purpose_action(frame):
        (action,) = [a for a in make_actions(frame) if a.feature == "purpose"]
        return action

    by_enum = purpose_action(enum)
    # the categories offered are those the data holds, in the declared order
    assert by_enum.values == ["car", "education", "business"]
    # an Enum is an ordered category: the same action as pandas' ordered one
    assert repr(purpose_action(ordered)) == repr(by_enum)
    # and the same values as an unordered one (which costs per change)
    by_unordered = purpose_action(unordered)
    compiled = SequentialCounterfactualExplainer(actions=[by_unordered])
    compiled.set_params(estimator=_FixedModel()).fit(unordered)
    assert compiled.actions_[0].values == by_enum.values


class _FixedModel:
    classes_ = np.array([0, 1])

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        return np.column_stack([np.ones(len(X)) * 0.6, np.ones(len(X)) * 0.4])

    def predict(self, X):
        return np.zeros(len(X), dtype=int)


# ---------------------------------------------------------------------- #
# statuses claim only what was checked
# ---------------------------------------------------------------------- #
class Needle(Wrapping):
    """Accepts only an income within ``width`` of 77 (a narrow band)."""

    width = 0.05

    def __init__(self):
        pass

    def predict_proba(self, X):
        income = np.asarray(X["income"], dtype=float)
        accepted = (np.abs(income - 77.0) <= type(self).width).astype(float)
        return np.column_stack([1.0 - accepted, accepted])

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


def test_a_needle_of_acceptance_is_not_called_unreachable():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "income": np.round(rng.uniform(0, 100, 300), 1),
            "debt": rng.uniform(0, 50, 300),
        }
    )
    X.loc[0, "income"] = 77.0  # a value seen in fit lies in the band
    rows = pd.DataFrame({"income": [30.0, 20.0], "debt": [10.0, 5.0]})
    explainer = SequentialCounterfactualExplainer(
        Needle(),
        actions=line_actions(),
        population_size=10,
        n_generations=3,
        refine=False,
        random_state=0,
    ).fit(X)
    small = explainer.explain(rows)
    # a small budget finds nothing; the probe finds the band: a plan exists
    assert (small["status"] == "no_counterfactual").all(), small["message"]
    big = explainer.set_params(
        population_size=200, n_generations=40, refine=True
    ).explain(rows)
    assert (big["status"] == "ok").all()
    # a band between every value tried: unreachable, but the message claims
    # no more than the probes checked
    Needle.width, center = 0.001, 77.0
    assert not (np.abs(X["income"] - center) <= 0.001).sum() > 1
    try:
        X.loc[0, "income"] = 12.3
        explainer = explainer.set_params(
            population_size=10, n_generations=3, refine=False
        ).fit(X)
        frame = explainer.explain(rows)
    finally:
        Needle.width = 0.05
    assert (frame["status"] == STATUS_UNREACHABLE).all()
    message = frame["message"].iloc[0]
    assert "unlikely to help" not in message and "will not help" not in message
    assert "values between them" in message
    assert "which a larger budget may find" in message
    assert "for a model monotone in the changed features no plan exists" in (
        message.lower()
    )


# ---------------------------------------------------------------------- #
# versions
# ---------------------------------------------------------------------- #
def test_a_pickle_of_another_version_warns_on_load(fitted_line, monkeypatch):
    data = pickle.dumps(fitted_line)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same = pickle.loads(data)  # this version: silent
    assert same.get_params()["max_model_rows"] is None
    monkeypatch.setattr(explainer_module, "__version__", "99.0")
    with pytest.warns(UserWarning, match=r"sklearn-cscf version .* using version 99"):
        pickle.loads(data)
    # a pickle that records no version (before this one) warns too
    state = dict(fitted_line.__getstate__())
    state.pop("_sklearn_cscf_version")
    del state["max_model_rows"]
    blank = SequentialCounterfactualExplainer.__new__(SequentialCounterfactualExplainer)
    with pytest.warns(UserWarning, match="records none"):
        blank.__setstate__(state)
    assert blank.max_model_rows is None  # a parameter added since: its default


# ---------------------------------------------------------------------- #
# Ctrl-C during the command-line job
# ---------------------------------------------------------------------- #
INTERRUPTED = """
import runpy
import sys


class CtrlC:  # Ctrl-C while the libraries the job needs load
    def find_spec(self, name, path=None, target=None):
        if name == "pandas":
            raise KeyboardInterrupt
        return None


sys.meta_path.insert(0, CtrlC())
sys.argv = ["sklearn_cscf", "--dataset", "german", "--output", sys.argv[1]]
runpy.run_module("sklearn_cscf", run_name="__main__", alter_sys=True)
"""


def test_ctrl_c_in_the_command_line_job_exits_130_without_a_traceback(tmp_path):
    script = tmp_path / "interrupted.py"
    script.write_text(textwrap.dedent(INTERRUPTED))
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip() == "Interrupted."


def test_checkpoint_manifest_records_no_max_model_rows(fitted_line, tmp_path):
    # the size of the model's calls changes no answer: a run resumed with
    # another max_model_rows (a model that began refusing large batches) is
    # the same run
    X = pd.DataFrame({"income": [10.0, 12.0], "debt": [30.0, 35.0]})
    first = fitted_line.explain(X, checkpoint=tmp_path / "run")
    key = json.loads((tmp_path / "run" / "manifest.json").read_text())["fingerprint"]
    try:
        again = fitted_line.set_params(max_model_rows=7).explain(
            X, checkpoint=tmp_path / "run"
        )
    finally:
        fitted_line.set_params(max_model_rows=None)
    pd.testing.assert_frame_equal(again, first)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["fingerprint"] == key

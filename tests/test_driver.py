"""The run driver (sklearn_cscf._driver): blocks, seeds, the named result of
a run, and the pieces of the output assembled in input order."""

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from _line import (
    SMALL,
    Wrapping,
    line_actions,
)
from _results import ACTIONS, SCHEMA, TARGETS, ok_result, quick_result
from joblib import parallel_config
from sklearn.linear_model import LogisticRegression

from sklearn_cscf import Action, SequentialCounterfactualExplainer, replay
from sklearn_cscf._compile import Settings
from sklearn_cscf._driver import (
    Explained,
    Output,
    _blocks,
    assemble,
    instance_seed,
    make_piece,
    run,
)
from sklearn_cscf._status import (
    STATUS_ALREADY_TARGET,
    STATUS_NO_COUNTERFACTUAL,
    STATUS_OK,
)


@pytest.mark.parametrize(
    "n, batch_size, n_workers, sizes",
    [
        (0, 4, 2, []),
        (10, 4, 1, [4, 3, 3]),
        (3, 64, 2, [2, 1]),  # one block per worker while rows last
        (2, 64, 8, [1, 1]),
    ],
)
def test_blocks_cover_every_row_once_in_order(n, batch_size, n_workers, sizes):
    blocks = _blocks(n, batch_size, n_workers)
    assert [len(b) for b in blocks] == sizes
    joined = np.concatenate([[], *blocks]).astype(int)
    assert joined.tolist() == list(range(n))


def test_frames_do_not_depend_on_workers_or_blocks():
    # rows at different distances from the class, split into blocks in
    # several ways; a row already of the target class (2.5) rides along
    X = pd.DataFrame({"x": np.linspace(0, 3, 40)})
    y = (X["x"] > 1.5).astype(int)
    explainer = SequentialCounterfactualExplainer(
        LogisticRegression().fit(X, y),
        population_size=20,
        n_generations=3,
        random_state=0,
    ).fit(X)
    rows = pd.DataFrame({"x": [0.2, 1.4, 2.5, 0.1, 1.0, 0.6, 1.3]})
    reference, details = explainer.set_params(n_jobs=1).explain(
        rows, return_details=True
    )
    assert (details["status"] == "ok").sum() == 6
    for n_jobs, batch_size in [(2, 64), (2, 2), (3, 1), (4, 3)]:
        with parallel_config(backend="threading"):
            frame = explainer.set_params(n_jobs=n_jobs, batch_size=batch_size).explain(
                rows
            )
        pd.testing.assert_frame_equal(frame, reference, check_exact=True)


def test_an_instance_seed_depends_on_the_row_and_the_target_only():
    x0 = np.array([1.0, 2.0])
    first = instance_seed(7, x0, 1).generate_state(4)
    assert np.array_equal(first, instance_seed(7, x0.copy(), 1).generate_state(4))
    assert not np.array_equal(first, instance_seed(7, x0, 0).generate_state(4))
    assert not np.array_equal(first, instance_seed(8, x0, 1).generate_state(4))
    assert not np.array_equal(
        first, instance_seed(7, np.array([1.0, 2.5]), 1).generate_state(4)
    )


def test_a_run_returns_named_tables_in_input_order():
    X = pd.DataFrame({"x": np.linspace(0, 3, 40)})
    y = (X["x"] > 1.5).astype(int)
    explainer = SequentialCounterfactualExplainer(
        LogisticRegression().fit(X, y),
        population_size=20,
        n_generations=3,
        random_state=0,
    ).fit(X)
    rows = pd.DataFrame({"x": [0.5, 2.5, 1.0]}, index=[30, 10, 20])
    settings = Settings.from_params(explainer.get_params(deep=False))
    explained = run(explainer._fitted, settings, rows, with_states=True)
    assert isinstance(explained, Explained)
    assert explained.details["instance"].tolist() == [30, 10, 20]
    assert explained.details["status"].tolist()[1] == "already_target"
    assert explained.finals.shape == (3, 1)
    assert explained.finals[1, 0] == 2.5  # an accepted row reports itself
    assert explained.states is not None
    # what transform returns: the final states in the input's labels
    assert explained.final_states().index.tolist() == [30, 10, 20]


def test_importing_and_explaining_quietly_never_imports_tqdm():
    code = (
        "import sys, numpy as np, pandas as pd\n"
        "from sklearn.linear_model import LogisticRegression\n"
        "import sklearn_cscf\n"
        "X = pd.DataFrame({'a': np.arange(20.0), 'b': np.arange(20.0) % 3})\n"
        "y = (X['a'] > 10).astype(int)\n"
        "e = sklearn_cscf.SequentialCounterfactualExplainer(\n"
        "    LogisticRegression().fit(X, y), population_size=10,\n"
        "    n_generations=2, random_state=0).fit(X)\n"
        "e.explain(X.head(3))\n"
        "print('tqdm' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"
    assert "Tqdm" not in out.stderr


def test_warnings_name_rows_as_plain_numbers(dummies_explained):
    explainer, rejected, _, _ = dummies_explained
    broken = explainer.actions[:1] + [
        Action("repay", "debt", cost=lambda b, a: 1 / 0),
    ]
    failing = SequentialCounterfactualExplainer(
        explainer.estimator_, actions=broken, population_size=20, n_generations=3
    ).fit(rejected)
    index = pd.Index(np.arange(286, 286 + len(rejected), dtype=np.int64))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        failing.explain(rejected.set_axis(index))
    messages = [str(w.message) for w in caught if "status 'error'" in str(w.message)]
    assert messages
    assert "row 286:" in messages[0]
    assert "np.int64" not in messages[0]


def test_a_nan_the_model_refuses_marks_only_that_row_error(line_data):
    X, y = line_data
    model = LogisticRegression().fit(X, y)
    rows = X[model.predict(X) == 0].iloc[:3].copy()
    rows.iloc[1, 0] = np.nan
    explainer = SequentialCounterfactualExplainer(
        model, actions=line_actions(), **SMALL
    ).fit(X)
    with pytest.warns(UserWarning, match="1 of 3 rows"):
        frame = explainer.explain(rows)
    status = frame.groupby("instance", sort=False)["status"].first()
    assert status[rows.index[1]] == "error"
    assert "NaN" in frame.loc[frame["instance"] == rows.index[1], "message"].iloc[0]
    assert (status.drop(rows.index[1]) != "error").all()


class FailsOnSomeRows(Wrapping):
    """predict_proba raises for any state with ``zip == 13`` (a feature no
    action changes, so only the one person with it is affected)."""

    def predict_proba(self, X):
        if (np.asarray(X["zip"]) == 13).any():
            raise RuntimeError("cannot score zip 13")
        return self.model.predict_proba(X[["income", "debt"]])

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_model_raising_for_one_row_marks_only_that_row(line_data, n_jobs):
    X, y = line_data
    inner = LogisticRegression().fit(X, y)
    X = X.assign(zip=np.arange(len(X)) % 10)
    explainer = SequentialCounterfactualExplainer(
        FailsOnSomeRows(inner), actions=line_actions(), n_jobs=n_jobs, **SMALL
    ).fit(X)
    rejected = X[inner.predict(X[["income", "debt"]]) == 0]
    rows = pd.concat([rejected.iloc[:1], rejected.iloc[[1]].assign(zip=13)])
    rows = pd.concat([rows, rejected.iloc[[2]]])
    with pytest.warns(UserWarning, match=r"1 of 3 rows could not be explained"):
        frame = explainer.explain(rows)
    status = frame.groupby("instance", sort=False)["status"].first()
    failed = rows.index[1]
    assert status.loc[failed] == "error"
    assert (status.drop(failed) == "ok").all()
    message = frame.loc[frame["instance"] == failed, "message"].iloc[0]
    assert message == (
        "the estimator's predict_proba raised RuntimeError: cannot score zip 13"
    )
    assert frame["instance"].drop_duplicates().tolist() == list(rows.index)


def test_no_warning_when_every_row_is_explained(fitted_line, line_data):
    X, _ = line_data
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = fitted_line.explain(X.iloc[:3])
    assert frame["message"].isna().all()


def test_empty_x_gives_an_empty_frame_with_every_column(fitted_line, line_data):
    X, _ = line_data
    frame, states, details = fitted_line.explain(
        X.iloc[:0], return_states=True, return_details=True
    )
    full = fitted_line.explain(X.iloc[:2])
    assert frame.empty and list(frame.columns) == list(full.columns)
    assert dict(frame.dtypes) == dict(full.dtypes)
    assert states.empty and list(states.columns) == [
        "instance",
        "solution",
        "step",
        "income",
        "debt",
    ]
    assert details.empty


# ---------------------------------------------------------------------- #
# issue 23: every row answered, whatever the model does meanwhile
# ---------------------------------------------------------------------- #
class Drifting:
    """A model whose answers change while it is asked: after ``start`` calls
    its probability of class 1 climbs by ``step`` per call (drifting), or
    moves by random noise of ``noise`` (its own generator)."""

    classes_ = np.array([0, 1])

    def __init__(self, model, step=0.0, noise=0.0):
        self.model, self.step, self.noise = model, step, noise
        self.calls, self.start = 0, 10**9
        self.rng = np.random.default_rng(0)

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        self.calls += 1
        p = self.model.predict_proba(X)[:, 1]
        if self.calls > self.start:
            p = p + min(0.9, self.step * (self.calls - self.start))
            p = p + self.noise * self.rng.normal(size=p.shape)
        p = np.clip(p, 0, 1)
        return np.column_stack([1 - p, p])

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


@pytest.mark.slow  # several seconds: CI's slow step runs it
@pytest.mark.parametrize("kind", ["drifting", "noisy"])
def test_every_row_is_in_the_frame_when_the_model_changes_its_answers(kind, line_data):
    X, y = line_data
    actions = line_actions()
    inner = LogisticRegression().fit(X, y)
    model = (
        Drifting(inner, step=0.02) if kind == "drifting" else Drifting(inner, noise=0.3)
    )
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=actions,
        population_size=30,
        n_generations=10,
        random_state=0,
        batch_size=4,
        n_jobs=1,
    ).fit(X)
    rows = X[inner.predict(X) == 0].iloc[: 40 if kind == "drifting" else 120]
    model.start = model.calls + 1  # it changes from the explanation on
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame, details = explainer.explain(rows, return_details=True)
    assert len(details) == len(rows)
    assert set(frame["instance"]) == set(rows.index)  # no row left out
    statuses = frame.groupby("instance", sort=False)["status"].first()
    assert statuses.tolist() == details["status"].tolist()
    changed = details["message"].fillna("").str.contains("answer changed")
    # a row the model came to accept as it is says so
    assert (details.loc[changed, "status"] == "already_target").all()
    if kind == "drifting":
        assert changed.any()


def test_a_row_left_out_of_the_frame_is_caught_before_it_is_returned():
    from types import SimpleNamespace

    import sklearn_cscf._driver as driver

    # two pieces of a run over 4 rows: the row at position 2 has no row in
    # the frame (a plan of no step, say), the others one or two
    pieces = [
        SimpleNamespace(frame_rows=np.array([1, 2]), positions=np.array([0, 1])),
        SimpleNamespace(frame_rows=np.array([0, 1]), positions=np.array([2, 3])),
    ]
    frame, details = pd.DataFrame(index=range(4)), pd.DataFrame(index=range(4))
    with pytest.raises(RuntimeError, match=r"1 of 4 rows \(positions \[2\]\)"):
        driver._check_every_row_answered(pieces, frame, details, 4)
    pieces[1].frame_rows = np.array([1, 1])
    driver._check_every_row_answered(pieces, pd.DataFrame(index=range(5)), details, 4)


@pytest.mark.parametrize("name", ["step", "solution", "instance"])
def test_a_feature_named_like_a_states_column_is_refused_for_states(name, line_data):
    X, y = line_data
    actions = line_actions()
    X = X.rename(columns={"debt": name})
    actions[1].feature = name
    model = LogisticRegression().fit(X, y)
    explainer = SequentialCounterfactualExplainer(
        model, actions=actions, population_size=20, n_generations=3,
        random_state=0,
    ).fit(X)  # fmt: skip
    rows = X[model.predict(X) == 0].iloc[:2]
    with pytest.raises(ValueError, match=f"A feature is named '{name}'.*Rename"):
        explainer.explain(rows, return_states=True)
    frame = explainer.explain(rows)  # without the states: nothing clashes
    assert frame["instance"].nunique() == 2


# ---------------------------------------------------------------------- #
# pieces of the output and their assembly in input order
# ---------------------------------------------------------------------- #
OUTPUT = Output(SCHEMA, ACTIONS, TARGETS)


def test_a_piece_holds_its_rows_and_the_states_transform_reports():
    results = [ok_result(), quick_result(STATUS_ALREADY_TARGET)]
    piece = make_piece(results, [4, 5], pd.Index(["a", "b"]), OUTPUT, True)
    assert piece.positions.tolist() == [4, 5]
    # 3 steps of the first row, one status row of the second
    assert piece.frame_rows.tolist() == [3, 1]
    assert piece.states_rows.tolist() == [5, 0]
    # the cheapest sequence's final state; the row itself when it is accepted
    np.testing.assert_array_equal(piece.finals[0], results[0].final_state(0))
    np.testing.assert_array_equal(piece.finals[1], results[1].x0)


def test_a_piece_shows_what_max_plans_and_all_orders_keep():
    output = Output(SCHEMA, ACTIONS, TARGETS, max_plans=1, all_orders=False)
    piece = make_piece([ok_result()], [0], pd.RangeIndex(1), output, False)
    # the details count every sequence found, the frame shows the kept ones
    assert piece.details["n_solutions"].tolist() == [2]
    assert piece.frame["solution"].tolist() == [0]
    assert piece.states is None


def test_a_row_without_a_sequence_has_missing_final_states():
    piece = make_piece(
        [quick_result(STATUS_NO_COUNTERFACTUAL)], [0], pd.RangeIndex(1), OUTPUT, False
    )
    assert np.isnan(piece.finals[0, 0]) and piece.finals[0, 1] == -1


def test_pieces_are_assembled_in_input_order():
    index = pd.Index(["r0", "r1", "r2", "r3"])
    # pieces finished out of order, and one whose rows are not consecutive
    first = make_piece(
        [quick_result(STATUS_ALREADY_TARGET), ok_result()],
        [1, 3],
        index[[1, 3]],
        OUTPUT,
        True,
    )
    second = make_piece(
        [ok_result(x0=(40.0, "boss")), quick_result(STATUS_NO_COUNTERFACTUAL)],
        [0, 2],
        index[[0, 2]],
        OUTPUT,
        True,
    )
    frame, states, details, finals = assemble([first, second], 4, SCHEMA.n_features)
    assert details["instance"].tolist() == ["r0", "r1", "r2", "r3"]
    assert frame["instance"].tolist() == ["r0"] * 3 + ["r1", "r2"] + ["r3"] * 3
    assert frame["status"].tolist()[3:5] == [STATUS_ALREADY_TARGET, "no_counterfactual"]
    # each row's own steps stay together and in their order
    assert frame.loc[frame["instance"] == "r0", "step"].tolist() == [1, 1, 2]
    assert frame.index.tolist() == list(range(8))
    assert states["instance"].tolist() == ["r0"] * 5 + ["r3"] * 5
    assert finals[0, 0] == 30.0 and finals[1, 0] == 20.0 and np.isnan(finals[2, 0])


def test_no_rows_assemble_to_empty_frames():
    empty = make_piece([], [], pd.Index([]), OUTPUT, False)
    frame, states, details, finals = assemble([empty], 0, SCHEMA.n_features)
    assert frame.empty and details.empty and states is None
    assert finals.shape == (0, 2)
    assert STATUS_OK not in set(frame["status"])


def sequences(frame):
    ok = frame[frame["status"] == "ok"]
    return ok.groupby(["instance", "solution"]).agg(
        plan=("plan", "first"),
        cost=("sequence_cost", "first"),
        actions=("action", lambda a: frozenset(a)),
    )


def test_by_default_one_order_per_plan_and_a_few_plans(credit_compact_and_full):
    _, frame, full = credit_compact_and_full
    small, every = sequences(frame), sequences(full)
    assert (small.groupby("instance")["plan"].nunique() <= 5).all()
    # one sequence per plan: its cheapest order
    assert not small.reset_index().duplicated(["instance", "plan"]).any()
    assert len(every) >= len(small)
    for label, mine in small.groupby(level="instance"):
        theirs = every.loc[label]
        # the cheapest sequence is always kept, plans are numbered by cost
        assert mine["cost"].iloc[0] == theirs["cost"].min()
        assert mine["plan"].tolist() == list(range(len(mine)))
        assert mine["cost"].is_monotonic_increasing
        for actions, cost in zip(mine["actions"], mine["cost"]):
            assert cost == theirs.loc[theirs["actions"] == actions, "cost"].min()


def test_all_values_adds_the_same_steps_with_other_values(
    credit_compact_and_full, credit_rejected
):
    explainer, _, full = credit_compact_and_full
    try:
        explainer.set_params(max_plans=None, all_orders=True, all_values=True)
        frame = explainer.explain(credit_rejected)
        checked = replay(explainer, credit_rejected, frame)
    finally:
        explainer.set_params(max_plans=5, all_orders=False, all_values=False)
    assert checked["passed"].all()
    every, before = in_order(frame), in_order(full)
    variants = every.groupby(["instance", "steps"], sort=False)
    # the same plans and orders, each at the same cheapest values as before ...
    pd.testing.assert_series_equal(
        variants["cost"].min().sort_index(),
        before.groupby(["instance", "steps"])["cost"].min().sort_index(),
    )
    assert not before.duplicated(["instance", "steps"]).any()
    # ... and some with other values: nearer (Gower distance), but dearer
    assert (variants.size() > 1).any()
    for _, same in variants:
        assert same["cost"].is_monotonic_increasing
        assert (np.diff(same["gower"].to_numpy()) < 0).all()


def in_order(frame):
    """A row per sequence: its steps (actions in order), cost and Gower
    distance, by cost."""
    ok = frame[frame["status"] == "ok"].sort_values("step", kind="stable")
    table = ok.groupby(["instance", "solution"]).agg(
        cost=("sequence_cost", "first"),
        gower=("gower_distance", "first"),
        steps=("action", tuple),
    )
    return table.reset_index().sort_values(["instance", "cost"], kind="stable")

"""The run driver (sklearn_cscf._driver): blocks, seeds, and the named
result of a run."""

import warnings

import numpy as np
import pandas as pd
import pytest
from joblib import parallel_config
from sklearn.linear_model import LogisticRegression

from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf._driver import Explained, Schedule, _blocks, instance_seed, run


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
    explained = run(
        explainer._fitted, explainer.get_params(deep=False), rows, with_states=True
    )
    assert isinstance(explained, Explained)
    assert explained.details["instance"].tolist() == [30, 10, 20]
    assert explained.details["status"].tolist()[1] == "already_target"
    assert explained.finals.shape == (3, 1)
    assert explained.finals[1, 0] == 2.5  # an accepted row reports itself
    assert explained.states is not None
    # what transform returns: the final states in the input's labels
    assert explained.final_states().index.tolist() == [30, 10, 20]
    assert Schedule().batch_size == 64  # the explainer's default


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


def _line():
    from sklearn_cscf import Action

    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {"income": rng.uniform(0, 100, 400), "debt": rng.uniform(0, 50, 400)}
    )
    y = (X["income"] - X["debt"] + rng.normal(0, 8, 400) > 40).astype(int)
    actions = [
        Action("earn", "income", values=(0.0, 200.0), direction="increase"),
        Action("repay", "debt", values=(0.0, 50.0), direction="decrease"),
    ]
    return X, y, actions


@pytest.mark.parametrize("kind", ["drifting", "noisy"])
def test_every_row_is_in_the_frame_when_the_model_changes_its_answers(kind):
    X, y, actions = _line()
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


def test_a_row_left_out_of_the_frame_is_caught_before_it_is_returned(monkeypatch):
    import sklearn_cscf._driver as driver

    X, y, actions = _line()
    inner = LogisticRegression().fit(X, y)
    model = Drifting(inner, step=0.02)
    explainer = SequentialCounterfactualExplainer(
        model, actions=actions, population_size=30, n_generations=10,
        random_state=0, n_jobs=1,
    ).fit(X)  # fmt: skip
    rows = X[inner.predict(X) == 0].iloc[:8]
    model.start = model.calls + 1
    monkeypatch.setattr(driver, "_answered", lambda result: result)  # as before
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="missing from the explanations"):
            explainer.explain(rows)


@pytest.mark.parametrize("name", ["step", "solution", "instance"])
def test_a_feature_named_like_a_states_column_is_refused_for_states(name):
    X, y, actions = _line()
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

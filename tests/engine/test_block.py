"""The lock-step engine (issue 7): the ask/tell search, remembered answers,
blocks of instances, refinement, shipping the problem to workers, diagnostics.
"""

import pickle
import sys

import distributed
import numpy as np
import pandas as pd
import pytest
from _cluster import loopback_cluster
from joblib import parallel_config
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from sklearn_cscf import Action, SequentialCounterfactualExplainer
from sklearn_cscf._compile import Settings
from sklearn_cscf._engine._block import Shipment, _unpack
from sklearn_cscf._engine._brkga import BRKGA, Evaluation
from sklearn_cscf._engine._refine._fit import AHEAD_ROWS

SMALL = {"population_size": 40, "n_generations": 10, "random_state": 0}


# ---------------------------------------------------------------------- #
# the ask/tell search
# ---------------------------------------------------------------------- #
def toy_evaluation(keys):
    """Two objectives of the first two keys; the first key's sequence."""
    F = np.column_stack([keys[:, 0], 1.0 - keys[:, 0] + keys[:, 1]])
    return Evaluation(F, np.zeros(len(keys)), np.round(keys[:, 0], 3))


def search_settings(**changes):
    """The search's settings of an explainer with ``changes``, the others its
    defaults."""
    params = SequentialCounterfactualExplainer(**changes).get_params(deep=False)
    return Settings.from_params(params).search


def test_brkga_runs_its_generations_and_keeps_the_elites():
    settings = search_settings(population_size=20, n_generations=6)
    search = BRKGA(4, settings, [np.random.default_rng(0)])
    sizes = []
    while not search.done:
        owner, keys = search.ask()
        assert (owner == 0).all()
        sizes.append(len(keys))
        search.tell(toy_evaluation(keys))
    assert search.generation.tolist() == [6]
    assert sizes[0] == 20
    # later generations only ask for the non-elites
    assert all(size < 20 for size in sizes[1:])
    assert search.population(0)[0].shape == (20, 4)
    keys, evaluation = search.result(0)
    assert len(keys) == len(evaluation.F) > 0
    with pytest.raises(RuntimeError, match="over"):
        search.ask()


def test_brkga_stops_when_the_elites_do_not_change():
    settings = search_settings(
        population_size=10, n_generations=100, n_iter_no_change=3
    )
    search = BRKGA(2, settings, [np.random.default_rng(0)])
    while not search.done:
        _, keys = search.ask()
        # one constant sequence: the elite set never changes
        F = np.ones((len(keys), 2))
        search.tell(Evaluation(F, np.zeros(len(keys)), np.zeros(len(keys), "S1")))
    assert search.generation.tolist() == [1 + 3]


def test_brkga_is_reproducible_from_its_generator():
    def run(seed):
        search = BRKGA(
            4,
            search_settings(population_size=20, n_generations=5),
            [np.random.default_rng(seed)],
        )
        while not search.done:
            search.tell(toy_evaluation(search.ask()[1]))
        return search.result(0)[0]

    np.testing.assert_array_equal(run(3), run(3))
    assert not np.array_equal(run(3), run(4))


def brkga_toy(keys, threshold=0.3):
    """Two objectives, infeasible where the first key is below ``threshold``
    (by how much), plans by the rounded second key."""
    evaluation = toy_evaluation(keys)
    evaluation.gap = np.maximum(threshold - keys[:, 0], 0.0)
    evaluation.plan_key = np.round(keys[:, 1], 1)
    return evaluation


@pytest.mark.parametrize(
    "settings",
    [
        search_settings(population_size=30, n_generations=12, elite_fraction=0.1),
        search_settings(population_size=30, n_generations=25, n_iter_no_change=2),
        search_settings(population_size=24, n_generations="auto", n_iter_no_change=3),
    ],
)
def test_brkga_steps_instances_together_as_if_each_were_alone(settings):
    # four instances, each told its own evaluation: stepped together, they
    # end after the same generations with the same fronts as alone, even
    # when they finish at different generations (nothing of the last one's
    # first generation is feasible: its elites are the closest to feasible)
    seeds = [5, 6, 7, 304]
    shift = np.array([0.0, 0.2, 0.5, 0.1])
    threshold = np.array([0.3, 0.3, 0.3, 0.85])

    def told(owner, keys):
        keys = keys.copy()
        keys[:, 0] = (keys[:, 0] + shift[owner]) % 1
        return brkga_toy(keys, threshold[owner])

    together = BRKGA(4, settings, [np.random.default_rng(s) for s in seeds])
    while not together.done:
        owner, keys = together.ask()
        assert (np.diff(owner) >= 0).all()
        together.tell(told(owner, keys))
    for m, seed in enumerate(seeds):
        alone = BRKGA(4, settings, [np.random.default_rng(seed)])
        while not alone.done:
            _, keys = alone.ask()
            alone.tell(told(np.full(len(keys), m), keys))
        assert alone.generation[0] == together.generation[m]
        (keys, evaluation), (their_keys, theirs) = alone.result(0), together.result(m)
        assert len(keys) > 0
        np.testing.assert_array_equal(keys, their_keys)
        np.testing.assert_array_equal(evaluation.F, theirs.F)
        np.testing.assert_array_equal(evaluation.sequence_key, theirs.sequence_key)
    if settings.n_iter_no_change:
        assert len(set(together.generation.tolist())) > 1


# ---------------------------------------------------------------------- #
# identical frames whatever the blocks, workers and neighbours
# ---------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def credit_block(credit_data, credit_model, credit_actions, credit_graph):
    X, _ = credit_data
    rejected = X[credit_model.predict(X) == "bad"].iloc[:9]
    explainer = SequentialCounterfactualExplainer(
        credit_model,
        actions=credit_actions,
        feature_graph=credit_graph,
        immutable_features=["region"],
        **SMALL,
    ).fit(X)
    return explainer, rejected, X


@pytest.fixture(scope="module")
def credit_reference(credit_block):
    explainer, rejected, _ = credit_block
    return explainer.set_params(batch_size=64, n_jobs=1).explain(rejected)


def by_instance(frame, labels):
    """The rows of each instance, in the order of ``labels``."""
    return pd.concat(
        [frame[frame["instance"] == label] for label in labels], ignore_index=True
    )


@pytest.mark.parametrize("batch_size", [1, 7, 64])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_frames_do_not_depend_on_blocks_or_workers(
    credit_block, credit_reference, batch_size, n_jobs
):
    explainer, rejected, _ = credit_block
    frame = explainer.set_params(batch_size=batch_size, n_jobs=n_jobs).explain(rejected)
    pd.testing.assert_frame_equal(frame, credit_reference, check_exact=True)


def test_frames_do_not_depend_on_row_order_or_neighbours(
    credit_block, credit_reference
):
    explainer, rejected, X = credit_block
    explainer.set_params(batch_size=4, n_jobs=1)
    shuffled = rejected.iloc[[5, 2, 8, 0, 7, 1, 3, 6, 4]]
    frame = explainer.explain(shuffled)
    labels = list(rejected.index)
    pd.testing.assert_frame_equal(
        by_instance(frame, labels), by_instance(credit_reference, labels)
    )
    # the same rows among other people (accepted and rejected)
    crowd = pd.concat([X.iloc[100:110], rejected.iloc[::2]])
    crowd = crowd[~crowd.index.duplicated()]
    mixed = explainer.explain(crowd)
    some = list(rejected.index[::2])
    pd.testing.assert_frame_equal(
        by_instance(mixed, some), by_instance(credit_reference, some)
    )


def test_frames_do_not_depend_on_blocks_with_a_tree_model(credit_data):
    X, y = credit_data
    categorical = ["education", "housing", "region"]
    model = make_pipeline(
        ColumnTransformer(
            [("categories", OneHotEncoder(sparse_output=False), categorical)],
            remainder="passthrough",
        ),
        HistGradientBoostingClassifier(max_iter=30, random_state=0),
    ).fit(X, y)
    rejected = X[model.predict(X) == "bad"].iloc[:6]
    explainer = SequentialCounterfactualExplainer(model, **SMALL).fit(X)
    frames = [
        explainer.set_params(batch_size=size).explain(rejected) for size in (1, 7)
    ]
    pd.testing.assert_frame_equal(frames[0], frames[1], check_exact=True)


# ---------------------------------------------------------------------- #
# refinement
# ---------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def line_problem():
    """Accepted when income - debt > 40: the least income raise is exact."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {"income": rng.uniform(0, 100, 400), "debt": rng.uniform(0, 50, 400)}
    )
    y = (X["income"] - X["debt"] > 40).astype(int)
    model = LogisticRegression(C=1e4, max_iter=10_000).fit(X, y)
    rows = pd.DataFrame({"income": [20.0, 35.0, 10.0], "debt": [10.0, 30.0, 5.0]})
    return X, model, rows


def boundary_income(model, debt):
    """The income at which the logistic model's decision flips."""
    (w_income, w_debt), b = model.coef_[0], model.intercept_[0]
    return -(b + w_debt * debt) / w_income


def test_refinement_reaches_the_decision_boundary(line_problem):
    X, model, rows = line_problem
    actions = [
        Action(
            "earn",
            "income",
            values=(0.0, 200.0),
            direction="increase",
            cost=lambda b, a: (a["income"] - b["income"]) / 10,
        )
    ]
    explainer = SequentialCounterfactualExplainer(
        model, actions=actions, population_size=30, n_generations=5, random_state=0
    ).fit(X)
    coarse = explainer.set_params(refine=False).explain(rows)
    refined, details = explainer.set_params(refine=True).explain(
        rows, return_details=True
    )
    assert (refined["status"] == "ok").all()
    exact = boundary_income(model, rows["debt"].to_numpy())
    found = refined.groupby("instance")["new_number"].min().to_numpy()
    # just above the boundary: within 1e-5 of the key range (200 units)
    assert np.all(found >= exact - 1e-9)
    np.testing.assert_allclose(found, exact, atol=200 * 2**-16)
    assert (
        model.predict(
            refined[["new_number"]]
            .rename(columns={"new_number": "income"})
            .assign(debt=rows["debt"].to_numpy())
        )
        == 1
    ).all()
    # the coarse search stops short of it
    rough = coarse.groupby("instance")["new_number"].min().to_numpy()
    assert np.all(rough >= found)
    assert np.any(rough > found + 0.01)
    assert (details["n_refined"] >= 1).all()


def test_refinement_keeps_every_constraint_and_never_costs_more(
    credit_block, credit_model
):
    explainer, rejected, _ = credit_block
    explainer.set_params(batch_size=32, n_jobs=1)
    coarse = explainer.set_params(refine=False).explain(rejected)
    refined, states = explainer.set_params(refine=True).explain(
        rejected, return_states=True
    )
    least = {
        name: frame.groupby("instance")["sequence_cost"].min()
        for name, frame in (("coarse", coarse), ("refined", refined))
    }
    assert (least["refined"] <= least["coarse"] + 1e-12).all()
    assert (least["refined"] < least["coarse"] - 1e-6).any()
    # every reported final state is accepted by the model
    last = states.groupby(["instance", "solution"]).tail(1)
    assert (
        credit_model.predict(last.drop(columns=["instance", "solution", "step"]))
        == "good"
    ).all()
    # the constraints of the credit actions (see conftest)
    ok = refined[refined["status"] == "ok"]
    debt = ok[ok["action"] == "reduce_debt"]
    assert (debt["new_number"] >= 0.2 * debt["old_number"] - 1e-9).all()
    assert (states["age"] <= 72).all()


# ---------------------------------------------------------------------- #
# shipping the problem once
# ---------------------------------------------------------------------- #
class CountsUnpickling:
    """Counts how often instances are unpickled in this process."""

    loads = 0

    def __init__(self):
        self.payload = "x"

    def __setstate__(self, state):
        type(self).loads += 1
        self.__dict__.update(state)


def test_a_shipment_is_pickled_once_and_unpickled_once_per_process():
    shipment = Shipment({"payload": CountsUnpickling(), "big": np.zeros(10_000)})
    first = pickle.dumps(shipment)
    second = pickle.dumps(shipment)
    assert first == second  # the same bytes, pickled once
    # small as Dask sees it: joblib's Dask backend sends it with each task
    # instead of scattering it to one worker (see the Dask test below)
    assert sys.getsizeof(shipment) < 1_000
    CountsUnpickling.loads = 0
    a, b = pickle.loads(first), pickle.loads(second)
    assert a is b  # the second task reuses the worker's copy
    assert CountsUnpickling.loads == 1
    assert a.problem["big"].shape == (10_000,)
    token, payload = shipment._pack()
    assert _unpack(token, payload) is a


# ---------------------------------------------------------------------- #
# diagnostics
# ---------------------------------------------------------------------- #
def test_details_account_for_every_row(credit_block, credit_data):
    explainer, rejected, X = credit_block
    rows = pd.concat([rejected.iloc[:3], X.iloc[[0]]])
    rows = rows[~rows.index.duplicated()]
    frame, details = explainer.set_params(n_jobs=1).explain(rows, return_details=True)
    assert details["instance"].tolist() == list(rows.index)
    status = frame.groupby("instance", sort=False)["status"].first()
    assert details["status"].tolist() == status.loc[list(rows.index)].tolist()
    searched = details[details["status"] != "already_target"]
    budget = SMALL["population_size"] * SMALL["n_generations"]
    assert (searched["n_generations"] == SMALL["n_generations"]).all()
    assert (searched["n_model_rows"] > 0).all()
    # sent: the states asked about and not remembered, and at most
    # AHEAD_ROWS a call asked ahead of need (refinement's next rounds)
    ahead = AHEAD_ROWS * searched["n_model_calls"]
    assert (searched["n_model_rows"] <= searched["n_evaluated"] + ahead).all()
    assert (searched["n_evaluated"] >= budget * 0.5).all()
    assert (searched["model_seconds"] <= searched["total_seconds"]).all()
    waiting = details[details["status"] == "already_target"]
    assert (waiting[["n_generations", "n_model_rows"]] == 0).all().all()


# ---------------------------------------------------------------------- #
# Dask: a two-worker cluster on loopback gives the same frames
# ---------------------------------------------------------------------- #
def test_dask_backend_gives_the_same_frames(credit_block, credit_reference):
    explainer, rejected, _ = credit_block
    with (
        loopback_cluster(2) as cluster,
        distributed.Client(cluster) as client,
    ):
        with parallel_config(backend="dask"), distributed.get_task_stream(client) as ts:
            frame = explainer.set_params(batch_size=64, n_jobs=-1).explain(rejected)
    pd.testing.assert_frame_equal(frame, credit_reference, check_exact=True)
    blocks = [t for t in ts.data if "explain_block" in t["key"]]
    # two blocks, one per worker: not queued on the worker holding the model
    assert len(blocks) == 2
    assert len({t["worker"] for t in blocks}) == 2
    # the model's own joblib calls (its ColumnTransformer's) ran in place
    # inside the blocks, not as cluster tasks at every generation: only the
    # few calls outside the search (which rows need recourse) send any
    others = [t for t in ts.data if "explain_block" not in t["key"]]
    assert len(others) < SMALL["n_generations"]

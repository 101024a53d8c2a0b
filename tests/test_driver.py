"""The run driver (sklearn_cscf._driver): blocks, seeds, and the named
result of a run."""

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

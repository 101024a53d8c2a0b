"""The run driver (sklearn_cscf._driver): blocks, seeds, and the named
result of a run."""

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_cscf import Action, SequentialCounterfactualExplainer
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

"""The input checks shared by the explainer and replay
(sklearn_cscf._validation)."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

from sklearn_cscf import SequentialCounterfactualExplainer, replay
from sklearn_cscf._validation import check_X


def test_check_X_refuses_what_would_be_misread():
    frame = pd.DataFrame({"a": [1.0]})
    assert check_X(frame) is frame
    assert check_X([[1.0, 2.0]]).shape == (1, 2)
    with pytest.raises(TypeError, match="Sparse data"):
        check_X(sp.csr_matrix(np.eye(2)))
    with pytest.raises(ValueError, match="is a Series"):
        check_X(pd.Series([1.0, 2.0]))
    with pytest.raises(ValueError, match="MultiIndex"):
        check_X(pd.DataFrame([[1.0]], columns=pd.MultiIndex.from_tuples([("a", 1)])))
    with pytest.raises(ValueError, match="2-dimensional.*reshape"):
        check_X(np.zeros(3))


@pytest.mark.parametrize(
    "bad, error, match",
    [
        (sp.csr_matrix(np.eye(2)), TypeError, "Sparse data"),
        (pd.Series([1.0, 2.0]), ValueError, "is a Series"),
        (np.zeros(2), ValueError, "2-dimensional"),
    ],
)
def test_replay_checks_X_as_the_explainer_does(bad, error, match):
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 0.0]])
    explainer = SequentialCounterfactualExplainer(
        LogisticRegression().fit(X, [0, 0, 1, 1]),
        population_size=10,
        n_generations=2,
        random_state=0,
    ).fit(X)
    frame = explainer.explain(X[:1])
    with pytest.raises(error, match=match):
        explainer.explain(bad)
    with pytest.raises(error, match=match):
        replay(explainer, bad, frame)

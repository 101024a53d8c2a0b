"""scikit-learn's common estimator checks, with a small search budget."""

import functools

import pytest
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import check_estimator, estimator_checks_generator

from sklearn_cscf import SequentialCounterfactualExplainer

# The checks train on data of many class sets ({0, 1, 2}, {1, 2}; {0, 4} in
# scikit-learn 1.6's check_dtype_object): the default target (the second
# class of two, any other class of more) fits them all. An
# unfitted logistic regression is cloned and fitted in fit: quick to train.
# The explainer passes missing values to its model, so the model imputes them
# (the checks then fit and explain rows holding NaN).
EXPLAINER = SequentialCounterfactualExplainer(
    make_pipeline(SimpleImputer(), LogisticRegression()),
    target_class=None,
    population_size=10,
    n_generations=2,
    random_state=0,
)


def _name(check):
    while isinstance(check, functools.partial):
        check = check.func
    return check.__name__


# The array API check needs SCIPY_ARRAY_API and array-API namespaces; the
# explainer works on raw mixed-type rows (pandas), never on array-API arrays.
CHECKS = [
    (estimator, check)
    for estimator, check in estimator_checks_generator(EXPLAINER)
    if _name(check) != "check_array_api_input"
]


@pytest.mark.parametrize(
    "estimator, check", CHECKS, ids=[_name(check) for _, check in CHECKS]
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def test_the_common_checks_are_collected():
    names = {_name(check) for _, check in CHECKS}
    # the explainer is checked as an estimator and as a transformer
    assert {"check_fit_check_is_fitted", "check_transformer_general"} <= names


@pytest.mark.slow
def test_the_default_explainer_passes_check_estimator():
    # the default estimator (gradient boosting) at the paper's budget: minutes
    results = check_estimator(SequentialCounterfactualExplainer(), on_fail=None)
    failed = [
        (r["check_name"], r["exception"]) for r in results if r["status"] == "failed"
    ]
    assert not failed
    assert sum(r["status"] == "passed" for r in results) >= 30

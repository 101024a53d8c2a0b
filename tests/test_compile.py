"""What fit resolves (sklearn_cscf._compile): rows bringing categories fit
did not see are explained with copies that know them; what kind of model it
is."""

import numpy as np
import pandas as pd
import pytest
from _models import Scaled, Thresholded, line_model
from sklearn.linear_model import LogisticRegression, Ridge

from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf._compile import is_fitted, model_classes, needs_predict
from sklearn_cscf._schema import FeatureSchema


def test_rows_with_categories_unseen_in_fit_are_explained(
    credit_data, credit_model, credit_actions, credit_rejected
):
    X, _ = credit_data
    known = X[X["region"] != "east"]
    explainer = SequentialCounterfactualExplainer(
        credit_model,
        actions=credit_actions,
        immutable_features=["region"],
        population_size=40,
        n_generations=10,
        random_state=0,
    ).fit(known)
    before = {k: list(v) for k, v in explainer.categories_.items()}
    rows = credit_rejected.assign(region="east")  # the model knows "east"
    frame, states = explainer.explain(rows, return_states=True)
    assert (frame["status"] == "ok").any()
    assert set(frame["status"]) <= {"ok", "no_counterfactual"}
    assert (states["region"] == "east").all()
    # the fitted explainer is unchanged
    assert {k: list(v) for k, v in explainer.categories_.items()} == before
    assert (
        "east"
        not in explainer._fitted.schema.categories[
            explainer._fitted.schema.index["region"]
        ]
    )


# ---------------------------------------------------------------------- #
# what kind of model (fit's half of the model's handling)
# ---------------------------------------------------------------------- #
def test_needs_predict_only_when_predict_is_not_the_arg_max(schema):
    X = pd.DataFrame({"p": np.linspace(0, 1, 50), "z": np.zeros(50)})
    rows = schema.encode(X)
    assert needs_predict(Thresholded(), schema, rows, Thresholded.classes_)
    y = (X["p"] > 0.5).astype(int)
    plain = LogisticRegression().fit(X, y)
    assert not needs_predict(plain, schema, rows, plain.classes_)


def test_model_classes_refuses_the_other_kind_of_model():
    classifier = LogisticRegression().fit([[0.0], [1.0]], [0, 1])
    regressor = Ridge().fit([[0.0], [1.0]], [0.0, 1.0])
    assert model_classes(classifier, regressor=False).tolist() == [0, 1]
    assert model_classes(regressor, regressor=True) is None
    with pytest.raises(ValueError, match="this estimator is a classifier"):
        model_classes(classifier, regressor=True)
    with pytest.raises(TypeError, match="no classes_ attribute"):
        model_classes(regressor, regressor=False)
    one_class = LogisticRegression()
    one_class.classes_ = np.array(["yes"])
    with pytest.raises(ValueError, match="only one class"):
        model_classes(one_class, regressor=False)


def test_is_fitted_trusts_a_duck_typed_model_that_looks_fitted():
    assert is_fitted(Thresholded())
    assert not is_fitted(LogisticRegression())
    assert is_fitted(LogisticRegression().fit([[0.0], [1.0]], [0, 1]))


def test_duplicate_classes_are_refused():
    X, inner = line_model()
    with pytest.raises(ValueError, match=r"classes_ \[1, 1\] name 1 twice"):
        model_classes(Scaled(inner, 1.0, classes=[1, 1]), regressor=False)
    with pytest.raises(ValueError, match=r"name 'yes' twice"):
        model_classes(Scaled(inner, 1.0, classes=["yes", "no", "yes"]), regressor=False)


@pytest.fixture
def schema():
    return FeatureSchema(pd.DataFrame({"p": [0.0, 0.5, 1.0], "z": [1.0, 2.0, 3.0]}))


# ---------------------------------------------------------------------- #
# the explainer's parameters, resolved once
# ---------------------------------------------------------------------- #
def test_every_parameter_has_one_setting_and_no_setting_a_default():
    import dataclasses

    from sklearn_cscf._compile import Settings

    explainer = SequentialCounterfactualExplainer(population_size=7, batch_size=3)
    settings = Settings.from_params(explainer.get_params(deep=False))
    found = {}
    for part in (settings, settings.search, settings.schedule):
        for field in dataclasses.fields(part):
            # the defaults live in the explainer's signature only
            assert field.default is dataclasses.MISSING, field.name
            assert field.default_factory is dataclasses.MISSING, field.name
            value = getattr(part, field.name)
            if not dataclasses.is_dataclass(value):
                assert field.name not in found, f"{field.name} is set twice"
                found[field.name] = value
    assert found.keys() == explainer.get_params(deep=False).keys()
    assert settings.search.population_size == 7
    assert settings.schedule.batch_size == 3
    assert settings.search.n_generations == "auto"  # the explainer's default
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.refine = False
    # a parameter no setting takes is a bug, said at once
    with pytest.raises(RuntimeError, match="without a setting.*'new_knob'"):
        Settings.from_params({**explainer.get_params(deep=False), "new_knob": 1})

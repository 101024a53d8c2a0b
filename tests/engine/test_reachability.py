"""Reachability: rows the declared actions cannot bring to the target get the
status "unreachable", with what was tried; the others keep their status."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import HistGradientBoostingClassifier

from sklearn_cscf import Action, SequentialCounterfactualExplainer, make_actions
from sklearn_cscf._compiled_actions import CompiledAction
from sklearn_cscf._engine._reachability import probe_keys
from sklearn_cscf._status import STATUS_UNREACHABLE, STATUSES
from sklearn_cscf.metrics import validity
from sklearn_cscf.reporting import describe

# the case: six features that may only decrease
FEATURES = [
    "mean radius",
    "mean texture",
    "mean perimeter",
    "mean area",
    "worst texture",
    "worst smoothness",
]


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    model = HistGradientBoostingClassifier(max_iter=30, random_state=0).fit(X, y)
    rejected = X[model.predict(X) == 0].iloc[:8]
    actions = make_actions(X, FEATURES, directions=dict.fromkeys(FEATURES, "decrease"))
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=actions,
        target_class=1,
        population_size=40,
        n_generations=8,
        random_state=0,
    ).fit(X)
    frame = explainer.explain(rejected)
    return X, model, rejected, explainer, frame


def _statuses(frame):
    return frame.groupby("instance", sort=False)["status"].first()


def test_unreachable_rows_are_those_no_extreme_reaches(cancer):
    X, model, rejected, _, frame = cancer
    status = _statuses(frame)
    assert STATUS_UNREACHABLE in STATUSES
    # independently: each feature alone at its training minimum, and all
    # of them at once
    extremes = [FEATURES[k : k + 1] for k in range(len(FEATURES))] + [FEATURES]
    accepted = np.zeros(len(rejected), dtype=bool)
    for names in extremes:
        state = rejected.copy()
        for name in names:
            state[name] = X[name].min()
        accepted |= model.predict(state) == 1
    accepted = pd.Series(accepted, index=rejected.index).reindex(status.index)
    unreachable = status == STATUS_UNREACHABLE
    # a row an extreme brings to the target is never called unreachable
    assert not (unreachable & accepted).any()
    # a row no extreme reaches, and the search found nothing for, is
    assert (status[~accepted & (status != "ok")] == STATUS_UNREACHABLE).all()
    assert unreachable.any() and (status == "ok").any()


def test_unreachable_message_names_what_was_tried(cancer):
    _, _, _, _, frame = cancer
    rows = frame[frame["status"] == STATUS_UNREACHABLE]
    message = rows["message"].iloc[0]
    assert "most favourable end" in message
    assert "mean radius 6.981" in message  # the training minimum
    assert "population_size" not in message
    text = describe(frame)
    assert "status: unreachable (with every declared action" in text
    # the hint about the budget stays for no_counterfactual alone
    assert "unreachable (no valid sequence" not in text


def test_unreachable_rows_count_as_unsolved(cancer):
    _, _, _, _, frame = cancer
    status = _statuses(frame)
    expected = (status == "ok").mean()
    assert validity(frame) == pytest.approx(expected)
    assert expected < 1.0


def test_unreachable_survives_a_checkpoint(cancer, tmp_path):
    _, _, rejected, explainer, frame = cancer
    first = explainer.explain(rejected, checkpoint=tmp_path / "run")
    again = explainer.explain(rejected, checkpoint=tmp_path / "run")
    pd.testing.assert_frame_equal(first, frame)
    pd.testing.assert_frame_equal(again, frame)


def test_probes_try_both_ends_of_two_way_features():
    X = pd.DataFrame({"a": [0.0, 1.0], "b": [0.0, 1.0], "c": [0.0, 1.0]})
    from sklearn_cscf._schema import FeatureSchema

    schema = FeatureSchema(X)
    actions = [
        CompiledAction(Action("up_a", "a", direction="increase"), schema),
        CompiledAction(Action("set_b", "b"), schema),
        CompiledAction(Action("up_c", "c", direction="increase"), schema),
        CompiledAction(Action("down_c", "c", direction="decrease"), schema),
    ]
    keys, together = probe_keys(actions)
    # alone: up_a high; set_b low and high; up_c high; down_c low
    # together: a high, and b and c each low or high (4 combinations)
    assert keys.shape == (5 + 4, 8)
    assert len(together) == 4
    ends = {tuple(sorted(chosen.items())) for chosen in together}
    assert ((0, 1.0), (1, 0.0), (3, 0.0)) in ends
    assert ((0, 1.0), (1, 1.0), (2, 1.0)) in ends
    active = keys[:, :4] <= 0.5
    np.testing.assert_array_equal(active[:5].sum(axis=1), 1)
    np.testing.assert_array_equal(active[5:].sum(axis=1), 3)


def test_a_regressor_out_of_range_is_unreachable_with_its_closest_prediction():
    from sklearn.linear_model import LinearRegression

    X = pd.DataFrame({"x": np.arange(11.0), "z": np.ones(11)})
    model = LinearRegression().fit(X, 10.0 * X["x"])  # predicts 10 x
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=[Action("raise_x", "x", values=(0.0, 10.0), direction="increase")],
        target_range=(150.0, 200.0),
        population_size=20,
        n_generations=3,
        random_state=0,
    ).fit(X)
    frame = explainer.explain(X.iloc[[2]])
    assert frame["status"].tolist() == [STATUS_UNREACHABLE]
    message = frame["message"].iloc[0]
    assert "x 10" in message and "the closest prediction 100" in message
    # within reach: the search finds it, nothing is probed away
    reachable = explainer.set_params(target_range=(50.0, 200.0)).fit(X)
    assert reachable.explain(X.iloc[[2]])["status"].unique().tolist() == ["ok"]

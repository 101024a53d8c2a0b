"""What fit resolves (sklearn_cscf._compile): rows bringing categories fit
did not see are explained with copies that know them."""

from sklearn_cscf import SequentialCounterfactualExplainer


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

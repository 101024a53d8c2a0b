"""The paper's worked example (Fig. 2): why the order of actions matters
========================================================================

A seller with a high-school diploma in Germany is accepted only as a developer
with a BSc in the US. Three actions get there: change job (effort 10), get a
BSc (effort 5), move to the US (effort 15). A feature graph says that being in
the US makes studying easier and that a degree, or not yet having moved, makes
the job change easier. With the graph (CSCF) the cheapest plan is to study
first, then move, then change job (cost 22.5); without it (SCF) every order
costs 30. It takes no options::

    python examples/worked_example.py
"""

import numpy as np
import pandas as pd

from sklearn_cscf import (
    Action,
    FeatureGraph,
    SequentialCounterfactualExplainer,
    describe,
)


class AcceptsOnlyDeveloperBScUS:
    """A black box: accepts (Developer, BSc, US), rejects everything else."""

    classes_ = np.array(["rejected", "accepted"])

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        accepted = (
            (X["job"] == "Developer")
            & (X["education"] == "BSc")
            & (X["location"] == "US")
        ).to_numpy()
        p = np.where(accepted, 0.9, 0.1)
        return np.column_stack([1 - p, p])


def main():
    education = pd.CategoricalDtype(["HS", "BSc"], ordered=True)
    person = pd.DataFrame(
        {
            "job": ["Seller"],
            "education": pd.Series(["HS"], dtype=education),
            "location": ["Germany"],
        }
    )
    # the values the explainer learns the features' categories from
    known = pd.DataFrame(
        {
            "job": ["Seller", "Developer"],
            "education": pd.Series(["HS", "BSc"], dtype=education),
            "location": ["Germany", "US"],
        }
    )
    actions = [
        Action("change_job", "job", values="Developer", cost=lambda b, a: 10.0),
        Action("get_bsc", "education", values="BSc", cost=lambda b, a: 5.0),
        Action("move_to_us", "location", values="US", cost=lambda b, a: 15.0),
    ]
    graph = (
        FeatureGraph()
        .add_edge(
            "location",
            "education",
            lambda x: np.where(x["location"] == "US", 1.0, 0.5),
        )
        .add_edge(
            "location", "job", lambda x: np.where(x["location"] == "US", 0.5, 1.0)
        )
        .add_edge(
            "education", "job", lambda x: np.where(x["education"] == "BSc", 0.5, 1.0)
        )
    )
    for name, feature_graph in [("CSCF (with the graph)", graph), ("SCF", None)]:
        explainer = SequentialCounterfactualExplainer(
            AcceptsOnlyDeveloperBScUS(),
            actions=actions,
            feature_graph=feature_graph,
            population_size=100,
            n_generations=30,
            all_orders=True,  # every optimal order, not only the cheapest
            random_state=0,
        ).fit(known)
        steps = explainer.explain(person)
        # one plan (all three actions); its cheapest order step by step, and
        # what the other orders of the same actions cost
        print(f"{name}: {steps['solution'].nunique()} optimal order(s)")
        print(describe(steps, X=person, target_name="accepted", noun="Person"))
        print()


if __name__ == "__main__":
    main()

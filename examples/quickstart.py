"""Quickstart: sequential counterfactuals for rejected loan applicants
======================================================================

Trains a scikit-learn pipeline on the built-in synthetic credit problem, picks
a few applicants it rejects, and asks CSCF what each could do, in which order,
to be approved. Prints the cheapest sequences step by step and writes every
Pareto-optimal sequence to ``explanations.csv`` in the current directory.

Run ``python examples/quickstart.py --help`` for the options; a small budget
(``--population-size 60 --generations 10``) finishes in seconds.
"""

import argparse
import time

from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_cscf import SequentialCounterfactualExplainer, show
from sklearn_cscf._demo import add_search_options, pick_rejected
from sklearn_cscf.datasets import (
    credit_actions,
    credit_feature_graph,
    make_credit_applicants,
)

OUTPUT = "explanations.csv"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Explain rejected loan applicants with CSCF sequences.",
    )
    add_search_options(parser, rows="rejected applicants")
    return parser.parse_args(argv)


def build_model():
    """One-hot encode the categories, scale the numbers, logistic regression."""
    preprocess = make_column_transformer(
        (
            OneHotEncoder(handle_unknown="ignore"),
            make_column_selector(dtype_include="category"),
        ),
        remainder=StandardScaler(),
    )
    return make_pipeline(preprocess, LogisticRegression(max_iter=1000))


def main(argv=None):
    args = parse_args(argv)
    start = time.perf_counter()

    applicants = make_credit_applicants(2000, random_state=args.seed)
    X_train, X_test, y_train, y_test = train_test_split(
        applicants.data,
        applicants.target,
        test_size=0.25,
        stratify=applicants.target,
        random_state=args.seed,
    )
    model = build_model().fit(X_train, y_train)
    predicted = model.predict(X_test)
    accuracy = balanced_accuracy_score(y_test, predicted)
    print(
        f"Logistic regression on {len(X_train)} synthetic applicants: balanced "
        f"accuracy {accuracy:.3f} on {len(X_test)} held out."
    )

    rejected = pick_rejected(X_test, predicted, args.n_instances, args.seed)
    if len(rejected) < args.n_instances:
        print(f"Only {len(rejected)} rejected applicants; explaining all of them.")

    explainer = SequentialCounterfactualExplainer(
        model,
        actions=credit_actions(),
        feature_graph=credit_feature_graph(),
        population_size=args.population_size,
        n_generations=args.generations,
        n_jobs=args.n_jobs,
        random_state=args.seed,
        verbose=1,
    ).fit(X_train)
    print(
        f"Explaining {len(rejected)} rejected applicant(s) with "
        f"{len(explainer.actions_)} actions "
        f"(population {args.population_size}, {args.generations} generations)..."
    )
    explanations, states = explainer.explain(rejected, return_states=True)

    # each applicant's three cheapest plans step by step, with their
    # consequences and the probability of approval after each step
    print()
    proba = model.predict_proba(rejected)[:, 1]
    show(
        explanations,
        states,
        X=rejected,
        initial_proba=proba,
        noun="Applicant",
        target_name="approved",
    )
    print()

    explanations.to_csv(OUTPUT, index=False)
    counts = explanations["status"].value_counts().to_dict()
    print(
        f"Wrote {len(explanations)} rows to {OUTPUT} (statuses: {counts}) in "
        f"{time.perf_counter() - start:.1f} s."
    )


if __name__ == "__main__":
    main()

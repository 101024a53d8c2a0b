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

import numpy as np
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf.datasets import (
    credit_actions,
    credit_feature_graph,
    make_credit_applicants,
)

OUTPUT = "explanations.csv"
SHOWN_PER_PERSON = 3


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Explain rejected loan applicants with CSCF sequences.",
    )
    parser.add_argument(
        "--n-instances",
        type=positive_int,
        default=3,
        help="rejected applicants to explain (default: 3)",
    )
    parser.add_argument(
        "--population-size",
        type=positive_int,
        default=500,
        help="individuals per generation (default: 500, the paper's)",
    )
    parser.add_argument(
        "--generations",
        type=positive_int,
        default=150,
        help="generations of the search (default: 150, the paper's)",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        help="applicants explained in parallel; -1 uses all cores (default: 1)",
    )
    args = parser.parse_args(argv)
    if args.population_size < 2:
        parser.error("--population-size must be at least 2")
    return args


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


def fmt(value):
    """A raw value for people: whole numbers without decimals, money with."""
    if isinstance(value, float | np.floating):
        if np.isnan(value):
            return "-"
        if float(value).is_integer():
            return f"{value:,.0f}"
        return f"{value:,.2f}"
    return str(value)


def describe_person(label, row, proba, steps):
    """A readable summary of one applicant and their cheapest sequences."""
    profile = ", ".join(f"{name}={fmt(value)}" for name, value in row.items())
    lines = [f"Applicant {label}: {profile}", f"  P(approved) now: {proba:.2f}"]
    status = steps["status"].iloc[0]
    if status != "ok":
        lines.append(f"  status: {status}")
        return "\n".join(lines)
    n_solutions = steps["solution"].nunique()
    shown = min(n_solutions, SHOWN_PER_PERSON)
    lines[-1] += (
        f"; {n_solutions} Pareto-optimal sequence(s), the cheapest {shown} below"
    )
    for solution, seq in steps.groupby("solution", sort=True):
        if solution >= SHOWN_PER_PERSON:
            break
        first = seq.iloc[0]
        lines.append(
            f"  #{solution + 1}  cost {first['sequence_cost']:.2f} "
            f"(effort {first['sequence_effort']:.2f}), {first['length']} step(s), "
            f"Gower distance {first['gower_distance']:.3f}"
        )
        for step in seq.itertuples():
            lines.append(
                f"      {step.step}. {step.action:<19} {step.feature:<15}"
                f"{fmt(step.old_value):>12} -> {fmt(step.new_value):<12}"
                f" cost {step.cost:5.2f}   P(approved) {step.target_proba:.2f}"
            )
    return "\n".join(lines)


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
    accuracy = balanced_accuracy_score(y_test, model.predict(X_test))
    print(
        f"Logistic regression on {len(X_train)} synthetic applicants: balanced "
        f"accuracy {accuracy:.3f} on {len(X_test)} held out."
    )

    rejected = X_test[model.predict(X_test) == 0]
    if len(rejected) < args.n_instances:
        print(f"Only {len(rejected)} rejected applicants; explaining all of them.")
    rejected = rejected.head(args.n_instances)

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
    explanations = explainer.explain(rejected)

    print()
    probabilities = model.predict_proba(rejected)[:, 1]
    for (label, row), proba in zip(rejected.iterrows(), probabilities):
        steps = explanations[explanations["instance"] == label]
        print(describe_person(label, row, proba, steps))
        print()

    explanations.to_csv(OUTPUT, index=False)
    counts = explanations["status"].value_counts().to_dict()
    print(
        f"Wrote {len(explanations)} rows to {OUTPUT} (statuses: {counts}) in "
        f"{time.perf_counter() - start:.1f} s."
    )


if __name__ == "__main__":
    main()

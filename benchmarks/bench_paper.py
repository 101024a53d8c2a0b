"""The paper's two experiments, measured: Adult (CSCF and SCF) and German Credit.

For each built-in data set, trains the main job's model (random undersampling,
then gradient-boosted trees; ``python -m sklearn_cscf``), picks N rejected
test rows (default 100, as in the paper) and explains them with the paper's
actions (and, for Adult, its graph) at the paper's budget (population 500,
150 generations). Prints, per data set and method, the share of rows with a
sequence, the number of distinct Pareto-optimal sequences per row (median and
quartiles), the cheapest sequence's cost, the seconds per row on one core
(and how much of it the classifier took), and the wall-clock time with
``--n-jobs`` workers, next to the figures published for the authors' code
(a median of 7 optimal sequences per Adult row and 4 per German row; about
100 s and 145 s per row).

    python benchmarks/bench_paper.py [--n-instances 100] [--datasets adult german]

The paper's own network, with its Fig. 5 and Fig. 6 and the order statistics
of its Section 5 (``docs/paper.md``), is ``bench_paper_network.py``.
"""

import argparse
import os
import platform
import time

import numpy as np
import sklearn

import sklearn_cscf
from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf._demo import SCENARIOS, pick_rejected, train

# the paper's published figures for the authors' code (METHOD.md)
PUBLISHED = {"adult": (7, 100.0), "german": (4, 145.0)}


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-instances", type=positive_int, default=100)
    parser.add_argument(
        "--datasets", nargs="+", choices=sorted(SCENARIOS), default=["adult", "german"]
    )
    parser.add_argument("--population-size", type=positive_int, default=500)
    parser.add_argument("--generations", type=positive_int, default=150)
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def rejected_rows(scenario, n, seed):
    """The main job's split and model; n rejected test rows."""
    model, (X_train, X_test, _, _) = train(scenario.load(), seed)
    return model, X_train, pick_rejected(X_test, model.predict(X_test), n, seed)


def measure(model, X_train, rejected, scenario, use_graph, args):
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=scenario.actions(),
        feature_graph=scenario.graph() if use_graph else None,
        population_size=args.population_size,
        n_generations=args.generations,
        n_jobs=args.n_jobs,
        random_state=args.seed,
    ).fit(X_train)
    start = time.perf_counter()
    frame, details = explainer.explain(rejected, return_details=True)
    wall = time.perf_counter() - start
    solved = details[details["status"] == "ok"]
    # the distinct Pareto-optimal sequences found (the frame shows fewer)
    n_solutions = solved["n_solutions"].to_numpy()
    ok = frame[frame["status"] == "ok"]
    cheapest = ok.groupby("instance")["sequence_cost"].min().to_numpy()
    seconds = details["total_seconds"].to_numpy()
    classifier = details["model_seconds"].to_numpy()
    q1, median, q3 = (
        np.percentile(n_solutions, [25, 50, 75]) if len(solved) else [np.nan] * 3
    )
    return {
        "rows": len(details),
        "solved": len(solved),
        "median_sequences": median,
        "q1": q1,
        "q3": q3,
        "cheapest": np.median(cheapest) if len(solved) else np.nan,
        "seconds": np.median(seconds),
        "classifier_share": classifier.sum() / seconds.sum(),
        "wall": wall,
    }


def main(argv=None):
    args = parse_args(argv)
    print(
        f"sklearn-cscf {sklearn_cscf.__version__}, scikit-learn {sklearn.__version__},"
        f" Python {platform.python_version()}, {os.cpu_count()} cores; population "
        f"{args.population_size}, {args.generations} generations, n_jobs "
        f"{args.n_jobs}, seed {args.seed}"
    )
    header = (
        f"{'data set':<8} {'method':<6} {'rows':>5} {'solved':>7} "
        f"{'sequences: median [q1, q3]':>28} {'cheapest':>9} {'s/row':>6} "
        f"{'classif.':>9} {'wall s':>7}   published (authors' code)"
    )
    print(header)
    print("-" * len(header))
    for name in args.datasets:
        scenario = SCENARIOS[name]
        model, X_train, rejected = rejected_rows(scenario, args.n_instances, args.seed)
        methods = (
            [("CSCF", True), ("SCF", False)] if scenario.graph else [("SCF", False)]
        )
        for method, use_graph in methods:
            m = measure(model, X_train, rejected, scenario, use_graph, args)
            sequences, seconds = PUBLISHED[name]
            print(
                f"{name:<8} {method:<6} {m['rows']:>5} "
                f"{100 * m['solved'] / m['rows']:>6.0f}% "
                f"{m['median_sequences']:>12.1f} [{m['q1']:>4.1f}, {m['q3']:>4.1f}]"
                f"{'':>6} {m['cheapest']:>9.2f} {m['seconds']:>6.2f} "
                f"{100 * m['classifier_share']:>8.0f}% {m['wall']:>7.1f}   "
                f"median {sequences} sequences, ~{seconds:.0f} s/row",
                flush=True,
            )
    print(
        "s/row: median seconds per row on one core (search and classifier); "
        "classif.: share of that in the classifier; wall: all rows with n_jobs "
        "workers."
    )


if __name__ == "__main__":
    main()

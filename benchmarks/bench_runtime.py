"""Runtime per instance: classifier time versus optimiser overhead.

The synthetic mixed-type credit problem (``make_credit_applicants``) with its
six actions and feature graph, a logistic-regression pipeline as the black
box, the paper's budget (population 500, 150 generations) on one core
(``n_jobs=1``). For each rejected instance, prints the seconds spent in the
classifier and the rest (decoding, simulation, objectives, selection: the
optimiser overhead), and the overhead per generation.

Target: optimiser overhead at most 4 ms per generation (about 0.6 s per
instance at 150 generations beyond the classifier's own time). The overhead is
also split into the time spent in the problem's own callables (action costs,
effects, conditions and the graph's tau functions: user code) and the engine
(everything else). BLAS is limited to one thread.

    python benchmarks/bench_runtime.py [--n-instances 5]
"""

import argparse
import os
import platform
import time

import numpy as np
import sklearn
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from threadpoolctl import threadpool_limits

import sklearn_cscf
from sklearn_cscf import Action, FeatureGraph, SequentialCounterfactualExplainer
from sklearn_cscf.datasets import (
    credit_actions,
    credit_feature_graph,
    make_credit_applicants,
)

TARGET_MS_PER_GENERATION = 4.0
USER_SECONDS = [0.0]  # time spent inside the problem's callables


def timed(fn):
    """Wrap a user callable so the time spent inside it is counted."""

    def wrapper(*args):
        start = time.perf_counter()
        try:
            return fn(*args)
        finally:
            USER_SECONDS[0] += time.perf_counter() - start

    return wrapper


def timed_actions(actions):
    return [
        Action(
            a.name,
            a.feature,
            values=a.values,
            direction=a.direction,
            cost=a.cost and timed(a.cost),
            effects=a.effects and {k: timed(f) for k, f in a.effects.items()},
            precondition=a.precondition and timed(a.precondition),
            postcondition=a.postcondition and timed(a.postcondition),
            step=a.step,
        )
        for a in actions
    ]


def timed_graph(graph):
    return FeatureGraph([(s, t, timed(tau)) for s, t, tau in graph.edges])


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--n-instances",
        type=positive_int,
        default=5,
        help="rejected instances to time (default: 5)",
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
        help="generations (default: 150, the paper's)",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    return parser.parse_args(argv)


def build_problem(seed):
    applicants = make_credit_applicants(2000, random_state=seed)
    X, y = applicants.data, applicants.target
    preprocess = make_column_transformer(
        (
            OneHotEncoder(handle_unknown="ignore"),
            make_column_selector(dtype_include="category"),
        ),
        remainder=StandardScaler(),
    )
    model = make_pipeline(preprocess, LogisticRegression(max_iter=1000)).fit(X, y)
    return X, model


def main(argv=None):
    args = parse_args(argv)
    X, model = build_problem(args.seed)
    rejected = X[model.predict(X) == 0].head(args.n_instances)
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=timed_actions(credit_actions()),
        feature_graph=timed_graph(credit_feature_graph()),
        population_size=args.population_size,
        n_generations=args.generations,
        n_jobs=1,
        random_state=args.seed,
    ).fit(X)
    # warm up (imports, caches) on a tiny budget so the first row is not penalised
    explainer.set_params(population_size=20, n_generations=2)
    explainer._explain_results(rejected.head(1))
    explainer.set_params(
        population_size=args.population_size, n_generations=args.generations
    )

    print(
        f"sklearn-cscf {sklearn_cscf.__version__}, scikit-learn {sklearn.__version__}, "
        f"numpy {np.__version__}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPU(s), n_jobs=1, one BLAS thread"
    )
    print(
        f"Synthetic credit problem: {X.shape[1]} mixed-type features, "
        f"{len(explainer.actions_)} actions, {len(credit_feature_graph())} graph "
        f"edges; LogisticRegression pipeline; population {args.population_size}, "
        f"{args.generations} generations; {len(rejected)} rejected instance(s)."
    )
    header = (
        f"{'instance':>8}  {'status':<17} {'solutions':>9} {'gens':>5} "
        f"{'total s':>8} {'classifier s':>12} {'overhead s':>10} "
        f"{'clf ms/gen':>10} {'overhead ms/gen':>15} {'user ms/gen':>11} "
        f"{'engine ms/gen':>13}"
    )
    print()
    print(header)
    print("-" * len(header))
    rows = []
    start = time.perf_counter()
    for position in range(len(rejected)):
        USER_SECONDS[0] = 0.0
        with threadpool_limits(limits=1):
            _, index, results = explainer._explain_results(rejected.iloc[[position]])
        label, result = index[0], results[0]
        generations = max(result.n_generations, 1)
        overhead = result.total_seconds - result.classifier_seconds
        row = (
            result.total_seconds,
            result.classifier_seconds,
            overhead,
            1000 * result.classifier_seconds / generations,
            1000 * overhead / generations,
            1000 * USER_SECONDS[0] / generations,
            1000 * (overhead - USER_SECONDS[0]) / generations,
        )
        rows.append(row)
        print(
            f"{label!s:>8}  {result.status:<17} {result.n_solutions:>9} "
            f"{result.n_generations:>5} {row[0]:>8.3f} {row[1]:>12.3f} "
            f"{row[2]:>10.3f} {row[3]:>10.2f} {row[4]:>15.2f} {row[5]:>11.2f} "
            f"{row[6]:>13.2f}"
        )
    wall = time.perf_counter() - start
    median = np.median(np.array(rows), axis=0)
    print("-" * len(header))
    print(
        f"{'median':>8}  {'':<17} {'':>9} {'':>5} {median[0]:>8.3f} "
        f"{median[1]:>12.3f} {median[2]:>10.3f} {median[3]:>10.2f} "
        f"{median[4]:>15.2f} {median[5]:>11.2f} {median[6]:>13.2f}"
    )
    print()
    print(f"Wall time: {wall:.2f} s for {len(rejected)} instance(s).")
    met = median[4] <= TARGET_MS_PER_GENERATION
    print(
        f"Target: optimiser overhead <= {TARGET_MS_PER_GENERATION:.0f} ms per "
        f"generation. Median: {median[4]:.2f} ms -> {'MET' if met else 'NOT MET'}."
    )


if __name__ == "__main__":
    main()

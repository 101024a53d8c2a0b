"""Runtime per row on Adult: the lock-step engine against the naive floor.

For two black boxes trained on the main job's Adult split (``python -m
sklearn_cscf``): the main job's imbalanced-learn pipeline (random
undersampling, then gradient-boosted trees reading the pandas categories) and
a small neural network (one-hot and scaled features, ``MLPClassifier`` with
two hidden layers of 50). Each explains the same rejected test rows with the
paper's actions and graph at the paper's budget (population 500, 150
generations) on one core (``n_jobs=1``, one BLAS thread), for each
``--batch-sizes`` value.

Printed per model and block size: seconds per row (wall clock), the seconds
per row outside the classifier (the engine's own work: decoding, simulation,
selection, refinement), the share in the classifier, the optimiser's own
overhead per generation and row (the rest: decoding, simulation, user
callables, selection, refinement; the generations summed over the rows, nan
when no row was searched), classifier calls
and rows per row (rows as a share of population x generations), and the
*naive floor*: the time of 150 ``predict_proba`` calls of 500 rows of that
model (what asking the model about every individual of every generation,
one call per generation, would cost), timed in the same run.

Targets (issue 7, the main job's model): at most 0.35 x the naive floor and
at most 0.5 s per row; rows sent at most 30 % of population x generations;
overhead at most 3 ms per generation and row.

    python benchmarks/bench_runtime.py [--n-instances 64] [--batch-sizes 1 8 32 64]
"""

import argparse
import os
import platform
import time

import numpy as np
import pandas as pd
import sklearn
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from threadpoolctl import threadpool_limits

import sklearn_cscf
from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf._demo import SCENARIOS, pick_rejected, train

# the naive floor and the rows share are per the paper's budget, whatever
# --generations says
PAPER_GENERATIONS = 150
TARGET_FLOOR_RATIO = 0.35
TARGET_SECONDS = 0.5
TARGET_ROW_SHARE = 0.30
TARGET_OVERHEAD_MS = 3.0


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def generations(text):
    return text if text == "auto" else positive_int(text)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-instances", type=positive_int, default=64)
    parser.add_argument(
        "--batch-sizes", type=positive_int, nargs="+", default=[1, 8, 32, 64]
    )
    parser.add_argument(
        "--models", nargs="+", choices=["hgb", "mlp"], default=["hgb", "mlp"]
    )
    parser.add_argument("--population-size", type=positive_int, default=500)
    parser.add_argument(
        "--generations",
        type=generations,
        default=150,
        help="a number (the paper's: 150) or \"auto\" (the explainer's default)",
    )
    parser.add_argument("--no-refine", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def mlp_model(X_train, y_train, seed):
    """One-hot categories, scaled numbers, a 50-50 multilayer perceptron."""
    preprocess = make_column_transformer(
        (
            OneHotEncoder(handle_unknown="ignore", sparse_output=False),
            make_column_selector(dtype_include="category"),
        ),
        remainder=StandardScaler(),
    )
    network = MLPClassifier(
        hidden_layer_sizes=(50, 50), max_iter=60, early_stopping=True, random_state=seed
    )
    return make_pipeline(preprocess, network).fit(X_train, y_train)


def naive_floor(model, rows, population, generations):
    """Seconds for ``generations`` predict_proba calls of ``population`` rows."""
    batch = rows.sample(population, replace=True, random_state=0)
    model.predict_proba(batch)  # warm up
    start = time.perf_counter()
    for _ in range(generations):
        model.predict_proba(batch)
    return time.perf_counter() - start


def measure(model, X_train, rejected, batch_size, args):
    scenario = SCENARIOS["adult"]
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=scenario.actions(),
        feature_graph=scenario.graph(),
        population_size=args.population_size,
        n_generations=args.generations,
        refine=not args.no_refine,
        batch_size=batch_size,
        n_jobs=1,
        random_state=args.seed,
    ).fit(X_train)
    start = time.perf_counter()
    frame, details = explainer.explain(rejected, return_details=True)
    wall = time.perf_counter() - start
    searched = details[details["status"] != "already_target"]
    n = len(searched)
    model_seconds = searched["model_seconds"].sum()
    generations = searched["n_generations"].sum()
    return {
        "s/row": wall / n,
        "model share": model_seconds / wall,
        "outside s/row": (wall - model_seconds) / n,
        # nan when no row was searched (n_generations="auto" judged plans)
        "overhead ms/gen": 1000 * (wall - model_seconds) / generations
        if generations
        else float("nan"),
        "calls/row": searched["n_model_calls"].mean(),
        "rows/row": searched["n_model_rows"].mean(),
        "rows share": searched["n_model_rows"].mean()
        / (args.population_size * PAPER_GENERATIONS),
        "solved": (searched["status"] == "ok").mean(),
        "least cost": frame[frame["status"] == "ok"]
        .groupby("instance")["sequence_cost"]
        .min()
        .mean(),
    }


def main(argv=None):
    args = parse_args(argv)
    scenario = SCENARIOS["adult"]
    bunch = scenario.load()
    hgb, (X_train, X_test, y_train, _) = train(bunch, args.seed)
    rejected = pick_rejected(X_test, hgb.predict(X_test), args.n_instances, args.seed)
    print(
        f"sklearn-cscf {sklearn_cscf.__version__}, scikit-learn {sklearn.__version__}, "
        f"pandas {pd.__version__}, numpy {np.__version__}, Python "
        f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPU(s); "
        "n_jobs=1, one BLAS thread"
    )
    print(
        f"Adult, the paper's actions and graph, population {args.population_size}, "
        f"{args.generations} generations, refinement "
        f"{'off' if args.no_refine else 'on'}; {len(rejected)} rejected test rows "
        "(those of the main job's model for both models)."
    )
    for name in args.models:
        with threadpool_limits(limits=1):
            model = hgb if name == "hgb" else mlp_model(X_train, y_train, args.seed)
            floor = naive_floor(model, X_train, args.population_size, PAPER_GENERATIONS)
            title = (
                "main job's model (undersampling + gradient-boosted trees)"
                if name == "hgb"
                else "neural network (one-hot + scaled, MLP 50-50)"
            )
            print()
            print(f"{title}: naive floor {floor:.2f} s per row")
            header = (
                f"{'batch':>5} {'s/row':>7} {'outside':>7} {'x floor':>8} {'model':>6} "
                f"{'overhead ms/gen':>15} {'calls/row':>9} {'rows/row':>9} "
                f"{'rows %':>7} {'solved':>7} {'mean least cost':>15}"
            )
            print(header)
            print("-" * len(header))
            for batch_size in args.batch_sizes:
                r = measure(model, X_train, rejected, batch_size, args)
                print(
                    f"{batch_size:>5} {r['s/row']:>7.3f} {r['outside s/row']:>7.3f} "
                    f"{r['s/row'] / floor:>8.2f} "
                    f"{r['model share']:>6.1%} {r['overhead ms/gen']:>15.2f} "
                    f"{r['calls/row']:>9.1f} {r['rows/row']:>9.0f} "
                    f"{r['rows share']:>7.1%} {r['solved']:>7.0%} "
                    f"{r['least cost']:>15.4f}"
                )
    print()
    print(
        f"Targets (main job's model): <= {TARGET_FLOOR_RATIO} x floor and <= "
        f"{TARGET_SECONDS} s per row; rows <= {TARGET_ROW_SHARE:.0%} of population "
        f"x generations; overhead <= {TARGET_OVERHEAD_MS} ms per generation and row."
    )


if __name__ == "__main__":
    main()

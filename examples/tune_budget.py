"""Tuning the search budget for cost against time
===============================================

How large a search does Adult need? A larger population and more
generations find cheaper sequences (and for more people) but take longer.
This example trains the command line's model on the built-in Adult data,
picks a few people it predicts to earn at most 50K, and lets scikit-learn's
:class:`~sklearn.model_selection.GridSearchCV` try several budgets
(``population_size`` and ``n_generations``) of the explainer with the paper's
actions and feature graph.

Each candidate is scored with :class:`sklearn_cscf.metrics.ExplanationScorer`,
which explains each fold's people once and returns every score at once: the
share of people with a sequence (validity), the mean cost of their cheapest
sequence, its length, the number of plans, the search time per person and
``combined``, the score that chooses::

    validity - 0.5 * c / (c + cost_scale) - time_weight * t / (t + time_scale)

with ``c`` the mean cheapest cost and ``t`` the CPU seconds of the search per
person (``time.process_time``, not wall-clock: a busy machine barely moves
it). The
explainer learns the features from the training data in every fold (a
:class:`~sklearn.model_selection.PredefinedSplit` keeps the training rows out
of the test folds); only the rejected people are explained.

Prints the table of ``cv_results_`` (one line per budget) and the budget
chosen; writes the table to ``tune_budget.csv`` in the current directory.
Times differ between machines, and so may the choice when ``--time-weight``
is not 0.

Run ``python examples/tune_budget.py --help`` for the options; ``--quick``
tries a tiny grid in seconds (the documentation's gallery runs ``--quick
--n-instances 6 --seed 0``), the default grid of 16 budgets on 10 people
takes about a minute on two cores.
"""

import argparse
import time

import numpy as np
import pandas as pd
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import GridSearchCV, PredefinedSplit
from threadpoolctl import threadpool_limits

from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf._demo import (
    MAX_SEED,
    SCENARIOS,
    bounded_int,
    n_jobs,
    pick_rejected,
    train,
)
from sklearn_cscf.metrics import ExplanationScorer

OUTPUT = "tune_budget.csv"
GRID = {"population_size": [25, 50, 100, 250], "n_generations": [10, 30, 75, 150]}
QUICK_GRID = {"population_size": [10, 40], "n_generations": [3, 10]}
N_SPLITS = 2
# a mean cheapest cost of COST_SCALE (Adult's costs: years, hours, 10,000s of
# capital) and a search of TIME_SCALE CPU seconds per person each count half
COST_SCALE = 2.0
TIME_SCALE = 1.0
COLUMNS = {  # cv_results_ key -> column of the printed table
    "param_population_size": "population",
    "param_n_generations": "generations",
    "mean_test_validity": "validity",
    "mean_test_neg_mean_sequence_cost": "mean least cost",
    "mean_test_neg_mean_sequence_length": "steps",
    "mean_test_diversity": "plans",
    "mean_test_neg_seconds_per_row": "CPU s / person",
    "mean_test_combined": "combined",
    "rank_test_combined": "rank",
}
NEGATED = ("mean least cost", "steps", "CPU s / person")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Tune the explainer's search budget on Adult with grid search.",
    )
    parser.add_argument(
        "--n-instances",
        metavar="N",
        type=bounded_int(N_SPLITS, what=f"an integer >= {N_SPLITS}"),
        default=10,
        help="people predicted to earn <=50K to explain (default: 10)",
    )
    parser.add_argument(
        "--time-weight",
        metavar="W",
        type=weight,
        default=0.1,
        help="weight of the search time against validity and cost (default: 0.1)",
    )
    parser.add_argument(
        "--n-jobs",
        metavar="N",
        type=n_jobs,
        default=1,
        help="candidates searched in parallel; -1 uses all cores (default: 1)",
    )
    parser.add_argument(
        "--seed",
        metavar="SEED",
        type=bounded_int(0, MAX_SEED, what=f"an integer in [0, {MAX_SEED}]"),
        default=0,
        help="random seed of the run: split, model, search (default: 0)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a tiny grid (population 10 or 40, 3 or 10 generations)",
    )
    return parser.parse_args(argv)


def weight(text):
    """An argparse type: a finite number >= 0."""
    try:
        value = float(text)
    except ValueError:
        value = np.nan
    if not 0 <= value < np.inf:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def results_table(search):
    """One line per candidate, the scores back to their own signs."""
    table = pd.DataFrame(search.cv_results_)[list(COLUMNS)].rename(columns=COLUMNS)
    table[list(NEGATED)] = -table[list(NEGATED)]
    return table.sort_values(["population", "generations"], ignore_index=True)


def main(argv=None):
    args = parse_args(argv)
    start = time.perf_counter()
    scenario = SCENARIOS["adult"]

    # The command line's model (under-sampling, then gradient boosting), with
    # one OpenMP thread: the data are small.
    with threadpool_limits(limits=1):
        model, (X_train, X_test, _, _) = train(scenario.load(), args.seed)
        predicted = model.predict(X_test)
    rejected = pick_rejected(X_test, predicted, args.n_instances, args.seed)
    if len(rejected) < N_SPLITS:
        raise SystemExit(f"Only {len(rejected)} people predicted <=50K.")

    # Grid search clones the explainer, and a clone of a fitted model is
    # unfitted: FrozenEstimator keeps it as it is, so no labels are needed.
    explainer = SequentialCounterfactualExplainer(
        FrozenEstimator(model),
        actions=scenario.actions(),
        feature_graph=scenario.graph(),
        random_state=args.seed,
    )
    # Every fold fits on the training rows (-1: never a test row) and the
    # other half of the people, and explains its own half.
    X_search = pd.concat([X_train, rejected])
    folds = np.r_[np.full(len(X_train), -1), np.arange(len(rejected)) % N_SPLITS]
    scorer = ExplanationScorer(
        cost_scale=COST_SCALE, time_weight=args.time_weight, time_scale=TIME_SCALE
    )
    grid = QUICK_GRID if args.quick else GRID
    n_candidates = len(grid["population_size"]) * len(grid["n_generations"])
    print(
        f"Trying {n_candidates} budgets on {len(rejected)} people predicted to "
        f"earn <=50K ({N_SPLITS} folds); {scorer!r}..."
    )
    search = GridSearchCV(
        explainer,
        grid,
        scoring=scorer,  # one explain call per candidate and fold, six scores
        refit="combined",
        cv=PredefinedSplit(folds),
        n_jobs=args.n_jobs,
    )
    with threadpool_limits(limits=1):
        search.fit(X_search)

    table = results_table(search)
    with pd.option_context("display.float_format", "{:.3f}".format):
        print(table.to_string(index=False))
    best = search.best_params_
    print(
        f"\nChosen: population_size={best['population_size']}, "
        f"n_generations={best['n_generations']} (combined "
        f"{search.best_score_:.3f}; the paper's budget is 500 and 150)."
    )
    table.to_csv(OUTPUT, index=False)
    print(f"Wrote the table to {OUTPUT} in {time.perf_counter() - start:.1f} s.")


if __name__ == "__main__":
    main()

"""Wide data: time per row against the number of features with actions.

A synthetic problem per width ``d`` (``--features``, default 10 30 60 100 300
1000): ``d`` standard normal features, a logistic regression on the sum of
the first five, and ``actions=None`` (every feature gets the default action,
anywhere in its training range, its effort the change scaled by the range).
Each width explains the same number of rejected rows (``--n-instances``) at
the explainer's defaults (population 500, ``n_generations="auto"``, with
refinement) unless ``--population-size`` / ``--generations`` say otherwise,
on one core (``n_jobs=1``, one BLAS thread).

Printed per width: CPU seconds per row (``time.process_time``, robust to a
shared machine), the share of the wall time in the model, generations,
states asked about per row (the search's and refinement's together), the
tweak-count columns of the objectives (one per feature with an action up to
``MAX_TWEAK_COLUMNS``, then one aggregated column), the mean least cost, and
the time per row relative to the first width.

Target (issue 21): 60 features at most 5 x the time per row of 10 features;
1,000 features explain a row.

    python benchmarks/bench_wide.py [--features 10 30 60 100 300 1000]
        [--n-instances 4] [--population-size 500] [--generations auto]
"""

import argparse
import os
import platform
import time

import numpy as np
import pandas as pd
import sklearn
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

import sklearn_cscf
from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf._engine._objectives import MAX_TWEAK_COLUMNS

TARGET_RATIO_60 = 5.0


def generations(text):
    return text if text == "auto" else int(text)


def problem(d, n_rows, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(500, d))).add_prefix("x")
    y = (X.iloc[:, :5].sum(axis=1) > 0).astype(int)
    model = LogisticRegression(max_iter=1000).fit(X, y)
    rows = X[model.predict(X) == 0].head(n_rows)
    return model, X, rows


def measure(d, args):
    model, X, rows = problem(d, args.n_instances)
    explainer = SequentialCounterfactualExplainer(
        model,
        population_size=args.population_size,
        n_generations=args.generations,
        n_jobs=1,
        random_state=0,
    ).fit(X)
    start, wall = time.process_time(), time.perf_counter()
    frame, details = explainer.explain(rows, return_details=True)
    cpu = time.process_time() - start
    wall = time.perf_counter() - wall
    n = len(rows)
    ok = frame[frame["status"] == "ok"]
    return {
        "features": d,
        "CPU s/row": cpu / n,
        # the model's seconds are wall-clock ones: a share of the wall time
        "model share": details["model_seconds"].sum() / max(wall, 1e-12),
        "generations": details["n_generations"].mean(),
        "states/row": details["n_evaluated"].mean(),
        "tweak columns": d if d <= MAX_TWEAK_COLUMNS else 1,
        "solved": (details["status"] == "ok").mean(),
        "least cost": ok.groupby("instance")["sequence_cost"].min().mean(),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--features", type=int, nargs="+", default=[10, 30, 60, 100, 300, 1000]
    )
    parser.add_argument("--n-instances", type=int, default=4)
    parser.add_argument("--population-size", type=int, default=500)
    parser.add_argument("--generations", type=generations, default="auto")
    args = parser.parse_args(argv)
    print(
        f"sklearn-cscf {sklearn_cscf.__version__}, scikit-learn "
        f"{sklearn.__version__}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPU(s); n_jobs=1, one BLAS thread; population "
        f"{args.population_size}, {args.generations} generations, "
        f"{args.n_instances} rows per width"
    )
    rows = []
    with threadpool_limits(limits=1):
        for d in args.features:
            rows.append(measure(d, args))
            rows[-1]["x first"] = rows[-1]["CPU s/row"] / rows[0]["CPU s/row"]
            print(pd.DataFrame(rows[-1:]).round(3).to_string(index=False), flush=True)
    table = pd.DataFrame(rows)
    print()
    print(table.round(3).to_string(index=False))
    by_width = table.set_index("features")["CPU s/row"]
    if 10 in by_width and 60 in by_width:
        ratio = by_width[60] / by_width[10]
        print(
            f"\n60 features / 10 features: {ratio:.1f} x (target <= "
            f"{TARGET_RATIO_60:.0f} x)"
        )


if __name__ == "__main__":
    main()

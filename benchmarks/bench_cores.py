"""Issue 25's table, measured: W workers with 16 rows each, cold and warm.

The main job's Adult model and its rejected test rows, the explainer's
default settings (``n_generations="auto"``, ``batch_size=64``), loky
workers. For each number of workers W, ``--rows-per-worker`` × W rows are
explained by a new explainer ``1 + --repeats`` times: the first call
(cold: it starts the workers and ships them the model), then the warm ones.
Printed: each call's seconds, and the speed-up in rows per second over the
one-worker run (warm medians), as issue 25's table; then the same rows as
the most workers with joblib's Dask backend (a ``distributed.LocalCluster``
of W single-threaded worker processes, Dask's default worker environment),
against loky's warm median, and whether every frame equals loky's.

Made for a many-core machine (``docs/benchmarks.md``, "Measured on a lent
16-core machine"); on two cores, ``--workers 1 2``:

    python benchmarks/bench_cores.py [--workers 1 8 16] [--rows-per-worker 16]
        [--repeats 3] [--no-dask]

The one-worker baseline is itself noisy on a shared machine: give each
setting several warm runs (``--repeats``) and read the medians.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scaling import local_cluster  # noqa: E402

from sklearn_cscf import SequentialCounterfactualExplainer  # noqa: E402
from sklearn_cscf._demo import SCENARIOS, pick_rejected, train  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 8, 16])
    parser.add_argument("--rows-per-worker", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3, help="warm runs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args(argv)
    scenario = SCENARIOS["adult"]
    model, (X_train, X_test, _, _) = train(scenario.load(), args.seed)
    most = max(args.workers) * args.rows_per_worker
    rejected = pick_rejected(X_test, model.predict(X_test), most, args.seed)

    def explainer(n_jobs):
        return SequentialCounterfactualExplainer(
            model,
            actions=scenario.actions(),
            feature_graph=scenario.graph(),
            n_jobs=n_jobs,
            random_state=args.seed,
        ).fit(X_train)

    def runs(ex, rows, label):
        seconds, frame = [], None
        for _ in range(1 + args.repeats):
            start = time.perf_counter()
            frame = ex.explain(rejected.iloc[:rows])
            seconds.append(time.perf_counter() - start)
        warm = ", ".join(f"{s:.2f}" for s in seconds[1:])
        print(f"{label}: cold {seconds[0]:.2f} s, warm {warm} s", flush=True)
        return seconds[0], statistics.median(seconds[1:]), frame

    results = {}
    for workers in args.workers:
        rows = workers * args.rows_per_worker
        label = f"{workers} workers"
        results[workers] = (rows, *runs(explainer(workers), rows, label))
    # one worker's seconds per row (the fewest workers', per worker)
    fewest = min(args.workers)
    rows, _, warm, _ = results[fewest]
    per_row = warm * fewest / rows
    print()
    print(f"{'workers':>7} {'rows':>5} {'cold s':>7} {'warm s':>7} {'speed-up':>9}")
    for workers, (rows, cold, warm, _) in results.items():
        speed_up = per_row / (warm / rows)
        print(f"{workers:>7} {rows:>5} {cold:>7.2f} {warm:>7.2f} {speed_up:>9.2f}")
    if args.no_dask:
        return
    import distributed
    from joblib import parallel_config

    workers = max(args.workers)
    rows, _, loky_warm, loky_frame = results[workers]
    cluster = local_cluster(workers)
    client = distributed.Client(cluster)
    try:
        with parallel_config(backend="dask"):
            _, warm, frame = runs(explainer(-1), rows, f"Dask, {workers} workers")
    finally:
        client.close()
        cluster.close()
    print(
        f"Dask's throughput against loky's (warm medians): {loky_warm / warm:.0%}; "
        f"the same frame: {frame.equals(loky_frame)}"
    )


if __name__ == "__main__":
    main()

"""Worker start-up: what the first parallel call costs more than a warm one.

Each run is a fresh Python process: it fits the main job's Adult model and
an explainer with a small budget, then explains the same rejected rows twice
with ``n_jobs`` workers (loky). The first call starts the workers, which
import what unpickling their first task needs and unpickle the problem; the
second reuses them. Prints, over ``--runs`` processes, the min and median
wall-clock seconds of the first call, the second, and their difference, and
the difference in CPU seconds summed over the process and its workers (what
starting the workers costs, whatever else runs on the machine; needs
``psutil``).

``--imports`` also shows what a worker imports for its first task: a fresh
process unpickles the first task exactly as the explainer pickles it
(cloudpickle: the task function, the :class:`~sklearn_cscf._engine._block.Shipment`
and the block's rows and seeds; and, for the floor, the model alone) under
``python -X importtime``; printed are the pickled sizes, the wall time of
that unpickling, the number of modules it imports and the slowest top-level
packages, and whether the plotting, dataset, metrics, matplotlib, polars,
pyarrow and Dask modules are among them.

Target (issue 25): the first call costs at most 0.5 s more than a warm one
with 2 workers here, on 16 rows.

    python benchmarks/bench_startup.py [--runs 5] [--n-jobs 2] [--rows 16]
        [--imports]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

TARGET = 0.5  # seconds more for the first call, 2 workers


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--population-size", type=int, default=50)
    parser.add_argument("--generations", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--imports", action="store_true", help="also profile a worker's imports"
    )
    parser.add_argument("--one-run", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--task", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def setup(args):
    """The explainer and the rows (a fitted model, no call made yet)."""
    from threadpoolctl import threadpool_limits

    from sklearn_cscf import SequentialCounterfactualExplainer
    from sklearn_cscf._demo import SCENARIOS, pick_rejected, train

    scenario = SCENARIOS["adult"]
    with threadpool_limits(limits=1):
        model, (X_train, X_test, _, _) = train(scenario.load(), args.seed)
        predicted = model.predict(X_test)
    rows = pick_rejected(X_test, predicted, args.rows, args.seed)
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=scenario.actions(),
        feature_graph=scenario.graph(),
        population_size=args.population_size,
        n_generations=args.generations,
        n_jobs=args.n_jobs,
        random_state=args.seed,
    ).fit(X_train)
    return explainer, rows


def one_run(args):
    """First and second call in this process (JSON on stdout)."""
    from bench_scaling import tree_cpu

    explainer, rows = setup(args)
    times, cpus = [], []
    for _ in range(2):
        cpu, start = tree_cpu(), time.perf_counter()
        explainer.explain(rows)
        times.append(time.perf_counter() - start)
        cpus.append(tree_cpu() - cpu)
    print(
        json.dumps(
            {"first": times[0], "warm": times[1], "cpu": cpus[0], "warm cpu": cpus[1]}
        )
    )


class _Captured(Exception):
    pass


def first_task(args):
    """The pickled first task of a parallel call, as loky sends it."""
    import cloudpickle

    from sklearn_cscf import _driver

    explainer, rows = setup(args)
    captured = {}
    original = _driver.Parallel

    class Capture:
        def __init__(self, *a, **k):
            pass

        def __call__(self, tasks):
            captured["task"] = next(iter(tasks))
            raise _Captured

    _driver.Parallel = Capture
    try:
        explainer.explain(rows)
    except _Captured:
        pass
    finally:
        _driver.Parallel = original
    function, positional, keywords = captured["task"]
    shipment = positional[0]
    captured["model"] = cloudpickle.dumps(explainer.estimator)
    sizes = {
        "shipment (the problem, once per worker)": len(cloudpickle.dumps(shipment)),
        "task (function, shipment, rows, seeds)": len(
            cloudpickle.dumps((function, positional, keywords))
        ),
        "rows and seeds alone": len(cloudpickle.dumps(positional[1:])),
    }
    return cloudpickle.dumps((function, positional, keywords)), captured["model"], sizes


UNPICKLE = """
import sys, time
start, cpu = time.perf_counter(), time.process_time()
import cloudpickle
before = set(sys.modules)
with open({path!r}, "rb") as f:
    cloudpickle.loads(f.read())
seconds = time.perf_counter() - start
cpu = time.process_time() - cpu
new = sorted(set(sys.modules) - before)
import json
print(json.dumps({{"seconds": seconds, "cpu": cpu, "modules": new}}))
"""


def _unpickling_cpu(command, runs):
    """CPU seconds of ``runs`` fresh processes running ``command``."""
    cpus = []
    for _ in range(runs):
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        cpus.append(json.loads(done.stdout.strip().splitlines()[-1])["cpu"])
    return cpus


def imports(args):
    payload, model, sizes = first_task(args)
    print("Pickled sizes (cloudpickle):")
    for name, size in sizes.items():
        print(f"  {name:<42} {size / 1024:>9.1f} KiB")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "task.pkl")
        with open(path, "wb") as f:
            f.write(payload)
        command = [sys.executable, "-c", UNPICKLE.format(path=path)]
        cpus = _unpickling_cpu(command, args.runs)
        # the floor: what unpickling the model alone imports, which any
        # worker explaining it pays whatever the library does
        model_path = os.path.join(tmp, "model.pkl")
        with open(model_path, "wb") as f:
            f.write(model)
        floor_command = [sys.executable, "-c", UNPICKLE.format(path=model_path)]
        floor = _unpickling_cpu(floor_command, args.runs)
        done = subprocess.run(
            [sys.executable, "-X", "importtime", *command[1:]],
            capture_output=True,
            text=True,
            check=True,
        )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    top = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        if name.strip().startswith("imported package"):
            continue
        if len(name) - len(name.lstrip()) == 1:  # a top-level import
            package = name.strip().split(".")[0]
            top[package] = top.get(package, 0) + int(cumulative) / 1e6
    print(
        f"A fresh process unpickling the first task ({args.runs} runs): CPU "
        f"{min(cpus):.2f} s min, {statistics.median(cpus):.2f} s median; "
        f"{len(result['modules'])} modules imported."
    )
    print(
        f"The model alone (its own imports, the floor of any worker): CPU "
        f"{min(floor):.2f} s min, {statistics.median(floor):.2f} s median; the "
        f"library's share {statistics.median(cpus) - statistics.median(floor):.2f} s."
    )
    print("Slowest top-level imports (cumulative s, -X importtime):")
    for package, seconds in sorted(top.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {package:<24} {seconds:>6.2f}")
    heavy = (
        "sklearn_cscf.plotting",
        "sklearn_cscf.datasets",
        "sklearn_cscf.metrics",
        "matplotlib",
        "polars",
        "pyarrow",
        "dask",
        "distributed",
        "tqdm",
    )
    print("Imported by the worker?")
    for name in heavy:
        there = any(m == name or m.startswith(name + ".") for m in result["modules"])
        print(f"  {name:<24} {'yes' if there else 'no'}")
    print()


def main(argv=None):
    args = parse_args(argv)
    if args.one_run:
        return one_run(args)
    if args.imports:
        imports(args)
    command = [sys.executable, __file__, "--one-run"]
    for option in ("n_jobs", "rows", "population_size", "generations", "seed"):
        command += [f"--{option.replace('_', '-')}", str(getattr(args, option))]
    firsts, warms, extras, cpu_extras = [], [], [], []
    for _ in range(args.runs):
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        run = json.loads(done.stdout.strip().splitlines()[-1])
        firsts.append(run["first"])
        warms.append(run["warm"])
        extras.append(run["first"] - run["warm"])
        cpu_extras.append(run["cpu"] - run["warm cpu"])
    print(
        f"{args.runs} fresh processes, n_jobs={args.n_jobs}, {args.rows} rows, "
        f"population {args.population_size}, {args.generations} generations "
        "(wall-clock s):"
    )
    print(f"{'':<22} {'min':>6} {'median':>7}")
    for name, values in (
        ("first call", firsts),
        ("second call (warm)", warms),
        ("first - warm", extras),
        ("CPU: first - warm", cpu_extras),
    ):
        print(f"{name:<22} {min(values):>6.2f} {statistics.median(values):>7.2f}")
    extra = statistics.median(extras)
    print(
        f"Target: the first call at most {TARGET} s more than a warm one: "
        f"median {extra:.2f} s -> {'MET' if extra <= TARGET else 'NOT MET'}."
    )


if __name__ == "__main__":
    main()

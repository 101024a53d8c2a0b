"""Allocation churn of the search: large allocations per generation.

Dask's nanny starts its workers with ``MALLOC_TRIM_THRESHOLD_`` set, which
turns off glibc's adaptive ``mmap`` threshold: every allocation of 128 KiB or
more is then mapped and unmapped afresh (a system call each way, and a page
fault and zeroing for every page touched). This script measures that churn on
one core, without a cluster: the main job's Adult model explains one block of
N rejected rows (default 64, the default ``batch_size``), and each generation
of the search is measured in a fresh process started with Dask's worker
environment (``MALLOC_TRIM_THRESHOLD_=65536``) and, for comparison, with the
default one.

Printed per environment (medians over the generations after the first few):
the minor page faults per generation (``getrusage``), and, with ``--strace``
(needs ``strace``), the anonymous ``mmap`` calls of 128 KiB or more per
generation (under Dask's environment each such call is one large allocation
of the process: NumPy's, pandas', the model's) and the MiB they map. Also the
seconds per generation, from runs of the two environments interleaved (A B A
B ...), and their ratio: what Dask's environment costs the search on one core.

    python benchmarks/bench_churn.py [--n-instances 64] [--generations 12]
        [--repeats 3] [--strace]
"""

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

LARGE = 128 * 2**10  # glibc's default (and, under Dask, fixed) mmap threshold
SKIP = 2  # first generations left out of the medians (warm-up)
DASK_ENVIRON = {"MALLOC_TRIM_THRESHOLD_": "65536"}


def child(args):
    """Explain a block of rows, one line of figures per generation."""
    from threadpoolctl import threadpool_limits

    from sklearn_cscf import SequentialCounterfactualExplainer
    from sklearn_cscf._demo import SCENARIOS, pick_rejected, train
    from sklearn_cscf._engine._evaluator import Evaluator

    scenario = SCENARIOS["adult"]
    with threadpool_limits(limits=1):
        model, (X_train, X_test, _, _) = train(scenario.load(), args.seed)
        rows = pick_rejected(X_test, model.predict(X_test), args.n_instances, args.seed)
        explainer = SequentialCounterfactualExplainer(
            model,
            actions=scenario.actions(),
            feature_graph=scenario.graph(),
            population_size=args.population_size,
            n_generations=args.generations,
            batch_size=max(64, args.n_instances),
            refine=False,
            n_jobs=1,
            random_state=args.seed,
        ).fit(X_train)
        marks = []
        marker = os.open(os.devnull, os.O_WRONLY)
        evaluate = Evaluator.evaluate

        def marked(self, owner, keys, known=None):
            # a write to /dev/null marks the generation in strace's log
            os.write(marker, f"cscf-generation {len(marks)}".encode())
            usage = resource.getrusage(resource.RUSAGE_SELF)
            marks.append((time.perf_counter(), usage.ru_minflt))
            return evaluate(self, owner, keys, known)

        Evaluator.evaluate = marked
        try:
            explainer.explain(rows)
        finally:
            Evaluator.evaluate = evaluate
        os.write(marker, f"cscf-generation {len(marks)}".encode())
        usage = resource.getrusage(resource.RUSAGE_SELF)
        marks.append((time.perf_counter(), usage.ru_minflt))
    seconds = np.diff([m[0] for m in marks]).tolist()
    faults = np.diff([m[1] for m in marks]).tolist()
    print(json.dumps({"seconds": seconds, "faults": faults}))


def run_child(args, environ, strace=False):
    command = [
        sys.executable,
        __file__,
        "--child",
        "--n-instances",
        str(args.n_instances),
        "--population-size",
        str(args.population_size),
        "--generations",
        str(args.generations),
        "--seed",
        str(args.seed),
    ]
    log = None
    if strace:
        log = tempfile.NamedTemporaryFile(suffix=".strace", delete=False).name
        command = [
            "strace",
            "-f",
            "-e",
            "trace=mmap,munmap,write",
            "-s",
            "40",
            "-o",
            log,
            *command,
        ]
    out = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **environ},
        cwd=os.getcwd(),
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if log is not None:
        result["mmaps"], result["mapped"] = _mmaps_per_generation(log)
        os.unlink(log)
    return result


MMAP = re.compile(
    r"mmap\(NULL, (\d+), PROT_READ\|PROT_WRITE, MAP_PRIVATE\|MAP_ANONYMOUS"
)
MARK = re.compile(r'write\(\d+, "cscf-generation (\d+)"')


def _mmaps_per_generation(log):
    """Anonymous mmap calls of at least LARGE bytes between the markers."""
    counts, sizes, current = {}, {}, None
    with open(log) as lines:
        for line in lines:
            mark = MARK.search(line)
            if mark:
                current = int(mark.group(1))
                counts[current], sizes[current] = 0, 0
                continue
            found = MMAP.search(line)
            if found and current is not None and int(found.group(1)) >= LARGE:
                counts[current] += 1
                sizes[current] += int(found.group(1))
    last = max(counts)  # after the last marker: the end of the run
    generations = sorted(g for g in counts if g != last)
    return [counts[g] for g in generations], [sizes[g] for g in generations]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-instances", type=int, default=64)
    parser.add_argument("--population-size", type=int, default=500)
    parser.add_argument("--generations", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--strace", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.child:
        child(args)
        return
    environments = {"default": {}, "Dask's": DASK_ENVIRON}
    print(
        f"Adult, the main job's model, one block of {args.n_instances} rows, "
        f"population {args.population_size}, {args.generations} generations, "
        f"refinement off, one core; medians over generations {SKIP + 1}.."
        f"{args.generations}, {args.repeats} interleaved runs per environment."
    )
    runs = {name: [] for name in environments}
    for _ in range(args.repeats):
        for name, environ in environments.items():
            runs[name].append(run_child(args, environ))
    traced = {}
    if args.strace:
        if shutil.which("strace") is None:
            raise SystemExit("--strace needs strace (apt-get install strace).")
        for name, environ in environments.items():
            traced[name] = run_child(args, environ, strace=True)
    print()
    header = (
        f"{'environment':<12} {'mmaps >= 128 KiB':>16} {'MiB mapped':>11} "
        f"{'minor faults':>13} {'ms / generation':>16}"
    )
    print(header)
    print("-" * len(header))
    medians = {}
    for name in environments:
        seconds = np.median([r["seconds"][SKIP:] for r in runs[name]], axis=1)
        faults = np.median([r["faults"][SKIP:] for r in runs[name]])
        medians[name] = np.median(seconds)
        if name in traced:
            mmaps = f"{np.median(traced[name]['mmaps'][SKIP:]):.0f}"
            mapped = f"{np.median(traced[name]['mapped'][SKIP:]) / 2**20:.1f}"
        else:
            mmaps = mapped = "-"
        print(
            f"{name:<12} {mmaps:>16} {mapped:>11} {faults:>13.0f} "
            f"{1000 * medians[name]:>16.1f}"
        )
    ratios = [
        np.median(d["seconds"][SKIP:]) / np.median(a["seconds"][SKIP:])
        for a, d in zip(runs["default"], runs["Dask's"])
    ]
    print()
    print(
        "Dask's environment / the default, time per generation (median of the "
        f"paired runs): {np.median(ratios):.3f} "
        f"({', '.join(f'{r:.3f}' for r in ratios)})"
    )


if __name__ == "__main__":
    main()

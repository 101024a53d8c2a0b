"""Latency: what a row costs alone and in small blocks, old and new code alternating.

For each problem (the main job's Adult model, its German Credit model, the
paper's own Adult network when ``--reference-dir`` holds it) and each number
of rows per ``explain`` call (``--sizes``: one row per call, then blocks of
5, 16 and 64 rows), the explainer's default settings explain the problem's
rejected test rows on one core (``n_jobs=1``, one BLAS thread). Printed per
problem, rows per call and code: CPU seconds per row (``time.process_time``
around ``explain`` only: no training, no fit), the model calls and states
(asked, and sent to the model) per row from the details, the share of the
CPU time in the model, and the mean least cost.

With ``--old PATH`` (a checkout of the code to compare with), each problem
is measured by the old and the new code in turn, ``--repeats`` times, in
separate processes started one after the other, so that both see the same
load; the figures are the medians of the repeats.

    python benchmarks/bench_latency.py [--old ../base] [--sizes 1 5 16 64]

Targets (issue 35, quiet 2-core machine, ``OMP_NUM_THREADS=1``): the main
job's Adult model at most 0.5 CPU s and 25 model calls per row one row per
call, and 0.3 s per row in 16-row blocks; the paper's network at most 0.6 s
per row five rows per call.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_reference import DEFAULT_REFERENCE  # noqa: E402

PROBLEMS = ("adult", "german", "network")
# rows explained per problem: enough for every block size asked for
ROWS = {1: 5, 5: 5, 16: 16, 64: 64}


def measure(problem_name, sizes, reference_dir):
    """Run in a child: ``{size: figures}`` of one problem with this code."""
    from bench_consistency import problem
    from threadpoolctl import threadpool_limits

    from sklearn_cscf import SequentialCounterfactualExplainer

    n_rows = max(ROWS.get(size, size) for size in sizes)
    estimator, actions, graph, X_fit, rows = problem(
        problem_name, n_rows, Path(reference_dir)
    )
    out = {}
    with threadpool_limits(limits=1):
        explainer = SequentialCounterfactualExplainer(
            estimator, actions=actions, feature_graph=graph, random_state=0, n_jobs=1
        ).fit(X_fit)
        for size in sizes:
            chosen = rows.iloc[: ROWS.get(size, size)]
            explainer.set_params(batch_size=size)
            frames, details, cpu = [], [], 0.0
            for start in range(0, len(chosen), size):
                part = chosen.iloc[start : start + size]
                before = time.process_time()
                frame, detail = explainer.explain(part, return_details=True)
                cpu += time.process_time() - before
                frames.append(frame)
                details.append(detail)
            import pandas as pd

            frame, detail = pd.concat(frames), pd.concat(details)
            searched = detail[detail["status"] != "already_target"]
            n = max(len(searched), 1)
            ok = frame[frame["status"] == "ok"]
            out[size] = {
                "rows": int(len(searched)),
                "cpu": cpu / n,
                "calls": float(searched["n_model_calls"].mean()),
                "asked": float(searched["n_evaluated"].mean()),
                "sent": float(searched["n_model_rows"].mean()),
                "model share": float(searched["model_seconds"].sum() / max(cpu, 1e-9)),
                "least": float(ok.groupby("instance")["sequence_cost"].min().mean()),
            }
    return out


def run_child(tree, problem_name, sizes, reference_dir):
    """The figures of ``problem_name`` measured by the code of ``tree``."""
    environ = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(tree))
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        problem_name,
        "--sizes",
        *map(str, sizes),
        "--reference-dir",
        str(reference_dir),
    ]
    done = subprocess.run(
        command, env=environ, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{tree} on {problem_name} failed:\n{done.stderr[-3000:]}")
    return {int(k): v for k, v in json.loads(done.stdout.splitlines()[-1]).items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", choices=PROBLEMS, default=PROBLEMS)
    parser.add_argument("--sizes", nargs="+", type=int, default=[1, 5, 16, 64])
    parser.add_argument("--old", type=Path, default=None, help="old code's checkout")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--reference-dir", type=Path, default=DEFAULT_REFERENCE)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(measure(args.child, args.sizes, args.reference_dir)))
        return
    trees = [("new", ROOT)] + ([("old", args.old.resolve())] if args.old else [])
    print(
        "CPU seconds per row (explain only, one core, one BLAS thread), the "
        "explainer's defaults; medians of "
        f"{args.repeats} run(s), old and new in turn"
    )
    header = (
        f"{'problem':8} {'rows/call':>9} {'code':>4} {'CPU s/row':>9} "
        f"{'calls/row':>9} {'asked/row':>9} {'sent/row':>8} {'model':>6} "
        f"{'least cost':>10}"
    )
    print(header)
    print("-" * len(header))
    for name in args.problems:
        if (
            name == "network"
            and not (args.reference_dir / "adult.features.json").exists()
        ):
            print(f"{name:8} skipped: no reference files in {args.reference_dir}")
            continue
        runs = {label: [] for label, _ in trees}
        for _ in range(args.repeats):
            for label, tree in trees:
                runs[label].append(
                    run_child(tree, name, args.sizes, args.reference_dir)
                )
        for size in args.sizes:
            for label, _ in trees:
                figures = {
                    key: float(np.median([run[size][key] for run in runs[label]]))
                    for key in runs[label][0][size]
                }
                print(
                    f"{name:8} {size:>9} {label:>4} {figures['cpu']:>9.3f} "
                    f"{figures['calls']:>9.1f} {figures['asked']:>9.0f} "
                    f"{figures['sent']:>8.0f} {figures['model share']:>6.0%} "
                    f"{figures['least']:>10.4f}"
                )


if __name__ == "__main__":
    main()

"""Frames identical: save what the explainer answers, then compare byte for byte.

A refactor must not change an answer. This script explains a fixed set of
problems and writes, for each, the frame, the states and the details (less
the seconds, which vary) as CSV files; run it again on the changed code with
``--compare`` and it prints which files differ, where, and exits 1.

The problems (``--problems``; all by default):

- ``main``: the main job's Adult model and 5 rejected test rows, the paper's
  actions and graph, the default settings (``python -m sklearn_cscf``);
- ``german0``, ``german1``: the main job's German Credit model, 8 rejected
  test rows, seeds 0 and 1, the whole front;
- ``network``: the paper's own Adult network, its first 8 rows
  (``--reference-dir``, default ``../shared/reference``; skipped when absent);
- ``examples``: the example scripts CI runs, at their small CI budget, their
  CSV files.

Typical use, before and after a change::

    python benchmarks/bench_frames.py --save /tmp/frames_before
    # ... change the code ...
    python benchmarks/bench_frames.py --compare /tmp/frames_before

``--n-jobs`` and ``--batch-size`` change how rows are scheduled, never what
they answer: comparing a run with ``--n-jobs 2 --batch-size 3`` against one
with the defaults checks that too.
"""

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_reference import DEFAULT_REFERENCE  # noqa: E402

PROBLEMS = ("main", "german0", "german1", "network", "examples")
# columns of the details that measure time, not answers
TIMING = ("model_seconds", "total_seconds", "cpu_seconds")
EXAMPLES = {  # script: the CSV files it writes
    "quickstart.py": ["explanations.csv"],
    "adult_cscf_vs_scf.py": ["adult_cscf_vs_scf.csv"],
    "german_credit.py": ["german_explanations.csv"],
    "your_own_data.py": ["your_own_data_explanations.csv"],
}
SMALL = ["--n-instances", "2", "--population-size", "60", "--generations", "10"]


def explain(name, reference_dir, n_jobs, batch_size):
    """``(frame, states, details)`` of a problem."""
    from bench_consistency import problem

    from sklearn_cscf import SequentialCounterfactualExplainer

    kind, seed = {
        "main": ("adult", 0),
        "german0": ("german", 0),
        "german1": ("german", 1),
        "network": ("network", 0),
    }[name]
    n_rows = 5 if kind == "adult" else 8
    estimator, actions, graph, X_fit, rows = problem(kind, n_rows, reference_dir)
    whole_front = {} if kind == "adult" else {"max_plans": None, "all_orders": True}
    explainer = SequentialCounterfactualExplainer(
        estimator,
        actions=actions,
        feature_graph=graph,
        random_state=seed,
        n_jobs=n_jobs,
        batch_size=batch_size,
        **whole_front,
    ).fit(X_fit)
    return explainer.explain(rows, return_states=True, return_details=True)


def save_problem(name, out, reference_dir, n_jobs, batch_size):
    frame, states, details = explain(name, reference_dir, n_jobs, batch_size)
    details = details.drop(columns=[c for c in TIMING if c in details.columns])
    for part, table in (("frame", frame), ("states", states), ("details", details)):
        table.to_csv(out / f"{name}.{part}.csv", index=False)


def save_examples(out):
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    with tempfile.TemporaryDirectory() as work:
        for script, files in EXAMPLES.items():
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "examples" / script),
                    *SMALL,
                    "--seed",
                    "0",
                ],
                cwd=work,
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            for file in files:
                (out / f"examples.{file}").write_bytes((Path(work) / file).read_bytes())


def compare(before, after):
    """Names of the files that differ (or exist on one side only)."""
    names = sorted(
        {p.name for p in before.glob("*.csv")} | {p.name for p in after.glob("*.csv")}
    )
    differ = []
    for name in names:
        a, b = before / name, after / name
        if not (a.exists() and b.exists()):
            print(f"  {name}: only {'before' if a.exists() else 'after'}")
            differ.append(name)
        elif not filecmp.cmp(a, b, shallow=False):
            differ.append(name)
            print(f"  {name}: differs")
            describe_difference(a, b)
    return differ


def describe_difference(a, b):
    import pandas as pd

    left, right = pd.read_csv(a), pd.read_csv(b)
    if list(left.columns) != list(right.columns):
        print(f"    columns: {sorted(set(left.columns) ^ set(right.columns))} differ")
    if left.shape != right.shape:
        print(f"    shape {left.shape} -> {right.shape}")
        return
    common = [c for c in left.columns if c in right.columns]
    changed = [c for c in common if not left[c].equals(right[c])]
    print(f"    columns with other values: {changed}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--save", type=Path, help="write the files here")
    what.add_argument("--compare", type=Path, help="compare with the files here")
    parser.add_argument("--problems", nargs="+", choices=PROBLEMS, default=PROBLEMS)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--reference-dir", type=Path, default=DEFAULT_REFERENCE)
    args = parser.parse_args(argv)
    out = args.save or Path(tempfile.mkdtemp(prefix="frames_"))
    out.mkdir(parents=True, exist_ok=True)
    for name in args.problems:
        if name == "network" and not args.reference_dir.exists():
            print(f"{name}: skipped, no {args.reference_dir}")
            continue
        print(f"{name} ...", flush=True)
        if name == "examples":
            save_examples(out)
        else:
            save_problem(name, out, args.reference_dir, args.n_jobs, args.batch_size)
    if args.save:
        print(f"saved in {out}")
        return 0
    print(f"compared {args.compare} (before) with {out} (after):")
    differ = compare(args.compare, out)
    print("identical" if not differ else f"{len(differ)} file(s) differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

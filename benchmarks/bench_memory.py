"""Memory over the number of rows: the search's working memory stays flat.

Explains N rejected rows of the synthetic credit problem (``make_credit_
applicants``, six actions, a logistic-regression pipeline) with a small
search budget on one core, for each N of ``--n-rows``, each in a fresh
process. Prints the peak memory traced during ``explain`` (Python objects and
NumPy buffers, ``tracemalloc``), the size of what it returns (the frame and
the details), and the working memory of the search: the peak before the
finished rows are joined into one frame, minus those finished rows' output.
The search's memory must not grow with N; the output, one row per step, of
course does, and joining it into one frame briefly holds it twice.

    python benchmarks/bench_memory.py [--n-rows 500 5000]
"""

import argparse
import json
import subprocess
import sys
import time
import tracemalloc

import numpy as np
import pandas as pd
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_cscf import SequentialCounterfactualExplainer, _explainer
from sklearn_cscf.datasets import (
    credit_actions,
    credit_feature_graph,
    make_credit_applicants,
)

MB = 2**20


def measure(n_rows, population, generations, seed):
    """Peak traced memory of one explain call, in a fresh process."""
    applicants = make_credit_applicants(max(4 * n_rows, 2000), random_state=seed)
    X, y = applicants.data, applicants.target
    model = make_pipeline(
        make_column_transformer(
            (
                OneHotEncoder(handle_unknown="ignore"),
                make_column_selector(dtype_include="category"),
            ),
            remainder=StandardScaler(),
        ),
        LogisticRegression(max_iter=1000),
    ).fit(X, y)
    rows = X[model.predict(X) == 0].iloc[:n_rows]
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=credit_actions(),
        feature_graph=credit_feature_graph(),
        population_size=population,
        n_generations=generations,
        n_jobs=1,
        random_state=seed,
    ).fit(X)
    explainer.explain(rows.iloc[:2])  # warm up: imports and caches
    # the search's phase ends where the finished pieces are joined into one
    # frame: its peak, and the size of the pieces kept until then
    phase = {}
    join = _explainer.assemble

    def recording_assemble(pieces, *args, **kwargs):
        phase["search peak"] = tracemalloc.get_traced_memory()[1]
        phase["pieces"] = sum(_piece_bytes(piece) for piece in pieces)
        tracemalloc.reset_peak()
        return join(pieces, *args, **kwargs)

    _explainer.assemble = recording_assemble
    tracemalloc.start()
    start = time.perf_counter()
    frame, details = explainer.explain(rows, return_details=True)
    seconds = time.perf_counter() - start
    _, join_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    _explainer.assemble = join
    output = frame.memory_usage(deep=True).sum() + details.memory_usage(deep=True).sum()
    return {
        "rows": len(rows),
        "frame rows": len(frame),
        "peak MB": max(phase["search peak"], join_peak) / MB,
        "output MB": output / MB,
        "pieces MB": phase["pieces"] / MB,
        "search MB": (phase["search peak"] - phase["pieces"]) / MB,
        "seconds": seconds,
    }


def _piece_bytes(piece):
    """Bytes of a finished piece: its frames and arrays."""
    frames = [piece.frame, piece.details, piece.states]
    size = sum(f.memory_usage(deep=True).sum() for f in frames if f is not None)
    arrays = [piece.frame_rows, piece.states_rows, piece.finals, piece.positions]
    return size + sum(a.nbytes for a in arrays if a is not None)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-rows", type=int, nargs="+", default=[500, 5000])
    parser.add_argument("--population-size", type=int, default=40)
    parser.add_argument("--generations", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.child is not None:
        print(
            json.dumps(
                measure(args.child, args.population_size, args.generations, args.seed)
            )
        )
        return
    print(
        f"Synthetic credit problem, population {args.population_size}, "
        f"{args.generations} generations, n_jobs=1, batch_size 64; each N in a "
        "fresh process."
    )
    results = []
    for n in args.n_rows:
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                str(n),
                "--population-size",
                str(args.population_size),
                "--generations",
                str(args.generations),
                "--seed",
                str(args.seed),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    table = pd.DataFrame(results)
    print()
    print(table.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    growth = table["search MB"].iloc[-1] / table["search MB"].iloc[0]
    print()
    print(
        "peak: the whole call's; pieces: the finished rows' output kept until "
        "they are joined into one frame (about the size of the output); search: "
        "the peak before the join minus the pieces, the working memory of the "
        "search."
    )
    print(
        f"Search memory from {table['rows'].iloc[0]} to {table['rows'].iloc[-1]} "
        f"rows: x{growth:.2f} ({'flat' if growth < 1.5 else 'GROWS'})."
    )


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()

"""Memory over the number of rows: the search's working memory stays flat.

Explains N rejected rows of the synthetic credit problem (``make_credit_
applicants``, six actions, a logistic-regression pipeline) with a small
search budget on one core, for each N of ``--n-rows``, each in a fresh
process. Prints the peak memory traced during ``explain`` (Python objects and
NumPy buffers, ``tracemalloc``), the size of what it returns (the frame and
the details), and the call's phases: the setup (reading X, asking the model
about every row), the search's working memory (the most any block of rows,
with the making of its output, takes above what was held when it started),
the finished output kept until the end, and joining it into one frame. The
search's memory must not grow with N; the input and the output, one row per
step, of course do.

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

from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf import _driver as _explainer  # the run driver: blocks, assembly
from sklearn_cscf.datasets import (
    credit_actions,
    credit_feature_graph,
    make_credit_applicants,
)

MB = 2**20


def usage_model(X, y):
    """The README's Usage model, fitted: one-hot categories, scaled numbers,
    a logistic regression."""
    return make_pipeline(
        make_column_transformer(
            (
                OneHotEncoder(handle_unknown="ignore"),
                make_column_selector(dtype_include="category"),
            ),
            remainder=StandardScaler(),
        ),
        LogisticRegression(max_iter=1000),
    ).fit(X, y)


def measure(n_rows, population, generations, seed):
    """Peak traced memory of one explain call, in a fresh process."""
    applicants = make_credit_applicants(max(4 * n_rows, 2000), random_state=seed)
    X, y = applicants.data, applicants.target
    model = usage_model(X, y)
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
    # Windows of the call: from the start to the first block (reading X and
    # asking the model which rows need recourse), then each block with the
    # making of its piece of output, then the join of the pieces into one
    # frame. Per window: what it held at its start, and its peak above that.
    windows = []

    def close_window():
        current, peak = tracemalloc.get_traced_memory()
        if windows:
            windows[-1]["peak"] = peak
        tracemalloc.reset_peak()
        windows.append({"start": current})

    block, join = _explainer._explain_block, _explainer.assemble
    pieces_bytes = []

    def recording_block(*args, **kwargs):
        close_window()
        return block(*args, **kwargs)

    def recording_assemble(pieces, *args, **kwargs):
        close_window()
        pieces_bytes.append(sum(_piece_bytes(piece) for piece in pieces))
        return join(pieces, *args, **kwargs)

    _explainer._explain_block, _explainer.assemble = recording_block, recording_assemble
    tracemalloc.start()
    windows.append({"start": 0})
    start = time.perf_counter()
    frame, details = explainer.explain(rows, return_details=True)
    seconds = time.perf_counter() - start
    windows[-1]["peak"] = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    _explainer._explain_block, _explainer.assemble = block, join
    output = frame.memory_usage(deep=True).sum() + details.memory_usage(deep=True).sum()
    blocks = windows[1:-1]
    return {
        "rows": len(rows),
        "blocks": len(blocks),
        "frame rows": len(frame),
        "peak MB": max(w["peak"] for w in windows) / MB,
        "output MB": output / MB,
        "setup MB": windows[0]["peak"] / MB,
        "search MB": max(w["peak"] - w["start"] for w in blocks) / MB,
        "pieces MB": pieces_bytes[0] / MB,
        "join MB": (windows[-1]["peak"] - windows[-1]["start"]) / MB,
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
        "peak: the whole call's; setup: its peak before the first block (X read, "
        "the model asked about every row); search: the most a block of the "
        "search (with the making of its output) takes above what was held when "
        "it started; pieces: the finished output kept until the join; join: "
        "what joining the pieces into one frame takes above them."
    )
    print(
        f"Search memory per block from {table['rows'].iloc[0]} to "
        f"{table['rows'].iloc[-1]} rows: x{growth:.2f} "
        f"({'flat' if growth < 1.25 else 'GROWS'})."
    )


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()

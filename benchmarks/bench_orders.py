"""Orders left unpolished: reported sequences dearer than another order of their
own steps.

For every reported sequence of two to four steps, each other order of the same
steps (each step setting the same value) is replayed with
:func:`sklearn_cscf.replay`. ``--problem network`` (the default): the paper's
own Adult network and its 100 instances at the paper's budget
(``bench_reference.py``'s assets, ``--reference-dir``); ``german`` and
``adult``: the main job's models on 64 rejected test rows at the default
budget (``bench_consistency.py``'s problems). The script
counts the other orders that replay valid (every constraint holds and the
model accepts the final state) and are strictly cheaper (by more than 1e-9
relative): none should be, since such an order reaches the same final state at
a lower cost and so dominates the reported one.

``--whole-front`` counts over every Pareto-optimal sequence
(``max_plans=None, all_orders=True, all_values=True``, as ``docs/paper.md``
does); by default
over the explainer's default output.

    python benchmarks/bench_orders.py [--problem network] [--seed 0] [--whole-front]
"""

import argparse
from itertools import permutations
from pathlib import Path

import numpy as np
import pandas as pd
from bench_consistency import DEFAULT_ROWS, problem
from bench_reference import DEFAULT_REFERENCE

from sklearn_cscf import SequentialCounterfactualExplainer, replay

CHECKS = ["in_space", "in_direction", "precondition", "postcondition"]
TOLERANCE = 1e-9


def other_orders(ok):
    """Every other order of each sequence of two to four steps, as frame
    rows under new solution numbers, and what each came from."""
    rows, origin, solution = [], {}, 0
    for (instance, reported), steps in ok.groupby(["instance", "solution"]):
        if not 2 <= len(steps) <= 4:
            continue
        for order in list(permutations(range(len(steps))))[1:]:
            other = steps.iloc[list(order)].copy()
            other["step"] = np.arange(1, len(steps) + 1)
            other["solution"] = solution
            origin[(instance, solution)] = (
                reported,
                steps["sequence_cost"].iloc[0],
                " -> ".join(steps["action"]),
                " -> ".join(other["action"]),
            )
            rows.append(other)
            solution += 1
    return (pd.concat(rows) if rows else ok.iloc[:0]), origin


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", choices=sorted(DEFAULT_ROWS), default="network")
    parser.add_argument("--reference-dir", type=Path, default=DEFAULT_REFERENCE)
    parser.add_argument("--n-instances", type=int, help="default: all (64)")
    parser.add_argument("--population-size", type=int, default=500)
    parser.add_argument(
        "--generations",
        type=lambda text: text if text == "auto" else int(text),
        help="default: 150 on the network (the paper's), auto on the others",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--whole-front", action="store_true")
    args = parser.parse_args(argv)
    n_rows = args.n_instances or DEFAULT_ROWS[args.problem]
    estimator, actions, graph, X_fit, instances = problem(
        args.problem, n_rows, args.reference_dir
    )
    generations = args.generations
    if generations is None:
        generations = 150 if args.problem == "network" else "auto"
    whole = {}
    if args.whole_front:
        whole = {"max_plans": None, "all_orders": True, "all_values": True}
    explainer = SequentialCounterfactualExplainer(
        estimator,
        actions=actions,
        feature_graph=graph,
        population_size=args.population_size,
        n_generations=generations,
        n_jobs=args.n_jobs,
        random_state=args.seed,
        **whole,
    ).fit(X_fit)
    frame = explainer.explain(instances)
    ok = frame[frame["status"] == "ok"]
    others, origin = other_orders(ok)
    dearer = []
    if len(others):
        replayed = replay(explainer, instances, others)
        replayed = replayed[replayed["step"] > 0]
        for key, steps in replayed.groupby(["instance", "solution"]):
            valid = steps[CHECKS].all(axis=None) and steps["accepted"].iloc[-1]
            reported, cost, was, now = origin[key]
            other_cost = steps["sequence_cost"].iloc[-1]
            if valid and other_cost < cost - TOLERANCE * max(1.0, abs(cost)):
                dearer.append((key[0], reported, was, cost, now, other_cost))
    what = "whole front" if args.whole_front else "default output"
    n_sequences = ok.groupby(["instance", "solution"]).ngroups
    print(
        f"{args.problem}, {len(instances)} rows, seed {args.seed}, {what}: "
        f"{n_sequences} sequences, {len(origin)} other orders of their steps "
        f"replayed, {len(dearer)} valid and cheaper than the reported order."
    )
    if dearer:
        columns = ["instance", "solution", "reported", "cost", "other", "its cost"]
        print(pd.DataFrame(dearer, columns=columns).to_string(index=False))


if __name__ == "__main__":
    main()

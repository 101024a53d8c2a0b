"""Quality: the least sequence cost found against the exact optimum.

Random small problems (2 to 4 actions on mixed data: up to two numeric ranges
on a fine grid of 101 values, with and without a direction, an ordered list
with a consequence, a fixed value with a precondition; with and without a
feature graph; a linear and a non-linear black box). An exact solver
enumerates every subset and order of the actions and every combination of
grid values, applies them with the actions' own public definitions (value
spaces, conditions, effects, costs, the graph's Eq. 1-2 discounts; not the
library's simulator) and keeps the cheapest sequence the model accepts. The
explainer runs at each ``--budgets`` (population x generations, a number or
``auto``; default the paper's 500x150 and a small 100x30) with and without
refinement.

Printed: per setting, the share of instances whose least cost is within 1 %
of the optimum (the target: at least 95 % with refinement), the share solved
exactly, and quantiles of the relative gap.

    python benchmarks/bench_quality.py [--n-problems 40] [--n-instances 3]
"""

import argparse
import itertools
import os
import platform
import time

import numpy as np
import pandas as pd
import sklearn
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression

import sklearn_cscf
from sklearn_cscf import Action, FeatureGraph, SequentialCounterfactualExplainer

LEVELS = ["L0", "L1", "L2", "L3"]
STEP = 0.1  # grid of the numeric actions: 0, 0.1, ..., 10 (101 values)
MAX_NUMERIC = 2  # numeric actions per problem: keeps the exact solver exact
TARGET_SHARE = 0.95
WITHIN = 0.01
EXACT = 1e-9
CHUNK = 200_000  # sequences evaluated at once by the exact solver


# ---------------------------------------------------------------------- #
# problems
# ---------------------------------------------------------------------- #
def make_data(rng, n=400):
    X = pd.DataFrame(
        {
            "a": rng.uniform(0, 10, n).round(1),
            "b": rng.uniform(0, 10, n).round(1),
            "c": rng.uniform(0, 10, n).round(1),
            "d": pd.Categorical(rng.choice(LEVELS, n), categories=LEVELS, ordered=True),
            "e": rng.choice(["p", "q", "r"], n),
        }
    )
    return X


def encode(X):
    """Numbers for the black boxes: levels as ranks, e as one-hot."""
    return np.column_stack(
        [
            np.asarray(X["a"], float),
            np.asarray(X["b"], float),
            np.asarray(X["c"], float),
            pd.Categorical(X["d"], categories=LEVELS).codes.astype(float),
            np.asarray(X["e"], object) == "q",
            np.asarray(X["e"], object) == "r",
        ]
    )


class Model:
    """A fitted black box on raw rows (duck-typed)."""

    def __init__(self, inner):
        self.inner = inner
        self.classes_ = inner.classes_

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        return self.inner.predict_proba(encode(X))

    def predict(self, X):
        return self.inner.predict(encode(X))


def make_model(X, rng, kind):
    Z = encode(X)
    if kind == "linear":
        w = rng.uniform(0.3, 1.0, 6) * np.array([1, -1, 1, 1, 1, 1])
        y = (Z @ w - np.quantile(Z @ w, 0.6) > 0).astype(int)
        return Model(LogisticRegression(C=100.0, max_iter=5000).fit(Z, y))
    score = (
        Z[:, 0] * (10 - Z[:, 1]) / 10 + 2 * Z[:, 3] + 3 * Z[:, 5] + Z[:, 2] ** 2 / 10
    )
    y = (score > np.quantile(score, 0.6)).astype(int)
    gbm = HistGradientBoostingClassifier(max_iter=40, max_depth=3, random_state=0)
    return Model(gbm.fit(Z, y))


def action_pool(rng):
    weights = rng.uniform(0.5, 2.0, 5)
    return [
        Action(
            "raise_a",
            "a",
            values=(0.0, 10.0),
            direction="increase",
            step=STEP,
            cost=lambda b, x, w=weights[0]: w * np.abs(x["a"] - b["a"]),
        ),
        Action(
            "lower_b",
            "b",
            values=(0.0, 10.0),
            direction="decrease",
            step=STEP,
            cost=lambda b, x, w=weights[1]: w * np.abs(x["b"] - b["b"]),
            postcondition=lambda b, x: x["b"] >= 0.3 * b["b"],
        ),
        Action(
            "move_c",
            "c",
            values=(0.0, 10.0),
            step=STEP,
            cost=lambda b, x, w=weights[2]: w * np.abs(x["c"] - b["c"]),
        ),
        Action(
            "level_up",
            "d",
            values=list(LEVELS),
            direction="increase",
            cost=lambda b, x, w=weights[3]: w * (_rank(x["d"]) - _rank(b["d"])),
            effects={
                "c": lambda b, x: np.minimum(
                    b["c"] + 0.5 * (_rank(x["d"]) - _rank(b["d"])), 10.0
                )
            },
        ),
        Action(
            "become_r",
            "e",
            values="r",
            cost=lambda b, x, w=weights[4]: 2.0 * w,
            precondition=lambda b: b["e"] != "r",
        ),
    ]


def _rank(labels):
    return pd.Categorical(np.asarray(labels, object), categories=LEVELS).codes.astype(
        float
    )


def make_graph():
    return FeatureGraph(
        [
            ("d", "a", lambda x: 1.0 - 0.15 * _rank(x["d"])),
            ("a", "b", lambda x: np.where(x["a"] >= 7, 0.5, 1.0)),
            ("e", "c", lambda x: np.where(x["e"] == "r", 0.6, 1.0)),
        ]
    )


def make_problem(seed):
    rng = np.random.default_rng(seed)
    X = make_data(rng)
    kind = "linear" if seed % 2 == 0 else "non-linear"
    model = make_model(X, rng, kind)
    pool = action_pool(rng)
    n_actions = int(rng.integers(2, 5))
    numeric = rng.choice(3, size=min(MAX_NUMERIC, n_actions), replace=False)
    others = rng.choice([3, 4], size=n_actions - numeric.size, replace=False)
    chosen = sorted([*numeric.tolist(), *others.tolist()])
    actions = [pool[k] for k in chosen]
    graph = make_graph() if seed % 4 >= 2 else None
    return X, model, kind, actions, graph


# ---------------------------------------------------------------------- #
# the exact solver: every subset, order and grid value, from the definitions
# ---------------------------------------------------------------------- #
def candidate_values(action):
    """Every value the action can set (its grid, list or fixed value)."""
    if isinstance(action.values, tuple):
        low, high = action.values
        return np.round(np.arange(low, high + STEP / 2, STEP), 10)
    if isinstance(action.values, list):
        return np.array(action.values, dtype=object)
    return np.array([action.values], dtype=object)


def allowed(action, before, new):
    """The direction of the action, relative to the value before the step."""
    if action.direction == "any":
        return np.ones(len(new), dtype=bool)
    if isinstance(action.values, list):  # ordered levels: strictly later
        old, moved = _rank(before), _rank(new)
        return moved > old if action.direction == "increase" else moved < old
    old = np.asarray(before, float)
    if action.direction == "increase":
        return new >= old - 1e-12
    return new <= old + 1e-12


def exact_least_cost(row, actions, graph, model, target=1):
    """The cheapest valid sequence's cost (inf if none)."""
    best = np.inf
    for length in range(1, len(actions) + 1):
        for order in itertools.permutations(actions, length):
            grids = [candidate_values(a) for a in order]
            combos = itertools.product(*[range(len(g)) for g in grids])
            total = int(np.prod([len(g) for g in grids]))
            for start in range(0, total, CHUNK):
                index = np.array(
                    list(itertools.islice(combos, CHUNK)), dtype=np.intp
                ).reshape(-1, length)
                best = min(
                    best, _chunk_cost(row, order, grids, index, graph, model, target)
                )
    return best


def _chunk_cost(row, order, grids, index, graph, model, target):
    n = index.shape[0]
    state = {
        name: np.full(n, row[name], dtype=object if name in ("d", "e") else float)
        for name in row.index
    }
    valid = np.ones(n, dtype=bool)
    cost = np.zeros(n)
    for position, action in enumerate(order):
        new = grids[position][index[:, position]]
        before = {k: v.copy() for k, v in state.items()}
        valid &= allowed(action, before[action.feature], new)
        if action.precondition is not None:
            valid &= np.asarray(action.precondition(before), dtype=bool)
        after = {k: v.copy() for k, v in before.items()}
        after[action.feature] = new.astype(after[action.feature].dtype)
        for feature, effect in (action.effects or {}).items():
            after[feature] = np.asarray(
                effect(before, after), dtype=after[feature].dtype
            )
        if action.postcondition is not None:
            valid &= np.asarray(action.postcondition(before, after), dtype=bool)
        effort = np.asarray(action.cost(before, after), dtype=float)
        discount = (
            graph.discount(action.affected_features, before)
            if graph is not None
            else 1.0
        )
        cost += effort * discount
        state = after
    if not valid.any():
        return np.inf
    final = pd.DataFrame({k: v[valid] for k, v in state.items()})
    final["d"] = pd.Categorical(final["d"], categories=LEVELS, ordered=True)
    accepted = model.predict(final) == target
    return float(cost[valid][accepted].min()) if accepted.any() else np.inf


# ---------------------------------------------------------------------- #
def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-problems", type=int, default=40)
    parser.add_argument("--n-instances", type=int, default=3)
    parser.add_argument(
        "--budgets",
        nargs="+",
        default=["500x150", "100x30"],
        help="population x generations of each run (default: 500x150 100x30)",
    )
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    print(
        f"sklearn-cscf {sklearn_cscf.__version__}, scikit-learn {sklearn.__version__}, "
        f"Python {platform.python_version()}, {os.cpu_count()} CPU(s); "
        f"{args.n_problems} problems x {args.n_instances} rejected rows; budgets "
        f"(population x generations) {', '.join(args.budgets)}"
    )
    budgets = [
        tuple(v if v == "auto" else int(v) for v in b.split("x")) for b in args.budgets
    ]
    methods = [(b, refine) for b in budgets for refine in (False, True)]
    rows = []
    start = time.perf_counter()
    for p in range(args.n_problems):
        seed = args.seed + p
        X, model, kind, actions, graph = make_problem(seed)
        rejected = X[model.predict(X) == 0].iloc[: args.n_instances]
        found = {}
        for (population, generations), refine in methods:
            explainer = SequentialCounterfactualExplainer(
                model,
                actions=actions,
                feature_graph=graph,
                population_size=population,
                n_generations=generations,
                refine=refine,
                n_jobs=args.n_jobs,
                random_state=seed,
            ).fit(X)
            frame = explainer.explain(rejected)
            ok = frame[frame["status"] == "ok"]
            found[_name(population, generations, refine)] = ok.groupby("instance")[
                "sequence_cost"
            ].min()
        for label, row in rejected.iterrows():
            optimum = exact_least_cost(row, actions, graph, model)
            rows.append(
                {
                    "problem": p,
                    "model": kind,
                    "graph": graph is not None,
                    "n_actions": len(actions),
                    "optimum": optimum,
                    **{name: costs.get(label, np.inf) for name, costs in found.items()},
                }
            )
    results = pd.DataFrame(rows)
    feasible = np.isfinite(results["optimum"])
    print(
        f"{len(results)} instances, {int(feasible.sum())} with a valid sequence "
        f"({time.perf_counter() - start:.0f} s)."
    )
    results = results[feasible]
    print()
    header = (
        f"{'setting':<16} {'n':>4} {'method':<24} {'within 1 %':>10} {'exact':>6} "
        f"{'median gap':>10} {'95th pct gap':>12} {'max gap':>8}"
    )
    print(header)
    print("-" * len(header))
    groups = [("all", results)]
    groups += [(f"{k} model", g) for k, g in results.groupby("model")]
    groups += [
        ("with graph" if k else "without graph", g) for k, g in results.groupby("graph")
    ]
    for name, group in groups:
        for method in [_name(*budget, refine) for budget, refine in methods]:
            gap = group[method] / group["optimum"] - 1.0
            gap = gap.where(np.isfinite(gap), np.inf)
            print(
                f"{name:<16} {len(group):>4} {method:<24} "
                f"{(gap <= WITHIN).mean():>10.1%} {(gap <= EXACT).mean():>6.1%} "
                f"{gap.median():>10.2%} {gap.quantile(0.95):>12.2%} {gap.max():>8.1%}"
            )
    print()
    for population, generations in budgets:
        name = _name(population, generations, True)
        share = (results[name] / results["optimum"] - 1.0 <= WITHIN).mean()
        if (population, generations) != (500, 150):
            print(
                f"{name}: {share:.1%} within 1 % (no target below the paper's budget)."
            )
            continue
        print(
            f"Target (the paper's budget): least cost within 1 % of the optimum on "
            f">= {TARGET_SHARE:.0%} of instances ({name}): {share:.1%} -> "
            f"{'MET' if share >= TARGET_SHARE else 'NOT MET'}."
        )


def _name(population, generations, refine):
    return f"{population}x{generations} {'refined' if refine else 'search only'}"


if __name__ == "__main__":
    main()

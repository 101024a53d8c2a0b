"""An exact reference for small problems: the least sequence cost of each row
by enumeration, against the default search's.

For each row, every plan of up to ``--max-steps`` (3) steps is enumerated, in
every order. Each numeric step's value is tried on a fine grid (its least
change, then offsets of ``2**-k`` of its key range on either side, ``k`` =
1 .. ``--levels``), each list value at every reachable value; every
combination is simulated and judged by the engine itself (the same costs,
constraints and model decisions as the search). The cheapest valid
combinations of each plan are then refined by zooming in on all its steps at
once (a pattern search whose step halves from ``2**-3`` down to
``2**-(levels + 10)`` of the key range): a change spread over several
steps is found to the grid's resolution, not only a corner of the decision
boundary. The least cost found is the reference; the search can beat it by
the grid's resolution, or by a plan of more than ``--max-steps`` steps.

Problems:

- ``german``: the main job's German Credit model (``python -m sklearn_cscf``)
  and the paper's German actions, ``--n-instances`` rejected test rows
  drawn as ``bench_consistency.py`` draws them (the same rows, by label, for
  the same count; not a prefix: 16 rows are not the first 16 of 64);
- ``synthetic``: three numeric features, a logistic model on their sum and
  three actions of squared relative cost, plus one of fixed effort (small
  problems where the cheapest plan spreads a change over several steps).

Printed per problem: rows, the share of rows on which the default search
(``--seeds``, the whole front) is within 1 % of the reference, the worst gap
and the seconds per row of the enumeration (CPU and wall). ``--save DIR``
writes ``DIR/exact_<problem>.csv``: per row (by instance label) the reference
(``exact``; inf: no plan of up to ``--max-steps`` steps), its plan's actions
in order (``exact_plan``), the enumeration's CPU and wall seconds and each
seed's least cost (``seed_<s>``), which ``bench_consistency.py --exact``
reads. The file is written after each row; ``--resume`` keeps the rows it
already holds and enumerates the others.

    python benchmarks/bench_exact.py [--problems german synthetic]
        [--n-instances 16] [--seeds 0 1 2] [--save DIR [--resume]]
"""

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

import sklearn_cscf._driver as driver
from sklearn_cscf import Action, SequentialCounterfactualExplainer
from sklearn_cscf._demo import SCENARIOS, pick_rejected, train
from sklearn_cscf._engine._evaluator import Evaluator
from sklearn_cscf._engine._genotypes import genotypes
from sklearn_cscf.datasets._callables import FixedEffort, RelativeChangeSquared

sys.path.insert(0, str(Path(__file__).resolve().parent))

# states judged at once
CHUNK = 200_000
# the cheapest valid combinations of each plan that are refined
REFINED = 3
# the zoom's first step, as a power of 2 of the key range (halving after)
ZOOM_FROM = 3
# what --save keeps of each row as it is enumerated
ROW_COLUMNS = ["exact", "exact_plan", "cpu_s", "wall_s"]


def german(n_rows):
    scenario = SCENARIOS["german"]
    model, (X_train, X_test, _, _) = train(scenario.load(), 0)
    rows = pick_rejected(X_test, model.predict(X_test), n_rows, 0)
    return model, scenario.actions(), X_train, rows


def synthetic(n_rows):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        rng.uniform(10, 100, size=(600, 3)).round(), columns=["a", "b", "c"]
    )
    X["flag"] = pd.Categorical(rng.choice(["no", "yes"], 600), ["no", "yes"])
    score = X["a"] / 40 + X["b"] / 55 + X["c"] / 70 + (X["flag"] == "yes") * 1.5
    y = (score > score.median()).astype(int)
    model = LogisticRegression(max_iter=1000).fit(pd.get_dummies(X, dtype=float), y)

    class Model:
        classes_ = np.array([0, 1])

        def __sklearn_is_fitted__(self):
            return True

        def predict_proba(self, Z):
            Z = pd.get_dummies(Z, dtype=float).reindex(
                columns=pd.get_dummies(X, dtype=float).columns, fill_value=0.0
            )
            return model.predict_proba(Z)

        def predict(self, Z):
            return self.predict_proba(Z).argmax(axis=1)

    actions = [
        Action(
            f"raise_{name}",
            name,
            values=(0, 300),
            direction="increase",
            cost=RelativeChangeSquared(name),
        )
        for name in ("a", "b", "c")
    ] + [Action("set_flag", "flag", values="yes", cost=FixedEffort(1.0))]
    wrapped = Model()
    rows = X[wrapped.predict(X) == 0].head(n_rows)
    return wrapped, actions, X, rows


PROBLEMS = {"german": german, "synthetic": synthetic}


def captured_evaluator(explainer, row):
    """The engine's :class:`Evaluator` of one row (its problem as ``explain``
    builds it): what judges its genotypes."""
    seen = {}
    original = driver.explain_block

    def capture(problem, x0, targets, seeds, errors="warn"):
        seen.update(problem=problem, x0=x0, targets=targets, seeds=seeds)
        return original(problem, x0, targets, seeds, errors)

    driver.explain_block = capture
    try:
        explainer.set_params(n_generations=1, population_size=2, refine=False)
        explainer.explain(row)
    finally:
        driver.explain_block = original
    if not seen:
        return None
    return Evaluator(seen["problem"], seen["x0"], seen["targets"])


def value_grid(space, current, levels):
    """Value keys tried for a step from each ``current`` value: ``(n, width)``,
    NaN padded."""
    n = current.shape[0]
    least = space.least_change_key(current)
    scan = getattr(space, "values", None) is not None
    if scan:  # a list: every reachable value
        return np.asarray(space.scan_keys(current), dtype=float)
    offsets = 2.0 ** -np.arange(1, levels + 1)
    sides = {"increase": [1], "decrease": [-1]}.get(space.direction, [1, -1])
    columns = [least]
    for side in sides:
        for offset in offsets:
            columns.append(np.clip(least + side * offset, 0, 1))
    columns.append(np.ones(n) if 1 in sides else np.zeros(n))
    if -1 in sides:
        columns.append(np.zeros(n))
    return np.column_stack(columns)


def plan_genotypes(block, plan, levels):
    """Every grid combination of ``plan`` (action indices): genotypes."""
    problem = block.problem
    n_actions = problem.n_actions
    order = np.full((1, n_actions), -1)
    order[0, : len(plan)] = plan
    keys = genotypes(order, np.full((1, n_actions), 0.5), n_actions)
    for position, a in enumerate(plan):
        paths = block.simulate(np.zeros(keys.shape[0], np.intp), keys, record=True)
        compiled = problem.actions[a]
        current = paths.states[:, position, compiled.feature]
        grid = value_grid(compiled.space, current, levels)
        keep = np.isfinite(grid)
        rows = np.repeat(np.arange(keys.shape[0]), keep.sum(axis=1))
        keys = keys[rows].copy()
        keys[:, n_actions + a] = grid[keep]
    return keys


def judged_costs(block, keys):
    cost = block.problem.slices["sequence_cost"].start
    out = np.empty(keys.shape[0])
    for start in range(0, keys.shape[0], CHUNK):
        part = keys[start : start + CHUNK]
        judged = block.judge(np.zeros(part.shape[0], np.intp), part)
        out[start : start + CHUNK] = np.where(
            judged.feasible, judged.F[:, cost], np.inf
        )
    return out


def zoomed(block, plan, keys, cost, levels):
    """The cheapest combinations refined by zooming in: each step's key
    tried at ``-2 .. 2`` times ``delta`` from the best valid combination so
    far, all steps at once, ``delta`` halving from ``2**-ZOOM_FROM`` of the
    key range to ``2**-(levels + 10)``.

    It starts coarse: a step on a grid of values (``step=1`` over 120 months)
    keeps its value while its key moves within the value's share of the key
    range (1/120), so a zoom starting finer than that never leaves the grid
    point it started from, and the reference was only exact at the grid's
    powers of two of the range."""
    n_actions = block.problem.n_actions
    columns = n_actions + np.asarray(plan)
    offsets = np.array(list(itertools.product(range(-2, 3), repeat=len(plan))))
    best_cost = np.inf
    for start, price in zip(keys, cost):
        centre, centre_cost = start.copy(), price
        delta = 2.0**-ZOOM_FROM
        while delta > 2.0 ** -(levels + 10):
            trial = np.repeat(centre[None, :], offsets.shape[0], axis=0)
            trial[:, columns] = np.clip(trial[:, columns] + offsets * delta, 0, 1)
            prices = judged_costs(block, trial)
            k = int(np.argmin(prices))
            if prices[k] < centre_cost:
                centre, centre_cost = trial[k], prices[k]
            else:
                delta /= 2
        best_cost = min(best_cost, centre_cost)
    return best_cost


def exact_least(block, max_steps, levels):
    """The least cost of any plan of up to ``max_steps`` steps (inf: none) and
    that plan (action indices in order; ``()``: none)."""
    n_actions = block.problem.n_actions
    least, least_plan = np.inf, ()
    for length in range(1, max_steps + 1):
        for plan in itertools.permutations(range(n_actions), length):
            keys = plan_genotypes(block, plan, levels)
            cost = judged_costs(block, keys)
            if not np.isfinite(cost).any():
                continue
            best = np.argsort(cost, kind="stable")[:REFINED]
            best = best[np.isfinite(cost[best])]
            found = zoomed(block, plan, keys[best], cost[best], levels)
            if found < least:
                least, least_plan = found, plan
    return least, least_plan


def searched_least(model, actions, X, rows, seed):
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=actions,
        max_plans=None,
        all_orders=True,
        n_jobs=1,
        random_state=seed,
    ).fit(X)
    frame = explainer.explain(rows)
    ok = frame[frame["status"] == "ok"]
    return ok.groupby("instance")["sequence_cost"].min().reindex(rows.index)


def enumerated(explainer, rows, args, done, file):
    """The reference of each row not in ``done`` (by label), added to it and
    written to ``file`` (if any) after each row: ``ROW_COLUMNS``."""
    for k in range(len(rows)):
        label = rows.index[k]
        if label in done.index:
            continue
        start, wall = time.process_time(), time.perf_counter()
        block = captured_evaluator(explainer, rows.iloc[k : k + 1])
        least, plan = np.nan, ""
        if block is not None:
            # the capture's population of 2 would cap each model call at 2
            # states: one call per chunk instead
            block.max_rows = CHUNK
            # one thread: a zoom's calls hold a few new states each, and an
            # OpenMP team waiting for a thread the loaded machine has parked
            # made such rows take minutes
            with threadpool_limits(limits=1):
                least, steps = exact_least(block, args.max_steps, args.levels)
            plan = " > ".join(block.problem.actions[a].name for a in steps)
        done.loc[label] = [
            least,
            plan,
            time.process_time() - start,
            time.perf_counter() - wall,
        ]
        print(f"{label}: {least:.6g} {plan or '-'} ({done.loc[label, 'wall_s']:.1f} s)")
        if file is not None:
            done.reindex([r for r in rows.index if r in done.index]).to_csv(file)
    return done.reindex(rows.index)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--problems", nargs="+", choices=list(PROBLEMS), default=list(PROBLEMS)
    )
    parser.add_argument("--n-instances", type=int, default=16)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--max-steps", type=int, default=3)
    parser.add_argument("--levels", type=int, default=12)
    parser.add_argument("--save", type=Path)
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the references of the rows already in --save's file",
    )
    args = parser.parse_args(argv)
    table = []
    for name in args.problems:
        model, actions, X, rows = PROBLEMS[name](args.n_instances)
        explainer = SequentialCounterfactualExplainer(
            model, actions=actions, n_jobs=1, random_state=0
        ).fit(X)
        file = None
        done = pd.DataFrame(columns=ROW_COLUMNS, dtype=object)
        if args.save:
            args.save.mkdir(parents=True, exist_ok=True)
            file = args.save / f"exact_{name}.csv"
            if args.resume and file.exists():
                done = pd.read_csv(file, index_col=0, keep_default_na=False)
                done = done.loc[done.index.isin(rows.index), ROW_COLUMNS]
                done["exact"] = pd.to_numeric(done["exact"].replace("", np.nan))
                print(f"{name}: {len(done)} rows kept from {file}")
        costs = enumerated(explainer, rows, args, done, file)
        costs["exact"] = costs["exact"].astype(float)
        for seed in args.seeds:
            costs[f"seed_{seed}"] = searched_least(model, actions, X, rows, seed)
        if file is not None:
            costs.to_csv(file)
        reference = costs["exact"].replace(np.inf, np.nan)
        has = reference.notna()
        seeds = costs[[f"seed_{seed}" for seed in args.seeds]][has].astype(float)
        gap = seeds.sub(reference[has], axis=0).div(reference[has], axis=0)
        within = (gap <= 0.01).mean()
        wall = costs["wall_s"].astype(float)
        table.append(
            {
                "problem": name,
                "rows": len(rows),
                "with a plan": int(has.sum()),
                "seed within 1 % of exact": f"{within.min():.0%}-{within.max():.0%}",
                "worst gap": f"{gap.max().max():.1%}",
                "best gap": f"{gap.min().min():.1%}",
                "exact s/row (CPU)": f"{costs['cpu_s'].astype(float).mean():.1f}",
                "exact s/row (wall)": f"{wall.mean():.1f}",
                "slowest row (wall)": f"{wall.max():.1f}",
            }
        )
        print(costs.drop(columns=["cpu_s", "wall_s"]).round(5).to_string())
        print(pd.DataFrame(table[-1:]).to_string(index=False), flush=True)
    print()
    print(pd.DataFrame(table).to_string(index=False))


if __name__ == "__main__":
    main()

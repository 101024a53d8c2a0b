"""Robustness: do the plans survive retraining the model?

Trains the main job's Adult model (random undersampling, then gradient-boosted
trees), explains N rejected test rows with the paper's actions and graph, and
retrains the same pipeline on B bootstrap samples of the training data. A
plan *survives* a retrained model when that model still accepts the plan's
final state. Printed per setting of the explainer (the default, a margin
``min_target_proba``, the plausibility objective, both): the share of
(row, retrained model) pairs whose cheapest plan survives, the same for each
row's most plausible reported plan, and the mean cost and final probability
of the cheapest plans.

    python benchmarks/bench_robustness.py [--n-instances 30] [--bootstraps 10]
"""

import argparse
import os
import platform
import time

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

import sklearn_cscf
from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf._demo import SCENARIOS, build_model, pick_rejected, train

SETTINGS = {
    "default": {},
    "min_target_proba=0.6": {"min_target_proba": 0.6},
    "plausibility": {"plausibility": True},
    "both": {"min_target_proba": 0.6, "plausibility": True},
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-instances", type=int, default=30)
    parser.add_argument("--bootstraps", type=int, default=10)
    parser.add_argument("--population-size", type=int, default=500)
    parser.add_argument("--generations", type=int, default=150)
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def final_states(frame, states, pick):
    """Each row's final state of the sequence ``pick(steps) -> solution``."""
    ok = frame[frame["status"] == "ok"]
    chosen = {label: pick(steps) for label, steps in ok.groupby("instance")}
    last = states.groupby(["instance", "solution"]).tail(1)
    keep = [
        chosen.get(label) == s for label, s in zip(last["instance"], last["solution"])
    ]
    return last[keep].set_index("instance").drop(columns=["solution", "step"])


def main(argv=None):
    args = parse_args(argv)
    scenario = SCENARIOS["adult"]
    bunch = scenario.load()
    with threadpool_limits(limits=1):
        model, (X_train, X_test, y_train, _) = train(bunch, args.seed)
        rejected = pick_rejected(
            X_test, model.predict(X_test), args.n_instances, args.seed
        )
        rng = np.random.default_rng(args.seed)
        retrained = []
        for b in range(args.bootstraps):
            sample = rng.integers(0, len(X_train), len(X_train))
            retrained.append(
                build_model(args.seed + 1 + b).fit(
                    X_train.iloc[sample], y_train.iloc[sample]
                )
            )
    print(
        f"sklearn-cscf {sklearn_cscf.__version__}, Python "
        f"{platform.python_version()}, {os.cpu_count()} CPU(s); Adult, the main "
        f"job's model, {len(rejected)} rejected test rows, {args.bootstraps} "
        f"bootstrap retrainings; population {args.population_size}, "
        f"{args.generations} generations"
    )
    rows = []
    for name, options in SETTINGS.items():
        start = time.perf_counter()
        explainer = SequentialCounterfactualExplainer(
            model,
            actions=scenario.actions(),
            feature_graph=scenario.graph(),
            population_size=args.population_size,
            n_generations=args.generations,
            n_jobs=args.n_jobs,
            random_state=args.seed,
            **options,
        ).fit(X_train)
        frame, states = explainer.explain(rejected, return_states=True)
        seconds = time.perf_counter() - start
        ok = frame[frame["status"] == "ok"]
        cheapest = final_states(frame, states, lambda s: s["solution"].min())
        survival = {"cheapest": cheapest}
        if "plausibility" in frame.columns:
            survival["most plausible"] = final_states(
                frame,
                states,
                lambda s: s.loc[s["plausibility"].idxmin(), "solution"],
            )
        shares = {
            which: np.mean([(m.predict(finals) == 1).mean() for m in retrained])
            for which, finals in survival.items()
        }
        first = ok.groupby("instance").apply(
            lambda s: s[s["solution"] == s["solution"].min()], include_groups=False
        )
        rows.append(
            {
                "setting": name,
                "solved": ok["instance"].nunique() / len(rejected),
                "cheapest survive": shares["cheapest"],
                "most plausible survive": shares.get("most plausible", np.nan),
                "mean least cost": ok.groupby("instance")["sequence_cost"].min().mean(),
                "mean final P": first.groupby(level=0)["target_proba"].last().mean(),
                "seconds": seconds,
            }
        )
    table = pd.DataFrame(rows).set_index("setting")
    print()
    print(table.to_string(float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()

"""Where the time outside the model goes: the search, refinement and the rest.

Explains the main job's rejected Adult test rows (``bench_runtime.py``'s
settings: the main job's model, default settings, one block, one core) with
timers around the engine's parts, and prints per phase (the search's
generations, refinement, everything else) the wall seconds, the model's
seconds and the seconds outside the model, split into simulation, the
answer memo and model input (``Evaluator.answers`` less the model's own calls),
the objectives and the rest of the phase's own work; and how many candidate
sequences each phase simulated.

    python benchmarks/bench_phases.py [--n-instances 64] [--batch-size 64]

The timers wrap private functions of the engine: this is a profile for
developers, not a figure of the public API.
"""

import argparse
import time
from collections import defaultdict

from threadpoolctl import threadpool_limits

import sklearn_cscf._engine._block as engine
import sklearn_cscf._engine._evaluator as evaluator_module
import sklearn_cscf._engine._model as model_module
from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf._demo import SCENARIOS, pick_rejected, train

SECONDS = defaultdict(float)
CANDIDATES = defaultdict(int)
PHASE = ["other"]


def timed(owner, name, part, phase=False):
    """Wrap ``owner.name``: its time is added to ``part`` of the current phase
    (``phase``: it starts a phase of that name)."""
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        before = PHASE[0]
        if phase:
            PHASE[0] = part
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            SECONDS[(PHASE[0], part)] += time.perf_counter() - start
            PHASE[0] = before

    setattr(owner, name, wrapper)


def counted_simulate():
    original = evaluator_module.simulate

    def wrapper(starts, keys, *args, **kwargs):
        CANDIDATES[PHASE[0]] += keys.shape[0]
        return original(starts, keys, *args, **kwargs)

    evaluator_module.simulate = wrapper


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-instances", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    scenario = SCENARIOS["adult"]
    model, (X_train, X_test, _, _) = train(scenario.load(), args.seed)
    rejected = pick_rejected(X_test, model.predict(X_test), args.n_instances, args.seed)
    counted_simulate()
    timed(model_module.ModelAdapter, "_call", "model")
    timed(evaluator_module.Evaluator, "answers", "answers")
    timed(evaluator_module, "simulate", "simulation")
    timed(evaluator_module, "evaluate_objectives", "objectives")
    timed(evaluator_module.Evaluator, "evaluate", "search", phase=True)
    timed(engine, "refine", "refinement", phase=True)
    with threadpool_limits(limits=1):
        explainer = SequentialCounterfactualExplainer(
            model,
            actions=scenario.actions(),
            feature_graph=scenario.graph(),
            batch_size=args.batch_size,
            n_jobs=1,
            random_state=args.seed,
        ).fit(X_train)
        SECONDS.clear()
        CANDIDATES.clear()
        start = time.perf_counter()
        _, details = explainer.explain(rejected, return_details=True)
        wall = time.perf_counter() - start
    n = int((details["status"] != "already_target").sum())
    model_total = sum(v for (_, part), v in SECONDS.items() if part == "model")
    print(
        f"{n} rows in blocks of {args.batch_size}: {wall:.2f} s wall, "
        f"{wall / n:.3f} s per row; the model {model_total:.2f} s "
        f"({model_total / wall:.0%}), outside it {wall - model_total:.2f} s "
        f"({1 - model_total / wall:.0%})"
    )
    header = (
        f"{'phase':<11} {'wall s':>7} {'model':>6} {'outside':>8} "
        f"{'simulate':>9} {'memo+input':>11} {'objectives':>11} {'own':>6} "
        f"{'candidates':>11}"
    )
    print(header)
    accounted = 0.0
    for phase in ("search", "refinement"):
        total = SECONDS[(phase, phase)]
        used = {
            part: SECONDS[(phase, part)]
            for part in ("model", "answers", "simulation", "objectives")
        }
        memo = used["answers"] - used["model"]
        outside = total - used["model"]
        own = outside - memo - used["simulation"] - used["objectives"]
        accounted += total
        print(
            f"{phase:<11} {total:>7.2f} {used['model']:>6.2f} {outside:>8.2f} "
            f"{used['simulation']:>9.2f} {memo:>11.2f} {used['objectives']:>11.2f} "
            f"{own:>6.2f} {CANDIDATES[phase]:>11,}"
        )
    rest = wall - accounted
    rest_model = SECONDS[("other", "model")]
    print(
        f"{'rest':<11} {rest:>7.2f} {rest_model:>6.2f} {rest - rest_model:>8.2f}"
        f"{'':>9} {'':>11} {'':>11} {'':>6} {CANDIDATES['other']:>11,}"
    )
    print(
        "(memo+input: Evaluator.answers less the model's calls, i.e. the answer memo "
        "and building the model's input; own: the phase's other work)"
    )


if __name__ == "__main__":
    main()

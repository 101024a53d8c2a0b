"""Every plot of ``sklearn_cscf.plotting`` on the paper's Adult experiment
=========================================================================

Trains the main job's model on the built-in Adult data (random under-sampling,
then gradient-boosted trees), explains a few people it predicts to earn at
most 50K with CSCF (the paper's six actions and feature graph), and writes
five pictures to the output directory:

- ``action_flow.png``: which actions the sequences take at each step
  position, and which follows which (the paper's Fig. 5);
- ``probability_by_step.png``: per action and step position, the mean
  probability of >50K after the step, with bootstrap intervals (Fig. 6);
- ``target_probability.png``: the person with the most plans, their cheapest
  plans step by step against the decision threshold;
- ``pareto_front.png``: that person's Pareto-optimal sequences by cost and
  Gower distance;
- ``recourse_summary.png``: how often each action appears in the plans
  chosen for the people (the knee of each person's front).

The person's plots are drawn through their display objects
(``TargetProbabilityDisplay`` and ``ParetoFrontDisplay``), which keep the
drawn artists and take ``*_kw`` style dictionaries for matplotlib.

Run ``python examples/plotting_gallery.py --help`` for the options; a small
budget (``--n-instances 3 --population-size 60 --generations 10``) finishes
in seconds, most of them spent training the model.
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display needed
import pandas as pd  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from sklearn_cscf import SequentialCounterfactualExplainer  # noqa: E402
from sklearn_cscf.__main__ import SCENARIOS, pick_rejected, train  # noqa: E402
from sklearn_cscf.plotting import (
    ActionFlowDisplay,
    ParetoFrontDisplay,
    ProbabilityByStepDisplay,
    RecourseSummaryDisplay,
    TargetProbabilityDisplay,
    action_colors,
)

DPI = 120


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Draw every plot of sklearn_cscf.plotting on Adult.",
    )
    parser.add_argument(
        "--n-instances",
        type=positive_int,
        default=8,
        help="people predicted to earn <=50K to explain (default: 8)",
    )
    parser.add_argument(
        "--population-size",
        type=positive_int,
        default=150,
        help="individuals per generation (default: 150)",
    )
    parser.add_argument(
        "--generations",
        type=positive_int,
        default=40,
        help="generations of the search (default: 40)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the split, model and search"
    )
    parser.add_argument(
        "--n-jobs",
        type=int,
        default=1,
        help="people explained in parallel; -1 uses all cores (default: 1)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=Path("."),
        help="directory for the PNG files (default: the current directory)",
    )
    args = parser.parse_args(argv)
    if args.n_jobs == 0:
        parser.error("--n-jobs must not be 0 (use 1, a larger number, or -1)")
    if args.population_size < 2:
        parser.error("--population-size must be at least 2")
    if args.output.exists() and not args.output.is_dir():
        parser.error(f"--output {args.output} exists and is not a directory")
    return args


def explain(args):
    """The explanations of a few rejected Adult rows, their probability of
    >50K now, and the colours of the paper's actions."""
    scenario = SCENARIOS["adult"]
    # one OpenMP thread: the trees train many times faster on a small or busy
    # machine, and the fitted model is the same
    with threadpool_limits(limits=1):
        model, (X_train, X_test, _, _) = train(scenario.load(), args.seed)
        predicted = model.predict(X_test)
    rejected = pick_rejected(X_test, predicted, args.n_instances, args.seed)
    actions = scenario.actions()
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=actions,
        feature_graph=scenario.graph(),
        population_size=args.population_size,
        n_generations=args.generations,
        n_jobs=args.n_jobs,
        random_state=args.seed,
    ).fit(X_train)
    explanations = explainer.explain(rejected)
    initial = pd.Series(model.predict_proba(rejected)[:, 1], index=rejected.index)
    return explanations, initial, action_colors(a.name for a in actions)


def save(ax, path):
    # the figure stays open: the docs gallery shows the figures left open
    ax.figure.savefig(path, dpi=DPI)
    print(f"Wrote {path}")


def main(argv=None):
    args = parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    explanations, initial, colors = explain(args)
    ok = explanations[explanations["status"] == "ok"]
    if ok.empty:
        raise SystemExit("No sequence found; try a larger budget.")
    print(
        f"{ok['instance'].nunique()} of {len(initial)} people have a sequence; "
        f"{ok.groupby(['instance', 'solution']).ngroups} sequences in all."
    )
    save(
        ActionFlowDisplay.from_explanations(explanations, colors=colors).ax_,
        args.output / "action_flow.png",
    )
    save(
        ProbabilityByStepDisplay.from_explanations(
            explanations, colors=colors, random_state=args.seed, target_name=">50K"
        ).ax_,
        args.output / "probability_by_step.png",
    )
    # the person with the most plans shows the most
    person = ok.groupby("instance")["plan"].nunique().idxmax()
    chart = TargetProbabilityDisplay.from_explanations(
        explanations,
        person,
        initial_proba=initial,
        subject="Person",
        target_name=">50K",
        line_kw={"linewidth": 2.2},
    )
    save(chart.ax_, args.output / "target_probability.png")
    front = ParetoFrontDisplay.from_explanations(explanations, person, subject="Person")
    save(front.ax_, args.output / "pareto_front.png")
    save(
        RecourseSummaryDisplay.from_explanations(explanations, colors=colors).ax_,
        args.output / "recourse_summary.png",
    )


if __name__ == "__main__":
    main()

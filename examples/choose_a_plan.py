"""Choosing one plan per person, and recourse across people
==========================================================

CSCF gives every rejected person a set of Pareto-optimal sequences; the paper
leaves the choice of one to future work. This example trains the main job's
model on the built-in Adult data (random under-sampling, then gradient-boosted
trees), explains a few people it predicts to earn at most 50K with CSCF (the
paper's six actions and feature graph), and chooses one plan per person in
three ways with :func:`sklearn_cscf.choose_plan`:

- ``knee``: the knee of the front of sequence cost and Gower distance;
- ``cost vs margin``: equal weights on the sequence cost and the probability
  of >50K after the last step (a plan that ends farther past the decision
  threshold is safer);
- ``cheapest, 1 step``: the cheapest plan of a single step.

It prints, per person, the plan each method chose, the knee's plans step by
step, the whole solution set of a person for whom the methods disagree, and
:func:`sklearn_cscf.summarize_recourse`: how often each action appears in the
knee plans, how often first, at which step and at what cost. It writes two
pictures to the output directory:

- ``pareto_choices.png``: one person's sequences by cost and Gower distance,
  each panel marking the plan one method chose;
- ``recourse_summary.png``: the share of people whose knee plan takes each
  action, as the first step or later
  (:class:`~sklearn_cscf.plotting.RecourseSummaryDisplay`).

``ActionFlowDisplay.from_explanations(chosen)`` draws the chosen plans'
actions by step position (the paper's Fig. 5 with one plan per person); on
Adult most chosen plans have a single step.

Run ``python examples/choose_a_plan.py --help`` for the options; a small
budget (``--n-instances 4 --population-size 60 --generations 10``) finishes in
seconds.
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from sklearn_cscf import (  # noqa: E402
    SequentialCounterfactualExplainer,
    choose_plan,
    describe,
    summarize_recourse,
)
from sklearn_cscf._demo import (  # noqa: E402
    MAX_SEED,
    SCENARIOS,
    bounded_int,
    n_jobs,
    pick_rejected,
    train,
)
from sklearn_cscf.plotting import (
    ParetoFrontDisplay,
    RecourseSummaryDisplay,
    action_colors,
)

DPI = 120
# the three choices: a name and the options of choose_plan
METHODS = {
    "knee": {"method": "knee"},
    "cost vs margin": {
        "method": "weighted",
        "weights": {"sequence_cost": 1, "target_proba": 1},
    },
    "cheapest, 1 step": {"method": "cheapest", "max_steps": 1},
}
# the columns of each person's profile
PROFILE = ["age", "education", "occupation", "hours_per_week", "capital_gain"]
STEP_COLUMNS = [
    "instance",
    "plan",
    "step",
    "action",
    "old_value",
    "new_value",
    "cost",
    "target_proba",
]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Choose one plan per person on Adult, and summarise them.",
    )
    positive = bounded_int(1, what="a positive integer")
    parser.add_argument(
        "--n-instances",
        metavar="N",
        type=positive,
        default=10,
        help="people predicted to earn <=50K to explain (default: 10)",
    )
    parser.add_argument(
        "--population-size",
        metavar="N",
        type=bounded_int(2, what="an integer >= 2"),
        default=100,
        help="individuals per generation (default: 100)",
    )
    parser.add_argument(
        "--generations",
        metavar="N",
        type=positive,
        default=30,
        help="generations of the search (default: 30)",
    )
    parser.add_argument(
        "--seed",
        metavar="SEED",
        type=bounded_int(0, MAX_SEED, what=f"an integer in [0, {MAX_SEED}]"),
        default=0,
        help="seed of the split, the model and the search (default: 0)",
    )
    parser.add_argument(
        "--n-jobs",
        metavar="N",
        type=n_jobs,
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
    if args.output.exists() and not args.output.is_dir():
        parser.error(f"--output {args.output} exists and is not a directory")
    return args


def explain(args):
    """The explanations (and states) of a few rejected Adult rows, the rows,
    their probability of >50K now, and the colours of the paper's actions."""
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
    explanations, states = explainer.explain(rejected, return_states=True)
    initial = pd.Series(model.predict_proba(rejected)[:, 1], index=rejected.index)
    colors = action_colors(action.name for action in actions)
    return explanations, states, rejected, initial, colors


def plan_name(chosen):
    """``#k cost c (n steps)`` of each instance's chosen plan, or its status."""
    names = {}
    for label, rows in chosen.groupby("instance", sort=False):
        first = rows.iloc[0]
        if first["status"] != "ok":
            names[label] = str(first["status"])
            continue
        steps = len(rows)
        names[label] = (
            f"#{int(first['plan']) + 1} cost {first['sequence_cost']:.2f} "
            f"({steps} step{'s' if steps != 1 else ''})"
        )
    return pd.Series(names)


def save(fig, path):
    # the figure stays open: the docs gallery shows the figures left open
    fig.savefig(path, dpi=DPI)
    print(f"Wrote {path}")


def main(argv=None):
    args = parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    explanations, states, rejected, initial, colors = explain(args)
    ok = explanations[explanations["status"] == "ok"]
    if ok.empty:
        raise SystemExit("No sequence found; try a larger budget.")

    # one plan per person, three ways
    chosen = {
        name: choose_plan(explanations, **options) for name, options in METHODS.items()
    }
    table = pd.DataFrame({name: plan_name(frame) for name, frame in chosen.items()})
    table.insert(
        0,
        "sequences",
        explanations.groupby("instance", sort=False)["solution"].nunique(),
    )
    table.index.name = "person"
    print("The plan each method chose (#k: plan k - 1 of the frame):")
    print(table.to_string())

    knee = chosen["knee"]
    print("\nThe knee plans, step by step:")
    print(
        knee.loc[knee["status"] == "ok", STEP_COLUMNS].to_string(
            index=False, float_format="{:.2f}".format
        )
    )

    # a person for whom the methods disagree shows what the choice does;
    # else the person with the most plans
    plans = ok.groupby("instance")["plan"].nunique()
    differ = table[table[list(METHODS)].nunique(axis=1) > 1].index
    person = (plans[differ] if len(differ) else plans).idxmax()
    print(f"\nEvery plan of person {person}:")
    print(
        describe(
            explanations,
            states,
            X=rejected[PROFILE],
            instance=person,
            initial_proba=initial,
            target_name=">50K",
            max_plans=None,
            noun="Person",
        )
    )

    # recourse across people
    summary = summarize_recourse(knee)
    print("\nThe actions of the knee plans:")
    print(summary.to_string(index=False, float_format="{:.2f}".format))

    fig, axes = plt.subplots(
        len(METHODS), 1, figsize=(8, 4 * len(METHODS)), layout="constrained"
    )
    for ax, (name, frame) in zip(axes, chosen.items()):
        # show what the choice weighs: the margin, for the weights on it
        y = "target_proba" if "weights" in METHODS[name] else "gower_distance"
        if (frame.loc[frame["instance"] == person, "status"] == "ok").all():
            ParetoFrontDisplay.from_explanations(
                explanations, person, y=y, highlight=frame, ax=ax
            )
        else:  # no plan within this method's limits: nothing to mark
            ParetoFrontDisplay.from_explanations(explanations, person, y=y, ax=ax)
        ax.set_title(f"{name}: {ax.get_title()}", fontsize="medium")
    save(fig, args.output / "pareto_choices.png")
    ax = RecourseSummaryDisplay.from_explanations(
        explanations, colors=colors
    ).ax_  # the knee, again
    save(ax.figure, args.output / "recourse_summary.png")


if __name__ == "__main__":
    main()

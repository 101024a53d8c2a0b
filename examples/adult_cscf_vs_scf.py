"""CSCF against SCF on the paper's Adult (Census Income) experiment
===================================================================

Trains an imbalanced-learn pipeline (random under-sampling, then histogram
gradient boosting on the raw mixed-type columns) on the built-in Adult data,
picks a few people it predicts to earn at most 50K, and explains each of them
twice with the paper's six actions and the same seed and budget:

- CSCF: with the paper's feature-relationship graph (``adult_feature_graph``),
  so that the state before a step discounts its cost (more education makes
  capital gains and occupation changes easier; long hours make capital gains
  easier, short hours leave time to study);
- SCF: without the graph (``feature_graph=None``), every discount is 1.

Prints, per person, the cheapest sequence of each method side by side, then a
summary per method: the share of people with a sequence, the mean number of
Pareto-optimal sequences, the mean cost of the cheapest one, and how often a
sequence puts ``add_education`` before the actions the graph discounts. SCF's
costs are undiscounted, so they are also re-priced with the graph ("at CSCF
prices") to compare like with like. Writes both frames, with a ``method``
column, to ``adult_cscf_vs_scf.csv`` in the current directory.

Run ``python examples/adult_cscf_vs_scf.py --help`` for the options; a small
budget (``--population-size 60 --generations 10``) finishes in seconds, the
default (the paper's budget, 3 people) in well under a minute.
"""

import argparse
import time
from itertools import zip_longest

import numpy as np
import pandas as pd
from sklearn.metrics import balanced_accuracy_score
from threadpoolctl import threadpool_limits

from sklearn_cscf import SequentialCounterfactualExplainer, describe
from sklearn_cscf._demo import add_search_options, pick_rejected, train
from sklearn_cscf.datasets import adult_actions, adult_feature_graph, load_adult

OUTPUT = "adult_cscf_vs_scf.csv"
METHODS = ("CSCF", "SCF")
# actions whose cost the graph discounts through education_num
DISCOUNTED_BY_EDUCATION = ("increase_capital_gain", "enlist")
# the columns shown in each person's profile
PROFILE = [
    "age",
    "education",
    "education_num",
    "occupation",
    "hours_per_week",
    "capital_gain",
    "capital_loss",
]
LABEL_WIDTH = 12
COLUMN_WIDTH = 38


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Explain people predicted to earn <=50K with CSCF and SCF.",
    )
    add_search_options(parser, rows="people predicted to earn <=50K")
    return parser.parse_args(argv)


def price_with_graph(steps, states, actions, graph):
    """The cost of each step if the graph's discounts applied (Eq. 1-2).

    ``graph.discount`` takes every feature an action changes and the state
    *before* the step, which ``explain(..., return_states=True)`` gives.
    """
    affected = {action.name: action.affected_features for action in actions}
    states = states.set_index(["instance", "solution", "step"])
    costs = np.full(len(steps), np.nan)
    for i, step in enumerate(steps.itertuples()):
        if step.status != "ok":
            continue
        before = states.loc[(step.instance, step.solution, step.step - 1)]
        state = {name: np.asarray([value]) for name, value in before.items()}
        discount = graph.discount(affected[step.action], state)[0]
        costs[i] = step.effort * discount
    return pd.Series(costs, index=steps.index)


def method_column(steps):
    """One person's cheapest sequence under one method, as lines of text."""
    first = steps.iloc[0]
    if first["status"] != "ok":
        return [f"no sequence ({first['status']})"]
    cheapest = steps[steps["solution"] == 0]
    return [
        f"{step.action} {step.old_value} -> {step.new_value}"
        for step in cheapest.itertuples()
    ]


def cost_cells(steps, method):
    """The cost, P(>50K) and number of sequences rows of the side-by-side."""
    first = steps.iloc[0]
    if first["status"] != "ok":
        return "-", "-", "0"
    cheapest = steps[steps["solution"] == 0]
    if method == "CSCF":
        cost = f"{first['sequence_cost']:.2f} (effort {first['sequence_effort']:.2f})"
    else:
        at_cscf = cheapest["cost_at_cscf_prices"].sum()
        cost = f"{first['sequence_cost']:.2f} ({at_cscf:.2f} at CSCF prices)"
    proba = f"{cheapest['target_proba'].iloc[-1]:.2f}"
    return cost, proba, str(steps["solution"].nunique())


def side_by_side(per_method):
    """Print the cheapest sequence of each method in two columns."""

    def row(label, left, right):
        print(f"  {label:<{LABEL_WIDTH}}{left:<{COLUMN_WIDTH}}{right}")

    row("", "CSCF (with the graph)", "SCF (no graph)")
    columns = [method_column(per_method[m]) for m in METHODS]
    for t, (left, right) in enumerate(zip_longest(*columns, fillvalue=""), 1):
        row(f"step {t}", left, right)
    cells = [cost_cells(per_method[m], m) for m in METHODS]
    for label, (left, right) in zip(
        ["cost", "P(>50K)", "#sequences"], zip(*cells, strict=True)
    ):
        row(label, left, right)


def education_first(steps):
    """Among sequences using add_education and a discounted action, how many
    and in how many add_education comes first."""
    ok = steps[steps["status"] == "ok"]
    both = first = 0
    for _, seq in ok.groupby(["instance", "solution"]):
        actions = seq["action"].tolist()
        discounted = [a for a in actions if a in DISCOUNTED_BY_EDUCATION]
        if "add_education" not in actions or not discounted:
            continue
        both += 1
        first += actions.index("add_education") < actions.index(discounted[0])
    return both, first


def summary(frames):
    """Per-method table over the explained people."""
    records = []
    for method, steps in frames.items():
        n_people = steps["instance"].nunique()
        ok = steps[steps["status"] == "ok"]
        cheapest = ok[ok["solution"] == 0].groupby("instance")
        n_solved = ok["instance"].nunique()
        both, first = education_first(steps)
        records.append(
            {
                "method": method,
                "solved": f"{n_solved}/{n_people} ({n_solved / n_people:.0%})",
                "mean #Pareto": ok.groupby("instance")["solution"].nunique().mean(),
                "mean cheapest cost": cheapest["sequence_cost"].first().mean(),
                "at CSCF prices": cheapest["cost_at_cscf_prices"].sum().mean(),
                "education first": f"{first}/{both}",
            }
        )
    return pd.DataFrame.from_records(records).set_index("method")


def main(argv=None):
    args = parse_args(argv)
    start = time.perf_counter()

    # The command line's model: a stratified 75/25 split, random
    # under-sampling of the majority class, then gradient boosting on the raw
    # columns (it reads the pandas categories itself). One OpenMP thread: the
    # data are small, and on a busy machine its threads can wait on each other
    # far longer than they save.
    with threadpool_limits(limits=1):
        model, (X_train, X_test, _, y_test) = train(load_adult(), args.seed)
        predicted = model.predict(X_test)
    accuracy = balanced_accuracy_score(y_test, predicted)
    print(
        f"Under-sampling + gradient boosting on {len(X_train)} Adult rows: balanced "
        f"accuracy {accuracy:.3f} on {len(X_test)} held out."
    )

    rejected = pick_rejected(X_test, predicted, args.n_instances, args.seed)
    if len(rejected) < args.n_instances:
        print(f"Only {len(rejected)} people predicted <=50K; explaining all of them.")

    actions = adult_actions()
    graph = adult_feature_graph()
    frames, states = {}, {}
    for method, feature_graph in zip(METHODS, [graph, None], strict=True):
        explainer = SequentialCounterfactualExplainer(
            model,
            actions=actions,
            feature_graph=feature_graph,
            population_size=args.population_size,
            n_generations=args.generations,
            n_jobs=args.n_jobs,
            random_state=args.seed,
        ).fit(X_train)
        print(
            f"{method}: explaining {len(rejected)} people with "
            f"{len(explainer.actions_)} actions (population {args.population_size}, "
            f"{args.generations} generations)..."
        )
        frames[method], states[method] = explainer.explain(rejected, return_states=True)
    for method in METHODS:
        frames[method]["cost_at_cscf_prices"] = price_with_graph(
            frames[method], states[method], actions, graph
        )

    print()
    with threadpool_limits(limits=1):
        probabilities = model.predict_proba(rejected)[:, 1]
    for label, proba in zip(rejected.index, probabilities, strict=True):
        # the person and CSCF's counts; then the cheapest sequence of each method
        print(
            describe(
                frames["CSCF"],
                X=rejected[PROFILE],
                instance=label,
                initial_proba=proba,
                target_name=">50K",
                max_plans=0,
                noun="Person",
            )
        )
        side_by_side({m: frames[m][frames[m]["instance"] == label] for m in METHODS})
        print()

    table = summary(frames)
    with pd.option_context("display.float_format", "{:.2f}".format):
        print(table.to_string())
    print(
        "\nSCF's costs are undiscounted (every discount is 1), so its own costs are"
        "\nnot comparable with CSCF's; 'at CSCF prices' re-prices SCF's sequences"
        "\nwith the graph. The comparison of interest is which actions, in which"
        "\norder, CSCF picks: the graph discounts capital gains and occupation"
        "\nchanges for the better educated (1 - education_num / 32), so CSCF may put"
        "\nadd_education before increase_capital_gain or enlist ('education first':"
        "\nsequences doing so / sequences using add_education with one of them)."
    )

    combined = pd.concat(
        [frames[m].drop(columns="cost_at_cscf_prices") for m in METHODS],
        keys=METHODS,
        names=["method", None],
    )
    combined = combined.reset_index(level="method").reset_index(drop=True)
    combined.to_csv(OUTPUT, index=False)
    counts = {m: frames[m]["status"].value_counts().to_dict() for m in METHODS}
    print(
        f"\nWrote {len(combined)} rows to {OUTPUT} (statuses: {counts}) in "
        f"{time.perf_counter() - start:.1f} s."
    )


if __name__ == "__main__":
    main()

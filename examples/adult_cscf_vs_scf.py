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
from imblearn.pipeline import make_pipeline
from imblearn.under_sampling import RandomUnderSampler
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf.datasets import adult_actions, adult_feature_graph, load_adult

OUTPUT = "adult_cscf_vs_scf.csv"
METHODS = ("CSCF", "SCF")
# actions whose cost the graph discounts through education_num
DISCOUNTED_BY_EDUCATION = ("increase_capital_gain", "enlist")
LABEL_WIDTH = 12
COLUMN_WIDTH = 38


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Explain people predicted to earn <=50K with CSCF and SCF.",
    )
    parser.add_argument(
        "--n-instances",
        type=positive_int,
        default=3,
        help="people predicted to earn <=50K to explain (default: 3)",
    )
    parser.add_argument(
        "--population-size",
        type=positive_int,
        default=500,
        help="individuals per generation (default: 500, the paper's)",
    )
    parser.add_argument(
        "--generations",
        type=positive_int,
        default=150,
        help="generations of the search (default: 150, the paper's)",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        help="people explained in parallel; -1 uses all cores (default: 1)",
    )
    args = parser.parse_args(argv)
    if args.population_size < 2:
        parser.error("--population-size must be at least 2")
    if args.n_jobs == 0:
        parser.error("--n-jobs must not be 0 (use 1, a larger number, or -1)")
    return args


def build_model(seed):
    """Under-sample the majority class, then gradient boosting on raw columns.

    The imbalanced-learn pipeline only resamples in ``fit``; at prediction time
    it passes the rows straight to the classifier, which handles the pandas
    ``category`` columns itself (``categorical_features="from_dtype"``).
    """
    return make_pipeline(
        RandomUnderSampler(random_state=seed),
        HistGradientBoostingClassifier(
            categorical_features="from_dtype", random_state=seed
        ),
    )


def fmt(value):
    """A raw value for people: whole numbers without decimals, others with two."""
    if isinstance(value, float | np.floating | int | np.integer):
        if np.isnan(value):
            return "-"
        if float(value).is_integer():
            return f"{value:,.0f}"
        return f"{value:,.2f}"
    return str(value)


def describe_person(label, row, proba):
    return (
        f"Person {label}: age {fmt(row['age'])}, {row['education']} "
        f"(education_num {fmt(row['education_num'])}), {row['occupation']}, "
        f"{fmt(row['hours_per_week'])} h/week, capital gain "
        f"{fmt(row['capital_gain'])}, capital loss {fmt(row['capital_loss'])}; "
        f"P(>50K) now {proba:.2f}"
    )


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
    lines = [
        f"{step.action} {fmt(step.old_value)} -> {fmt(step.new_value)}"
        for step in cheapest.itertuples()
    ]
    return lines


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

    adult = load_adult()
    X_train, X_test, y_train, y_test = train_test_split(
        adult.data,
        adult.target,
        test_size=0.25,
        stratify=adult.target,
        random_state=args.seed,
    )
    # One OpenMP thread for the gradient boosting: the data are small, and on a
    # busy machine its threads can wait on each other far longer than they save.
    with threadpool_limits(limits=1):
        model = build_model(args.seed).fit(X_train, y_train)
        predicted = model.predict(X_test)
    accuracy = balanced_accuracy_score(y_test, predicted)
    print(
        f"Under-sampling + gradient boosting on {len(X_train)} Adult rows: balanced "
        f"accuracy {accuracy:.3f} on {len(X_test)} held out."
    )

    rejected = X_test[predicted == 0]
    if len(rejected) < args.n_instances:
        print(f"Only {len(rejected)} people predicted <=50K; explaining all of them.")
    rejected = rejected.head(args.n_instances)

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
    for (label, row), proba in zip(rejected.iterrows(), probabilities, strict=True):
        print(describe_person(label, row, proba))
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

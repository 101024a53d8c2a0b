"""The command-line demo: ``python -m sklearn_cscf`` (or ``sklearn-cscf``).

On a built-in data set (Adult by default, or German Credit): trains an
imbalanced-learn pipeline that rebalances the classes, reports its held-out
balanced accuracy, picks a few rejected test rows, explains them with CSCF
(the paper's actions and feature graph) behind a progress bar, prints the
cheapest sequences of each person step by step, and writes the tidy frame to
``explanations.csv`` (and ``explanations.png`` when matplotlib is installed).

Run ``python -m sklearn_cscf --help`` for the options.
"""

import argparse
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from imblearn.pipeline import make_pipeline
from imblearn.under_sampling import RandomUnderSampler
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import train_test_split

from sklearn_cscf import SequentialCounterfactualExplainer, __version__
from sklearn_cscf.datasets import (
    adult_actions,
    adult_feature_graph,
    german_actions,
    load_adult,
    load_german_credit,
)

CSV_NAME = "explanations.csv"
PLOT_NAME = "explanations.png"
SHOWN_PER_PERSON = 3
MAX_SEED = 2**32 - 1


@dataclass(frozen=True)
class Scenario:
    """A built-in data set with the paper's actions (and graph)."""

    title: str
    load: object
    actions: object
    graph: object  # a callable returning a FeatureGraph, or None
    person: str


SCENARIOS = {
    "adult": Scenario(
        "Adult (Census Income)",
        load_adult,
        adult_actions,
        adult_feature_graph,
        "Person",
    ),
    "german": Scenario(
        "German Credit", load_german_credit, german_actions, None, "Applicant"
    ),
}


# ---------------------------------------------------------------------- #
# Options
# ---------------------------------------------------------------------- #
def _bounded_int(low, high=None, what="an integer"):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text}")
        return value

    return parse


def _n_jobs(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value == 0:
        raise argparse.ArgumentTypeError(
            f"expected a non-zero integer (-1: all cores), got {text!r}"
        )
    return value


def _prog():
    """``sklearn-cscf`` for the console script, else ``python -m sklearn_cscf``."""
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    if name.startswith("sklearn-cscf"):
        return "sklearn-cscf"
    return "python -m sklearn_cscf"


def build_parser():
    """The argument parser of the command-line demo."""
    parser = argparse.ArgumentParser(
        prog=_prog(),
        description=(
            "Consequence-aware sequential counterfactuals (CSCF) on a built-in "
            "data set: train a classifier, explain a few rejected people, print "
            "their cheapest action sequences and write them to explanations.csv."
        ),
        epilog=(
            "Example: python -m sklearn_cscf --dataset german --n-instances 3 "
            "--generations 50 --output results"
        ),
    )
    parser.add_argument(
        "--dataset",
        choices=sorted(SCENARIOS),
        default="adult",
        help="built-in data set and the paper's actions for it (default: adult)",
    )
    parser.add_argument(
        "--n-instances",
        metavar="N",
        type=_bounded_int(1, what="a positive integer"),
        default=5,
        help="rejected test rows to explain (default: 5)",
    )
    parser.add_argument(
        "--population-size",
        metavar="N",
        type=_bounded_int(2, what="an integer >= 2"),
        default=500,
        help="individuals per generation (default: 500, the paper's)",
    )
    parser.add_argument(
        "--generations",
        metavar="N",
        type=_bounded_int(1, what="a positive integer"),
        default=150,
        help="generations of the search (default: 150, the paper's)",
    )
    parser.add_argument(
        "--n-jobs",
        metavar="N",
        type=_n_jobs,
        default=-1,
        help="people explained in parallel; -1 uses all cores (default: -1)",
    )
    parser.add_argument(
        "--seed",
        metavar="SEED",
        type=_bounded_int(0, MAX_SEED, what=f"an integer in [0, {MAX_SEED}]"),
        default=0,
        help="seed of the split, the model and the search (default: 0)",
    )
    parser.add_argument(
        "--no-graph",
        action="store_true",
        help="ignore the feature graph (the paper's SCF variant; German Credit "
        "has no graph anyway)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="directory for explanations.csv (and the plots); created if "
        "missing (default: the current directory)",
    )
    parser.add_argument(
        "--version", action="version", version=f"sklearn-cscf {__version__}"
    )
    return parser


def parse_args(argv=None):
    """Parse and check the options; bad ones exit with a message (status 2)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.output.exists() and not args.output.is_dir():
        parser.error(f"--output {args.output} exists and is not a directory")
    return args


def _prepare_output(directory):
    """Create the output directory up front, before the long work; or explain."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SystemExit(
            f"sklearn-cscf: error: --output {directory}: cannot create the "
            f"directory ({exc.strerror or exc})"
        ) from None


# ---------------------------------------------------------------------- #
# The model
# ---------------------------------------------------------------------- #
def build_model(seed):
    """Rebalance by random undersampling, then gradient-boosted trees.

    Undersampling the majority class (an imbalanced-learn pipeline, which
    only resamples while fitting) keeps the minority class from being
    ignored; the trees read the pandas categories natively.
    """
    return make_pipeline(
        RandomUnderSampler(random_state=seed),
        HistGradientBoostingClassifier(
            categorical_features="from_dtype", random_state=seed
        ),
    )


def train(bunch, seed):
    """The main job's stratified 75/25 split and the model fitted on it.

    Returns ``(model, (X_train, X_test, y_train, y_test))``.
    """
    split = train_test_split(
        bunch.data,
        bunch.target,
        test_size=0.25,
        stratify=bunch.target,
        random_state=seed,
    )
    X_train, _, y_train, _ = split
    return build_model(seed).fit(X_train, y_train), split


def pick_rejected(X_test, predicted, n, seed):
    """Up to ``n`` rows of ``X_test`` predicted 0, drawn with ``seed``, in order."""
    rejected = X_test[predicted == 0]
    rng = np.random.default_rng(seed)
    size = min(n, len(rejected))
    return rejected.iloc[np.sort(rng.choice(len(rejected), size=size, replace=False))]


# ---------------------------------------------------------------------- #
# Printing
# ---------------------------------------------------------------------- #
def fmt(value):
    """A raw value for people: whole numbers without decimals."""
    if isinstance(value, bool | np.bool_):
        return str(value)
    if isinstance(value, int | np.integer):
        return f"{value:,}"
    if isinstance(value, float | np.floating):
        if np.isnan(value):
            return "-"
        if float(value).is_integer():
            return f"{value:,.0f}"
        return f"{value:,.2f}"
    return str(value)


def fmt_cost(value):
    """A cost: two decimals, or two significant digits below 0.01."""
    if value == 0 or abs(value) >= 0.01:
        return f"{value:.2f}"
    return f"{value:.2g}"


def _consequences(states, feature):
    """``"name old -> new"`` for each other feature a step changed."""
    before, after = states
    changed = []
    for name in before.index:
        if name == feature:
            continue
        old, new = before[name], after[name]
        if old != new and not (pd.isna(old) and pd.isna(new)):
            changed.append(f"{name} {fmt(old)} -> {fmt(new)}")
    return changed


def _plans(steps):
    """Solutions grouped when they are the same steps in another order.

    Returns ``(solution, n_other_orders)`` per group, cheapest first.
    """
    groups = {}
    for solution, seq in steps.groupby("solution", sort=True):
        key = (
            round(float(seq["sequence_cost"].iloc[0]), 9),
            tuple(sorted(zip(seq["action"], map(str, seq["new_value"])))),
        )
        groups.setdefault(key, []).append(int(solution))
    return [(members[0], len(members) - 1) for members in groups.values()]


def describe_person(scenario, label, row, proba, target_name, steps, states):
    """A readable summary of one person and their cheapest sequences."""
    profile = ", ".join(f"{name}={fmt(value)}" for name, value in row.items())
    lines = textwrap.wrap(
        f"{scenario.person} {label}: {profile}",
        width=100,
        subsequent_indent="    ",
        break_on_hyphens=False,
    )
    head = f"  P({target_name}) now {proba:.2f}"
    status = steps["status"].iloc[0]
    if status != "ok":
        hint = ""
        if status == "no_counterfactual":
            hint = (
                " (no valid sequence found within the budget; try a larger "
                "--population-size or more --generations)"
            )
        lines.append(f"{head}; status: {status}{hint}")
        return "\n".join(lines)
    n_solutions = steps["solution"].nunique()
    plans = _plans(steps)
    shown = plans[:SHOWN_PER_PERSON]
    lines.append(
        f"{head}; {n_solutions} Pareto-optimal sequence(s), "
        f"{len(plans)} distinct plan(s); the cheapest {len(shown)}:"
    )
    by_state = states.set_index(["solution", "step"]).drop(columns="instance")
    for rank, (solution, n_orders) in enumerate(shown, start=1):
        seq = steps[steps["solution"] == solution].sort_values("step")
        first = seq.iloc[0]
        also = (
            f"; the same steps in {n_orders} other order(s) cost the same"
            if n_orders
            else ""
        )
        lines.append(
            f"  #{rank}  cost {fmt_cost(first['sequence_cost'])} "
            f"(effort {fmt_cost(first['sequence_effort'])}), "
            f"{first['length']} step(s), "
            f"Gower distance {first['gower_distance']:.3f}{also}"
        )
        for step in seq.itertuples():
            pair = (
                by_state.loc[(solution, step.step - 1)],
                by_state.loc[(solution, step.step)],
            )
            priced = f"cost {fmt_cost(step.cost)}"
            if step.discount < 1:
                priced += f" ({fmt_cost(step.effort)} x {step.discount:.2f})"
            lines.append(
                f"      {step.step}. {step.action:<22} {step.feature:<15} "
                f"{fmt(step.old_value):>10} -> {fmt(step.new_value):<10} "
                f"{priced:<24} P({target_name}) {step.target_proba:.2f}"
            )
            changed = _consequences(pair, step.feature)
            if changed:
                lines.append(f"         and so: {'; '.join(changed)}")
    return "\n".join(lines)


def write_plots(explanations, probabilities, path):
    """Per person: target probability by step, and the Pareto front."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")  # files only; no display needed
    import matplotlib.pyplot as plt

    from sklearn_cscf.plotting import plot_pareto_front, plot_target_probability

    solved = [
        (label, proba)
        for label, proba in probabilities.items()
        if (explanations.loc[explanations["instance"] == label, "status"] == "ok").any()
    ]
    if not solved:
        return False
    fig, axes = plt.subplots(
        len(solved), 2, figsize=(12, 4 * len(solved)), squeeze=False
    )
    for (left, right), (label, proba) in zip(axes, solved):
        plot_target_probability(
            explanations,
            label,
            initial_proba=proba,
            max_solutions=SHOWN_PER_PERSON,
            ax=left,
        )
        plot_pareto_front(explanations, label, ax=right)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


# ---------------------------------------------------------------------- #
# The job
# ---------------------------------------------------------------------- #
def run(args):
    """Train, explain and report; returns the explanations frame."""
    start = time.perf_counter()
    scenario = SCENARIOS[args.dataset]
    bunch = scenario.load()
    target_name = str(bunch.target_names[1])
    print(
        f"sklearn-cscf {__version__}: {scenario.title}, {len(bunch.data):,} rows "
        f"(UCI Machine Learning Repository, CC BY 4.0)."
    )

    model, (X_train, X_test, _, y_test) = train(bunch, args.seed)
    predicted = model.predict(X_test)
    accuracy = balanced_accuracy_score(y_test, predicted)
    print(
        f"Model: random undersampling + gradient-boosted trees, trained on "
        f"{len(X_train):,} rows; balanced accuracy {accuracy:.3f} on "
        f"{len(X_test):,} held-out rows."
    )

    rejected = pick_rejected(X_test, predicted, args.n_instances, args.seed)
    n = len(rejected)
    if n < args.n_instances:
        print(f"Only {n} rejected test rows; explaining all of them.")

    use_graph = scenario.graph is not None and not args.no_graph
    method = "CSCF (with the feature graph)" if use_graph else "SCF (no feature graph)"
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=scenario.actions(),
        feature_graph=scenario.graph() if use_graph else None,
        population_size=args.population_size,
        n_generations=args.generations,
        n_jobs=args.n_jobs,
        random_state=args.seed,
        verbose=1,
    ).fit(X_train)
    print(
        f"Explaining {n} rejected {scenario.person.lower()}(s) with {method}: "
        f"{len(explainer.actions_)} actions, population {args.population_size}, "
        f"{args.generations} generations."
    )
    explanations, states = explainer.explain(rejected, return_states=True)
    print()

    probabilities = model.predict_proba(rejected)[:, 1]
    for (label, row), proba in zip(rejected.iterrows(), probabilities):
        print(
            describe_person(
                scenario,
                label,
                row,
                proba,
                target_name,
                explanations[explanations["instance"] == label],
                states[states["instance"] == label],
            )
        )
        print()

    csv_path = args.output / CSV_NAME
    explanations.to_csv(csv_path, index=False)
    written = [str(csv_path)]
    plot_path = args.output / PLOT_NAME
    initial = pd.Series(probabilities, index=rejected.index)
    if write_plots(explanations, initial, plot_path):
        written.append(str(plot_path))
    counts = explanations.groupby("instance")["status"].first().value_counts()
    print(
        f"Wrote {len(explanations)} rows to {' and '.join(written)}; "
        f"statuses per person: {counts.to_dict()}; "
        f"{time.perf_counter() - start:.1f} s in all."
    )
    return explanations


def main(argv=None):
    """Entry point of ``python -m sklearn_cscf`` and ``sklearn-cscf``."""
    args = parse_args(argv)
    _prepare_output(args.output)
    try:
        run(args)
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130
    except OSError as exc:
        print(f"sklearn-cscf: cannot write the output: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

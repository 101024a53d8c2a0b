"""What the command line, the examples and the benchmarks share.

The built-in scenarios, the model they train, the split, the pick of rejected
rows and the search options of their command lines. Not part of the public
API: the per-person text they print is :func:`sklearn_cscf.describe`.
"""

import argparse
from dataclasses import dataclass

import numpy as np
from imblearn.pipeline import make_pipeline
from imblearn.under_sampling import RandomUnderSampler
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import train_test_split

from sklearn_cscf.datasets import (
    adult_actions,
    adult_feature_graph,
    german_actions,
    load_adult,
    load_german_credit,
)

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
# Options
# ---------------------------------------------------------------------- #
def bounded_int(low, high=None, what="an integer"):
    """An argparse type: an integer in ``[low, high]``, or a message naming it."""

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text}")
        return value

    return parse


def n_jobs(text):
    """An argparse type: a non-zero integer (joblib's ``n_jobs``)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value == 0:
        raise argparse.ArgumentTypeError(
            f"expected a non-zero integer (-1: all cores), got {text!r}"
        )
    return value


def add_search_options(parser, *, rows, n_instances=3, default_jobs=1):
    """Add ``--n-instances``, the search budget, ``--n-jobs`` and ``--seed``.

    ``rows`` names what is explained ("rejected applicants"); the budget
    defaults to the paper's (population 500, 150 generations).
    """
    positive = bounded_int(1, what="a positive integer")
    seed = bounded_int(0, MAX_SEED, what=f"an integer in [0, {MAX_SEED}]")
    options = [  # flag, metavar, type, default, help
        ("--n-instances", "N", positive, n_instances, f"{rows} to explain"),
        (
            "--population-size",
            "N",
            bounded_int(2, what="an integer >= 2"),
            500,
            "individuals per generation",
        ),
        ("--generations", "N", positive, 150, "generations of the search"),
        (
            "--n-jobs",
            "N",
            n_jobs,
            default_jobs,
            "rows explained in parallel; -1 uses all cores",
        ),
        ("--seed", "SEED", seed, 0, "random seed of the run: split, model, search"),
    ]
    for flag, metavar, kind, default, text in options:
        note = ", the paper's" if flag in ("--population-size", "--generations") else ""
        parser.add_argument(
            flag,
            metavar=metavar,
            type=kind,
            default=default,
            help=f"{text} (default: {default}{note})",
        )
    return parser

"""Your own data: counterfactuals for a problem you describe yourself
=====================================================================

A tutorial on the pieces you write when your data are not one of the built-in
problems, on a small made-up loan-approval data set:

1. a mixed-type pandas DataFrame (numbers, categories, one ordered category);
2. a scikit-learn pipeline as the black box;
3. the actions a person can take (``Action``): a numeric range with a
   direction, a list of ordered categories, a fixed value, a consequence on
   another feature, a precondition and a postcondition;
4. a feature graph (``FeatureGraph``): how one feature's value makes changing
   another cheaper, so that the order of the actions matters;
5. the explainer, and how to read what it returns.

It prints the cheapest sequences of a few rejected applicants and writes every
Pareto-optimal sequence to ``your_own_data_explanations.csv`` in the current
directory. Run ``python examples/your_own_data.py --help`` for the options; a
small budget (``--population-size 60 --generations 10``) finishes in seconds.
"""

import argparse
import time

import numpy as np
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

from sklearn_cscf import (
    Action,
    FeatureGraph,
    SequentialCounterfactualExplainer,
    show,
)
from sklearn_cscf._demo import add_search_options, pick_rejected

OUTPUT = "your_own_data_explanations.csv"
SHOWN_PER_PERSON = 2

# The levels of education, lowest first. Giving them as an *ordered* pandas
# category tells both the model's encoder and the explainer their order.
EDUCATION = ["none", "high-school", "bachelor", "master"]
# Years of study from no education to each level (same order as EDUCATION).
YEARS_TO_REACH = np.array([0.0, 4.0, 7.0, 9.0])
EMPLOYMENT = ["unemployed", "part-time", "full-time"]
REGIONS = ["city", "countryside"]
RETIREMENT_AGE = 65
FULL_TIME_INCOME = 30.0  # thousands a year


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Explain rejected applicants of a hand-made data set.",
    )
    add_search_options(parser, rows="rejected applicants")
    return parser.parse_args(argv)


# ---------------------------------------------------------------------- #
# 1. The data
# ---------------------------------------------------------------------- #
def make_data(n_samples, seed):
    """A small mixed-type data set and an approval rule.

    Everything is drawn from one seeded ``numpy.random.Generator``: the same
    seed gives the same data, and NumPy's global random state is never used.
    Money is in thousands.
    """
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 61, n_samples)
    education = rng.choice(EDUCATION, n_samples, p=[0.15, 0.45, 0.3, 0.1])
    employment = rng.choice(EMPLOYMENT, n_samples, p=[0.2, 0.3, 0.5])
    region = rng.choice(REGIONS, n_samples, p=[0.6, 0.4])
    rank = pd.Categorical(education, categories=EDUCATION).codes
    base_income = np.select(
        [employment == "full-time", employment == "part-time"], [45.0, 20.0], 5.0
    )
    noise = rng.lognormal(0.0, 0.2, n_samples)
    income = np.round(base_income * (1 + 0.25 * rank) * noise, 1)
    savings = np.round(rng.gamma(2.0, 6.0, n_samples), 1)
    X = pd.DataFrame(
        {
            "age": age,  # int64: the explainer keeps it whole
            "education": pd.Categorical(education, categories=EDUCATION, ordered=True),
            "employment": pd.Categorical(employment, categories=EMPLOYMENT),
            "income": income,
            "savings": savings,
            "region": pd.Categorical(region, categories=REGIONS),
        }
    )
    # the rule the bank (unknowingly) follows; the model only sees examples
    score = (
        0.04 * income
        + 0.08 * savings
        + 0.6 * rank
        + 1.0 * (employment == "full-time")
        - 0.2 * (region == "countryside")
    )
    y = pd.Series((score > 4.5).astype(np.int64), name="approved")
    return X, y


# ---------------------------------------------------------------------- #
# 2. The black box
# ---------------------------------------------------------------------- #
def build_model():
    """Any classifier that takes the raw DataFrame will do; a pipeline with its
    own preprocessing is the usual case. The explainer only calls
    ``predict_proba`` on rows that look like ``X``."""
    preprocess = make_column_transformer(
        (OrdinalEncoder(categories=[EDUCATION]), ["education"]),
        (OneHotEncoder(handle_unknown="ignore"), ["employment", "region"]),
        remainder=StandardScaler(),
    )
    return make_pipeline(preprocess, LogisticRegression(max_iter=1000))


# ---------------------------------------------------------------------- #
# 3. The actions
# ---------------------------------------------------------------------- #
# User callables are vectorised: ``b`` (the state before the step) and ``a``
# (after it) map each column name to a 1-D array with one entry per candidate
# sequence being evaluated; numbers for numeric columns, labels such as
# "bachelor" for categorical ones. Return one value per candidate (or a
# scalar). Costs are efforts in raw units; here every effort is in years, so
# that the steps of a sequence can be added up.
def years_of_study(levels):
    """Years of study from no education to each of the ``levels``."""
    return YEARS_TO_REACH[pd.Categorical(levels, categories=EDUCATION).codes]


def study_years(b, a):
    return years_of_study(a["education"]) - years_of_study(b["education"])


def make_actions():
    return [
        # A numeric range with a direction: savings can only go up, to at most
        # 150 (thousands); saving 10 thousand takes a year.
        Action(
            "save_money",
            "savings",
            values=(0, 150),
            direction="increase",
            cost=lambda b, a: (a["savings"] - b["savings"]) / 10,
        ),
        # A list of ordered categories: "increase" allows only the levels after
        # the current one. Studying takes years, and those years pass: age is
        # a consequence (an effect). The postcondition rejects plans that would
        # finish studying after retirement.
        Action(
            "study",
            "education",
            values=EDUCATION,
            direction="increase",
            cost=study_years,
            effects={"age": lambda b, a: b["age"] + study_years(b, a)},
            postcondition=lambda b, a: a["age"] <= RETIREMENT_AGE,
        ),
        # A fixed value: the action always sets exactly "full-time". The
        # precondition makes it unavailable to someone already working full
        # time; its effect raises the income to a full-time salary.
        Action(
            "find_full_time_job",
            "employment",
            values="full-time",
            cost=lambda b, a: 2.0,
            effects={"income": lambda b, a: np.maximum(b["income"], FULL_TIME_INCOME)},
            precondition=lambda b: b["employment"] != "full-time",
        ),
    ]


# ---------------------------------------------------------------------- #
# 4. The feature graph
# ---------------------------------------------------------------------- #
def make_graph():
    """Edge ``k -> h``: how the current value of ``k`` eases changing ``h``.

    Each ``tau`` returns a discount in [0, 1] computed on the state *before*
    a step: the step costs its effort times the discount. Because a step is
    cheaper after another one, the order of the actions now matters (CSCF);
    without a graph (``feature_graph=None``) every discount is 1 (SCF).
    """
    job_ease = {"none": 1.0, "high-school": 0.9, "bachelor": 0.7, "master": 0.5}
    return (
        FeatureGraph()
        # a degree makes finding a full-time job easier ...
        .add_edge(
            "education",
            "employment",
            lambda x: np.array([job_ease[level] for level in x["education"]]),
        )
        # ... and a full-time salary makes saving easier
        .add_edge(
            "employment",
            "savings",
            lambda x: np.where(x["employment"] == "full-time", 0.6, 1.0),
        )
    )


def main(argv=None):
    args = parse_args(argv)
    start = time.perf_counter()

    X, y = make_data(500, args.seed)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.25, stratify=y, random_state=args.seed
    )
    model = build_model().fit(X_train, y_train)
    accuracy = balanced_accuracy_score(y_test, model.predict(X_test))
    print(
        f"Logistic regression on {len(X_train)} hand-made applicants "
        f"({y.mean():.0%} approved): balanced accuracy {accuracy:.3f} on "
        f"{len(X_test)} held out."
    )

    # ------------------------------------------------------------------ #
    # 5. The explainer
    # ------------------------------------------------------------------ #
    # fit learns each feature's kind, range and categories from the data (the
    # model is already fitted, so it is used as it is). immutable_features
    # guards against an action that would change the region by mistake.
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=make_actions(),
        feature_graph=make_graph(),
        immutable_features=["region"],
        population_size=args.population_size,
        n_generations=args.generations,
        n_jobs=args.n_jobs,
        random_state=args.seed,
    ).fit(X_train)

    rejected = pick_rejected(X_test, model.predict(X_test), args.n_instances, args.seed)
    if len(rejected) < args.n_instances:
        print(f"Only {len(rejected)} rejected applicants; explaining all of them.")
    print(
        f"Explaining {len(rejected)} rejected applicant(s) "
        f"(population {args.population_size}, {args.generations} generations)..."
    )
    # explanations: one row per step of each Pareto-optimal sequence, the
    # cheapest first; a "plan" is a set of actions, a "solution" one order of
    # it. states: every feature after every step (step 0 is the applicant as
    # they are), which shows the consequences (studying makes you older).
    explanations, states = explainer.explain(rejected, return_states=True)

    # show prints both as text: per applicant, the cheapest plans step by
    # step (every effort here is in years), each step's consequences, and the
    # probability of approval after each step.
    # (describe returns the same text as a string.)
    print()
    show(
        explanations,
        states,
        X=rejected,
        initial_proba=model.predict_proba(rejected)[:, 1],
        target_name="approved",
        max_plans=SHOWN_PER_PERSON,
        noun="Applicant",
    )
    print()

    explanations.to_csv(OUTPUT, index=False)
    counts = explanations["status"].value_counts().to_dict()
    print(
        f"Wrote {len(explanations)} rows to {OUTPUT} (statuses: {counts}) in "
        f"{time.perf_counter() - start:.1f} s."
    )


if __name__ == "__main__":
    main()

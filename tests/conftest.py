"""Shared fixtures: the paper's worked example and a small mixed-type credit
problem (numeric and categorical columns, a scikit-learn pipeline as the black
box, actions with directions, consequences and constraints, a feature graph).
"""

import os

import numpy as np
import pandas as pd
import pytest
from _line import OnDummies
from hypothesis import settings
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_cscf import Action, FeatureGraph, SequentialCounterfactualExplainer

# CI replays the same hypothesis examples on every run (a landing must not hinge
# on a random draw); local runs keep exploring new examples.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# ---------------------------------------------------------------------- #
# The worked example of METHOD.md (Fig. 2 of the paper)
# ---------------------------------------------------------------------- #
EDUCATION_LEVELS = ["HS", "BSc"]


class OnlyDeveloperBScUS:
    """A fitted black box (duck-typed, no ``get_params``) accepting only
    (Developer, BSc, US)."""

    classes_ = np.array([0, 1])

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        accepted = (
            (np.asarray(X["job"], dtype=object) == "Developer")
            & (np.asarray(X["education"], dtype=object) == "BSc")
            & (np.asarray(X["location"], dtype=object) == "US")
        ).astype(float)
        return np.column_stack([1.0 - accepted, accepted])

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(axis=1)]


def worked_frame(rows, index=None):
    """Rows of (job, education, location) as the worked example's DataFrame."""
    job, education, location = zip(*rows)
    return pd.DataFrame(
        {
            "job": list(job),
            "education": pd.Categorical(
                list(education), categories=EDUCATION_LEVELS, ordered=True
            ),
            "location": list(location),
        },
        index=index,
    )


@pytest.fixture(scope="session")
def make_worked_frame():
    """Builds worked-example frames: ``make_worked_frame(rows, index=None)``."""
    return worked_frame


@pytest.fixture(scope="session")
def worked_model():
    return OnlyDeveloperBScUS()


@pytest.fixture(scope="session")
def worked_X():
    """The instance x0 = (Seller, HS, Germany) and an accepted one."""
    return worked_frame([("Seller", "HS", "Germany"), ("Developer", "BSc", "US")])


@pytest.fixture(scope="session")
def worked_actions():
    return [
        Action("a1_job", "job", values="Developer", cost=lambda b, a: 10.0),
        Action("a2_education", "education", values="BSc", cost=lambda b, a: 5.0),
        Action("a3_location", "location", values="US", cost=lambda b, a: 15.0),
    ]


@pytest.fixture(scope="session")
def worked_graph():
    return (
        FeatureGraph()
        .add_edge(
            "location",
            "education",
            lambda x: np.where(x["location"] == "US", 1.0, 0.5),
        )
        .add_edge(
            "location",
            "job",
            lambda x: np.where(x["location"] == "US", 0.5, 1.0),
        )
        .add_edge(
            "education",
            "job",
            lambda x: np.where(np.isin(x["education"], ["BSc"]), 0.5, 1.0),
        )
    )


# ---------------------------------------------------------------------- #
# A small synthetic credit problem of mixed type
# ---------------------------------------------------------------------- #
CREDIT_EDUCATION = ["HS", "BSc", "MSc"]
CREDIT_NUMERIC = ["income", "debt", "age", "hours"]
CREDIT_CATEGORICAL = ["education", "housing", "region"]


def education_level(values):
    """Rank of each education label (HS=0, BSc=1, MSc=2)."""
    lookup = {label: k for k, label in enumerate(CREDIT_EDUCATION)}
    return np.array([lookup[v] for v in np.asarray(values, dtype=object)], float)


def make_credit_data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "income": rng.uniform(10.0, 150.0, n).round(1),
            "debt": rng.uniform(0.0, 80.0, n).round(1),
            "age": rng.integers(18, 71, n),
            "hours": rng.integers(10, 61, n),
            "education": rng.choice(CREDIT_EDUCATION, n),
            "housing": rng.choice(["rent", "own", "free"], n),
            "region": rng.choice(["north", "south", "east"], n),
        }
    )
    region = X["region"].map({"north": 0.5, "south": 0.0, "east": -0.5})
    score = (
        0.04 * X["income"]
        - 0.05 * X["debt"]
        + 0.8 * education_level(X["education"])
        + 1.0 * (X["housing"] == "own")
        + 0.03 * (X["hours"] - 40)
        + 0.02 * (X["age"] - 40)
        + region
        - 2.5
        + rng.normal(0.0, 0.3, n)
    )
    y = np.where(score > 0, "good", "bad")
    return X, y


def make_credit_pipeline():
    encode = ColumnTransformer(
        [
            ("numbers", StandardScaler(), CREDIT_NUMERIC),
            (
                "categories",
                OneHotEncoder(handle_unknown="ignore", sparse_output=False),
                CREDIT_CATEGORICAL,
            ),
        ]
    )
    return make_pipeline(encode, LogisticRegression(max_iter=1000))


@pytest.fixture(scope="session")
def credit_data():
    return make_credit_data()


@pytest.fixture
def credit_pipeline():
    """A fresh, unfitted copy of the credit black box."""
    return make_credit_pipeline()


@pytest.fixture(scope="session")
def credit_model(credit_data):
    X, y = credit_data
    return make_credit_pipeline().fit(X, y)


def _degree_cost(b, a):
    return 4.0 * (education_level(a["education"]) - education_level(b["education"]))


def _degree_age(b, a):
    gained = education_level(a["education"]) - education_level(b["education"])
    return b["age"] + 2.0 * gained


@pytest.fixture(scope="session")
def credit_actions():
    return [
        Action(
            "increase_income",
            "income",
            values=(0.0, 200.0),
            direction="increase",
            cost=lambda b, a: np.abs(a["income"] - b["income"]) / 10.0,
            precondition=lambda b: b["age"] < 65,
        ),
        Action(
            "reduce_debt",
            "debt",
            values=(0.0, 100.0),
            direction="decrease",
            cost=lambda b, a: np.abs(a["debt"] - b["debt"]) / 5.0,
            # at most 80 % of the debt can be paid back at once
            postcondition=lambda b, a: a["debt"] >= 0.2 * b["debt"],
        ),
        Action(
            "get_degree",
            "education",
            values=list(CREDIT_EDUCATION),
            direction="increase",
            cost=_degree_cost,
            effects={"age": _degree_age},
            postcondition=lambda b, a: a["age"] <= 72,
        ),
        Action(
            "buy_house",
            "housing",
            values="own",
            cost=lambda b, a: 8.0,
            precondition=lambda b: (b["income"] >= 40.0) & (b["housing"] != "own"),
        ),
        # value space learned in fit: observed range, whole hours
        Action("change_hours", "hours"),
    ]


@pytest.fixture(scope="session")
def credit_edges():
    """Edges ``(source, target, tau)`` of the credit feature graph."""
    return [
        (
            "education",
            "income",
            lambda x: np.where(x["education"] == "HS", 1.0, 0.6),
        ),
        (
            "hours",
            "income",
            lambda x: np.where(x["hours"] >= 40, 0.8, 1.0),
        ),
        (
            "income",
            "debt",
            lambda x: 1.0 - np.clip(x["income"] / 300.0, 0.0, 0.5),
        ),
    ]


@pytest.fixture(scope="session")
def credit_graph(credit_edges):
    return FeatureGraph(credit_edges)


@pytest.fixture(scope="session")
def credit_rejected(credit_data, credit_model):
    """A few rows of the credit data the model rejects."""
    X, _ = credit_data
    rejected = X[credit_model.predict(X) == "bad"]
    return rejected.iloc[:6]


@pytest.fixture(scope="session")
def credit_accepted(credit_data, credit_model):
    """A few rows of the credit data the model accepts."""
    X, _ = credit_data
    accepted = X[credit_model.predict(X) == "good"]
    return accepted.iloc[:3]


@pytest.fixture(scope="session")
def credit_compact_and_full(
    credit_data, credit_model, credit_actions, credit_graph, credit_rejected
):
    """The credit problem's rejected rows, compact and full."""
    X, _ = credit_data
    explainer = SequentialCounterfactualExplainer(
        credit_model,
        actions=credit_actions,
        feature_graph=credit_graph,
        immutable_features=["region"],
        population_size=40,
        n_generations=10,
        random_state=0,
    ).fit(X)
    compact_frame = explainer.explain(credit_rejected)
    full = explainer.set_params(max_plans=None, all_orders=True).explain(
        credit_rejected
    )
    explainer.set_params(max_plans=5, all_orders=False)
    return explainer, compact_frame, full


@pytest.fixture(scope="session")
def dummies_explained():
    """A duck-typed model taking one-hot columns, explained on 4 rows."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "income": rng.uniform(0, 100, 200),
            "debt": rng.uniform(0, 50_000, 200),
            "job": rng.choice(["clerk", "developer"], 200),
        }
    )
    y = ((X["income"] > 50) & (X["debt"] < 20_000)).astype(int)
    model = LogisticRegression(max_iter=2000).fit(pd.get_dummies(X, dtype=float), y)

    dummies = OnDummies(model)

    explainer = SequentialCounterfactualExplainer(
        dummies,
        actions=[
            Action("earn", "income", direction="increase"),
            Action("repay", "debt", direction="decrease"),
            Action("retrain", "job", values="developer"),
        ],
        population_size=40,
        n_generations=10,
        random_state=0,
        n_jobs=1,
    ).fit(X)
    rejected = X[dummies.predict(X) == 0].head(4)
    explanations, details = explainer.explain(rejected, return_details=True)
    assert (explanations["status"] == "ok").any()
    return explainer, rejected, explanations, details


@pytest.fixture(scope="session")
def line_data():
    """Accepted when income - debt is large: two numeric features."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {"income": rng.uniform(0, 100, 400), "debt": rng.uniform(0, 50, 400)}
    )
    y = (X["income"] - X["debt"] + rng.normal(0, 8, 400) > 40).astype(int)
    return X, y


@pytest.fixture(scope="session")
def logistic(line_data):
    return LogisticRegression().fit(*line_data)


@pytest.fixture(scope="session")
def fitted_line(line_data):
    """The line problem's explainer, fitted."""
    from _line import line_actions

    X, y = line_data
    return SequentialCounterfactualExplainer(
        LogisticRegression().fit(X, y),
        actions=line_actions(),
        population_size=40,
        n_generations=10,
        random_state=0,
    ).fit(X)


# ---------------------------------------------------------------------- #
# One explained frame of each kind of model: binary, multiclass, regressor
# ---------------------------------------------------------------------- #
@pytest.fixture(scope="session")
def kinds_explained(credit_compact_and_full, credit_model, credit_rejected):
    """``{kind: (explainer, rows, frame, states, now)}`` for a binary
    classifier (the credit problem), a three-class one (iris) and a
    regressor (diabetes, a range of its prediction); ``now`` is the model's
    probability of the target (or its prediction) for each row."""
    from sklearn.datasets import load_diabetes, load_iris
    from sklearn.linear_model import Ridge

    explainer, _, _ = credit_compact_and_full
    rows = credit_rejected.head(4)
    frame, states = explainer.explain(rows, return_states=True)
    now = pd.Series(credit_model.predict_proba(rows)[:, 1], index=rows.index)
    kinds = {"binary": (explainer, rows, frame, states, now)}

    iris = load_iris(as_frame=True)
    flowers = LogisticRegression(max_iter=2000).fit(iris.data, iris.target)
    grow = [
        Action("grow_petals", "petal length (cm)", direction="increase"),
        Action("widen_petals", "petal width (cm)", direction="increase"),
    ]
    explainer = SequentialCounterfactualExplainer(
        flowers, actions=grow, population_size=30, n_generations=8, random_state=0
    ).fit(iris.data)
    rows = iris.data.iloc[[0, 1, 50, 51]]
    frame, states = explainer.explain(rows, return_states=True)
    codes = flowers.predict(rows)  # "not" the class now
    now = pd.Series(1 - flowers.predict_proba(rows)[np.arange(4), codes], rows.index)
    kinds["multiclass"] = (explainer, rows, frame, states, now)

    diabetes = load_diabetes(as_frame=True)
    progression = Ridge(alpha=0.1).fit(diabetes.data, diabetes.target)
    explainer = SequentialCounterfactualExplainer(
        progression,
        actions=[
            Action("lose_weight", "bmi", direction="decrease"),
            Action("lower_blood_pressure", "bp", direction="decrease"),
        ],
        target_range=(-np.inf, 120.0),
        population_size=30,
        n_generations=8,
        random_state=0,
    ).fit(diabetes.data)
    rows = diabetes.data[progression.predict(diabetes.data) > 200].head(3)
    frame, states = explainer.explain(rows, return_states=True)
    now = pd.Series(progression.predict(rows), index=rows.index)
    kinds["regressor"] = (explainer, rows, frame, states, now)
    for kind, (*_, frame, _, _) in kinds.items():
        assert (frame["status"] == "ok").any(), kind
    return kinds

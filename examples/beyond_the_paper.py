"""Beyond the paper: plausible plans, plans with a margin, regressors, classes
============================================================================

Four things the CSCF paper does not do, each one parameter of the explainer:

1. ``plausibility=True`` adds an objective: how far the final state lies from
   real people the model accepts (the mean Gower distance to the nearest of
   them). The search then also keeps plans that end among such people, not
   only the cheapest jumps (a capital gain of 99,999, say).
2. ``min_target_proba=0.6`` asks for plans the model accepts with at least
   that probability: a plan that ends at P = 0.501 is undone by the smallest
   change of the model.
3. ``target_range=(low, high)`` explains a *regressor*: a plan is valid when
   the prediction of its final state lies in the range (here the diabetes
   data shipped with scikit-learn: what lowers the predicted disease
   progression below 120?).
4. ``target_class=[...]`` accepts any of several classes (here iris: from
   setosa to either other species).

On Adult (the main job's model and the paper's actions and graph) it prints,
for a few people, the cheapest plan and the most plausible plan reported with
each setting side by side: the steps, the cost, the probability of >50K at the
end and the plausibility (measured for every setting; lower is closer to
accepted people).

Run ``python examples/beyond_the_paper.py --help`` for the options; a small
budget (``--n-instances 3 --population-size 60 --generations 10``) finishes in
seconds.
"""

import argparse

import numpy as np
import pandas as pd
from sklearn.datasets import load_diabetes, load_iris
from sklearn.linear_model import LogisticRegression, Ridge
from threadpoolctl import threadpool_limits

from sklearn_cscf import Action, SequentialCounterfactualExplainer, describe
from sklearn_cscf._demo import SCENARIOS, add_search_options, pick_rejected, train

SETTINGS = {
    "default": {},
    "plausibility": {"plausibility": True},
    "margin 0.6": {"min_target_proba": 0.6},
    "both": {"plausibility": True, "min_target_proba": 0.6},
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Plausible plans, plans with a margin, a regressor and a "
        "set of classes."
    )
    add_search_options(parser, rows="people predicted to earn <=50K", n_instances=4)
    return parser.parse_args(argv)


def plan_text(steps):
    """``action old -> new; ...`` of one sequence."""
    return "; ".join(
        f"{s.action} {s.old_value} -> {s.new_value}" for s in steps.itertuples()
    )


def adult(args):
    scenario = SCENARIOS["adult"]
    with threadpool_limits(limits=1):
        model, (X_train, X_test, _, _) = train(scenario.load(), args.seed)
        rejected = pick_rejected(
            X_test, model.predict(X_test), args.n_instances, args.seed
        )
    rows = []
    for name, options in SETTINGS.items():
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
        frame = explainer.explain(rejected)
        measured = _measured_plausibility(explainer, frame, rejected, X_train)
        for label, steps in frame[frame["status"] == "ok"].groupby("instance"):
            solutions = steps["solution"].unique()
            scores = [measured[(label, s)] for s in solutions]
            picks = {
                "cheapest": solutions.min(),
                "most plausible": solutions[int(np.argmin(scores))],
            }
            for which, solution in picks.items():
                plan = steps[steps["solution"] == solution]
                rows.append(
                    {
                        "person": label,
                        "setting": name,
                        "plan": which,
                        "steps": plan_text(plan),
                        "cost": plan["sequence_cost"].iloc[0],
                        "P(>50K)": plan["target_proba"].iloc[-1],
                        "plausibility": measured[(label, solution)],
                    }
                )
    table = pd.DataFrame(rows).set_index(["person", "setting", "plan"])
    print(
        f"Adult: {len(rejected)} people the main job's model rejects; per setting "
        "of the explainer, each person's cheapest plan and the reported plan "
        "ending nearest to accepted people (plausibility: the mean Gower "
        "distance to the 5 nearest accepted training rows, lower is closer)."
    )
    with pd.option_context("display.width", 200, "display.max_colwidth", 70):
        print(table.round(3).to_string())
    print()


def _measured_plausibility(explainer, frame, rejected, X_train):
    """Plausibility of every reported sequence's final state, measured the
    way the objective does: the mean Gower distance to the 5 nearest of (up
    to 1,000) training rows the model accepts."""
    _, states = explainer.explain(rejected, return_states=True)
    finals = states.groupby(["instance", "solution"]).tail(1)
    accepted = X_train[explainer.estimator_.predict(X_train) == 1]
    accepted = accepted.sample(min(len(accepted), 1000), random_state=0)
    distance = np.zeros((len(finals), len(accepted)))
    for name in X_train.columns:
        a = finals[name].to_numpy()[:, None]
        b = accepted[name].to_numpy()[None, :]
        if name in explainer.feature_ranges_:
            low, high = explainer.feature_ranges_[name]
            distance += np.abs(a.astype(float) - b.astype(float)) / (high - low)
        else:
            distance += a.astype(object) != b.astype(object)
    nearest = np.sort(distance / X_train.shape[1], axis=1)[:, :5].mean(axis=1)
    return dict(zip(map(tuple, finals[["instance", "solution"]].to_numpy()), nearest))


def regressor(args):
    data = load_diabetes(as_frame=True)
    X, y = data.data, data.target
    model = Ridge(alpha=0.1).fit(X, y)
    actions = [
        Action("lose_weight", "bmi", direction="decrease"),
        Action("lower_blood_pressure", "bp", direction="decrease"),
        Action("lower_s5", "s5", direction="decrease"),
    ]
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=actions,
        target_range=(-np.inf, 120.0),
        target_margin=5.0,
        population_size=args.population_size,
        n_generations=args.generations,
        random_state=args.seed,
    ).fit(X)
    high = X[model.predict(X) > 200].iloc[: args.n_instances]
    frame = explainer.explain(high)
    ok = frame[(frame["status"] == "ok") & (frame["solution"] == 0)]
    print("Diabetes (a Ridge regressor): predicted progression below 115")
    print(
        ok[["instance", "step", "action", "old_value", "new_value", "prediction"]]
        .round(3)
        .to_string(index=False)
    )
    print()


def classes(args):
    data = load_iris(as_frame=True)
    X, y = data.data, data.target
    model = LogisticRegression(max_iter=2000).fit(X, y)
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=[
            Action("grow_petals", "petal length (cm)", direction="increase"),
            Action("widen_petals", "petal width (cm)", direction="increase"),
        ],
        target_class=[1, 2],  # versicolor or virginica
        population_size=args.population_size,
        n_generations=args.generations,
        random_state=args.seed,
    ).fit(X)
    setosa = X[model.predict(X) == 0].iloc[:1]
    print("Iris: from setosa to versicolor or virginica")
    print(describe(explainer.explain(setosa), X=setosa, max_plans=2, noun="Flower"))


def main(argv=None):
    args = parse_args(argv)
    adult(args)
    regressor(args)
    classes(args)


if __name__ == "__main__":
    main()

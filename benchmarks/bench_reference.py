"""The paper's own network: least sequence cost on its 100 Adult test instances.

The CSCF paper (and the authors' code) explain a pre-trained neural network
(87 one-hot and standardised inputs, two hidden ReLU layers of 50 units, a
softmax output) on 100 rejected Adult test instances. Those assets are not part
of the package; this benchmark reads them from ``--reference-dir`` (default:
``../shared/reference`` next to the repository), runs CSCF with the paper's
continuous Adult actions and graph at the paper's budget, and prints, per
instance, the least sequence cost and effort and the number of distinct
sequences of the whole front (``max_plans=None, all_orders=True,
all_values=True``, as the paper reports it).

``--save FILE`` writes the per-instance figures to a CSV; ``--compare FILE``
prints them beside an earlier run's (e.g. the engine before a change) and
counts the instances where this run is worse. The CSV of the engine as it was
before the lock-step engine is ``benchmarks/results/reference_before.csv``.

    python benchmarks/bench_reference.py [--n-instances 100] [--compare FILE]
"""

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn

import sklearn_cscf
from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf.datasets import adult_actions, adult_feature_graph, load_adult

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_REFERENCE = ROOT.parent / "shared" / "reference"
# the reference files' feature names -> the columns of load_adult
COLUMNS = {
    "Age": "age",
    "Workclass": "workclass",
    "Education num": "education_num",
    "Marital Status": "marital_status",
    "Occupation": "occupation",
    "Relationship": "relationship",
    "Race": "race",
    "Sex": "sex",
    "Capital Gain": "capital_gain",
    "Capital Loss": "capital_loss",
    "Hours/Week": "hours_per_week",
    "Native country": "native_country",
}
TOLERANCE = 1e-6  # relative: equal costs printed as equal


class ReferenceNetwork:
    """The paper's pre-trained Adult network, as a fitted duck-typed classifier.

    Rows are DataFrames with the columns of :data:`COLUMNS` (raw values);
    numeric inputs are standardised with the stored means and deviations and
    nominal ones one-hot encoded in the stored order.
    """

    classes_ = np.array([0, 1])

    def __init__(self, directory):
        features = json.loads((directory / "adult.features.json").read_text())
        mapping = json.loads((directory / "adult.mapping.json").read_text())
        self.features = [f for f in features if f["type"] != "class"]
        self.labels = {
            f["name"]: {code: text.strip() for text, code in mapping[f["name"]].items()}
            for f in self.features
            if f["type"] != "numeric"
        }
        weights = np.load(directory / "adult_mlp_weights.npz")
        self.layers = [(weights[f"W{k}"], weights[f"b{k}"]) for k in (1, 2, 3)]
        self.n_inputs = self.layers[0][0].shape[0]

    def __sklearn_is_fitted__(self):
        return True

    def encode(self, X):
        Z = np.zeros((len(X), self.n_inputs))
        for f in self.features:
            column = np.asarray(X[COLUMNS[f["name"]]])
            if f["type"] == "numeric":
                Z[:, f["idx"]] = (column.astype(float) - f["mean"]) / f["std"]
            else:
                column = column.astype(object)
                for k, code in enumerate(f["values"]):
                    Z[:, f["idx"] + k] = column == self.labels[f["name"]][code]
        return Z

    def predict_proba(self, X):
        h = self.encode(X)
        for W, b in self.layers[:-1]:
            h = np.maximum(h @ W + b, 0.0)
        W, b = self.layers[-1]
        out = h @ W + b
        out = np.exp(out - out.max(axis=1, keepdims=True))
        return out / out.sum(axis=1, keepdims=True)

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(axis=1)]

    def instances(self, directory):
        """The 100 reference instances as a DataFrame of raw values."""
        raw = np.loadtxt(directory / "adult_instances_100.csv", delimiter=",")
        data = {}
        for f in self.features:
            values = raw[:, f["i"]]
            if f["type"] != "numeric":
                labels = self.labels[f["name"]]
                values = [labels[int(v)] for v in values]
            data[COLUMNS[f["name"]]] = values
        return pd.DataFrame(data)


def reference_actions():
    """The paper's continuous Adult actions on the network's 12 columns.

    The network has no ``education`` label column, so ``add_education`` keeps
    only its consequence on age.
    """
    actions = adult_actions(continuous=True)
    for k, action in enumerate(actions):
        if action.effects and "education" in action.effects:
            effects = {t: fn for t, fn in action.effects.items() if t != "education"}
            actions[k] = action._replace(effects=effects)
    return actions


def training_rows(instances):
    """Adult rows in the network's columns, for the explainer's fit (ranges)."""
    data = load_adult().data
    return pd.DataFrame(
        {
            name: data[name].astype(object).to_numpy()
            if isinstance(data[name].dtype, pd.CategoricalDtype)
            else data[name].to_numpy(dtype=float)
            for name in instances.columns
        }
    )


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-dir", type=Path, default=DEFAULT_REFERENCE)
    parser.add_argument("--n-instances", type=int, default=100)
    parser.add_argument("--population-size", type=int, default=500)
    parser.add_argument("--generations", type=int, default=150)
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-graph", action="store_true", help="SCF instead")
    parser.add_argument("--save", type=Path, help="write per-instance figures")
    parser.add_argument("--compare", type=Path, help="an earlier --save file")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if not (args.reference_dir / "adult_mlp_weights.npz").is_file():
        raise SystemExit(
            f"No reference network in {args.reference_dir}; pass --reference-dir."
        )
    network = ReferenceNetwork(args.reference_dir)
    instances = network.instances(args.reference_dir).head(args.n_instances)
    explainer = SequentialCounterfactualExplainer(
        network,
        actions=reference_actions(),
        feature_graph=None if args.no_graph else adult_feature_graph(),
        population_size=args.population_size,
        n_generations=args.generations,
        n_jobs=args.n_jobs,
        random_state=args.seed,
        # the whole front, as the paper (and the engine before compaction)
        # reports it: the least effort may be a plan or order not shown else
        max_plans=None,
        all_orders=True,
        all_values=True,
    ).fit(training_rows(instances))
    start = time.perf_counter()
    frame = explainer.explain(instances)
    wall = time.perf_counter() - start

    ok = frame[frame["status"] == "ok"]
    per_solution = ok.groupby(["instance", "solution"]).first()
    summary = pd.DataFrame(
        {
            "status": frame.groupby("instance")["status"].first(),
            "least_cost": per_solution.groupby(level=0)["sequence_cost"].min(),
            "least_effort": per_solution.groupby(level=0)["sequence_effort"].min(),
            "n_sequences": per_solution.groupby(level=0).size(),
        }
    ).reindex(instances.index)
    summary.index.name = "instance"

    print(
        f"sklearn-cscf {sklearn_cscf.__version__}, scikit-learn "
        f"{sklearn.__version__}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPU(s), n_jobs={args.n_jobs}"
    )
    print(
        f"The paper's Adult network, {len(instances)} reference instances, "
        f"{'SCF' if args.no_graph else 'CSCF'}, population "
        f"{args.population_size}, {args.generations} generations: "
        f"{wall:.1f} s wall."
    )
    solved = summary["status"].eq("ok")
    print(
        f"solved {solved.mean():.0%}; least cost median "
        f"{summary['least_cost'].median():.3f}, mean "
        f"{summary['least_cost'].mean():.3f}; sequences per instance median "
        f"{summary['n_sequences'].median():.0f}"
    )
    if args.save:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        summary.to_csv(args.save)
        print(f"wrote {args.save}")
    if args.compare:
        before = pd.read_csv(args.compare, index_col="instance")
        both = summary.merge(
            before, left_index=True, right_index=True, suffixes=("", "_before")
        )
        for what in ("least_cost", "least_effort"):
            now, then = both[what], both[f"{what}_before"]
            slack = TOLERANCE * np.maximum(then.abs(), 1.0)
            worse = (now > then + slack) | (now.isna() & then.notna())
            better = now < then - slack
            print(
                f"{what}: better on {int(better.sum())}, equal on "
                f"{int((~worse & ~better).sum())}, worse on {int(worse.sum())} "
                f"of {len(both)} instances; median ratio "
                f"{(now / then).median():.4f}, worst ratio {(now / then).max():.4f}"
            )
            if worse.any():
                print(both.loc[worse, [what, f"{what}_before"]].to_string())


if __name__ == "__main__":
    main()

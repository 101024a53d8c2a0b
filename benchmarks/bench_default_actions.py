"""What ``actions=None`` costs: one action per feature against a few declared.

scikit-learn's breast cancer data (30 numeric features) and a
``HistGradientBoostingClassifier`` (seeded), the first ``--n-instances`` rows
the model rejects (class 0, "malignant"; the target is class 1). Each row is
explained twice, at the default settings (``random_state=0``, ``n_jobs=1``,
one BLAS thread):

- ``actions=None``: 30 ``set_<feature>`` actions, ``make_actions``' defaults;
- 8 declared actions: ``make_actions(X, FEATURES)`` on the eight features
  below, the others left as they are.

Printed per setting: CPU seconds per row (``time.process_time``, which a
loaded machine changes less than wall time), rows solved (status ``"ok"``)
and the mean cost of each solved row's cheapest plan.

    python benchmarks/bench_default_actions.py [--n-instances 15]
"""

import argparse
import os
import platform
import time

import numpy as np
import pandas as pd
import sklearn
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

import sklearn_cscf
from sklearn_cscf import SequentialCounterfactualExplainer, make_actions

FEATURES = [
    "mean texture",
    "mean concavity",
    "mean concave points",
    "worst radius",
    "worst texture",
    "worst area",
    "worst concavity",
    "worst concave points",
]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-instances", type=int, default=15)
    return parser.parse_args(argv)


def run(model, X, rows, actions):
    """``(CPU s per row, rows solved, mean cheapest cost)`` of one setting."""
    explainer = SequentialCounterfactualExplainer(
        model, actions=actions, target_class=1, n_jobs=1, random_state=0
    ).fit(X)
    start = time.process_time()
    frame = explainer.explain(rows)
    seconds = (time.process_time() - start) / len(rows)
    ok = frame[frame["status"] == "ok"]
    cheapest = ok.groupby("instance")["sequence_cost"].min()
    return seconds, cheapest.size, float(cheapest.mean())


def main(argv=None):
    args = parse_args(argv)
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    model = HistGradientBoostingClassifier(random_state=0).fit(X, y)
    rows = X[model.predict(X) == 0].head(args.n_instances)
    print(
        f"sklearn-cscf {sklearn_cscf.__version__}, scikit-learn {sklearn.__version__}, "
        f"pandas {pd.__version__}, numpy {np.__version__}, Python "
        f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPU(s); "
        "n_jobs=1, one BLAS thread"
    )
    print(
        f"breast cancer, HistGradientBoostingClassifier, {len(rows)} rejected rows, "
        "default settings"
    )
    print(f"{'actions':<22} {'CPU s per row':>14} {'solved':>8} {'mean cost':>10}")
    settings = {
        "None (30 features)": None,
        f"{len(FEATURES)} declared": make_actions(X, FEATURES),
    }
    for name, actions in settings.items():
        with threadpool_limits(limits=1):
            seconds, solved, cost = run(model, X, rows, actions)
        print(f"{name:<22} {seconds:>14.2f} {solved:>5} / {len(rows):<2} {cost:>9.2f}")


if __name__ == "__main__":
    main()

"""What ``plausibility=True`` costs: ``explain`` with and without it.

The README's Usage data (``make_credit_applicants(2000, random_state=0)``, a
one-hot and scaled logistic regression), the built-in ``credit_actions()``
and ``credit_feature_graph()``, the first three rows the model rejects, the
explainer's defaults otherwise (``random_state=0``, ``n_jobs=1``, one BLAS
thread). Printed: CPU seconds of ``explain`` (``time.process_time``; no
training, no fit) without and with the plausibility objective, alternated,
``--repeats`` times each.

    python benchmarks/bench_plausibility.py [--repeats 2]
"""

import argparse
import time

from bench_memory import usage_model
from threadpoolctl import threadpool_limits

from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf.datasets import (
    credit_actions,
    credit_feature_graph,
    make_credit_applicants,
)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    applicants = make_credit_applicants(2000, random_state=0)
    X, y = applicants.data, applicants.target
    model = usage_model(X, y)
    rows = X[model.predict(X) == 0].head(3)
    seconds = {False: [], True: []}
    with threadpool_limits(1):
        for _ in range(args.repeats):
            for plausibility in (False, True):
                explainer = SequentialCounterfactualExplainer(
                    model,
                    actions=credit_actions(),
                    feature_graph=credit_feature_graph(),
                    plausibility=plausibility,
                    n_jobs=1,
                    random_state=0,
                ).fit(X)
                start = time.process_time()
                explainer.explain(rows)
                seconds[plausibility].append(time.process_time() - start)
    for plausibility, times in seconds.items():
        print(
            f"plausibility={plausibility!s:5}  explain of 3 rows: "
            + ", ".join(f"{t:.2f}" for t in times)
            + " CPU s"
        )


if __name__ == "__main__":
    main()

"""sklearn-cscf: consequence-aware sequential counterfactuals for scikit-learn.

Tells a person rejected by a classifier what to do, and in which order, to be
accepted: ordered sequences of actions with their costs and consequences,
the cheapest first (Naumann & Ntoutsi, ECML PKDD 2021).

The public surface:

- :class:`SequentialCounterfactualExplainer`: the estimator.
- :class:`Action`: an action, its value space, cost, consequences, constraints.
- :func:`make_actions`: one action per feature from a few DiCE-style
  declarations (features to vary, permitted ranges, directions, per-unit
  costs, orders of categories), with scale-aware default costs.
- :class:`FeatureGraph`: feature relationships giving consequential discounts.
- :mod:`sklearn_cscf.datasets`: the UCI Adult and German Credit data with the
  paper's actions and graph, and a synthetic problem.
- :func:`describe` and :func:`show`: the explanations as text, person by
  person, step by step; :func:`write_explanations` and
  :func:`read_explanations` save a frame and read it back with its types.
- :mod:`sklearn_cscf.metrics`: how good the explanations are (validity, cost,
  length, diversity, time) and a scorer to tune the search with grid search.
- :func:`choose_plan` and :func:`summarize_recourse`: one plan per person
  (the knee of the front, weights, or the cheapest), and what the chosen
  plans of many people have in common.
- :func:`replay`: re-applies every reported sequence from scratch and checks
  each step (values, conditions, costs, the model's verdicts).
- :mod:`sklearn_cscf.plotting`: plots of the explanations (needs matplotlib).
- :func:`dask_worker_environment`: an opt-in Dask configuration whose
  workers allocate as fast as joblib's.
- ``python -m sklearn_cscf``: the command-line demo.
"""

import importlib

from sklearn_cscf._version import __version__

# Public names are imported on first use (PEP 562): a worker process, which
# imports this package to unpickle its task, then loads only the modules the
# search needs, not the datasets, metrics, plotting, replay or reporting.
# ``from sklearn_cscf import *``, ``dir(sklearn_cscf)`` and ``import
# sklearn_cscf.datasets`` work as before.
# public modules, attributes of the package as if imported
_SUBMODULES = {
    "actions",
    "datasets",
    "graph",
    "metrics",
    "plotting",
    "reporting",
    "selection",
}
_LAZY = {  # public name -> the module defining it
    "Action": "sklearn_cscf.actions",
    "FeatureGraph": "sklearn_cscf.graph",
    "SequentialCounterfactualExplainer": "sklearn_cscf._explainer",
    "choose_plan": "sklearn_cscf.selection",
    "dask_worker_environment": "sklearn_cscf._workers",
    "describe": "sklearn_cscf.reporting",
    "make_actions": "sklearn_cscf._make_actions",
    "read_explanations": "sklearn_cscf.reporting",
    "replay": "sklearn_cscf._replay",
    "show": "sklearn_cscf.reporting",
    "summarize_recourse": "sklearn_cscf.selection",
    "write_explanations": "sklearn_cscf.reporting",
}


__all__ = [
    "Action",
    "FeatureGraph",
    "SequentialCounterfactualExplainer",
    "__version__",
    "choose_plan",
    "dask_worker_environment",
    "datasets",
    "describe",
    "make_actions",
    "metrics",
    "plotting",
    "read_explanations",
    "replay",
    "show",
    "summarize_recourse",
    "write_explanations",
]


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"sklearn_cscf.{name}")
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # looked up once
        return value
    raise AttributeError(f"module 'sklearn_cscf' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__) | _SUBMODULES)

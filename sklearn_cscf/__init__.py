"""sklearn-cscf: consequence-aware sequential counterfactuals for scikit-learn.

Tells a person rejected by a classifier what to do, and in which order, to be
accepted: ordered sequences of actions with their costs and consequences,
the cheapest first (Naumann & Ntoutsi, ECML PKDD 2021).

The public surface:

- :class:`SequentialCounterfactualExplainer`: the estimator.
- :class:`Action`: an action, its value space, cost, consequences, constraints.
- :class:`FeatureGraph`: feature relationships giving consequential discounts.
- :mod:`sklearn_cscf.datasets`: built-in problems with their actions and graphs.
"""

from sklearn_cscf import datasets
from sklearn_cscf._explainer import SequentialCounterfactualExplainer
from sklearn_cscf.actions import Action
from sklearn_cscf.graph import FeatureGraph

__version__ = "0.1.0.dev0"

__all__ = [
    "Action",
    "FeatureGraph",
    "SequentialCounterfactualExplainer",
    "__version__",
    "datasets",
]

"""Built-in problems: data, the actions people can take, and feature graphs.

- :func:`load_adult` and :func:`load_german_credit`: the UCI Adult (Census
  Income) and German Credit data sets, shipped with the package (CC BY 4.0).
- :func:`adult_actions`, :func:`adult_feature_graph` and
  :func:`german_actions`: the actions and the feature graph of the CSCF
  paper's experiments on them.
- :func:`make_credit_applicants`: a synthetic mixed-type loan-approval problem,
  with :func:`credit_actions` and :func:`credit_feature_graph` (used by the
  quickstart example and the runtime benchmark).
"""

from sklearn_cscf.datasets._paper import (
    adult_actions,
    adult_feature_graph,
    german_actions,
)
from sklearn_cscf.datasets._synthetic import (
    credit_actions,
    credit_feature_graph,
    make_credit_applicants,
)
from sklearn_cscf.datasets._uci import load_adult, load_german_credit

__all__ = [
    "adult_actions",
    "adult_feature_graph",
    "credit_actions",
    "credit_feature_graph",
    "german_actions",
    "load_adult",
    "load_german_credit",
    "make_credit_applicants",
]

"""Built-in problems: data, the actions people can take, and feature graphs.

- :func:`make_credit_applicants`: a synthetic mixed-type loan-approval problem,
  with :func:`credit_actions` and :func:`credit_feature_graph` (used by the
  quickstart example and the runtime benchmark).
"""

from sklearn_cscf.datasets._synthetic import (
    credit_actions,
    credit_feature_graph,
    make_credit_applicants,
)

__all__ = [
    "credit_actions",
    "credit_feature_graph",
    "make_credit_applicants",
]

"""How good a set of explanations is, and scorers to tune the search with.

Metrics read the frames that
:meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain` returns
(``explain(X, return_details=True)``), and work as well on a frame read back
from CSV:

- :func:`validity`: the share of the rows needing recourse that got a
  sequence;
- :func:`mean_sequence_cost` and :func:`mean_sequence_length`: the cost and
  number of steps of each solved row's least-cost sequence, averaged;
- :func:`diversity`: how many different plans (sets of actions) each solved
  row got, or how different they are;
- :func:`seconds_per_row`: the search time per row needing recourse (CPU
  seconds; ``clock="wall"`` for wall-clock ones);
- :func:`combined_score`: validity minus weighted, normalised cost and time,
  one number to choose by.

:class:`ExplanationScorer` is a scikit-learn scorer, ``scorer(explainer, X,
y=None)``: it explains ``X`` once and returns all these scores as a dict
(greater is better: cost, length and time are negated), or one of them.
With :class:`~sklearn.model_selection.GridSearchCV`, pass it as ``scoring=``
and a score's name as ``refit=``.

A row *needs recourse* when its status is not ``"already_target"``; it is
*solved* when its status is ``"ok"``. Any other status (``"no_counterfactual"``,
``"unreachable"``, ``"error"``) is a row needing recourse without a sequence.
"""

from sklearn_cscf.metrics._metrics import (
    combined_score,
    diversity,
    mean_sequence_cost,
    mean_sequence_length,
    seconds_per_row,
    validity,
)
from sklearn_cscf.metrics._scorer import ExplanationScorer

__all__ = [
    "ExplanationScorer",
    "combined_score",
    "diversity",
    "mean_sequence_cost",
    "mean_sequence_length",
    "seconds_per_row",
    "validity",
]

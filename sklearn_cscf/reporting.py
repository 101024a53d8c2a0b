"""The explanations as text for people: what each person can do, step by step.

- :func:`describe`: the text of every instance of an explanations frame (its
  profile, the probability of the target class now, its cheapest plans step by
  step with their consequences), as a string.
- :func:`show`: prints it.
- :func:`write_explanations` and :func:`read_explanations`: save a frame
  (CSV or parquet) and read it back with its column and label types.
"""

from sklearn_cscf._reporting import (
    describe,
    read_explanations,
    show,
    write_explanations,
)

__all__ = ["describe", "read_explanations", "show", "write_explanations"]

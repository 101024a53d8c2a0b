"""The private parts of scikit-learn this package relies on, in one place.

scikit-learn keeps its declarative parameter validation and a few helpers in
private modules. They are imported here only, so that a change in a new
scikit-learn release is mended in this one file (imbalanced-learn does the
same in ``imblearn/utils/_sklearn_compat.py``). Its names drop the leading
underscore: no module of the package imports another's private names.
Supported: scikit-learn 1.6 and later.
"""

import numpy as np
from sklearn.base import _fit_context as fit_context
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    InvalidParameterError,
    StrOptions,
    validate_parameter_constraints,
    validate_params,
)
from sklearn.utils.validation import (
    _check_feature_names_in as check_feature_names_in,
)


class StrictInterval(Interval):
    """scikit-learn's ``Interval`` refusing booleans: to Python ``True`` is
    the int 1 (and a real number), so ``max_sequence_length=True`` would
    read as 1. Where a boolean means something, list ``"boolean"`` beside
    it."""

    def is_satisfied_by(self, val):
        if isinstance(val, bool | np.bool_):
            return False
        return super().is_satisfied_by(val)


__all__ = [
    "HasMethods",
    "Interval",
    "InvalidParameterError",
    "StrOptions",
    "StrictInterval",
    "check_feature_names_in",
    "fit_context",
    "validate_parameter_constraints",
    "validate_params",
]

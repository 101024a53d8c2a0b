"""A model fitted without feature names (on an array, e.g. ``X.values``) and
explained on a DataFrame: scikit-learn warns "X has feature names, but ...
was fitted without feature names" at each of its calls. The explainer says
it once, at ``fit``, in its own words, and silences the per-call warning
around its model calls (in every worker:
:class:`~sklearn_cscf._engine._model.ModelAdapter` does it)."""

import warnings
from contextlib import contextmanager


def fitted_without_names(estimator):
    """Whether a fitted scikit-learn model saw no column names in its ``fit``
    (an array, e.g. ``X.values``): it counts its features but has no
    ``feature_names_in_``."""
    try:
        counted = hasattr(estimator, "n_features_in_")
        named = hasattr(estimator, "feature_names_in_")
    except Exception:  # a property that fails for its own reasons
        return False
    return counted and not named


@contextmanager
def quiet_names(quiet):
    """Silence scikit-learn's "X has feature names, but ... was fitted
    without feature names" (said once, at ``fit``, by
    :func:`warn_fitted_without_names`) when ``quiet``."""
    if not quiet:
        yield
        return
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="X has feature names", category=UserWarning
        )
        yield


def warn_fitted_without_names(estimator, X, stacklevel):
    """One warning, at ``fit``, for a model fitted without feature names and
    explained on a frame with named columns; True when it applies (the model
    calls then keep scikit-learn's per-call warning quiet)."""
    if not fitted_without_names(estimator):
        return False
    names = list(getattr(X, "columns", []))  # an array has no names
    if not names or not all(isinstance(name, str) for name in names):
        return False
    shown = ", ".join(repr(name) for name in names[:5])
    more = f", ... ({len(names)} in all)" if len(names) > 5 else ""
    warnings.warn(
        f"The estimator {type(estimator).__name__} was fitted without feature "
        "names (on an array, e.g. X.values) and is asked about the columns of "
        f"X by position, in their order here: {shown}{more}. Make sure that "
        "is the order it was fitted with (or fit it on the DataFrame). "
        "scikit-learn's 'X has feature names' warning on each of its calls "
        "is not repeated.",
        UserWarning,
        stacklevel=stacklevel + 1,
    )
    return True

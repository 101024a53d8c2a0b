"""Objectives of Eq. 3: sequence cost, Gower distance, tweak counts."""

import numpy as np


def gower_distance(x0, states, schema):
    """Gower distance between the instance and each state.

    Numeric features contribute ``|diff| / range`` (the range learned in
    ``fit``; it can exceed 1 for values outside that range), categorical
    features a 0/1 mismatch; a missing value differs from any value. The
    contributions are averaged over all features.

    Parameters
    ----------
    x0 : ndarray of shape (n_features,)
        Encoded instance.
    states : ndarray of shape (n, n_features)
        Encoded states.
    schema : FeatureSchema

    Returns
    -------
    ndarray of shape (n,)
    """
    span = schema.span
    inverse_span = np.divide(
        1.0, span, out=np.zeros_like(span), where=~np.isnan(span) & (span > 0)
    )
    diff = states - x0
    with np.errstate(invalid="ignore"):
        contribution = np.where(
            schema.is_categorical, diff != 0, np.abs(diff) * inverse_span
        )
    missing_state = np.isnan(states)
    missing_x0 = np.isnan(x0)
    if missing_state.any() or missing_x0.any():
        contribution = np.where(
            missing_state | missing_x0, missing_state != missing_x0, contribution
        )
    return contribution.mean(axis=1)


def affect_matrix(actions, n_features):
    """``M[i, h] = 1`` when action ``i`` changes feature ``h``."""
    matrix = np.zeros((len(actions), n_features))
    for i, action in enumerate(actions):
        matrix[i, action.affects] = 1.0
    return matrix


def tweak_counts(order, affects):
    """How many steps of each sequence changed each feature.

    Parameters
    ----------
    order : ndarray of shape (n, n_actions)
        Action indices in order, padded with ``-1``.
    affects : ndarray of shape (n_actions, n_counted_features)
        Which features each action changes.

    Returns
    -------
    ndarray of shape (n, n_counted_features)
    """
    n, n_actions = order.shape
    used = np.zeros((n, n_actions + 1))
    used[np.arange(n)[:, None], order] = 1.0  # -1 lands in the spare column
    return used[:, :n_actions] @ affects

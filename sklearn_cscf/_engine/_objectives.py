"""Objectives of Eq. 3 as named objects: sequence cost, Gower distance, tweaks.

An :class:`Objective` is a name and a vectorised function of the evaluated
candidates (their start states and
:class:`~sklearn_cscf._engine._simulation.Trajectories`)
returning one value per candidate, or one column per sub-objective. All are
minimised. The search sees the stacked matrix; everything downstream finds an
objective's columns by name (:func:`objective_slices`, e.g.
``problem.slices["gower_distance"]``; a result's values in
``InstanceResult.objectives["gower_distance"]``).
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from sklearn_cscf._engine._workspace import Workspace

# features changed by actions beyond which the tweak counts are one column
MAX_TWEAK_COLUMNS = 32


@dataclass(frozen=True)
class Objective:
    """A named objective to minimise.

    Parameters
    ----------
    name : str
        The objective's name, e.g. ``"sequence_cost"``.
    function : callable
        ``function(candidates) -> ndarray`` of shape ``(n,)``, or ``(n, k)``
        for an objective made of ``k`` columns.
    columns : tuple of str, default=None
        Names of the columns of a multi-column objective; ``None``: one column
        named ``name``.
    """

    name: str
    function: Callable
    columns: tuple | None = None

    @property
    def width(self):
        return 1 if self.columns is None else len(self.columns)


@dataclass
class Candidates:
    """What an objective sees: each candidate's start state and trajectory."""

    starts: np.ndarray  # (n, d) encoded instance of each candidate
    paths: object  # Trajectories
    codes: np.ndarray | None = None  # (n,) target code of each candidate
    # where the objectives keep their work arrays (valid until its next use);
    # None: fresh arrays
    work: Workspace | None = None


def evaluate_objectives(objectives, candidates):
    """The objective matrix ``F`` of shape ``(n, sum of widths)`` (kept in
    ``candidates.work`` when it has one)."""
    n = candidates.starts.shape[0]
    width = sum(objective.width for objective in objectives)
    work = Workspace() if candidates.work is None else candidates.work
    F = work.empty("F", (n, width))
    for objective, columns in zip(objectives, objective_slices(objectives).values()):
        values = np.asarray(objective.function(candidates), dtype=float)
        F[:, columns] = values.reshape(n, objective.width)
    return F


def objective_slices(objectives):
    """``{name: slice}`` of each objective's columns in ``F``."""
    slices, start = {}, 0
    for objective in objectives:
        slices[objective.name] = slice(start, start + objective.width)
        start += objective.width
    return slices


def default_objectives(schema, actions, plausibility=None):
    """Eq. 3: sequence cost, Gower distance and the tweak count of each feature
    some action changes; and, when given, a :class:`Plausibility`.

    Beyond ``MAX_TWEAK_COLUMNS`` features changed by actions, the tweak counts
    are aggregated into one column, the total number of feature changes (the
    sum of the per-feature counts): non-dominated sorting compares every pair
    of candidates on every objective, and one column per feature made wide
    data (hundreds of features with actions) slow and then impossible.
    """
    affects = affect_matrix(actions, schema.n_features)
    counted = np.flatnonzero(affects.any(axis=0))
    affects = affects[:, counted]
    columns = tuple(f"tweaks[{schema.names[j]}]" for j in counted)
    if counted.size > MAX_TWEAK_COLUMNS:
        affects = affects.sum(axis=1, keepdims=True)
        columns = ("tweaks[total]",)
    return [
        Objective("sequence_cost", _sequence_cost),
        Objective("gower_distance", partial(_gower_distance, schema=schema)),
        Objective(
            "tweak_counts",
            partial(_tweak_counts, affects=affects),
            columns=columns,
        ),
        *([Objective("plausibility", plausibility)] if plausibility else []),
    ]


# module-level functions (with partial) keep the objectives picklable
def _sequence_cost(candidates):
    return candidates.paths.sequence_cost


def _gower_distance(candidates, schema):
    return gower_distance(
        candidates.starts, candidates.paths.final, schema, candidates.work
    )


def _tweak_counts(candidates, affects):
    return tweak_counts(candidates.paths.order, affects, candidates.work)


def gower_distance(x0, states, schema, work=None):
    """Gower distance between instances and states.

    Numeric features contribute ``|diff| / range`` (the range learned in
    ``fit``; it can exceed 1 for values outside that range), categorical
    features a 0/1 mismatch; a missing value differs from any value. The
    contributions are averaged over all features. A contribution that would
    overflow (a range below the smallest normal float) is capped, so the
    distance is always finite.

    Parameters
    ----------
    x0 : ndarray of shape (n_features,) or (n, n_features)
        Encoded instance, or one per state.
    states : ndarray of shape (n, n_features)
        Encoded states.
    schema : FeatureSchema
    work : Workspace, default=None
        Where the work arrays and the result are kept; ``None``: fresh
        arrays.

    Returns
    -------
    ndarray of shape (n,)
    """
    work = Workspace() if work is None else work
    parts = _gower_parts(states, x0, schema.span, schema.is_categorical, work)
    return np.mean(parts, axis=1, out=work.empty("gower", parts.shape[0]))


def _gower_parts(a, b, span, categorical, work=None):
    """Per-feature Gower contributions of ``a`` against ``b`` (broadcast, the
    features last): ``|a - b| / span`` for numbers (0 for a constant
    feature), a 0/1 mismatch for categories, and 1 where exactly one side is
    missing. With a :class:`~sklearn_cscf._engine._workspace.Workspace` ``work``, the
    work arrays and the result come from it."""
    work = Workspace() if work is None else work
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    scaled = ~np.isnan(span) & (span > 0) & ~categorical
    # divided, not multiplied by 1 / span, which overflows for a span below
    # the smallest normal float; a quotient that still overflows (a span of
    # 1e-313 and a step of 1) is capped so that the mean over the features
    # stays finite: an infinite objective would tie every such plan and hide
    # which dominates which
    cap = np.finfo(float).max / (4 * max(shape[-1], 1)) if shape else np.inf
    part = work.full("gower_parts", shape, 0.0)
    difference = work.empty("gower_difference", shape)
    flags = work.empty("gower_flags", shape, bool)
    with np.errstate(invalid="ignore", over="ignore"):
        np.subtract(a, b, out=difference)
        np.abs(difference, out=difference)
        np.divide(difference, span, out=part, where=scaled)
        np.minimum(part, cap, out=part)
        # categories: the 0/1 mismatch
        np.copyto(part, np.not_equal(a, b, out=flags), where=categorical)
    missing_a = np.isnan(a, out=work.empty("gower_missing_a", np.shape(a), bool))
    missing_b = np.isnan(b, out=work.empty("gower_missing_b", np.shape(b), bool))
    if missing_a.any() or missing_b.any():
        # exactly one side missing: 1; both: 0
        np.copyto(part, np.not_equal(missing_a, missing_b, out=flags), where=missing_a)
        np.copyto(part, np.not_equal(missing_a, missing_b, out=flags), where=missing_b)
    return part


def affect_matrix(actions, n_features):
    """``M[i, h] = 1`` when action ``i`` changes feature ``h``."""
    matrix = np.zeros((len(actions), n_features))
    for i, action in enumerate(actions):
        matrix[i, action.affects] = 1.0
    return matrix


def tweak_counts(order, affects, work=None):
    """How many steps of each sequence changed each feature.

    Parameters
    ----------
    order : ndarray of shape (n, n_actions)
        Action indices in order, padded with ``-1``.
    affects : ndarray of shape (n_actions, n_counted_features)
        Which features each action changes.
    work : Workspace, default=None
        Where the work arrays and the result are kept; ``None``: fresh
        arrays.

    Returns
    -------
    ndarray of shape (n, n_counted_features)
    """
    work = Workspace() if work is None else work
    n, n_actions = order.shape
    used = work.full("used", (n, n_actions + 1), 0.0)
    # -1 lands in the spare column
    used[work.arange(n)[:, None], order] = 1.0
    # 0/1 sums: exact in any order, so a BLAS product is safe here
    out = work.empty("tweaks", (n, affects.shape[1]))
    return np.matmul(used[:, :n_actions], affects, out=out)


class Plausibility:
    """How far a final state lies from real data that reaches the target.

    The mean Gower distance from the state to its ``k`` nearest reference
    rows (rows of the training data, up to ``max_rows`` drawn once in
    ``fit``) that the model assigns to the state's target (the class, the
    classes, the range). Only the features some action changes differ
    between a candidate and its instance, so the distance splits into a part
    computed once per instance and a part over those features. Rows with no
    reference row for their target get 1, the largest Gower distance.

    Parameters
    ----------
    schema : FeatureSchema
    reference : ndarray of shape (n_rows, n_features)
        Encoded reference rows.
    accepted : dict
        ``{code: bool mask}`` of the reference rows that reach each target
        code.
    changed : array-like of int
        The features some action changes.
    k : int
        Neighbours averaged.
    """

    def __init__(self, schema, reference, accepted, changed, k):
        self.schema = schema
        self.reference = reference
        self.accepted = accepted
        self.changed = np.asarray(changed, dtype=np.intp)
        self.k = k
        self._rows = {}

    def _rows_for(self, code):
        if code not in self._rows:
            self._rows[code] = self.reference[self.accepted[code]]
        return self._rows[code]

    def __call__(self, candidates):
        starts, final = candidates.starts, candidates.paths.final
        codes = candidates.codes
        n, d = final.shape
        out = np.ones(n)
        unchanged = np.setdiff1d(np.arange(d), self.changed)
        # candidates of one instance share a start and a code
        keys = np.column_stack([codes, starts])
        _, group = np.unique(keys, axis=0, return_inverse=True)
        for g in np.unique(group):
            rows = np.flatnonzero(group == g)
            reference = self._rows_for(int(codes[rows[0]]))
            if reference.shape[0] == 0:
                continue
            base = _contributions(
                starts[rows[0]][None, unchanged],
                reference[:, unchanged],
                self.schema,
                unchanged,
            ).sum(axis=-1)[0]
            states, inverse = np.unique(
                final[rows][:, self.changed], axis=0, return_inverse=True
            )
            near = (
                _contributions(
                    states, reference[:, self.changed], self.schema, self.changed
                ).sum(axis=-1)
                + base
            ) / d
            k = min(self.k, reference.shape[0])
            nearest = np.partition(near, k - 1, axis=1)[:, :k].mean(axis=1)
            out[rows] = nearest[inverse.ravel()]
        return out


def _contributions(states, reference, schema, columns):
    """Gower contributions ``(n_states, n_reference, n_columns)`` of ``columns``."""
    return _gower_parts(
        states[:, None, :],
        reference[None, :, :],
        schema.span[columns],
        schema.is_categorical[columns],
    )

"""Explaining many rows: the output built piece by piece.

Each finished block becomes a :class:`Piece` of the output at once (its rows
of the frame, of the states, of the details, and the state ``transform``
reports), so the search's working memory never piles up over the rows. With a
checkpoint (:mod:`~sklearn_cscf._checkpoints`), the numbers each piece is
built from are also saved as soon as it is done; a rerun with the same
explainer and rows rebuilds those pieces and searches only the rest. A row's
result depends only on the row and the seed, so the resumed output is the
uninterrupted one.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sklearn_cscf._frames import build_details, build_frame, build_states
from sklearn_cscf._result import compact
from sklearn_cscf._status import STATUS_ALREADY_TARGET, STATUS_OK


@dataclass
class Output:
    """How results become output rows."""

    schema: object  # FeatureSchema
    actions: list  # CompiledAction
    targets: object  # the name of each target code (an array of labels)
    reported: str = "target_proba"  # the column of the score after a step
    objectives: tuple = ()  # extra objectives reported as columns
    max_plans: int | None = None
    all_orders: bool = True
    classes: object = None  # the model's classes (None: a regressor)
    margin: object = None  # the target's margin_of(scores, codes)


@dataclass
class Piece:
    """The output of some rows, ready to be put in input order."""

    positions: np.ndarray  # input position of each of its rows
    frame: pd.DataFrame
    frame_rows: np.ndarray  # rows of ``frame`` per input row
    states: pd.DataFrame | None
    states_rows: np.ndarray | None
    details: pd.DataFrame
    finals: np.ndarray  # (n, d) encoded: the state transform reports


def make_piece(results, positions, labels, output, with_states, store=None, found=None):
    """The :class:`Piece` of ``results`` (rows ``positions`` of the input).

    ``output`` says how (see :class:`Output`); the details count every
    sequence found (``found`` per row, when ``results`` were already cut
    down), the frame shows those ``max_plans`` and ``all_orders`` keep. What
    the piece is built from is saved to the checkpoint ``store``, if any.
    """
    schema = output.schema
    details = build_details(results, labels)
    if found is not None:
        details["n_solutions"] = np.asarray(found, dtype=details["n_solutions"].dtype)
    else:
        found = details["n_solutions"].to_numpy()
    results = [compact(r, output.max_plans, output.all_orders) for r in results]
    if store is not None:
        store.save(positions, results, found)
    frame = build_frame(
        results,
        labels,
        schema,
        output.actions,
        output.targets,
        output.reported,
        output.objectives,
        output.classes,
        output.margin,
    )
    states = states_rows = None
    if with_states:
        states = build_states(results, labels, schema)
        states_rows = np.array(
            [int((r.lengths + 1).sum()) if r.n_solutions else 0 for r in results],
            dtype=np.intp,
        )
    finals = schema.missing_states(len(results))
    for k, result in enumerate(results):
        if result.status == STATUS_ALREADY_TARGET:
            finals[k] = result.x0
        elif result.status == STATUS_OK:
            finals[k] = result.final_state(0)
    return Piece(
        positions=np.asarray(positions, dtype=np.intp),
        frame=frame,
        frame_rows=np.array(
            [int(r.lengths.sum()) if r.n_solutions else 1 for r in results],
            dtype=np.intp,
        ),
        states=states,
        states_rows=states_rows,
        details=details,
        finals=finals,
    )


def assemble(pieces, n_rows, d):
    """The frame, states, details and transform's states in input order."""
    pieces = sorted(pieces, key=lambda p: p.positions.min(initial=n_rows))
    positions = np.concatenate([[], *(p.positions for p in pieces)]).astype(np.intp)
    order = np.argsort(positions, kind="stable")
    if positions.shape[0] != n_rows or not np.array_equal(
        positions[order], np.arange(n_rows)
    ):  # pragma: no cover - a bug, not a user error
        raise RuntimeError("Rows were lost or repeated while explaining.")
    frame = _in_order([p.frame for p in pieces], [p.frame_rows for p in pieces], order)
    states = None
    if pieces and pieces[0].states is not None:
        states = _in_order(
            [p.states for p in pieces], [p.states_rows for p in pieces], order
        )
    details = _in_order(
        [p.details for p in pieces],
        [np.ones(len(p.positions), np.intp) for p in pieces],
        order,
    )
    finals = (
        np.vstack([p.finals for p in pieces])[order] if pieces else np.empty((0, d))
    )
    return frame, states, details, finals


def _in_order(frames, rows_per_input, order):
    """Concatenate pieces and put their rows in input order (each input row's
    rows stay together, in their own order)."""
    frame = pd.concat(frames, ignore_index=True)
    if np.all(order[1:] > order[:-1]):  # already in order: no second copy
        return frame
    counts = np.concatenate(rows_per_input)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    take = (
        np.concatenate([np.arange(starts[k], starts[k] + counts[k]) for k in order])
        if len(order)
        else np.empty(0, dtype=np.intp)
    )
    return frame.iloc[take].reset_index(drop=True)

"""Explaining many rows: blocks sent to workers, the output built piece by
piece, and checkpoints that let an interrupted run resume.

Each finished block becomes a :class:`Piece` of the output at once (its rows
of the frame, of the states, of the details, and the state ``transform``
reports), so the search's working memory never piles up over the rows. With a
checkpoint directory, every piece is also written to disk as soon as it is
done; a rerun with the same explainer and rows loads the pieces already there
and searches only the rest. A row's result depends only on the row and the
seed, so the resumed output is the uninterrupted one.
"""

import hashlib
import json
import os
import pickle
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from sklearn_cscf._frames import build_details, build_frame, build_states
from sklearn_cscf._result import compact
from sklearn_cscf._status import STATUS_ALREADY_TARGET, STATUS_OK

CHECKPOINT_VERSION = 2
MANIFEST = "manifest.json"


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


def make_piece(results, positions, labels, output, with_states):
    """The :class:`Piece` of ``results`` (rows ``positions`` of the input).

    ``output`` says how (see :class:`Output`); the details count every
    sequence found, the frame shows those ``max_plans`` and ``all_orders``
    keep.
    """
    schema = output.schema
    details = build_details(results, labels)
    results = [compact(r, output.max_plans, output.all_orders) for r in results]
    frame = build_frame(
        results,
        labels,
        schema,
        output.actions,
        output.targets,
        output.reported,
        output.objectives,
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


# ---------------------------------------------------------------------- #
# checkpoints
# ---------------------------------------------------------------------- #
def fingerprint(problem_token, encoded, targets, labels, random_state, form):
    """What a checkpoint's pieces were computed from; ``form`` is how they
    are written out (``max_plans``, ``all_orders``, with states or not)."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(str(CHECKPOINT_VERSION).encode())
    digest.update(problem_token.encode())
    digest.update(np.ascontiguousarray(encoded, dtype=float).tobytes())
    digest.update(np.ascontiguousarray(targets, dtype=np.int64).tobytes())
    digest.update(pickle.dumps(list(labels)))
    digest.update(
        repr(random_state if isinstance(random_state, int) else None).encode()
    )
    digest.update(repr(form).encode())
    return digest.hexdigest()


class Checkpoint:
    """A directory holding the finished pieces of one run.

    Parameters
    ----------
    path : str or path-like
        The directory; created if missing.
    fingerprint : str
        What the run computes from; a directory of another run is refused.
    entropy : int
        The run's base entropy, used again on resume (with
        ``random_state=None`` it is not reproducible otherwise).
    """

    def __init__(self, path, fingerprint, entropy):
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise ValueError(
                f"checkpoint {str(self.path)!r} exists and is not a directory."
            )
        self.path.mkdir(parents=True, exist_ok=True)
        manifest = self.path / MANIFEST
        if manifest.exists():
            stored = json.loads(manifest.read_text())
            if stored.get("fingerprint") != fingerprint:
                raise ValueError(
                    f"checkpoint {str(self.path)!r} holds the results of another "
                    "run (another explainer, other parameters, other rows, or "
                    "another max_plans, all_orders or return_states); "
                    "pass a new directory, or delete this one to start afresh."
                )
            self.entropy = int(stored["entropy"])
        else:
            self.entropy = int(entropy)
            self._write(
                manifest,
                json.dumps(
                    {
                        "fingerprint": fingerprint,
                        "entropy": self.entropy,
                        "version": CHECKPOINT_VERSION,
                    }
                ).encode(),
            )

    def load(self):
        """The pieces already done."""
        pieces = []
        for file in sorted(self.path.glob("piece-*.pkl")):
            with open(file, "rb") as handle:
                pieces.append(pickle.load(handle))
        return pieces

    def save(self, piece):
        name = f"piece-{int(piece.positions.min()):09d}-{len(piece.positions):05d}.pkl"
        self._write(self.path / name, pickle.dumps(piece))

    def _write(self, target, data):
        """Write whole or not at all: an interrupted write leaves no file."""
        handle, temporary = tempfile.mkstemp(dir=self.path, prefix=".partial-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

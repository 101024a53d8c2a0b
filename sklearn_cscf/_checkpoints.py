"""Checkpoints: the finished rows of a run, saved as plain data, bound to it.

A checkpoint directory holds a manifest (JSON) and one file per finished
piece of rows (NumPy ``.npz``, read with ``allow_pickle=False``). Nothing in
it is ever unpickled, so a file planted in the directory cannot run code:
the worst it can do is be refused.

- The manifest records the run's fingerprint (a digest of the model, the
  actions, the graph, the search settings, the encoded rows, their labels,
  the seed and ``max_plans``/``all_orders``), the run's seed entropy, and for
  each piece its file name, its rows and the SHA-256 of its bytes.
- A piece holds the numbers the output is built from (the reported
  sequences: orders, efforts, discounts, costs, states, scores, objectives;
  each row's status, message and diagnostics), never a frame: the frame is
  rebuilt with the labels of the rows given now.
- A piece the manifest does not list, a piece whose bytes do not match its
  hash, and a corrupt or truncated file are refused with a ``ValueError``
  naming the file. A directory that other users can write to is refused
  unless the caller says it is shared on purpose.
- Rows that ended in ``"error"`` are not taken from a checkpoint: a resumed
  run tries them again (the error may have been transient).
- A save that fails (a full disk) warns and stops checkpointing; the run
  goes on and returns every row.
"""

import hashlib
import io
import json
import os
import pickle
import stat
import tempfile
import types
import warnings
from pathlib import Path

import cloudpickle
import numpy as np

from sklearn_cscf._frames import DIAGNOSTICS
from sklearn_cscf._result import SEQUENCE_ARRAYS, Diagnostics, InstanceResult
from sklearn_cscf._status import STATUS_ERROR, STATUSES

CHECKPOINT_VERSION = 3
MANIFEST = "manifest.json"
FORMAT = "sklearn-cscf checkpoint"


# ---------------------------------------------------------------------- #
# the fingerprint of a run
# ---------------------------------------------------------------------- #
def fingerprint(problem, encoded, targets, labels, random_state, form):
    """What a checkpoint's pieces were computed from.

    ``problem`` is what every row's search shares (model, actions, graph,
    objectives, settings); ``form`` is how the pieces are cut down
    (``max_plans``, ``all_orders``). The digest is the same in another
    process, including for classes and functions defined in ``__main__``
    (a script or a notebook), which cloudpickle stores by value.
    """
    digest = hashlib.sha256()
    digest.update(f"{FORMAT} {CHECKPOINT_VERSION}".encode())
    digest.update(_stable_pickle(problem))
    digest.update(np.ascontiguousarray(encoded, dtype=float).tobytes())
    digest.update(np.ascontiguousarray(targets, dtype=np.int64).tobytes())
    digest.update(pickle.dumps([(type(v).__name__, v) for v in labels]))
    digest.update(
        repr(random_state if isinstance(random_state, int) else None).encode()
    )
    digest.update(repr(form).encode())
    return digest.hexdigest()


class _StablePickler(cloudpickle.Pickler):
    """cloudpickle without what differs between processes: the file name and
    first line of functions' code (a notebook cell's file name holds the
    kernel's process id). Class tracker ids are removed afterwards."""

    def reducer_override(self, obj):
        if isinstance(obj, types.CodeType) and (
            obj.co_filename or obj.co_firstlineno != 1
        ):
            code = obj.replace(co_filename="", co_firstlineno=1)
            return self.dispatch_table[types.CodeType](code)
        return super().reducer_override(obj)


def _stable_pickle(obj):
    buffer = io.BytesIO()
    _StablePickler(buffer, protocol=5).dump(obj)
    payload = buffer.getvalue()
    # a class defined in __main__ is pickled by value with a random id that
    # cloudpickle gives it in this process: leave the ids out of the digest
    tracker = getattr(
        getattr(cloudpickle, "cloudpickle", None), "_DYNAMIC_CLASS_TRACKER_BY_CLASS", {}
    )
    for class_id in list(tracker.values()):
        payload = payload.replace(str(class_id).encode(), b"")
    return payload


# ---------------------------------------------------------------------- #
# the directory
# ---------------------------------------------------------------------- #
class Checkpoint:
    """A directory holding the finished pieces of one run.

    Parameters
    ----------
    path : str or path-like
        The directory; created (readable and writable by its owner only) if
        missing.
    fingerprint : str
        What the run computes from; a directory of another run is refused.
    entropy : int
        The run's base entropy, used again on resume (with
        ``random_state=None`` it is not reproducible otherwise).
    shared : bool, default=False
        Use the directory even when other users can write to it.
    """

    def __init__(self, path, fingerprint, entropy, shared=False):
        self.path = Path(path)
        self.fingerprint = fingerprint
        self.stopped = False
        if self.path.exists() and not self.path.is_dir():
            raise ValueError(
                f"checkpoint {str(self.path)!r} exists and is not a directory."
            )
        self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not shared:
            _check_private(self.path)
        manifest = self.path / MANIFEST
        if manifest.exists():
            stored = self._read_manifest(manifest)
            if stored["fingerprint"] != fingerprint:
                raise ValueError(
                    f"checkpoint {str(self.path)!r} holds the results of another "
                    "run (another explainer, other parameters, other rows, or "
                    "another max_plans or all_orders); pass a new directory, or "
                    "delete this one to start afresh."
                )
            self.entropy = stored["entropy"]
            self.pieces = stored["pieces"]
            self.next = stored["next"]
        else:
            self.entropy, self.pieces, self.next = int(entropy), {}, 0
        unlisted = sorted(
            p.name
            for p in self.path.iterdir()
            if p.name.startswith("piece-") and p.name not in self.pieces
        )
        if unlisted:
            raise ValueError(
                f"checkpoint {str(self.path)!r} holds {unlisted[0]!r}"
                + (f" and {len(unlisted) - 1} more" if len(unlisted) > 1 else "")
                + ", which its manifest does not list (left by another run, "
                "or copied in): it is not read. Delete the directory, or pass "
                "a new one."
            )
        if not manifest.exists():
            self._write_manifest()

    # -- reading -------------------------------------------------------- #
    def _read_manifest(self, manifest):
        try:
            stored = json.loads(manifest.read_bytes())
            if stored.get("format") != FORMAT or stored.get("version") != (
                CHECKPOINT_VERSION
            ):
                raise ValueError("another format or version")
            pieces = stored["pieces"]
            checked = {
                str(name): {
                    "sha256": str(entry["sha256"]),
                    "rows": [int(r) for r in entry["rows"]],
                }
                for name, entry in pieces.items()
            }
            if any(
                "/" in n or "\\" in n or not n.startswith("piece-") for n in checked
            ):
                raise ValueError("a piece name that is not a file of the directory")
            return {
                "fingerprint": str(stored["fingerprint"]),
                "entropy": int(stored["entropy"]),
                "pieces": checked,
                "next": int(stored["next"]),
            }
        except (ValueError, TypeError, KeyError, AttributeError, OSError) as exc:
            raise ValueError(
                f"checkpoint manifest {str(manifest)!r} is corrupt or not a "
                f"manifest of this version of sklearn-cscf ({type(exc).__name__}: "
                f"{exc}); delete the directory to start afresh."
            ) from None

    def load(self):
        """The rows already done: a list of ``(positions, results, found)``,
        without the rows that ended in ``"error"`` (they are tried again)."""
        done, seen = [], set()
        for name, entry in sorted(self.pieces.items()):
            file = self.path / name
            try:
                data = file.read_bytes()
            except FileNotFoundError:
                continue  # listed before it was written: its rows run again
            except OSError as exc:
                raise ValueError(
                    f"checkpoint piece {str(file)!r} cannot be read ({exc})."
                ) from None
            if hashlib.sha256(data).hexdigest() != entry["sha256"]:
                raise ValueError(
                    f"checkpoint piece {str(file)!r} is not the file this run "
                    "saved (its SHA-256 differs from the manifest's): it was "
                    "changed, truncated or replaced. Delete the directory to "
                    "start afresh."
                )
            try:
                positions, results, found = _unpack(data)
                if positions.tolist() != entry["rows"]:
                    raise ValueError("its rows are not the manifest's")
            except Exception as exc:
                raise ValueError(
                    f"checkpoint piece {str(file)!r} is corrupt ({type(exc).__name__}"
                    f": {exc}). Delete the directory to start afresh."
                ) from None
            keep = [
                k
                for k, r in enumerate(results)
                if r.status != STATUS_ERROR and int(positions[k]) not in seen
            ]
            seen.update(int(positions[k]) for k in keep)
            if keep:
                done.append((positions[keep], [results[k] for k in keep], found[keep]))
        return done

    # -- writing -------------------------------------------------------- #
    def save(self, positions, results, found):
        """Save the results (``max_plans`` and ``all_orders`` applied) of
        rows ``positions``; ``found`` counts the sequences found per row.

        A failure to write (``OSError``) warns and stops checkpointing.
        """
        if self.stopped or not len(positions):
            return
        data = _pack(positions, results, found)
        name = f"piece-{self.next:06d}.npz"
        try:
            # listed first: killed between the two writes, the listed file
            # is missing and its rows are searched again; an unlisted file
            # would block the resume
            self.pieces[name] = {
                "sha256": hashlib.sha256(data).hexdigest(),
                "rows": np.asarray(positions).tolist(),
            }
            self.next += 1
            self._write_manifest()
            self._write(self.path / name, data)
        except OSError as exc:
            self.stopped = True
            warnings.warn(
                f"Could not save to the checkpoint {str(self.path)!r} ({exc}); "
                "checkpointing stopped for this run. Every row is still "
                "explained and returned, but the rows from here on are not "
                "saved for a resume.",
                UserWarning,
                stacklevel=2,
            )

    def _write_manifest(self):
        manifest = {
            "format": FORMAT,
            "version": CHECKPOINT_VERSION,
            "fingerprint": self.fingerprint,
            "entropy": self.entropy,
            "next": self.next,
            "pieces": self.pieces,
        }
        self._write(self.path / MANIFEST, json.dumps(manifest).encode())

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


def _check_private(path):
    """Refuse a directory other users can write to (they could swap pieces)."""
    if not hasattr(os, "geteuid"):  # pragma: no cover - not POSIX
        return
    info = path.stat()
    if info.st_uid != os.geteuid():
        reason = f"is owned by another user (uid {info.st_uid})"
    elif info.st_mode & stat.S_IWOTH:
        reason = "is writable by every user"
    else:
        return
    raise ValueError(
        f"checkpoint directory {str(path)!r} {reason}: another user could "
        "replace its files. Use a directory of your own, or pass "
        "shared_checkpoint=True if you trust everyone who can write there."
    )


# ---------------------------------------------------------------------- #
# a piece as plain arrays
# ---------------------------------------------------------------------- #
def _pack(positions, results, found):
    """The ``.npz`` bytes of a piece (numbers and text only)."""
    shown = [r for r in results if r.n_solutions]
    arrays = {
        "positions": np.asarray(positions, dtype=np.int64),
        "found": np.asarray(found, dtype=np.int64),
        "x0": np.array([r.x0 for r in results], dtype=float),
        "target": np.array([r.target for r in results], dtype=np.int64),
        "status": np.array([r.status for r in results], dtype=str),
        "message": np.array([r.message or "" for r in results], dtype=str),
        "has_message": np.array([r.message is not None for r in results]),
        "n_shown": np.array([r.n_solutions for r in results], dtype=np.int64),
    }
    for name in DIAGNOSTICS:
        arrays[f"diagnostics/{name}"] = np.array(
            [getattr(r.diagnostics, name) for r in results]
        )
    if shown:
        for name in SEQUENCE_ARRAYS:
            arrays[name] = np.concatenate([getattr(r, name) for r in shown])
        for name in shown[0].objectives:
            arrays[f"objective/{name}"] = np.concatenate(
                [r.objectives[name] for r in shown]
            )
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _unpack(data):
    """``(positions, results, found)`` of a piece's bytes; no pickle."""
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    positions = arrays["positions"].astype(np.intp)
    n = positions.shape[0]
    status = arrays["status"].tolist()
    if not set(status) <= set(STATUSES):
        raise ValueError(f"unknown statuses {sorted(set(status) - set(STATUSES))}")
    counts = arrays["n_shown"].astype(np.intp)
    for name in ("found", "x0", "target", "message", "has_message", "n_shown"):
        if arrays[name].shape[:1] != (n,):
            raise ValueError(f"{name!r} does not have one entry per row")
    ends = np.cumsum(counts)
    objectives = [k for k in arrays if k.startswith("objective/")]
    results = []
    for k in range(n):
        message = str(arrays["message"][k]) if arrays["has_message"][k] else None
        diagnostics = Diagnostics(
            **{name: arrays[f"diagnostics/{name}"][k].item() for name in DIAGNOSTICS}
        )
        result = InstanceResult(
            x0=arrays["x0"][k],
            target=int(arrays["target"][k]),
            status=status[k],
            message=message,
            diagnostics=diagnostics,
        )
        if counts[k]:
            rows = slice(int(ends[k] - counts[k]), int(ends[k]))
            for name in SEQUENCE_ARRAYS:
                setattr(result, name, arrays[name][rows])
            result.objectives = {
                key.split("/", 1)[1]: arrays[key][rows] for key in objectives
            }
            if result.order.shape[0] != counts[k]:
                raise ValueError("fewer sequences than the rows claim")
        results.append(result)
    return positions, results, arrays["found"].astype(np.intp)

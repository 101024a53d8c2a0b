"""Checkpoints: the finished rows of a run, saved as plain data, bound to it.

A checkpoint directory holds a manifest (JSON) and one file per finished
piece of rows (NumPy ``.npz``, read with ``allow_pickle=False``). Nothing in
it is ever unpickled, so a file planted in the directory cannot run code:
the worst it can do is be refused.

- The manifest records the run's fingerprint (a digest of what decides the
  answers: the actions, the graph, the objectives, the search settings, the
  encoded rows, their labels, the seed, ``max_plans``/``all_orders``/``all_values``
  and the model's type and parameters; sets in a fixed order, and never how
  the model pickles, so that its counters, caches and the order of its sets
  do not count), the run's seed entropy, and for each piece its file name,
  its size, its rows and the SHA-256 of its bytes. Each piece also keeps the
  model's answers about its rows: a model that now answers otherwise about
  one is another run's (not compared for a model whose answers vary, which
  still counts by its type and parameters).
- The final states of the plans loaded are asked about again, in one call,
  with the model now in use: rows whose plans it rejects (a model retrained
  since) are searched again, with a warning saying how many (not for a model
  whose answers vary).
- A piece holds the numbers the output is built from (the reported
  sequences: orders, efforts, discounts, costs, states, scores, objectives;
  each row's status, message and diagnostics), never a frame: the frame is
  rebuilt with the labels of the rows given now.
- A piece the manifest does not list, a piece whose bytes do not match its
  hash, and a corrupt or truncated file are refused with a ``ValueError``
  naming the file. A file is opened only if it is a regular file, not a
  link, and no larger than the manifest says (a named pipe, a link to
  ``/dev/zero`` or a huge sparse file is refused, never read whole); it is
  hashed while it is read.
- A directory that its group or other users can write to, or that another
  user owns, is refused unless the caller says it is shared on purpose
  (``shared_checkpoint=True``: everyone who can write there is trusted).
- A lock file (``.lock``) is held for the whole run: a second process
  explaining into the same directory at the same time is refused at once,
  with a message saying another process holds it.
- Rows that ended in ``"error"`` are not taken from a checkpoint: a resumed
  run tries them again (the error may have been transient).
- A save that fails (a full disk, a file-size limit) warns and stops
  checkpointing, once in every run that stops; the run goes on and returns
  every row. A directory that cannot be written to (read-only media) is read
  without a lock, and nothing is saved there.
"""

import dataclasses
import errno
import hashlib
import io
import json
import os
import pickle
import stat
import sys
import tempfile
import types
import warnings
from pathlib import Path

import cloudpickle
import numpy as np

from sklearn_cscf._engine._model import answers_about
from sklearn_cscf._frames import DIAGNOSTICS
from sklearn_cscf._pickling import ByValue
from sklearn_cscf._result import SEQUENCE_ARRAYS, Diagnostics, InstanceResult
from sklearn_cscf._status import STATUS_ERROR, STATUSES

CHECKPOINT_VERSION = 5
MANIFEST = "manifest.json"
LOCK = ".lock"
# the model's probabilities about the rows count to this many decimals (the
# last bits may differ between processes' BLAS kernels)
FINGER_DECIMALS = 8
# a manifest is at most this large, plus MANIFEST_BYTES_PER_ROW per row
MANIFEST_BYTES = 1 << 20
MANIFEST_BYTES_PER_ROW = 64
READ_CHUNK = 1 << 20
FORMAT = "sklearn-cscf checkpoint"


# ---------------------------------------------------------------------- #
# the fingerprint of a run
# ---------------------------------------------------------------------- #
def fingerprint(problem, encoded, targets, labels, random_state, form):
    """What a checkpoint's pieces were computed from.

    ``problem`` is what every row's search shares (model, actions, graph,
    objectives, settings; not ``max_model_rows``, which changes no answer);
    ``form`` is how the pieces are cut down (``max_plans``,
    ``all_orders``). The model counts by its type and parameters here
    (:func:`describe_model`), never by how it pickles: a call counter, an
    answer cache or a set of strings held by the model does not change the
    digest; what it answers is checked row by row (:class:`Checkpoint`
    keeps the model's answers about each saved row, and compares them on
    resume; the final states of the loaded plans are asked about again).
    Everything else
    is pickled with sets in a fixed order, so the digest is the same in
    another process (``PYTHONHASHSEED``), including for classes and
    functions defined in ``__main__`` (a script or a notebook), which
    cloudpickle stores by value.
    """
    digest = hashlib.sha256()
    digest.update(f"{FORMAT} {CHECKPOINT_VERSION}".encode())
    # the size of the model's calls changes no answer
    if getattr(problem, "max_model_rows", None) is not None:
        problem = dataclasses.replace(problem, max_model_rows=None)
    digest.update(_stable_pickle(problem, model=problem.estimator))
    # what even a model whose answers vary cannot fake: its type and its
    # parameters (and those of the models it wraps)
    digest.update(repr(describe_model(problem.estimator)).encode())
    digest.update(np.ascontiguousarray(encoded, dtype=float).tobytes())
    digest.update(np.ascontiguousarray(targets, dtype=np.int64).tobytes())
    digest.update(pickle.dumps([(type(v).__name__, v) for v in labels]))
    seed = random_state if isinstance(random_state, int) else None
    digest.update(repr(seed).encode())
    digest.update(repr(form).encode())
    return digest.hexdigest()


# how deep describe_model follows models held by models
DESCRIBE_DEPTH = 8


def _is_model(obj):
    return not isinstance(obj, type) and (
        hasattr(obj, "get_params")
        or hasattr(obj, "predict")
        or hasattr(obj, "predict_proba")
        or hasattr(obj, "transform")
    )


def describe_model(model, depth=0):
    """The type and parameters of ``model`` as nested plain values, the same
    in every process: a scikit-learn estimator's ``get_params(deep=False)``
    (models among them described the same way), or, for a model without
    ``get_params``, the models it holds as attributes. Numbers, text and
    ``None`` count by value, arrays by their bytes, anything else by its
    type only: a call counter, a cache or a generator a model keeps does not
    count (what it answers is checked row by row)."""
    kind = f"{type(model).__module__}.{type(model).__qualname__}"
    if depth > DESCRIBE_DEPTH:
        return (kind,)
    params = None
    if hasattr(model, "get_params"):
        try:
            params = dict(model.get_params(deep=False))
        except Exception:
            params = None
    if params is None:
        held = vars(model) if hasattr(model, "__dict__") else {}
        params = {k: v for k, v in held.items() if _is_model(v)}
    described = sorted(
        (str(k), _describe_value(v, depth + 1)) for k, v in params.items()
    )
    return (kind, tuple(described))


def _describe_value(value, depth):
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return repr(value)
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, np.ndarray):
        array = np.ascontiguousarray(value)
        if array.dtype.kind == "O":
            return ("array", tuple(_describe_value(v, depth) for v in array.ravel()))
        digest = hashlib.sha256(array.tobytes()).hexdigest()
        return ("array", str(array.dtype), array.shape, digest)
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(_describe_value(v, depth) for v in value))
    if isinstance(value, dict):
        items = ((repr(k), _describe_value(v, depth)) for k, v in value.items())
        return ("dict", tuple(sorted(items)))
    if isinstance(value, set | frozenset):
        return ("set", tuple(sorted(repr(_describe_value(v, depth)) for v in value)))
    if _is_model(value):
        return describe_model(value, depth)
    if callable(value):
        name = getattr(value, "__qualname__", type(value).__qualname__)
        return ("callable", f"{getattr(value, '__module__', '')}.{name}")
    return ("object", f"{type(value).__module__}.{type(value).__qualname__}")


class _StablePickler(cloudpickle.Pickler):
    """cloudpickle without what differs between processes: the file name and
    first line of functions' code (a notebook cell's file name holds the
    kernel's process id), the order of sets (hash order, which
    ``PYTHONHASHSEED`` changes) and the model (counted by its answers).
    Class tracker ids are removed afterwards."""

    def __init__(self, file, model):
        super().__init__(file, protocol=5)
        self.model = model

    def persistent_id(self, obj):
        if obj is self.model and obj is not None:
            return "the model"
        if type(obj) in (set, frozenset):
            members = sorted(_stable_pickle(member, self.model) for member in obj)
            return (type(obj).__name__, tuple(members))
        return None

    def reducer_override(self, obj):
        if isinstance(obj, ByValue):  # its own cloudpickle bytes: not stable
            return ByValue, (obj.fn, obj.what)
        if isinstance(obj, types.CodeType) and (
            obj.co_filename or obj.co_firstlineno != 1
        ):
            code = obj.replace(co_filename="", co_firstlineno=1)
            return self.dispatch_table[types.CodeType](code)
        return super().reducer_override(obj)


def _stable_pickle(obj, model=None):
    buffer = io.BytesIO()
    _StablePickler(buffer, model).dump(obj)
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
    n_rows : int
        The rows of the run (a piece's row positions are checked against
        it, and a manifest's size is bounded by it).
    answers : Answers, default=None
        The model's answers about each row now. Each piece keeps those of its
        rows; on resume, a piece whose rows the model now answers otherwise
        is refused (another model). Not compared when ``varies``.
    varies : bool, default=False
        The model's answers vary from call to call.
    shared : bool, default=False
        Use the directory even when its group or other users can write to
        it, or another user owns it.
    problem : Problem, default=None
        What the rows are searched with: the final states of the plans
        loaded are asked about again, in one call (at most
        ``problem.max_model_rows`` rows per call), and rows whose plans the
        model now rejects are dropped from what :meth:`load` gives (searched
        again), with a warning saying how many. Not for a model whose answers
        vary (``varies``): it counts by its type and parameters only.

    The directory's lock is held from here until :meth:`close`. A directory
    that cannot be written to (read-only media) is read without a lock:
    the rows it holds are loaded, and the rows searched now are not saved
    (said once, when the first of them would be).
    """

    def __init__(
        self,
        path,
        fingerprint,
        entropy,
        n_rows,
        answers=None,
        varies=False,
        shared=False,
        problem=None,
    ):
        self.path = Path(path)
        self.answers, self.varies, self.problem = answers, varies, problem
        self.fingerprint = fingerprint
        self.n_rows = int(n_rows)
        self.entropy, self.pieces, self.next = int(entropy), {}, 0  # a new run's
        self.stopped = False
        self.read_only = None  # why the directory cannot be written to
        self._lock = None
        if self.path.is_symlink() or (self.path.exists() and not self.path.is_dir()):
            raise ValueError(
                f"checkpoint {str(self.path)!r} exists and is not a directory"
                + (" (it is a link)" if self.path.is_symlink() else "")
                + "; pass a directory."
            )
        try:
            self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise ValueError(
                f"checkpoint directory {str(self.path)!r} cannot be created "
                f"({exc}); pass a directory you can write to."
            ) from None
        if not shared:
            _check_private(self.path)
        try:
            self._lock = _hold_lock(self.path / LOCK)
        except _CannotWrite as exc:
            # read-only media: nothing can be saved, and nobody else can
            # write there either; what is saved is still read
            self.read_only = str(exc.__cause__ or exc)
            self.stopped = True
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    def _open(self):
        manifest = self.path / MANIFEST
        if manifest.exists() or manifest.is_symlink():
            stored = self._read_manifest(manifest)
            if stored["fingerprint"] != self.fingerprint:
                raise ValueError(
                    f"checkpoint {str(self.path)!r} holds the results of another "
                    "run (another model or one answering otherwise, other "
                    "actions or parameters, other rows, or another max_plans, "
                    "all_orders or all_values); pass a new directory, or delete its "
                    f"{MANIFEST} and piece-* files to start afresh."
                )
            self.entropy = stored["entropy"]
            self.pieces = stored["pieces"]
            self.next = stored["next"]
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
                "or copied in): it is not read. Pass a new directory (or, if "
                "these are this run's checkpoint files, delete them to start "
                "afresh)."
            )
        if not (manifest.exists() or manifest.is_symlink()) and not self.stopped:
            try:
                self._write_manifest()
            except OSError as exc:  # a full disk, a file-size limit
                self._stop(exc)

    def _stop(self, exc, what="save to"):
        """Stop checkpointing for this run, and say so (once)."""
        if self.stopped and self.read_only is None:
            return
        self.stopped = True
        if self.read_only is not None:
            reason = f"it cannot be written to: {self.read_only}"
            self.read_only = None  # said
        else:
            reason = str(exc)
        warn_user(
            f"Could not {what} the checkpoint {str(self.path)!r} ({reason}); "
            "checkpointing stopped for this run. Every row is still "
            "explained and returned, but the rows from here on are not "
            "saved for a resume."
        )

    def close(self):
        """Release the directory's lock."""
        if self._lock is not None:
            os.close(self._lock)  # closing the descriptor releases the lock
            self._lock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # -- reading -------------------------------------------------------- #
    def _read_manifest(self, manifest):
        limit = MANIFEST_BYTES + MANIFEST_BYTES_PER_ROW * self.n_rows
        data, _ = read_bounded(manifest, limit, "checkpoint manifest")
        foreign = True
        try:
            stored = json.loads(data)
            if not isinstance(stored, dict) or stored.get("format") != FORMAT:
                raise ValueError("not an sklearn-cscf checkpoint manifest")
            foreign = False
            if stored.get("version") != CHECKPOINT_VERSION:
                raise ValueError(
                    f"version {stored.get('version')!r}, not {CHECKPOINT_VERSION}"
                )
            checked = {
                str(name): {
                    "sha256": str(entry["sha256"]),
                    "bytes": int(entry["bytes"]),
                    "rows": [int(r) for r in entry["rows"]],
                }
                for name, entry in stored["pieces"].items()
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
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            if foreign:
                raise ValueError(
                    f"{str(manifest)!r} is corrupt or not the manifest of an "
                    f"sklearn-cscf checkpoint ({type(exc).__name__}: {exc}): "
                    "it is left alone, with every other file there. Pass "
                    "another directory (a new one is created)."
                ) from None
            raise ValueError(
                f"checkpoint manifest {str(manifest)!r} is corrupt or of another "
                f"version of sklearn-cscf ({type(exc).__name__}: {exc}); pass a "
                f"new directory, or delete its {MANIFEST} and piece-* files to "
                "start afresh."
            ) from None

    def load(self):
        """The rows already done: a list of ``(positions, results, found)``,
        without the rows that ended in ``"error"`` (they are tried again)."""
        done, seen = [], set()
        for name, entry in sorted(self.pieces.items()):
            file = self.path / name
            if not (file.exists() or file.is_symlink()):
                continue  # listed before it was written: its rows run again
            data, digest = read_bounded(file, entry["bytes"], "checkpoint piece")
            if digest != entry["sha256"]:
                raise ValueError(
                    f"checkpoint piece {str(file)!r} is not the file this run "
                    "saved (its SHA-256 differs from the manifest's): it was "
                    "changed, truncated or replaced. Pass a new directory, or "
                    f"delete its {MANIFEST} and piece-* files to start afresh."
                )
            try:
                positions, results, found, arrays = _unpack(data)
                if positions.tolist() != entry["rows"]:
                    raise ValueError("its rows are not the manifest's")
            except Exception as exc:
                raise ValueError(
                    f"checkpoint piece {str(file)!r} is corrupt ({type(exc).__name__}"
                    f": {exc}). Pass a new directory, or delete its {MANIFEST} "
                    "and piece-* files to start afresh."
                ) from None
            outside = (positions < 0) | (positions >= self.n_rows)
            if outside.any() or np.unique(positions).size != positions.size:
                what = (
                    f"row positions outside the {self.n_rows} rows of X "
                    f"({positions[outside][:3].tolist()})"
                    if outside.any()
                    else "a row position twice"
                )
                raise ValueError(
                    f"checkpoint piece {str(file)!r} holds {what}: it was not "
                    "saved by this run. Pass a new directory."
                )
            self._check_answers(file, positions, arrays)
            keep = [
                k
                for k, r in enumerate(results)
                if r.status != STATUS_ERROR and int(positions[k]) not in seen
            ]
            seen.update(int(positions[k]) for k in keep)
            if keep:
                done.append((positions[keep], [results[k] for k in keep], found[keep]))
        return self._recheck(done)

    def _recheck(self, done):
        """``done`` without the rows whose saved plans the model now in use
        rejects (their final states asked about again, in one call), with
        a warning saying how many: a model retrained since answers the rows
        themselves alike but not the states the plans reach."""
        if self.problem is None or self.varies or not done:
            # a model whose answers vary would reject some plans by chance:
            # it counts by its type and parameters (the fingerprint) only
            return done
        finals, owners, codes = [], [], []
        for positions, results, _ in done:
            for position, result in zip(positions.tolist(), results):
                if result.n_solutions:
                    count = result.n_solutions
                    finals.append(result.states[np.arange(count), result.lengths])
                    owners.append(np.full(count, position))
                    codes.append(np.full(count, result.target))
        if not finals:
            return done
        owner, code = np.concatenate(owners), np.concatenate(codes)
        try:
            answers = answers_about(self.problem, np.concatenate(finals))
        except Exception as exc:
            # the search of each row will say what fails
            stale, why = set(owner.tolist()), f"the model failed on them ({exc})"
        else:
            accepted = self.problem.target.gap(answers, code) == 0
            stale = set(np.unique(owner[~accepted]).tolist())
            why = (
                "the model now in use does not accept the final state of a "
                "plan saved for them (a model retrained or changed since they "
                "were saved). The other rows' plans are still accepted and "
                "are kept"
            )
        if not stale:
            return done
        n_loaded = sum(len(positions) for positions, _, _ in done)
        warn_user(
            f"{len(stale)} of the {n_loaded} rows loaded from the checkpoint "
            f"{str(self.path)!r} are explained again: {why}."
        )
        kept = []
        for positions, results, found in done:
            keep = [k for k, r in enumerate(positions.tolist()) if r not in stale]
            if keep:
                kept.append((positions[keep], [results[k] for k in keep], found[keep]))
        return kept

    def _check_answers(self, file, positions, arrays):
        """Refuse a piece whose rows the model now answers otherwise."""
        if self.answers is None or self.varies:
            return
        now = self.answers.take(positions)
        saved, then = arrays.get("answer_decision"), arrays.get("answer_output")
        if saved is None or saved.shape != now.decision.shape:
            raise ValueError(
                f"checkpoint piece {str(file)!r} does not hold the model's "
                "answers about its rows: it is corrupt."
            )
        known = (now.decision >= 0) & (saved >= 0)
        differ = known & (saved != now.decision)
        if now.output is not None and then is not None:
            if then.shape == now.output.shape:
                close = np.isclose(
                    then, np.round(now.output, FINGER_DECIMALS), rtol=1e-7, atol=1e-7
                ) | (np.isnan(then) & np.isnan(now.output))
                differ |= known & ~close.all(axis=1)
        if differ.any():
            raise ValueError(
                f"checkpoint {str(self.path)!r} was made with a model that "
                f"answered otherwise about row {int(positions[differ][0])} "
                f"(in {file.name}): it holds the results of another run "
                "(another model, or one retrained). Pass a new directory, or "
                f"delete its {MANIFEST} and piece-* files to start afresh."
            )

    # -- writing -------------------------------------------------------- #
    def save(self, positions, results, found):
        """Save the results (``max_plans`` and ``all_orders`` applied) of
        rows ``positions``; ``found`` counts the sequences found per row.

        A failure to write (``OSError``) warns and stops checkpointing.
        """
        if not len(positions):
            return
        if self.stopped:
            if self.read_only is not None:  # said once, at the first save
                self._stop(None)
            return
        data = _pack(positions, results, found, self.answers)
        name = f"piece-{self.next:06d}.npz"
        try:
            # listed first: killed between the two writes, the listed file
            # is missing and its rows are searched again; an unlisted file
            # would block the resume
            self.pieces[name] = {
                "sha256": hashlib.sha256(data).hexdigest(),
                "bytes": len(data),
                "rows": np.asarray(positions).tolist(),
            }
            self.next += 1
            self._write_manifest()
            self._write(self.path / name, data)
        except OSError as exc:  # a full disk, a file-size limit
            self._stop(exc)

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


def read_bounded(file, limit, what):
    """``(bytes, sha256 hex)`` of ``file``, read only if it is a regular file
    (not a link, a named pipe or a device) of at most ``limit`` bytes, hashed
    as it streams; otherwise a ``ValueError`` naming it."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    flags |= getattr(os, "O_BINARY", 0)
    if Path(file).is_symlink():
        raise ValueError(
            f"{what} {str(file)!r} is a link, not a file this run saved: it is "
            "not read. Pass a new directory."
        )
    try:
        handle = os.open(file, flags)
    except OSError as exc:
        raise ValueError(f"{what} {str(file)!r} cannot be opened ({exc}).") from None
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(
                f"{what} {str(file)!r} is not a regular file (a named pipe, a "
                "device or a directory): it is not read. Pass a new directory."
            )
        if info.st_size > limit:
            raise ValueError(
                f"{what} {str(file)!r} holds {info.st_size} bytes, more than "
                f"the {limit} its manifest allows: it was not saved by this "
                "run, and is not read. Pass a new directory."
            )
        digest, chunks, size = hashlib.sha256(), [], 0
        while True:
            try:
                chunk = os.read(handle, min(READ_CHUNK, limit + 1 - size))
            except OSError as exc:
                raise ValueError(
                    f"{what} {str(file)!r} cannot be read ({exc})."
                ) from None
            if not chunk:
                break
            digest.update(chunk)
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise ValueError(
                    f"{what} {str(file)!r} is larger than the {limit} bytes "
                    "its manifest allows: it is not read. Pass a new directory."
                )
        return b"".join(chunks), digest.hexdigest()
    finally:
        os.close(handle)


def warn_user(message):
    """Warn with ``message`` (a ``UserWarning``) whatever was said before in
    this process:
    Python's default filter shows a warning once per place and text, so a
    second run into the same directory, failing the same way, would
    otherwise say nothing. Shown at the user's line (the first frame
    outside this package)."""
    frame, package = sys._getframe(1), __name__.rsplit(".", 1)[0]
    while frame is not None and frame.f_globals.get("__name__", "").startswith(package):
        frame = frame.f_back
    if frame is None:  # pragma: no cover - called from the package alone
        warnings.warn(message, UserWarning, stacklevel=2)
        return
    warnings.warn_explicit(
        message,
        UserWarning,
        frame.f_code.co_filename,
        frame.f_lineno,
        module=frame.f_globals.get("__name__"),
        registry={},  # a fresh registry: not silenced by an earlier one
    )


class _CannotWrite(ValueError):
    """The directory cannot be written to (read-only media, no permission)."""


# errors of a directory that cannot be written to
READ_ONLY_ERRORS = (errno.EROFS, errno.EACCES, errno.EPERM)


def _hold_lock(file):
    """Take the directory's lock (a descriptor; closing it releases it), or
    refuse at once if another process holds it. A directory that cannot be
    written to raises :class:`_CannotWrite` (read on, without a lock)."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    try:
        handle = os.open(file, flags, 0o600)
    except OSError as exc:
        if exc.errno in READ_ONLY_ERRORS and not Path(file).is_symlink():
            raise _CannotWrite(str(exc)) from exc
        raise ValueError(
            f"checkpoint lock {str(file)!r} cannot be opened ({exc}); pass "
            "another directory."
        ) from None
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        return handle
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(handle)
        raise ValueError(
            f"checkpoint {str(file.parent)!r} is in use: another process "
            f"holds its lock ({file.name}) and is explaining into it now. Wait "
            "for it to finish (then rerun to resume from its rows), or pass "
            "another directory."
        ) from None
    return handle


def _check_private(path):
    """Refuse a directory others can write to (they could swap pieces)."""
    if not hasattr(os, "geteuid"):  # pragma: no cover - not POSIX
        return
    info = path.stat()
    if info.st_uid != os.geteuid():
        reason = f"is owned by another user (uid {info.st_uid})"
    elif info.st_mode & stat.S_IWOTH:
        reason = "is writable by every user"
    elif info.st_mode & stat.S_IWGRP:
        reason = f"is writable by its group (gid {info.st_gid})"
    else:
        return
    raise ValueError(
        f"checkpoint directory {str(path)!r} {reason}: another user could "
        "replace its files, and a resume would report what they wrote. Use a "
        "directory only you can write to (chmod go-w), or pass "
        "shared_checkpoint=True if you trust everyone who can write there."
    )


# ---------------------------------------------------------------------- #
# a piece as plain arrays
# ---------------------------------------------------------------------- #
def _pack(positions, results, found, answers=None):
    """The ``.npz`` bytes of a piece (numbers and text only); with the
    model's ``answers`` about its rows when given."""
    shown = [r for r in results if r.n_solutions]
    arrays = {}
    if answers is not None:
        now = answers.take(np.asarray(positions, dtype=np.intp))
        arrays["answer_decision"] = np.asarray(now.decision, dtype=np.int64)
        if now.output is not None:
            output = np.asarray(now.output, dtype=float)
            arrays["answer_output"] = np.round(output, FINGER_DECIMALS)
    arrays |= {
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
    """``(positions, results, found, arrays)`` of a piece's bytes (``arrays``:
    every array it holds, by name); no pickle."""
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
    return positions, results, arrays["found"].astype(np.intp), arrays

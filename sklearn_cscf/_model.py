"""The black box: batched classifier calls, remembered answers, and the target.

- :class:`ModelAdapter` calls the fitted classifier on encoded states (one call
  for a whole batch), checks what it returns and counts calls, rows and time.
- :class:`AnswerMemo` remembers, per instance, the answers to states already
  asked (by a 64-bit hash of the encoded state), within a bounded size.
- :func:`ask` answers a batch of states of many instances: remembered states
  from the memos, every other distinct state in one classifier call.
- :class:`ClassTarget` says how far an answer is from the class to reach.
"""

import time
from dataclasses import dataclass

import numpy as np

from sklearn_cscf.actions import blame

# a state that misses the target class is at least this far from it
MIN_GAP = 1e-6
# answers remembered per instance before its memo starts afresh
MEMO_LIMIT = 50_000
# probabilities are kept to this many decimals: a model's arithmetic may round
# the last bits of a row differently in batches of different sizes (BLAS
# kernels), which must not change which sequences are found or reported
PROBA_DECIMALS = 10
# probabilities this far outside [0, 1] are rounding, not an error
PROBA_TOLERANCE = 1e-9


@dataclass
class Answers:
    """The classifier's answers for a batch of states."""

    decision: np.ndarray  # (n,) index of the predicted class in classes_
    proba: np.ndarray | None  # (n, n_classes), None without predict_proba

    def take(self, index):
        return Answers(
            self.decision[index], None if self.proba is None else self.proba[index]
        )


class ModelAdapter:
    """Calls a fitted classifier on encoded states, and counts the calls.

    The decision about a state is the model's own: ``predict`` when
    ``use_predict`` (a model whose ``predict`` is not the arg-max of its
    probabilities, e.g. one with a tuned decision threshold, or one without
    ``predict_proba``), otherwise the arg-max of ``predict_proba`` (one call
    gives both). Probabilities, when the model has them, are checked: finite,
    in ``[0, 1]``, one column per class.
    """

    def __init__(self, estimator, schema, classes, use_predict=False):
        self.estimator = estimator
        self.schema = schema
        self.classes = np.asarray(classes)
        self.has_proba = hasattr(estimator, "predict_proba")
        self.has_predict = hasattr(estimator, "predict")
        self.use_predict = use_predict or not self.has_proba
        self.seconds = 0.0
        self.n_calls = 0
        self.n_rows = 0

    def answer(self, states):
        """The classifier's :class:`Answers` for encoded ``states``."""
        X = self.schema.to_model_input(states)
        start = time.perf_counter()
        method = "predict_proba" if self.has_proba else "predict"
        try:
            proba = self.estimator.predict_proba(X) if self.has_proba else None
            method = "predict"
            labels = self.estimator.predict(X) if self.use_predict else None
        except Exception as exc:
            blame(exc, f"the estimator's {method}")
            raise
        finally:
            self.seconds += time.perf_counter() - start
            self.n_calls += 1
            self.n_rows += states.shape[0]
        if proba is not None:
            proba = self._checked(proba, states.shape[0])
        if labels is None:
            decision = proba.argmax(axis=1)
        else:
            decision = self.decision_of(labels)
        if proba is not None:
            proba = np.round(proba, PROBA_DECIMALS)
        return Answers(decision, proba)

    def verify(self, states):
        """The model's ``predict`` (class indices) on encoded ``states``."""
        X = self.schema.to_model_input(states)
        start = time.perf_counter()
        try:
            labels = self.estimator.predict(X)
        except Exception as exc:
            blame(exc, "the estimator's predict")
            raise
        finally:
            self.seconds += time.perf_counter() - start
            self.n_calls += 1
            self.n_rows += states.shape[0]
        return self.decision_of(labels)

    def decide(self, X):
        """The model's own decision (class index) on raw rows ``X``: its
        ``predict`` when it has one."""
        method = "predict" if self.has_predict else "predict_proba"
        try:
            out = getattr(self.estimator, method)(X)
        except Exception as exc:
            blame(exc, f"the estimator's {method}")
            raise
        if self.has_predict:
            return self.decision_of(out)
        return self._checked(out, len(X)).argmax(axis=1)

    def decision_of(self, labels):
        """Class indices of predicted ``labels``."""
        labels = np.asarray(labels)
        match = labels[:, None] == self.classes[None, :]
        known = match.any(axis=1)
        if labels.ndim != 1 or not known.all():
            unknown = labels[~known][:3] if labels.ndim == 1 else labels.shape
            raise ValueError(
                f"predict of the estimator returned {unknown!r}, not labels in "
                f"classes_ {self.classes.tolist()}, one per row."
            )
        return match.argmax(axis=1)

    def _checked(self, proba, n):
        proba = np.asarray(proba, dtype=float)
        if proba.shape != (n, self.classes.shape[0]):
            raise ValueError(
                "predict_proba of the estimator returned shape "
                f"{proba.shape}; expected ({n}, {self.classes.shape[0]}) "
                "(rows, classes_)."
            )
        bad = ~np.isfinite(proba) | (proba < -PROBA_TOLERANCE)
        bad |= proba > 1 + PROBA_TOLERANCE
        if bad.any():
            raise ValueError(
                "predict_proba of the estimator returned values that are not "
                f"probabilities (finite, in [0, 1]): {proba[bad][:3].tolist()} "
                f"in {int(bad.any(axis=1).sum())} of {n} rows."
            )
        return proba


# ---------------------------------------------------------------------- #
# remembered answers
# ---------------------------------------------------------------------- #
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)


def _mix(z):
    """splitmix64's finaliser, element-wise on uint64 (wrapping)."""
    z = (z ^ (z >> np.uint64(30))) * _MIX_1
    z = (z ^ (z >> np.uint64(27))) * _MIX_2
    return z ^ (z >> np.uint64(31))


def state_hashes(states):
    """A 64-bit hash of each encoded state (row); equal states hash equally.

    ``-0.0`` and ``0.0`` hash alike, and so do all NaNs. Each column is mixed
    with its own salt, so states differing in any value almost surely differ.
    """
    states = np.where(np.isnan(states), np.nan, states) + 0.0
    bits = np.ascontiguousarray(states).view(np.uint64)
    salts = _mix(np.arange(1, states.shape[1] + 1, dtype=np.uint64))
    return np.bitwise_xor.reduce(_mix(bits ^ salts), axis=1)


class AnswerMemo:
    """The answers already given for one instance's states, by state hash.

    Holds at most ``limit`` answers; when full, it starts afresh (it is only
    a cache: a forgotten state is asked again).
    """

    def __init__(self, n_classes, limit=MEMO_LIMIT):
        self.limit = limit
        self.n_classes = n_classes
        self._clear()

    def _clear(self):
        self.hashes = np.empty(0, dtype=np.uint64)  # sorted
        self.slots = np.empty(0, dtype=np.intp)  # row of each hash in the store
        self.decision = np.empty(0, dtype=np.intp)
        self.proba = np.empty((0, self.n_classes))

    def __len__(self):
        return self.hashes.shape[0]

    def lookup(self, hashes):
        """Store row of each hash, ``-1`` where it is not remembered."""
        position = np.searchsorted(self.hashes, hashes)
        position = np.minimum(position, len(self) - 1)
        if len(self) == 0:
            return np.full(hashes.shape, -1, dtype=np.intp)
        found = self.hashes[position] == hashes
        return np.where(found, self.slots[position], -1)

    def insert(self, hashes, answers):
        """Remember the answers to the states of ``hashes`` (sorted, distinct,
        not yet remembered)."""
        if len(self) + hashes.shape[0] > self.limit:
            self._clear()
        first = self.decision.shape[0]
        slots = np.arange(first, first + hashes.shape[0])
        self.decision = np.concatenate([self.decision, answers.decision])
        if answers.proba is not None:
            self.proba = np.concatenate([self.proba, answers.proba])
        # sorted new hashes at non-decreasing positions keep the order sorted
        position = np.searchsorted(self.hashes, hashes)
        self.hashes = np.insert(self.hashes, position, hashes)
        self.slots = np.insert(self.slots, position, slots)

    def answers(self, slots):
        proba = self.proba[slots] if self.proba.shape[0] else None
        return Answers(self.decision[slots], proba)


@dataclass
class Usage:
    """What one instance cost the classifier."""

    n_calls: int = 0  # calls holding at least one of its states
    n_rows: int = 0  # its states sent to the classifier
    n_asked: int = 0  # its states asked for (sent or remembered)
    seconds: float = 0.0  # its share (by rows) of the calls' time


def ask(model, memos, usage, groups, states):
    """Answers for ``states`` of several instances, in at most one model call.

    Parameters
    ----------
    model : ModelAdapter
    memos : list of AnswerMemo
        One per instance of the block.
    usage : list of Usage
        One per instance of the block; updated.
    groups : list of (member, slice)
        The rows of ``states`` belonging to each instance (block member).
    states : ndarray of shape (n, n_features)

    Returns
    -------
    Answers
    """
    n = states.shape[0]
    hashes = state_hashes(states)
    decision = np.empty(n, dtype=np.intp)
    proba = np.empty((n, model.classes.shape[0])) if model.has_proba else None
    known = np.zeros(n, dtype=bool)
    for member, rows in groups:
        slots = memos[member].lookup(hashes[rows])
        hit = slots >= 0
        remembered = memos[member].answers(slots[hit])
        index = np.arange(n)[rows][hit]
        decision[index] = remembered.decision
        if proba is not None:
            proba[index] = remembered.proba
        known[index] = True
        usage[member].n_asked += slots.shape[0]
    novel = np.flatnonzero(~known)
    if novel.size == 0:
        return Answers(decision, proba)
    # each distinct new state is asked once, whichever instance reached it
    _, first, inverse = np.unique(hashes[novel], return_index=True, return_inverse=True)
    sent = novel[first]
    seconds = model.seconds
    fresh = model.answer(states[sent])
    seconds = model.seconds - seconds
    decision[novel] = fresh.decision[inverse]
    if proba is not None:
        proba[novel] = fresh.proba[inverse]
    owner = np.empty(n, dtype=np.intp)
    for member, rows in groups:
        owner[rows] = member
    counts = np.bincount(owner[sent], minlength=len(memos))
    for member, rows in groups:
        mine = novel[(novel >= rows.start) & (novel < rows.stop)]
        if mine.size:
            new_hashes, where = np.unique(hashes[mine], return_index=True)
            memos[member].insert(new_hashes, Answers(decision, proba).take(mine[where]))
        if counts[member]:
            record = usage[member]
            record.n_calls += 1
            record.n_rows += int(counts[member])
            record.seconds += seconds * counts[member] / sent.size
    return Answers(decision, proba)


# ---------------------------------------------------------------------- #
# the target
# ---------------------------------------------------------------------- #
class ClassTarget:
    """Reach a class: the model's decision must be the target class.

    Each instance has its target class (an index into ``classes_``); the gap
    of a state is 0 when the model decides for that class. Otherwise it
    measures how far the state is from it (at least ``MIN_GAP``): the lead of
    the most probable other class over the target when the decision is the
    arg-max of the probabilities; ``1 - P(target)`` when the decision is the
    model's ``predict`` (its threshold may lie anywhere); 1 for a model without
    probabilities. The reported score of a state is the probability of the
    target class.

    Parameters
    ----------
    use_predict : bool, default=False
        Whether the decisions come from the model's ``predict``.
    """

    def __init__(self, use_predict=False):
        self.use_predict = use_predict

    def gap(self, answers, target):
        reached = answers.decision == target
        if answers.proba is None:
            return np.where(reached, 0.0, 1.0)
        rows = np.arange(target.shape[0])
        chance = answers.proba[rows, target]
        if self.use_predict:
            distance = 1.0 - chance
        else:
            others = answers.proba.copy()
            others[rows, target] = -np.inf
            distance = others.max(axis=1) - chance
        return np.where(reached, 0.0, np.maximum(distance, 0.0) + MIN_GAP)

    def score(self, answers, target):
        if answers.proba is None:
            return np.full(target.shape[0], np.nan)
        return answers.proba[np.arange(target.shape[0]), target]

"""The black box: batched model calls, remembered answers, and the target.

- :class:`ModelAdapter` calls the fitted model (a classifier or a regressor)
  on encoded states (one call for a whole batch), checks what it returns and
  counts calls, rows and time.
- :class:`AnswerMemo` remembers, per instance, the answers to states already
  asked (by a 64-bit hash of the encoded state), within a bounded size.
- :func:`ask` answers a batch of states of many instances: remembered states
  from the memos, every other distinct state in one model call.
- :class:`ClassTarget` (a class, or a set of acceptable classes, optionally
  with a minimum probability) and :class:`RangeTarget` (a range of a
  regressor's output) say how far an answer is from what must be reached.
"""

import time
from dataclasses import dataclass

import numpy as np

from sklearn_cscf._workspace import Workspace
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
# a regressor's predictions are kept to this many significant digits
OUTPUT_DIGITS = 12


def _round_significant(values, digits):
    """``values`` rounded to ``digits`` significant decimal digits (so that a
    decimal bound such as 0.4 compares as written). Values too small or too
    large to scale (near the limits of floats), 0, infinities and NaN stay as
    they are."""
    values = np.asarray(values, dtype=float)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        magnitude = np.floor(np.log10(np.abs(values)))
        scale = 10.0 ** (digits - 1 - magnitude)
        rounded = np.round(values * scale) / scale
    return np.where(np.isfinite(rounded) & (values != 0), rounded, values)


@dataclass
class Answers:
    """The model's answers for a batch of states.

    ``decision`` is the index of the predicted class (0 for a regressor);
    ``output`` the class probabilities ``(n, n_classes)``, or a regressor's
    predictions ``(n, 2)`` (rounded, and as the model gave them), or ``None``
    (a classifier without ``predict_proba``).
    """

    decision: np.ndarray
    output: np.ndarray | None

    def take(self, index):
        return Answers(
            self.decision[index], None if self.output is None else self.output[index]
        )


class ModelAdapter:
    """Calls a fitted model on encoded states, and counts the calls.

    For a classifier (``classes`` given), the decision about a state is the
    model's own: ``predict`` when ``use_predict`` (a model whose ``predict``
    is not the arg-max of its probabilities, e.g. one with a tuned decision
    threshold, or one without ``predict_proba``), otherwise the arg-max of
    ``predict_proba`` (one call gives both). Probabilities are checked:
    finite, in ``[0, 1]``, one column per class. For a regressor
    (``classes=None``), the output is ``predict``, checked finite.
    """

    def __init__(self, estimator, schema, classes, use_predict=False):
        self.estimator = estimator
        self.schema = schema
        self.regression = classes is None
        self.classes = None if self.regression else np.asarray(classes)
        self.has_predict = hasattr(estimator, "predict")
        self.has_proba = not self.regression and hasattr(estimator, "predict_proba")
        self.has_output = self.regression or self.has_proba
        # a regressor's output: its prediction rounded, and as the model gave it
        self.width = 2 if self.regression else self.classes.shape[0]
        self.use_predict = self.regression or use_predict or not self.has_proba
        self.seconds = 0.0
        self.n_calls = 0
        self.n_rows = 0

    def answer(self, states):
        """The model's :class:`Answers` for encoded ``states``."""
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
        if self.regression:
            values = self._predictions(labels, states.shape[0])
            return Answers(np.zeros(values.shape[0], dtype=np.intp), values)
        if proba is not None:
            proba = self._checked(proba, states.shape[0])
        if labels is None:
            decision = proba.argmax(axis=1)
        else:
            decision = self.decision_of(labels)
        if proba is not None:
            proba = np.round(proba, PROBA_DECIMALS)
        return Answers(decision, proba)

    def _predictions(self, values, n):
        values = np.asarray(values, dtype=float).reshape(-1)
        if values.shape != (n,) or not np.isfinite(values).all():
            raise ValueError(
                "predict of the regressor must return one finite number per row; "
                f"got shape {np.shape(values)} with "
                f"{int((~np.isfinite(values)).sum())} non-finite value(s)."
            )
        # like probabilities, the last bits may differ between batch sizes:
        # the rounded prediction guides the search and is reported; whether
        # it lies in the range is decided on the model's own number
        return np.column_stack([_round_significant(values, OUTPUT_DIGITS), values])

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


def _mix_into(z, spare):
    """:func:`_mix` of ``z`` in place (``spare``: an array of its shape)."""
    for shift, factor in ((30, _MIX_1), (27, _MIX_2), (31, None)):
        np.right_shift(z, np.uint64(shift), out=spare)
        np.bitwise_xor(z, spare, out=z)
        if factor is not None:
            np.multiply(z, factor, out=z)
    return z


def state_hashes(states, work=None):
    """A 64-bit hash of each encoded state (row); equal states hash equally.

    ``-0.0`` and ``0.0`` hash alike, and so do all NaNs. Each column is mixed
    with its own salt, so states differing in any value almost surely differ.
    With a :class:`~sklearn_cscf._workspace.Workspace` ``work``, the work
    arrays and the result come from it.
    """
    salts = _mix(np.arange(1, states.shape[1] + 1, dtype=np.uint64))
    if work is None:
        states = np.where(np.isnan(states), np.nan, states) + 0.0
        bits = np.ascontiguousarray(states).view(np.uint64)
        return np.bitwise_xor.reduce(_mix(bits ^ salts), axis=1)
    canonical = work.empty("hash_states", states.shape)
    np.copyto(canonical, states)
    np.copyto(
        canonical,
        np.nan,
        where=np.isnan(canonical, out=work.empty("hash_nan", states.shape, bool)),
    )
    np.add(canonical, 0.0, out=canonical)
    bits = canonical.view(np.uint64)
    np.bitwise_xor(bits, salts, out=bits)
    _mix_into(bits, work.empty("hash_spare", states.shape, np.uint64))
    out = work.empty("hashes", states.shape[0], np.uint64)
    return np.bitwise_xor.reduce(bits, axis=1, out=out)


class AnswerMemo:
    """The answers already given for one instance's states, by state hash.

    Holds at most ``limit`` answers; when full, it starts afresh (it is only
    a cache: a forgotten state is asked again). Its arrays live in buffers
    that grow by doubling, so that remembering a generation's states moves
    the remembered ones in place instead of allocating them anew.
    """

    def __init__(self, width, limit=MEMO_LIMIT):
        self.limit = limit
        self.width = width
        self._capacity = 0
        self._reserve(0)
        self._clear()

    def _clear(self):
        self._n = 0
        self._with_output = False

    def _reserve(self, n):
        """Room for ``n`` answers (the remembered ones kept)."""
        if n <= self._capacity and self._capacity:
            return
        capacity = max(n, 2 * self._capacity, 64)
        old = self._capacity and self._n
        for name, shape, dtype in (
            ("_hashes", (capacity,), np.uint64),  # sorted
            ("_slots", (capacity,), np.intp),  # row of each hash in the store
            ("_decision", (capacity,), np.intp),
            ("_output", (capacity, self.width), float),
        ):
            array = np.empty(shape, dtype=dtype)
            if old:
                array[:old] = getattr(self, name)[:old]
            setattr(self, name, array)
        # where the merge of new hashes writes; and its index arithmetic
        self._spare_hashes = np.empty(capacity, dtype=np.uint64)
        self._spare_slots = np.empty(capacity, dtype=np.intp)
        self._moves = np.empty(capacity + 1, dtype=np.intp)
        self._capacity = capacity

    @property
    def hashes(self):
        return self._hashes[: self._n]

    @property
    def slots(self):
        return self._slots[: self._n]

    @property
    def decision(self):
        return self._decision[: self._n]

    @property
    def output(self):
        return self._output[: self._n if self._with_output else 0]

    def __len__(self):
        return self._n

    def lookup(self, hashes):
        """Store row of each hash, ``-1`` where it is not remembered."""
        if len(self) == 0:
            return np.full(hashes.shape, -1, dtype=np.intp)
        remembered = self.hashes
        position = np.searchsorted(remembered, hashes)
        position = np.minimum(position, len(self) - 1)
        found = remembered[position] == hashes
        return np.where(found, self.slots[position], -1)

    def insert(self, hashes, answers):
        """Remember the answers to the states of ``hashes`` (sorted, distinct,
        not yet remembered)."""
        k = hashes.shape[0]
        if len(self) + k > self.limit:
            self._clear()
        m = self._n
        self._reserve(m + k)
        # answers are stored in arrival order: the slots m .. m + k - 1
        self._decision[m : m + k] = answers.decision
        if answers.output is not None:
            self._output[m : m + k] = answers.output
            self._with_output = True
        # the merged order: new hash j goes before remembered hash
        # position[j], i.e. to position[j] + j; remembered hash i moves to
        # i + (new hashes placed at or before i) = cumsum(1 + placed)[i] - 1
        position = np.searchsorted(self._hashes[:m], hashes)
        placed, count = np.unique(position, return_counts=True)
        moves = self._moves[: m + 1]
        moves.fill(1)
        moves[placed] += count
        target = np.cumsum(moves[:m], out=moves[:m])
        target -= 1
        hashes_to, slots_to = self._spare_hashes, self._spare_slots
        hashes_to[target] = self._hashes[:m]
        slots_to[target] = self._slots[:m]
        position += np.arange(k)
        hashes_to[position] = hashes
        slots_to[position] = np.arange(m, m + k)
        self._spare_hashes, self._hashes = self._hashes, hashes_to
        self._spare_slots, self._slots = self._slots, slots_to
        self._n = m + k

    def answers(self, slots):
        output = self.output[slots] if self._with_output else None
        return Answers(self.decision[slots], output)


@dataclass
class Usage:
    """What one instance cost the classifier."""

    n_calls: int = 0  # calls holding at least one of its states
    n_rows: int = 0  # its states sent to the classifier
    n_asked: int = 0  # its states asked for (sent or remembered)
    seconds: float = 0.0  # its share (by rows) of the calls' time


def ask(model, memos, usage, groups, states, work=None):
    """Answers for ``states`` of several instances, in at most one model call.

    Parameters
    ----------
    model : ModelAdapter
    memos : list of AnswerMemo
        One per instance of the block.
    usage : list of Usage
        One per instance of the block; updated.
    groups : list of (member, slice)
        The rows of ``states`` belonging to each instance (block member), in
        order.
    states : ndarray of shape (n, n_features)
    work : Workspace, default=None
        Where the work arrays and the answers are kept (valid until the next
        call with it); ``None``: fresh arrays.

    Returns
    -------
    Answers
    """
    n = states.shape[0]
    hashes = state_hashes(states, work)
    if work is None:
        decision = np.empty(n, dtype=np.intp)
        output = np.empty((n, model.width)) if model.has_output else None
        known = np.zeros(n, dtype=bool)
    else:
        decision = work.empty("decision", n, np.intp)
        output = work.empty("output", (n, model.width)) if model.has_output else None
        known = work.full("known", n, False, bool)
    for member, rows in groups:
        slots = memos[member].lookup(hashes[rows])
        hit = slots >= 0
        remembered = memos[member].answers(slots[hit])
        index = rows.start + np.flatnonzero(hit)
        decision[index] = remembered.decision
        if output is not None:
            output[index] = remembered.output
        known[index] = True
        usage[member].n_asked += slots.shape[0]
    novel = np.flatnonzero(~known)
    if novel.size == 0:
        return Answers(decision, output)
    # each distinct new state is asked once, whichever instance reached it
    _, first, inverse = np.unique(hashes[novel], return_index=True, return_inverse=True)
    sent = novel[first]
    seconds = model.seconds
    fresh = model.answer(states[sent])
    seconds = model.seconds - seconds
    decision[novel] = fresh.decision[inverse]
    if output is not None:
        output[novel] = fresh.output[inverse]
    # novel and sent are sorted: each member's rows are a slice of them
    members = [member for member, _ in groups]
    bounds = np.array([[rows.start, rows.stop] for _, rows in groups], dtype=np.intp)
    novel_at = np.searchsorted(novel, bounds)
    sent_at = np.searchsorted(np.sort(sent), bounds)
    for member, (low, high), (sent_low, sent_high) in zip(
        members, novel_at.tolist(), sent_at.tolist()
    ):
        mine = novel[low:high]
        if mine.size:
            new_hashes, where = np.unique(hashes[mine], return_index=True)
            memos[member].insert(
                new_hashes, Answers(decision, output).take(mine[where])
            )
        count = sent_high - sent_low
        if count:
            record = usage[member]
            record.n_calls += 1
            record.n_rows += count
            record.seconds += seconds * count / sent.size
    return Answers(decision, output)


# ---------------------------------------------------------------------- #
# the target
# ---------------------------------------------------------------------- #
class ClassTarget:
    """Reach an acceptable class: the model's decision must be one of them.

    Each instance has a target code, a row of ``accept`` (which classes are
    acceptable: one class, or a set such as every class but the one predicted
    now). The gap of a state is 0 when the model decides for an acceptable
    class (and, with ``min_proba``, gives the acceptable classes at least
    that probability together). Otherwise it measures how far the state is
    (at least ``MIN_GAP``): the lead of the most probable unacceptable class
    over the most probable acceptable one when the decision is the arg-max of
    the probabilities; ``1 - P(acceptable)`` when the decision is the model's
    ``predict`` (its threshold may lie anywhere); how much probability is
    missing below ``min_proba``; 1 for a model without probabilities. The
    reported score of a state is the probability of the acceptable classes.

    Parameters
    ----------
    accept : ndarray of shape (n_codes, n_classes) of bool
        The acceptable classes of each target code.
    use_predict : bool, default=False
        Whether the decisions come from the model's ``predict``.
    min_proba : float, default=None
        The probability the acceptable classes must reach.
    """

    reported = "target_proba"

    def __init__(self, accept, use_predict=False, min_proba=None):
        self.accept = np.asarray(accept, dtype=bool)
        self.use_predict = use_predict
        self.min_proba = min_proba

    def accepts(self, decision, codes):
        """Whether each decision is an acceptable class."""
        return self.accept[codes, decision]

    def gap(self, answers, codes, work=None):
        """How far each answer is from an acceptable class (0: reached).

        With a :class:`~sklearn_cscf._workspace.Workspace` ``work``, the work
        arrays and the result come from it.
        """
        reached = self.accepts(answers.decision, codes)
        if answers.output is None:
            return np.where(reached, 0.0, 1.0)
        work = Workspace() if work is None else work
        proba, n = answers.output, codes.shape[0]
        accept = work.take("accept", self.accept, codes)
        masked = work.full("gap_masked", proba.shape, 0.0)
        np.copyto(masked, proba, where=accept)
        chance = np.sum(masked, axis=1, out=work.empty("chance", n))
        distance = work.empty("distance", n)
        if self.use_predict:
            np.subtract(1.0, chance, out=distance)
        else:
            # the most probable unacceptable class's lead over the most
            # probable acceptable one
            np.copyto(masked, proba)
            np.copyto(masked, -np.inf, where=accept)
            np.max(masked, axis=1, out=distance)
            np.copyto(masked, proba)
            np.copyto(masked, -np.inf, where=np.logical_not(accept, out=accept))
            best = np.max(masked, axis=1, out=work.empty("gap_best", n))
            np.subtract(distance, best, out=distance)
        np.maximum(distance, 0.0, out=distance)
        distance += MIN_GAP
        np.copyto(distance, 0.0, where=reached)
        if self.min_proba is not None:
            short = chance < self.min_proba
            floor = np.subtract(self.min_proba, chance, out=work.empty("floor", n))
            floor += MIN_GAP
            np.maximum(distance, floor, out=floor)
            np.copyto(distance, floor, where=short)
        return distance

    def score(self, answers, codes):
        if answers.output is None:
            return np.full(codes.shape[0], np.nan)
        return np.where(self.accept[codes], answers.output, 0.0).sum(axis=1)


class RangeTarget:
    """Reach a range of a regressor's output.

    A state reaches it when the prediction lies in ``[low + margin, high -
    margin]``; its gap is otherwise the distance to that interval in units
    of the range's width (at least ``MIN_GAP``). The reported score is the
    prediction.

    Parameters
    ----------
    low, high : float
        The range (either may be infinite).
    margin : float, default=0.0
        How far inside the range the prediction must lie.
    """

    reported = "prediction"

    def __init__(self, low, high, margin=0.0):
        self.low, self.high, self.margin = float(low), float(high), float(margin)
        width = self.high - self.low
        self.scale = width if np.isfinite(width) and width > 0 else 1.0

    def accepts(self, decision, codes):
        return np.ones(codes.shape[0], dtype=bool)  # decided by the value alone

    def gap(self, answers, codes, work=None):
        value, exact = answers.output[:, 0], answers.output[:, -1]
        low, high = self.low + self.margin, self.high - self.margin
        distance = np.maximum(np.maximum(low - value, value - high), 0.0) / self.scale
        inside = (exact >= low) & (exact <= high)
        return np.where(inside, 0.0, distance + MIN_GAP)

    def score(self, answers, codes):
        return answers.output[:, 0]

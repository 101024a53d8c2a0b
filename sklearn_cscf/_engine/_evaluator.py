"""The one way to the model during ``explain``: genotypes judged for a block.

An :class:`Evaluator` owns, for the instances of a block, the model adapter,
the memo of the answers already given, what each instance cost the model and
the one count of the states each instance asked about (remembered or sent),
which is also what refinement's budget limits. The search, refinement, the
reachability probes and the description of the fronts all ask it: "judge
these genotypes" (:meth:`Evaluator.judge`, :meth:`Evaluator.evaluate`),
"price these" (:meth:`Evaluator.price`), "what does the model say of these
states" (:meth:`Evaluator.answers`, :meth:`Evaluator.verify`). Nothing else
calls the model during ``explain``, so this is where calls are counted and
sized.
"""

import numpy as np

from sklearn_cscf._engine._brkga import Evaluation
from sklearn_cscf._engine._genotypes import canonical_genotypes, decode_order
from sklearn_cscf._engine._hashing import (
    StateHasher,
    first_equal,
    first_rows,
    key_hashes,
)
from sklearn_cscf._engine._memo import AnswerMemo, Answers
from sklearn_cscf._engine._model import ModelAdapter, answer_in_chunks, in_chunks
from sklearn_cscf._engine._objectives import (
    Candidates,
    affect_matrix,
    evaluate_objectives,
)
from sklearn_cscf._engine._simulation import order_keys, simulate
from sklearn_cscf._engine._workspace import Workspace
from sklearn_cscf._rows import put_rows, take_rows

# while searching, a model call holds up to a generation of the block, and up
# to this many states where that is fewer: a call costs a model about as much
# for a few thousand states as for a few (refinement's calls of a row alone
# hold a thousand or two)
MIN_CALL_ROWS = 4096
# refinement's prices simulate at most about this many bytes of states per
# chunk of candidates (a state per step and feature)
PRICE_CHUNK_BYTES = 1 << 22
# ... and at least this many candidates
PRICE_CHUNK_MIN = 256


def price_chunk(n_features, n_actions):
    """Candidates simulated together by :meth:`Evaluator.price`: their states
    after every step (8 bytes a feature) fill about ``PRICE_CHUNK_BYTES``."""
    return max(PRICE_CHUNK_MIN, PRICE_CHUNK_BYTES // (8 * n_features * (n_actions + 1)))


class Evaluator:
    """Genotypes of a block's instances judged against the model.

    Every method taking ``owner`` and ``keys`` (or ``states``) reads row ``r``
    as a genotype (or state) of instance ``owner[r]``; ``owner`` is sorted.

    Parameters
    ----------
    problem : Problem
        What the instances share (actions, graph, objectives, target, model).
    x0 : ndarray of shape (n_instances, n_features)
        The encoded instances.
    targets : ndarray of shape (n_instances,)
        Each instance's target code.

    Attributes
    ----------
    asked : ndarray of shape (n_instances,)
        The states each instance asked about, remembered or sent: the one
        count that refinement's budget (:attr:`limit`) is measured on.
    n_calls, n_rows, seconds : ndarray of shape (n_instances,)
        The model calls holding at least one of an instance's states, its
        states sent, and its share (by rows) of the calls' time.
    limit : ndarray of shape (n_instances,)
        The most states each instance may have asked about when
        :meth:`admit` admits more work (``inf``: no limit).
    """

    def __init__(self, problem, x0, targets):
        self.problem = problem
        self.x0 = np.asarray(x0, dtype=float)
        self.targets = np.asarray(targets, dtype=np.intp)
        n = self.x0.shape[0]
        self.model = ModelAdapter.of(problem)
        self.start_discounts = problem.graph.discounts(self.x0)
        # no model call larger than a generation of the whole block or
        # MIN_CALL_ROWS, whichever is larger
        self.max_rows = problem.max_model_rows or max(
            problem.settings.population_size * n, MIN_CALL_ROWS
        )
        self.memo = AnswerMemo(n, self.model.width)
        # the memo's keys: the states' hashes, only the columns some action
        # changes hashed afresh
        changing = affect_matrix(problem.actions, self.x0.shape[1]).any(axis=0)
        self.hasher = StateHasher(self.x0, np.flatnonzero(changing))
        self.asked = np.zeros(n, dtype=np.intp)
        self.n_calls = np.zeros(n, dtype=np.intp)
        self.n_rows = np.zeros(n, dtype=np.intp)
        self.seconds = np.zeros(n)
        self.limit = np.full(n, np.inf)
        # the search's work arrays, sized by the first (largest) generation
        # and reused by every later one
        self.work = Workspace()

    def __len__(self):
        return self.x0.shape[0]

    # ------------------------------------------------------------------ #
    # genotypes to trajectories (no model call)
    # ------------------------------------------------------------------ #
    def decode(self, keys):
        """The order and lengths of genotypes ``keys``, within the plan limits
        (:func:`~sklearn_cscf._engine._genotypes.decode_order`)."""
        problem = self.problem
        return decode_order(
            keys, problem.n_actions, problem.settings.max_sequence_length
        )

    def simulate(
        self, owner, keys, record=False, *, limited=True, work=None, decoded=None
    ):
        """Trajectories of genotypes ``keys`` (``record``: every step's
        state); ``limited=False`` ignores the plan limits
        (``max_sequence_length``); ``work``: the
        :class:`~sklearn_cscf._engine._workspace.Workspace` their arrays live
        in (fresh ones when ``None``); ``decoded``: their order and lengths,
        when known."""
        problem = self.problem
        if work is None:
            starts = take_rows(self.x0, owner)
            discounts = take_rows(self.start_discounts, owner)
        else:
            starts = work.take("starts", self.x0, owner)
            discounts = work.take("start_discounts", self.start_discounts, owner)
        return simulate(
            starts,
            keys,
            problem.actions,
            problem.graph,
            max_length=problem.settings.max_sequence_length if limited else None,
            record=record,
            start_discounts=discounts,
            work=work,
            decoded=decoded,
        )

    # ------------------------------------------------------------------ #
    # genotypes judged
    # ------------------------------------------------------------------ #
    def evaluate(self, owner, keys, known=None):
        """The :class:`~sklearn_cscf._engine._brkga.Evaluation` of a
        generation's genotypes ``keys``.

        One simulation and at most one model call for all of them, in the
        evaluator's work arrays. A genotype encoding the same sequence (see
        :func:`~sklearn_cscf._engine._genotypes.canonical_genotypes`) for the
        same instance as one of ``known`` (the instances, genotypes and
        evaluation of genotypes already evaluated; or ``None``), or as an
        earlier row of ``keys``, takes that evaluation: it is neither
        simulated nor asked about again (it counts as asked). Returns arrays
        made for this call, none of the work arrays.
        """
        work = self.work
        n = keys.shape[0]
        if known is None:
            known_owner, every, pool = owner[:0], keys, []
        else:
            known_owner, known_keys, known_evaluation = known
            every, pool = np.concatenate([known_keys, keys]), [known_evaluation]
        k = known_owner.shape[0]
        decoded = self.decode(every)
        words = canonical_genotypes(every, self.problem.n_actions, order=decoded[0])
        # the first row (known ones first) of each instance and sequence
        source = first_equal(words, groups=np.concatenate([known_owner, owner]))
        new = np.flatnonzero(source[k:] == np.arange(k, k + n))
        # the known evaluations, then the new ones: where each row's is
        if new.size:
            # decoded once: the new ones' order is simulated as it is
            order, lengths = (part[k + new] for part in decoded)
            pool.append(
                self.judge(owner[new], keys[new], work, decoded=(order, lengths))
            )
        pool = Evaluation.concatenate(pool)
        where = np.arange(k + n)
        where[k + new] = k + np.arange(new.size)
        self.count_asked(np.delete(owner, new))
        # one copy out of the pool (whose new rows live in the work arrays)
        return pool.take(where[source[k:]])

    def judge(self, owner, keys, work=None, decoded=None):
        """The :class:`~sklearn_cscf._engine._brkga.Evaluation` of genotypes
        ``keys``: simulated, and the model asked about the final states not
        remembered (one call); ``work`` and ``decoded`` as in
        :meth:`simulate` (the evaluation's arrays then live in ``work``)."""
        problem = self.problem
        paths = self.simulate(owner, keys, work=work, decoded=decoded)
        if work is None:
            starts, codes = self.x0[owner], self.targets[owner]
        else:
            starts = work.take("starts", self.x0, owner)
            codes = work.take("codes", self.targets, owner)
        gap = self.gap(owner, paths.final, paths.violations, codes, work)
        F = evaluate_objectives(
            problem.objectives, Candidates(starts, paths, codes, work)
        )
        sequences, plans = paths.sequence_keys(), order_keys(paths.order)
        return Evaluation(
            F, gap, sequences, plans, key_hashes(sequences), key_hashes(plans)
        )

    def price(self, owner, keys):
        """The sequence cost of genotypes ``keys`` (as :meth:`judge`), ``inf``
        where the sequence is not valid: no other objective is computed."""
        # fresh arrays, not the search's work arrays: refinement's calls are
        # smaller and interleaved with other work, and memory just freed
        # (still in the caches) is faster to reuse than the search's buffers
        # (its state hashes and memo insertions measured 2-3 x slower). A
        # large call is simulated a chunk of candidates at a time (keeping
        # the final states and costs), so that its work arrays stay small
        # enough to be reused, not mapped and zeroed afresh; the model is
        # still asked once about them all
        n, d = keys.shape[0], self.x0.shape[1]
        chunk = price_chunk(d, self.problem.n_actions)
        final = np.empty((n, d))
        violations = np.empty(n, dtype=np.intp)
        cost = np.empty(n)
        for start in range(0, n, chunk):
            part = slice(start, start + chunk)
            paths = self.simulate(owner[part], keys[part])
            final[part] = paths.final
            violations[part] = paths.violations
            cost[part] = paths.sequence_cost
        gap = self.gap(owner, final, violations, self.targets[owner])
        cost[gap != 0] = np.inf
        return cost

    def gap(self, owner, final, violations, codes, work=None):
        """How far each ``final`` state is from its instance's target (the
        model asked about the states not remembered), plus its sequence's
        invalid steps (``violations``): 0 where the sequence is valid."""
        gap = self.problem.target.gap(self.answers(owner, final, work), codes, work)
        gap += violations
        return gap

    # ------------------------------------------------------------------ #
    # states asked about
    # ------------------------------------------------------------------ #
    def answers(self, owner, states, work=None):
        """The :class:`~sklearn_cscf._engine._memo.Answers` about ``states``:
        remembered ones from the memo, every other distinct state in one
        model call (or one per :attr:`max_rows` of them).

        The work arrays and the answers are kept in ``work`` (valid until its
        next use), or fresh arrays when it is ``None``.
        """
        model, memo = self.model, self.memo
        n = states.shape[0]
        hashes = self.hasher(states, owner, work)
        work = Workspace() if work is None else work
        decision = work.empty("decision", n, np.intp)
        output = work.empty("output", (n, model.width)) if model.has_output else None
        slots = memo.lookup(hashes, owner)
        known = slots >= 0
        remembered = memo.answers(slots[known])
        decision[known] = remembered.decision
        if output is not None:
            put_rows(output, np.flatnonzero(known), remembered.output)
        self.asked += np.bincount(owner, minlength=len(self))
        novel = np.flatnonzero(~known)
        if novel.size == 0:
            return Answers(decision, output)
        # each distinct new state is asked once, by its first row (whichever
        # instance reached it first: owner is sorted), and each instance
        # remembers its new states once
        inverse, sent = first_rows(hashes[novel])
        owners = owner[novel]
        if (owners[sent][inverse] == owners).all():
            # no state reached by two instances (the usual case): each state's
            # first row is its instance's
            pairs = sent
        else:
            _, pairs = first_rows(inverse * np.intp(len(self)) + owners)
        sent, pairs = novel[sent], novel[pairs]
        seconds = model.seconds
        fresh = answer_in_chunks(model, states[sent], self.max_rows)
        self._charge(owner[sent], model.seconds - seconds)
        decision[novel] = fresh.decision[inverse]
        if output is not None:
            put_rows(output, novel, take_rows(fresh.output, inverse))
        memo.insert(hashes[pairs], owner[pairs], Answers(decision, output).take(pairs))
        return Answers(decision, output)

    def verify(self, owner, states):
        """The model's own ``predict`` (class indices) about ``states``, in
        calls of at most :attr:`max_rows` rows; nothing is remembered."""
        seconds = self.model.seconds
        verified = in_chunks(states, self.max_rows, self.model.verify)
        self._charge(owner, self.model.seconds - seconds)
        return verified

    def forget(self):
        """Forget every answer: the next ones are asked afresh (a model whose
        answers vary)."""
        self.memo = AnswerMemo(len(self), self.model.width)

    def _charge(self, owner, seconds):
        """Count one model call about the states of instances ``owner``."""
        counts = np.bincount(owner, minlength=len(self))
        some = np.flatnonzero(counts)
        self.n_calls[some] += 1
        self.n_rows[some] += counts[some]
        self.seconds[some] += seconds * counts[some] / owner.shape[0]

    # ------------------------------------------------------------------ #
    # the count of states asked about, and the budget measured on it
    # ------------------------------------------------------------------ #
    def count_asked(self, owner, sign=1):
        """Count a state of each of instances ``owner`` as asked about (a
        sequence whose answer is known without asking); ``sign=-1``: as not
        asked about (a state asked ahead of need and not needed)."""
        self.asked += sign * np.bincount(owner, minlength=len(self))

    def limit_to(self, states):
        """Let each instance ask about at most ``states`` more states (an
        array, one per instance) before :meth:`admit` refuses its work."""
        self.limit = self.asked + np.asarray(states, dtype=float)

    def left(self):
        """The states each instance may still ask about."""
        return self.limit - self.asked

    def admit(self, owner, estimate):
        """Which rows (sorted by instance, by priority within it) fit their
        instance's states left, with ``estimate`` states each."""
        if owner.size == 0:
            return np.zeros(0, dtype=bool)
        estimate = np.broadcast_to(np.asarray(estimate, dtype=float), owner.shape)
        total = np.cumsum(estimate)
        starts = np.r_[0, np.flatnonzero(np.diff(owner)) + 1]
        sizes = np.diff(np.r_[starts, owner.size])
        before = np.repeat(total[starts] - estimate[starts], sizes)
        return total - before <= self.left()[owner]

"""The lock-step engine: a block of instances searched generation by generation.

Every instance of a :class:`Block` has its own search (its own population,
generator and termination; one :class:`~sklearn_cscf._engine._brkga.BRKGA` steps
them all). Each generation, the block
collects what every unfinished search asks for, simulates all those genotypes
at once, answers the states each instance already asked about from the
block's memo and asks the classifier about every other distinct state in
**one** call, then tells each search its evaluation. Each instance's result
depends only on its own row and seed, never on the other members of its
block.

After the search, the final fronts are refined (:mod:`~sklearn_cscf._engine._refine`)
and turned into :class:`~sklearn_cscf._result.InstanceResult` objects: distinct
sequences (by actions and order, the cheapest of each; every one with the
problem's ``all_values``), the state and the target score after every step,
the objective values by name, and diagnostics.
"""

import hashlib
import time
from collections import OrderedDict
from dataclasses import dataclass

import cloudpickle
import numpy as np

from sklearn_cscf._callable_checks import describe_error
from sklearn_cscf._engine._brkga import BRKGA, Evaluation
from sklearn_cscf._engine._genotypes import canonical_genotypes, decode_order
from sklearn_cscf._engine._hashing import StateHasher, first_equal, key_hashes
from sklearn_cscf._engine._memo import AnswerMemo
from sklearn_cscf._engine._model import ModelAdapter, Usage, answer_batch
from sklearn_cscf._engine._objectives import (
    Candidates,
    affect_matrix,
    evaluate_objectives,
    objective_slices,
)
from sklearn_cscf._engine._reachability import mark_unreachable
from sklearn_cscf._engine._refine import refine, refine_budget
from sklearn_cscf._engine._simulation import order_keys, simulate
from sklearn_cscf._engine._workspace import Workspace
from sklearn_cscf._result import Diagnostics, InstanceResult
from sklearn_cscf._rows import take_rows
from sklearn_cscf._status import STATUS_ERROR, STATUS_NO_COUNTERFACTUAL, STATUS_OK

# refinement's prices simulate at most about this many bytes of states per
# chunk of candidates (a state per step and feature)
PRICE_CHUNK_BYTES = 1 << 22
# ... and at least this many candidates
PRICE_CHUNK_MIN = 256


def price_chunk(n_features, n_actions):
    """Candidates simulated together by :meth:`Block.price`: their states
    after every step (8 bytes a feature) fill about ``PRICE_CHUNK_BYTES``."""
    return max(PRICE_CHUNK_MIN, PRICE_CHUNK_BYTES // (8 * n_features * (n_actions + 1)))


@dataclass
class Problem:
    """What the searches of every instance share (sent once to each worker)."""

    schema: object  # FeatureSchema
    actions: list  # CompiledAction
    graph: object  # CompiledGraph
    objectives: list  # Objective
    target: object  # e.g. ClassTarget
    settings: object  # SearchSettings
    estimator: object
    classes: np.ndarray
    use_predict: bool = False  # decisions from predict, not the probabilities
    refine: bool = True
    recheck: bool = False  # the model's answers vary: ask afresh about plans
    # describe every sequence of the front, not only the cheapest values of
    # each plan and order (the explainer's all_values)
    all_values: bool = False
    # the most states in one model call; None: population_size x block rows
    max_model_rows: int | None = None

    @property
    def n_actions(self):
        return len(self.actions)

    @property
    def slices(self):
        return objective_slices(self.objectives)


def _groups(members, counts):
    """``(member, slice)`` of each member's rows in a concatenated batch."""
    ends = np.cumsum(counts)
    return [
        (member, slice(int(end - count), int(end)))
        for member, count, end in zip(members, counts, ends)
    ]


class Block:
    """Instances searched together, sharing one classifier call per generation.

    Parameters
    ----------
    problem : Problem
    x0 : ndarray of shape (n_instances, n_features)
        The encoded instances.
    targets : ndarray of shape (n_instances,)
        Index of each instance's target class.
    seeds : list of numpy.random.SeedSequence
        Each instance's seed.
    """

    def __init__(self, problem, x0, targets, seeds):
        self.problem = problem
        self.x0 = np.asarray(x0, dtype=float)
        self.targets = np.asarray(targets, dtype=np.intp)
        self.seeds = seeds
        self.model = ModelAdapter(
            problem.estimator, problem.schema, problem.classes, problem.use_predict
        )
        self.start_discounts = problem.graph.discounts(self.x0)
        n = self.x0.shape[0]
        # no model call larger than a generation of the whole block
        self.max_model_rows = problem.max_model_rows or (
            problem.settings.population_size * n
        )
        self.memo = AnswerMemo(n, self.model.width)
        # the memo's keys: the states' hashes, only the columns some action
        # changes hashed afresh
        changing = affect_matrix(problem.actions, self.x0.shape[1]).any(axis=0)
        self.hasher = StateHasher(self.x0, np.flatnonzero(changing))
        self.usage = [Usage() for _ in range(n)]
        # the search's work arrays, sized by the first (largest) generation
        # and reused by every later one
        self.work = Workspace()

    def __len__(self):
        return self.x0.shape[0]

    # ------------------------------------------------------------------ #
    def simulate(self, owner, keys, record=False):
        """Trajectories of genotypes ``keys``, row ``r`` from instance ``owner[r]``."""
        return self._simulate(owner, keys, record)

    def _simulate(self, owner, keys, record=False, work=None, decoded=None):
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
            max_length=problem.settings.max_sequence_length,
            record=record,
            start_discounts=discounts,
            work=work,
            decoded=decoded,
        )

    def evaluate(self, owner, keys, known=None):
        """Evaluate the genotypes ``keys``, row ``r`` an instance of member
        ``owner[r]`` (``owner`` sorted).

        One simulation and at most one classifier call for all of them, in
        the block's work arrays. A genotype encoding the same sequence (see
        :func:`~sklearn_cscf._engine._genotypes.canonical_genotypes`) for the same
        member as one of ``known`` (the members, genotypes and
        :class:`~sklearn_cscf._engine._brkga.Evaluation` of genotypes already
        evaluated; or ``None``), or as an earlier row of ``keys``, takes that
        evaluation: it is neither simulated nor asked about again (it counts
        as asked). Returns the :class:`~sklearn_cscf._engine._brkga.Evaluation` of
        ``keys`` (arrays made for this call, none of the block's work
        arrays).
        """
        work = self.work
        n = keys.shape[0]
        if known is None:
            known_owner, every, pool = owner[:0], keys, []
        else:
            known_owner, known_keys, known_evaluation = known
            every, pool = np.concatenate([known_keys, keys]), [known_evaluation]
        k = known_owner.shape[0]
        decoded = decode_order(
            every, self.problem.n_actions, self.problem.settings.max_sequence_length
        )
        words = canonical_genotypes(every, self.problem.n_actions, order=decoded[0])
        # the first row (known ones first) of each member and sequence
        source = first_equal(words, groups=np.concatenate([known_owner, owner]))
        new = np.flatnonzero(source[k:] == np.arange(k, k + n))
        # the known evaluations, then the new ones: where each row's is
        if new.size:
            # decoded once: the new ones' order is simulated as it is
            order, lengths = (part[k + new] for part in decoded)
            pool.append(
                self._judge(owner[new], keys[new], work, decoded=(order, lengths))
            )
        pool = Evaluation.concatenate(pool)
        where = np.arange(k + n)
        where[k + new] = k + np.arange(new.size)
        self.count_asked(np.delete(owner, new))
        # one copy out of the pool (whose new rows live in the work arrays)
        return pool.take(where[source[k:]])

    def judge(self, owner, keys):
        """The :class:`~sklearn_cscf._engine._brkga.Evaluation` of genotypes ``keys``,
        row ``r`` an instance of member ``owner[r]`` (``owner`` sorted)."""
        return self._judge(owner, keys)

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
            paths = self._simulate(owner[part], keys[part])
            final[part] = paths.final
            violations[part] = paths.violations
            cost[part] = paths.sequence_cost
        gap = self._gap(owner, final, violations, self.targets[owner])
        cost[gap != 0] = np.inf
        return cost

    def count_asked(self, owner):
        """Count a state of each of instances ``owner`` as asked about (a
        sequence whose answer is known without asking)."""
        asked = np.bincount(owner, minlength=len(self))
        for member in np.flatnonzero(asked).tolist():
            self.usage[member].n_asked += int(asked[member])

    def _judge(self, owner, keys, work=None, decoded=None):
        """:meth:`judge`; with ``work``, its arrays (and the evaluation's)
        live in that :class:`~sklearn_cscf._engine._workspace.Workspace`;
        ``decoded``: the genotypes' order and lengths, when known."""
        problem = self.problem
        paths = self._simulate(owner, keys, work=work, decoded=decoded)
        if work is None:
            starts, codes = self.x0[owner], self.targets[owner]
        else:
            starts = work.take("starts", self.x0, owner)
            codes = work.take("codes", self.targets, owner)
        gap = self._gap(owner, paths.final, paths.violations, codes, work)
        F = evaluate_objectives(
            problem.objectives, Candidates(starts, paths, codes, work)
        )
        sequences, plans = paths.sequence_keys(), order_keys(paths.order)
        return Evaluation(
            F, gap, sequences, plans, key_hashes(sequences), key_hashes(plans)
        )

    def _gap(self, owner, final, violations, codes, work=None):
        """How far each ``final`` state is from its instance's target (the
        model asked about the states not remembered), plus its sequence's
        invalid steps (``violations``): 0 where the sequence is valid."""
        members, counts = np.unique(owner, return_counts=True)
        answers = answer_batch(
            self.model,
            self.memo,
            self.usage,
            _groups(members.tolist(), counts),
            final,
            work,
            self.max_model_rows,
            self.hasher,
        )
        gap = self.problem.target.gap(answers, codes, work)
        gap += violations
        return gap

    # ------------------------------------------------------------------ #
    def run(self):
        """Search, refine and describe every instance of the block."""
        start = time.perf_counter()
        problem = self.problem
        cost_column = problem.slices["sequence_cost"].start
        search = BRKGA(
            2 * problem.n_actions,
            problem.settings,
            [np.random.default_rng(seed) for seed in self.seeds],
            cost_column,
        )
        while not search.done:
            owner, keys = search.ask()
            search.tell(self.evaluate(owner, keys, search.elites()))
        fronts = [search.result(m) for m in range(len(self))]
        refined = np.zeros(len(self), dtype=np.intp)
        if problem.refine:
            fronts, refined = refine(self, fronts, refine_budget(self.usage))
        results = mark_unreachable(self, self.describe(fronts))
        # the time outside the classifier, shared by the states each one asked
        elsewhere = time.perf_counter() - start - self.model.seconds
        asked = np.array([usage.n_asked for usage in self.usage], dtype=float)
        share = asked / max(asked.sum(), 1.0)
        for m, result in enumerate(results):
            usage = self.usage[m]
            result.diagnostics = Diagnostics(
                n_generations=int(search.generation[m]),
                n_evaluated=usage.n_asked,
                n_model_calls=usage.n_calls,
                n_model_rows=usage.n_rows,
                model_seconds=usage.seconds,
                total_seconds=usage.seconds + float(elsewhere * share[m]),
                n_refined=int(refined[m]),
            )
        return results

    def describe(self, fronts):
        """Result objects: per instance, the distinct sequences of its front (by
        actions and order, the cheapest of each; every one with the problem's
        ``all_values``) sorted by cost, with the state
        and the target score after every step. At most three classifier calls
        for the whole block: the final states asked afresh (a model whose
        answers vary), checked with ``predict`` (a search by the arg-max of
        the probabilities), and the score after every step."""
        problem = self.problem
        slices = problem.slices
        cost = slices["sequence_cost"].start
        gower = slices["gower_distance"].start
        chosen_keys, members = [], []
        for m, (keys, evaluation) in enumerate(fronts):
            if keys.shape[0] == 0:
                continue
            F = evaluation.F
            by_cost = np.lexsort((F[:, gower], F[:, cost]))
            if not problem.all_values:
                order, _ = decode_order(
                    keys[by_cost],
                    problem.n_actions,
                    problem.settings.max_sequence_length,
                )
                _, first = np.unique(order_keys(order), return_index=True)
                by_cost = by_cost[np.sort(first)]
            chosen_keys.append(keys[by_cost])
            members.append(m)
        results = [
            InstanceResult(
                x0=self.x0[m],
                target=int(self.targets[m]),
                status=STATUS_NO_COUNTERFACTUAL,
            )
            for m in range(len(self))
        ]
        if not members:
            return results
        counts = [k.shape[0] for k in chosen_keys]
        owner = np.repeat(np.asarray(members, dtype=np.intp), counts)
        keys = np.vstack(chosen_keys)
        paths = self.simulate(owner, keys, record=True)
        argmax = self.model.has_predict and not self.model.use_predict
        if argmax or problem.recheck:
            accepted = np.ones(owner.shape[0], dtype=bool)
            if problem.recheck:
                # answers vary between calls (fit saw it): forget the search's
                # and ask afresh; the report then shows these fresh answers
                self.memo = AnswerMemo(len(self), self.model.width)
                fresh = answer_batch(
                    self.model,
                    self.memo,
                    self.usage,
                    _groups(members, counts),
                    paths.final,
                    max_rows=self.max_model_rows,
                    hasher=self.hasher,
                )
                accepted = problem.target.gap(fresh, self.targets[owner]) == 0
            if argmax:
                # the search judged by the arg-max of the probabilities, which
                # agreed with predict on the training data; what is reported
                # must also be what the model's own predict accepts
                seconds = self.model.seconds
                step = self.max_model_rows
                verified = np.concatenate(
                    [
                        self.model.verify(paths.final[start : start + step])
                        for start in range(0, paths.final.shape[0], step)
                    ]
                )
                accepted &= problem.target.accepts(verified, self.targets[owner])
                self._charge(owner, self.model.seconds - seconds)
            if not accepted.all():
                owner, keys = owner[accepted], keys[accepted]
                paths = paths.take(accepted)
                members, counts = np.unique(owner, return_counts=True)
                members, counts = members.tolist(), counts.tolist()
                if not members:
                    return results
        F = evaluate_objectives(
            problem.objectives, Candidates(self.x0[owner], paths, self.targets[owner])
        )
        # the score after each step: one call for every step of every sequence
        steps = np.arange(problem.n_actions + 1)[None, :]
        taken = (steps >= 1) & (steps <= paths.lengths[:, None])
        step_owner = np.repeat(owner, taken.sum(axis=1))
        step_members, step_counts = np.unique(step_owner, return_counts=True)
        answers = answer_batch(
            self.model,
            self.memo,
            self.usage,
            _groups(step_members.tolist(), step_counts),
            paths.states[taken],
            max_rows=self.max_model_rows,
            hasher=self.hasher,
        )
        score = np.full(taken.shape, np.nan)
        score[taken] = problem.target.score(answers, self.targets[step_owner])
        # the class after the last step, from the same answers
        decision = np.full(taken.shape, -1, dtype=np.intp)
        decision[taken] = answers.decision
        reached = decision[np.arange(owner.shape[0]), paths.lengths]
        for m, rows in _groups(members, counts):
            results[m] = InstanceResult(
                x0=self.x0[m],
                target=int(self.targets[m]),
                status=STATUS_OK,
                order=paths.order[rows],
                lengths=paths.lengths[rows],
                effort=paths.effort[rows],
                discount=paths.discount[rows],
                step_cost=paths.step_cost[rows],
                states=paths.states[rows],
                step_score=score[rows, 1:],
                reached=reached[rows],
                objectives={
                    name: F[rows, columns].squeeze(axis=1)
                    if columns.stop - columns.start == 1
                    else F[rows, columns]
                    for name, columns in slices.items()
                },
            )
        return results

    def _charge(self, owner, seconds):
        """Count one classifier call about the states of instances ``owner``."""
        counts = np.bincount(owner, minlength=len(self))
        for member in np.flatnonzero(counts).tolist():
            usage = self.usage[member]
            usage.n_calls += 1
            usage.n_rows += int(counts[member])
            usage.seconds += seconds * counts[member] / owner.shape[0]


def explain_block(problem, x0, targets, seeds, errors="warn"):
    """Results of a block of instances (the unit of work of a worker).

    When something raises (a user callable, the model), ``errors="raise"``
    lets it propagate. Otherwise each instance of the block is explained again
    on its own (its result does not depend on its neighbours): the ones that
    fail alone get an ``"error"`` result naming what failed, the others their
    results.
    """
    try:
        return Block(problem, x0, targets, seeds).run()
    except Exception as exc:
        if errors == "raise":
            raise
        if len(seeds) == 1:
            return [_error_result(x0[0], targets[0], exc)]
    results = []
    for k in range(len(seeds)):
        try:
            results.extend(
                Block(
                    problem, x0[k : k + 1], targets[k : k + 1], seeds[k : k + 1]
                ).run()
            )
        except Exception as exc:
            results.append(_error_result(x0[k], targets[k], exc))
    return results


def _error_result(x0, target, exc):
    return InstanceResult(
        x0=x0, target=int(target), status=STATUS_ERROR, message=describe_error(exc)
    )


# ---------------------------------------------------------------------- #
# shipping the problem to workers once
# ---------------------------------------------------------------------- #
class Shipment:
    """The problem, pickled at most once per ``explain`` call and unpickled at
    most once per worker process.

    Every task of a parallel run carries the same shipment. Pickling it gives
    the already pickled bytes and a token of them; a worker unpickles a token
    it has not seen and reuses its copy for every later task. Its reported
    size (``sys.getsizeof``) is that of the object alone: joblib's Dask
    backend scatters a large argument to one worker, and the scheduler then
    queues every task needing it on that worker, one after another; sent
    with each task (a block of rows), the bytes cost little and the tasks
    spread over the cluster.
    """

    def __init__(self, problem):
        self.problem = problem
        self._packed = None

    def _pack(self):
        if self._packed is None:
            payload = cloudpickle.dumps(self.problem)
            token = hashlib.blake2b(payload, digest_size=16).hexdigest()
            self._packed = (token, payload)
        return self._packed

    @property
    def token(self):
        """A digest of the pickled problem: equal problems, equal tokens."""
        return self._pack()[0]

    def __reduce__(self):
        return _unpack, self._pack()


_UNPACKED = OrderedDict()  # token -> Shipment, in this process
_KEEP_UNPACKED = 4


def _unpack(token, payload):
    shipment = _UNPACKED.get(token)
    if shipment is None:
        shipment = Shipment(cloudpickle.loads(payload))
        shipment._packed = (token, payload)
        _UNPACKED[token] = shipment
        while len(_UNPACKED) > _KEEP_UNPACKED:
            _UNPACKED.popitem(last=False)
    return shipment

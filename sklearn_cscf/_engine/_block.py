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

With ``n_generations="auto"``, every plan of up to three actions at its far
ends and a fixed spread of genotypes are judged first, for as many instances
at a time as fill one model call; only the instances none of whose plans is
valid are searched. Then the fronts are refined
(:mod:`~sklearn_cscf._engine._refine`) and turned into
:class:`~sklearn_cscf._result.InstanceResult` objects: distinct sequences (by
actions and order, the cheapest of each; every one with the problem's
``all_values``), the state and the target score after every step, the
objective values by name, and diagnostics.
"""

import hashlib
import time
from collections import OrderedDict
from dataclasses import dataclass

import cloudpickle
import numpy as np

from sklearn_cscf._callable_checks import describe_error
from sklearn_cscf._engine._brkga import BRKGA, pareto_front
from sklearn_cscf._engine._evaluator import Evaluator
from sklearn_cscf._engine._genotypes import plan_structures, space_filling
from sklearn_cscf._engine._objectives import (
    Candidates,
    evaluate_objectives,
    objective_slices,
)
from sklearn_cscf._engine._reachability import mark_unreachable
from sklearn_cscf._engine._refine import refine, refine_budget
from sklearn_cscf._engine._simulation import order_keys
from sklearn_cscf._result import Diagnostics, InstanceResult
from sklearn_cscf._status import STATUS_ERROR, STATUS_NO_COUNTERFACTUAL, STATUS_OK

# n_generations="auto": every plan of at most this many actions is judged
# first, at its far ends ...
PLANS_MAX_LENGTH = 3
# ... and the plans of at most this many steps also at these value keys
# (between the ends: a model's islands of acceptance) ...
PLANS_GRID_LENGTH = 2
PLANS_GRID = (0.25, 0.5, 0.75)
# ... when there are at most this many times population_size of them;
# with a fixed spread of genotypes (a Sobol design) of this many times
# population_size (rounded up to a power of two)
PLANS_PER_MEMBER = 3
DESIGN_PER_MEMBER = 8
# the states refinement may ask about for an instance whose plans were
# judged (the search's instances: refine_budget of what they asked)
PLANS_REFINE_BUDGET = 60_000


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
        self.seeds = seeds
        # the one way to the model: every judging path below asks it
        self.evaluator = Evaluator(problem, x0, targets)
        self.x0, self.targets = self.evaluator.x0, self.evaluator.targets

    def __len__(self):
        return self.x0.shape[0]

    # ------------------------------------------------------------------ #
    def run(self):
        """Search, refine and describe every instance of the block."""
        start = time.perf_counter()
        problem, evaluator = self.problem, self.evaluator
        fronts, generations = self._plans(), np.zeros(len(self), dtype=np.intp)
        searched = np.array([keys is None for keys, _ in fronts], dtype=bool)
        if searched.any():
            rows = np.flatnonzero(searched)
            found, generations[rows] = self._search(rows)
            for m, front in zip(rows.tolist(), found):
                fronts[m] = front
        refined = np.zeros(len(self), dtype=np.intp)
        if problem.refine:
            budget = np.where(
                searched, refine_budget(evaluator.asked), PLANS_REFINE_BUDGET
            )
            fronts, refined = refine(evaluator, fronts, budget)
        results = mark_unreachable(evaluator, self.describe(fronts))
        # the time outside the classifier, shared by the states each one asked
        elsewhere = time.perf_counter() - start - evaluator.model.seconds
        asked = evaluator.asked.astype(float)
        share = asked / max(asked.sum(), 1.0)
        for m, result in enumerate(results):
            seconds = float(evaluator.seconds[m])
            result.diagnostics = Diagnostics(
                n_generations=int(generations[m]),
                n_evaluated=int(evaluator.asked[m]),
                n_model_calls=int(evaluator.n_calls[m]),
                n_model_rows=int(evaluator.n_rows[m]),
                model_seconds=seconds,
                total_seconds=seconds + float(elsewhere * share[m]),
                n_refined=int(refined[m]),
            )
        return results

    def _plans(self):
        """``n_generations="auto"`` with refinement: every plan of up to three
        actions, each step at its far end(s), those of one or two also at
        ``PLANS_GRID`` (see
        :func:`~sklearn_cscf._engine._genotypes.plan_structures`; at most
        ``PLANS_PER_MEMBER`` times ``population_size`` of them), and a fixed
        spread of ``DESIGN_PER_MEMBER`` times ``population_size`` genotypes
        (:func:`~sklearn_cscf._engine._genotypes.space_filling`), judged for
        as many instances at a time as fill one model call; each instance's
        front is its feasible non-dominated ones. ``(None, None)`` for the
        instances none of whose is feasible, and for every instance
        otherwise: the search finds theirs. The same genotypes for every
        instance, whatever its seed."""
        problem, settings = self.problem, self.problem.settings
        n = len(self)
        none = [(None, None)] * n
        if not (settings.auto and problem.refine):
            return none
        max_length = PLANS_MAX_LENGTH
        if settings.max_sequence_length is not None:
            max_length = min(max_length, settings.max_sequence_length)
        plans = plan_structures(
            [action.space for action in problem.actions],
            max_length,
            PLANS_PER_MEMBER * settings.population_size,
            grid=PLANS_GRID,
            grid_length=PLANS_GRID_LENGTH,
        )
        if plans is None:
            return none
        design = space_filling(
            plans.shape[1], DESIGN_PER_MEMBER * settings.population_size
        )
        plans = np.vstack([plans, design])
        # as many instances at a time as fill one model call of the block
        # (its states, not all the block's at once, are held in memory)
        group = max(1, self.evaluator.max_rows // plans.shape[0])
        fronts = []
        for first in range(0, n, group):
            members = np.arange(first, min(first + group, n))
            owner = np.repeat(members, plans.shape[0])
            evaluation = self.evaluator.evaluate(
                owner, np.tile(plans, (members.size, 1))
            )
            for j in range(members.size):
                mine = evaluation.take(
                    slice(j * plans.shape[0], (j + 1) * plans.shape[0])
                )
                front = pareto_front(mine)
                fronts.append(
                    (plans[front], mine.take(front)) if front.size else (None, None)
                )
        return fronts

    def _search(self, rows):
        """The BRKGA's fronts of instances ``rows`` (searched in lock step,
        each as if alone), and the generations each took."""
        problem, evaluator = self.problem, self.evaluator
        search = BRKGA(
            2 * problem.n_actions,
            problem.settings,
            [np.random.default_rng(self.seeds[m]) for m in rows.tolist()],
            problem.slices["sequence_cost"].start,
        )
        while not search.done:
            owner, keys = search.ask()
            known = search.elites()
            if known is not None:
                known = (rows[known[0]], known[1], known[2])
            search.tell(evaluator.evaluate(rows[owner], keys, known))
        return [search.result(j) for j in range(rows.size)], search.generation

    def describe(self, fronts):
        """Result objects: per instance, the distinct sequences of its front (by
        actions and order, the cheapest of each; every one with the problem's
        ``all_values``) sorted by cost, with the state
        and the target score after every step. At most three classifier calls
        for the whole block: the final states asked afresh (a model whose
        answers vary), checked with ``predict`` (a search by the arg-max of
        the probabilities), and the score after every step."""
        problem, evaluator = self.problem, self.evaluator
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
                order, _ = evaluator.decode(keys[by_cost])
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
        paths = evaluator.simulate(owner, keys, record=True)
        model = evaluator.model
        argmax = model.has_predict and not model.use_predict
        if argmax or problem.recheck:
            accepted = np.ones(owner.shape[0], dtype=bool)
            if problem.recheck:
                # answers vary between calls (fit saw it): forget the search's
                # and ask afresh; the report then shows these fresh answers
                evaluator.forget()
                fresh = evaluator.answers(owner, paths.final)
                accepted = problem.target.gap(fresh, self.targets[owner]) == 0
            if argmax:
                # the search judged by the arg-max of the probabilities, which
                # agreed with predict on the training data; what is reported
                # must also be what the model's own predict accepts
                verified = evaluator.verify(owner, paths.final)
                accepted &= problem.target.accepts(verified, self.targets[owner])
            if not accepted.all():
                owner, keys = owner[accepted], keys[accepted]
                paths = paths.take(accepted)
                if not owner.size:
                    return results
        F = evaluate_objectives(
            problem.objectives, Candidates(self.x0[owner], paths, self.targets[owner])
        )
        # the score after each step: one call for every step of every sequence
        steps = np.arange(problem.n_actions + 1)[None, :]
        taken = (steps >= 1) & (steps <= paths.lengths[:, None])
        step_owner = np.repeat(owner, taken.sum(axis=1))
        answers = evaluator.answers(step_owner, paths.states[taken])
        score = np.full(taken.shape, np.nan)
        score[taken] = problem.target.score(answers, self.targets[step_owner])
        # the class after the last step, from the same answers
        decision = np.full(taken.shape, -1, dtype=np.intp)
        decision[taken] = answers.decision
        reached = decision[np.arange(owner.shape[0]), paths.lengths]
        members, first = np.unique(owner, return_index=True)
        for m, begin, end in zip(members, first, [*first[1:], owner.size]):
            rows = slice(int(begin), int(end))
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

"""Multi-objective BRKGA over random keys as an ask/tell stepper (pymoo stays here).

:class:`BRKGA` holds the populations, elites and termination of several
instances, each searched as if alone. It proposes genotypes
(:meth:`BRKGA.ask`) and is told their evaluation (:meth:`BRKGA.tell`); it
knows nothing of actions, states or the model, so a driver asks the
classifier once per generation for all the instances.

Each generation: the elites (feasible, non-dominated, distinct decoded
sequences, capped by crowding distance) survive unchanged; offspring come from
biased crossover of a random elite and a random non-elite, taking each key from
the elite with probability ``crossover_bias``; fresh random mutants fill the
rest. Only new individuals are evaluated.
"""

from dataclasses import dataclass

import numpy as np
from pymoo.operators.survival.rank_and_crowding.metrics import (
    calc_crowding_distance,
)
from pymoo.util.nds.non_dominated_sorting import find_non_dominated

from sklearn_cscf._engine._hashing import first_occurrences
from sklearn_cscf._engine._workspace import Workspace
from sklearn_cscf._rows import put_rows, take_rows

# n_generations="auto": at least this many generations ...
AUTO_MIN_GENERATIONS = 30
# ... and at most this many (twice the paper's budget) ...
AUTO_MAX_GENERATIONS = 300
# ... ending once the cheapest plans have not changed for this many
# (n_iter_no_change, when given) ...
AUTO_PATIENCE = 25
# ... or, with no feasible individual yet, after the paper's budget
AUTO_INFEASIBLE_GENERATIONS = 150
# the cheapest plans (distinct actions and orders) that must settle
AUTO_PLANS = 2


@dataclass(frozen=True)
class SearchSettings:
    """The search's parameters, the explainer's of the same names (no
    defaults here: they live in the explainer's signature)."""

    population_size: int
    n_generations: int | str
    mutant_fraction: float
    crossover_bias: float
    elite_fraction: float
    max_sequence_length: int | None
    n_iter_no_change: int | None

    @property
    def auto(self):
        """Whether the search decides when it has converged."""
        return self.n_generations == "auto"

    @property
    def max_generations(self):
        return AUTO_MAX_GENERATIONS if self.auto else self.n_generations


@dataclass
class Evaluation:
    """Objectives and feasibility of a batch of genotypes."""

    F: np.ndarray  # (n, n_objective_columns), all minimised
    gap: np.ndarray  # (n,) constraint violation: target gap + invalid steps
    sequence_key: np.ndarray  # (n,) bytes identifying the decoded sequence
    # (n,) bytes identifying its plan (actions and order, not values); None:
    # the sequence keys
    plan_key: np.ndarray | None = None
    # (n,) the keys' word_hashes, computed once for a whole block (a search
    # tells distinct sequences and plans apart every generation); None: not
    # computed
    sequence_hash: np.ndarray | None = None
    plan_hash: np.ndarray | None = None

    @property
    def feasible(self):
        return self.gap == 0

    def take(self, index):
        return Evaluation(
            *(None if a is None else take_rows(a, index) for a in self._arrays())
        )

    def _arrays(self):
        return (
            self.F,
            self.gap,
            self.sequence_key,
            self.plan_key,
            self.sequence_hash,
            self.plan_hash,
        )

    @staticmethod
    def concatenate(parts):
        columns = zip(*(p._arrays() for p in parts))
        return Evaluation(
            *(
                None if any(a is None for a in arrays) else np.concatenate(arrays)
                for arrays in columns
            )
        )


def distinct_feasible(evaluation, groups=None):
    """Indices of the first of each distinct feasible sequence, in order
    (``groups``: a group per individual; then of each group)."""
    feasible = np.flatnonzero(evaluation.feasible)
    if feasible.size == 0:
        return feasible
    hashes = evaluation.sequence_hash
    return feasible[
        first_occurrences(
            evaluation.sequence_key[feasible],
            None if hashes is None else hashes[feasible],
            None if groups is None else groups[feasible],
        )
    ]


def pareto_front(evaluation):
    """Indices of the distinct feasible non-dominated individuals."""
    distinct = distinct_feasible(evaluation)
    if distinct.size == 0:
        return distinct
    return distinct[find_non_dominated(evaluation.F[distinct])]


def select_elites(evaluation, max_elites, cost_column=0):
    """Elites: the Pareto front capped by crowding distance; without any
    feasible individual, the distinct ones closest to feasibility (then the
    cheapest)."""
    front = pareto_front(evaluation)
    if front.size:
        if front.size > max_elites:
            crowding = calc_crowding_distance(evaluation.F[front])
            keep = np.argsort(-crowding, kind="stable")[:max_elites]
            front = np.sort(front[keep])
        return front
    distinct = first_occurrences(evaluation.sequence_key, evaluation.sequence_hash)
    ranked = np.lexsort((evaluation.F[distinct, cost_column], evaluation.gap[distinct]))
    return np.sort(distinct[ranked[:max_elites]])


def biased_crossover(elite_keys, other_keys, n_offspring, bias, rng, n_mutants=0):
    """Offspring of a random elite and a random non-elite parent, then
    ``n_mutants`` fresh random genotypes.

    Each key of an offspring is taken from the **elite** parent with
    probability ``bias``.
    """
    out = np.empty((n_offspring + n_mutants, elite_keys.shape[1]))
    elite, other = _draws(
        rng, elite_keys.shape[0], other_keys.shape[0], n_offspring, out
    )
    _cross(out, np.arange(n_offspring), elite_keys[elite], other_keys[other], bias)
    return out


def _draws(rng, n_elites, n_others, n_offspring, out):
    """One instance's random numbers for a generation, in the order its
    search has always drawn them: the offspring's elite parents, their other
    parents, then one number per key of each offspring (its coin flips) and
    of each mutant (its keys), written into the rows of ``out`` (one draw:
    the same numbers as two draws in a row)."""
    if n_offspring:
        elite = rng.integers(n_elites, size=n_offspring)
        other = rng.integers(n_others, size=n_offspring)
    else:
        elite = other = np.zeros(0, dtype=np.intp)
    rng.random(out=out)
    return elite, other


def _cross(out, children, elite_keys, other_keys, bias):
    """The rows ``children`` of ``out`` (their coin flips) take each key from
    their elite parent (``elite_keys``, overwritten) where the flip is below
    ``bias``, else from the other parent."""
    np.copyto(elite_keys, other_keys, where=take_rows(out, children) >= bias)
    put_rows(out, children, elite_keys)


def _starts(counts):
    """Where each of parts of ``counts`` rows starts, the parts end to end."""
    return np.cumsum(counts) - counts


def _ranks(counts):
    """``0 .. count - 1`` for each of ``counts``, concatenated."""
    return np.arange(int(counts.sum())) - np.repeat(_starts(counts), counts)


class BRKGA:
    """The searches of several instances, stepped together from outside.

    Each instance has its own population, elites, generator and termination,
    and is searched exactly as if it were alone: what it asks for and what it
    finds depend only on its generator and on what it is told. The
    populations of the instances still searching are kept stacked (grouped by
    instance, in order), so that a generation's selection and offspring are
    a few array operations for all of them, not a few per instance; and a
    driver asks the classifier once per generation for all of them.

    Each generation: the elites (feasible, non-dominated, distinct decoded
    sequences, capped by crowding distance) survive unchanged; offspring come
    from biased crossover of a random elite and a random non-elite, taking
    each key from the elite with probability ``crossover_bias``; fresh random
    mutants fill the rest. Only new individuals are evaluated.

    Parameters
    ----------
    n_keys : int
        Random keys per genotype (twice the number of actions).
    settings : SearchSettings
    rngs : list of numpy.random.Generator
        Each instance's own generator.
    cost_column : int, default=0
        The column of ``F`` that ranks infeasible individuals with equal gaps
        (the sequence cost).

    Examples
    --------
    >>> import numpy as np
    >>> rngs = [np.random.default_rng(0), np.random.default_rng(1)]
    >>> settings = SearchSettings(6, 2, 0.2, 0.7, 0.2, None, None)
    >>> search = BRKGA(4, settings, rngs)
    >>> while not search.done:
    ...     owner, keys = search.ask()
    ...     cost = keys[:, :2].sum(axis=1, keepdims=True)
    ...     search.tell(Evaluation(cost, np.zeros(len(keys)), keys[:, 0].copy()))
    >>> search.generation.tolist()
    [2, 2]
    >>> keys, evaluation = search.result(1)  # the second instance's front
    """

    def __init__(self, n_keys, settings, rngs, cost_column=0):
        self.n_keys = n_keys
        self.settings = settings
        self.rngs = list(rngs)
        self.cost_column = cost_column
        size = settings.population_size
        self.n_mutants = int(round(settings.mutant_fraction * size))
        self.max_elites = max(1, int(settings.elite_fraction * size))
        if settings.auto:
            self.patience = settings.n_iter_no_change or AUTO_PATIENCE
        n = len(self.rngs)
        self.generation = np.zeros(n, dtype=np.intp)
        self.finished = np.zeros(n, dtype=bool)
        self._unchanged = np.zeros(n, dtype=np.intp)
        self._signature = [None] * n
        # the last population of each finished instance: (keys, evaluation)
        self._final = [None] * n
        # the populations of the instances still searching, grouped by
        # instance: its rows' instances, genotypes and evaluation
        self.owner = None
        self.keys = None
        self.evaluation = None
        self._elites = None  # rows of the elites, in order
        self._taken = None  # the elites' rows taken, once per generation
        self._asked = None
        # the offspring and their parents' keys, reused every generation
        self.work = Workspace()

    @property
    def done(self):
        """Whether every instance's search is over."""
        return bool(self.finished.all())

    def active(self):
        """The instances still searching, in order."""
        return np.flatnonzero(~self.finished)

    # ------------------------------------------------------------------ #
    def ask(self):
        """The genotypes to evaluate next: their instances (grouped, in
        order) and the genotypes (valid until the next :meth:`ask`: after the
        first generation they are the search's work array)."""
        if self.done:
            raise RuntimeError("The search is over; read its result.")
        if self.keys is None:
            size = self.settings.population_size
            keys = np.concatenate(
                [rng.random((size, self.n_keys)) for rng in self.rngs]
            )
            owner = np.repeat(np.arange(len(self.rngs)), size)
        else:
            owner, keys = self._offspring()
        self._asked = owner, keys
        return owner, keys

    def _offspring(self):
        active = self.active()
        n = len(self.rngs)
        elites = self._elites
        not_elite = np.ones(self.owner.shape[0], dtype=bool)
        not_elite[elites] = False
        others = np.flatnonzero(not_elite)
        n_elites = np.bincount(self.owner[elites], minlength=n)[active]
        n_others = np.bincount(self.owner[others], minlength=n)[active]
        n_new = self.settings.population_size - n_elites
        n_mutants = np.minimum(self.n_mutants, n_new)
        n_offspring = n_new - n_mutants
        alone = n_others == 0  # the whole population is elite: only mutants
        n_offspring[alone] = 0
        # each instance's part of the genotypes: its offspring, then mutants
        starts = _starts(n_new)
        keys = self.work.empty("asked", (int(n_new.sum()), self.n_keys))
        elite, other = [], []
        for m, start, size, *counts in zip(
            active.tolist(),
            starts.tolist(),
            n_new.tolist(),
            n_elites.tolist(),
            n_others.tolist(),
            n_offspring.tolist(),
        ):
            drawn = _draws(self.rngs[m], *counts, keys[start : start + size])
            elite.append(drawn[0])
            other.append(drawn[1])
        children = np.repeat(starts, n_offspring) + _ranks(n_offspring)
        elite = elites[
            np.concatenate(elite) + np.repeat(_starts(n_elites), n_offspring)
        ]
        other = others[
            np.concatenate(other) + np.repeat(_starts(n_others), n_offspring)
        ]
        _cross(
            keys,
            children,
            self.work.take("elite_parents", self.keys, elite),
            self.work.take("other_parents", self.keys, other),
            self.settings.crossover_bias,
        )
        return np.repeat(active, n_new), keys

    def elites(self):
        """The instances, genotypes and evaluation of the elites (``None``
        before the first :meth:`tell`): those the next offspring take most
        keys from."""
        if self._elites is None:
            return None
        if self._taken is None:
            rows = self._elites
            self._taken = (
                self.owner[rows],
                take_rows(self.keys, rows),
                self.evaluation.take(rows),
            )
        return self._taken

    def tell(self, evaluation):
        """Take the evaluation of the genotypes of the last :meth:`ask`."""
        owner, keys = self._asked
        self._asked = None
        if self.keys is not None:
            # each instance's population: its elites, then its new genotypes
            elite_owner, elite_keys, elite_evaluation = self.elites()
            owner = np.concatenate([elite_owner, owner])
            order = np.argsort(owner, kind="stable")
            owner = owner[order]
            keys = take_rows(np.concatenate([elite_keys, keys]), order)
            evaluation = Evaluation.concatenate([elite_evaluation, evaluation])
            evaluation = evaluation.take(order)
        self.owner, self.keys, self.evaluation = owner, keys, evaluation
        self._elites = self._taken = None
        active = self.active()
        self.generation[active] += 1
        self._finish(active[self.generation[active] >= self.settings.max_generations])
        if self.done:
            return
        self._elites = self._select()
        if self.settings.auto:
            self._finish(self._converged())
        elif self.settings.n_iter_no_change is not None:
            self._finish(self._unchanged_elites())

    def _finish(self, members):
        """End the searches of instances ``members``: keep their last
        population and drop it from the stacked ones."""
        if members.size == 0:
            return
        self.finished[members] = True
        bounds = np.searchsorted(self.owner, np.arange(len(self.rngs) + 1))
        for m in members.tolist():
            rows = np.arange(bounds[m], bounds[m + 1])
            self._final[m] = take_rows(self.keys, rows), self.evaluation.take(rows)
        keep = ~self.finished[self.owner]
        if self._elites is not None:
            elites = self._elites[keep[self._elites]]
            self._elites = (np.cumsum(keep) - 1)[elites]
            self._taken = None
        self.owner, self.keys = self.owner[keep], take_rows(self.keys, keep)
        self.evaluation = self.evaluation.take(keep)

    # ------------------------------------------------------------------ #
    def _select(self):
        """Each instance's elites (as :func:`select_elites`), rows in order."""
        evaluation, owner = self.evaluation, self.owner
        n = len(self.rngs)
        bounds = np.searchsorted(owner, np.arange(n + 1))
        fronts = stacked_fronts(evaluation, owner, n)
        sizes = np.bincount(owner[fronts], minlength=n)
        active = self.active()
        parts = [fronts]
        crowded = active[sizes[active] > self.max_elites]
        if crowded.size:
            parts = [fronts[~np.isin(owner[fronts], crowded)]]
            for m in crowded.tolist():
                front = fronts[owner[fronts] == m]
                crowding = calc_crowding_distance(evaluation.F[front])
                keep = np.argsort(-crowding, kind="stable")[: self.max_elites]
                parts.append(front[keep])
        # an instance without a feasible individual: the closest to feasible
        for m in active[sizes[active] == 0].tolist():
            rows = np.arange(bounds[m], bounds[m + 1])
            picked = select_elites(
                evaluation.take(rows), self.max_elites, self.cost_column
            )
            parts.append(rows[picked])
        return np.sort(np.concatenate(parts))

    def _converged(self):
        """``n_generations="auto"``: the instances done, those whose cheapest
        plans (actions and order: refinement polishes their values) have not
        changed for ``patience`` generations, after at least
        ``AUTO_MIN_GENERATIONS``; or with nothing feasible after
        ``AUTO_INFEASIBLE_GENERATIONS``."""
        done = []
        for m, signature in self._cheapest_plans().items():
            same = signature == self._signature[m]
            self._unchanged[m] = self._unchanged[m] + 1 if same else 0
            self._signature[m] = signature
            if not signature:
                finished = self.generation[m] >= AUTO_INFEASIBLE_GENERATIONS
            else:
                finished = (
                    self.generation[m] >= AUTO_MIN_GENERATIONS
                    and self._unchanged[m] >= self.patience
                )
            if finished:
                done.append(m)
        return np.array(done, dtype=np.intp)

    def _cheapest_plans(self):
        """Bytes naming the ``AUTO_PLANS`` cheapest plans of each instance's
        elites (empty: none feasible), as the stopping rule of
        ``n_generations="auto"`` sees them."""
        evaluation = self.evaluation
        signatures = dict.fromkeys(self.active().tolist(), b"")
        rows = self._elites[evaluation.gap[self._elites] == 0]
        if rows.size == 0:
            return signatures
        if evaluation.plan_key is None:
            plans, hashes = evaluation.sequence_key, evaluation.sequence_hash
        else:
            plans, hashes = evaluation.plan_key, evaluation.plan_hash
        # each instance's feasible elites from the cheapest, their distinct plans
        rows = rows[
            np.lexsort((evaluation.F[rows, self.cost_column], self.owner[rows]))
        ]
        rows = rows[
            first_occurrences(
                plans[rows],
                None if hashes is None else hashes[rows],
                groups=self.owner[rows],
            )
        ]
        owner = self.owner[rows]
        cheapest = _ranks(np.bincount(owner)[np.unique(owner)]) < AUTO_PLANS
        rows, owner = rows[cheapest], owner[cheapest]
        bounds = np.searchsorted(owner, np.arange(len(self.rngs) + 1))
        for m in np.unique(owner).tolist():
            keys = plans[rows[bounds[m] : bounds[m + 1]]]
            signatures[m] = b"".join(sorted(bytes(key) for key in keys))
        return signatures

    def _unchanged_elites(self):
        """``n_iter_no_change`` (a fixed budget): the instances done, those
        whose elites have not changed for that many generations."""
        bounds = np.searchsorted(
            self.owner[self._elites], np.arange(len(self.rngs) + 1)
        )
        done = []
        for m in self.active().tolist():
            rows = self._elites[bounds[m] : bounds[m + 1]]
            signature = np.sort(self.evaluation.sequence_key[rows]).tobytes()
            same = signature == self._signature[m]
            self._unchanged[m] = self._unchanged[m] + 1 if same else 0
            self._signature[m] = signature
            if self._unchanged[m] >= self.settings.n_iter_no_change:
                done.append(m)
        return np.array(done, dtype=np.intp)

    # ------------------------------------------------------------------ #
    def population(self, member):
        """The genotypes and evaluation of instance ``member``'s population
        (its last one once its search is over)."""
        if self.finished[member]:
            return self._final[member]
        rows = np.flatnonzero(self.owner == member)
        return self.keys[rows], self.evaluation.take(rows)

    def result(self, member):
        """Genotypes and evaluation of instance ``member``'s final Pareto
        front."""
        keys, evaluation = self.population(member)
        front = pareto_front(evaluation)
        return keys[front], evaluation.take(front)


def stacked_fronts(evaluation, owner, n_members):
    """The rows of each instance's Pareto front (as :func:`pareto_front`) in
    the stacked populations of many instances (``owner``: the instance of
    each row, grouped in order), in order."""
    distinct = distinct_feasible(evaluation, groups=owner)
    bounds = np.searchsorted(owner[distinct], np.arange(n_members + 1))
    fronts = [distinct[:0]]
    for m in np.flatnonzero(np.diff(bounds)).tolist():
        rows = distinct[bounds[m] : bounds[m + 1]]
        fronts.append(rows[find_non_dominated(evaluation.F[rows])])
    return np.concatenate(fronts)

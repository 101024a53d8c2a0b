"""Multi-objective BRKGA over random keys as an ask/tell stepper (pymoo stays here).

:class:`BRKGA` holds one instance's population, elites and termination. It
proposes genotypes (:meth:`BRKGA.ask`) and is told their evaluation
(:meth:`BRKGA.tell`); it knows nothing of actions, states or the model, so a
driver can step many instances together and ask the classifier once per
generation for all of them.

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

from sklearn_cscf._answers import first_sources, word_hashes

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


@dataclass
class SearchSettings:
    population_size: int = 500
    n_generations: int | str = 150
    mutant_fraction: float = 0.2
    crossover_bias: float = 0.7
    elite_fraction: float = 0.2
    max_sequence_length: int | None = None
    n_iter_no_change: int | None = None

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
        return Evaluation(*(None if a is None else a[index] for a in self._arrays()))

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

    def cheapest_plans(self, n, cost_column=0, rows=None):
        """The plan keys of the ``n`` cheapest distinct feasible plans (of
        ``rows`` alone, when given), joined in sorted order (empty bytes when
        none is feasible)."""
        if rows is None:
            feasible = np.flatnonzero(self.feasible)
        else:
            feasible = rows[self.gap[rows] == 0]
        if feasible.size == 0:
            return b""
        if self.plan_key is None:
            plans, hashes = self.sequence_key, self.sequence_hash
        else:
            plans, hashes = self.plan_key, self.plan_hash
        ranked = feasible[np.argsort(self.F[feasible, cost_column], kind="stable")]
        distinct = first_occurrences(
            plans[ranked], None if hashes is None else hashes[ranked]
        )[:n]
        return b"".join(sorted(bytes(key) for key in plans[ranked[distinct]]))


def first_equal(words, hashes=None):
    """For each row of the uint64 array ``words``, the index of the first row
    equal to it: rows told apart by a 64-bit hash (:func:`word_hashes`, or
    ``hashes`` when known), then checked word by word (a collision falls back
    to comparing the rows)."""
    source = first_sources(word_hashes(words) if hashes is None else hashes)
    # a first row is equal to itself: only the others are checked
    later = np.flatnonzero(source != np.arange(source.shape[0]))
    if not (words[source[later]] == words[later]).all():
        _, first, inverse = np.unique(
            words, axis=0, return_index=True, return_inverse=True
        )
        source = first[inverse.reshape(-1)]
    return source


def first_occurrences(keys, hashes=None):
    """Indices of the first occurrence of each distinct key, in input order
    (keys of bytes whose rows are 64-bit words, such as sequence keys, by
    :func:`first_equal`; ``hashes``: their :func:`key_hashes`, when known)."""
    if keys.dtype.kind == "V" and keys.dtype.itemsize % 8 == 0 and keys.size:
        return first_rows_of(key_words(keys), hashes)
    _, index = np.unique(keys, return_index=True)
    return np.sort(index)


def first_rows_of(words, hashes=None):
    """Indices of the first of each distinct row of the uint64 array
    ``words``, in order (see :func:`first_equal`)."""
    return np.flatnonzero(first_equal(words, hashes) == np.arange(words.shape[0]))


def key_hashes(keys):
    """The :func:`word_hashes` of keys of bytes whose rows are 64-bit words
    (sequence or plan keys)."""
    return word_hashes(key_words(keys))


def key_words(keys):
    """Keys of bytes whose rows are 64-bit words, as a 2-D uint64 array."""
    width = keys.dtype.itemsize // 8
    return np.ascontiguousarray(keys).view(np.uint64).reshape(keys.shape[0], width)


def pareto_front(evaluation):
    """Indices of the distinct feasible non-dominated individuals."""
    feasible = np.flatnonzero(evaluation.feasible)
    if feasible.size == 0:
        return feasible
    hashes = evaluation.sequence_hash
    distinct = feasible[
        first_occurrences(
            evaluation.sequence_key[feasible],
            None if hashes is None else hashes[feasible],
        )
    ]
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
    probability ``bias``. The coin flips and the mutants' keys come from one
    draw of ``rng`` (the same numbers as two draws in a row).
    """
    n_keys = elite_keys.shape[1]
    if n_offspring:
        elite = rng.integers(elite_keys.shape[0], size=n_offspring)
        other = rng.integers(other_keys.shape[0], size=n_offspring)
    out = rng.random((n_offspring + n_mutants, n_keys))
    if n_offspring:
        children = out[:n_offspring]
        from_elite = children < bias
        np.copyto(children, other_keys[other])
        np.copyto(children, elite_keys[elite], where=from_elite)
    return out


class BRKGA:
    """The search of one instance, stepped from outside.

    Parameters
    ----------
    n_keys : int
        Random keys per genotype (twice the number of actions).
    settings : SearchSettings
    rng : numpy.random.Generator
        The instance's own generator.
    cost_column : int, default=0
        The column of ``F`` that ranks infeasible individuals with equal gaps
        (the sequence cost).

    Examples
    --------
    >>> import numpy as np
    >>> search = BRKGA(4, SearchSettings(population_size=6, n_generations=2),
    ...                np.random.default_rng(0))
    >>> while not search.done:
    ...     keys = search.ask()
    ...     cost = keys[:, :2].sum(axis=1, keepdims=True)
    ...     search.tell(Evaluation(cost, np.zeros(len(keys)), keys[:, 0].copy()))
    >>> search.generation
    2
    """

    def __init__(self, n_keys, settings, rng, cost_column=0):
        self.n_keys = n_keys
        self.settings = settings
        self.rng = rng
        self.cost_column = cost_column
        size = settings.population_size
        self.n_mutants = int(round(settings.mutant_fraction * size))
        self.max_elites = max(1, int(settings.elite_fraction * size))
        self.generation = 0
        self.done = False
        self.keys = None
        self.evaluation = None
        self._elites = None
        # the elites' genotypes and evaluation, taken once per generation
        self._elite_pair = None
        self._asked = None
        self._unchanged = 0
        self._signature = None
        if settings.auto:
            self.patience = settings.n_iter_no_change or AUTO_PATIENCE

    def ask(self):
        """The genotypes to evaluate next."""
        if self.done:
            raise RuntimeError("The search is over; read its result.")
        if self.keys is None:
            asked = self.rng.random((self.settings.population_size, self.n_keys))
        else:
            asked = self._offspring()
        self._asked = asked
        return asked

    def _offspring(self):
        size = self.settings.population_size
        elites = self._elites
        not_elite = np.ones(self.keys.shape[0], dtype=bool)
        not_elite[elites] = False
        others = np.flatnonzero(not_elite)
        n_new = size - elites.size
        n_mutants = min(self.n_mutants, n_new)
        n_offspring = n_new - n_mutants
        if others.size == 0:  # the whole population is elite: only mutants
            n_offspring, n_mutants = 0, n_new
        elite_keys, _ = self.elites()
        return biased_crossover(
            elite_keys,
            self.keys[others],
            n_offspring,
            self.settings.crossover_bias,
            self.rng,
            n_mutants,
        )

    def tell(self, evaluation):
        """Take the evaluation of the genotypes of the last :meth:`ask`."""
        if self.keys is None:
            self.keys, self.evaluation = self._asked, evaluation
        else:
            elite_keys, elite_evaluation = self.elites()
            self.keys = np.concatenate([elite_keys, self._asked])
            self.evaluation = Evaluation.concatenate([elite_evaluation, evaluation])
        self._asked = None
        self._elite_pair = None
        self.generation += 1
        if self.generation >= self.settings.max_generations:
            self.done = True
            return
        self._elites = select_elites(self.evaluation, self.max_elites, self.cost_column)
        if self.settings.auto:
            self._converged()
        elif self.settings.n_iter_no_change is not None:
            signature = np.sort(self.evaluation.sequence_key[self._elites]).tobytes()
            same = signature == self._signature
            self._unchanged = self._unchanged + 1 if same else 0
            self._signature = signature
            if self._unchanged >= self.settings.n_iter_no_change:
                self.done = True

    def elites(self):
        """The genotypes of the elites and their evaluation (``None`` before
        the first :meth:`tell`): those the next offspring take most keys
        from."""
        if self._elites is None:
            return None
        if self._elite_pair is None:
            elites = self._elites
            self._elite_pair = self.keys[elites], self.evaluation.take(elites)
        return self._elite_pair

    def cheapest_plans(self):
        """Bytes naming the cheapest plans of the elites (empty: none
        feasible), as the stopping rule of ``n_generations="auto"`` sees them."""
        if self._elites is None:
            return b""
        return self.evaluation.cheapest_plans(
            AUTO_PLANS, self.cost_column, rows=self._elites
        )

    def _converged(self):
        """``n_generations="auto"``: done once the cheapest plans (actions and
        order: refinement polishes their values) have not changed for
        ``patience`` generations, after at least ``AUTO_MIN_GENERATIONS``; or
        when nothing is feasible after ``AUTO_INFEASIBLE_GENERATIONS``."""
        signature = self.cheapest_plans()
        same = signature == self._signature
        self._unchanged = self._unchanged + 1 if same else 0
        self._signature = signature
        if not signature:
            self.done = self.generation >= AUTO_INFEASIBLE_GENERATIONS
        else:
            self.done = (
                self.generation >= AUTO_MIN_GENERATIONS
                and self._unchanged >= self.patience
            )

    def result(self):
        """Genotypes and evaluation of the final Pareto front."""
        front = pareto_front(self.evaluation)
        return self.keys[front], self.evaluation.take(front)

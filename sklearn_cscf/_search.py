"""Multi-objective BRKGA over random keys, for one instance (pymoo stays here).

Each generation: the elites (feasible, non-dominated, distinct decoded
sequences, capped by crowding distance) survive unchanged; offspring come from
biased crossover of a random elite and a random non-elite, taking each key from
the elite with probability ``crossover_bias``; fresh random mutants fill the
rest. Only new individuals are evaluated, in one classifier call.
"""

from dataclasses import dataclass

import numpy as np
from pymoo.operators.survival.rank_and_crowding.metrics import (
    calc_crowding_distance,
)
from pymoo.util.nds.non_dominated_sorting import find_non_dominated

from sklearn_cscf._model import target_gap
from sklearn_cscf._objectives import gower_distance, tweak_counts
from sklearn_cscf._simulation import simulate


@dataclass
class SearchSettings:
    population_size: int = 500
    n_generations: int = 150
    mutant_fraction: float = 0.2
    crossover_bias: float = 0.7
    elite_fraction: float = 0.2
    max_sequence_length: int | None = None
    n_iter_no_change: int | None = None


@dataclass
class Evaluation:
    """Objectives and feasibility of a batch of genotypes."""

    F: np.ndarray  # (n, n_objectives)
    gap: np.ndarray  # (n,) constraint violation: target gap + invalid steps
    feasible: np.ndarray  # (n,)
    sequence_key: np.ndarray  # (n,) bytes identifying the decoded sequence

    def take(self, index):
        return Evaluation(
            self.F[index],
            self.gap[index],
            self.feasible[index],
            self.sequence_key[index],
        )

    @staticmethod
    def concatenate(first, second):
        return Evaluation(
            np.concatenate([first.F, second.F]),
            np.concatenate([first.gap, second.gap]),
            np.concatenate([first.feasible, second.feasible]),
            np.concatenate([first.sequence_key, second.sequence_key]),
        )


class Problem:
    """The search problem of one instance (Eq. 3)."""

    def __init__(self, x0, target, actions, graph, schema, model, affects, settings):
        self.x0 = x0
        self.target = target
        self.actions = actions
        self.graph = graph
        self.schema = schema
        self.model = model
        self.affects = affects
        self.settings = settings
        self.n_keys = 2 * len(actions)
        self.x0_taus = graph.edge_values(x0[None, :])

    def simulate(self, keys, record=False):
        return simulate(
            self.x0,
            keys,
            self.actions,
            self.graph,
            max_length=self.settings.max_sequence_length,
            record=record,
            x0_taus=self.x0_taus,
        )

    def evaluate(self, keys):
        """Objectives and constraints of each genotype: one classifier call."""
        paths = self.simulate(keys)
        predicted, proba = self.model.predict(paths.final)
        gap = target_gap(predicted, proba, self.target) + paths.violations
        F = np.column_stack(
            [
                paths.sequence_cost,
                gower_distance(self.x0, paths.final, self.schema),
                tweak_counts(paths.order, self.affects),
            ]
        )
        return Evaluation(F, gap, gap == 0, _sequence_keys(paths))


def _sequence_keys(paths):
    """Bytes that are equal exactly when two decoded sequences are equal."""
    values = np.where(np.isnan(paths.new_values), -np.inf, paths.new_values)
    rows = np.hstack([paths.order.astype(float), np.round(values, 9) + 0.0])
    rows = np.ascontiguousarray(rows)
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()


def order_keys(order):
    """Bytes that are equal exactly when two sequences use the same actions in
    the same order."""
    rows = np.ascontiguousarray(order.astype(np.int64))
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()


def first_occurrences(keys):
    """Indices of the first occurrence of each distinct key, in input order."""
    _, index = np.unique(keys, return_index=True)
    return np.sort(index)


def pareto_front(evaluation):
    """Indices of the distinct feasible non-dominated individuals."""
    feasible = np.flatnonzero(evaluation.feasible)
    if feasible.size == 0:
        return feasible
    distinct = feasible[first_occurrences(evaluation.sequence_key[feasible])]
    return distinct[find_non_dominated(evaluation.F[distinct])]


def select_elites(evaluation, max_elites):
    """Elites: the Pareto front capped by crowding distance; without any
    feasible individual, the distinct ones closest to feasibility."""
    front = pareto_front(evaluation)
    if front.size:
        if front.size > max_elites:
            crowding = calc_crowding_distance(evaluation.F[front])
            keep = np.argsort(-crowding, kind="stable")[:max_elites]
            front = np.sort(front[keep])
        return front
    distinct = first_occurrences(evaluation.sequence_key)
    ranked = np.lexsort((evaluation.F[distinct, 0], evaluation.gap[distinct]))
    return np.sort(distinct[ranked[:max_elites]])


def biased_crossover(elite_keys, other_keys, n_offspring, bias, rng):
    """Offspring of a random elite and a random non-elite parent.

    Each key is taken from the **elite** parent with probability ``bias``.
    """
    if n_offspring == 0:
        return np.empty((0, elite_keys.shape[1]))
    elite = rng.integers(elite_keys.shape[0], size=n_offspring)
    other = rng.integers(other_keys.shape[0], size=n_offspring)
    from_elite = rng.random((n_offspring, elite_keys.shape[1])) < bias
    return np.where(from_elite, elite_keys[elite], other_keys[other])


@dataclass
class SearchOutcome:
    keys: np.ndarray  # genotypes of the final Pareto front
    evaluation: Evaluation
    n_generations: int


def run_brkga(problem, rng):
    """Run the search and return the final Pareto front."""
    settings = problem.settings
    size = settings.population_size
    n_mutants = int(round(settings.mutant_fraction * size))
    max_elites = max(1, int(settings.elite_fraction * size))
    keys = rng.random((size, problem.n_keys))
    evaluation = problem.evaluate(keys)
    unchanged, previous, generation = 0, None, 1
    while generation < settings.n_generations:
        elites = select_elites(evaluation, max_elites)
        if settings.n_iter_no_change is not None:
            signature = np.sort(evaluation.sequence_key[elites]).tobytes()
            unchanged = unchanged + 1 if signature == previous else 0
            previous = signature
            if unchanged >= settings.n_iter_no_change:
                break
        others = np.setdiff1d(np.arange(keys.shape[0]), elites, assume_unique=True)
        n_new = size - elites.size
        n_mut = min(n_mutants, n_new)
        n_offspring = n_new - n_mut
        if others.size == 0:  # the whole population is elite: only mutants
            n_offspring, n_mut = 0, n_new
        new_keys = np.vstack(
            [
                biased_crossover(
                    keys[elites],
                    keys[others],
                    n_offspring,
                    settings.crossover_bias,
                    rng,
                ),
                rng.random((n_mut, problem.n_keys)),
            ]
        )
        keys = np.vstack([keys[elites], new_keys])
        evaluation = Evaluation.concatenate(
            evaluation.take(elites), problem.evaluate(new_keys)
        )
        generation += 1
    front = pareto_front(evaluation)
    return SearchOutcome(keys[front], evaluation.take(front), generation)

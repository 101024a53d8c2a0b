"""What the search finds for one instance: the result object the output reads.

:class:`InstanceResult` carries everything the tidy frame needs (orders,
values, states, efforts, discounts, costs, scores after each step, objective
values by name) and the instance's diagnostics, so formatting needs neither a
second simulation nor a second model pass.
"""

from dataclasses import dataclass, field, replace

import numpy as np


@dataclass
class Diagnostics:
    """What explaining one instance took.

    The classifier is asked for many instances at once; an instance's
    ``model_seconds`` is its share (by rows) of the calls holding its states,
    and ``total_seconds`` adds its share (by states asked) of the rest of its
    block's time: wall-clock seconds. ``cpu_seconds`` is its share, in the
    same proportion as ``total_seconds``, of the CPU time
    (``time.process_time``) of the process that explained its block: what
    the work cost, whatever else ran on the machine.
    """

    n_generations: int = 0  # generations run
    n_evaluated: int = 0  # states asked for (sent to the model or remembered)
    n_model_calls: int = 0  # classifier calls holding at least one of its states
    n_model_rows: int = 0  # its states sent to the classifier
    model_seconds: float = 0.0
    total_seconds: float = 0.0
    n_refined: int = 0  # reported sequences that refinement made cheaper
    cpu_seconds: float = 0.0


@dataclass
class InstanceResult:
    """The distinct Pareto-optimal sequences found for one instance.

    Arrays have one row per sequence (cheapest first); step arrays have one
    column per step position, padded past each sequence's ``lengths``.
    """

    x0: np.ndarray  # encoded instance
    target: int  # index of the target class
    status: str
    order: np.ndarray | None = None  # (n_solutions, N) action indices, -1 padded
    lengths: np.ndarray | None = None  # (n_solutions,)
    effort: np.ndarray | None = None  # (n_solutions, N) b of each step
    discount: np.ndarray | None = None  # (n_solutions, N) g of each step
    step_cost: np.ndarray | None = None  # (n_solutions, N) b * g
    states: np.ndarray | None = None  # (n_solutions, N + 1, d), step 0 = x0
    step_score: np.ndarray | None = None  # (n_solutions, N) target score after
    # (n_solutions,) the class (index) the model gives the state after the
    # last step, from the answers the scores came from; 0 for a regressor
    reached: np.ndarray | None = None
    objectives: dict = field(default_factory=dict)  # name -> (n_solutions, ...)
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    message: str | None = None  # what failed (status "error"), or a remark

    @property
    def n_solutions(self):
        return 0 if self.order is None else self.order.shape[0]

    @property
    def sequence_cost(self):
        return self.objectives["sequence_cost"]

    @property
    def sequence_effort(self):
        return self.effort.sum(axis=1)

    def final_state(self, solution=0):
        return self.states[solution, self.lengths[solution]]

    def take(self, rows):
        """The result keeping only sequences ``rows`` (in that order)."""
        if self.order is None:
            return self
        arrays = {name: getattr(self, name) for name in SEQUENCE_ARRAYS}
        return replace(
            self,
            **{name: None if a is None else a[rows] for name, a in arrays.items()},
            objectives={name: values[rows] for name, values in self.objectives.items()},
        )


# the arrays of a result with one entry (row) per sequence, besides objectives
SEQUENCE_ARRAYS = (
    "order",
    "lengths",
    "effort",
    "discount",
    "step_cost",
    "states",
    "step_score",
    "reached",
)


def number_plans(action_sets):
    """The plan of each sequence, given its actions: sequences using the
    same set of actions (in any order) share a plan; plans are numbered by
    their first sequence."""
    plans = {}
    return [plans.setdefault(frozenset(a), len(plans)) for a in action_sets]


def plan_ids(order, lengths):
    """:func:`number_plans` of encoded sequences (action indices)."""
    sets = (order[s, : lengths[s]].tolist() for s in range(order.shape[0]))
    return np.array(number_plans(sets), dtype=np.intp)


def jaccard_distance(a, b):
    """Jaccard distance between two sets of actions (0 between empty sets)."""
    a, b = set(a), set(b)
    union = len(a | b)
    return 1.0 - len(a & b) / union if union else 0.0


def compact(result, max_plans=None, all_orders=True):
    """The sequences of a result worth showing.

    Parameters
    ----------
    result : InstanceResult
        Its sequences sorted by cost, cheapest first.
    max_plans : int, default=None
        Keep at most this many plans (sets of actions): the cheapest, the one
        of the nearest sequence (Gower distance) and, when measured, of the
        most plausible; then one after another the plan whose actions differ
        most (Jaccard distance) from those kept, the cheaper one on a tie.
        ``None`` keeps every plan.
    all_orders : bool, default=True
        Keep every order of a kept plan; ``False`` keeps its cheapest.

    Returns
    -------
    InstanceResult
        The kept sequences, in their order of cost.
    """
    if result.order is None or (max_plans is None and all_orders):
        return result
    plans = plan_ids(result.order, result.lengths)
    firsts = np.unique(plans, return_index=True)[1]  # each plan's cheapest
    n_plans = len(firsts)
    kept = np.arange(n_plans)
    if max_plans is not None and n_plans > max_plans:
        sets = [set(result.order[s, : result.lengths[s]].tolist()) for s in firsts]
        chosen = [0]
        for name in ("gower_distance", "plausibility"):
            if name in result.objectives:
                best = int(plans[np.argmin(result.objectives[name])])
                if best not in chosen:
                    chosen.append(best)
        chosen = chosen[:max_plans]
        while len(chosen) < max_plans:
            spread = [
                -1.0
                if p in chosen
                else min(jaccard_distance(sets[p], sets[c]) for c in chosen)
                for p in range(n_plans)
            ]
            chosen.append(int(np.argmax(spread)))  # first (cheapest) on a tie
        kept = np.sort(chosen)
    keep = np.isin(plans, kept)
    if not all_orders:
        keep &= np.isin(np.arange(len(plans)), firsts[kept])
    return result.take(np.flatnonzero(keep))

"""What the search finds for one instance: the result object the output reads.

:class:`InstanceResult` carries everything the tidy frame needs (orders,
values, states, efforts, discounts, costs, scores after each step, objective
values by name) and the instance's diagnostics, so formatting needs neither a
second simulation nor a second model pass.
"""

from dataclasses import dataclass, field

import numpy as np

STATUS_OK = "ok"
STATUS_NO_COUNTERFACTUAL = "no_counterfactual"
STATUS_ALREADY_TARGET = "already_target"
STATUS_ERROR = "error"


@dataclass
class Diagnostics:
    """What explaining one instance took.

    The classifier is asked for many instances at once; an instance's
    ``model_seconds`` is its share (by rows) of the calls holding its states,
    and ``total_seconds`` adds its share (by states asked) of the rest of its
    block's time.
    """

    n_generations: int = 0  # generations run
    n_evaluated: int = 0  # states asked for (sent to the model or remembered)
    n_model_calls: int = 0  # classifier calls holding at least one of its states
    n_model_rows: int = 0  # its states sent to the classifier
    model_seconds: float = 0.0
    total_seconds: float = 0.0
    n_refined: int = 0  # reported sequences that refinement made cheaper


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

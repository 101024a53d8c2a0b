"""The Pareto set of each instance -> rows of the tidy result frame."""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sklearn_cscf._search import order_keys

STATUS_OK = "ok"
STATUS_NO_COUNTERFACTUAL = "no_counterfactual"
STATUS_ALREADY_TARGET = "already_target"

COLUMNS = {
    "instance": None,  # dtype of the index of X
    "plan": "Int64",
    "solution": "Int64",
    "step": "Int64",
    "action": "string",
    "feature": None,  # text, or the integer positions of array columns
    "old_value": "string",
    "new_value": "string",
    "old_number": float,
    "new_number": float,
    "effort": float,
    "discount": float,
    "cost": float,
    "target_proba": float,
    "sequence_cost": float,
    "sequence_effort": float,
    "gower_distance": float,
    "length": "Int64",
    "target_class": None,  # dtype of the classes
    "status": "string",
}


@dataclass
class InstanceResult:
    """The distinct Pareto-optimal sequences found for one instance."""

    x0: np.ndarray  # encoded instance
    target: int  # index of the target class
    status: str
    order: np.ndarray | None = None  # (n_solutions, N), -1 padded
    lengths: np.ndarray | None = None
    effort: np.ndarray | None = None
    discount: np.ndarray | None = None
    states: np.ndarray | None = None  # (n_solutions, N + 1, d)
    step_proba: np.ndarray | None = None  # (n_solutions, N), NaN past the end
    gower: np.ndarray | None = None
    n_generations: int = 0
    classifier_seconds: float = 0.0
    total_seconds: float = 0.0

    @property
    def n_solutions(self):
        return 0 if self.order is None else self.order.shape[0]

    @property
    def sequence_cost(self):
        return (self.effort * self.discount).sum(axis=1)

    def final_state(self, solution=0):
        return self.states[solution, self.lengths[solution]]


def describe_front(problem, outcome):
    """Distinct sequences of the front (by actions and order, keeping the
    cheapest), sorted by cost, with the target probability after each step."""
    paths = problem.simulate(outcome.keys, record=True)
    cost = paths.sequence_cost
    gower = outcome.evaluation.F[:, 1]
    by_cost = np.lexsort((gower, cost))
    _, first = np.unique(order_keys(paths.order)[by_cost], return_index=True)
    chosen = by_cost[np.sort(first)]
    lengths = paths.lengths[chosen]
    states = paths.states[chosen]
    # one classifier call for every step of every chosen sequence
    steps = np.arange(states.shape[1])[None, :]
    taken = (steps >= 1) & (steps <= lengths[:, None])
    _, proba = problem.model.predict(states[taken])
    step_proba = np.full(taken.shape, np.nan)
    if proba is not None:
        step_proba[taken] = proba[:, problem.target]
    return {
        "order": paths.order[chosen],
        "lengths": lengths,
        "effort": paths.effort[chosen],
        "discount": paths.discount[chosen],
        "states": states,
        "step_proba": step_proba[:, 1:],
        "gower": gower[chosen],
    }


def plan_ids(order, lengths):
    """Plan of each solution: solutions using the same set of actions (in any
    order) share a plan; plans are numbered by their first solution."""
    plans, ids = {}, []
    for s in range(order.shape[0]):
        key = frozenset(order[s, : lengths[s]].tolist())
        ids.append(plans.setdefault(key, len(plans)))
    return ids


def display_value(schema, j, value):
    """A raw value of feature ``j`` as text for people (``None`` if missing)."""
    if schema.is_categorical[j]:
        return None if value < 0 else str(schema.categories[j][int(value)])
    if np.isnan(value):
        return None
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return np.format_float_positional(value, precision=4, unique=True, trim="-")


def _numeric(schema, j, value):
    return np.nan if schema.is_categorical[j] else float(value)


def build_frame(results, index, schema, actions, classes):
    """One row per step of each solution; one status row per other instance."""
    records = []
    for label, result in zip(index, results):
        target_label = classes[result.target]
        if result.status != STATUS_OK:
            records.append(
                {
                    "instance": label,
                    "target_class": target_label,
                    "status": result.status,
                }
            )
            continue
        costs = result.sequence_cost
        efforts = result.effort.sum(axis=1)
        plans = plan_ids(result.order, result.lengths)
        for s in range(result.n_solutions):
            length = int(result.lengths[s])
            for t in range(length):
                action = actions[result.order[s, t]]
                j = action.feature
                old, new = result.states[s, t, j], result.states[s, t + 1, j]
                records.append(
                    {
                        "instance": label,
                        "plan": plans[s],
                        "solution": s,
                        "step": t + 1,
                        "action": action.name,
                        "feature": schema.names[j],
                        "old_value": display_value(schema, j, old),
                        "new_value": display_value(schema, j, new),
                        "old_number": _numeric(schema, j, old),
                        "new_number": _numeric(schema, j, new),
                        "effort": result.effort[s, t],
                        "discount": result.discount[s, t],
                        "cost": result.effort[s, t] * result.discount[s, t],
                        "target_proba": result.step_proba[s, t],
                        "sequence_cost": costs[s],
                        "sequence_effort": efforts[s],
                        "gower_distance": result.gower[s],
                        "length": length,
                        "target_class": target_label,
                        "status": STATUS_OK,
                    }
                )
    frame = pd.DataFrame.from_records(records, columns=list(COLUMNS))
    dtypes = {name: dtype for name, dtype in COLUMNS.items() if dtype is not None}
    frame = frame.astype(dtypes)
    frame["instance"] = pd.array(frame["instance"].tolist(), dtype=index.dtype)
    frame["feature"] = pd.array(
        frame["feature"].tolist(), dtype=_label_dtype(schema.names)
    )
    frame["target_class"] = pd.array(
        frame["target_class"].tolist(), dtype=_label_dtype(classes)
    )
    return frame


def _label_dtype(labels):
    """Numbers keep their (nullable) dtype; other labels are text."""
    labels = np.asarray(labels)
    if labels.dtype.kind == "b":
        return "boolean"
    if labels.dtype.kind in "iu":
        unsigned = "U" if labels.dtype.kind == "u" else ""
        return f"{unsigned}Int{labels.dtype.itemsize * 8}"
    return labels.dtype if labels.dtype.kind == "f" else "string"


def build_states(results, index, schema):
    """The state after each step (step 0: the instance) of every solution."""
    blocks, keys = [], []
    for label, result in zip(index, results):
        for s in range(result.n_solutions):
            length = int(result.lengths[s])
            blocks.append(result.states[s, : length + 1])
            keys.extend((label, s, t) for t in range(length + 1))
    d = schema.n_features
    states = np.vstack(blocks) if blocks else np.empty((0, d))
    frame = schema.to_frame(states)
    head = pd.DataFrame(keys, columns=["instance", "solution", "step"])
    head["instance"] = pd.array(head["instance"].tolist(), dtype=index.dtype)
    head = head.astype({"solution": "Int64", "step": "Int64"})
    return pd.concat([head, frame.reset_index(drop=True)], axis=1)

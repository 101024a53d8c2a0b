"""The feature-relationship graph and its consequential discounts (Eq. 1-2).

An edge ``k -> h`` carries ``tau_kh(state) -> [0, 1]``: how much the current
value of feature ``k`` eases changing feature ``h``. The discount of one step
is computed on the state *before* the step:

- per affected feature ``h`` (Eq. 1): the mean of ``tau_kh`` over the edges
  into ``h``;
- per action (Eq. 2): the mean of those over the features the action changes
  (directly or as a consequence) that have incoming edges; ``1`` if none has.
"""

import numpy as np

from sklearn_cscf.actions import _as_array

__all__ = ["FeatureGraph"]


class FeatureGraph:
    """Directed graph of feature relationships for consequential discounts.

    Parameters
    ----------
    edges : iterable of (source, target, tau), default=()
        ``tau(state)`` receives a mapping from column name to a 1-D array of raw
        values (one entry per candidate, the state before the step) and returns
        values in ``[0, 1]``: the discount that ``source`` grants on changing
        ``target``.

    See Also
    --------
    Action : the actions whose costs are discounted.

    Examples
    --------
    The graph of the paper's worked example (Fig. 2):

    >>> import numpy as np
    >>> from sklearn_cscf import FeatureGraph
    >>> graph = (
    ...     FeatureGraph()
    ...     .add_edge("location", "education",
    ...               lambda x: np.where(x["location"] == "US", 1.0, 0.5))
    ...     .add_edge("location", "job",
    ...               lambda x: np.where(x["location"] == "US", 0.5, 1.0))
    ...     .add_edge("education", "job",
    ...               lambda x: np.where(x["education"] == "BSc", 0.5, 1.0))
    ... )
    >>> graph
    FeatureGraph(edges=[('location', 'education'), ('location', 'job'), ('education', 'job')])
    >>> state = {"location": np.array(["DE"]), "education": np.array(["BSc"])}
    >>> graph.feature_discount("job", state)
    array([0.75])
    >>> graph.discount(["job"], state)
    array([0.75])
    """  # noqa: E501

    def __init__(self, edges=()):
        self._edges = {}
        for edge in edges:
            try:
                source, target, tau = edge
            except (TypeError, ValueError):
                raise ValueError(
                    f"Each edge must be a (source, target, tau) triple, got {edge!r}."
                ) from None
            self.add_edge(source, target, tau)

    @property
    def edges(self):
        """The edges as a list of ``(source, target, tau)`` triples."""
        return [(s, t, tau) for (s, t), tau in self._edges.items()]

    def add_edge(self, source, target, tau):
        """Add the edge ``source -> target`` with discount function ``tau``.

        Parameters
        ----------
        source, target : str or int
            Column names.
        tau : callable
            ``tau(state) -> values in [0, 1]``, evaluated before each step.

        Returns
        -------
        self : FeatureGraph
            The graph, so that calls can be chained.
        """
        if not callable(tau):
            raise TypeError(
                f"tau of edge {source!r} -> {target!r} must be callable, got "
                f"{type(tau).__name__}."
            )
        if source == target:
            raise ValueError(f"Edge {source!r} -> {target!r} is a self-loop.")
        if (source, target) in self._edges:
            raise ValueError(f"Edge {source!r} -> {target!r} is already in the graph.")
        self._edges[(source, target)] = tau
        return self

    def incoming(self, target):
        """``(source, tau)`` of every edge into ``target``."""
        return [(s, tau) for (s, t), tau in self._edges.items() if t == target]

    def feature_discount(self, target, state):
        """Eq. 1: mean of tau over the edges into ``target``; ``None`` if none.

        Parameters
        ----------
        target : str or int
            The affected feature.
        state : mapping
            Column name -> 1-D array of raw values (the state before the step).

        Returns
        -------
        ndarray or None
        """
        incoming = self.incoming(target)
        if not incoming:
            return None
        n = _n_rows(state)
        total = np.zeros(n)
        for source, tau in incoming:
            total += _check_tau(tau(state), n, source, target)
        return total / len(incoming)

    def discount(self, affected_features, state):
        """Eq. 2: the discount ``g`` of an action changing ``affected_features``.

        Parameters
        ----------
        affected_features : list
            Every feature the action changes (directly and as consequences).
        state : mapping
            Column name -> 1-D array of raw values (the state before the step).

        Returns
        -------
        ndarray
            One discount in ``[0, 1]`` per candidate; ``1`` where no affected
            feature has an incoming edge.
        """
        n = _n_rows(state)
        parts = [self.feature_discount(h, state) for h in affected_features]
        parts = [p for p in parts if p is not None]
        if not parts:
            return np.ones(n)
        return np.mean(parts, axis=0)

    def __repr__(self):
        return f"FeatureGraph(edges={list(self._edges)!r})"

    def __len__(self):
        return len(self._edges)


def _n_rows(state):
    for values in state.values():
        return np.asarray(values).shape[0]
    return 0


def _check_tau(values, n, source, target):
    values = _as_array(values, n, f"tau of edge {source!r} -> {target!r}", float)
    if n and not (values.min() >= -1e-12 and values.max() <= 1 + 1e-12):
        bad = ~((values >= -1e-12) & (values <= 1 + 1e-12))
        raise ValueError(
            f"tau of edge {source!r} -> {target!r} must return values in [0, 1], "
            f"got {values[bad][:3].tolist()}."
        )
    return values


class CompiledGraph:
    """The graph resolved against the columns and the actions.

    Computes, for one step of many candidates, the discount of the action each
    candidate applies, evaluating each needed tau once on all candidates.
    """

    def __init__(self, graph, schema, actions):
        self.schema = schema
        for source, target, _ in graph.edges if graph is not None else []:
            schema.column(source, what=f"Edge {source!r} -> {target!r}: source")
            schema.column(target, what=f"Edge {source!r} -> {target!r}: target")
        targets = []
        if graph is not None:
            for action in actions:
                for k in action.affects:
                    name = schema.names[k]
                    if graph.incoming(name) and name not in targets:
                        targets.append(name)
        self.targets = targets
        self.incoming = [graph.incoming(h) for h in targets]
        # weights[i, c]: share of target c in the discount of action i (Eq. 2)
        weights = np.zeros((len(actions), len(targets)))
        for i, action in enumerate(actions):
            names = {schema.names[k] for k in action.affects}
            for c, h in enumerate(targets):
                weights[i, c] = h in names
        # the targets each action needs, as bits of an int (cheap to combine)
        self.target_bits = [
            sum(1 << c for c in np.flatnonzero(row).tolist()) for row in weights
        ]
        counts = weights.sum(axis=1, keepdims=True)
        self.has_target = counts[:, 0] > 0
        self.weights = np.divide(
            weights, counts, out=np.zeros_like(weights), where=counts > 0
        )
        self.extended_weights = np.column_stack([self.weights, ~self.has_target])

    def feature_discounts(self, before, actions):
        """Eq. 1 for every target the given actions need, on states ``before``.

        Returns an array of shape (n, n_targets + 1) (the last column is
        spare), or ``None`` without targets.
        """
        if not self.targets:
            return None
        n = before.shape[0]
        view = self.schema.view(before)
        discounts = np.zeros((n, len(self.targets) + 1))
        needed = 0
        for action in actions.tolist():
            needed |= self.target_bits[action]
        for c in range(len(self.targets)):
            if not needed >> c & 1:
                continue
            total = np.zeros(n)
            for source, tau in self.incoming[c]:
                total += _check_tau(tau(view), n, source, self.targets[c])
            discounts[:, c] = total / len(self.incoming[c])
        return discounts

    def discounts(self, before, actions, used=None):
        """Eq. 2: the discount of action ``actions[r]`` applied to ``before[r]``.

        ``used`` (the distinct actions) may be given to save recomputing it.
        """
        if not self.targets:
            return np.ones(before.shape[0])
        if used is None:
            used = np.unique(actions)
        feature_discounts = self.feature_discounts(before, used)
        # a spare column of ones gives g = 1 to actions without targets
        feature_discounts[:, -1] = 1.0
        return np.einsum("ij,ij->i", feature_discounts, self.extended_weights[actions])

    def step_discounts(self, before, actions):
        """Discount of action ``actions[r]`` applied to state ``before[r]``."""
        return self.discounts(before, actions)

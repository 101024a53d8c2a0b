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

from sklearn_cscf._pickling import PortableCallables, portable
from sklearn_cscf.actions import _as_array, _call

__all__ = ["FeatureGraph"]


class FeatureGraph(PortableCallables):
    """Directed graph of feature relationships for consequential discounts.

    Parameters
    ----------
    edges : iterable of tuple, default=()
        The edges, as ``(source, target, tau)`` triples (see
        :meth:`add_edge`). ``tau(state)`` receives a mapping from column name
        to a 1-D array of raw values (one entry per candidate, the state
        before the step) and returns values in ``[0, 1]``: the discount that
        ``source`` grants on changing ``target``.

    See Also
    --------
    Action : The actions whose costs are discounted.

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
        """The edges into ``target``, as ``(source, tau)`` pairs.

        Parameters
        ----------
        target : str or int
            The feature the edges point to.

        Returns
        -------
        list of tuple
            ``(source, tau)`` of every edge ``source -> target``, in the order
            they were added; empty when no edge leads into ``target``.
        """
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
            One value in ``[0, 1]`` per candidate: the mean ``tau`` of the
            edges into ``target``; None when no edge leads into it.
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

    def __getstate__(self):
        # taus the standard pickler cannot store go by value (cloudpickle)
        state = dict(self.__dict__)
        state["_edges"] = {
            (s, t): portable(tau, f"Edge {s!r} -> {t!r}: tau")
            for (s, t), tau in self._edges.items()
        }
        return state

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


class CompiledGraph(PortableCallables):
    """The graph resolved against the columns and the actions.

    Eq. 1-2 become one weight per (action, edge): the discount of action ``i``
    on a state is ``sum_e edge_weights[i, e] * tau_e(state)``, where an edge
    into target ``h`` weighs ``1 / (number of edges into h)`` divided by the
    number of ``i``'s affected features that have incoming edges.
    """

    def __init__(self, graph, schema, actions):
        self.schema = schema
        edges = graph.edges if graph is not None else []
        for source, target, _ in edges:
            schema.column(source, what=f"Edge {source!r} -> {target!r}: source")
            schema.column(target, what=f"Edge {source!r} -> {target!r}: target")
        # only edges into a feature some action changes can matter
        affected = {schema.names[k] for action in actions for k in action.affects}
        self.edges = [(s, t, tau) for s, t, tau in edges if t in affected]
        n_into = {}
        for _, target, _ in self.edges:
            n_into[target] = n_into.get(target, 0) + 1
        self.edge_weights = np.zeros((len(actions), len(self.edges)))
        for i, action in enumerate(actions):
            names = [schema.names[k] for k in action.affects]
            targets = [h for h in names if h in n_into]
            for e, (_, target, _) in enumerate(self.edges):
                if target in targets:
                    self.edge_weights[i, e] = 1.0 / (n_into[target] * len(targets))
        self.has_target = self.edge_weights.any(axis=1)
        self.action_edges = [np.flatnonzero(row) for row in self.edge_weights]

    def __getstate__(self):
        # the graph's taus, stored as FeatureGraph stores them
        state = dict(self.__dict__)
        state["edges"] = [
            (s, t, portable(tau, f"Edge {s!r} -> {t!r}: tau"))
            for s, t, tau in self.edges
        ]
        return state

    def edge_values(self, states, edges=None):
        """``tau_e`` of each edge ``e`` (default: all) on each state."""
        edges = range(len(self.edges)) if edges is None else edges
        n = states.shape[0]
        view = self.schema.view(states)
        values = np.empty((n, len(edges)))
        for column, e in enumerate(edges):
            source, target, tau = self.edges[e]
            what = f"tau of edge {source!r} -> {target!r}"
            values[:, column] = _check_tau(_call(tau, what, view), n, source, target)
        return values

    def step_discounts(self, before, actions):
        """Discount of action ``actions[r]`` applied to state ``before[r]``."""
        discount = np.ones(before.shape[0])
        for action in np.unique(actions).tolist():
            rows = actions == action
            discount[rows] = self.action_discount(before[rows], action)
        return discount

    def action_discount(self, before, action):
        """Eq. 2 for ``action`` applied to each of the states ``before``."""
        edges = self.action_edges[action]
        if not edges.size:
            return np.ones(before.shape[0])
        return _weighted(
            self.edge_values(before, edges), self.edge_weights[action, edges]
        )

    def discounts(self, states):
        """Eq. 2 for every action on each state: shape ``(n, n_actions)``."""
        discounts = np.ones((states.shape[0], self.edge_weights.shape[0]))
        if self.edges:
            taus = self.edge_values(states)
            for action in np.flatnonzero(self.has_target).tolist():
                discounts[:, action] = _weighted(taus, self.edge_weights[action])
        return discounts


def _weighted(values, weights):
    """``values @ weights`` summed in a fixed order, whatever the number of rows
    (a BLAS product may round a row differently in a different batch)."""
    return (values * weights).sum(axis=1)

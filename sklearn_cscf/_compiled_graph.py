"""The feature graph resolved against the columns and the actions: the
consequential discounts (Eq. 1-2) of every action on a batch of states."""

import numpy as np

from sklearn_cscf._callable_checks import call, check_tau
from sklearn_cscf._pickling import PortableCallables, portable
from sklearn_cscf._rows import row_sums


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
            values[:, column] = check_tau(call(tau, what, view), n, source, target)
        return values

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
    products = values * weights
    return row_sums(products, np.empty(products.shape[0]))

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

from sklearn_cscf._callable_checks import check_tau
from sklearn_cscf._pickling import PortableCallables, portable

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
            total += check_tau(tau(state), n, source, target)
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
        parts = [self.feature_discount(h, state) for h in affected_features]
        parts = [p for p in parts if p is not None]
        if not parts:
            return np.ones(_n_rows(state))
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

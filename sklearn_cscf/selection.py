"""Choosing one plan per person, and what the chosen plans have in common.

CSCF returns, for every person, a set of Pareto-optimal sequences; the paper
leaves "a final selection guide for the end user for choosing a sequence from
the solution set" to future work. This module is that guide:

- :func:`choose_plan`: one sequence per instance, by the knee of the front of
  sequence cost and Gower distance, by user weights over the objectives, or
  the cheapest (optionally with at most ``max_steps`` steps).
- :func:`summarize_recourse`: across many people, how often each action
  appears in the chosen plans, how often it comes first, at which step on
  average and what it costs (the aggregate counterpart of DiCE's feature
  importance and of the paper's Fig. 5).
"""

from sklearn_cscf._selection import choose_plan, summarize_recourse

__all__ = ["choose_plan", "summarize_recourse"]

"""Plots of the tidy explanations frame (needs the ``plot`` extra: matplotlib).

Across many instances (the paper's Fig. 5 and Fig. 6):

- :class:`ActionFlowDisplay`: how many sequences
  take each action at each step position, and which action follows which
  (a Sankey-style flow).
- :class:`ProbabilityByStepDisplay`: per
  action and step position, the target probability after the step (or its
  change), with bootstrap intervals.

For one instance:

- :class:`TargetProbabilityDisplay`: the
  target probability along the cheapest plans, step by step, against the
  decision threshold.
- :class:`ParetoFrontDisplay`: the
  Pareto-optimal sequences by sequence cost and Gower distance
  (``highlight=`` marks the one :func:`~sklearn_cscf.choose_plan` chose).

Across the plans chosen for many instances:

- :class:`RecourseSummaryDisplay`: how often
  each action appears in the chosen plans, as the first step or later
  (DiCE's feature importance, per action).

Each figure is a display in scikit-learn's style:
``Display.from_explanations(frame, ..., ax=None)`` computes what it draws
and plots it; ``display.plot(ax=None, **style)`` draws it again, with
``*_kw`` dictionaries passed on to matplotlib; the display keeps ``ax_``,
``figure_`` and the drawn artists. The ``plot_*`` functions of 0.1
(``plot_action_flow``, ...) are deprecated aliases returning the display's
``ax_``; they go in 0.3. :func:`action_colors` gives each
action the colour the plots use for it. matplotlib is imported only when
something is drawn.
"""

from sklearn_cscf.plotting._action_flow import ActionFlowDisplay
from sklearn_cscf.plotting._base import deprecated_alias
from sklearn_cscf.plotting._pareto_front import ParetoFrontDisplay
from sklearn_cscf.plotting._probability_by_step import ProbabilityByStepDisplay
from sklearn_cscf.plotting._recourse_summary import RecourseSummaryDisplay
from sklearn_cscf.plotting._style import action_colors
from sklearn_cscf.plotting._target_probability import TargetProbabilityDisplay

# deprecated in 0.2, removed in 0.3: each returns its display's ax_
plot_action_flow = deprecated_alias(ActionFlowDisplay, "plot_action_flow")
plot_pareto_front = deprecated_alias(ParetoFrontDisplay, "plot_pareto_front")
plot_probability_by_step = deprecated_alias(
    ProbabilityByStepDisplay, "plot_probability_by_step"
)
plot_recourse_summary = deprecated_alias(
    RecourseSummaryDisplay, "plot_recourse_summary"
)
plot_target_probability = deprecated_alias(
    TargetProbabilityDisplay, "plot_target_probability"
)

__all__ = [
    "ActionFlowDisplay",
    "ParetoFrontDisplay",
    "ProbabilityByStepDisplay",
    "RecourseSummaryDisplay",
    "TargetProbabilityDisplay",
    "action_colors",
    "plot_action_flow",
    "plot_pareto_front",
    "plot_probability_by_step",
    "plot_recourse_summary",
    "plot_target_probability",
]

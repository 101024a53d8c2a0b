"""Replay: every reported sequence re-applied from scratch, step by step,
and checked: an independent oracle of what the search reports.

It shares only the status names (:mod:`sklearn_cscf._status`) and the checks
of ``X`` (:mod:`sklearn_cscf._validation`) with the library, and derives
value spaces, steps, costs, Gower distances and targets on its own:

- :mod:`._values`: what replay knows of the explainer, and how values compare;
- :mod:`._spaces`: the value spaces of the actions;
- :mod:`._stepper`: a sequence re-applied step by step;
- :mod:`._checks`: each step and sequence compared with what the frame says;
- :mod:`._verdict`: the model's answers and what must be reached;
- :mod:`._frame`: the replay's own frame;
- :mod:`._replay`: the public function, :func:`replay`.
"""

from sklearn_cscf._replay._frame import COLUMNS
from sklearn_cscf._replay._replay import replay

__all__ = ["COLUMNS", "replay"]

"""The status of each row of the output, in one place.

Every row of ``X`` gets one: the frame, the metrics, replay, the text and
the plots read these names, never their own copies.
"""

# sequences were found
STATUS_OK = "ok"
# the search found no sequence reaching the target
STATUS_NO_COUNTERFACTUAL = "no_counterfactual"
# the model already assigns the row to the target: nothing to do
STATUS_ALREADY_TARGET = "already_target"
# the search found no sequence, and neither did the extremes of the
# declared actions (see sklearn_cscf._engine._reachability): out of their reach
STATUS_UNREACHABLE = "unreachable"
# the model or a user callable raised while the row was explained
STATUS_ERROR = "error"
# choose_plan: every sequence of the row has more steps than max_steps
STATUS_EXCEEDS_MAX_STEPS = "exceeds_max_steps"

STATUSES = (
    STATUS_OK,
    STATUS_NO_COUNTERFACTUAL,
    STATUS_ALREADY_TARGET,
    STATUS_ERROR,
    STATUS_UNREACHABLE,
)

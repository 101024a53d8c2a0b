"""The graph applied to batches of states (sklearn_cscf._compiled_graph): a
tau returning no discount is an error naming its edge, and cannot change the
states it reads."""

import numpy as np
import pandas as pd
import pytest
from _line import earn, explain_rows, only_message, repay

from sklearn_cscf import FeatureGraph


@pytest.mark.parametrize(
    "tau, expected",
    [
        (lambda x: None, "returned None"),
        (lambda x: np.full(len(x["debt"]), np.nan), "values in [0, 1]"),
        (lambda x: np.ma.masked_all(len(x["debt"])), "masked"),
        (lambda x: np.full(len(x["debt"]), "0.5"), "must return numbers"),
    ],
    ids=["None", "NaN", "masked", "text"],
)
def test_a_tau_returning_no_discount_is_an_error_naming_it(
    logistic, line_data, tau, expected
):
    graph = FeatureGraph([("debt", "income", tau)])
    frame, _ = explain_rows(logistic, line_data, [earn(), repay()], graph=graph)
    message = only_message(frame)
    assert "tau of edge 'debt' -> 'income'" in message and expected in message


def test_a_tau_cannot_corrupt_the_reported_states(logistic, line_data):
    def vandal(x):
        for name in ("income", "debt"):
            values = x[name]
            values.setflags(write=True)  # its own copy: allowed, and harmless
            values[:] = -1.0
            if values.base is not None:  # pragma: no cover - would be a leak
                values.base.setflags(write=True)
                values.base[...] = -1.0
        return 0.5

    graph = FeatureGraph([("debt", "income", vandal)])
    clean = FeatureGraph([("debt", "income", lambda x: 0.5)])
    frame, states = explain_rows(logistic, line_data, [earn(), repay()], graph=graph)
    expected, expected_states = explain_rows(
        logistic, line_data, [earn(), repay()], graph=clean
    )
    assert (frame["status"] == "ok").any()
    assert (states[["income", "debt"]] >= 0).all().all()
    pd.testing.assert_frame_equal(frame, expected)
    pd.testing.assert_frame_equal(states, expected_states)

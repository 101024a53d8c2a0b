"""Hand-made search results for the unit tests of the output's modules."""

from types import SimpleNamespace

import numpy as np
import pandas as pd

from sklearn_cscf._result import InstanceResult
from sklearn_cscf._schema import FeatureSchema
from sklearn_cscf._status import STATUS_OK

# two features: a number and a category
X = pd.DataFrame({"income": [10.0, 20.0, 40.0], "job": ["none", "clerk", "boss"]})
SCHEMA = FeatureSchema(X)
JOB = {label: code for code, label in enumerate(SCHEMA.categories[1])}
# what the frame reads of an action: its name and the feature it sets
ACTIONS = [
    SimpleNamespace(name="earn", feature=0),
    SimpleNamespace(name="work", feature=1),
]
TARGETS = np.array(["no", "yes"])


def ok_result(x0=(10.0, "none")):
    """Two sequences: earn (cost 2), then work after earning (cost 3 + 1)."""
    start = np.array([x0[0], JOB[x0[1]]], dtype=float)
    earned = start.copy()
    earned[0] = 30.0
    worked = earned.copy()
    worked[1] = JOB["clerk"]
    states = np.array([[start, earned, earned], [start, earned, worked]])
    return InstanceResult(
        x0=start,
        target=1,
        status=STATUS_OK,
        order=np.array([[0, -1], [0, 1]]),
        lengths=np.array([1, 2]),
        effort=np.array([[4.0, 0.0], [4.0, 2.0]]),
        discount=np.array([[0.5, 1.0], [0.5, 0.5]]),
        step_cost=np.array([[2.0, 0.0], [2.0, 1.0]]),
        states=states,
        step_score=np.array([[0.6, 0.6], [0.55, 0.9]]),
        reached=np.array([1, 1]),
        objectives={
            "sequence_cost": np.array([2.0, 3.0]),
            "gower_distance": np.array([0.25, 0.75]),
        },
    )


def quick_result(status, x0=(20.0, "clerk"), message=None):
    start = np.array([x0[0], JOB[x0[1]]], dtype=float)
    return InstanceResult(x0=start, target=1, status=status, message=message)

"""The replay's frame: one row per replayed state, its checks and verdict,
then the state's features."""

import numpy as np
import pandas as pd

from sklearn_cscf._dataframes import restore_numbers
from sklearn_cscf._replay._util import is_missing

# the replay's own columns; the features of X follow them
COLUMNS = (
    "instance",
    "solution",
    "step",
    "status",
    "action",
    "feature",
    "old_value",
    "new_value",
    "effort",
    "discount",
    "cost",
    "sequence_cost",
    "repeated",
    "in_space",
    "in_direction",
    "precondition",
    "postcondition",
    "predicted",
    "target_class",
    "target_proba",
    "accepted",
    "final",
    "problems",
    "passed",
)
_CHECKS = ("repeated", "in_space", "in_direction", "precondition", "postcondition")
# text columns: pandas' string dtype with Python storage, as explain's frame
_TEXT = pd.StringDtype("python")


def to_frame(defs, records):
    rows = []
    for record in records:
        row = {column: record.get(column) for column in COLUMNS}
        row["problems"] = "; ".join(record["problems"])
        row["passed"] = not record["problems"]
        rows.append((row, record["state"]))
    head = pd.DataFrame.from_records([row for row, _ in rows], columns=list(COLUMNS))
    head = head.astype(
        {
            "solution": "Int64",
            "step": "Int64",
            "status": _TEXT,
            "action": _TEXT,
            "old_value": object,
            "new_value": object,
            "effort": float,
            "discount": float,
            "cost": float,
            "sequence_cost": float,
            **dict.fromkeys(_CHECKS, "boolean"),
            "target_proba": float,
            "accepted": bool,
            "final": bool,
            "problems": _TEXT,
            "passed": bool,
        }
    )
    head["instance"] = pd.array(head["instance"].tolist(), dtype=defs.index.dtype)
    if all(isinstance(name, str) for name in defs.names):
        head["feature"] = head["feature"].astype(_TEXT)
    if defs.classes is None:  # a regressor: its output, and the range
        head["predicted"] = head["predicted"].astype(float)
        head["target_class"] = head["target_class"].astype(_TEXT)
    else:  # class labels; a set of classes ("a or b", "not a") is text
        for column in ("predicted", "target_class"):
            head[column] = _as_labels(head[column].tolist(), defs.classes)
    features = defs.model_input([state for _, state in rows])
    if not defs.is_frame:
        features = pd.DataFrame(features, columns=defs.names)
    else:  # integer columns of X stay integers where every value is whole
        for name, dtype in zip(defs.names, defs.X.dtypes):
            column = features[name].to_numpy()
            if column.dtype.kind == "f":
                features[name] = restore_numbers(column, dtype)
    return pd.concat([head, features.reset_index(drop=True)], axis=1)


def _as_labels(values, classes):
    """Class labels in the dtype of ``classes``; other names (a set of
    classes) as text; missing ones (rows the model was not asked about) kept."""
    known = [v for v in values if not is_missing(v)]
    if not all((classes == v).any() for v in known):
        return pd.array([None if is_missing(v) else str(v) for v in values], _TEXT)
    array = np.asarray(values, dtype=object)
    if len(known) == len(values):
        try:
            return pd.array(array.astype(classes.dtype), dtype=classes.dtype)
        except (TypeError, ValueError):
            pass
    return pd.array(array, dtype=object)

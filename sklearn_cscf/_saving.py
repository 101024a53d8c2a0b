"""Explanations frames to files and back, labels included.

A CSV file keeps no types, and a label column may hold labels of several
types (the index of ``X``: ``"007"``, ``"1"`` and ``1``). The writer
(:func:`write_frame`) records the type of each label of the ``instance``,
``feature``, ``target_class`` and ``reached_class`` columns in a column of
its own (``instance_type``, ...); the reader (:func:`read_frame`) gives each label
its type back and drops those columns. A CSV file written by ``to_csv``
alone has no type columns: the reader then reads a label column as whole
numbers only where every label is written as a whole number would be
(``"7"``, not ``"007"`` or ``"7.0"``), as text otherwise. A parquet file
keeps types by itself; the writer still stores labels as text with their
types, so that a column mixing ``"1"`` and ``1`` can be written at all.
"""

from pathlib import Path

import pandas as pd

from sklearn_cscf._frames import COLUMNS, TEXT

# the frame's text columns, its whole numbers, and its labels (whose dtype
# follows the data: X's index, the feature names, the classes)
TEXT_COLUMNS = tuple(name for name, dtype in COLUMNS.items() if dtype == TEXT)
WHOLE_COLUMNS = tuple(name for name, dtype in COLUMNS.items() if dtype == "Int64")
LABEL_COLUMNS = tuple(name for name, dtype in COLUMNS.items() if dtype is None)
TYPE_SUFFIX = "_type"
# label types written with their type, and how their text reads back
_READERS = {
    "str": str,
    "int": int,
    "float": float,
    "bool": lambda text: {"True": True, "False": False}[text],
    "Timestamp": pd.Timestamp,
}


def _type_name(label):
    if label is None or label is pd.NA or (isinstance(label, float) and label != label):
        return "missing"
    if isinstance(label, bool):
        return "bool"
    if isinstance(label, str):
        return "str"
    if isinstance(label, pd.Timestamp):
        return "Timestamp"
    if isinstance(label, int) or (hasattr(label, "dtype") and label.dtype.kind in "iu"):
        return "int"
    if isinstance(label, float) or (
        hasattr(label, "dtype") and label.dtype.kind == "f"
    ):
        return "float"
    return type(label).__name__


def _is_parquet(path):
    return isinstance(path, str | Path) and Path(path).suffix.lower() in (
        ".parquet",
        ".pq",
    )


def write_frame(frame, path, **kwargs):
    """Write ``frame`` as CSV (or parquet, by the suffix) with label types."""
    out = frame.copy()
    for name in LABEL_COLUMNS:
        if name not in out.columns:
            continue
        labels = out[name].astype(object).tolist()
        types = [_type_name(label) for label in labels]
        unknown = sorted({t for t in types if t not in _READERS and t != "missing"})
        if unknown:
            raise TypeError(
                f"The {name!r} column holds labels of type {unknown[0]} "
                f"(e.g. {labels[types.index(unknown[0])]!r}), which a file "
                "cannot give back as they are; give X an index of text or "
                "whole numbers (e.g. X.reset_index()) before explaining."
            )
        out[name] = pd.array(
            [None if t == "missing" else str(v) for v, t in zip(labels, types)],
            dtype=TEXT,
        )
        out[name + TYPE_SUFFIX] = pd.array(types, dtype=TEXT)
    if _is_parquet(path):
        out.to_parquet(path, index=False, **kwargs)
    else:
        out.to_csv(path, index=False, **kwargs)


def read_frame(path, **kwargs):
    """Read a frame saved with :func:`write_frame`, ``to_csv(index=False)``
    or ``to_parquet``, with the column types of ``explain``'s frame."""
    if _is_parquet(path):
        frame = pd.read_parquet(path, **kwargs)
        if not any(name + TYPE_SUFFIX in frame.columns for name in LABEL_COLUMNS):
            # parquet kept the types itself; text as explain gives it
            # (pandas.read_parquet gives pyarrow-backed strings)
            return frame.astype(
                {
                    name: TEXT
                    for name in frame.columns
                    if isinstance(frame[name].dtype, pd.StringDtype)
                }
            )
        # text as explain gives it (parquet reads pyarrow-backed strings)
        frame = frame.astype(
            {
                name: TEXT
                for name in frame.columns
                if name in LABEL_COLUMNS
                or isinstance(frame[name].dtype, pd.StringDtype)
            }
        )
    else:
        frame = pd.read_csv(
            path, dtype=TEXT, keep_default_na=False, na_values=[""], **kwargs
        )
    for name in frame.columns:
        if name in TEXT_COLUMNS or name.endswith(TYPE_SUFFIX):
            continue
        if name in WHOLE_COLUMNS:
            frame[name] = pd.to_numeric(frame[name]).astype("Int64")
        elif name in LABEL_COLUMNS:
            typed = name + TYPE_SUFFIX
            if typed in frame.columns:
                frame[name] = _typed_labels(frame[name], frame[typed], name)
            else:
                frame[name] = _labels(frame[name], nullable=name != "instance")
        elif frame[name].dtype == TEXT or frame[name].dtype == object:
            frame[name] = pd.to_numeric(frame[name]).astype(float)
    return frame.drop(
        columns=[n + TYPE_SUFFIX for n in LABEL_COLUMNS if n + TYPE_SUFFIX in frame]
    )


def _typed_labels(column, types, name):
    """Labels of ``column`` (text) in their recorded ``types``."""
    values = []
    for text, kind in zip(column.tolist(), types.tolist()):
        if kind == "missing" or text is pd.NA:
            values.append(None)
            continue
        reader = _READERS.get(kind)
        if reader is None:
            raise ValueError(
                f"The {name + TYPE_SUFFIX!r} column names the type {kind!r}, "
                f"which is not one of {sorted(_READERS)}: was the file changed?"
            )
        values.append(reader(text))
    kinds = set(types.tolist()) - {"missing"}
    if kinds == {"int"} and name == "instance" and None not in values:
        return pd.array(values, dtype="int64")
    if kinds == {"int"}:
        return pd.array(values, dtype="Int64")
    if kinds <= {"str"}:  # text, or only missing values
        return pd.array(values, dtype=TEXT)
    return pd.array(values, dtype=object)


def _labels(column, nullable=True):
    """Whole numbers where every value is written as one ("7", not "007",
    "7.0" or "+7"), else the text."""
    numbers = pd.to_numeric(column, errors="coerce")
    known = column.notna()
    if not numbers.isna().equals(~known) or not (numbers.dropna() % 1 == 0).all():
        return column
    canonical = numbers[known].astype("int64").astype(str)
    if not (canonical.to_numpy() == column[known].astype(str).to_numpy()).all():
        return column  # zero-padded or otherwise text labels: keep them
    if not nullable and not numbers.isna().any():
        return numbers.astype("int64")
    return numbers.astype("Int64")

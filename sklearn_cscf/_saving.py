"""Explanations frames to files and back, labels included: the work of
:func:`~sklearn_cscf.write_explanations` and
:func:`~sklearn_cscf.read_explanations`, whose docstrings give the rules. The
labels of ``instance``, ``feature``, ``target_class`` and ``reached_class``
are written as text beside a column of their types (``instance_type``, ...),
in a parquet file too (which keeps other types by itself), so that a column
mixing ``"1"`` and ``1`` can be written at all.
"""

from pathlib import Path

import pandas as pd

from sklearn_cscf._frames import COLUMNS, TEXT

# the frame's text columns, its whole numbers, and its labels (whose dtype
# follows the data: X's index, the feature names, the classes)
TEXT_COLUMNS = tuple(name for name, dtype in COLUMNS.items() if dtype == TEXT)
WHOLE_COLUMNS = tuple(name for name, dtype in COLUMNS.items() if dtype == "Int64")
LABEL_COLUMNS = tuple(name for name, dtype in COLUMNS.items() if dtype is None)
# the columns of explain's frame (others are named as not its own)
_NUMBER_COLUMNS = (*COLUMNS, "plausibility")
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
    kind = label.dtype.kind if hasattr(label, "dtype") else None  # NumPy scalars
    if isinstance(label, int) or kind in ("i", "u"):
        return "int"
    if isinstance(label, float) or kind == "f":
        return "float"
    return type(label).__name__


PARQUET_SUFFIXES = (".parquet", ".pq")
# suffixes written as CSV (with pandas' compressions)
CSV_SUFFIXES = (".csv", ".txt", ".tsv", ".tab", ".dat", "")
COMPRESSIONS = (".gz", ".bz2", ".zip", ".xz", ".zst", ".tar")
# the digits of a whole-number label (Python's own limit is 4300)
MAX_LABEL_DIGITS = 1000


def _is_parquet(path):
    if isinstance(path, str | Path):
        return Path(path).suffix.lower() in PARQUET_SUFFIXES
    # an open binary file: parquet files begin with PAR1
    if hasattr(path, "read") and hasattr(path, "seek") and hasattr(path, "tell"):
        try:
            start = path.tell()
            head = path.read(4)
            path.seek(start)
        except (OSError, ValueError):
            return False
        return head == b"PAR1"
    return False


def _check_suffix(path):
    """Refuse a path whose suffix names a format written neither as CSV nor
    as parquet (``out.xlsx`` would hold CSV text)."""
    if not isinstance(path, str | Path):
        return
    suffixes = [x.lower() for x in Path(path).suffixes]
    while suffixes and suffixes[-1] in COMPRESSIONS:
        suffixes.pop()
    suffix = suffixes[-1] if suffixes else ""
    if suffix not in CSV_SUFFIXES + PARQUET_SUFFIXES and not suffix[1:].isdigit():
        raise ValueError(
            f"Cannot write explanations to {str(path)!r}: the extension "
            f"{suffix!r} is not a format written here. Use .csv (or .tsv, .txt, "
            "optionally compressed, e.g. .csv.gz) for CSV, or .parquet."
        )


def _is_own(name):
    """Whether ``name`` is a column of explain's frame (or a label's type)."""
    if name in _NUMBER_COLUMNS:
        return True
    return isinstance(name, str) and any(
        name == label + TYPE_SUFFIX for label in LABEL_COLUMNS
    )


def _read_kind(texts):
    """What a CSV column of another's (not of explain's frame) holds, from
    its text (missing values left out): ``"bool"`` (every value ``True`` or
    ``False``), ``"int"`` (whole numbers written as such: ``7``, not
    ``007`` or ``7.0``), ``"float"`` (numbers) or ``"text"``."""
    texts = pd.Series(texts, dtype=object).dropna().astype(str)
    if texts.empty:
        return "float"
    if texts.isin(["True", "False"]).all():
        return "bool"
    numbers = pd.to_numeric(texts, errors="coerce")
    if numbers.isna().any():
        return "text"
    whole = texts.str.fullmatch(r"-?\d+").all() and (numbers % 1 == 0).all()
    if whole and (texts == numbers.astype("int64").astype(str)).all():
        return "int"
    return "float"


def _check_extra(frame):
    """Refuse, before anything is written as CSV, a column that is not
    explain's and that the file would not give back as it is (text that
    reads as numbers, or values that are neither numbers, booleans nor
    text)."""
    for name in frame.columns:
        if _is_own(name):
            continue
        column = frame[name]
        dtype = column.dtype
        if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype):
            continue
        values = column.dropna().tolist() if len(column) else []
        odd = [v for v in values if not isinstance(v, str)]
        if odd:
            raise TypeError(
                f"Column {name!r} (not a column of explain's frame) holds "
                f"{type(odd[0]).__name__} values (e.g. {odd[0]!r:.40}), which a "
                "CSV file gives back as text: convert the column (to numbers, "
                f"or X[{name!r}].astype(str) for text) before writing, or "
                "write parquet (a .parquet path), which keeps its type."
            )
        kind = _read_kind(values)
        if values and kind != "text":
            raise ValueError(
                f"Column {name!r} (not a column of explain's frame) holds text "
                f"that reads back from a CSV file as {kind} values (e.g. "
                f"{values[0]!r:.40}): convert it to {kind} before writing, "
                "or write parquet (a .parquet path), which keeps its type."
            )


def write_frame(frame, path, **kwargs):
    """Write ``frame`` as CSV (or parquet, by the suffix) with label types."""
    _check_suffix(path)
    if not (isinstance(path, str | Path) and _is_parquet(path)):
        _check_extra(frame)
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
    if isinstance(path, str | Path) and _is_parquet(path):
        out.to_parquet(path, index=False, **kwargs)
    else:
        out.to_csv(path, index=False, **kwargs)


def read_frame(path, **kwargs):
    """Read a frame saved with :func:`write_frame`, ``to_csv(index=False)``
    or ``to_parquet``, with the column types of ``explain``'s frame."""
    parquet = _is_parquet(path)
    if parquet:
        frame = pd.read_parquet(path, **kwargs)
        typed = any(name + TYPE_SUFFIX in frame.columns for name in LABEL_COLUMNS)
        # text as explain gives it (parquet reads pyarrow-backed strings)
        frame = frame.astype(
            {
                name: TEXT
                for name in frame.columns
                if (typed and name in LABEL_COLUMNS)
                or isinstance(frame[name].dtype, pd.StringDtype)
            }
        )
        if not typed:  # parquet kept every other type itself
            return frame
    else:
        frame = pd.read_csv(
            path, dtype=TEXT, keep_default_na=False, na_values=[""], **kwargs
        )
    for name in frame.columns:
        if name in TEXT_COLUMNS or name.endswith(TYPE_SUFFIX):
            continue
        if name in WHOLE_COLUMNS:
            frame[name] = _whole(_numbers(frame[name], name), name)
        elif name in LABEL_COLUMNS:
            typed = name + TYPE_SUFFIX
            if typed in frame.columns:
                frame[name] = _typed_labels(frame[name], frame[typed], name)
            else:
                frame[name] = _labels(frame[name], nullable=name != "instance")
        elif name in _NUMBER_COLUMNS:
            if frame[name].dtype == TEXT or frame[name].dtype == object:
                frame[name] = _numbers(frame[name], name).astype(float)
        elif not parquet:  # another's column: what its text says
            frame[name] = _extra(frame[name])
    return frame.drop(
        columns=[n + TYPE_SUFFIX for n in LABEL_COLUMNS if n + TYPE_SUFFIX in frame]
    )


def _extra(column):
    """A CSV column that is not explain's, in the type its text gives
    (:func:`_read_kind`): booleans, whole numbers (``Int64`` with a missing
    value), numbers, or text."""
    kind = _read_kind(column)
    missing = column.isna().any()
    if kind == "bool":
        values = column.map({"True": True, "False": False}, na_action="ignore")
        return values.astype("boolean" if missing else bool)
    if kind == "int":
        numbers = pd.to_numeric(column)
        return numbers.astype("Int64" if missing else "int64")
    if kind == "float":
        return pd.to_numeric(column).astype(float)
    return column


def _numbers(column, name):
    """``column`` as numbers, or an error naming the column, the row and the
    text (a spreadsheet's formula, say) that is not a number."""
    numbers = pd.to_numeric(column, errors="coerce")
    bad = numbers.isna() & column.notna()
    if bad.any():
        row, text = int(bad.to_numpy().argmax()), column[bad].iloc[0]
        formula = " (a spreadsheet formula?)" if str(text).startswith("=") else ""
        raise ValueError(
            f"The explanations file's column {name!r} holds "
            f"{str(text)!r:.60}{formula} "
            f"in row {row}, not a number. Was the file edited? Restore the "
            "value (or drop the column) and read it again."
        )
    return numbers


def _whole(numbers, name):
    """Whole numbers as ``Int64``; a fraction is an error, never truncated."""
    fraction = numbers.notna() & (numbers % 1 != 0)
    if fraction.any():
        row = int(fraction.to_numpy().argmax())
        raise ValueError(
            f"The explanations file's column {name!r} holds "
            f"{float(numbers[fraction].iloc[0])!r} in row {row}, not a whole number. "
            "Was the file edited? Restore the value and read it again."
        )
    return numbers.astype("Int64")


def _read_label(reader, text, kind, name, row):
    if kind == "int" and len(str(text).lstrip("+-")) > MAX_LABEL_DIGITS:
        raise ValueError(
            f"Row {row} of the {name!r} column holds a label of "
            f"{len(str(text).lstrip('+-'))} digits, longer than the "
            f"{MAX_LABEL_DIGITS} read as a whole number: was the file changed? "
            f"Give the row its label again (or its {name + TYPE_SUFFIX!r} as "
            "'str')."
        )
    try:
        return reader(text)
    except (ValueError, KeyError, TypeError, OverflowError):
        raise ValueError(
            f"Row {row} of the {name!r} column holds {str(text)!r:.60}, which "
            f"is not {'an' if kind == 'int' else 'a'} {kind} as its "
            f"{name + TYPE_SUFFIX!r} column says: was the file changed? "
            f"Correct the label, or its type (one of {sorted(_READERS)})."
        ) from None


def _typed_labels(column, types, name):
    """Labels of ``column`` (text) in their recorded ``types``."""
    values = []
    for row, (text, kind) in enumerate(zip(column.tolist(), types.tolist())):
        if kind is pd.NA or kind not in (*_READERS, "missing"):
            raise ValueError(
                f"Row {row} of the {name + TYPE_SUFFIX!r} column names the type "
                f"{kind if kind is pd.NA else repr(kind)}, which is not one of "
                f"{sorted(_READERS)} or 'missing': was the file changed? "
                "Correct it (the type of the label beside it)."
            )
        if kind == "missing":
            values.append(None)
            continue
        if text is pd.NA:
            # an empty field: the empty label "" (a missing one says so)
            values.append("" if kind == "str" else None)
            continue
        values.append(_read_label(_READERS[kind], text, kind, name, row))
    kinds = set(types.tolist()) - {"missing"}
    small = all(-(2**63) <= v < 2**63 for v in values if isinstance(v, int))
    if kinds == {"int"} and not small:  # beyond int64: Python's ints
        return pd.array(values, dtype=object)
    if kinds == {"int"} and name == "instance" and None not in values:
        return pd.array(values, dtype="int64")
    if kinds == {"int"}:
        return pd.array(values, dtype="Int64")
    if kinds <= {"str"}:  # text, or only missing values
        return pd.array(values, dtype=TEXT)
    return pd.array(values, dtype=object)


def _labels(column, nullable=True):
    """Whole numbers where every value is written as one ("7", not "007",
    "7.0" or "+7"; :func:`_read_kind`), else the text."""
    if column.notna().any() and _read_kind(column) != "int":
        return column  # zero-padded or otherwise text labels: keep them
    numbers = pd.to_numeric(column, errors="coerce")
    if not nullable and not numbers.isna().any():
        return numbers.astype("int64")
    return numbers.astype("Int64")

"""The UCI Adult and German Credit data sets, shipped inside the package.

The files under ``data/`` are the unmodified UCI files, compressed with xz
(see ``data/README.md``); they are parsed on first use and cached, and every
call returns fresh copies. Nothing is downloaded and nothing outside the
package is read.
"""

import io
import json
import lzma
from functools import cache
from importlib import resources

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from sklearn_cscf._sklearn_compat import validate_params

__all__ = ["load_adult", "load_german_credit"]

ADULT_FEATURES = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education_num",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital_gain",
    "capital_loss",
    "hours_per_week",
    "native_country",
]
ADULT_CATEGORICAL = [
    "workclass",
    "education",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native_country",
]

# german.data column -> (our name, key in german_codes.json or None if numeric)
GERMAN_COLUMNS = [
    ("checking_account", "status"),
    ("loan_duration", None),
    ("credit_history", "credit_history"),
    ("purpose", "purpose"),
    ("credit_amount", None),
    ("saving_account", "savings"),
    ("present_employment", "present_employment"),
    ("installment_rate", None),
    ("personal_status", "status_sex"),
    ("other_debtors_guarantors", "other_debtors"),
    ("present_residence_since", None),
    ("property", "property"),
    ("age_in_years", None),
    ("other_installment_plans", "installment_plans"),
    ("housing", "housing"),
    ("existing_credit", None),
    ("job", "job"),
    ("liable_persons", None),
    ("telephone", "telephone"),
    ("foreign_worker", "foreign_worker"),
]
GERMAN_FEATURES = [name for name, _ in GERMAN_COLUMNS]

_LICENCE = """\
**Licence and citation**

Distributed by the UCI Machine Learning Repository under the Creative Commons
Attribution 4.0 International licence (CC BY 4.0,
https://creativecommons.org/licenses/by/4.0/). The package ships the unmodified
UCI files, compressed with xz. If you use the data, cite the creators and the
repository:

- {creators}
- Markelle Kelly, Rachel Longjohn and Kolby Nottingham. The UCI Machine
  Learning Repository. https://archive.ics.uci.edu
"""

_ADULT_DESCR = """\
.. _adult_dataset:

Adult (Census Income)
---------------------

Whether a person earns more than 50K US dollars a year, from the 1994 US
census (extraction by Barry Becker). The UCI training file (32,561 rows) and
test file (16,281 rows) are concatenated, in that order; the 3,620 rows with a
missing value (``?``) are dropped, leaving **45,222 rows**, of which 11,208
(24.8 %) earn more than 50K. The trailing period of the test file's labels
(``>50K.``) is stripped, so both files use the same two labels.

**Features** (in order)

- ``age`` (int), ``fnlwgt`` (int, the census sampling weight),
  ``education_num`` (int, 1 = Preschool ... 16 = Doctorate),
  ``capital_gain``, ``capital_loss``, ``hours_per_week`` (int).
- ``workclass``, ``marital_status``, ``occupation``, ``relationship``,
  ``race``, ``sex``, ``native_country``: pandas ``category`` (labels as in
  the UCI files without the leading space, e.g. ``"State-gov"``).
- ``education``: ordered pandas ``category``, ordered by ``education_num``
  (``Preschool`` < ``1st-4th`` < ... < ``Doctorate``); it is the label of
  ``education_num``.

**Target**

``income``: 1 for ``>50K``, 0 for ``<=50K``.

**The paper's scenario**

``adult_actions()`` and ``adult_feature_graph()`` give the actions and the
feature-relationship graph of the CSCF paper's Adult experiment.

""" + _LICENCE.format(
    creators="Barry Becker and Ronny Kohavi. Adult. UCI Machine Learning "
    "Repository, 1996. https://doi.org/10.24432/C5XW20"
)

_GERMAN_DESCR = """\
.. _german_credit_dataset:

Statlog (German Credit Data)
----------------------------

Whether a loan applicant is a good or a bad credit risk, from a German bank
(Professor Dr. Hans Hofmann, Universitaet Hamburg). **1,000 rows**, 700 good
and 300 bad, no missing values.

**Features** (in order)

- Numeric (int): ``loan_duration`` (months), ``credit_amount`` (Deutsche
  Mark), ``installment_rate`` (% of disposable income), ``present_residence_
  since`` (years), ``age_in_years``, ``existing_credit`` (number of credits at
  this bank), ``liable_persons`` (people being liable to provide maintenance
  for).
- Categorical (pandas ``category``): ``checking_account``,
  ``credit_history``, ``purpose``, ``saving_account``, ``present_employment``,
  ``personal_status``, ``other_debtors_guarantors``, ``property``,
  ``other_installment_plans``, ``housing``, ``job``, ``telephone``,
  ``foreign_worker``. The UCI codes (``A11`` ... ``A202``) are replaced by
  their documented meanings, stripped of surrounding spaces (e.g.
  ``"guarantor"``, ``"unskilled - resident"``, ``"... < 100 DM"``);
  ``telephone`` and ``foreign_worker`` are ``"yes"`` / ``"no"``. Categories
  are in the order of the codes.

**Target**

``credit``: 1 for good credit, 0 for bad (UCI class 1 and 2).

**The paper's scenario**

``german_actions()`` gives the actions of the CSCF paper's German Credit
experiment (the paper used no feature graph for it).

""" + _LICENCE.format(
    creators="Hans Hofmann. Statlog (German Credit Data). UCI Machine "
    "Learning Repository, 1994. https://doi.org/10.24432/C5NC77"
)


def _open(name):
    """A text stream of the packaged, xz-compressed file ``name``."""
    path = resources.files("sklearn_cscf.datasets").joinpath("data", name + ".xz")
    # read at once: lzma.open on an open file would leave that file unclosed
    return io.StringIO(lzma.decompress(path.read_bytes()).decode("utf-8"))


@cache
def _adult_frame():
    names = [*ADULT_FEATURES, "income"]
    parts = []
    for name, skip in (("adult.data", 0), ("adult.test", 1)):
        with _open(name) as stream:
            parts.append(
                pd.read_csv(
                    stream,
                    header=None,
                    names=names,
                    skiprows=skip,  # adult.test starts with "|1x3 Cross validator"
                    skipinitialspace=True,
                    na_values=["?"],
                    keep_default_na=False,
                    dtype=dict.fromkeys([*ADULT_CATEGORICAL, "income"], str),
                )
            )
    frame = pd.concat(parts, ignore_index=True).dropna().reset_index(drop=True)
    label = frame.pop("income").str.rstrip(".")
    unknown = set(label) - {"<=50K", ">50K"}
    if unknown:  # pragma: no cover - the packaged file is fixed
        raise ValueError(f"Unexpected Adult labels {sorted(unknown)}.")
    numeric = [c for c in ADULT_FEATURES if c not in ADULT_CATEGORICAL]
    frame = frame.astype(dict.fromkeys(numeric, np.int64))
    # education in the order of education_num (one number per label)
    levels = frame.groupby("education")["education_num"].agg(["min", "max"])
    if not (levels["min"] == levels["max"]).all():  # pragma: no cover
        raise ValueError("Adult education does not map to one education_num.")
    order = levels["min"].sort_values().index.tolist()
    for column in ADULT_CATEGORICAL:
        categories = order if column == "education" else sorted(frame[column].unique())
        frame[column] = pd.Categorical(
            frame[column], categories=categories, ordered=column == "education"
        )
    target = pd.Series((label == ">50K").astype(np.int64), name="income")
    return frame[ADULT_FEATURES], target


@cache
def _german_frame():
    with _open("german_codes.json") as stream:
        codes = json.load(stream)
    names = [*GERMAN_FEATURES, "credit"]
    with _open("german.data") as stream:
        raw = pd.read_csv(
            stream, sep=" ", header=None, names=names, dtype=str, keep_default_na=False
        )
    frame = pd.DataFrame(index=pd.RangeIndex(len(raw)))
    for column, key in GERMAN_COLUMNS:
        if key is None:
            frame[column] = raw[column].astype(np.int64)
            continue
        meaning = {code: _readable(value) for code, value in codes[key].items()}
        unknown = set(raw[column]) - set(meaning)
        if unknown:  # pragma: no cover - the packaged file is fixed
            raise ValueError(f"Unknown German codes in {column}: {sorted(unknown)}.")
        categories = list(dict.fromkeys(meaning.values()))
        frame[column] = pd.Categorical(raw[column].map(meaning), categories=categories)
    credit = raw["credit"].astype(np.int64)
    target = pd.Series((credit == 1).astype(np.int64), name="credit")
    return frame, target


def _readable(value):
    """A code's documented meaning: stripped text; booleans as yes/no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value).strip()


def bunch(data, target, target_names, descr, as_frame, return_X_y):
    data, target = data.copy(), target.copy()
    feature_names = data.columns.tolist()
    if as_frame:
        frame = pd.concat([data, target], axis=1)
    else:
        frame = None
        data = data.astype(object).to_numpy()
        target = target.to_numpy(copy=True)
    if return_X_y:
        return data, target
    return Bunch(
        data=data,
        target=target,
        frame=frame,
        feature_names=feature_names,
        target_names=np.array(target_names),
        DESCR=descr,
    )


_LOADER_PARAMS = {"as_frame": ["boolean"], "return_X_y": ["boolean"]}


@validate_params(_LOADER_PARAMS, prefer_skip_nested_validation=True)
def load_adult(*, as_frame=True, return_X_y=False):
    """Load the UCI Adult (Census Income) data set (classification).

    45,222 people (the UCI training and test files without the rows that
    have missing values), 14 mixed-type features, and whether they earn more
    than 50K a year (11,208 do). The data ship with the package: nothing is
    downloaded. Read ``DESCR`` for the columns, the licence (CC BY 4.0) and
    the citation.

    Parameters
    ----------
    as_frame : bool, default=True
        If True, ``data`` is a pandas DataFrame (numeric columns as int64,
        the others as ``category``, ``education`` ordered), ``target`` a
        Series and ``frame`` both together. If False, ``data`` is an object
        ndarray, ``target`` an int ndarray and ``frame`` is None.
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        Dictionary-like object with the attributes:

        data : DataFrame of shape (45222, 14)
            The features, in the order ``age, workclass, fnlwgt, education,
            education_num, marital_status, occupation, relationship, race,
            sex, capital_gain, capital_loss, hours_per_week, native_country``.
        target : Series of shape (45222,)
            ``income``: 1 for ``>50K``, 0 for ``<=50K``.
        frame : DataFrame of shape (45222, 15)
            ``data`` with the ``income`` column (None if ``as_frame=False``).
        feature_names : list of str
            The feature columns.
        target_names : ndarray of str
            ``["<=50K", ">50K"]``, the meaning of 0 and 1.
        DESCR : str
            Description, licence and citation.

    (data, target) : tuple
        Only if ``return_X_y`` is True: ``data`` and ``target`` as above
        (the features and the labels), without the rest of the Bunch.

    See Also
    --------
    adult_actions : The paper's actions on these columns.
    adult_feature_graph : The paper's feature-relationship graph.
    load_german_credit : The other data set of the paper.

    Examples
    --------
    >>> from sklearn_cscf.datasets import load_adult
    >>> adult = load_adult()
    >>> adult.data.shape
    (45222, 14)
    >>> int(adult.target.sum())
    11208
    >>> adult.data["education"].cat.categories[:3].tolist()
    ['Preschool', '1st-4th', '5th-6th']
    """
    data, target = _adult_frame()
    return bunch(data, target, ["<=50K", ">50K"], _ADULT_DESCR, as_frame, return_X_y)


@validate_params(_LOADER_PARAMS, prefer_skip_nested_validation=True)
def load_german_credit(*, as_frame=True, return_X_y=False):
    """Load the UCI Statlog German Credit data set (classification).

    1,000 loan applicants, 20 mixed-type features with readable category
    labels, and whether they are a good credit risk (700 are). The data ship
    with the package: nothing is downloaded. Read ``DESCR`` for the columns,
    the licence (CC BY 4.0) and the citation.

    Parameters
    ----------
    as_frame : bool, default=True
        If True, ``data`` is a pandas DataFrame (numeric columns as int64,
        the others as ``category``), ``target`` a Series and ``frame`` both
        together. If False, ``data`` is an object ndarray, ``target`` an int
        ndarray and ``frame`` is None.
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        Dictionary-like object with the attributes:

        data : DataFrame of shape (1000, 20)
            The features, in the order ``checking_account, loan_duration,
            credit_history, purpose, credit_amount, saving_account,
            present_employment, installment_rate, personal_status,
            other_debtors_guarantors, present_residence_since, property,
            age_in_years, other_installment_plans, housing, existing_credit,
            job, liable_persons, telephone, foreign_worker``.
        target : Series of shape (1000,)
            ``credit``: 1 for good credit, 0 for bad.
        frame : DataFrame of shape (1000, 21)
            ``data`` with the ``credit`` column (None if ``as_frame=False``).
        feature_names : list of str
            The feature columns.
        target_names : ndarray of str
            ``["bad", "good"]``, the meaning of 0 and 1.
        DESCR : str
            Description, licence and citation.

    (data, target) : tuple
        Only if ``return_X_y`` is True: ``data`` and ``target`` as above
        (the features and the labels), without the rest of the Bunch.

    See Also
    --------
    german_actions : The paper's actions on these columns.
    load_adult : The other data set of the paper.

    Examples
    --------
    >>> from sklearn_cscf.datasets import load_german_credit
    >>> german = load_german_credit()
    >>> german.data.shape
    (1000, 20)
    >>> int(german.target.sum())
    700
    >>> german.data.loc[0, "job"]
    'skilled employee/ official'
    """
    data, target = _german_frame()
    return bunch(data, target, ["bad", "good"], _GERMAN_DESCR, as_frame, return_X_y)

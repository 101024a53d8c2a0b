"""Tests of the packaged UCI loaders: ``load_adult`` and ``load_german_credit``.

The loaders cache the parsed files, so the whole module runs in a few seconds.
"""

import hashlib
import json
import lzma
import os
import re
import subprocess
import sys
import textwrap
from importlib import resources

import numpy as np
import pandas as pd
import pytest
from pandas.api.types import is_integer_dtype
from sklearn.utils import Bunch

import sklearn_cscf
from sklearn_cscf.datasets import load_adult, load_german_credit

ADULT_COLUMNS = [
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
ADULT_NUMERIC = [
    "age",
    "fnlwgt",
    "education_num",
    "capital_gain",
    "capital_loss",
    "hours_per_week",
]
ADULT_EDUCATION = [
    "Preschool",
    "1st-4th",
    "5th-6th",
    "7th-8th",
    "9th",
    "10th",
    "11th",
    "12th",
    "HS-grad",
    "Some-college",
    "Assoc-voc",
    "Assoc-acdm",
    "Bachelors",
    "Masters",
    "Prof-school",
    "Doctorate",
]
GERMAN_COLUMNS = [
    "checking_account",
    "loan_duration",
    "credit_history",
    "purpose",
    "credit_amount",
    "saving_account",
    "present_employment",
    "installment_rate",
    "personal_status",
    "other_debtors_guarantors",
    "present_residence_since",
    "property",
    "age_in_years",
    "other_installment_plans",
    "housing",
    "existing_credit",
    "job",
    "liable_persons",
    "telephone",
    "foreign_worker",
]
GERMAN_NUMERIC = [
    "loan_duration",
    "credit_amount",
    "installment_rate",
    "present_residence_since",
    "age_in_years",
    "existing_credit",
    "liable_persons",
]

# The first line of german.data,
# "A11 6 A34 A43 1169 A65 A75 4 A93 A101 4 A121 67 A143 A152 2 A173 1 A192 A201 1",
# decoded with the data set's documentation (class 1 = good).
GERMAN_FIRST_ROW = {
    "checking_account": "... < 0 DM",  # A11
    "loan_duration": 6,
    "credit_history": "critical account/ other credits existing (not at this bank)",
    "purpose": "radio/television",  # A43
    "credit_amount": 1169,
    "saving_account": "unknown/ no savings account",  # A65
    "present_employment": ".. >= 7 years",  # A75
    "installment_rate": 4,
    "personal_status": "male : single",  # A93
    "other_debtors_guarantors": "none",  # A101
    "present_residence_since": 4,
    "property": "real estate",  # A121
    "age_in_years": 67,
    "other_installment_plans": "none",  # A143
    "housing": "own",  # A152
    "existing_credit": 2,
    "job": "skilled employee/ official",  # A173
    "liable_persons": 1,
    "telephone": "yes",  # A192: yes, registered under the customer's name
    "foreign_worker": "yes",  # A201
}

# SHA-256 of the unmodified UCI files (as published with the data sets and
# listed in sklearn_cscf/datasets/data/README.md): the packaged .xz files
# must decompress to exactly these.
UCI_SHA256 = {
    "adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    "adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    "german.data": "b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871",
    "german_codes.json": (
        "73a48f120cdb8019fb9f0ad84078ef1ba109f1100bbcc6cbcf925d60e6adcd4e"
    ),
}

LOADERS = pytest.mark.parametrize("loader", [load_adult, load_german_credit])


@pytest.fixture(scope="module")
def adult():
    return load_adult()


@pytest.fixture(scope="module")
def german():
    return load_german_credit()


def _assert_same(left, right):
    """Fast equality of two frames or series: values, dtypes and labels."""
    assert type(left) is type(right)
    if isinstance(left, pd.DataFrame):
        assert left.columns.tolist() == right.columns.tolist()
        assert left.dtypes.tolist() == right.dtypes.tolist()
    else:
        assert left.name == right.name and left.dtype == right.dtype
    assert left.index.equals(right.index)
    assert left.equals(right)


def _categorical_columns(frame):
    return [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]


# --------------------------------------------------------------------- #
# Shapes, columns and dtypes
# --------------------------------------------------------------------- #
def test_adult_shape_columns_and_dtypes(adult):
    assert adult.data.shape == (45222, 14)
    assert adult.target.shape == (45222,)
    assert adult.frame.shape == (45222, 15)
    assert adult.data.columns.tolist() == ADULT_COLUMNS
    assert adult.feature_names == ADULT_COLUMNS
    assert adult.frame.columns.tolist() == [*ADULT_COLUMNS, "income"]
    assert adult.target.name == "income"
    for column in ADULT_COLUMNS:
        dtype = adult.data[column].dtype
        if column in ADULT_NUMERIC:
            assert dtype == np.int64, column
        else:
            assert isinstance(dtype, pd.CategoricalDtype), column
    assert _categorical_columns(adult.data) == [
        c for c in ADULT_COLUMNS if c not in ADULT_NUMERIC
    ]
    assert adult.target.dtype == np.int64
    assert isinstance(adult.data.index, pd.RangeIndex)
    assert adult.data.index.equals(pd.RangeIndex(45222))


def test_german_shape_columns_and_dtypes(german):
    assert german.data.shape == (1000, 20)
    assert german.target.shape == (1000,)
    assert german.frame.shape == (1000, 21)
    assert german.data.columns.tolist() == GERMAN_COLUMNS
    assert german.feature_names == GERMAN_COLUMNS
    assert german.frame.columns.tolist() == [*GERMAN_COLUMNS, "credit"]
    assert german.target.name == "credit"
    for column in GERMAN_COLUMNS:
        dtype = german.data[column].dtype
        if column in GERMAN_NUMERIC:
            assert dtype == np.int64, column
        else:
            assert isinstance(dtype, pd.CategoricalDtype), column
            assert not dtype.ordered, column
    assert german.target.dtype == np.int64
    assert german.data.index.equals(pd.RangeIndex(1000))


# --------------------------------------------------------------------- #
# Values
# --------------------------------------------------------------------- #
def test_adult_education_ordered_by_education_num(adult):
    education = adult.data["education"]
    assert education.cat.ordered
    assert education.cat.categories.tolist() == ADULT_EDUCATION
    # row by row: the label is that of education_num (1 = Preschool ... 16)
    np.testing.assert_array_equal(
        education.cat.codes.to_numpy() + 1, adult.data["education_num"].to_numpy()
    )
    assert adult.data["education_num"].min() == 1
    assert adult.data["education_num"].max() == 16
    assert (adult.data["education"] < "Bachelors").sum() == (
        adult.data["education_num"] < 13
    ).sum()
    others = [c for c in _categorical_columns(adult.data) if c != "education"]
    assert not any(adult.data[c].cat.ordered for c in others)


@pytest.mark.parametrize("name", ["adult", "german"])
def test_no_missing_values_and_stripped_labels(name, request):
    data = request.getfixturevalue(name).data
    assert not data.isna().any().any()
    for column in _categorical_columns(data):
        categories = data[column].cat.categories.tolist()
        assert categories, column
        for category in categories:
            assert isinstance(category, str), (column, category)
            assert category == category.strip(), (column, category)
            assert category != "?" and category != "", (column, category)
            assert not category.endswith("."), (column, category)

    if name == "adult":  # no left-over category of a dropped row
        for column in _categorical_columns(data):
            assert set(data[column].unique()) == set(data[column].cat.categories)


def test_adult_categories(adult):
    data = adult.data
    for column in _categorical_columns(data):
        assert not any("?" in c for c in data[column].cat.categories), column
    assert "State-gov" in data["workclass"].cat.categories
    assert "Private" in data["workclass"].cat.categories
    assert set(data["sex"].cat.categories) == {"Female", "Male"}
    assert "Armed-Forces" in data["occupation"].cat.categories
    assert "United-States" in data["native_country"].cat.categories
    assert data.loc[0, "workclass"] == "State-gov"  # first row of adult.data
    assert data.loc[0, "education"] == "Bachelors"
    assert data.loc[0, "age"] == 39
    assert data.loc[0, "fnlwgt"] == 77516
    assert data.loc[0, "capital_gain"] == 2174


def test_adult_class_balance(adult):
    assert int(adult.target.sum()) == 11208
    assert set(adult.target.unique()) == {0, 1}
    assert adult.target_names.tolist() == ["<=50K", ">50K"]
    # the test file's labels end with a period (">50K."): if it were not
    # stripped, every test row would be labelled 0
    train, test = adult.target.iloc[:30162], adult.target.iloc[30162:]
    assert len(test) == 15060
    assert int(train.sum()) == 7508
    assert int(test.sum()) == 3700


def test_no_label_with_a_trailing_period(adult, german):
    for bunch in (adult, german):
        assert not any(name.endswith(".") for name in bunch.target_names)
        assert bunch.frame.iloc[:, -1].isin([0, 1]).all()


def test_german_class_balance(german):
    assert int(german.target.sum()) == 700
    assert int((german.target == 0).sum()) == 300
    assert german.target_names.tolist() == ["bad", "good"]


def test_german_readable_values(german):
    data = german.data
    for column in _categorical_columns(data):
        assert not any(re.fullmatch(r"A\d+", c) for c in data[column].cat.categories)
        assert "?" not in set(data[column].unique()), column
    assert data["other_debtors_guarantors"].cat.categories.tolist() == [
        "none",
        "co-applicant",
        "guarantor",
    ]
    assert data["job"].cat.categories.tolist() == [
        "unemployed/ unskilled - non-resident",
        "unskilled - resident",
        "skilled employee/ official",
        "management/ self-employed/ highly qualified employee/ officer",
    ]
    # every documented code is a category, in code order, even the unused A47
    purpose = data["purpose"].cat.categories.tolist()
    assert len(purpose) == 11
    assert purpose[0] == "car (new)" and purpose[-1] == "others"
    assert "(vacation - does not exist?)" in purpose
    assert "unemployed/ unskilled - non-resident" in data["job"].cat.categories
    assert set(data["telephone"].cat.categories) == {"yes", "no"}
    assert set(data["foreign_worker"].cat.categories) == {"yes", "no"}
    # A12 is documented as "0 <= ... < 200 DM " (trailing space)
    assert "0 <= ... < 200 DM" in data["checking_account"].cat.categories
    # counts of the codes in german.data: A192 (phone) 404, A201 (foreign) 963,
    # A103 (guarantor) 52, A172 (unskilled - resident) 200, A11 274
    assert (data["telephone"] == "yes").sum() == 404
    assert (data["foreign_worker"] == "yes").sum() == 963
    assert (data["other_debtors_guarantors"] == "guarantor").sum() == 52
    assert (data["job"] == "unskilled - resident").sum() == 200
    assert (data["checking_account"] == "... < 0 DM").sum() == 274


def test_german_first_row_as_in_the_uci_file(german):
    row = german.data.iloc[0]
    assert row.to_dict() == GERMAN_FIRST_ROW
    assert german.target.iloc[0] == 1  # class 1 = good
    assert german.data.columns.tolist() == list(GERMAN_FIRST_ROW)


# --------------------------------------------------------------------- #
# The Bunch and the loader options
# --------------------------------------------------------------------- #
@pytest.mark.parametrize(
    ("name", "creators", "doi"),
    [
        ("adult", "Becker", "10.24432/C5XW20"),
        ("german", "Hofmann", "10.24432/C5NC77"),
    ],
)
def test_bunch_fields_and_descr(name, creators, doi, request):
    bunch = request.getfixturevalue(name)
    assert isinstance(bunch, Bunch)
    assert set(bunch) == {
        "data",
        "target",
        "frame",
        "feature_names",
        "target_names",
        "DESCR",
    }
    assert isinstance(bunch.data, pd.DataFrame)
    assert isinstance(bunch.target, pd.Series)
    assert isinstance(bunch.frame, pd.DataFrame)
    _assert_same(bunch.frame[bunch.feature_names], bunch.data)
    _assert_same(bunch.frame[bunch.target.name], bunch.target)
    assert isinstance(bunch.target_names, np.ndarray)
    assert len(bunch.target_names) == 2
    descr = bunch.DESCR
    assert "CC BY 4.0" in descr
    assert "creativecommons.org/licenses/by/4.0" in descr
    assert creators in descr
    assert doi in descr
    assert "Kelly" in descr and "Nottingham" in descr
    assert "UCI Machine Learning Repository" in descr


@LOADERS
def test_as_frame_false(loader):
    reference = loader()
    bunch = loader(as_frame=False)
    assert bunch.frame is None
    assert isinstance(bunch.data, np.ndarray) and bunch.data.dtype == object
    assert isinstance(bunch.target, np.ndarray)
    assert is_integer_dtype(bunch.target.dtype)
    assert bunch.data.shape == reference.data.shape
    assert bunch.feature_names == reference.feature_names
    np.testing.assert_array_equal(bunch.target, reference.target.to_numpy())
    np.testing.assert_array_equal(bunch.data, reference.data.astype(object).to_numpy())
    # plain labels and numbers, no categorical codes
    for j, column in enumerate(reference.feature_names):
        if isinstance(reference.data[column].dtype, pd.CategoricalDtype):
            assert all(isinstance(v, str) for v in bunch.data[:, j]), column
        else:
            np.testing.assert_array_equal(
                bunch.data[:, j].astype(np.int64), reference.data[column].to_numpy()
            )


@LOADERS
def test_return_X_y(loader):
    reference = loader()
    X, y = loader(return_X_y=True)
    _assert_same(X, reference.data)
    _assert_same(y, reference.target)
    X, y = loader(as_frame=False, return_X_y=True)
    assert isinstance(X, np.ndarray) and X.dtype == object
    assert isinstance(y, np.ndarray)
    np.testing.assert_array_equal(y, reference.target.to_numpy())
    assert X.shape == reference.data.shape


@LOADERS
def test_fresh_copies(loader):
    first = loader()
    expected_data = first.data.copy()
    expected_target = first.target.copy()
    number = next(c for c in first.feature_names if first.data[c].dtype == np.int64)
    label = _categorical_columns(first.data)[0]
    first.data[number] = -1
    first.data.loc[0, number] = -5
    first.data[label] = first.data[label].cat.add_categories(["mutated"])
    first.data.loc[:, label] = "mutated"
    first.target.iloc[:] = 7
    first.frame[number] = -2
    del first.frame[label]
    first.feature_names.append("mutated")
    first.target_names[0] = "mutated"
    assert (first.data[number] == -1).sum() == len(first.data) - 1

    second = loader()
    _assert_same(second.data, expected_data)
    _assert_same(second.target, expected_target)
    _assert_same(second.frame[second.feature_names], expected_data)
    assert "mutated" not in second.feature_names
    assert "mutated" not in second.target_names
    assert "mutated" not in second.data[label].cat.categories

    X, _ = loader(as_frame=False, return_X_y=True)
    X[:, :] = None
    X2, y2 = loader(as_frame=False, return_X_y=True)
    np.testing.assert_array_equal(X2, expected_data.astype(object).to_numpy())
    np.testing.assert_array_equal(y2, expected_target.to_numpy())


@LOADERS
def test_as_frame_false_arrays_are_writable(loader):
    bunch = loader(as_frame=False)
    assert bunch.data.flags.writeable
    bunch.data[0, 0] = None
    X, y = loader(as_frame=False, return_X_y=True)
    assert X.flags.writeable
    y[0] = 1 - y[0]  # a read-only view would raise here
    assert y.flags.writeable


@LOADERS
@pytest.mark.parametrize(
    "kwargs",
    [
        {"as_frame": "yes"},
        {"as_frame": None},
        {"as_frame": 1},
        {"return_X_y": "no"},
        {"return_X_y": None},
    ],
)
def test_bad_arguments_raise(loader, kwargs):
    with pytest.raises((ValueError, TypeError), match="must be an instance of"):
        loader(**kwargs)


@LOADERS
def test_positional_and_unknown_arguments_raise(loader):
    with pytest.raises(TypeError):
        loader(True)
    with pytest.raises(TypeError):
        loader(download=True)


# --------------------------------------------------------------------- #
# The package data are the UCI files, and the loaders use only them
# --------------------------------------------------------------------- #
def _data_dir():
    return resources.files("sklearn_cscf.datasets").joinpath("data")


@pytest.mark.parametrize("name", sorted(UCI_SHA256))
def test_packaged_files_are_the_unmodified_uci_files(name):
    packaged = _data_dir().joinpath(name + ".xz")
    with packaged.open("rb") as compressed:
        content = lzma.decompress(compressed.read())
    assert hashlib.sha256(content).hexdigest() == UCI_SHA256[name]


def test_data_readme_lists_the_hashes():
    readme = _data_dir().joinpath("README.md").read_text(encoding="utf-8")
    listed = dict(re.findall(r"^\| (\S+)\.xz \|.*\| ([0-9a-f]{64}) \|$", readme, re.M))
    assert listed == UCI_SHA256
    assert "CC BY 4.0" in readme


def test_german_codes_match_the_loaded_categories(german):
    """The first german.data line and the packaged codes give the first row."""
    data_dir = _data_dir()
    with data_dir.joinpath("german_codes.json.xz").open("rb") as stream:
        codes = json.loads(lzma.decompress(stream.read()))
    with data_dir.joinpath("german.data.xz").open("rb") as stream:
        lines = lzma.decompress(stream.read()).decode().splitlines()
    assert len(lines) == 1000
    assert (
        lines[0].split()
        == (
            "A11 6 A34 A43 1169 A65 A75 4 A93 A101 4 A121 67 "
            "A143 A152 2 A173 1 A192 A201 1"
        ).split()
    )
    assert codes["other_debtors"]["A103"] == "guarantor"
    assert codes["job"]["A172"].strip() == "unskilled - resident"
    # the numeric columns of every row are those of the file
    raw = np.array([line.split() for line in lines])
    for j, column in enumerate(GERMAN_COLUMNS):
        if column in GERMAN_NUMERIC:
            np.testing.assert_array_equal(
                german.data[column].to_numpy(), raw[:, j].astype(np.int64)
            )
    np.testing.assert_array_equal(german.target.to_numpy(), raw[:, 20] == "1")


_AUDIT_SCRIPT = textwrap.dedent(
    """
    import json, os, socket, sys

    opened, network = [], []

    def hook(event, args):
        if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            opened.append(os.fsdecode(args[0]))
        elif event.startswith("socket."):
            network.append(event)

    class NoNetwork(socket.socket):
        def __init__(self, *args, **kwargs):
            raise OSError("network access is not allowed")

    socket.socket = NoNetwork

    import sklearn_cscf
    from sklearn_cscf.datasets import load_adult, load_german_credit

    sys.addaudithook(hook)
    adult = load_adult()
    german = load_german_credit()
    print(json.dumps({
        "package": os.path.dirname(os.path.realpath(sklearn_cscf.__file__)),
        "opened": [os.path.realpath(p) for p in opened],
        "network": network,
        "adult": [list(adult.data.shape), int(adult.target.sum())],
        "german": [list(german.data.shape), int(german.target.sum())],
    }))
    """
)

_CODE_SUFFIXES = (".py", ".pyc", ".so", ".pyd", ".pth")
# kernel pseudo-filesystems (e.g. the CPU quota in /sys/fs/cgroup), not data
_SYSTEM_DIRS = ("/sys/", "/proc/", "/dev/")


def test_loaders_read_only_packaged_data_and_no_network(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", _AUDIT_SCRIPT],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["adult"] == [[45222, 14], 11208]
    assert report["german"] == [[1000, 20], 700]
    assert report["network"] == []

    package = report["package"]
    assert package == os.path.dirname(os.path.realpath(sklearn_cscf.__file__))
    opened = report["opened"]
    assert not [path for path in opened if "/shared/" in path]
    data_files = [
        path
        for path in opened
        if not path.endswith(_CODE_SUFFIXES)
        and not path.startswith(_SYSTEM_DIRS)
        and not os.path.isdir(path)
    ]
    outside = [
        path for path in data_files if os.path.commonpath([path, package]) != package
    ]
    assert outside == []
    packaged = os.path.join(package, "datasets", "data")
    assert {os.path.basename(p) for p in data_files if p.startswith(packaged)} == {
        name + ".xz" for name in UCI_SHA256
    }


def test_loading_leaves_no_file_open():
    # each packaged .xz file is read and closed (no ResourceWarning)
    import gc
    import warnings

    from sklearn_cscf.datasets import _uci

    _uci._german_frame.cache_clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        frame, target = _uci._german_frame()
        gc.collect()
    assert len(frame) == len(target) == 1000
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]

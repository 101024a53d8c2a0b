"""The column schema: encoding, the rows the model sees, the views callables get."""

import numpy as np
import pandas as pd
import pytest
from _line import SMALL

from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf._schema import FeatureSchema


@pytest.fixture
def mixed():
    return pd.DataFrame(
        {
            "text": pd.array(["a", "b", None], dtype="string"),
            "objects": pd.Series(["x", "y", "x"], dtype=object),
            "flag": [True, False, True],
            "level": pd.Categorical(
                ["lo", "hi", "lo"], categories=["lo", "mid", "hi"], ordered=True
            ),
            "count": np.array([1, 2, 3], dtype=np.int64),
            "amount": [0.5, 1.5, 2.5],
        }
    )


def test_model_rows_keep_the_dtypes_seen_in_fit(mixed):
    schema = FeatureSchema(mixed)
    rows = schema.to_model_input(schema.encode(mixed))
    assert list(rows.columns) == list(mixed.columns)
    for name in ["text", "objects", "flag", "level", "amount"]:
        assert rows[name].dtype == mixed[name].dtype, name
    # interpolated numbers stay float even for an integer column
    assert rows["count"].dtype == np.float64
    expected = mixed.astype({"count": float})
    pd.testing.assert_frame_equal(rows, expected, check_dtype=False)
    assert pd.isna(rows["text"][2])


def test_encoding_round_trip_with_a_missing_category(mixed):
    schema = FeatureSchema(mixed)
    encoded = schema.encode(mixed)
    j = schema.index["text"]
    assert encoded[2, j] == -1  # missing
    assert schema.categories[j] == ["a", "b"]
    assert schema.decode_value(j, encoded[0, j]) == "a"
    assert np.isnan(schema.decode_value(j, encoded[2, j]))
    level = schema.index["level"]
    assert schema.categories[level] == ["lo", "mid", "hi"]
    assert schema.observed[level] == ["lo", "hi"]
    assert bool(schema.ordered[level])


def test_unknown_category_in_encode_names_the_column(mixed):
    schema = FeatureSchema(mixed)
    other = mixed.assign(objects=["x", "zzz", "y"])
    with pytest.raises(ValueError, match="'zzz'.*'objects'"):
        schema.encode(other)


def test_views_give_read_only_raw_values(mixed):
    schema = FeatureSchema(mixed)
    states = schema.encode(mixed)
    view = schema.view(states)
    amount = view["amount"]
    with pytest.raises(ValueError):
        amount[0] = 9.0
    objects = view["objects"]
    assert objects.dtype.kind == "U"  # string categories: fast comparisons
    assert (objects == "x").tolist() == [True, False, True]
    text = view["text"]  # a missing value: object labels with NaN
    assert text.dtype == object
    assert text[0] == "a" and np.isnan(text[2])
    assert view["flag"].tolist() == [True, False, True]
    with pytest.raises(KeyError, match="not a feature"):
        view["nope"]
    assert set(view) == set(mixed.columns) and len(view) == mixed.shape[1]


def test_to_frame_restores_whole_numbers_to_their_integer_dtype(mixed):
    schema = FeatureSchema(mixed)
    states = schema.encode(mixed)
    frame = schema.to_frame(states)
    assert frame["count"].dtype == np.int64
    states[0, schema.index["count"]] = 1.5
    assert schema.to_frame(states)["count"].dtype == np.float64
    missing = schema.to_frame(schema.missing_states(2))
    assert missing.isna().all().all()


def test_numpy_integer_arrays_reach_the_model_as_floats():
    X = np.array([[1, 2], [3, 4]])
    schema = FeatureSchema(X)
    states = schema.encode(X)
    states[0, 0] = 1.75
    rows = schema.to_model_input(states)
    assert rows.dtype == np.float64 and rows[0, 0] == 1.75


def test_complex_and_empty_categorical_columns_are_rejected():
    with pytest.raises(ValueError, match="Complex"):
        FeatureSchema(np.array([[1 + 1j, 2]]))
    with pytest.raises(ValueError, match="no category"):
        FeatureSchema(pd.DataFrame({"c": pd.Series([None, None], dtype=object)}))


def test_to_frame_keeps_the_columns_dtypes_and_index(mixed):
    schema = FeatureSchema(mixed)
    index = pd.Index(["p", "q", "r"], name="person")
    frame = schema.to_frame(schema.encode(mixed), index=index)
    assert frame.index.equals(index)
    pd.testing.assert_frame_equal(frame, mixed.set_axis(index))


def test_decoded_values_of_whole_number_columns_are_integers(mixed):
    schema = FeatureSchema(mixed)
    count, amount = schema.index["count"], schema.index["amount"]
    assert schema.is_integer[count] and not schema.is_integer[amount]
    assert schema.decode_value(count, 41.0) == 41
    assert isinstance(schema.decode_value(count, 41.0), int)
    assert schema.decode_value(count, 41.5) == 41.5
    assert isinstance(schema.decode_value(amount, 2.0), float)


# ---------------------------------------------------------------------- #
# pandas nullable dtypes (issue 16)
# ---------------------------------------------------------------------- #
def nullable_frame(n, missing, seed=0):
    """Int64, Float64, boolean and string columns; ``missing`` puts <NA> in
    two rows of each."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "age": pd.array(rng.integers(18, 70, n), dtype="Int64"),
            "income": pd.array(rng.uniform(0, 100, n), dtype="Float64"),
            "owner": pd.array(rng.random(n) < 0.5, dtype="boolean"),
            "job": pd.array(rng.choice(["clerk", "cook", "nurse"], n), dtype="string"),
        }
    )
    if missing:
        for column in X.columns:
            X.loc[[3, 7], column] = pd.NA
    return X


@pytest.mark.parametrize("missing", [False, True], ids=["full", "with <NA>"])
def test_nullable_dtypes_work_in_fit_explain_states_transform_and_replay(missing):
    from sklearn_cscf import SequentialCounterfactualExplainer, replay

    X = nullable_frame(300, missing)
    y = (X["income"].astype(float).fillna(0) > 50).astype(int)
    explainer = SequentialCounterfactualExplainer(
        population_size=30, n_generations=5, random_state=0
    ).fit(X, y)
    rows = X.iloc[:12][explainer.estimator_.predict(X.iloc[:12]) == 0]
    frame, states = explainer.explain(rows, return_states=True)
    assert set(frame["status"]) <= {"ok", "no_counterfactual"}
    assert (frame["status"] == "ok").any()
    for name in X.columns:
        assert states[name].dtype == X[name].dtype, name
    transformed = explainer.transform(rows)
    assert transformed.dtypes.tolist() == X.dtypes.tolist()
    pd.testing.assert_index_equal(transformed.index, rows.index)
    # the states of step 0 are the rows themselves, <NA> included
    first = states[states["step"] == 0].drop_duplicates("instance")
    start = rows.loc[first["instance"].tolist()].reset_index(drop=True)
    pd.testing.assert_frame_equal(first[list(X.columns)].reset_index(drop=True), start)
    checked = replay(explainer, rows, frame, states)
    assert checked["passed"].all(), checked.loc[~checked["passed"], "problems"]


def test_to_frame_gives_nullable_columns_back_their_dtype():
    X = nullable_frame(10, missing=True)
    schema = FeatureSchema(X)
    encoded = schema.encode(X)
    pd.testing.assert_frame_equal(schema.to_frame(encoded), X)
    encoded[0, 0] = 30.5  # a fraction in an Int64 column reads as Float64
    assert schema.to_frame(encoded)["age"].dtype == "Float64"


def test_a_column_whose_span_overflows_is_refused_naming_it(logistic):
    X = pd.DataFrame({"income": [-1.7e308, 0.0, 1.7e308], "debt": [1.0, 2.0, 3.0]})
    explainer = SequentialCounterfactualExplainer(logistic, **SMALL)
    with pytest.raises(ValueError, match="Column 'income' spans"):
        explainer.fit(X)

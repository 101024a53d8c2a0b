"""Row identity (sklearn_cscf._engine._hashing): state hashes, first rows."""

import numpy as np
import pytest

from sklearn_cscf._engine._hashing import SORT_BELOW, first_sources, state_hashes


def test_state_hashes_equal_exactly_for_equal_states():
    rng = np.random.default_rng(0)
    states = rng.integers(0, 3, size=(2000, 5)).astype(float)
    hashes = state_hashes(states)
    _, by_state = np.unique(states, axis=0, return_inverse=True)
    _, by_hash = np.unique(hashes, return_inverse=True)
    # the same partition: equal states hash alike, different ones differently
    assert len(set(zip(by_state.ravel(), by_hash))) == len(set(by_state.ravel()))
    assert len(set(by_hash)) == len(set(by_state.ravel()))
    # -0.0 is 0.0, every NaN is the same missing value, columns are ordered
    special = np.array([[0.0, np.nan], [-0.0, -np.nan], [np.nan, 0.0]])
    h = state_hashes(special)
    assert h[0] == h[1] != h[2]


@pytest.mark.parametrize("n", [0, 1, 7, SORT_BELOW - 1, SORT_BELOW, 3 * SORT_BELOW])
def test_first_sources_point_each_value_to_its_first_row(n):
    # small inputs are sorted, large ones go through a hash table: both give
    # each value's first row
    values = np.random.default_rng(n).integers(0, max(n // 3, 1), size=n)
    values = values.astype(np.uint64)
    source = first_sources(values)
    expected = [values.tolist().index(v) for v in values.tolist()]
    assert source.tolist() == expected

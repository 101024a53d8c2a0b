"""The memo of the answers a block's instances already got
(sklearn_cscf._engine._memo)."""

import numpy as np

from sklearn_cscf._engine._memo import AnswerMemo, Answers


def test_memo_remembers_and_stays_bounded():
    memo = AnswerMemo(2, width=2, limit=5)
    hashes = np.array([30, 10, 20], dtype=np.uint64)
    zero, one = np.zeros(3, dtype=np.intp), np.ones(3, dtype=np.intp)
    answers = Answers(
        np.array([1, 0, 1]), np.array([[0.2, 0.8], [0.9, 0.1], [0.4, 0.6]])
    )
    memo.insert(hashes, zero, answers)
    memo.insert(hashes[:2], one[:2], answers.take([2, 2]))
    slots = memo.lookup(np.array([20, 99, 30, 10], dtype=np.uint64), zero[[0] * 4])
    assert (slots >= 0).tolist() == [True, False, True, True]
    got = memo.answers(slots[[0, 2, 3]])
    assert got.decision.tolist() == [1, 1, 0]
    np.testing.assert_array_equal(got.output[:, 1], [0.6, 0.8, 0.1])
    # the same state of another instance is its own
    assert memo.answers(memo.lookup(hashes[:1], one[:1])).output[0, 1] == 0.6
    assert (memo.lookup(hashes[2:], one[:1]) < 0).all()
    more = np.array([1, 2, 3], dtype=np.uint64)
    memo.insert(more, zero, answers)  # 6 > 5: instance 0 starts afresh
    assert memo.counts.tolist() == [3, 2]
    assert (memo.lookup(hashes, zero) < 0).all()
    assert (memo.lookup(more, zero) >= 0).all()
    assert (memo.lookup(hashes[:2], one[:2]) >= 0).all()  # instance 1 keeps its

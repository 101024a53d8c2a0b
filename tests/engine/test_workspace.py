"""The search's work arrays (issue 18): reused between generations, never
handed out where they could be overwritten; the answer memo's in-place merge;
the opt-in Dask worker configuration."""

import os

import dask
import distributed
import numpy as np
import pytest
from _cluster import loopback_cluster

from sklearn_cscf import (
    SequentialCounterfactualExplainer,
    dask_worker_environment,
)
from sklearn_cscf._engine._evaluator import Evaluator
from sklearn_cscf._engine._hashing import state_hashes
from sklearn_cscf._engine._memo import AnswerMemo, Answers
from sklearn_cscf._engine._workspace import Workspace
from sklearn_cscf._rows import PUT_ROWS_FROM, put_rows, take_rows

SMALL = {"population_size": 30, "n_generations": 6, "random_state": 0}


def test_workspace_reuses_a_buffer_for_smaller_requests():
    work = Workspace()
    a = work.empty("x", (4, 3))
    a[:] = 1.0
    b = work.full("x", (2, 3), 7.0)
    assert np.shares_memory(a, b) and b.flags.c_contiguous
    assert (a[:2] == 7.0).all()  # the same memory: a is no longer valid
    c = work.empty("x", (5, 3))  # larger: a new buffer
    assert not np.shares_memory(a, c)
    assert work.empty("y", 6, np.intp).dtype == np.intp
    rows = work.take("rows", np.arange(12.0).reshape(6, 2), np.array([4, 0]))
    assert rows.tolist() == [[8.0, 9.0], [0.0, 1.0]]
    assert work.arange(4).tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        work.arange(4)[0] = 9  # shared: read-only


def test_hashes_in_a_workspace_equal_fresh_ones():
    rng = np.random.default_rng(0)
    states = rng.integers(0, 4, size=(500, 6)).astype(float)
    states[rng.random(states.shape) < 0.1] = np.nan
    states[rng.random(states.shape) < 0.1] = -0.0
    work = Workspace()
    np.testing.assert_array_equal(state_hashes(states, work), state_hashes(states))
    # again, smaller, in the same buffers
    np.testing.assert_array_equal(
        state_hashes(states[:50], work), state_hashes(states[:50])
    )


def test_memo_answers_like_a_dict_per_instance():
    rng = np.random.default_rng(1)
    # few distinct hashes, many of them in the same slots: long probes
    pool = rng.integers(0, 2**63, 700, dtype=np.uint64) & np.uint64(2**64 - 4096)
    memo, reference = AnswerMemo(3, width=2, limit=500), {}
    for _ in range(150):
        asked = rng.choice(pool, 40)
        who = np.sort(rng.integers(0, 3, asked.size))
        slots = memo.lookup(asked, who)
        hit = slots >= 0
        pairs = list(zip(who.tolist(), asked.tolist()))
        assert hit.tolist() == [p in reference for p in pairs]
        remembered = memo.answers(slots[hit])
        if hit.any():
            expected = [reference[p] for p, h in zip(pairs, hit) if h]
            assert remembered.decision.tolist() == [e[0] for e in expected]
            assert remembered.output[:, 0].tolist() == [e[1] for e in expected]
        new = sorted({p for p, h in zip(pairs, hit) if not h})
        members = np.array([m for m, _ in new], dtype=np.intp)
        hashes = np.array([h for _, h in new], dtype=np.uint64)
        decision, value = rng.integers(0, 2, len(new)), rng.random(len(new))
        adding = np.bincount(members, minlength=3)
        for m in np.flatnonzero((memo.counts + adding > memo.limit) & (adding > 0)):
            # that instance starts afresh
            reference = {p: a for p, a in reference.items() if p[0] != m}
        memo.insert(
            hashes, members, Answers(decision, np.column_stack([value, 1 - value]))
        )
        reference.update(zip(new, zip(decision.tolist(), value.tolist())))
        assert len(memo) == len(reference)
        counts = np.bincount([m for m, _ in reference], minlength=3)
        assert memo.counts.tolist() == counts.tolist()


def test_memo_grown_past_a_run_over_its_end_finds_every_answer():
    # homes in the last slots of the table: runs of probes wrap around its
    # end, before and after it grows (where pairs are placed by home, the
    # ones pushed past the end by probing from its start)
    j = np.arange(600, dtype=np.uint64)
    hashes = (np.uint64(2047) - j % np.uint64(3)) + (j << np.uint64(20))
    members = np.zeros(600, dtype=np.intp)
    decision = np.arange(600) % 2
    output = np.column_stack([j / 600.0, 1 - j / 600.0])
    memo = AnswerMemo(1, width=2, limit=10_000)
    for part in (slice(0, 400), slice(400, 600)):  # the second one grows it
        memo.insert(hashes[part], members[part], Answers(decision, output).take(part))
    assert memo.capacity == 2048
    slots = memo.lookup(hashes, members)
    assert (slots >= 0).all() and np.unique(slots).size == 600
    found = memo.answers(slots)
    np.testing.assert_array_equal(found.decision, decision)
    np.testing.assert_array_equal(found.output, output)
    assert memo.lookup(hashes + np.uint64(1 << 12), members).max() == -1


def explained_block(explainer, rows, monkeypatch):
    """The evaluator of the block that explained ``rows``."""
    evaluate, blocks = Evaluator.evaluate, []

    def capture(self, members, keys, known=None):
        blocks.append(self)
        return evaluate(self, members, keys, known)

    monkeypatch.setattr(Evaluator, "evaluate", capture)
    explainer.explain(rows)
    monkeypatch.undo()
    return blocks[0]


def test_simulate_in_a_workspace_matches_fresh_arrays(credit_problem, monkeypatch):
    explainer, rejected = credit_problem
    block = explained_block(explainer, rejected.iloc[:3], monkeypatch)
    rng = np.random.default_rng(0)
    keys = rng.random((300, 2 * block.problem.n_actions))
    owner = np.repeat(np.arange(len(block)), 100)
    work = Workspace()
    block.simulate(owner[:40], keys[:40], work=work)  # sizes the buffers
    fresh = block.simulate(owner, keys)
    reused = block.simulate(owner, keys, work=work)
    for name in ("order", "lengths", "final", "effort", "discount", "violations"):
        np.testing.assert_array_equal(getattr(reused, name), getattr(fresh, name))
    np.testing.assert_array_equal(reused.new_values, fresh.new_values)
    np.testing.assert_array_equal(reused.sequence_cost, fresh.sequence_cost)
    np.testing.assert_array_equal(reused.sequence_keys(), fresh.sequence_keys())
    assert fresh.work is None and reused.work is work
    judged, again = block.judge(owner, keys), block.judge(owner, keys, work)
    np.testing.assert_array_equal(judged.F, again.F)
    np.testing.assert_array_equal(judged.gap, again.gap)
    np.testing.assert_array_equal(judged.sequence_key, again.sequence_key)


def test_a_large_price_is_simulated_in_chunks_and_costs_the_same(
    credit_problem, monkeypatch
):
    # refinement's large calls are simulated a chunk of candidates at a time
    # (bounded work arrays); the model is asked as about one chunk
    explainer, rejected = credit_problem
    keys = np.random.default_rng(1).random((500, 2 * len(explainer.actions_)))
    owner = np.repeat(np.arange(3), [200, 120, 180])
    found = []
    for chunk in (None, 64):
        block = explained_block(explainer, rejected.iloc[:3], monkeypatch)
        simulated, sent = [], []
        simulate, answer = Evaluator.simulate, block.model.answer

        def recording(self, owner, keys, record=False, **kwargs):
            simulated.append(keys.shape[0])
            return simulate(self, owner, keys, record, **kwargs)

        monkeypatch.setattr(Evaluator, "simulate", recording)
        monkeypatch.setattr(
            block.model, "answer", lambda s: sent.append(len(s)) or answer(s)
        )
        if chunk is not None:
            monkeypatch.setattr(
                "sklearn_cscf._engine._evaluator.price_chunk", lambda *_: chunk
            )
        asked = block.asked.tolist()
        cost = block.price(owner, keys)
        now = [now - before for now, before in zip(block.asked.tolist(), asked)]
        found.append((cost, simulated, sent, now))
        monkeypatch.undo()
    (whole, once, calls, asked), (chunked, pieces, calls_chunked, asked_chunked) = found
    assert np.isfinite(whole).any() and not np.isfinite(whole).all()
    np.testing.assert_array_equal(chunked, whole)
    assert once == [500] and pieces == [64] * 7 + [52]
    assert calls_chunked == calls and sum(calls) > 0
    assert asked_chunked == asked == [200, 120, 180]


def test_states_hashed_by_the_columns_actions_change_hash_as_whole_states(
    credit_problem, monkeypatch
):
    explainer, rejected = credit_problem
    block = explained_block(explainer, rejected.iloc[:3], monkeypatch)
    hasher = block.hasher
    # some columns no action changes: their share comes from the instance
    assert 0 < hasher.columns.size < block.x0.shape[1]
    keys = np.random.default_rng(2).random((300, 2 * block.problem.n_actions))
    owner = np.repeat(np.arange(3), 100)
    paths = block.simulate(owner, keys, record=True)
    for states, members in (
        (paths.final, owner),
        (
            paths.states.reshape(-1, block.x0.shape[1]),
            np.repeat(owner, paths.states.shape[1]),
        ),
    ):
        np.testing.assert_array_equal(hasher(states, members), state_hashes(states))
    # a state that left a column's instance value would hash apart: the
    # hasher is only for states reached by the actions
    moved = paths.final.copy()
    fixed = np.setdiff1d(np.arange(block.x0.shape[1]), hasher.columns)[0]
    moved[:, fixed] += 1.0
    assert (hasher(moved, owner) != state_hashes(moved)).all()


@pytest.fixture(scope="module")
def credit_problem():
    from sklearn.compose import make_column_selector, make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from sklearn_cscf.datasets import (
        credit_actions,
        credit_feature_graph,
        make_credit_applicants,
    )

    applicants = make_credit_applicants(600, random_state=0)
    X, y = applicants.data, applicants.target
    model = make_pipeline(
        make_column_transformer(
            (
                OneHotEncoder(handle_unknown="ignore"),
                make_column_selector(dtype_include="category"),
            ),
            remainder=StandardScaler(),
        ),
        LogisticRegression(max_iter=1000),
    ).fit(X, y)
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=credit_actions(),
        feature_graph=credit_feature_graph(),
        n_jobs=1,
        **SMALL,
    ).fit(X)
    return explainer, X[model.predict(X) == 0]


def test_generations_reuse_the_block_work_arrays(credit_problem, monkeypatch):
    explainer, rejected = credit_problem
    evaluate = Evaluator.evaluate
    seen = []

    def recording(self, owner, keys, known=None):
        results = evaluate(self, owner, keys, known)
        buffers = dict(self.work._buffers)
        seen.append((buffers, keys, results))
        return results

    monkeypatch.setattr(Evaluator, "evaluate", recording)
    explainer.explain(rejected.iloc[:5])
    assert len(seen) == SMALL["n_generations"]
    first = seen[0][0]
    for buffers, _, results in seen:
        # the arrays sized by the number of candidates are allocated once
        for name in ("state", "F", "hashes", "decision", "step_cost"):
            assert buffers[name] is first[name], name
        # what the search keeps is its own: no view of the work arrays
        for array in (results.F, results.gap, results.sequence_key):
            assert not any(np.shares_memory(array, b) for b in buffers.values())
    # the offspring asked for are written into the search's own work array,
    # allocated anew only when a generation asks for more than any before
    # (the first generation's genotypes become its population)
    asked = [keys for _, keys, _ in seen]
    assert not np.shares_memory(asked[0], asked[1])
    for i in range(2, len(asked)):
        larger = asked[i].size > max(keys.size for keys in asked[1:i])
        assert np.shares_memory(asked[i - 1], asked[i]) != larger


# ---------------------------------------------------------------------- #
# the opt-in Dask worker configuration
# ---------------------------------------------------------------------- #
def test_dask_worker_environment_adds_the_threshold_and_changes_nothing():
    before_environ = dict(os.environ)
    current = dask.config.get("distributed.nanny.pre-spawn-environ")
    with dask.config.set(
        {"distributed.nanny.pre-spawn-environ": {**current, "MY_SETTING": "1"}}
    ):
        config = dask_worker_environment(mmap_threshold=2**20)
        # only returned: the configuration in force is unchanged
        assert "MALLOC_MMAP_THRESHOLD_" not in dask.config.get(
            "distributed.nanny.pre-spawn-environ"
        )
    environ = config["distributed.nanny.pre-spawn-environ"]
    assert environ["MALLOC_MMAP_THRESHOLD_"] == 2**20
    assert environ["MY_SETTING"] == "1"  # the user's own setting is kept
    assert environ["MALLOC_TRIM_THRESHOLD_"] == current["MALLOC_TRIM_THRESHOLD_"]
    assert (
        dask_worker_environment()["distributed.nanny.pre-spawn-environ"][
            "MALLOC_MMAP_THRESHOLD_"
        ]
        == 32 * 2**20
    )
    assert dict(os.environ) == before_environ


@pytest.mark.parametrize("bad", [0, -5, 2**26, 1.5, "32MB"])
def test_dask_worker_environment_rejects_bad_thresholds(bad):
    with pytest.raises((ValueError, TypeError), match="mmap_threshold"):
        dask_worker_environment(mmap_threshold=bad)


def test_workers_started_with_it_have_the_setting():
    saved = dict(os.environ)
    try:
        with (
            dask.config.set(dask_worker_environment(mmap_threshold=4 * 2**20)),
            loopback_cluster(1) as cluster,
            distributed.Client(cluster) as client,
        ):
            values = client.run(lambda: os.environ.get("MALLOC_MMAP_THRESHOLD_"))
    finally:
        # Dask's nanny copies the pre-spawn variables into this process's
        # os.environ (glibc reads them only at start-up, so this process's
        # allocator is unchanged); later clusters of the test run must not
        # inherit them
        os.environ.clear()
        os.environ.update(saved)
    assert list(values.values()) == [str(4 * 2**20)]


@pytest.mark.parametrize("flag", [True])
def test_dask_worker_environment_refuses_a_boolean(flag):
    # True is the int 1 to Python: it would set a 1-byte threshold
    with pytest.raises(TypeError, match="number of bytes.*leave it out"):
        dask_worker_environment(flag)


def test_a_genotype_encoding_a_known_sequence_is_not_evaluated_again(
    credit_problem, monkeypatch
):
    explainer, rejected = credit_problem
    block = explained_block(explainer, rejected.iloc[:2], monkeypatch)
    n_actions = block.problem.n_actions
    rng = np.random.default_rng(3)
    population = rng.random((80, 2 * n_actions))
    known_owner = np.repeat([0, 1], 40)
    known = known_owner, population, block.evaluate(known_owner, population)
    # offspring: copies of known genotypes with other keys for the actions
    # left out and other action keys in the same order, copies of each
    # other, and new ones
    asked = []
    for keys in (population[:40], population[40:]):
        copies = keys[:10].copy()
        left_out = copies[:, :n_actions] > 0.5
        copies[:, :n_actions] = np.where(
            left_out, 0.5 + rng.random(left_out.shape) / 2, copies[:, :n_actions] / 2
        )
        copies[:, n_actions:][np.c_[left_out]] = rng.random(left_out.sum())
        fresh = rng.random((10, 2 * n_actions))
        asked.append(np.vstack([copies, fresh, fresh[:5]]))
    asked = np.vstack(asked)
    owner = np.repeat([0, 1], 25)
    simulated = []
    simulate = Evaluator.simulate

    def counting(self, owner, keys, record=False, **kwargs):
        simulated.append(keys.shape[0])
        return simulate(self, owner, keys, record, **kwargs)

    monkeypatch.setattr(Evaluator, "simulate", counting)
    asked_before = block.asked[:2].tolist()
    with_known = block.evaluate(owner, asked, known)
    # only the 2 x 10 new genotypes were simulated, every one counts as asked
    assert simulated == [20]
    assert [u - a for u, a in zip(block.asked.tolist(), asked_before)] == [25, 25]
    # ... and each evaluation is the one a full evaluation gives
    alone = block.evaluate(owner, asked)
    assert simulated[-1] == 2 * 25 - 2 * 5  # repeats within a batch: once
    np.testing.assert_array_equal(with_known.F, alone.F)
    np.testing.assert_array_equal(with_known.gap, alone.gap)
    np.testing.assert_array_equal(with_known.sequence_key, alone.sequence_key)
    np.testing.assert_array_equal(with_known.plan_key, alone.plan_key)
    # a known genotype of the other instance is no help: the same keys asked
    # for instance 1 instead of 0 are evaluated afresh
    simulated.clear()
    block.evaluate(np.repeat([1], 10), population[:10], known)
    assert simulated == [10]


# ---------------------------------------------------------------------- #
# rows taken and put whole
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize("shape", [(50,), (50, 1), (50, 2), (50, 14), (50, 3, 4)])
@pytest.mark.parametrize("dtype", [float, np.int32, np.uint64, bool])
def test_take_rows_is_numpy_indexing(shape, dtype):
    rng = np.random.default_rng(0)
    array = (rng.random(shape) * 100).astype(dtype)
    for index in (
        rng.integers(0, 50, 80),
        rng.random(50) < 0.4,
        np.zeros(0, dtype=np.intp),
        slice(3, 40, 2),
    ):
        taken = take_rows(array, index)
        np.testing.assert_array_equal(taken, array[index])
        assert taken.dtype == array.dtype
    # a copy, not a view
    taken = take_rows(array, np.arange(5))
    assert not np.shares_memory(taken, array)


@pytest.mark.parametrize("n", [3, PUT_ROWS_FROM, 3 * PUT_ROWS_FROM])
@pytest.mark.parametrize("width", [1, 2, 14])
def test_put_rows_is_numpy_indexing(n, width):
    rng = np.random.default_rng(n)
    values = rng.random((n, width))
    values[0, 0], values[-1, -1] = -0.0, np.nan  # bits kept as numpy keeps them
    index = rng.permutation(4 * n)[:n]
    for array in (
        np.zeros((4 * n, width)),
        np.zeros((4 * n, 2 * width))[:, ::2],  # not contiguous: numpy's own path
    ):
        expected = array.copy()
        expected[index] = values
        put_rows(array, index, values)
        np.testing.assert_array_equal(
            np.ascontiguousarray(array).view(np.uint64), expected.view(np.uint64)
        )
    # values of another dtype are converted, as numpy's assignment does
    array = np.zeros((4 * n, width))
    put_rows(array, index, np.ones((n, width), dtype=np.int32))
    assert array.dtype == float and array[index].sum() == n * width

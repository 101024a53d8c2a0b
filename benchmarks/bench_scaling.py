"""Scaling over cores: n_jobs 1, 2 and all, and the Dask backend.

The main job's Adult model and N rejected test rows (default 20) at the
paper's budget, explained with ``n_jobs=1``, ``n_jobs=2``, ``n_jobs=-1`` (all
cores; loky worker processes) and with joblib's Dask backend on a
``distributed.LocalCluster`` of one single-threaded worker process per core
on loopback, started with Dask's default worker environment (``dask``) and
with :func:`sklearn_cscf.dask_worker_environment` (``dask, worker env``).
``1 job, 2 blocks`` runs, on one core, the same two blocks of
half the rows that ``n_jobs=2`` gives its two workers: a block of fewer rows
asks the model more often per row, so the speed-up of the second core alone
is ``n_jobs=2`` against that. Each setting runs twice: the first run
includes starting the workers and sending them the model (cold); the second
reuses them (warm).
Prints wall-clock seconds, rows per second and the speed-up over
``n_jobs=1``, and checks that every setting returns the same frame. Also the
CPU seconds of the warm run summed over the whole process tree (this process
with Dask's scheduler and nannies, and every worker process; needs
``psutil``): on a machine that other work shares, wall-clock shares swing
with their load, while the CPU each setting spends on the same rows does
not, and on an otherwise idle machine with every core busy its throughput
goes as the inverse of that CPU.

Targets: ``n_jobs=2`` at least 1.8 x ``n_jobs=1`` on 20 rows (issue 7); the
Dask backend with its default worker environment at least 90 % of loky's
throughput on the same cores (issue 18).

    python benchmarks/bench_scaling.py [--n-instances 20] [--no-dask]
        [--settings n_jobs=-1 dask]

**A scaling model** (``--simulate``, issue 25): how many workers would scale,
from runs on the cores at hand. For each number of workers W (and one
worker), ``--rows-per-worker`` (16) rejected rows per worker are explained
with the explainer's default settings, in this process: the driver forms the
blocks it would give W workers, and they run one after the other while the
CPU seconds (``time.thread_time``, which other work on the machine hardly
changes) of each block, each of its generations and each step of the parent
(before the blocks: checking, encoding, the first model pass; each block's
piece of the output; after: assembling the frame) are recorded with each
row's generations. The makespan is then simulated: joblib's dispatch of the
blocks to W workers (``batch_size="auto"``, ``pre_dispatch="2*n_jobs"``: a
free worker takes the next block in submission order) and the parent making
the pieces as the results arrive. Printed: the speed-up over the one-worker
run (rows per second, as issue 25's 16-core table, shown beside it), the
serial share and its Amdahl bound, and other schedules rebuilt from the same
rows by a row model (a block costs a fixed part, a part per generation of
its longest row, and its rows' own CPU): consecutive and smaller blocks,
blocks balanced by a guess of each row's cost, none imbalanced at all.
``--contention`` slows every block when more than one runs (not measurable
on two cores: assumed); "implied" is the slow-down that makes the simulation
match the measured table. ``--save`` keeps the recording; ``--load`` reruns
the simulation from saved recordings (``benchmarks/results/scaling_*.json``).
Re-record after a change to the engine: its inputs come from the run.

    python benchmarks/bench_scaling.py --simulate 2 4 8 16 --also 16:512 \
        --save scaling.json               # ~6 CPU minutes
    python benchmarks/bench_scaling.py --load scaling.json [--contention 1.7]
"""

import argparse
import os
import platform
import time

import numpy as np
import pandas as pd
from joblib import parallel_config
from threadpoolctl import threadpool_limits

import sklearn_cscf
from sklearn_cscf import SequentialCounterfactualExplainer
from sklearn_cscf._demo import SCENARIOS, pick_rejected, train

TARGET_SPEEDUP_2 = 1.8
TARGET_DASK = 0.9  # Dask throughput at least this share of loky's
SETTINGS = {  # name: (n_jobs, backend)
    "n_jobs=1": (1, None),
    "1 job, 2 blocks": (1, "halves"),
    "n_jobs=2": (2, None),
    "n_jobs=-1": (-1, None),
    "dask": (-1, "dask"),
    "dask, worker env": (-1, "dask-env"),
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-instances", type=int, default=20)
    parser.add_argument(
        "--population-size", type=int, default=None, help="default: 500"
    )
    parser.add_argument(
        "--generations",
        type=int,
        default=None,
        help="default: 150; with --simulate, the explainer's default ('auto')",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument(
        "--settings",
        nargs="+",
        choices=list(SETTINGS),
        default=list(SETTINGS),
        help="the settings to run (default: all)",
    )
    simulate = parser.add_argument_group("scaling model (--simulate)")
    simulate.add_argument(
        "--simulate",
        nargs="+",
        type=int,
        metavar="WORKERS",
        help="record runs for these numbers of workers and simulate them",
    )
    simulate.add_argument(
        "--rows-per-worker",
        type=int,
        default=16,
        help="rows per worker (the one-worker run's rows; default 16)",
    )
    simulate.add_argument(
        "--rows", type=int, help="the same number of rows for every run instead"
    )
    simulate.add_argument(
        "--also",
        nargs="*",
        default=[],
        metavar="WORKERS:ROWS[:BATCH]",
        help="more runs, e.g. 16:512, or 16:64:4 (blocks of 4 rows)",
    )
    simulate.add_argument("--batch-size", type=int, default=64)
    simulate.add_argument(
        "--contention",
        type=float,
        default=1.0,
        help="how much slower a block runs when several run at once (assumed)",
    )
    simulate.add_argument("--save", help="save the recorded runs (JSON)")
    simulate.add_argument(
        "--load", nargs="+", help="simulate saved runs (JSON), recording none"
    )
    return parser.parse_args(argv)


def tree_cpu():
    """CPU seconds (user + system) of this process and all its descendants."""
    try:
        import psutil
    except ImportError:
        return float("nan")
    me = psutil.Process()
    total = 0.0
    for process in [me, *me.children(recursive=True)]:
        try:
            times = process.cpu_times()
        except psutil.Error:  # ended meanwhile
            continue
        total += times.user + times.system
    return total


def local_cluster(workers):
    """A Dask ``LocalCluster`` of ``workers`` single-threaded worker
    processes on loopback (Dask's environment as configured at the call)."""
    import distributed

    return distributed.LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    )


def timed(explainer, rows):
    """Wall-clock seconds, CPU seconds of the process tree, and the frame."""
    cpu = tree_cpu()
    start = time.perf_counter()
    frame = explainer.explain(rows)
    return time.perf_counter() - start, tree_cpu() - cpu, frame


def main(argv=None):
    args = parse_args(argv)
    if args.simulate or args.load:
        return simulate_main(args)
    if args.population_size is None:
        args.population_size = 500
    if args.generations is None:
        args.generations = 150
    scenario = SCENARIOS["adult"]
    with threadpool_limits(limits=1):
        model, (X_train, X_test, _, _) = train(scenario.load(), args.seed)
        predicted = model.predict(X_test)
    rows = pick_rejected(X_test, predicted, args.n_instances, args.seed)
    cores = os.cpu_count()
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=scenario.actions(),
        feature_graph=scenario.graph(),
        population_size=args.population_size,
        n_generations=args.generations,
        random_state=args.seed,
    ).fit(X_train)
    print(
        f"sklearn-cscf {sklearn_cscf.__version__}, Python "
        f"{platform.python_version()}, {platform.machine()}, {cores} CPU(s); Adult, "
        f"the main job's model, {len(rows)} rejected rows, population "
        f"{args.population_size}, {args.generations} generations, batch_size "
        f"{explainer.batch_size}"
    )
    # n_jobs=2 splits the rows into two blocks of half the size, and a
    # smaller block asks the model more often per row: "n_jobs=1, 2 blocks"
    # runs those same two blocks one after the other, so that the speed-up of
    # the second core alone is n_jobs=2 against it
    half = -(-len(rows) // 2)
    settings = [
        (name, *SETTINGS[name])
        for name in args.settings
        if not (args.no_dask and name.startswith("dask"))
    ]
    results, frames = {}, {}
    cluster = client = None
    try:
        for name, n_jobs, backend in settings:
            explainer.set_params(
                n_jobs=n_jobs, batch_size=half if backend == "halves" else 64
            )
            if backend in ("dask", "dask-env"):
                import dask
                import distributed

                # Dask's nanny starts its workers with MALLOC_TRIM_THRESHOLD_
                # set, which turns off glibc's adaptive mmap threshold: every
                # allocation over 128 KiB is then mapped and unmapped afresh.
                # "dask, worker env" also sets MALLOC_MMAP_THRESHOLD_ (the
                # opt-in sklearn_cscf.dask_worker_environment()).
                saved = dict(os.environ)  # the nanny copies its variables here
                with dask.config.set(
                    sklearn_cscf.dask_worker_environment()
                    if backend == "dask-env"
                    else {}
                ):
                    cluster = local_cluster(cores)
                client = distributed.Client(cluster)
                with parallel_config(backend="dask"):
                    cold, _, frames[name] = timed(explainer, rows)
                    warm, cpu, _ = timed(explainer, rows)
                client.close()
                cluster.close()
                client = cluster = None
                os.environ.clear()
                os.environ.update(saved)
            else:
                cold, _, frames[name] = timed(explainer, rows)
                warm, cpu, _ = timed(explainer, rows)
            results[name] = (cold, warm, cpu)
    finally:
        if client is not None:
            client.close()
            cluster.close()
    first = next(iter(results))
    base = results[first][1]
    print()
    header = (
        f"{'setting':<16} {'cold s':>7} {'warm s':>7} {'rows/s (warm)':>14} "
        f"{'speed-up (warm)':>16} {'CPU s (warm)':>13} {'same frame':>11}"
    )
    print(f"(speed-up over {first})")
    print(header)
    print("-" * len(header))
    reference = frames[first]
    for name, (cold, warm, cpu) in results.items():
        same = frames[name].equals(reference)
        print(
            f"{name:<16} {cold:>7.2f} {warm:>7.2f} {len(rows) / warm:>14.2f} "
            f"{base / warm:>16.2f} {cpu:>13.2f} {str(same):>11}"
        )
    print()
    if {"n_jobs=1", "n_jobs=2"} <= results.keys():
        two = results["n_jobs=1"][1] / results["n_jobs=2"][1]
        print(
            f"Target: n_jobs=2 >= {TARGET_SPEEDUP_2} x n_jobs=1 (warm): {two:.2f} "
            f"-> {'MET' if two >= TARGET_SPEEDUP_2 else 'NOT MET'}."
        )
    if {"n_jobs=1", "1 job, 2 blocks", "n_jobs=2"} <= results.keys():
        halves = results["1 job, 2 blocks"][1]
        print(
            f"The second core alone (n_jobs=2 against the same two blocks on one "
            f"core, warm): {halves / results['n_jobs=2'][1]:.2f} x; the smaller "
            f"blocks cost {halves / results['n_jobs=1'][1]:.2f} x the time of one "
            "block."
        )
    for name in ("dask", "dask, worker env"):
        if name not in results or "n_jobs=-1" not in results:
            continue
        share = results["n_jobs=-1"][1] / results[name][1]
        cpu_share = results["n_jobs=-1"][2] / results[name][2]
        print(
            f"Target: Dask throughput >= {TARGET_DASK:.0%} of loky's on the same "
            f"cores (warm), {name}: {share:.0%} by wall clock -> "
            f"{'MET' if share >= TARGET_DASK else 'NOT MET'}; loky's CPU / "
            f"Dask's: {cpu_share:.0%}."
        )
    if not all(frame.equals(reference) for frame in frames.values()):
        raise SystemExit("The frames differ between settings.")


# ---------------------------------------------------------------------- #
# --simulate: a scaling model run on the cores at hand
# ---------------------------------------------------------------------- #
# The 16-core table (issue 25; a lent machine, the main job's Adult
# model, default settings): workers -> (rows, speed-up over one worker per row)
MEASURED_16_CORES = {
    (1, 16, None): 1.00,
    (2, 32, None): 1.73,
    (4, 64, None): 3.23,
    (8, 128, None): 6.03,
    (16, 256, None): 8.60,
    (16, 512, None): 11.49,
    (16, 256, 8): 9.17,  # a second session: batch_size=8 (32 blocks) ...
    (16, 256, 4): 8.05,  # ... batch_size=4 (64 blocks); 9.83 with 16 blocks
}
# joblib's automatic batching (joblib._parallel_backends.AutoBatchingMixin)
MIN_IDEAL_BATCH_DURATION = 0.2
MAX_IDEAL_BATCH_DURATION = 2.0


def _auto_batch_size(old, smoothed):
    """joblib's ``compute_batch_size`` for ``batch_size="auto"``."""
    if 0 < smoothed < MIN_IDEAL_BATCH_DURATION:
        ideal = 2 * int(old * MIN_IDEAL_BATCH_DURATION / smoothed)
        return max(min(2 * old, ideal), 1)
    if smoothed > MAX_IDEAL_BATCH_DURATION and old >= 2:
        return max(2 * int(old * MIN_IDEAL_BATCH_DURATION / smoothed), 1)
    return old


def dispatch(durations, n_workers, batch_size="auto", pre_dispatch=None):
    """When each task ends when joblib hands ``durations`` to ``n_workers``.

    The tasks are taken in submission order, grouped in batches (``"auto"``:
    joblib's rule, one task per batch while batches take over 0.2 s), and
    ``pre_dispatch`` batches (default ``2 * n_workers``, joblib's
    ``"2*n_jobs"``) are queued at the start, one more each time a batch ends.
    A free worker takes the oldest queued batch and runs its tasks one after
    the other (greedy list scheduling in submission order). Returns the end
    time of every task, in submission order.
    """
    import heapq

    durations = [float(d) for d in durations]
    if n_workers < 1:
        raise ValueError(f"n_workers must be at least 1, got {n_workers}")
    pre_dispatch = 2 * n_workers if pre_dispatch is None else pre_dispatch
    ends = [0.0] * len(durations)
    queue = []  # (dispatch time, [task indices]) not yet started
    state = {"next": 0, "size": 1, "smoothed": 0.0}

    def dispatch_one(now):
        if state["next"] >= len(durations):
            return
        size = batch_size if batch_size != "auto" else state["size"]
        first = state["next"]
        state["next"] = min(first + size, len(durations))
        queue.append((now, list(range(first, state["next"]))))

    def completed(size, duration):
        if batch_size != "auto" or size != state["size"]:
            return
        old = state["smoothed"]
        state["smoothed"] = duration if old == 0 else 0.8 * old + 0.2 * duration
        new = _auto_batch_size(state["size"], state["smoothed"])
        if new != state["size"]:
            state["size"], state["smoothed"] = new, 0.0

    for _ in range(pre_dispatch):
        dispatch_one(0.0)
    running = []  # (end time, worker, dispatch time, tasks)
    idle = list(range(n_workers))
    now = 0.0
    while queue or running:
        while idle and queue:
            worker = idle.pop(0)
            sent, tasks = queue.pop(0)
            end = now
            for task in tasks:
                end += durations[task]
                ends[task] = end
            heapq.heappush(running, (end, worker, sent, tasks))
        end, worker, sent, tasks = heapq.heappop(running)
        now = end
        idle.append(worker)
        idle.sort()
        # joblib times a batch from its dispatch to its end
        completed(len(tasks), now - sent)
        dispatch_one(now)
    return ends


def run_time(blocks, pieces, before, after, n_workers, **dispatch_options):
    """Wall time of a run on ``n_workers``: the parent's serial work
    ``before`` the blocks, the blocks dispatched as joblib does, the parent
    building each block's piece of the output in submission order as the
    results arrive (``pieces``), then ``after`` (assembling the frame).
    One worker is ``n_jobs=1``: the parent runs the blocks itself."""
    if n_workers == 1:
        return before + sum(blocks) + sum(pieces) + after
    ends = dispatch(blocks, n_workers, **dispatch_options)
    parent = 0.0
    for end, piece in zip(ends, pieces):
        parent = max(parent, end) + piece
    return before + max(parent, max(ends, default=0.0)) + after


class Recorder:
    """CPU seconds of each block, each generation and the parent, recorded
    by wrapping the driver's and the engine's functions in this process."""

    def __init__(self):
        self.blocks, self.marks = [], []
        self.block = None
        self.positions = []

    def install(self, n_workers):
        from sklearn_cscf import _driver
        from sklearn_cscf._engine import _block as _engine
        from sklearn_cscf._engine._evaluator import Evaluator

        recorder, saved = self, []

        def patch(owner, name, wrapper):
            saved.append((owner, name, getattr(owner, name)))
            setattr(owner, name, wrapper(getattr(owner, name)))

        def explain_block(inner):
            def wrapped(shipment, x0, targets, seeds, errors):
                recorder.marks.append(("block start", time.thread_time()))
                recorder.block = {"evaluate": [], "post": None, "active": []}
                start, wall = time.thread_time(), time.perf_counter()
                results = inner(shipment, x0, targets, seeds, errors)
                block = recorder.block
                block["cpu"] = time.thread_time() - start
                block["wall"] = time.perf_counter() - wall
                block["start"] = start
                block["generations"] = [r.diagnostics.n_generations for r in results]
                recorder.blocks.append(block)
                recorder.block = None
                recorder.marks.append(("block end", time.thread_time()))
                return results

            return wrapped

        def evaluate(inner):
            def wrapped(self, owner, keys, known=None):
                if recorder.block is not None:
                    recorder.block["evaluate"].append(time.thread_time())
                    # the rows still searching: the distinct owners asking
                    recorder.block["active"].append(len(np.unique(owner)))
                return inner(self, owner, keys, known)

            return wrapped

        def post(inner):
            def wrapped(*args, **kwargs):
                block = recorder.block
                if block is not None and block["post"] is None:
                    block["post"] = time.thread_time()
                return inner(*args, **kwargs)

            return wrapped

        def make_piece(inner):
            def wrapped(*args, **kwargs):
                start = time.thread_time()
                out = inner(*args, **kwargs)
                recorder.marks.append(("piece", time.thread_time() - start))
                return out

            return wrapped

        patch(_driver, "_explain_block", explain_block)
        patch(Evaluator, "evaluate", evaluate)
        patch(_engine, "refine", post)
        patch(_engine.Block, "describe", post)
        patch(_driver, "make_piece", make_piece)
        # the blocks the driver forms for n_workers, run here one by one
        patch(_driver, "effective_n_jobs", lambda inner: lambda n_jobs=None: n_workers)

        def blocks(inner):
            def wrapped(*args, **kwargs):
                out = inner(*args, **kwargs)
                recorder.positions = [np.asarray(b).tolist() for b in out]
                return out

            return wrapped

        patch(_driver, "_blocks", blocks)
        return saved

    @staticmethod
    def uninstall(saved):
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)


def record_run(explainer, rows, n_workers, batch_size):
    """Explain ``rows`` in this process as the driver would for
    ``n_workers`` workers; return what the model needs (CPU seconds)."""
    recorder = Recorder()
    explainer.set_params(n_jobs=1, batch_size=batch_size)
    saved = recorder.install(n_workers)
    try:
        start = time.thread_time()
        frame = explainer.explain(rows)
        end = time.thread_time()
    finally:
        Recorder.uninstall(saved)
    starts = [t for kind, t in recorder.marks if kind == "block start"]
    stops = [t for kind, t in recorder.marks if kind == "block end"]
    blocks = []
    for block, positions in zip(recorder.blocks, recorder.positions):
        evaluate = block["evaluate"]
        post = block["post"] if block["post"] is not None else block["start"]
        edges = [*evaluate, post]
        blocks.append(
            {
                "positions": positions,
                "cpu": block["cpu"],
                "wall": block["wall"],
                "generations": block["generations"],
                "active": block["active"],
                "generation_cpu": np.diff(edges).tolist(),
                "setup": (evaluate[0] if evaluate else post) - block["start"],
                "post": block["start"] + block["cpu"] - post,
            }
        )
    # each block's piece of the output: the first made after it ends (the
    # parent's work while the next blocks run; the last block's piece is
    # taken out of the serial work after the blocks)
    pieces, waiting = [], False
    for kind, value in recorder.marks:
        if kind == "block end":
            waiting = True
        elif kind == "piece" and waiting:
            pieces.append(value)
            waiting = False
    return {
        "n_workers": n_workers,
        "batch_size": batch_size,
        "n_rows": len(rows),
        "blocks": blocks,
        "pieces": pieces,
        "before": (starts[0] if starts else end) - start,
        "after": end - (stops[-1] if stops else start) - (pieces[-1] if pieces else 0),
        "total": end - start,
    }, frame


def _lstsq(x, y):
    """Intercept and slope of ``y`` on ``x`` (the slope alone if x is flat)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.size < 2 or np.ptp(x) == 0:
        return 0.0, float(y.sum() / max(x.sum(), 1e-12))
    slope, intercept = np.polyfit(x, y, 1)
    return float(intercept), float(slope)


class RowModel:
    """A block's CPU from its rows, fitted on recorded blocks (to predict
    blocks the run did not form).

    A generation costs ``per_generation`` (what does not grow with the rows
    still searching: the model call's overhead, the loop) plus each active
    row's share; after the search, a block costs ``per_block`` plus each
    row's share (refinement, description). A block then costs
    ``per_generation * max(generations) + sum of its rows' search shares +
    per_block + sum of their post shares``.
    """

    def __init__(self, runs):
        active, cpu, sizes, posts = [], [], [], []
        for run in runs:
            for block in run["blocks"]:
                active += block["active"]
                cpu += block["generation_cpu"]
                sizes.append(len(block["generations"]))
                posts.append(block["post"] + block["setup"])
        self.per_generation, _ = _lstsq(active, cpu)
        self.per_generation = max(self.per_generation, 0.0)
        self.per_block, _ = _lstsq(sizes, posts)
        self.per_block = max(self.per_block, 0.0)

    def rows(self, run):
        """``(generations, search share, post share)`` of each searched row
        of ``run``, in input order."""
        out = {}
        for block in run["blocks"]:
            generations = np.asarray(block["generations"])
            search = np.zeros(generations.size)
            for k, (n_active, cpu) in enumerate(
                zip(block["active"], block["generation_cpu"])
            ):
                share = max(cpu - self.per_generation, 0.0) / n_active
                search[generations > k] += share
            post = max(block["post"] + block["setup"] - self.per_block, 0.0)
            post = np.full(generations.size, post / generations.size)
            out.update(zip(block["positions"], zip(generations.tolist(), search, post)))
        return [out[k] for k in sorted(out)]

    def block(self, rows):
        """Predicted CPU of a block of ``rows`` (from :meth:`rows`)."""
        if not rows:
            return 0.0
        generations, search, post = zip(*rows)
        return (
            self.per_generation * max(generations)
            + sum(search)
            + self.per_block
            + sum(post)
        )


def simulated_speedups(runs, contention=1.0):
    """Simulated wall time of each recorded run on its own number of workers
    (blocks slower by ``contention`` when several run at once), and its
    speed-up over the one-worker run, per row."""
    out = {}
    for key, run in runs.items():
        n_workers = run["n_workers"]
        factor = contention if n_workers > 1 else 1.0
        blocks = [block["cpu"] * factor for block in run["blocks"]]
        out[key] = run_time(
            blocks, run["pieces"], run["before"], run["after"], n_workers
        )
    return out


def predicted_time(model, rows, blocks, run, n_workers, contention=1.0):
    """Simulated wall time of ``run``'s rows regrouped as ``blocks`` (lists
    of row positions, in submission order), block CPU from ``model``."""
    factor = contention if n_workers > 1 else 1.0
    durations = [model.block([rows[k] for k in block]) * factor for block in blocks]
    per_row = np.mean(run["pieces"]) / max(
        np.mean([len(b["generations"]) for b in run["blocks"]]), 1
    )
    pieces = [per_row * len(block) for block in blocks]
    return run_time(durations, pieces, run["before"], run["after"], n_workers)


def _contiguous(n, batch_size, n_workers):
    if n == 0:
        return []
    n_blocks = max(-(-n // batch_size), min(n, n_workers))
    return [b.tolist() for b in np.array_split(np.arange(n), n_blocks)]


def cpu_name():
    """The processor's model name (Linux), else the machine's."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def simulate_main(args):
    import json

    if args.load:
        runs, headers = {}, []
        for path in args.load:
            with open(path) as f:
                saved = json.load(f)
            for key, run in saved["runs"].items():
                n_workers, n_rows = json.loads(key)[:2]
                runs[(n_workers, n_rows, run["batch_size"])] = run
            headers.append(saved["header"])
        header = "\n".join(dict.fromkeys(headers))
    else:
        scenario = SCENARIOS["adult"]
        with threadpool_limits(limits=1):
            model, (X_train, X_test, _, _) = train(scenario.load(), args.seed)
            predicted = model.predict(X_test)
        options = {"random_state": args.seed}
        if args.population_size is not None:
            options["population_size"] = args.population_size
        if args.generations is not None:
            options["n_generations"] = args.generations
        explainer = SequentialCounterfactualExplainer(
            model,
            actions=scenario.actions(),
            feature_graph=scenario.graph(),
            **options,
        ).fit(X_train)
        # warm: the first call's one-off costs are not the parent's serial work
        explainer.set_params(n_jobs=1).explain(
            pick_rejected(X_test, predicted, 2, args.seed + 1)
        )
        header = (
            f"sklearn-cscf {sklearn_cscf.__version__}, Python "
            f"{platform.python_version()}, {platform.machine()}, "
            f"{os.cpu_count()} CPU(s), {cpu_name()}; Adult, "
            f"the main job's model, population {explainer.population_size}, "
            f"n_generations={explainer.n_generations!r}, batch_size "
            f"{args.batch_size}, seed {args.seed}"
        )
        batch = args.batch_size
        wanted = [(1, args.rows or args.rows_per_worker, batch)]
        for n_workers in args.simulate:
            rows = args.rows or args.rows_per_worker * n_workers
            wanted.append((n_workers, rows, batch))
        for extra in args.also:
            values = [int(v) for v in extra.split(":")]
            wanted.append((*values[:2], values[2] if len(values) > 2 else batch))
        runs, frames = {}, {}
        for n_workers, n_rows, batch_size in dict.fromkeys(wanted):
            rows = pick_rejected(X_test, predicted, n_rows, args.seed)
            run, frame = record_run(explainer, rows, n_workers, batch_size)
            # a cheap guess of each row's cost: how far the model puts it
            # from the target class now (every picked row is searched)
            with threadpool_limits(limits=1):
                run["expected"] = (1 - model.predict_proba(rows)[:, 1]).tolist()
            if n_rows in frames and not frame.equals(frames[n_rows]):
                raise SystemExit(f"{n_rows} rows: the frame depends on the blocks")
            frames[n_rows] = frame
            runs[(n_workers, len(rows), batch_size)] = run
            print(
                f"recorded {n_workers:>2} workers, {len(rows):>4} rows, batch_size "
                f"{batch_size}: "
                f"{len(run['blocks'])} blocks, {run['total']:.2f} CPU s",
                flush=True,
            )
        if args.save:
            with open(args.save, "w") as f:
                json.dump(
                    {
                        "header": header,
                        "runs": {json.dumps(k): v for k, v in runs.items()},
                    },
                    f,
                )
    print(header)
    print(
        "Inputs: CPU seconds (time.thread_time) of each block, generation and "
        "parent step,\nrecorded running the blocks the driver forms for W "
        "workers one after the other in\nthis process. Simulated: joblib's "
        "dispatch (batch_size='auto', pre_dispatch='2*n_jobs')\nof those "
        "blocks to W workers, and the parent making each block's piece as "
        "they arrive.\nOther schedules: blocks rebuilt from each row's CPU "
        "(the row model)."
    )
    model = RowModel(list(runs.values()))
    print(
        f"Row model: {model.per_generation * 1e3:.1f} ms per generation of a "
        f"block, {model.per_block * 1e3:.0f} ms per block, plus each row's own "
        "CPU."
    )
    base_key = min(k for k in runs if k[0] == 1 and k[2] == args.batch_size)
    base = runs[base_key]
    base_time = run_time(
        [b["cpu"] for b in base["blocks"]],
        base["pieces"],
        base["before"],
        base["after"],
        1,
    )
    base_rate = base["n_rows"] / base_time
    print(
        f"Speed-up: rows per second over the one-worker run's ({base['n_rows']} "
        f"rows, {base_time:.2f} s, n_jobs=1);\n'x{args.contention}': every block "
        f"{args.contention} x slower when more than one worker runs (assumed: "
        "not measurable\nhere); '16-core': issue 25's measured table; "
        "'implied': the slow-down that makes the\nsimulation match it."
    )
    head = (
        f"{'workers':>7} {'rows':>5} {'schedule':<26} {'blocks':>6} "
        f"{'serial':>6} {'makespan s':>10} {'speed-up':>8} "
        f"{'x' + str(args.contention):>7} {'Amdahl':>6} {'16-core':>7} "
        f"{'implied':>7}"
    )
    print()
    print(head)
    print("-" * len(head))
    for (n_workers, n_rows, _), run in sorted(runs.items()):
        for name, batch_size, time_at in schedules(model, run, n_workers):
            plain = time_at(1.0)
            slowed = time_at(args.contention if n_workers > 1 else 1.0)
            serial = run["before"] + run["after"]
            work = serial + sum(b["cpu"] for b in run["blocks"]) + sum(run["pieces"])
            fraction = serial / work
            amdahl = 1 / (fraction + (1 - fraction) / n_workers)
            measured = None
            if batch_size is not None:  # the schedule: consecutive rows
                size = batch_size
                if batch_size == "consecutive":
                    size = None if run["batch_size"] == 64 else run["batch_size"]
                measured = MEASURED_16_CORES.get((n_workers, n_rows, size))
            implied = ""
            if measured is not None and n_workers > 1:
                goal = n_rows / (measured * base_rate)  # the measured wall time
                low, high = 0.5, 4.0
                for _ in range(40):
                    middle = (low + high) / 2
                    low, high = (
                        (middle, high) if time_at(middle) < goal else (low, middle)
                    )
                implied = f"{low:.2f}"
            print(
                f"{n_workers:>7} {n_rows:>5} {name:<26} "
                f"{schedules.n_blocks:>6} {fraction:>6.1%} {plain:>10.2f} "
                f"{n_rows / plain / base_rate:>8.2f} "
                f"{n_rows / slowed / base_rate:>7.2f} {amdahl:>6.2f} "
                f"{'' if measured is None else f'{measured:.2f}':>7} {implied:>7}"
            )


def balanced_blocks(n, batch_size, n_workers, expected):
    """The driver's number and sizes of blocks, the rows dealt longest-
    expected first to the block expected to end first that has room (LPT),
    the blocks handed out longest-expected first."""
    import heapq

    consecutive = _contiguous(n, batch_size, n_workers)
    room = [len(block) for block in consecutive]
    members = [[] for _ in consecutive]
    loads = np.zeros(len(consecutive))
    heap = [(0.0, k) for k in range(len(consecutive))]
    for row in np.argsort(-expected, kind="stable"):
        load, k = heapq.heappop(heap)
        members[k].append(int(row))
        loads[k] = load + float(expected[row])
        if len(members[k]) < room[k]:
            heapq.heappush(heap, (loads[k], k))
    return [sorted(members[k]) for k in np.argsort(-loads, kind="stable")]


def schedules(model, run, n_workers):
    """``(name, batch_size, wall time at a slow-down)`` of the recorded
    schedule ("driver": the measured blocks) and of others the row model
    builds from the same rows: consecutive blocks (the driver's rule),
    balanced blocks (rows dealt by the model's probability of the target
    class now, a guess the parent has for free, or by each row's measured
    CPU, the best any guess could do), smaller consecutive blocks, and no
    imbalance at all (every worker the same share of the work)."""
    rows = model.rows(run)
    n = len(rows)
    blocks = [b["cpu"] for b in run["blocks"]]

    def measured(factor):
        return run_time(
            [d * factor for d in blocks],
            run["pieces"],
            run["before"],
            run["after"],
            n_workers,
        )

    def rebuilt(groups):
        def at(factor):
            return predicted_time(model, rows, groups, run, n_workers, factor)

        return at

    def even(factor):
        share = (sum(blocks) + sum(run["pieces"])) / n_workers
        return run["before"] + share * factor + run["after"]

    batch = run["batch_size"]
    consecutive = _contiguous(n, batch, n_workers)
    driver_consecutive = [b["positions"] for b in run["blocks"]] == consecutive
    schedules.n_blocks = len(blocks)
    name = "driver" if driver_consecutive else "driver, balanced"
    if batch != 64:
        name += f", batch_size={batch}"
    yield name, ("consecutive" if driver_consecutive else None), measured
    if n_workers == 1:
        return
    expected = run.get("expected")
    costs = np.array([model.block([row]) for row in rows])
    for name, groups, batch_size in [
        (
            "consecutive",
            None if driver_consecutive else consecutive,
            "consecutive",
        ),
        (
            "balanced, proba",
            None
            if expected is None or len(expected) != n
            else balanced_blocks(n, batch, n_workers, np.asarray(expected)),
            None,
        ),
        ("balanced, oracle", balanced_blocks(n, batch, n_workers, costs), None),
        ("consecutive, 8", _contiguous(n, 8, n_workers), 8),
        ("consecutive, 4", _contiguous(n, 4, n_workers), 4),
    ]:
        if groups is None:
            continue
        schedules.n_blocks = len(groups)
        yield f"{name} (model)", batch_size, rebuilt(groups)
    schedules.n_blocks = n_workers
    yield "no imbalance", None, even


if __name__ == "__main__":
    pd.set_option("display.width", 120)
    main()

"""The command-line demo: ``python -m sklearn_cscf`` (or ``sklearn-cscf``).

On a built-in data set (Adult by default, or German Credit): trains an
imbalanced-learn pipeline that rebalances the classes, reports its held-out
balanced accuracy, picks a few rejected test rows, explains them with CSCF
(the paper's actions and feature graph) behind a progress bar, prints the
cheapest sequences of each person step by step, and writes the tidy frame to
``explanations.csv`` (and ``explanations.png`` when matplotlib is installed).
The output directory is checked for writing before the long work, and
existing results (or symbolic links in their place) are refused up front
unless ``--overwrite`` is given, which replaces them, a link itself and never
what it points to.

Run ``python -m sklearn_cscf --help`` for the options.
"""

import argparse
import contextlib
import os
import secrets
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

from sklearn_cscf import __version__

# What the job needs (pandas, scikit-learn, the scenarios) is imported by
# _load, inside main: Ctrl-C while those libraries load (seconds) then ends
# the program like Ctrl-C at any other moment, with status 130 and no
# traceback. SCENARIOS, train and pick_rejected are still imported from here
# by callers written before sklearn_cscf._demo (module __getattr__ below).
_LOADED = (
    "pd",
    "balanced_accuracy_score",
    "SequentialCounterfactualExplainer",
    "describe",
    "SCENARIOS",
    "add_search_options",
    "pick_rejected",
    "train",
)


def _load():
    """Import what the job needs into this module (once)."""
    global pd, balanced_accuracy_score, SequentialCounterfactualExplainer
    global describe, SCENARIOS, add_search_options, pick_rejected, train
    import pandas as pd
    from sklearn.metrics import balanced_accuracy_score

    from sklearn_cscf import SequentialCounterfactualExplainer, describe
    from sklearn_cscf._demo import (
        SCENARIOS,
        add_search_options,
        pick_rejected,
        train,
    )


def __getattr__(name):
    if name in _LOADED:
        _load()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


CSV_NAME = "explanations.csv"
PLOT_NAME = "explanations.png"
RESULT_NAMES = (CSV_NAME, PLOT_NAME)
SHOWN_PER_PERSON = 3


# ---------------------------------------------------------------------- #
# Options
# ---------------------------------------------------------------------- #
def _prog():
    """``sklearn-cscf`` for the console script, else ``python -m sklearn_cscf``."""
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    if name.startswith("sklearn-cscf"):
        return "sklearn-cscf"
    return "python -m sklearn_cscf"


def build_parser():
    """The argument parser of the command-line demo."""
    _load()
    parser = argparse.ArgumentParser(
        prog=_prog(),
        description=(
            "Consequence-aware sequential counterfactuals (CSCF) on a built-in "
            "data set: train a classifier, explain a few rejected people, print "
            "their cheapest action sequences and write them to explanations.csv."
        ),
        epilog=(
            "Example: python -m sklearn_cscf --dataset german --n-instances 3 "
            "--generations 50 --output results"
        ),
    )
    parser.add_argument(
        "--dataset",
        choices=sorted(SCENARIOS),
        default="adult",
        help="built-in data set and the paper's actions for it (default: adult)",
    )
    add_search_options(
        parser, rows="rejected test rows", n_instances=5, default_jobs=-1
    )
    parser.add_argument(
        "--no-graph",
        action="store_true",
        help="ignore the feature graph (the paper's SCF variant; German Credit "
        "has no graph anyway)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="directory for explanations.csv (and the plots); created if "
        "missing (default: the current directory)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace explanations.csv and explanations.png if they exist in "
        "--output (a symbolic link there is replaced, never written through)",
    )
    parser.add_argument(
        "--version", action="version", version=f"sklearn-cscf {__version__}"
    )
    return parser


def parse_args(argv=None):
    """Parse and check the options; bad ones exit with a message (status 2).

    Existing results in ``--output`` are refused here, before any work, unless
    ``--overwrite`` is given; a result path that is a directory always is.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _check_output(parser, args)
    except (OSError, ValueError) as exc:  # a path too long, a NUL byte, ...
        parser.error(
            f"--output {str(args.output)[:80]!r}"
            + ("..." if len(str(args.output)) > 80 else "")
            + f": not a usable path ({getattr(exc, 'strerror', None) or exc})"
        )
    return args


def _check_output(parser, args):
    """Refuse existing results in ``--output`` (see :func:`parse_args`)."""
    if "\0" in str(args.output):  # pathlib answers False rather than fail
        raise ValueError("it holds a NUL byte")
    if args.output.exists() and not args.output.is_dir():
        parser.error(f"--output {args.output} exists and is not a directory")
    for name in RESULT_NAMES:
        path = args.output / name
        if path.is_symlink():
            if not args.overwrite:
                parser.error(
                    f"{path} is a symbolic link (to {os.readlink(path)}); it is "
                    "not followed: remove it, or pass --overwrite to replace "
                    "the link itself"
                )
        elif path.is_dir():
            parser.error(
                f"{path} is a directory; move it away or choose another --output"
            )
        elif path.exists() and not args.overwrite:
            parser.error(
                f"{path} exists; pass --overwrite to replace it, or choose "
                "another --output"
            )


def _prepare_output(directory):
    """Create the output directory and try writing there, before the long work."""
    doing = "create"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        # a real write, not permission bits: root ignores them, and read-only
        # or virtual file systems (/proc, /sys) refuse writes whatever they say
        doing = "write to"
        handle, probe = tempfile.mkstemp(dir=directory, prefix=".sklearn-cscf-")
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        raise SystemExit(
            f"sklearn-cscf: error: --output {directory}: cannot {doing} the "
            f"directory ({exc.strerror or exc})"
        ) from None


def _write_result(path, write, overwrite):
    """``write(binary_handle)`` into a new file in ``path``'s directory, then
    move it to ``path``.

    The move replaces whatever ``path`` is (a symbolic link included) without
    following it, and a failed write leaves no half-written result behind.
    """
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "wb") as stream:
            write(stream)
        if not overwrite and os.path.lexists(path):
            raise FileExistsError(
                f"{path} appeared while explaining; not replaced (--overwrite "
                "replaces it)"
            )
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# ---------------------------------------------------------------------- #
# Plots
# ---------------------------------------------------------------------- #
def plot_figure(explanations, probabilities, *, noun="Person", target_name=None):
    """Per person: target probability by step, and the Pareto front.

    ``noun`` names the person in the titles, ``target_name`` the class on
    the probability axis.

    ``None`` without matplotlib or without any sequence to draw.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only; no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    except Exception as exc:  # e.g. a bad MPLBACKEND: the CSV is kept
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        print(
            f"Skipping the plot: matplotlib cannot start ({reason}); check "
            f"MPLBACKEND (now {os.environ.get('MPLBACKEND')!r}), e.g. unset it.",
            file=sys.stderr,
        )
        return None

    from sklearn_cscf.plotting import ParetoFrontDisplay, TargetProbabilityDisplay

    solved = [
        (label, proba)
        for label, proba in probabilities.items()
        if (explanations.loc[explanations["instance"] == label, "status"] == "ok").any()
    ]
    if not solved:
        return None
    fig, axes = plt.subplots(
        len(solved), 2, figsize=(12, 4 * len(solved)), squeeze=False
    )
    for (left, right), (label, proba) in zip(axes, solved):
        TargetProbabilityDisplay.from_explanations(
            explanations,
            label,
            initial_proba=proba,
            max_solutions=SHOWN_PER_PERSON,
            ax=left,
            subject=noun,
            target_name=target_name,
        )
        ParetoFrontDisplay.from_explanations(
            explanations, label, ax=right, subject=noun
        )
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------- #
# The job
# ---------------------------------------------------------------------- #
def run(args):
    """Train, explain and report; returns the explanations frame."""
    start = time.perf_counter()
    scenario = SCENARIOS[args.dataset]
    bunch = scenario.load()
    target_name = str(bunch.target_names[1])
    print(
        f"sklearn-cscf {__version__}: {scenario.title}, {len(bunch.data):,} rows "
        f"(UCI Machine Learning Repository, CC BY 4.0)."
    )

    model, (X_train, X_test, _, y_test) = train(bunch, args.seed)
    predicted = model.predict(X_test)
    accuracy = balanced_accuracy_score(y_test, predicted)
    print(
        f"Model: random undersampling + gradient-boosted trees, trained on "
        f"{len(X_train):,} rows; balanced accuracy {accuracy:.3f} on "
        f"{len(X_test):,} held-out rows."
    )

    rejected = pick_rejected(X_test, predicted, args.n_instances, args.seed)
    n = len(rejected)
    if n < args.n_instances:
        print(f"Only {n} rejected test rows; explaining all of them.")

    use_graph = scenario.graph is not None and not args.no_graph
    method = "CSCF (with the feature graph)" if use_graph else "SCF (no feature graph)"
    explainer = SequentialCounterfactualExplainer(
        model,
        actions=scenario.actions(),
        feature_graph=scenario.graph() if use_graph else None,
        population_size=args.population_size,
        n_generations=args.generations,
        n_jobs=args.n_jobs,
        random_state=args.seed,
        verbose=1,
    ).fit(X_train)
    print(
        f"Explaining {n} rejected {scenario.person.lower()}(s) with {method}: "
        f"{len(explainer.actions_)} actions, population {args.population_size}, "
        f"{args.generations} generations."
    )
    explanations, states = explainer.explain(rejected, return_states=True)
    print()

    initial = pd.Series(model.predict_proba(rejected)[:, 1], index=rejected.index)
    print(
        describe(
            explanations,
            states,
            X=rejected,
            initial_proba=initial,
            target_name=target_name,
            max_plans=SHOWN_PER_PERSON,
            noun=scenario.person,
        )
    )
    print()

    csv_path = args.output / CSV_NAME
    _write_result(
        csv_path,
        lambda stream: explanations.to_csv(stream, index=False),
        args.overwrite,
    )
    written = [str(csv_path)]
    plot_path = args.output / PLOT_NAME
    fig = plot_figure(
        explanations, initial, noun=scenario.person, target_name=target_name
    )
    if fig is not None:
        import matplotlib.pyplot as plt

        try:
            _write_result(
                plot_path,
                lambda stream: fig.savefig(stream, format="png", dpi=100),
                args.overwrite,
            )
        finally:
            plt.close(fig)
        written.append(str(plot_path))
    elif args.overwrite and os.path.lexists(plot_path):
        # an old plot must not pass for this run's
        os.unlink(plot_path)
        print(f"Removed the old {plot_path}: no plot this time.")
    counts = explanations.groupby("instance")["status"].first().value_counts()
    print(
        f"Wrote {len(explanations)} rows to {' and '.join(written)}; "
        f"statuses per person: {counts.to_dict()}; "
        f"{time.perf_counter() - start:.1f} s in all."
    )
    if "no_counterfactual" in counts:
        print(
            "For the people without a sequence, a larger --population-size or "
            "more --generations may find one."
        )
    if "unreachable" in counts:
        print(
            "For the people marked unreachable, neither the declared actions "
            "at the ends of their values nor each action alone at values "
            "between them satisfy the model (see the message column): for a "
            "model monotone in those features no plan exists; for these "
            "trees, a plan may still lie between the values tried, which a "
            "larger budget may find."
        )
    return explanations


def main(argv=None):
    """Entry point of ``python -m sklearn_cscf`` and ``sklearn-cscf``.

    Returns the exit status: 0, 1 when the output cannot be written, 130
    when interrupted (Ctrl-C; said in one line, without a traceback, also
    when the worker processes, which Ctrl-C stops too, die first).
    """
    interrupted = []
    previous = signal.getsignal(signal.SIGINT)

    def on_interrupt(signum, frame):
        interrupted.append(signum)
        if callable(previous):
            previous(signum, frame)
        else:
            raise KeyboardInterrupt

    # signal handlers belong to the main thread (main run in another, say
    # by a test runner, keeps Python's own)
    handled = (
        previous is signal.default_int_handler
        and threading.current_thread() is threading.main_thread()
    )
    if handled:
        signal.signal(signal.SIGINT, on_interrupt)
    try:
        args = parse_args(argv)
        _prepare_output(args.output)
        run(args)
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130
    except RuntimeError as exc:
        if interrupted and type(exc).__name__ == "WorkerDiedError":
            print("Interrupted.", file=sys.stderr)
            return 130
        raise
    except OSError as exc:
        print(f"sklearn-cscf: cannot write the output: {exc}", file=sys.stderr)
        return 1
    finally:
        if handled:
            signal.signal(signal.SIGINT, previous)
    return 0


if __name__ == "__main__":
    sys.exit(main())

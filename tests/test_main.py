"""The command-line demo: ``python -m sklearn_cscf`` and ``sklearn-cscf``."""

import os
import subprocess
import sys
import tempfile
from importlib.metadata import entry_points
from pathlib import Path

import pandas as pd
import pytest

from sklearn_cscf.__main__ import (
    CSV_NAME,
    PLOT_NAME,
    _write_result,
    main,
    parse_args,
)
from sklearn_cscf._frames import COLUMNS
from sklearn_cscf.datasets import load_adult, load_german_credit

TINY = ["--population-size", "30", "--generations", "4", "--n-jobs", "1"]


@pytest.mark.parametrize(
    "dataset, loader, target_name",
    [("adult", load_adult, ">50K"), ("german", load_german_credit, "good")],
)
def test_main_explains_rejected_test_rows(
    tmp_path, capsys, dataset, loader, target_name
):
    # a small budget that still solves these rows, in a directory to create
    output = tmp_path / "new" / "nested"
    status = main(
        [
            "--dataset", dataset, "--n-instances", "2", "--seed", "1",
            "--population-size", "60", "--generations", "10", "--n-jobs", "1",
            "--output", str(output),
        ]
    )  # fmt: skip
    out = capsys.readouterr().out
    frame = pd.read_csv(output / CSV_NAME)
    assert status == 0
    assert "balanced accuracy" in out
    assert f"P({target_name}) now" in out
    assert list(frame.columns) == list(COLUMNS)
    assert frame["instance"].nunique() == 2
    # the explained rows are rows of the data set that the model rejects
    data = loader().data
    assert set(frame["instance"]) <= set(data.index)
    # the model rejects them all (no "already_target")
    assert set(frame["status"]) <= {"ok", "no_counterfactual"}
    solved = frame[frame["status"] == "ok"]
    assert len(solved)
    # every sequence ends accepted
    last = solved.groupby(["instance", "solution"])["target_proba"].last()
    assert (last >= 0.5).all()
    assert (output / PLOT_NAME).stat().st_size > 0


def test_main_uses_the_adult_graph_unless_no_graph(tmp_path, capsys):
    with_graph = tmp_path / "cscf"
    without = tmp_path / "scf"
    options = ["--n-instances", "3", "--seed", "0", *TINY]
    assert main([*options, "--output", str(with_graph)]) == 0
    assert main([*options, "--no-graph", "--output", str(without)]) == 0
    out = capsys.readouterr().out
    assert "CSCF (with the feature graph)" in out
    assert "SCF (no feature graph)" in out
    cscf = pd.read_csv(with_graph / CSV_NAME)
    scf = pd.read_csv(without / CSV_NAME)
    # without the graph every discount is 1; with it, some step is discounted
    assert (scf["discount"].dropna() == 1.0).all()
    assert (cscf["discount"].dropna() < 1.0).any()
    # the same people are explained either way
    assert set(cscf["instance"]) == set(scf["instance"])


def test_main_is_reproducible_whatever_n_jobs(tmp_path, capsys):
    first, second = tmp_path / "a", tmp_path / "b"
    options = ["--dataset", "german", "--n-instances", "3", "--seed", "3"]
    options += ["--population-size", "30", "--generations", "4"]
    assert main([*options, "--n-jobs", "1", "--output", str(first)]) == 0
    assert main([*options, "--n-jobs", "2", "--output", str(second)]) == 0
    capsys.readouterr()
    a = pd.read_csv(first / CSV_NAME)
    b = pd.read_csv(second / CSV_NAME)
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize(
    "options, culprit",
    [
        (["--n-instances", "0"], "--n-instances"),
        (["--n-instances", "two"], "--n-instances"),
        (["--population-size", "1"], "--population-size"),
        (["--generations", "-3"], "--generations"),
        (["--n-jobs", "0"], "--n-jobs"),
        (["--seed", "-1"], "--seed"),
        (["--seed", str(2**32)], "--seed"),
        (["--dataset", "iris"], "--dataset"),
        (["--frobnicate"], "--frobnicate"),
    ],
)
def test_bad_options_exit_with_a_message(capsys, options, culprit):
    with pytest.raises(SystemExit) as raised:
        parse_args(options)
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert culprit in err
    assert "Traceback" not in err


def test_output_must_be_a_directory(tmp_path, capsys):
    a_file = tmp_path / "taken"
    a_file.write_text("not a directory")
    with pytest.raises(SystemExit) as raised:
        parse_args(["--output", str(a_file)])
    assert raised.value.code == 2
    assert "is not a directory" in capsys.readouterr().err


def test_output_that_cannot_be_created_fails_before_the_work(tmp_path, capsys):
    a_file = tmp_path / "taken"
    a_file.write_text("not a directory")
    with pytest.raises(SystemExit) as raised:
        main(["--output", str(a_file / "inside")])
    assert "--output" in str(raised.value.code)
    assert "cannot create the directory" in str(raised.value.code)
    # nothing was trained or explained
    assert capsys.readouterr().out == ""


def test_python_dash_m_runs_and_rejects_bad_options(tmp_path):
    completed = subprocess.run(
        [sys.executable, "-m", "sklearn_cscf", "--n-instances", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 2
    assert "--n-instances" in completed.stderr
    assert "Traceback" not in completed.stderr
    assert not (tmp_path / CSV_NAME).exists()

    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "sklearn_cscf",
            "--dataset",
            "german",
            "--n-instances",
            "1",
            *TINY,
        ],  # fmt: skip
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    assert "Applicant" in completed.stdout
    assert (tmp_path / CSV_NAME).exists()


def test_console_script_is_declared():
    scripts = entry_points(group="console_scripts")
    (script,) = [ep for ep in scripts if ep.name == "sklearn-cscf"]
    assert script.value == "sklearn_cscf.__main__:main"
    assert script.load() is main


def test_old_imports_from_the_main_module_still_work():
    # a notebook imports these from here; they now live in sklearn_cscf._demo
    from sklearn_cscf import _demo
    from sklearn_cscf.__main__ import SCENARIOS, pick_rejected, train

    assert SCENARIOS is _demo.SCENARIOS
    assert (train, pick_rejected) == (_demo.train, _demo.pick_rejected)


# ---------------------------------------------------------------------- #
# The output directory and the result files
# ---------------------------------------------------------------------- #
def _refuses_writes(directory):
    """Whether creating a file in ``directory`` really fails."""
    try:
        handle, probe = tempfile.mkstemp(dir=directory)
    except OSError:
        return True
    os.close(handle)
    os.unlink(probe)
    return False


@pytest.fixture
def unwritable_dir(tmp_path):
    """A directory that refuses new files, whoever runs the tests.

    Permission bits stop an ordinary user but not root, so as root a virtual
    file system that refuses new files whatever the user (/sys, /proc) is
    used instead: the check under test is a real write, so both are fair.
    """
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        for candidate in [locked, Path("/sys"), Path("/proc")]:
            if candidate.is_dir() and _refuses_writes(candidate):
                yield candidate
                return
        pytest.fail("no directory here refuses new files, not even /sys or /proc")
    finally:
        locked.chmod(0o755)


def test_unwritable_output_fails_at_once(unwritable_dir, capsys):
    with pytest.raises(SystemExit) as raised:
        main(["--output", str(unwritable_dir), *TINY])
    message = str(raised.value.code)
    assert f"--output {unwritable_dir}" in message
    assert "cannot write to the directory" in message
    # nothing was trained or explained
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("name", [CSV_NAME, PLOT_NAME])
def test_existing_results_are_kept_without_overwrite(tmp_path, capsys, name):
    (tmp_path / name).write_text("an earlier run")
    with pytest.raises(SystemExit) as raised:
        main(["--output", str(tmp_path), *TINY])
    assert raised.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before any work
    assert f"{tmp_path / name} exists" in captured.err
    assert "--overwrite" in captured.err
    assert (tmp_path / name).read_text() == "an earlier run"


@pytest.mark.parametrize("dangling", [False, True])
def test_a_link_at_a_result_path_is_not_followed(tmp_path, capsys, dangling):
    output, target = tmp_path / "out", tmp_path / "elsewhere.csv"
    output.mkdir()
    if not dangling:
        target.write_text("not ours")
    (output / CSV_NAME).symlink_to(target)
    with pytest.raises(SystemExit) as raised:
        main(["--output", str(output), *TINY])
    assert raised.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "symbolic link" in captured.err and "--overwrite" in captured.err
    assert (output / CSV_NAME).is_symlink()
    if dangling:
        assert not target.exists()
    else:
        assert target.read_text() == "not ours"


def test_a_result_path_that_is_a_directory_is_refused(tmp_path, capsys):
    (tmp_path / PLOT_NAME).mkdir()
    with pytest.raises(SystemExit) as raised:
        main(["--output", str(tmp_path), "--overwrite", *TINY])
    assert raised.value.code == 2
    assert "is a directory" in capsys.readouterr().err


def test_overwrite_replaces_results_and_links_themselves(tmp_path, capsys):
    output, target = tmp_path / "out", tmp_path / "elsewhere.csv"
    output.mkdir()
    target.write_text("not ours")
    (output / CSV_NAME).symlink_to(target)
    (output / PLOT_NAME).write_bytes(b"an earlier plot")
    options = ["--dataset", "german", "--n-instances", "1", *TINY]
    assert main([*options, "--output", str(output), "--overwrite"]) == 0
    capsys.readouterr()
    # the link was replaced by the results; what it pointed to is untouched
    assert not (output / CSV_NAME).is_symlink()
    assert list(pd.read_csv(output / CSV_NAME).columns) == list(COLUMNS)
    assert target.read_text() == "not ours"
    # the old plot is gone: replaced by this run's, or removed without one
    plot = output / PLOT_NAME
    assert not plot.exists() or plot.read_bytes().startswith(b"\x89PNG")
    # and no temporary file is left behind
    assert {path.name for path in output.iterdir()} <= {CSV_NAME, PLOT_NAME}


def test_a_result_appearing_during_the_work_is_not_replaced(tmp_path):
    path = tmp_path / CSV_NAME
    path.write_text("written meanwhile")
    with pytest.raises(FileExistsError):
        _write_result(path, lambda stream: stream.write(b"new"), overwrite=False)
    assert path.read_text() == "written meanwhile"
    assert [p.name for p in tmp_path.iterdir()] == [CSV_NAME]
    _write_result(path, lambda stream: stream.write(b"new"), overwrite=True)
    assert path.read_text() == "new"


# ---------------------------------------------------------------------- #
# issue 23: bad paths and a bad plotting backend
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "output",
    ["x" * 300, "/".join(["deep"] * 1200), "nul\0byte"],
    ids=["name too long", "path too long", "NUL byte"],
)
def test_an_unusable_output_path_exits_2_with_one_message(tmp_path, capsys, output):
    with pytest.raises(SystemExit) as raised:
        parse_args(["--output", str(tmp_path / output)])
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    (message,) = [line for line in err.splitlines() if "error:" in line]
    assert "--output" in message and "not a usable path" in message


PLOT_ONLY = """
import pandas as pd
from sklearn_cscf.__main__ import plot_figure
frame = pd.DataFrame({"instance": [1], "status": ["ok"]})
print(plot_figure(frame, pd.Series({1: 0.2})))
"""


def test_a_bad_matplotlib_backend_skips_the_plot_with_a_message():
    pytest.importorskip("matplotlib")
    env = {
        **os.environ,
        "MPLBACKEND": "no-such-backend",
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    done = subprocess.run(
        [sys.executable, "-c", PLOT_ONLY],
        capture_output=True, text=True, env=env, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None"
    assert "Traceback" not in done.stderr
    assert "Skipping the plot: matplotlib cannot start" in done.stderr
    assert "'no-such-backend'" in done.stderr


@pytest.mark.slow
def test_a_bad_matplotlib_backend_skips_the_plot_and_keeps_the_csv(tmp_path):
    pytest.importorskip("matplotlib")
    env = {
        **os.environ,
        "MPLBACKEND": "no-such-backend",
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    done = subprocess.run(
        [
            sys.executable, "-m", "sklearn_cscf", "--dataset", "german",
            "--n-instances", "1", *TINY, "--output", str(tmp_path),
        ],
        capture_output=True, text=True, env=env, check=False, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "Skipping the plot: matplotlib cannot start" in done.stderr
    assert "no-such-backend" in done.stderr
    assert pd.read_csv(tmp_path / CSV_NAME)["instance"].nunique() == 1
    assert not (tmp_path / PLOT_NAME).exists()

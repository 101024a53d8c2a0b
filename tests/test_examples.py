"""Every example under examples/ runs (with a tiny budget) and writes its output."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from sklearn_cscf._frames import COLUMNS

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_quickstart_writes_explanations(tmp_path):
    n_instances = 2
    completed = subprocess.run(
        [
            sys.executable,
            str(EXAMPLES / "quickstart.py"),
            "--n-instances",
            str(n_instances),
            "--population-size",
            "30",
            "--generations",
            "5",
            "--seed",
            "0",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    assert "Applicant" in completed.stdout
    assert "P(approved) now" in completed.stdout
    output = tmp_path / "explanations.csv"
    assert output.exists()
    frame = pd.read_csv(output)
    # the columns of explain (their contract is checked in test_explainer.py)
    assert list(frame.columns) == list(COLUMNS)
    assert frame["instance"].nunique() == n_instances
    assert frame.groupby("instance").size().min() >= 1
    assert set(frame["status"]) <= {"ok", "no_counterfactual", "already_target"}


def test_quickstart_rejects_bad_options(tmp_path):
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / "quickstart.py"), "--n-instances", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode != 0
    assert "--n-instances" in completed.stderr
    assert not (tmp_path / "explanations.csv").exists()


def test_worked_example_prints_the_papers_costs(tmp_path):
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / "worked_example.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    cscf, scf = completed.stdout.split("SCF:")
    # with the graph: one cheapest order, education first; without: all cost 30
    lines = cscf.splitlines()
    plan = lines.index(
        "  #1  cost 22.50 (effort 30.00), 3 step(s), Gower distance 1.000, margin 0.40"
    )
    steps = [line.split()[1] for line in lines[plan + 1 : plan + 4]]
    assert steps == ["get_bsc", "move_to_us", "change_job"]
    assert "cost 2.50 (5.00 x 0.50)" in lines[plan + 1]
    assert "6 optimal order(s)" in scf
    assert "#1  cost 30.00, 3 step(s)" in scf
    assert "the same actions in 5 other order(s) cost 30.00" in scf


# ---------------------------------------------------------------------- #
# The paper's data sets and the "your own data" tutorial
# ---------------------------------------------------------------------- #
TINY_BUDGET = [
    "--n-instances",
    "2",
    "--population-size",
    "30",
    "--generations",
    "5",
    "--seed",
    "0",
]
STATUSES = {"ok", "no_counterfactual", "already_target"}


def run_example(name, cwd, *args, timeout=300):
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def check_explanations(frame, n_instances, actions):
    """The columns of explain, one entry per instance, sane values."""
    assert list(frame.columns) == list(COLUMNS)
    assert frame["instance"].nunique() == n_instances
    assert set(frame["status"]) <= STATUSES
    ok = frame[frame["status"] == "ok"]
    assert set(ok["action"]) <= set(actions)
    assert ((ok["discount"] >= 0) & (ok["discount"] <= 1)).all()
    assert (ok["cost"] >= 0).all()


@pytest.mark.slow  # runs an example script (pytest -m slow; a step of .ci/run)
def test_adult_cscf_vs_scf_writes_both_methods(tmp_path):
    from sklearn_cscf.datasets import adult_actions

    completed = run_example("adult_cscf_vs_scf.py", tmp_path, *TINY_BUDGET)
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert "balanced accuracy" in out
    assert out.count("Person ") == 2
    assert "CSCF (with the graph)" in out and "SCF (no graph)" in out
    assert "mean #Pareto" in out and "mean cheapest cost" in out
    output = tmp_path / "adult_cscf_vs_scf.csv"
    assert output.exists()
    frame = pd.read_csv(output)
    assert frame.columns[0] == "method"
    assert set(frame["method"]) == {"CSCF", "SCF"}
    names = [action.name for action in adult_actions()]
    by_method = dict(tuple(frame.groupby("method")))
    for steps in by_method.values():
        check_explanations(steps.drop(columns="method"), 2, names)
    # the same people, explained by both methods
    assert set(by_method["CSCF"]["instance"]) == set(by_method["SCF"]["instance"])
    # SCF has no graph: nothing is discounted
    scf = by_method["SCF"]
    assert (scf.loc[scf["status"] == "ok", "discount"] == 1).all()


def test_german_credit_writes_explanations(tmp_path):
    from sklearn_cscf.datasets import german_actions

    completed = run_example("german_credit.py", tmp_path, *TINY_BUDGET)
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert "balanced accuracy" in out
    assert out.count("Applicant ") == 2
    output = tmp_path / "german_explanations.csv"
    assert output.exists()
    frame = pd.read_csv(output)
    check_explanations(frame, 2, [action.name for action in german_actions()])
    ok = frame[frame["status"] == "ok"]
    # the paper's German experiment is SCF: no graph, no discounts
    assert (ok["discount"] == 1).all()
    assert "P(good) now" in out
    # consequences are shown under their step, and only loan_duration has any
    consequences = [
        line for line in out.splitlines() if line.strip().startswith("and so:")
    ]
    assert all("loan_duration" in line for line in consequences)


def test_your_own_data_writes_explanations(tmp_path):
    completed = run_example("your_own_data.py", tmp_path, *TINY_BUDGET)
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert "balanced accuracy" in out
    assert out.count("Applicant ") == 2
    assert "P(approved) now" in out
    # the consequences under their step: studying ages, a job pays
    consequences = [
        line.split(":", 1)[1]
        for line in out.splitlines()
        if line.strip().startswith("and so:")
    ]
    assert all(("age" in c) or ("income" in c) for c in consequences)
    output = tmp_path / "your_own_data_explanations.csv"
    assert output.exists()
    frame = pd.read_csv(output)
    check_explanations(frame, 2, ["save_money", "study", "find_full_time_job"])
    ok = frame[frame["status"] == "ok"]
    # region is immutable and no action sets age directly
    assert not set(ok["feature"]) & {"region", "age"}


@pytest.mark.parametrize(
    "name, option, value",
    [
        ("adult_cscf_vs_scf.py", "--generations", "0"),
        ("german_credit.py", "--population-size", "1"),
        ("your_own_data.py", "--n-instances", "many"),
    ],
)
def test_examples_reject_bad_options(tmp_path, name, option, value):
    completed = run_example(name, tmp_path, option, value, timeout=120)
    assert completed.returncode != 0
    assert option in completed.stderr
    assert "Traceback" not in completed.stderr
    assert not list(tmp_path.iterdir())

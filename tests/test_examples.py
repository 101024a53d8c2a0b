"""Every example under examples/ runs (with a tiny budget) and writes its output."""

import subprocess
import sys
from pathlib import Path

import pandas as pd

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
    assert "#0  cost  22.5: get_bsc (5 x 0.5) -> move_to_us" in cscf
    assert "6 optimal order(s)" in scf
    assert scf.count("cost  30.0") == 6

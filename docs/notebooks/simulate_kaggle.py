"""Run the notebooks as Kaggle would, from a wheel uploaded as a dataset.

On Kaggle, a notebook runs in ``/kaggle/working`` and a dataset added with
"+ Add Input" lies, read-only, under ``/kaggle/input/<dataset>/``. This script
builds that layout with the given wheel, makes a fresh virtual environment
that has Kaggle's notebook tools and the usual data-science packages but not
sklearn-cscf, copies the notebooks into the working folder, and runs each one
top to bottom in a kernel of that environment. It checks that

- the install cell found the wheel under ``/kaggle/input`` and installed it
  (pip's record of where the package came from, and "sklearn-cscf <version>"
  printed by the cell),
- every cell ran without an error, and
- the package the notebook imported is the installed wheel, not a checkout. ::

    python -m build --outdir dist .
    python docs/notebooks/simulate_kaggle.py --wheel dist/sklearn_cscf-*.whl

By default the layout goes under a new temporary folder, ``<tmp>/kaggle``
(removed afterwards), and the notebooks' ``WHEEL_ROOTS`` are pointed there
(said on the console): nothing is written outside it. ``--root DIR`` puts it
under ``DIR/kaggle`` instead; ``--root /`` makes the real ``/kaggle``, where
the install cells search without being pointed anywhere (it needs the right
to create that folder: CI runs as root, and does this). Needs the
``notebooks`` extra.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

import nbformat
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
NOTEBOOKS = sorted(HERE.glob("*.ipynb"))
DATASET = "sklearn-cscf-wheel"  # the name of the uploaded dataset
# what a Kaggle image has before the notebook's install cell runs
PREINSTALLED = ["ipykernel", "numpy", "pandas", "scikit-learn", "matplotlib"]
TIMEOUT = 900  # seconds per cell
FIND_SPEC = "import importlib.util as u; print(u.find_spec('sklearn_cscf'))"
WHERE_FROM = (
    "import json; from importlib.metadata import distribution as d; "
    "print(json.loads(d('sklearn-cscf').read_text('direct_url.json') or '{}')"
    ".get('url', ''))"
)


def kernel_manager(python):
    """A kernel manager whose kernels run ``python``."""

    class Kernel(KernelManager):
        def format_kernel_cmd(self, extra_arguments=None):
            return [str(python), "-m", "ipykernel_launcher", "-f", self.connection_file]

    return Kernel


def make_environment(folder):
    """A fresh virtual environment with :data:`PREINSTALLED`; its Python."""
    venv.create(folder, with_pip=True)
    python = Path(folder) / "bin" / "python"
    subprocess.run(
        [python, "-m", "pip", "install", "--quiet", *PREINSTALLED], check=True
    )
    missing = subprocess.run(
        [
            python,
            "-c",
            "import importlib.util as u; print(u.find_spec('sklearn_cscf'))",
        ],
        cwd=folder,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if missing != "None":
        raise RuntimeError(f"the fresh environment already has sklearn_cscf: {missing}")
    return python


def point_roots(notebook, kaggle):
    """The install cell's ``/kaggle/input`` pointed at ``kaggle / 'input'``."""
    cell = next(cell for cell in notebook.cells if cell.cell_type == "code")
    if '"/kaggle/input"' not in cell.source:
        raise RuntimeError("the install cell no longer searches /kaggle/input")
    cell.source = cell.source.replace('"/kaggle/input"', f'"{kaggle / "input"}"')


def outputs(cell):
    """The text of a code cell's outputs."""
    parts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type in ("execute_result", "display_data"):
            parts.append(output.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def run_notebook(path, python, kaggle, moved):
    """Run the notebook at ``path`` in ``kaggle / 'working'``; its problems."""
    notebook = nbformat.read(path, as_version=4)
    if moved:
        point_roots(notebook, kaggle)
    working = kaggle / "working"
    client = NotebookClient(
        notebook,
        timeout=TIMEOUT,
        kernel_manager_class=kernel_manager(python),
        resources={"metadata": {"path": str(working)}},
        record_timing=False,
    )
    client.execute()  # raises on the first cell that fails
    install = outputs(next(c for c in notebook.cells if c.cell_type == "code"))
    problems = []
    if "sklearn-cscf " not in install:
        problems.append("the install cell did not print the installed version")
    # where pip took the package from (PEP 610's direct_url.json)
    url = subprocess.run(
        [python, "-c", WHERE_FROM],
        cwd=working,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if f"{kaggle / 'input' / DATASET}/sklearn_cscf-" not in url:
        problems.append(f"installed from {url or 'nowhere'}, not {kaggle}/input")
    return problems, install, url


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, required=True, help="the wheel")
    parser.add_argument(
        "--root",
        type=Path,
        default=None,
        metavar="DIR",
        help=(
            "make the layout as DIR/kaggle (default: under a new temporary "
            "folder; the install cells' WHEEL_ROOTS are pointed there); "
            "--root / makes the real /kaggle, as on Kaggle (needs the right "
            "to create it)"
        ),
    )
    parser.add_argument(
        "notebooks", nargs="*", type=Path, help="default: every notebook here"
    )
    args = parser.parse_args(argv)
    wheel = args.wheel.resolve()
    if not wheel.is_file() or not wheel.name.startswith("sklearn_cscf-"):
        parser.error(f"--wheel {args.wheel}: not a sklearn-cscf wheel")
    scratch = None
    if args.root is None:  # nothing outside a folder of its own
        scratch = Path(tempfile.mkdtemp(prefix="simulate-kaggle-"))
    kaggle = (scratch or args.root.resolve()) / "kaggle"
    if kaggle.exists():
        parser.error(f"{kaggle} exists already: this script makes it and removes it")
    moved = kaggle != Path("/kaggle")
    if moved:
        print(f"layout under {kaggle}; the install cells search it for /kaggle/input")
    failed = []
    # nothing of this checkout reaches the environment but the wheel
    pythonpath = os.environ.pop("PYTHONPATH", None)
    try:
        (kaggle / "input" / DATASET).mkdir(parents=True)
        (kaggle / "working").mkdir()
        shutil.copy2(wheel, kaggle / "input" / DATASET / wheel.name)
        (kaggle / "input" / DATASET / wheel.name).chmod(0o444)  # read-only
        with tempfile.TemporaryDirectory() as folder:
            python = make_environment(folder)
            for path in args.notebooks or NOTEBOOKS:
                # a fresh environment each time: every notebook installs the wheel
                if path != (args.notebooks or NOTEBOOKS)[0]:
                    shutil.rmtree(folder)
                    python = make_environment(folder)
                copy = kaggle / "working" / path.name
                shutil.copy2(path, copy)
                problems, install, url = run_notebook(copy, python, kaggle, moved)
                where = subprocess.run(
                    [python, "-c", "import sklearn_cscf; print(sklearn_cscf.__file__)"],
                    cwd=kaggle / "working",
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout.strip()
                if not where.startswith(folder):
                    problems.append(f"sklearn_cscf imported from {where}")
                last = install.strip().splitlines()[-1:] or ["(no output)"]
                print(f"{path.name}: ran top to bottom; {last[0]}, from {url}")
                for problem in problems:
                    print(f"  problem: {problem}")
                if problems:
                    failed.append(path.name)
    finally:
        shutil.rmtree(kaggle, ignore_errors=True)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        if pythonpath is not None:
            os.environ["PYTHONPATH"] = pythonpath
    if failed:
        print(f"\nfailed on Kaggle's layout: {failed}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

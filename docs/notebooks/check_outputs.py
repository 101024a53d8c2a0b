"""Check that the notebooks' stored outputs are current, or refresh them.

The notebooks are stored with their outputs, so that GitHub, Kaggle and the
documentation show them without running anything. This script runs each
notebook top to bottom (in a fresh kernel of the Python that runs the script,
in a temporary folder) and compares the text of every output with the stored
one, ignoring what changes from run to run (timings, progress bars, memory
addresses); pictures are not compared. ::

    python docs/notebooks/check_outputs.py            # check; exit status 1 if stale
    python docs/notebooks/check_outputs.py --refresh  # run and store the new outputs

Needs the ``notebooks`` extra: ``pip install -e ".[notebooks]"``.
"""

import argparse
import difflib
import re
import sys
import tempfile
from pathlib import Path

import nbformat
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
NOTEBOOKS = sorted(HERE.glob("*.ipynb"))
TIMEOUT = 600  # seconds per cell

# what differs between two runs of the same notebook
VOLATILE = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x..."),
    (re.compile(r"\b\d+(\.\d+)?\s?(s|ms|sec|seconds)\b"), "<time>"),
    (re.compile(r"[ \t]+$", re.M), ""),
]
# progress bars (tqdm) are dropped line by line
PROGRESS = re.compile(r"\d+%\|.*\||it/s\]")


class ThisPython(KernelManager):
    """A kernel that runs the Python running this script (a virtual
    environment's, say), whatever kernel specifications are installed."""

    def format_kernel_cmd(self, extra_arguments=None):
        return [sys.executable, "-m", "ipykernel_launcher", "-f", self.connection_file]


def run(notebook):
    """The notebook, executed in a temporary folder."""
    with tempfile.TemporaryDirectory() as folder:
        client = NotebookClient(
            notebook,
            timeout=TIMEOUT,
            kernel_manager_class=ThisPython,
            resources={"metadata": {"path": folder}},
            record_timing=False,
        )
        client.execute()
    return notebook


def texts(notebook):
    """The comparable text of each code cell's outputs."""
    cells = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        parts = []
        for output in cell.get("outputs", []):
            kind = output.output_type
            if kind == "stream":
                parts.append(f"[{output.name}]\n{output.text}")
            elif kind in ("execute_result", "display_data"):
                text = output.get("data", {}).get("text/plain")
                if text is not None:
                    parts.append(f"[{kind}]\n{text}")
            elif kind == "error":
                parts.append(f"[error]\n{output.ename}: {output.evalue}")
        text = "\n".join(parts)
        text = "\n".join(
            line for line in text.splitlines() if not PROGRESS.search(line)
        )
        for pattern, replacement in VOLATILE:
            text = pattern.sub(replacement, text)
        cells.append(text)
    return cells


def clean(notebook):
    """Outputs only: no execution metadata that changes on every run."""
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    notebook.metadata.pop("widgets", None)
    return notebook


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refresh", action="store_true", help="store the new outputs")
    parser.add_argument(
        "notebooks", nargs="*", type=Path, help="default: every notebook here"
    )
    args = parser.parse_args(argv)
    stale = []
    for path in args.notebooks or NOTEBOOKS:
        stored = nbformat.read(path, as_version=4)
        fresh = clean(run(nbformat.read(path, as_version=4)))
        if args.refresh:
            nbformat.write(fresh, path)
            print(f"{path.name}: outputs refreshed")
            continue
        old, new = texts(stored), texts(fresh)
        if old == new:
            print(f"{path.name}: outputs are current")
            continue
        stale.append(path.name)
        print(f"{path.name}: stored outputs differ from a fresh run:")
        for number, (before, after) in enumerate(zip(old, new), start=1):
            if before != after:
                diff = difflib.unified_diff(
                    before.splitlines(),
                    after.splitlines(),
                    f"stored, code cell {number}",
                    f"fresh, code cell {number}",
                    lineterm="",
                )
                print("\n".join(diff))
        if len(old) != len(new):
            print(f"  {len(old)} stored code cells, {len(new)} now")
    if stale:
        print(
            f"\nStale outputs in {stale}; refresh them with\n"
            "    python docs/notebooks/check_outputs.py --refresh",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

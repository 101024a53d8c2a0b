"""The notebooks people fork: stored with outputs, an install cell first,
plain Markdown; and the output comparison of docs/notebooks/check_outputs.py
(which runs them: a step of .ci/run)."""

import importlib.util
import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "docs" / "notebooks"
NAMES = ["adult_walkthrough.ipynb", "your_own_data.ipynb"]


def load(name):
    return json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))


def source(cell):
    text = cell["source"]
    return text if isinstance(text, str) else "".join(text)


@pytest.mark.parametrize("name", NAMES)
def test_every_code_cell_has_stored_outputs(name):
    code = [cell for cell in load(name)["cells"] if cell["cell_type"] == "code"]
    assert code
    for cell in code:
        assert cell["execution_count"] is not None, source(cell)[:60]
    # the cells whose last line is an expression or a print show something
    shown = [cell for cell in code if cell["outputs"]]
    assert len(shown) >= len(code) - 1
    assert not [
        output
        for cell in code
        for output in cell["outputs"]
        if output["output_type"] == "error"
    ]


@pytest.mark.parametrize("name", NAMES)
def test_an_install_cell_first_and_plain_markdown(name):
    cells = load(name)["cells"]
    first_code = next(cell for cell in cells if cell["cell_type"] == "code")
    text = source(first_code)
    # harmless where the package is installed, installs it where it is not
    assert 'find_spec("sklearn_cscf") is None' in text
    assert "pip" in text and "install" in text
    for cell in cells:
        if cell["cell_type"] == "markdown":
            # no MyST roles: Jupyter, GitHub and Kaggle show them as raw text
            assert not re.search(r"\{[a-z]+\}`", source(cell)), source(cell)[:80]


def test_the_comparison_ignores_what_changes_between_runs():
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    spec = importlib.util.spec_from_file_location(
        "check_outputs", NOTEBOOKS / "check_outputs.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def notebook(text):
        cell = nbformat.v4.new_code_cell("x")
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        return nbformat.v4.new_notebook(cells=[cell])

    one = notebook("<object at 0x7f3a2b>\nExplaining:  50%|#####| 1/2 [00:11]\n1.5 s")
    two = notebook("<object at 0x55aa01>\n2.25 s")
    assert module.texts(one) == module.texts(two)
    assert module.texts(notebook("cost 1.50")) != module.texts(notebook("cost 1.51"))

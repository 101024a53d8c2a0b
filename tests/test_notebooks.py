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


def _install_cell(name):
    """The install cell of a notebook, split before it acts: the definitions
    (SOURCE, WHEEL_ROOTS, find_wheels) and what it does with them."""
    cells = load(name)["cells"]
    text = source(next(cell for cell in cells if cell["cell_type"] == "code"))
    head, _, rest = text.partition("\nif importlib.util.find_spec")
    assert rest, "the install cell no longer checks whether the package is there"
    return head, "if importlib.util.find_spec" + rest


def _kaggle_layout(tmp_path):
    """/kaggle/input/<dataset>/<file>.whl as a Kaggle dataset holds a wheel,
    a notebook folder, and a dist folder."""
    kaggle = tmp_path / "kaggle" / "input"
    older = kaggle / "sklearn-cscf-wheel" / "sklearn_cscf-0.1.0-py3-none-any.whl"
    newer = kaggle / "other" / "nested" / "sklearn_cscf-0.2.0-py3-none-any.whl"
    for wheel in (older, newer):
        wheel.parent.mkdir(parents=True)
        wheel.write_bytes(b"")
    (kaggle / "other" / "nested" / "numpy-2.0-py3-none-any.whl").write_bytes(b"")
    here = tmp_path / "notebooks"
    here.mkdir()
    return kaggle, here, older, newer


@pytest.mark.parametrize("name", NAMES)
def test_the_install_cell_finds_a_wheel_anywhere_under_kaggle_input(name, tmp_path):
    head, _ = _install_cell(name)
    names = {}
    exec(head, names)
    assert "/kaggle/input" in names["WHEEL_ROOTS"]
    kaggle, here, older, newer = _kaggle_layout(tmp_path)
    found = names["find_wheels"]((str(kaggle), str(here), str(tmp_path / "dist")))
    assert found == [str(older), str(newer)]
    # next to the notebook, too
    beside = here / "sklearn_cscf-0.3.0-py3-none-any.whl"
    beside.write_bytes(b"")
    assert names["find_wheels"]((str(kaggle), str(here)))[-1] == str(beside)
    assert names["find_wheels"]((str(tmp_path / "nowhere"),)) == []


@pytest.mark.parametrize("name", NAMES)
def test_the_install_cell_installs_the_wheel_or_says_how_to_add_one(
    name, tmp_path, monkeypatch
):
    import subprocess

    head, rest = _install_cell(name)
    kaggle, here, _, newer = _kaggle_layout(tmp_path)
    calls = []
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(subprocess, "run", lambda args, **kw: calls.append(args))

    def run(roots, source=None):
        names = {}
        exec(head, names)
        names.update(WHEEL_ROOTS=roots, SOURCE=source, version=lambda _: "x")
        exec(rest, names)

    run((str(kaggle), str(here)))
    assert calls[-1][-3:] == ["pip", "install", f"{newer}[plot]"]
    run((str(kaggle),), source="/some/where/sklearn_cscf-0.1-py3-none-any.whl")
    assert calls[-1][-1] == "/some/where/sklearn_cscf-0.1-py3-none-any.whl"
    with pytest.raises(RuntimeError) as caught:
        run((str(tmp_path / "empty"),))
    message = str(caught.value)
    assert "Kaggle dataset" in message and "SOURCE" in message
    assert "wheel's path" in message and "git+" in message
    assert len(calls) == 2


def _simulate_kaggle():
    pytest.importorskip("nbclient")
    spec = importlib.util.spec_from_file_location(
        "simulate_kaggle", NOTEBOOKS / "simulate_kaggle.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", NAMES)
def test_the_kaggle_simulation_moves_only_the_install_cells_root(name, tmp_path):
    # docs/notebooks/simulate_kaggle.py --root DIR points /kaggle/input at
    # DIR/kaggle/input, and the cell then finds the wheel there (the whole
    # run, in a fresh environment, is a step of .ci/run)
    import nbformat

    module = _simulate_kaggle()
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    before = [cell.source for cell in notebook.cells]
    kaggle = tmp_path / "kaggle"
    module.point_roots(notebook, kaggle)
    after = [cell.source for cell in notebook.cells]
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(changed) == 1
    head = after[changed[0]].partition("\nif importlib.util.find_spec")[0]
    names = {}
    exec(head, names)
    assert names["WHEEL_ROOTS"][0] == str(kaggle / "input")
    wheel = kaggle / "input" / module.DATASET / "sklearn_cscf-0.1-py3-none-any.whl"
    wheel.parent.mkdir(parents=True)
    wheel.write_bytes(b"")
    assert names["find_wheels"](names["WHEEL_ROOTS"][:1]) == [str(wheel)]


def test_the_kaggle_simulation_refuses_a_folder_it_did_not_make(tmp_path, capsys):
    module = _simulate_kaggle()
    (tmp_path / "kaggle").mkdir()
    wheel = tmp_path / "sklearn_cscf-0.1-py3-none-any.whl"
    wheel.write_bytes(b"")
    with pytest.raises(SystemExit):
        module.main(["--wheel", str(wheel), "--root", str(tmp_path)])
    assert "exists already" in capsys.readouterr().err
    assert (tmp_path / "kaggle").is_dir()  # left as it was
    with pytest.raises(SystemExit):
        module.main(["--wheel", str(tmp_path / "nothing.whl"), "--root", str(tmp_path)])
    assert "not a sklearn-cscf wheel" in capsys.readouterr().err


def test_the_kaggle_simulation_writes_only_under_a_folder_of_its_own(
    tmp_path, monkeypatch
):
    # issue 37: it wrote /kaggle at the root, --root only in its docstring
    import tempfile

    module = _simulate_kaggle()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    wheel = tmp_path / "sklearn_cscf-0.1-py3-none-any.whl"
    wheel.write_bytes(b"")
    seen = []

    class Stop(Exception):
        pass

    def no_environment(folder):
        seen.extend(tmp_path.glob(f"simulate-kaggle-*/kaggle/input/{module.DATASET}/*"))
        raise Stop

    monkeypatch.setattr(module, "make_environment", no_environment)
    real = Path("/kaggle").exists()
    with pytest.raises(Stop):
        module.main(["--wheel", str(wheel)])
    assert [path.name for path in seen] == [wheel.name]  # the layout, in tmp
    assert not list(tmp_path.glob("simulate-kaggle-*"))  # and removed
    assert Path("/kaggle").exists() == real  # nothing at the root


def test_the_kaggle_simulation_says_where_it_writes_in_its_help(capsys):
    module = _simulate_kaggle()
    with pytest.raises(SystemExit):
        module.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--root DIR" in text and "--root / makes the real /kaggle" in text

"""The layout of the package (issue 17): public names are not shadowed,
modules fit in one read, and no module imports back into itself."""

import ast
import importlib
import types
from pathlib import Path

import pytest

import sklearn_cscf

PACKAGE = Path(sklearn_cscf.__file__).parent
# plotting.py becomes a package of its own (issue 17's plotting part)
TOO_LONG_ALLOWED = {"plotting.py"}
MAX_LINES = 700


def modules():
    """``{dotted name: path}`` of every module of the package."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports_of(name, path, known):
    """The modules of the package that ``name`` imports (at any depth)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if node.module else anchor
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
                break
    return out


@pytest.mark.parametrize("name", ["metrics", "reporting", "selection", "datasets"])
def test_public_namespaces_are_modules_not_shadowed(name):
    module = importlib.import_module(f"sklearn_cscf.{name}")
    assert isinstance(module, types.ModuleType)
    assert getattr(sklearn_cscf, name) is module
    for public in module.__all__:
        assert getattr(module, public).__module__.startswith("sklearn_cscf.")


def test_replay_is_a_function_at_the_top_level_only():
    assert callable(sklearn_cscf.replay)
    assert not (PACKAGE / "replay.py").exists()
    assert not (PACKAGE / "replay").exists()


def test_every_module_fits_in_one_read():
    long = {
        str(path.relative_to(PACKAGE)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert set(long) <= TOO_LONG_ALLOWED, long


def test_no_import_cycle():
    known = modules()
    graph = {name: imports_of(name, path, known) for name, path in known.items()}
    # a package's __init__ imports its own modules: that is not a way back
    done, on_path = set(), []

    def visit(name):
        if name in on_path:
            cycle = on_path[on_path.index(name) :] + [name]
            raise AssertionError(f"import cycle: {' -> '.join(cycle)}")
        if name in done:
            return
        on_path.append(name)
        for other in sorted(graph[name]):
            visit(other)
        on_path.pop()
        done.add(name)

    for name in sorted(graph):
        visit(name)
    # the walk saw the edges that matter
    assert "sklearn_cscf._driver" in graph["sklearn_cscf._explainer"]
    assert "sklearn_cscf._engine" in graph["sklearn_cscf._driver"]


def test_replay_shares_only_statuses_and_input_checks_with_the_library():
    known = modules()
    shared = {
        "sklearn_cscf._status",
        "sklearn_cscf._validation",
        # the input's kind of frame (polars) and its columns' dtypes
        "sklearn_cscf._dataframes",
        "sklearn_cscf._frames",  # check_frame, the check of the frames
        "sklearn_cscf._sklearn_compat",  # validate_params
    }
    for name, path in known.items():
        if name.startswith("sklearn_cscf._replay"):
            outside = {
                other
                for other in imports_of(name, path, known)
                if not other.startswith("sklearn_cscf._replay")
            }
            assert outside <= shared, (name, outside - shared)

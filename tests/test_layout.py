"""The layout of the package (issues 17, 22 and 34): public names are not
shadowed, each module imports only from its own layer and the layers below
(the table ``LAYERS``, the picture of docs/architecture.md), and inside the
engine only the modules its table allows (``USES``); no module imports back
into itself, no module imports another's private names, and replay reads
the library through public names only."""

import ast
import importlib
import types
from pathlib import Path

import pytest

import sklearn_cscf

PACKAGE = Path(sklearn_cscf.__file__).parent

# Each layer and its modules (a name stands for itself and everything under
# it: "metrics._metrics", "plotting._data", ...), lowest first.
LAYERS = {
    "shared": [
        "_status",
        "_validation",
        "_input_frames",
        "_sklearn_compat",
        "_pickling",
        "_rows",
        "_version",
    ],
    "definitions": [
        "actions",
        "graph",
        "_spaces",
        "_schema",
        "_callable_checks",
        "_compiled_actions",
        "_compiled_graph",
    ],
    "results": ["_result", "_frames", "_saving"],
    "engine": ["_engine"],
    "fit": ["_compile", "_make_actions"],
    "driver": ["_driver", "_checkpoints", "_workers"],
    "estimator": ["_explainer"],
    "post-hoc": [
        "_reporting",
        "_selection",
        "metrics._metrics",
        "metrics._scorer",
        "plotting._",
    ],
    "replay": ["_replay"],
    "public": [
        "",  # sklearn_cscf/__init__.py
        "__main__",
        "_demo",
        "reporting",
        "selection",
        "metrics",
        "plotting",
        "datasets",
    ],
}
BELOW = ["shared", "definitions", "results", "engine", "fit", "driver"]
# which layers each layer may import (its own included); a name starting
# with "_" is one module of a layer (the engine's results are InstanceResult
# objects: it knows nothing of the frames)
MAY_IMPORT = {
    "shared": {"shared"},
    "definitions": {"shared", "definitions"},
    "results": {"shared", "results"},
    "engine": {"shared", "definitions", "_result", "engine"},
    "fit": {"shared", "definitions", "results", "engine", "fit"},
    "driver": {*BELOW},
    "estimator": {*BELOW, "estimator"},
    # the post-hoc layer reads the frames alone
    "post-hoc": {"shared", "results", "post-hoc"},
    # replay is an independent oracle: see REPLAY_SHARES
    "replay": {"shared", "results", "replay"},
    "public": set(LAYERS),
}
# Inside a layer, module by module: what each listed module may import of
# its own layer (a name stands for itself and everything under it), lowest
# first. The engine's parts get explicit arguments from the block, not
# imports of each other: the search knows nothing of actions, states or the
# model; refinement and the probes are handed the evaluator, the one way to
# the model, and import no model of their own.
USES = {
    "_engine._workspace": [],
    "_engine._feature_names": [],
    "_engine._hashing": ["_engine._workspace"],
    "_engine._genotypes": ["_engine._workspace"],
    "_engine._objectives": ["_engine._workspace"],
    "_engine._targets": ["_engine._workspace"],
    "_engine._memo": ["_engine._hashing"],
    "_engine._model": ["_engine._memo", "_engine._feature_names"],
    "_engine._simulation": ["_engine._genotypes", "_engine._workspace"],
    "_engine._brkga": ["_engine._hashing", "_engine._workspace"],
    "_engine._evaluator": [
        "_engine._brkga",
        "_engine._genotypes",
        "_engine._hashing",
        "_engine._memo",
        "_engine._model",
        "_engine._objectives",
        "_engine._simulation",
        "_engine._workspace",
    ],
    "_engine._refine": [
        "_engine._refine",
        "_engine._brkga",
        "_engine._genotypes",
        "_engine._hashing",
        "_engine._simulation",
    ],
    "_engine._reachability": ["_engine._genotypes"],
    "_engine._block": [
        "_engine._brkga",
        "_engine._evaluator",
        "_engine._genotypes",
        "_engine._objectives",
        "_engine._reachability",
        "_engine._refine",
        "_engine._simulation",
    ],
    "_engine": [],
}
# the only modules of the library replay imports: statuses, input checks,
# the input's kind of frame, check_frame and validate_params
REPLAY_SHARES = {
    "sklearn_cscf._status",
    "sklearn_cscf._validation",
    "sklearn_cscf._input_frames",
    "sklearn_cscf._frames",
    "sklearn_cscf._sklearn_compat",
}


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


def layer_of(name):
    """The layer of module ``name`` (the longest matching entry of LAYERS)."""
    relative = name.removeprefix("sklearn_cscf").removeprefix(".")
    best, length = None, -1
    for layer, entries in LAYERS.items():
        for entry in entries:
            matches = (
                relative == entry
                or relative.startswith(entry + ".")
                or (entry.endswith("_") and relative.startswith(entry))
            )
            if matches and len(entry) > length:
                best, length = layer, len(entry)
    return best


def _relative(name):
    return name.removeprefix("sklearn_cscf").removeprefix(".")


def _within(name, entry):
    """Whether module ``name`` is ``entry`` or lies under it."""
    relative = _relative(name)
    return relative == entry or relative.startswith(entry + ".")


def _entry_of(name, table):
    """The longest entry of ``table`` that module ``name`` lies under."""
    found = [entry for entry in table if _within(name, entry)]
    return max(found, key=len) if found else None


def layer_violations(graph):
    """``(module, imported, why)`` for every import the layers forbid."""
    found = []
    for name, imported in sorted(graph.items()):
        layer = layer_of(name)
        allowed = MAY_IMPORT[layer]
        uses = _entry_of(name, USES)
        for other in sorted(imported):
            other_layer = layer_of(other)
            by_module = any(_within(other, m) for m in allowed if m.startswith("_"))
            if other_layer not in allowed and not by_module:
                found.append((name, other, f"{layer} may not import {other_layer}"))
            elif layer == "replay" and other_layer != "replay":
                if other not in REPLAY_SHARES:
                    found.append((name, other, "replay shares only REPLAY_SHARES"))
            elif uses is not None and other_layer == layer:
                if not any(_within(other, m) for m in USES[uses]):
                    found.append((name, other, f"{uses} may not import it"))
    return found


def import_graph():
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def test_every_module_has_a_layer():
    unplaced = [name for name in modules() if layer_of(name) is None]
    assert not unplaced, f"add these modules to LAYERS: {unplaced}"


def test_the_layers_form_no_loop():
    # the table itself: no layer may import one that may import it back
    for layer, allowed in MAY_IMPORT.items():
        for other in allowed - {layer}:
            other = other if other in MAY_IMPORT else layer_of(other)
            assert layer not in MAY_IMPORT[other], (layer, other)
    # and within a layer, the modules' uses form no loop: each uses only
    # modules listed before it (or under itself)
    seen = []
    for entry, uses in USES.items():
        assert all(m in seen or m.startswith(entry) for m in uses), entry
        seen.append(entry)


def test_each_module_imports_only_its_layer_and_those_below():
    assert layer_violations(import_graph()) == []


def test_the_layer_check_fails_on_an_import_upwards():
    # a lower layer importing a higher one, and the library's private
    # machinery crossing into replay, are both caught
    graph = {
        "sklearn_cscf._status": {"sklearn_cscf._explainer"},
        "sklearn_cscf._frames": {"sklearn_cscf._engine._block"},
        "sklearn_cscf._replay._verdict": {"sklearn_cscf._schema"},
        "sklearn_cscf._reporting": {"sklearn_cscf._driver"},
        "sklearn_cscf._driver": {"sklearn_cscf._engine._block"},  # allowed
        # module by module: the engine reads no frame, the search no model,
        # refinement asks the evaluator it is handed
        "sklearn_cscf._engine._targets": {
            "sklearn_cscf._frames",
            "sklearn_cscf._status",  # allowed
        },
        "sklearn_cscf._engine._block": {"sklearn_cscf._result"},  # allowed
        "sklearn_cscf._engine._brkga": {
            "sklearn_cscf._engine._memo",
            "sklearn_cscf._engine._hashing",  # allowed
        },
        "sklearn_cscf._engine._refine._fit": {
            "sklearn_cscf._engine._evaluator",
            "sklearn_cscf._engine._refine._moves",  # allowed
        },
    }
    assert [v[:2] for v in layer_violations(graph)] == [
        ("sklearn_cscf._engine._brkga", "sklearn_cscf._engine._memo"),
        ("sklearn_cscf._engine._refine._fit", "sklearn_cscf._engine._evaluator"),
        ("sklearn_cscf._engine._targets", "sklearn_cscf._frames"),
        ("sklearn_cscf._frames", "sklearn_cscf._engine._block"),
        ("sklearn_cscf._replay._verdict", "sklearn_cscf._schema"),
        ("sklearn_cscf._reporting", "sklearn_cscf._driver"),
        ("sklearn_cscf._status", "sklearn_cscf._explainer"),
    ]


def test_every_module_of_the_engine_has_its_uses():
    engine = [name for name in modules() if layer_of(name) == "engine"]
    assert engine and all(_entry_of(name, USES) for name in engine)
    # and each entry names a module there is
    known = {_relative(name) for name in modules()}
    assert {m for uses in USES.values() for m in uses} | set(USES) <= known


def private_names_imported(path):
    """``(module, name)`` of every private name ``path`` imports from the
    package (a private module itself, ``from pkg import _module``, is fine)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (
            node.level or (node.module or "").startswith("sklearn_cscf")
        ):
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                module = f"{node.module}.{alias.name}"
                if private and module.removeprefix("sklearn_cscf.") not in {
                    m.removeprefix("sklearn_cscf.") for m in modules()
                }:
                    found.append((node.module, alias.name))
    return found


def test_no_module_imports_another_modules_private_names():
    found = {
        name: names
        for name, path in modules().items()
        if (names := private_names_imported(path))
    }
    assert found == {}


def test_replay_reads_no_private_attribute_of_the_library():
    # replay takes the fitted explainer: it may read its public parameters
    # and fitted attributes only (no explainer._x, no module._y)
    for name, path in modules().items():
        if not name.startswith("sklearn_cscf._replay"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute):
                private = node.attr.startswith("_") and not node.attr.startswith("__")
                own = isinstance(node.value, ast.Name) and node.value.id == "self"
                assert not private or own, (name, node.lineno, node.attr)


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
    assert "sklearn_cscf._engine._block" in graph["sklearn_cscf._driver"]

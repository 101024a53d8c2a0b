"""The package imports its public names on first use (issue 25): a worker,
which imports the package to unpickle its task, loads only what the search
needs, and every public name still imports as before."""

import subprocess
import sys

import pytest

import sklearn_cscf


def test_a_worker_does_not_import_plotting_metrics_or_the_explainer():
    code = (
        "import sys, sklearn_cscf._driver; "
        "print(sorted(m for m in sys.modules if m.startswith('sklearn_cscf')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    loaded = done.stdout
    assert "sklearn_cscf._engine._block" in loaded  # what a block needs ...
    for heavy in ("plotting", "metrics", "_explainer", "_replay", "reporting"):
        assert f"sklearn_cscf.{heavy}'" not in loaded  # ... and not these


def test_every_public_name_imports():
    for name in sklearn_cscf.__all__:
        assert getattr(sklearn_cscf, name) is not None
    namespace = {}
    exec("from sklearn_cscf import *", namespace)
    assert {n for n in namespace if n != "__builtins__"} == set(sklearn_cscf.__all__)
    listed = dir(sklearn_cscf)
    assert set(sklearn_cscf.__all__) <= set(listed)
    assert {"reporting", "selection", "actions", "graph"} <= set(listed)
    assert sklearn_cscf.reporting.describe is sklearn_cscf.describe
    assert sklearn_cscf.SequentialCounterfactualExplainer.__module__ == (
        "sklearn_cscf._explainer"
    )


def test_an_unknown_name_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="no_such_name"):
        sklearn_cscf.no_such_name  # noqa: B018
    assert not hasattr(sklearn_cscf, "no_such_name")

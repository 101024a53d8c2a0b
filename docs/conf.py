"""Sphinx configuration: ``pip install -e ".[docs]" && sphinx-build docs docs/_build``."""

import sklearn_cscf

project = "sklearn-cscf"
author = "sklearn-cscf developers"
release = sklearn_cscf.__version__
version = release

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
autosummary_generate = False
numpydoc_show_class_members = False
html_theme = "alabaster"

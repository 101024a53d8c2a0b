"""Sphinx configuration.

Build (as CI does, warnings are errors)::

    pip install -e ".[docs]"
    sphinx-build -W --keep-going -b html docs docs/_build/html

The build runs offline: intersphinx reads the small inventories in
``_inventories/`` (see ``_inventories/make_inventories.py``), the gallery runs
``examples/*.py`` with small budgets and the notebooks show their stored
outputs (``docs/notebooks/check_outputs.py`` checks that those are current).
"""

import sys
from pathlib import Path

import sklearn_cscf

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE / "sphinxext"), str(HERE / "_inventories")]

from make_inventories import PROJECTS  # noqa: E402

project = "sklearn-cscf"
author = "sklearn-cscf developers"
copyright = "sklearn-cscf developers"
release = sklearn_cscf.__version__
version = release

extensions = [
    "myst_nb",  # Markdown pages and notebooks (includes myst_parser)
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx_gallery.gen_gallery",
]
root_doc = "index"
exclude_patterns = [
    "_build",
    "notebooks/*.py",  # check_outputs.py: a script, not a page
    "_inventories",
    "sphinxext",
    # sphinx-gallery writes these next to the generated pages, for download
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.codeobj.json",
]
html_theme = "alabaster"

# Every cross-reference must resolve: a broken link is a build error.
nitpicky = True

# -- intersphinx: offline -------------------------------------------------
# Each project's inventory ships in _inventories/ and holds just the objects
# these docs refer to; the links point at the projects' public pages.
intersphinx_mapping = {
    key: (project_.url, f"_inventories/{key}.inv") for key, project_ in PROJECTS.items()
}

# -- autodoc and numpydoc -------------------------------------------------
autosummary_generate = False
numpydoc_show_class_members = False
numpydoc_xref_param_type = True
numpydoc_xref_aliases = {
    "Action": "sklearn_cscf.Action",
    "FeatureGraph": "sklearn_cscf.FeatureGraph",
    "SequentialCounterfactualExplainer": (
        "sklearn_cscf.SequentialCounterfactualExplainer"
    ),
    "DataFrame": "pandas.DataFrame",
    "Series": "pandas.Series",
    "Generator": "numpy.random.Generator",
    "Axes": "matplotlib.axes.Axes",
    "Bunch": "sklearn.utils.Bunch",
    "mapping": ":term:`python:mapping`",
    "object": ":class:`python:object`",
}
# Words of parameter types that are not objects to link to.
numpydoc_xref_ignore = {
    "of",
    "shape",
    "n_samples",
    "n_features",
    "default",
    "instance",
    "label",
    "labels",
    "estimator",
    "matplotlib",
    "ignored",
    "Ignored",
}

# numpydoc validation of every documented object: all checks except
#   GL01  the summary may start on the line of the opening quotes (PEP 257);
#   ES01  an extended summary is optional: short methods need none;
#   SA01  a See Also section is optional (classes and functions have one);
#   EX01  examples are optional on methods (classes and functions have them);
#   RT02  scikit-learn names single return values (``self : object``), as do
#         the get_params/set_params the explainer inherits from scikit-learn.
numpydoc_validation_checks = {"all", "GL01", "ES01", "SA01", "EX01", "RT02"}
# Nothing is excluded from the validation.
numpydoc_validation_exclude = set()

# -- myst-nb: Markdown and the notebooks -------------------------------------
# The notebooks are stored with their outputs (for GitHub and Kaggle too) and
# shown as they are; CI checks that those outputs are current by running
# them: python docs/notebooks/check_outputs.py (--refresh rewrites them).
nb_execution_mode = "off"
nb_merge_streams = True
# Anything a notebook printed to stderr (a warning, say) is a build warning.
nb_output_stderr = "warn"

# -- sphinx-gallery: examples/ ----------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"\.py$",  # run every example, not only plot_*.py
    "within_subsection_order": "gallery_hooks.ExampleOrder",
    # the examples' command-line options: a small search budget
    "reset_argv": "gallery_hooks.reset_argv",
    "reset_modules": ("matplotlib", "gallery_hooks.remove_outputs"),
    "reset_modules_order": "both",
    "download_all_examples": False,
    "show_memory": False,
    "min_reported_time": 60,
    # links from the examples' code to this API
    "reference_url": {"sklearn_cscf": None},
}

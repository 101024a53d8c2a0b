"""Write the intersphinx inventories that let the docs link offline.

The documentation links to Python, NumPy, pandas, scikit-learn, joblib,
matplotlib and imbalanced-learn, but its build must not download their
``objects.inv`` (CI has no network). This script holds, for each project,
the public URL of its documentation and the few objects our docs refer to,
and writes them as small inventories next to it (``<key>.inv``), which
``docs/conf.py`` hands to ``sphinx.ext.intersphinx``. Each link points at the
real page, so the built HTML works online.

Add an object here when the docs start referring to a new one (the build
runs with ``nitpicky = True``, so a missing target fails it), then::

    python docs/_inventories/make_inventories.py          # rewrite the files
    python docs/_inventories/make_inventories.py --check  # CI: up to date?

The files use Sphinx's inventory format, version 2: four header lines, then
zlib-compressed lines ``name domain:role priority uri dispname`` (``$`` at
the end of ``uri`` stands for ``name``; a ``dispname`` of ``-`` is ``name``
itself). ``--check`` reads them back with Sphinx's own reader.
"""

import argparse
import sys
import zlib
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent


class Project(NamedTuple):
    name: str
    version: str
    url: str  # the root of the documentation; object URIs are relative to it
    objects: list  # (name, "domain:role", uri[, dispname])


def _api(module, names, role, page):
    """Objects of one module whose page is ``page.format(full_name)``."""
    return [
        (f"{module}.{name}", role, page.format(f"{module}.{name}") + "#$")
        for name in names
    ]


PROJECTS = {
    "python": Project(
        "Python",
        "3",
        "https://docs.python.org/3/",
        [
            ("None", "py:data", "library/constants.html#$"),
            ("True", "py:data", "library/constants.html#$"),
            ("False", "py:data", "library/constants.html#$"),
            ("bool", "py:class", "library/functions.html#$"),
            ("callable", "py:function", "library/functions.html#$"),
            ("dict", "py:class", "library/stdtypes.html#$"),
            ("float", "py:class", "library/functions.html#$"),
            ("int", "py:class", "library/functions.html#$"),
            ("list", "py:class", "library/stdtypes.html#$"),
            ("object", "py:class", "library/functions.html#$"),
            ("range", "py:class", "library/stdtypes.html#$"),
            ("str", "py:class", "library/stdtypes.html#$"),
            ("tuple", "py:class", "library/stdtypes.html#$"),
            ("TypeError", "py:exception", "library/exceptions.html#$"),
            ("ValueError", "py:exception", "library/exceptions.html#$"),
            ("collections.abc.Mapping", "py:class", "library/collections.abc.html#$"),
            ("argparse", "py:module", "library/argparse.html#module-$"),
            ("difflib", "py:module", "library/difflib.html#module-$"),
            ("iterable", "std:term", "glossary.html#term-iterable"),
            ("mapping", "std:term", "glossary.html#term-mapping"),
            ("sequence", "std:term", "glossary.html#term-sequence"),
            (
                "bltin-boolean-values",
                "std:label",
                "library/stdtypes.html#bltin-boolean-values",
                "Boolean Type - bool",
            ),
        ],
    ),
    "numpy": Project(
        "NumPy",
        "stable",
        "https://numpy.org/doc/stable/",
        [
            ("numpy", "py:module", "reference/index.html#module-$"),
            ("numpy.ndarray", "py:class", "reference/generated/$.html#$"),
            ("numpy.nan", "py:data", "reference/constants.html#$"),
            ("numpy.where", "py:function", "reference/generated/$.html#$"),
            ("numpy.interp", "py:function", "reference/generated/$.html#$"),
            ("numpy.random.Generator", "py:class", "reference/random/generator.html#$"),
            (
                "numpy.random.default_rng",
                "py:function",
                "reference/random/generator.html#$",
            ),
            ("numpy.random.RandomState", "py:class", "reference/random/legacy.html#$"),
            (
                "numpy.random.SeedSequence",
                "py:class",
                "reference/random/bit_generators/generated/$.html#$",
            ),
            ("array_like", "std:term", "glossary.html#term-array_like"),
            (
                "arrays.scalars",
                "std:label",
                "reference/arrays.scalars.html#arrays-scalars",
                "Scalars",
            ),
        ],
    ),
    "pandas": Project(
        "pandas",
        "stable",
        "https://pandas.pydata.org/docs/",
        [
            *_api(
                "pandas",
                [
                    "DataFrame",
                    "Series",
                    "Categorical",
                    "CategoricalDtype",
                    "Index",
                    "RangeIndex",
                ],
                "py:class",
                "reference/api/{}.html",
            ),
            *_api(
                "pandas",
                ["concat", "read_csv", "read_parquet"],
                "py:function",
                "reference/api/{}.html",
            ),
            *_api(
                "pandas.DataFrame",
                ["groupby", "query", "to_csv", "to_parquet"],
                "py:method",
                "reference/api/{}.html",
            ),
        ],
    ),
    "sklearn": Project(
        "scikit-learn",
        "stable",
        "https://scikit-learn.org/stable/",
        [
            *_api(
                "sklearn.base",
                ["BaseEstimator", "TransformerMixin"],
                "py:class",
                "modules/generated/{}.html",
            ),
            *_api(
                "sklearn.base", ["clone"], "py:function", "modules/generated/{}.html"
            ),
            *_api(
                "sklearn.compose",
                ["ColumnTransformer"],
                "py:class",
                "modules/generated/{}.html",
            ),
            *_api(
                "sklearn.compose",
                ["make_column_selector", "make_column_transformer"],
                "py:function",
                "modules/generated/{}.html",
            ),
            *_api(
                "sklearn.ensemble",
                ["HistGradientBoostingClassifier"],
                "py:class",
                "modules/generated/{}.html",
            ),
            *_api(
                "sklearn.exceptions",
                ["NotFittedError"],
                "py:class",
                "modules/generated/{}.html",
            ),
            *_api(
                "sklearn.frozen",
                ["FrozenEstimator"],
                "py:class",
                "modules/generated/{}.html",
            ),
            *_api(
                "sklearn.linear_model",
                ["LogisticRegression"],
                "py:class",
                "modules/generated/{}.html",
            ),
            *_api(
                "sklearn.metrics",
                ["ConfusionMatrixDisplay"],
                "py:class",
                "modules/generated/{}.html",
            ),
            *_api(
                "sklearn.metrics",
                ["balanced_accuracy_score"],
                "py:function",
                "modules/generated/{}.html",
            ),
            *_api(
                "sklearn.model_selection",
                ["GridSearchCV", "PredefinedSplit"],
                "py:class",
                "modules/generated/{}.html",
            ),
            *_api(
                "sklearn.model_selection",
                ["train_test_split"],
                "py:function",
                "modules/generated/{}.html",
            ),
            *_api(
                "sklearn.pipeline",
                ["Pipeline"],
                "py:class",
                "modules/generated/{}.html",
            ),
            *_api(
                "sklearn.pipeline",
                ["make_pipeline"],
                "py:function",
                "modules/generated/{}.html",
            ),
            *_api(
                "sklearn.preprocessing",
                ["OneHotEncoder", "OrdinalEncoder", "StandardScaler"],
                "py:class",
                "modules/generated/{}.html",
            ),
            *_api("sklearn.utils", ["Bunch"], "py:class", "modules/generated/{}.html"),
            ("random_state", "std:term", "glossary.html#term-random_state"),
            ("n_jobs", "std:term", "glossary.html#term-n_jobs"),
        ],
    ),
    "joblib": Project(
        "joblib",
        "stable",
        "https://joblib.readthedocs.io/en/stable/",
        [
            *_api("joblib", ["Parallel"], "py:class", "generated/{}.html"),
            *_api("joblib", ["dump", "load"], "py:function", "generated/{}.html"),
        ],
    ),
    "matplotlib": Project(
        "Matplotlib",
        "stable",
        "https://matplotlib.org/stable/",
        [
            *_api("matplotlib.axes", ["Axes"], "py:class", "api/_as_gen/{}.html"),
            *_api(
                "matplotlib.axes.Axes",
                [
                    "annotate",
                    "axhline",
                    "barh",
                    "errorbar",
                    "legend",
                    "plot",
                    "scatter",
                ],
                "py:method",
                "api/_as_gen/{}.html",
            ),
            *_api("matplotlib.figure", ["Figure"], "py:class", "api/_as_gen/{}.html"),
            *_api("matplotlib.lines", ["Line2D"], "py:class", "api/_as_gen/{}.html"),
            *_api(
                "matplotlib.patches",
                ["PathPatch", "Polygon", "Rectangle"],
                "py:class",
                "api/_as_gen/{}.html",
            ),
            ("matplotlib.text.Annotation", "py:class", "api/text_api.html#$"),
            ("matplotlib.legend.Legend", "py:class", "api/legend_api.html#$"),
            (
                "matplotlib.collections.PathCollection",
                "py:class",
                "api/collections_api.html#$",
            ),
            *[
                (f"matplotlib.container.{name}", "py:class", "api/container_api.html#$")
                for name in ("BarContainer", "ErrorbarContainer")
            ],
            *_api(
                "matplotlib.pyplot",
                ["subplots"],
                "py:function",
                "api/_as_gen/{}.html",
            ),
        ],
    ),
    "imblearn": Project(
        "imbalanced-learn",
        "stable",
        "https://imbalanced-learn.org/stable/",
        [
            *_api(
                "imblearn.pipeline",
                ["Pipeline"],
                "py:class",
                "references/generated/{}.html",
            ),
            *_api(
                "imblearn.pipeline",
                ["make_pipeline"],
                "py:function",
                "references/generated/{}.html",
            ),
            *_api(
                "imblearn.under_sampling",
                ["RandomUnderSampler"],
                "py:class",
                "references/generated/{}.html",
            ),
        ],
    ),
}


def _line(entry):
    name, role, uri, *dispname = entry
    uri = uri.replace("$.html", f"{name}.html")  # "$" stays only at the end
    return f"{name} {role} 1 {uri} {dispname[0] if dispname else '-'}"


def inventory_text(project):
    """The header and the (uncompressed) object lines of one inventory."""
    header = (
        "# Sphinx inventory version 2\n"
        f"# Project: {project.name}\n"
        f"# Version: {project.version}\n"
        "# The remainder of this file is compressed using zlib.\n"
    )
    body = "".join(_line(entry) + "\n" for entry in sorted(project.objects))
    return header, body


def inventory_bytes(project):
    header, body = inventory_text(project)
    return header.encode() + zlib.compress(body.encode(), 9)


def read_back(path):
    """Load an inventory with Sphinx's reader: ``{(role, name): uri}``."""
    from sphinx.util.inventory import InventoryFile

    with open(path, "rb") as stream:
        inventory = InventoryFile.load(stream, "", lambda base, uri: uri)
    # Sphinx >= 8.2 returns an object; older ones a dict of dicts
    data = getattr(inventory, "data", inventory)
    return {
        (role, name): item[2] if isinstance(item, tuple) else item.uri
        for role, items in data.items()
        for name, item in items.items()
    }


def expected(project):
    """What :func:`read_back` must find in the file of ``project``."""
    found = {}
    for entry in project.objects:
        line = _line(entry)
        name, role, _, uri, _ = line.split(" ", 4)
        found[(role, name)] = uri[:-1] + name if uri.endswith("$") else uri
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 if a file is missing or differs from this script",
    )
    args = parser.parse_args(argv)
    stale = []
    for key, project in PROJECTS.items():
        path = HERE / f"{key}.inv"
        if args.check:
            if not path.exists() or read_back(path) != expected(project):
                stale.append(path.name)
            continue
        path.write_bytes(inventory_bytes(project))
        print(f"wrote {path.name}: {len(project.objects)} objects ({project.url})")
    if stale:
        print(
            f"Stale inventories: {', '.join(stale)}; run "
            "python docs/_inventories/make_inventories.py",
            file=sys.stderr,
        )
        return 1
    if args.check:
        print(f"{len(PROJECTS)} inventories up to date.")
    return 0


if __name__ == "__main__":
    sys.exit(main())

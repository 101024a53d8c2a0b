"""sphinx-gallery hooks for ``examples/``: order, small budgets, no leftovers.

``docs/conf.py`` names these by their import path (a string), which keeps the
Sphinx configuration picklable.
"""

from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# The order of the gallery: from the first run to your own data.
ORDER = [
    "quickstart.py",
    "worked_example.py",
    "adult_cscf_vs_scf.py",
    "german_credit.py",
    "your_own_data.py",
    "plotting_gallery.py",
    "tune_budget.py",
    "choose_a_plan.py",
    "beyond_the_paper.py",
]

# The examples default to the paper's budget (population 500, 150
# generations), far too slow for a docs build; the gallery runs each with the
# options below, as `python examples/<name> <options>` would.
SMALL_BUDGET = [
    "--n-instances",
    "3",
    "--population-size",
    "100",
    "--generations",
    "30",
    "--seed",
    "0",
]
ARGV = {
    "beyond_the_paper.py": SMALL_BUDGET,
    "quickstart.py": SMALL_BUDGET,
    "worked_example.py": [],  # no options: it is small already
    "adult_cscf_vs_scf.py": SMALL_BUDGET,
    "german_credit.py": SMALL_BUDGET,
    "your_own_data.py": SMALL_BUDGET,
    # several people, so that the flow and the probability plots have data
    "plotting_gallery.py": [
        "--n-instances",
        "6",
        "--population-size",
        "100",
        "--generations",
        "30",
        "--seed",
        "0",
    ],
    # a tiny grid of four budgets, six people: a few seconds
    "tune_budget.py": ["--quick", "--n-instances", "6", "--seed", "0"],
    # ten people (the example's default), so that the methods disagree for one
    "choose_a_plan.py": [
        "--n-instances",
        "10",
        "--population-size",
        "100",
        "--generations",
        "30",
        "--seed",
        "0",
    ],
}


class ExampleOrder:
    """Sort key of ``within_subsection_order``: the order of :data:`ORDER`."""

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename):
        name = Path(filename).name
        return (ORDER.index(name), name) if name in ORDER else (len(ORDER), name)


def reset_argv(gallery_conf, script_vars):
    """The command-line options of an example (``sys.argv[1:]``)."""
    name = Path(script_vars["src_file"]).name
    if name not in ARGV:
        raise KeyError(
            f"examples/{name} has no command-line options in "
            "docs/sphinxext/gallery_hooks.py ARGV; add them there."
        )
    return list(ARGV[name])


_files_before = {}


def remove_outputs(gallery_conf, fname, when):
    """Delete the files an example wrote (its CSV) after it ran.

    sphinx-gallery runs each example in the examples directory, where the
    example writes its output as it does when run from the command line;
    only files that were not there before the example ran are removed.
    """
    if fname is None:
        return
    files = {path for path in EXAMPLES.iterdir() if path.is_file()}
    if when == "before":
        _files_before[fname] = files
        return
    for path in files - _files_before.pop(fname, files):
        path.unlink()

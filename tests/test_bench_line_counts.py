"""benchmarks/line_counts.py splits a module's lines into code, docstrings,
comments and blank lines: docs/benchmarks.md reports the package's size for
issue 34 with it, so a docstring counted as code (or the reverse) would be a
wrong claim."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import line_counts  # noqa: E402

SOURCE = '''"""A module.

Its docstring has three lines."""

# a comment alone


def f(x):
    """One line."""
    y = x + 1  # a comment after code is code
    text = """not a docstring,
    a string of two lines"""
    return y, text


class C:
    """A class."""

    def g(self):
        return 1
'''


def test_each_line_is_counted_once_by_what_it_holds():
    counts = line_counts.counts(SOURCE)
    assert counts == {
        "lines": 20,
        "code": 8,  # def f, y, the two lines of text, return, class C, def g, return
        "docstrings": 5,  # the module's three, f's and C's one each
        "comments": 1,
        "blank": 6,
    }
    assert sum(counts[kind] for kind in line_counts.KINDS[1:]) == counts["lines"]

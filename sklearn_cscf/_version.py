"""The version of sklearn-cscf, in one place: the package's ``__version__``,
the one a fitted explainer's pickle records, and the wheel's (pyproject)."""

__version__ = "0.1.0.dev0"

"""The README's first plan on one's own data runs as written."""

import io
import re
from contextlib import redirect_stdout
from pathlib import Path

from sklearn_cscf.datasets import load_german_credit

ROOT = Path(__file__).resolve().parents[1]
MARKER = "<!-- tests/test_readme.py runs this snippet -->"


def first_plan_snippet():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert MARKER in text, "the README lost its first-plan snippet"
    after = text.split(MARKER, 1)[1]
    match = re.match(r"\s*```python\n(.*?)```", after, flags=re.S)
    assert match, "the marker must come right before a python code block"
    return match.group(1)


def test_the_first_plan_snippet_has_at_most_six_library_lines():
    code = first_plan_snippet()
    statements = [line for line in code.splitlines() if line.strip()]
    # lines that call the library (pandas' own lines do not count)
    library = [
        line
        for line in statements
        if re.search(r"sklearn_cscf|make_actions|Explainer|explainer|show\(", line)
        or line.startswith(" ")  # a continuation line of a library call
    ]
    assert len(library) <= 6, library


def test_the_first_plan_snippet_runs_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # the reader's CSV: the built-in German Credit data written out as the
    # README says
    load_german_credit().frame.to_csv("credit.csv", index=False)
    printed = io.StringIO()
    with redirect_stdout(printed):
        exec(compile(first_plan_snippet(), "README.md", "exec"), {"__name__": "r"})
    text = printed.getvalue()
    assert text.count("Pareto-optimal sequence(s)") == 2
    # every step line shows an action the snippet declared
    steps = re.findall(r"^\s+\d+\. (\w+)", text, flags=re.M)
    assert steps
    assert set(steps) <= {
        "set_credit_amount",
        "decrease_loan_duration",
        "set_existing_credit",
    }
    # the README shows the first plan of the first person as printed
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = readme.split(MARKER, 1)[1].split("```text\n", 1)[1].split("...\n```")[0]
    for line in shown.splitlines()[1:]:
        assert line in text, line


def test_the_readme_says_what_the_plot_extra_adds():
    # issue 37: "[plot]" installs nothing new, matplotlib comes with pymoo
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    floor = re.search(r'^plot = \["matplotlib>=([\d.]+)"\]', pyproject, re.M)
    assert floor, "the plot extra is matplotlib with a floor"
    line = next(line for line in readme.splitlines() if '".[plot]"' in line)
    assert f"matplotlib >= {floor.group(1)}" in line
    assert "pymoo already installs a matplotlib" in readme
    assert re.search(r'^\s+"pymoo>=', pyproject, re.M)  # which brings it


def test_the_docs_price_actions_with_one_meaning():
    # issue 37: costs= meant two things; the docs, notebooks and examples
    # use prices= (the user guide and the changelog also name the old form)
    shown = [
        ROOT / "README.md",
        ROOT / "docs" / "from_dice.md",
        *sorted((ROOT / "docs" / "notebooks").glob("*.ipynb")),
        *sorted((ROOT / "examples").glob("*.py")),
    ]
    for path in shown:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\bcosts=\{", text), path.name
    guide = (ROOT / "docs" / "user_guide.md").read_text(encoding="utf-8")
    assert "**One price, one meaning.**" in guide
    assert "prices=" in (ROOT / "docs" / "from_dice.md").read_text(encoding="utf-8")


def test_from_dice_says_to_explain_many_people_in_one_call():
    text = (ROOT / "docs" / "from_dice.md").read_text(encoding="utf-8")
    section = text.split("## Many people: one call, not a loop", 1)[1]
    section = section.split("\n## ", 1)[0]
    assert "explainer.explain(rejected)" in section
    assert re.search(r"# not: \[explainer\.explain\(rejected\.iloc", section)
    assert "CPU s" in section


def test_every_timing_says_what_it_measured():
    # issue 37: "12 s", "2 s", "4.5 min" were wall-clock on an idle machine,
    # 77 s, 59 s and 42 minutes on a shared one, and nothing said which
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "**Timings in this README**" in readme
    figure = re.compile(r"(?<![\w.])~?\d+(?:\.\d+)?\s?(?:s|min|seconds|minutes)\b")
    for chunk in readme.split("\n\n"):  # paragraphs, and groups of commands
        if figure.search(chunk):
            assert re.search(r"CPU|wall-clock", chunk), chunk[:200]
    # the main job's and the tests' figures name the command that measures them
    assert "OMP_NUM_THREADS=1 /usr/bin/time -v python -m pytest" in readme
    assert "`OMP_NUM_THREADS=1 /usr/bin/time -v python -m\nsklearn_cscf`" in readme

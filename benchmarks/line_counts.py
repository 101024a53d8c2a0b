"""How large the package is at given revisions: lines, code, docstrings, comments.

Issue 34 asks for a package smaller "for the same features". A revision's
lines (what ``find sklearn_cscf -name '*.py' | xargs cat | wc -l`` counts) are
split here into code (a line holding a token that is neither a comment nor
part of a docstring), docstrings, comment-only lines and blank lines, so that
a change adding documentation can be told from one adding code. With
``--commits``, every commit on the first-parent line between the first and the
last revision is listed with what it changed, so that the commits that added
features can be set apart from those that only reorganised.

    python benchmarks/line_counts.py d684f9f HEAD
    python benchmarks/line_counts.py d684f9f HEAD --commits

Read from git (``git show``), not from the working tree: uncommitted changes
do not count.
"""

import argparse
import ast
import io
import subprocess
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "sklearn_cscf"
KINDS = ("lines", "code", "docstrings", "comments", "blank")
SKIPPED = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
SKIPPED.add(tokenize.ENDMARKER)
DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def git(*args):
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def counts(source):
    """``{kind: lines}`` of one module's source."""
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, DOCUMENTED) and ast.get_docstring(node) is not None:
            first = node.body[0]
            docstrings.update(range(first.lineno, first.end_lineno + 1))
    code, comments = set(), set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments.add(token.start[0])
        elif token.type not in SKIPPED:
            lines = range(token.start[0], token.end[0] + 1)
            code.update(line for line in lines if line not in docstrings)
    n = source.count("\n")
    return {
        "lines": n,
        "code": len(code),
        "docstrings": len(docstrings),
        "comments": len(comments - code),
        "blank": n - len(code | docstrings | comments),
    }


def at(revision):
    """``{kind: lines}`` of the package's modules at ``revision``."""
    total = dict.fromkeys(KINDS, 0)
    for path in git("ls-tree", "-r", "--name-only", revision, PACKAGE).split():
        if path.endswith(".py"):
            for kind, n in counts(git("show", f"{revision}:{path}")).items():
                total[kind] += n
    return total


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revisions", nargs="+", help="git revisions, e.g. d684f9f HEAD")
    parser.add_argument(
        "--commits",
        action="store_true",
        help="each first-parent commit from the first revision to the last",
    )
    args = parser.parse_args(argv)
    print(f"{'revision':<12}" + "".join(f"{kind:>12}" for kind in KINDS))
    for revision in args.revisions:
        row = at(revision)
        print(f"{revision:<12}" + "".join(f"{row[kind]:>12,}" for kind in KINDS))
    if args.commits and len(args.revisions) > 1:
        first, last = args.revisions[0], args.revisions[-1]
        log = git(
            "log", "--first-parent", "--reverse", "--format=%h %s", f"{first}..{last}"
        )
        print(f"\n{'commit':<10}{'lines':>8}{'code':>8}  subject")
        before = at(first)
        for line in log.splitlines():
            commit, subject = line.split(" ", 1)
            after = at(commit)
            change = {kind: after[kind] - before[kind] for kind in KINDS}
            if change["lines"] or change["code"]:
                print(
                    f"{commit:<10}{change['lines']:>+8}{change['code']:>+8}  "
                    f"{subject[:70]}"
                )
            before = after


if __name__ == "__main__":
    main()

"""The paper's Sect. 5 on its own network: Fig. 5, Fig. 6 and the order statistics.

Runs the network the paper explains (``bench_reference.py``) on its 100
rejected Adult test instances with the paper's continuous Adult actions, with
the paper's graph (CSCF) and without it (SCF), at the paper's budget
(population 500, 150 generations), keeping the whole front
(``max_plans=None, all_orders=True, all_values=True``). Every statistic counts
every sequence of that front, as the paper's figures do ("we aggregated over
all optimal solution sequences, i.e. the whole final Pareto-fronts").

It writes to ``--figures`` (default ``docs/_static/paper``):

- ``flow_scf.png``, ``flow_cscf.png``: Fig. 5 (a) and (b), the action flows;
- ``flow_scf_t2.png``, ``flow_cscf_t2.png``: Fig. 5 (c) and (d), the
  sequences of at most two steps;
- ``probability_by_step.png``: Fig. 6, the median probability of ``>50K``
  after each action at each step, with a 95 % bootstrap interval

(and, with ``--frames DIR``, the two explanation frames as CSV there). It
prints the statistics the paper reports (the share of rows with a sequence,
sequences per row, whether ``add_education`` ever follows
``increase_capital_gain``, the most frequent first action, how often
``change_working_hours`` comes before ``increase_capital_gain``, the
probability after each action by step, CSCF against SCF on the least
undiscounted effort of at most two steps) and rewrites the generated blocks of
``--doc`` (default ``docs/paper.md``, between ``<!-- generated: NAME -->`` and
``<!-- /generated: NAME -->``); ``--doc none`` leaves it alone.

    python benchmarks/bench_paper_network.py [--n-instances 100] [--n-jobs -1]
        [--figures docs/_static/paper] [--doc docs/paper.md]
"""

import argparse
import io
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import sklearn  # noqa: E402
from PIL import Image  # noqa: E402

import sklearn_cscf  # noqa: E402
from sklearn_cscf import SequentialCounterfactualExplainer  # noqa: E402
from sklearn_cscf.datasets import adult_feature_graph  # noqa: E402
from sklearn_cscf.plotting import (
    ActionFlowDisplay,
    ProbabilityByStepDisplay,
    action_colors,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_reference import (  # noqa: E402
    DEFAULT_REFERENCE,
    ReferenceNetwork,
    reference_actions,
    training_rows,
)

ROOT = Path(__file__).resolve().parent.parent
EDU, GAIN, HOURS = "add_education", "increase_capital_gain", "change_working_hours"
# the paper's names for the actions (Fig. 5 and 6)
PAPER_NAMES = {
    "add_education": "addEdu",
    "change_capital_loss": "chCapLoss",
    "change_working_hours": "chWorkHrs",
    "enlist": "enlist",
    "increase_capital_gain": "chCapGain",
    "wait_years": "waitYears",
}
METHODS = (("CSCF", True), ("SCF", False))
DPI = 100


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-dir", type=Path, default=DEFAULT_REFERENCE)
    parser.add_argument("--n-instances", type=positive_int, default=100)
    parser.add_argument("--population-size", type=positive_int, default=500)
    parser.add_argument("--generations", type=positive_int, default=150)
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--figures", type=Path, default=ROOT / "docs" / "_static" / "paper"
    )
    parser.add_argument(
        "--frames", type=Path, help="also write the two explanation frames (CSV) here"
    )
    parser.add_argument(
        "--doc",
        default=str(ROOT / "docs" / "paper.md"),
        help="the page whose generated blocks to rewrite ('none': none)",
    )
    return parser.parse_args(argv)


# ---------------------------------------------------------------------- #
# the runs
# ---------------------------------------------------------------------- #
def explain(network, instances, use_graph, args):
    """The whole front of every instance, and the wall-clock seconds."""
    explainer = SequentialCounterfactualExplainer(
        network,
        actions=reference_actions(),
        feature_graph=adult_feature_graph() if use_graph else None,
        population_size=args.population_size,
        n_generations=args.generations,
        n_jobs=args.n_jobs,
        random_state=args.seed,
        max_plans=None,
        all_orders=True,
        all_values=True,
    ).fit(training_rows(instances))
    start = time.perf_counter()
    frame = explainer.explain(instances)
    return frame, time.perf_counter() - start


def sequences(frame):
    """One row per reported sequence: its instance, actions in order, costs."""
    ok = frame[frame["status"] == "ok"].sort_values(["instance", "solution", "step"])
    grouped = ok.groupby(["instance", "solution"], sort=True)
    # whole education levels gained by add_education (the graph's tau reads
    # floor(education_num), so a step within one level earns no discount)
    edu = ok[ok["action"] == EDU]
    levels = np.floor(edu["new_number"].astype(float)) - np.floor(
        edu["old_number"].astype(float)
    )
    return pd.DataFrame(
        {
            "plan": grouped["plan"].first(),
            "actions": grouped["action"].agg(lambda a: tuple(a.astype(str))),
            "sequence_cost": grouped["sequence_cost"].first(),
            "sequence_effort": grouped["sequence_effort"].first(),
            "edu_levels": levels.groupby([edu["instance"], edu["solution"]]).sum(),
        }
    ).reset_index()


# ---------------------------------------------------------------------- #
# the statistics
# ---------------------------------------------------------------------- #
def before(actions, first, second):
    """Whether ``first`` comes before ``second`` (both taken), else None."""
    if first in actions and second in actions:
        return actions.index(first) < actions.index(second)
    return None


def order_share(table, first, second):
    """(sequences with ``first`` before ``second``, sequences with both)."""
    flags = [before(a, first, second) for a in table["actions"]]
    flags = [f for f in flags if f is not None]
    return sum(flags), len(flags)


def cheapest_orders(table):
    """The cheapest order of each plan (what ``all_orders=False`` reports)."""
    ranked = table.sort_values(["instance", "plan", "sequence_cost", "solution"])
    return ranked.groupby(["instance", "plan"], sort=False).head(1)


def quartiles(counts):
    return tuple(np.percentile(counts, [50, 25, 75])) if len(counts) else (np.nan,) * 3


def edu_after_gain_within_level(table):
    """Sequences with add_education after increase_capital_gain whose
    education step stays within one whole level (so both orders cost the same)."""
    after = [before(a, GAIN, EDU) is True for a in table["actions"]]
    return int((table.loc[after, "edu_levels"] == 0).sum())


def statistics(frame, table, n_rows):
    cheapest = cheapest_orders(table)
    return {
        "rows": n_rows,
        "solved": table["instance"].nunique(),
        "n_sequences": len(table),
        "n_plans": len(cheapest),
        "per_row": quartiles(table.groupby("instance").size()),
        "plans_per_row": quartiles(cheapest.groupby("instance").size()),
        "lengths": table["actions"].str.len().value_counts().sort_index(),
        "firsts": table["actions"].str[0].value_counts(),
        "edu_after_gain": order_share(table, GAIN, EDU),
        "edu_after_gain_tied": edu_after_gain_within_level(table),
        "hours_before_gain": order_share(table, HOURS, GAIN),
        # the same over the cheapest order of each plan
        "cheapest_firsts": cheapest["actions"].str[0].value_counts(),
        "cheapest_edu_after_gain": order_share(cheapest, GAIN, EDU),
        "cheapest_hours_before_gain": order_share(cheapest, HOURS, GAIN),
        "ok_steps": frame[frame["status"] == "ok"],
    }


def probability_table(stats):
    """Median probability of >50K after each action at each step, per method."""
    rows = []
    for method, s in stats.items():
        steps = s["ok_steps"]
        for (action, step), p in steps.groupby(["action", "step"])["target_proba"]:
            rows.append((str(action), int(step), method, p.median(), len(p)))
    return pd.DataFrame(rows, columns=["action", "step", "method", "median", "n"])


def effort_two_steps(tables):
    """CSCF against SCF: each row's least effort (sum of b) over T <= 2."""
    least = {
        method: short.groupby("instance")["sequence_effort"].min()
        for method, t in tables.items()
        for short in [t[t["actions"].str.len() <= 2]]
    }
    both = pd.concat(least, axis=1, join="inner")
    a, b = both["CSCF"], both["SCF"]
    diff = (b - a) / np.maximum(a, b)  # the paper's (B - A) / max(A, B)
    return diff


# ---------------------------------------------------------------------- #
# the figures
# ---------------------------------------------------------------------- #
def save(fig, path):
    """A PNG of 256 colours: a third of the size, no visible difference."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    plt.close(fig)
    Image.open(buffer).convert("RGB").quantize(256).save(path, optimize=True)
    return path


def flow_figure(frame, method, colors, max_length, path):
    fig, ax = plt.subplots(figsize=(9, 5), layout="constrained")
    ActionFlowDisplay.from_explanations(
        frame, solutions="all", max_length=max_length, colors=colors, ax=ax
    )
    scope = f"at most {max_length} steps" if max_length else "all lengths"
    ax.set_title(
        f"{method}, the paper's Adult network: every Pareto-optimal sequence ({scope})"
    )
    return save(fig, path)


def probability_figure(frames, colors, path):
    fig, axes = plt.subplots(
        2, 1, figsize=(9, 8), sharex=True, sharey=True, layout="constrained"
    )
    for ax, (method, frame) in zip(axes, frames.items()):
        ProbabilityByStepDisplay.from_explanations(
            frame,
            measure="level",
            statistic="median",
            solutions="all",
            confidence=0.95,
            random_state=0,
            threshold=0.5,
            colors=colors,
            ax=ax,
        )
        ax.set_title(f"{method}: median P(>50K) after each action, 95 % interval")
    # the data's range rather than [0, 1]: refined sequences stop near the
    # threshold, so the medians crowd just below it
    axes[0].autoscale(axis="y")
    axes[0].set_ylim(top=max(axes[0].get_ylim()[1], 0.55))
    axes[0].set_xlabel("")
    return save(fig, path)


# ---------------------------------------------------------------------- #
# the report
# ---------------------------------------------------------------------- #
def pct(k, n):
    return f"{100 * k / n:.0f} %" if n else "n/a"


def fraction(pair):
    k, n = pair
    return f"{k} of {n} ({pct(k, n)})" if n else "0 of 0"


def library_commit():
    """The git commit of the sklearn_cscf imported (benchmarks import the
    installed package, not the one next to them), "+" if it has changes."""
    root = Path(sklearn_cscf.__file__).resolve().parent.parent
    try:
        git = ["git", "-C", str(root)]
        head = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        changes = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no", "sklearn_cscf"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+" if changes else "")


def run_block(stats, walls, args):
    n_rows = stats["CSCF"]["rows"]
    return (
        f"sklearn-cscf {sklearn_cscf.__version__} (commit {library_commit()}), "
        "scikit-learn "
        f"{sklearn.__version__}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPU(s), `n_jobs={args.n_jobs}`, seed {args.seed}; "
        f"{n_rows} instances, population {args.population_size}, "
        f"{args.generations} generations; wall: CSCF {walls['CSCF']:.0f} s, "
        f"SCF {walls['SCF']:.0f} s."
    )


def share(pair):
    k, n = pair
    return k / n if n else np.nan


def statistics_block(stats):
    """The paper's counts and order statistics, beside this run's, and a verdict."""
    cscf, scf = stats["CSCF"], stats["SCF"]

    def row(what, paper, cell, verdict):
        return f"| {what} | {paper} | {cell(cscf)} | {cell(scf)} | {verdict} |"

    def spread(key):
        return lambda s: "{:g} [{:g}, {:g}]".format(*s[key])

    def first(s):
        top = s["firsts"].index[0]
        return f"`{top}`, {pct(s['firsts'].iloc[0], s['n_sequences'])}"

    def edu_share(s):
        return pct(s["firsts"].get(EDU, 0), s["n_sequences"])

    short = {m: s["lengths"].loc[:3].sum() / s["n_sequences"] for m, s in stats.items()}
    edu_after = cscf["edu_after_gain"][0]
    hours = {m: share(s["hours_before_gain"]) for m, s in stats.items()}
    edu_first = {
        m: share((s["firsts"].get(EDU, 0), s["n_sequences"])) for m, s in stats.items()
    }
    return "\n".join(
        [
            "| | the paper (Sect. 5) | CSCF here | SCF here | agrees? |",
            "|---|---|---|---|---|",
            row(
                "rows with a sequence",
                "all 100 Adult experiments kept",
                lambda s: fraction((s["solved"], s["rows"])),
                "yes" if cscf["solved"] == scf["solved"] == cscf["rows"] else "no",
            ),
            row(
                "Pareto-optimal sequences per row, median [q1, q3]",
                "median 7 on Adult (5.1)",
                spread("per_row"),
                "no, more (see below)"
                if cscf["per_row"][0] > 7
                else "no, fewer"
                if cscf["per_row"][0] < 7
                else "yes",
            ),
            row(
                "distinct plans (sets of actions) per row, median [q1, q3]",
                "not reported",
                spread("plans_per_row"),
                "",
            ),
            row(
                "sequences by length (steps: count)",
                "minimal-cost sequences usually up to three steps, few longer "
                "(5.2, Fig. 5 a, b)",
                lambda s: ", ".join(f"{k}: {v}" for k, v in s["lengths"].items()),
                f"{'yes' if min(short.values()) >= 0.75 else 'partly'}: "
                f"{100 * short['CSCF']:.0f} % (CSCF) and {100 * short['SCF']:.0f} % "
                "(SCF) have at most three steps",
            ),
            row(
                "most frequent first action",
                "`addEdu` in CSCF (Fig. 5 b, d); SCF more evenly spread (a, c)",
                first,
                "yes"
                if cscf["firsts"].index[0] == EDU
                else f"no; `add_education` first in {edu_share(cscf)} (CSCF) "
                f"against {edu_share(scf)} (SCF): "
                + (
                    "more often with the graph"
                    if edu_first["CSCF"] > edu_first["SCF"]
                    else "not more often with the graph"
                ),
            ),
            row(
                "`add_education` after `increase_capital_gain`, of the sequences "
                "with both",
                'never in CSCF: "no single sequence where addEdu would appear '
                'after chCapGain" (5.2)',
                lambda s: fraction(s["edu_after_gain"]),
                "yes"
                if edu_after == 0
                else f"no: {edu_after} sequences in CSCF, "
                f"{cscf['edu_after_gain_tied']} of them with an education step "
                "within one whole level (see below)",
            ),
            row(
                "`change_working_hours` before `increase_capital_gain`, of the "
                "sequences with both",
                "more often in CSCF than in SCF (5.2)",
                lambda s: fraction(s["hours_before_gain"]),
                "yes" if hours["CSCF"] > hours["SCF"] else "no",
            ),
        ]
    )


def cheapest_block(stats):
    """The order statistics over the cheapest order of each plan."""
    cscf, scf = stats["CSCF"], stats["SCF"]

    def first(s):
        top = s["cheapest_firsts"].index[0]
        return f"`{top}`, {pct(s['cheapest_firsts'].iloc[0], s['n_plans'])}"

    return "\n".join(
        [
            "| over the cheapest order of each plan | CSCF | SCF |",
            "|---|---|---|",
            f"| plans | {cscf['n_plans']} | {scf['n_plans']} |",
            f"| most frequent first action | {first(cscf)} | {first(scf)} |",
            "| `add_education` first | "
            + " | ".join(
                pct(s["cheapest_firsts"].get(EDU, 0), s["n_plans"]) for s in (cscf, scf)
            )
            + " |",
            "| `add_education` after `increase_capital_gain` | "
            f"{fraction(cscf['cheapest_edu_after_gain'])} | "
            f"{fraction(scf['cheapest_edu_after_gain'])} |",
            "| `change_working_hours` before `increase_capital_gain` | "
            f"{fraction(cscf['cheapest_hours_before_gain'])} | "
            f"{fraction(scf['cheapest_hours_before_gain'])} |",
        ]
    )


def first_actions_block(stats):
    """The share of sequences (and of cheapest orders) starting with each action."""
    cscf, scf = stats["CSCF"], stats["SCF"]
    lines = [
        "| first action | paper's name | CSCF, every sequence | SCF, every sequence "
        "| CSCF, cheapest order of each plan | SCF, cheapest order of each plan |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for action in sorted(
        PAPER_NAMES, key=lambda a: -cscf["firsts"].get(a, 0) - scf["firsts"].get(a, 0)
    ):
        cells = [pct(s["firsts"].get(action, 0), s["n_sequences"]) for s in (cscf, scf)]
        cells += [
            pct(s["cheapest_firsts"].get(action, 0), s["n_plans"]) for s in (cscf, scf)
        ]
        lines.append(f"| `{action}` | {PAPER_NAMES[action]} | {' | '.join(cells)} |")
    lines.append(
        f"| of | | {cscf['n_sequences']} sequences | {scf['n_sequences']} sequences "
        f"| {cscf['n_plans']} plans | {scf['n_plans']} plans |"
    )
    return "\n".join(lines)


def reached_block(proba, level=0.5 - 1e-3):
    """Fig. 6 read as the paper reads it: where each median reaches 0.5."""
    paper = {
        "increase_capital_gain": "almost at 1 (on its own)",
        "add_education": "almost at 1 (on its own)",
        "wait_years": "2",
        "enlist": "2",
        "change_working_hours": "3",
        "change_capital_loss": "3",
    }
    median = proba.set_index(["action", "method", "step"])["median"]

    def reached(action, method):
        rows = proba[(proba["action"] == action) & (proba["method"] == method)]
        hit = rows.loc[rows["median"] >= level, "step"]
        at_one = median.get((action, method, 1), np.nan)
        text = f"{int(hit.min())}" if len(hit) else "never"
        first = "not taken first" if np.isnan(at_one) else f"t=1: {at_one:.2f}"
        return f"{text} ({first})"

    lines = [
        "| action | the paper: the class switches at step | CSCF: median reaches "
        "0.5 at step | SCF: median reaches 0.5 at step |",
        "|---|---|---|---|",
    ]
    for action in sorted(
        PAPER_NAMES, key=lambda a: -median.get((a, "CSCF", 1), -np.inf)
    ):
        lines.append(
            f"| `{action}` ({PAPER_NAMES[action]}) | {paper[action]} | "
            f"{reached(action, 'CSCF')} | {reached(action, 'SCF')} |"
        )

    def at_one(action):
        cscf, scf = (median.get((action, m, 1), np.nan) for m in ("CSCF", "SCF"))
        return cscf, scf, f"{cscf:.2f} with the graph, {scf:.2f} without"

    ranking = sorted(PAPER_NAMES, key=lambda a: -median.get((a, "CSCF", 1), -np.inf))
    gain_c, gain_s, gain_text = at_one(GAIN)
    edu_c, edu_s, edu_text = at_one(EDU)
    lines += [
        "",
        "- the ranking at `t = 1` in CSCF, highest median first: "
        + ", ".join(PAPER_NAMES[a] for a in ranking)
        + " (the paper: chCapGain and addEdu drive the change; waitYears and "
        "enlist, then chWorkHrs and chCapLoss support it);",
        f"- `increase_capital_gain` at `t = 1`: {gain_text}: "
        + (
            "higher with the graph, as in the paper;"
            if gain_c > gain_s
            else "not higher with the graph, unlike the paper;"
        ),
        f"- `add_education` at `t = 1`: {edu_text}: "
        + (
            "lower with the graph, as in the paper."
            if edu_c < edu_s
            else "not lower with the graph, unlike the paper."
        ),
    ]
    return "\n".join(lines)


def probability_block(proba):
    """Fig. 6 as a table: the median after each action and step (and n)."""
    steps = range(1, int(proba["step"].max()) + 1)
    cell = {
        (r.action, r.method, r.step): f"{r.median:.2f} ({r.n})"
        for r in proba.itertuples()
    }
    columns = [(m, t) for m, _ in METHODS for t in steps]
    lines = [
        "| action | " + " | ".join(f"{m} t={t}" for m, t in columns) + " |",
        "|---|" + "---:|" * len(columns),
    ]
    for action in sorted(PAPER_NAMES):
        cells = " | ".join(cell.get((action, m, t), "") for m, t in columns)
        lines.append(f"| `{action}` | {cells} |")
    return "\n".join(lines)


def effort_block(diff, tolerance=1e-3):
    n = len(diff)
    return "\n".join(
        [
            "| rows with a sequence of at most two steps in both | CSCF cheaper "
            "(by > 0.1 %) | equal (within 0.1 %) | SCF cheaper (by > 0.1 %) | "
            "median difference | largest difference |",
            "|---:|---:|---:|---:|---:|---:|",
            f"| {n} | {pct(int((diff > tolerance).sum()), n)} | "
            f"{pct(int((diff.abs() <= tolerance).sum()), n)} | "
            f"{pct(int((diff < -tolerance).sum()), n)} | {diff.median():+.3f} | "
            f"{diff.abs().max():.3f} |",
        ]
    )


def rewrite(doc, blocks):
    text = doc.read_text()
    for name, body in blocks.items():
        pattern = re.compile(
            rf"(<!-- generated: {name} -->\n).*?(\n<!-- /generated: {name} -->)",
            re.DOTALL,
        )
        if not pattern.search(text):
            raise SystemExit(f"{doc} has no generated block {name!r}.")
        text = pattern.sub(lambda m: m.group(1) + body + m.group(2), text)
    doc.write_text(text)


def main(argv=None):
    args = parse_args(argv)
    if not (args.reference_dir / "adult_mlp_weights.npz").is_file():
        raise SystemExit(
            f"No reference network in {args.reference_dir}; pass --reference-dir."
        )
    start = time.perf_counter()
    network = ReferenceNetwork(args.reference_dir)
    instances = network.instances(args.reference_dir).head(args.n_instances)
    frames, tables, stats, walls = {}, {}, {}, {}
    for method, use_graph in METHODS:
        frames[method], walls[method] = explain(network, instances, use_graph, args)
        tables[method] = sequences(frames[method])
        stats[method] = statistics(frames[method], tables[method], len(instances))
        print(f"{method}: {walls[method]:.1f} s wall", flush=True)
        if args.frames:
            args.frames.mkdir(parents=True, exist_ok=True)
            frames[method].to_csv(args.frames / f"{method.lower()}.csv", index=False)

    args.figures.mkdir(parents=True, exist_ok=True)
    colors = action_colors(sorted(PAPER_NAMES))
    written = []
    for method in frames:
        stem = method.lower()
        written.append(
            flow_figure(
                frames[method], method, colors, None, args.figures / f"flow_{stem}.png"
            )
        )
        written.append(
            flow_figure(
                frames[method], method, colors, 2, args.figures / f"flow_{stem}_t2.png"
            )
        )
    written.append(
        probability_figure(frames, colors, args.figures / "probability_by_step.png")
    )

    proba = probability_table(stats)
    blocks = {
        "run": run_block(stats, walls, args),
        "statistics": statistics_block(stats),
        "cheapest": cheapest_block(stats),
        "first_actions": first_actions_block(stats),
        "reached": reached_block(proba),
        "probability": probability_block(proba),
        "effort": effort_block(effort_two_steps(tables)),
    }
    for name, body in blocks.items():
        print(f"\n[{name}]\n{body}")
    print()
    for path in written:
        print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KB)")
    if args.doc.lower() != "none":
        rewrite(Path(args.doc), blocks)
        print(f"rewrote the generated blocks of {args.doc}")
    print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()

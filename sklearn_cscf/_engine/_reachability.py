"""Is the target within reach of the declared actions at all?

After a block's search, the rows it found no plan for are probed: the
model is asked, in **one** call for all of them, about a few extreme
states of each row:

- each declared action alone, at each end of its value space (every value
  of a short list for an ``"any"`` action; the end its direction allows
  for an ``"increase"`` or ``"decrease"`` one);
- every changeable feature at once at its most favourable end: the high end
  of a feature only actions of ``"increase"`` change, the low end of one
  only ``"decrease"`` actions change, and for a feature that can go both
  ways both ends (every combination while there are at most
  ``MAX_COMBINATIONS`` of them; otherwise all low and all high).

The probes are applied as sequences (an action's effects follow it) but
without the plan limits (``max_sequence_length``); a probe state counts
when the model accepts it, whether or not every step of the probe was
allowed. A row none of whose probes reaches the target gets the status
``"unreachable"`` with a message naming what was tried; the others keep
``"no_counterfactual"`` (a larger budget may find a plan).

What ``"unreachable"`` proves depends on the model. For a model monotone in
the features the actions change (and actions without effects), the probes
bound everything a plan can do: no plan exists. Otherwise a plan through
values between the ends could still exist, so ``"unreachable"`` reads: the
search found nothing, and neither did any of the extremes. Either way a
larger budget is unlikely to help; more actions or wider values may.

Nothing is probed for a model whose answers vary between calls (its
rejections prove nothing), and a probe that raises leaves the rows
``"no_counterfactual"``.
"""

import itertools

import numpy as np

from sklearn_cscf._engine._genotypes import far_keys, genotypes
from sklearn_cscf._status import STATUS_NO_COUNTERFACTUAL, STATUS_UNREACHABLE

# combinations of ends tried for the features that can go both ways
MAX_COMBINATIONS = 16
# an "any" list of at most this many values is tried value by value
MAX_VALUES = 12


def _sides(actions):
    """Per changed feature, ``{"low": action, "high": action}``: the first
    action that can take it to that end."""
    sides = {}
    for i, action in enumerate(actions):
        direction = action.space.direction
        ends = sides.setdefault(action.feature, {})
        if direction in ("decrease", "any"):
            ends.setdefault("low", i)
        if direction in ("increase", "any"):
            ends.setdefault("high", i)
    return sides


def probe_keys(actions):
    """The genotypes of the probes, shape ``(n_probes, 2 * n_actions)``, and
    the all-at-once probes' choices (a list of ``{action: key}``)."""
    n = len(actions)
    rows = []

    def genotype(chosen):
        # applied in the order of the actions
        order = np.full((1, n), -1)
        order[0, : len(chosen)] = sorted(chosen)
        values = np.full((1, n), 0.5)
        values[0, list(chosen)] = list(chosen.values())
        return genotypes(order, values, n)[0]

    for i, action in enumerate(actions):
        alone = far_keys(action.space, MAX_VALUES, every_value=True)
        rows.extend(genotype({i: key}) for key in alone)
    fixed, both = {}, []
    for ends in _sides(actions).values():
        if len(ends) == 2:
            both.append(ends)
        else:
            ((end, i),) = ends.items()
            fixed[i] = 0.0 if end == "low" else 1.0
    if 2 ** len(both) <= MAX_COMBINATIONS:
        picks = itertools.product(("low", "high"), repeat=len(both))
    else:
        picks = [("low",) * len(both), ("high",) * len(both)]
    together = []
    for pick in picks:
        chosen = dict(fixed)
        for ends, end in zip(both, pick):
            chosen[ends[end]] = 0.0 if end == "low" else 1.0
        together.append(chosen)
        rows.append(genotype(chosen))
    return np.array(rows), together


def mark_unreachable(evaluator, results):
    """Probe the rows of a block whose result is ``"no_counterfactual"``
    (``evaluator``: the block's
    :class:`~sklearn_cscf._engine._evaluator.Evaluator`; one model call for
    all) and give those no probe reaches the status ``"unreachable"``, with a
    message saying what was tried."""
    members = [m for m, r in enumerate(results) if r.status == STATUS_NO_COUNTERFACTUAL]
    problem = evaluator.problem
    if not members or problem.recheck:
        # a model whose answers vary may reject an extreme it accepted
        # before: its rejections prove nothing
        return results
    keys, together = probe_keys(problem.actions)
    n_probes = keys.shape[0]
    owner = np.repeat(np.asarray(members, dtype=np.intp), n_probes)
    groups = [
        (m, slice(k * n_probes, (k + 1) * n_probes)) for k, m in enumerate(members)
    ]
    try:
        paths = evaluator.simulate(
            owner, np.tile(keys, (len(members), 1)), limited=False
        )
        answers = evaluator.answers(owner, paths.final)
    except Exception:
        # a callable or the model failing on an extreme value proves nothing:
        # the rows keep "no_counterfactual"
        return results
    codes = evaluator.targets[owner]
    gap = problem.target.gap(answers, codes)
    score = problem.target.score(answers, codes)
    first_together = n_probes - len(together)
    for m, rows in groups:
        if (gap[rows] == 0).any():
            continue  # a probe reaches the target: a plan may exist
        best = score[rows.start + int(np.argmin(gap[rows]))]  # the closest probe's
        state = paths.final[rows.start + first_together]
        results[m].status = STATUS_UNREACHABLE
        results[m].message = _message(problem, state, together, n_probes, best)
    return results


def _message(problem, state, together, n_probes, best):
    """What was tried, in the user's terms."""
    schema, actions = problem.schema, problem.actions
    features = sorted({actions[i].feature for i in together[0]})
    values = ", ".join(
        f"{schema.names[j]} {_text(schema.decode_value(j, state[j]))}" for j in features
    )
    if len(together) > 1:
        values += f"; and {len(together) - 1} other combinations of ends"
    if getattr(problem.target, "reported", None) == "prediction":
        closest = f"the closest prediction {_text(best)}"
    elif np.isfinite(best):
        closest = f"the highest probability of the target {best:.3f}"
    else:
        closest = "none accepted"
    return (
        "with every declared action at its most favourable end "
        f"({values}), and with each alone at the ends of its values, the model "
        f"still rejects this row ({n_probes} states tried; {closest}). The "
        "search found no plan either: a larger budget is unlikely to help "
        "(for a model monotone in the changed features, no plan exists); "
        "more actions or wider values may."
    )


def _text(value):
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)

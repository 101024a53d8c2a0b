"""Is the target within reach of the declared actions at all?

After a block's search, the rows it found no plan for are probed: the
model is asked, in **one** call for all of them (at most
``max_model_rows`` rows per call), about a few states of each row:

- each declared action alone, at each end of its value space (every value
  of a short list for an ``"any"`` action; the end its direction allows
  for an ``"increase"`` or ``"decrease"`` one);
- each declared action alone at values between its ends: an even grid of
  ``BETWEEN_GRID`` values, and every value of the feature seen in ``fit``
  that the action can reach from the row (at most ``MAX_SUPPORT`` of them,
  those refinement also tries), or every value of a list;
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

What ``"unreachable"`` proves depends on the model, and the message says
no more than that. For a model monotone in the features the actions change
(and actions without effects), the ends bound everything a plan can do: no
plan exists. For another model (trees, networks) a plan through values not
tried, or through several steps together at values between their ends, may
still exist (a narrow band of acceptance between two values tried): a
larger budget may find it.

Nothing is probed for a model whose answers vary between calls (its
rejections prove nothing), and a probe that raises leaves the rows
``"no_counterfactual"``.
"""

import itertools

import numpy as np

from sklearn_cscf._engine._genotypes import far_keys, genotypes, single_steps
from sklearn_cscf._schema import MAX_SUPPORT
from sklearn_cscf._spaces import DiscreteSpace
from sklearn_cscf._status import STATUS_NO_COUNTERFACTUAL, STATUS_UNREACHABLE

# combinations of ends tried for the features that can go both ways
MAX_COMBINATIONS = 16
# an "any" list of at most this many values is tried value by value
MAX_VALUES = 12
# values of an even grid between the ends of each action, tried alone
BETWEEN_GRID = 15


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
    alone = [
        (i, key)
        for i, action in enumerate(actions)
        for key in far_keys(action.space, MAX_VALUES, every_value=True)
    ]
    singles = single_steps([i for i, _ in alone], [key for _, key in alone], n)
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
    # each combination's actions applied in the order of the actions
    order = np.full((len(together), n), -1)
    values = np.full((len(together), n), 0.5)
    for r, chosen in enumerate(together):
        order[r, : len(chosen)] = sorted(chosen)
        values[r, list(chosen)] = list(chosen.values())
    return np.vstack([singles, genotypes(order, values, n)]), together


def between_keys(actions, x0):
    """The genotypes of each action alone at values between its ends, for
    each encoded row of ``x0``: an even grid, and the values of a list or
    seen in ``fit`` that the action can reach from the row. A list of one
    array ``(n_probes, 2 * n_actions)`` per row."""
    n = len(actions)
    grid = np.arange(1, BETWEEN_GRID + 1) / (BETWEEN_GRID + 1)
    per_action = []  # (action, value keys of each row: (n_rows, k), NaN: none)
    for i, action in enumerate(actions):
        space = action.space
        values = space.scan_keys(x0[:, action.feature])
        if values.shape[1] > MAX_SUPPORT:  # a long list: evenly over it
            pick = np.round(np.linspace(0, values.shape[1] - 1, MAX_SUPPORT))
            values = values[:, pick.astype(np.intp)]
        if not isinstance(space, DiscreteSpace):
            values = np.hstack(
                [np.broadcast_to(grid, (x0.shape[0], grid.size)), values]
            )
        per_action.append((i, values))
    rows = []
    for r in range(x0.shape[0]):
        keys = [np.unique(values[r][~np.isnan(values[r])]) for _, values in per_action]
        taken = np.repeat([i for i, _ in per_action], [k.size for k in keys])
        rows.append(single_steps(taken, np.concatenate([[], *keys]), n))
    return rows


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
    n_ends = keys.shape[0]
    # the ends, then each action alone between its ends
    between = between_keys(problem.actions, evaluator.x0[members])
    counts = np.array([n_ends + b.shape[0] for b in between], dtype=np.intp)
    owner = np.repeat(np.asarray(members, dtype=np.intp), counts)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    groups = [
        (m, slice(int(start), int(start + count)))
        for m, start, count in zip(members, starts, counts)
    ]
    try:
        probes = np.vstack([row for b in between for row in (keys, b)])
        paths = evaluator.simulate(owner, probes, limited=False)
        answers = evaluator.answers(owner, paths.final)
    except Exception:
        # a callable or the model failing on an extreme value proves nothing:
        # the rows keep "no_counterfactual"
        return results
    codes = evaluator.targets[owner]
    gap = problem.target.gap(answers, codes)
    score = problem.target.score(answers, codes)
    first_together = n_ends - len(together)
    for (m, rows), n_between in zip(groups, counts - n_ends):
        if (gap[rows] == 0).any():
            continue  # a probe reaches the target: a plan may exist
        best = score[rows.start + int(np.argmin(gap[rows]))]  # the closest probe's
        state = paths.final[rows.start + first_together]
        results[m].status = STATUS_UNREACHABLE
        results[m].message = _message(
            problem, state, together, int(n_ends + n_between), int(n_between), best
        )
    return results


def _message(problem, state, together, n_probes, n_between, best):
    """What was tried, in the user's terms, and what it proves."""
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
        f"({values}), and with each alone at the ends of its values and at "
        f"{n_between} values between them (an even grid, and the values seen "
        "in fit), the model still rejects this row "
        f"({n_probes} states tried; {closest}). The search found no plan "
        "either. For a model monotone in the changed features no plan "
        "exists; for another model a plan may still pass through values or "
        "combinations not tried, which a larger budget may find, and more "
        "actions or wider values may help."
    )


def _text(value):
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)

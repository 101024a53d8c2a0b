"""Refinement, beyond the paper: a bounded local search from the final fronts.

Random keys only approach a boundary (a range end, a constraint, the model's
decision threshold): the search stops a little short of the cheapest values,
and may report a plan in a dearer order or with a dearer split of one change
over several steps. After the search, each instance's sequences are polished
by one local search with named neighbourhoods, a budget and a stopping rule,
run in lock step over the instances of a block (each round of every stage is
one model call for all instances and candidates; remembered states are
answered by each instance's memo, the search's own):

- **fit** (every plan of the front, and every action alone): each step in
  turn is pulled back to its least valid value (the sequence stays valid: the
  model's decision is the target and every constraint holds), which depends
  on the steps before it. Evenly spaced values and the training values
  between the least change and the current one are scanned, the cheapest
  valid one kept and searched toward the least change (the edge of an island
  of acceptance, or of a discount step). Where no value up to the current one
  is valid any more, the values beyond it are scanned the same way. A step
  whose dropping keeps the sequence valid and no dearer is then dropped.
- **orders**: every other order of a plan of up to ``ALL_ORDERS_UP_TO`` steps
  (adjacent swaps beyond), its values re-fitted in the new order.
- **joint values**: two steps moved at once along the decision boundary: one
  step shrinks a share of its way to its least change (or grows as much: a
  move that overshot), another is re-fitted to make up for it (pulled back
  further, or pushed as far as needed). A pattern search: the best improving
  pair of each sequence is kept, the share halves when none improves
  (``JOINT_SHARES`` times at most). With a
  feature graph, a step that sets a source is also tried just across the
  largest steps of the discounts it gives later steps.
- **trades**: one step pushed to the far end of its values (or a share of
  the way), the others re-fitted, the pushed one last: a jump to another
  corner of the boundary (a tree's boundary is a staircase). A step free
  both ways is also pushed to the other side of its start (a loan shortened
  where the search lengthened it).
- **one action more or less**: a step dropped, an action the plan lacks
  inserted at any position (a small share of the way from its least change
  toward the far end of its values, kept there while the others are
  re-fitted; an unordered choice at each of its values), the plan's dearest
  step replaced by an action it lacks (at the far end of its values,
  re-fitted last, or a small change kept: a fixed effort traded for a year
  of waiting), an action swapped for another on the same feature; each
  re-fitted.

The deeper neighbourhoods (orders, trades, more or less, then joint values
from the cheapest plans with the new ones among them) start from
each instance's ``DEEP_PLANS`` cheapest distinct plans, round after round,
until a round finds nothing cheaper for that instance (at most
``MAX_ROUNDS``). **Budget**: the states refinement asks about (remembered or
not) for an instance are at most ``REFINE_SHARE`` times those its search
asked about, and at least ``MIN_STATES`` (the block gives an instance
whose plans at their far ends were judged instead of searched
``PLANS_REFINE_BUDGET``); a stage only starts the candidates
whose estimated states still fit (cheapest plans first), so the work is
bounded whatever the number of actions. All counts are per instance, so an
instance's result never depends on the other members of its block.

The refined sequences join the originals and the front is filtered again for
dominance and distinctness: a sequence dominated after polishing leaves the
front, and refinement never loses a found sequence that is still
Pareto-optimal. Last, the steps of every sequence left are tried in every
other order with the same values (each step's value key found again for the
state it then starts from, outside the budget: one model call for the
block); an order that is valid and cheaper reaches the same final state, so
it dominates the reported one and takes its place.
"""

from sklearn_cscf._engine._refine._polish import refine, refine_budget

__all__ = ["refine", "refine_budget"]

"""The one-line explanations of itemscale's terms, shared by the console and the report, so
both say the same thing and docs/glossary.md has one source to agree with."""

from __future__ import annotations

from typing import Final

#: One line per term, shown beside the term's first appearance in a command's output and in
#: the report (the same words as docs/glossary.md, which has the full definitions). The
#: measures' own terms are added by the registry (`_registry`) from each measure's unit.
GLOSSARY: Final[dict[str, str]] = {
    "series": "a series is one sampling policy and pipeline; each is measured on its own budget axis",
    "matched grid": "the items answered at every budget of the series; an item with a failed or "
    "missing cell is dropped, counted by reason",
    "adjacent flips": "for one step up the axis, items right then wrong (down) and wrong then "
    "right (up); their difference is the curve's change",
    "chain": "one axis of the grid with the other held fixed: frames@112 is the frame counts "
    "at short side 112",
    "shared frame cost": "frames a cheaper stage already decoded are not paid again",
    "cost model": "what a cascade's stages share: union = distinct recorded frames of the "
    "stages that ran, prefix = a stage pays only what it adds beyond the previous one, none = "
    "every stage pays in full",
    "matches terminal": "the 95% interval of the held-out accuracy change reaches 0: the data "
    "cannot tell the policy's accuracy from the terminal budget's",
    "frontier": "held-out accuracy against cost over every confidence threshold; the "
    "points no other beats on both",
    # the tests between budgets (docs/measures.md, "Tests between budgets")
    "clustered test": "a paired test between two budgets that counts a video's items as one "
    "unit, since they fail and recover together (clustered McNemar)",
    "Holm": "p-values adjusted for testing every adjacent pair at once; a change holds when its "
    "adjusted p is below 0.05",
    "minimum detectable effect": "the smallest accuracy change between adjacent budgets that "
    "this many videos detect 4 times in 5 at the 5% level",
    "additive model": "items differ only in difficulty and budgets only in strength: what such "
    "a world gives by chance, beside what the run shows",
    "noise bound": "the most harmful rate test-retest noise alone makes if no item's usual "
    "answer gets worse with budget",
    "same input": "two budgets whose recorded visual tokens or frames do not grow on most "
    "items (or, with nothing recorded, whose answers are identical on at least 50 items, or "
    "within a measured or stated rerun floor): what the model saw did not change",
    "rerun floor": "the share of answers two executions of one configuration give differently, "
    "measured from repeats and reruns or stated; fewer than 100 answers, or more than 5%, "
    "cannot call a gap a rerun",
    "scoring rule": "how a multiple-choice answer is chosen: letter = the model generates the "
    "option's letter; likelihood = each option's text is scored as the reply and the most "
    "likely one is taken",
    "churn": "items whose answer changes between two protocols at the same budget",
    "alternatives": "configurations that ask one recorded budget (frames and pixels per frame) "
    "and differ in selector, pipeline or prompt: compared with each other and a control, never "
    "ordered as budgets",
    "oracle over the alternatives": "items right under at least one alternative: a perfect "
    "per-item choice among them",
    "headroom share": "of the items the reference gets wrong and some alternative gets right "
    "(the oracle's headroom over it), the share this alternative gets right",
}

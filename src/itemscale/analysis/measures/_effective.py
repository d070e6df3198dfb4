"""The `effective_budget` block: the adjacent budgets of a series that look like the same input
(`same_input`, docs/measures.md, "Budgets that add nothing"), and the last step of a cascade.
"""

from __future__ import annotations

from ...core.responses import NOANSWER
from ._matrix import ResponseMatrix
from ._result_models import EffectiveBudgetEntry, Evidence
from ._same_input import SameInput, same_input


def pair_verdict(m: ResponseMatrix, a: int, b: int) -> SameInput | None:
    """`same_input` on columns a (the smaller budget) and b of one matrix (its answer codes
    where it has them: the same verdict, without comparing strings), graded against the
    matrix's rerun floor (measured from the run's repeats and reruns, or stated; none: only
    identical answers make one input)."""
    codes = m.answer_codes
    answers = m.answers if codes is None else codes.cells
    no_answer: object = NOANSWER if codes is None else codes.code_of(NOANSWER)
    return same_input(
        answers[:, a],
        answers[:, b],
        visual_tokens_from=m.visual_tokens[:, a],
        visual_tokens_to=m.visual_tokens[:, b],
        effective_frames_from=m.effective_frames[:, a],
        effective_frames_to=m.effective_frames[:, b],
        frame_step=bool(m.frames[a] != m.frames[b]),
        floor=m.rerun_floor,
        no_answer=no_answer,
    )


def effective_entry(label_from: str, label_to: str, verdict: SameInput) -> EffectiveBudgetEntry:
    """One `effective_budget` entry: `{"from", "to", "identical", "items", "evidence"}`, the
    evidence being the rule's basis, how many items recorded it, the medians on each side and
    the sentence the console and the report print."""
    evidence = Evidence(
        basis=verdict.basis,
        recorded=verdict.recorded,
        median_from=verdict.median_from,
        median_to=verdict.median_to,
        sentence=verdict.sentence(label_from, label_to),
    )
    # `from` is a keyword: the record is built from its JSON keys
    return EffectiveBudgetEntry.model_validate(
        {
            "from": label_from,
            "to": label_to,
            "identical": verdict.identical,
            "items": verdict.items,
            "evidence": evidence,
        }
    )


def effective_budget(m: ResponseMatrix) -> list[EffectiveBudgetEntry]:
    """One entry per adjacent pair the rule flags, in the order of the block's `adjacent`."""
    labels = m.labels
    out = []
    for a, b in m.budget_order.adjacent:
        verdict = pair_verdict(m, a, b)
        if verdict is not None:
            out.append(effective_entry(labels[a], labels[b], verdict))
    return out


def repeated_terminal(m: ResponseMatrix) -> list[EffectiveBudgetEntry]:
    """The last stages of a one-axis matrix (a cascade's stages, in order) that repeat the
    stage before them, last first: while the terminal looks like the same input as its
    predecessor, the predecessor is the real terminal. Never drops the first stage."""
    out: list[EffectiveBudgetEntry] = []
    k = m.n_configs
    while k >= 2:
        verdict = pair_verdict(m, k - 2, k - 1)
        if verdict is None:
            break
        out.append(effective_entry(m.labels[k - 2], m.labels[k - 1], verdict))
        k -= 1
    return out

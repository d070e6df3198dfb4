"""The sentences about a set of alternatives (`AlternativesSeries`), computed once for the
console and the report: what they are, the note that says they were detected, and each pair's
graded same-input verdict, in words and as one symbol of the all-pairs matrix."""

from __future__ import annotations

from ._result_models import AlternativePair
from ._result_series import AlternativesSeries
from ._same_input import SAME_INPUT_MIN_ITEMS, AnswerAgreement

#: The all-pairs matrix's symbols, in the order its legend lists them.
SYMBOLS: dict[str, str] = {
    "=": "identical answers (same input)",
    "~": "within the rerun floor (same input)",
    "x": "different inputs",
    "?": "cannot tell (no rerun floor that decides, or too few items)",
}


def alternatives_title(block: AlternativesSeries) -> str:
    """`9 configurations ask one budget (16 frames): alternatives, not a budget axis`."""
    what = "series" if block.members == "series" else "configurations"
    return (
        f"{len(block.configs)} {what} ask one budget ({block.budget}): alternatives, compared "
        "with each other and with a control, not a budget axis (no best fixed, harmful rate, "
        "terminal regression or flips along an order nobody chose)"
    )


def control_source(block: AlternativesSeries) -> str:
    """Where the control comes from, when `--control` did not name it (else "")."""
    if block.control_from == "series":
        return " (the one series that is not a frame selector's; --control names another)"
    return ""


def detected_note(model: str, block: AlternativesSeries) -> str:
    """What `analyze` says of a set it found in the record, and how to name one yourself."""
    named = ", ".join(block.configs)
    how = (
        f"series {block.series}"
        if block.members == "configurations"
        else "one configuration per series"
    )
    control = (
        f"the control is {block.control}{control_source(block)}"
        if block.control is not None
        else f"name the reference with --control LABEL (e.g. --control {block.configs[0]})"
    )
    return (
        f"{model}: {named} ({how}) all ask {block.budget} (their recorded frames and pixels "
        "per frame): detected as alternatives and measured as such, not as a budget axis; "
        f"{control}. To name alternatives yourself, import each as its own series (import "
        "--series NAME, one call each) or restrict analyze to them with --configs"
    )


def pair_grade(pair: AlternativePair) -> str:
    """The pair's verdict as one symbol of `SYMBOLS`: the same-input rule's grade where it
    says one input, else the answers' grade against the rerun floor (different inputs only
    beyond a floor that decides, or where the recorded input grows)."""
    same = pair.same_input
    if same is not None:
        return {"identical": "=", "rerun": "~", "cannot_tell": "?"}.get(same.answers, "x")
    if pair.answers == "cannot_tell" or pair.answered < SAME_INPUT_MIN_ITEMS:
        return "?"
    return "x"


def _agreement(pair: AlternativePair) -> AnswerAgreement:
    return AnswerAgreement(
        items=pair.answered + pair.no_answer,
        answered=pair.answered,
        identical=pair.answered - pair.differ,
        differ=pair.differ,
        no_answer=pair.no_answer,
        answers=pair.answers,
        rerun_bound=pair.rerun_bound,
        floor=pair.floor,
    )


def pair_verdict_text(pair: AlternativePair) -> str:
    """The graded same-input verdict in words, with its counts and the floor it used."""
    same = pair.same_input
    agreement = _agreement(pair)
    counts = agreement.counts() + agreement.no_answer_note()
    if same is not None:
        if same.answers == "identical":
            return f"same input: identical answers on {same.identical} of {same.answered} items"
        if same.answers == "rerun":
            return f"same input within the rerun floor ({counts})"
        if same.answers == "cannot_tell":
            return f"same recorded input; {counts}"
        return f"same recorded input, answers differ beyond a rerun ({counts}): something unrecorded differs"
    if pair.answered < SAME_INPUT_MIN_ITEMS:
        return f"cannot tell ({pair.answered} items compared, fewer than {SAME_INPUT_MIN_ITEMS})"
    if pair.answers == "cannot_tell":
        return f"not identical: {counts}"
    if pair.answers == "different":
        return f"different inputs ({counts})"
    return f"different inputs: the recorded visual tokens or frames sent grow ({counts})"


def alternatives_headline(model: str, block: AlternativesSeries) -> str:
    """The report's first sentence for a model whose configurations are alternatives."""
    acc = {c: e.value for c, e in block.accuracy.items() if e.value is not None}
    what = "series" if block.members == "series" else "configurations"
    opening = f"{model}: {len(block.configs)} {what} that all ask {block.budget} are alternatives, not budgets"
    if not acc:
        return opening + "."
    low = min(acc, key=lambda c: (acc[c], c))
    high = max(acc, key=lambda c: (acc[c], c))
    spread = f"accuracy {100 * acc[low]:.1f} ({low}) to {100 * acc[high]:.1f} ({high})"
    if block.control is None:
        return f"{opening}: {spread}; no control named."
    against = [p for p in block.pairs.values() if p.a == block.control]
    grades = [pair_grade(p) for p in against]
    same, differ = sum(g in "=~" for g in grades), grades.count("x")
    verdict = (
        f"{same} of {len(against)} answer like the control {block.control} (the same input: "
        f"identical, or within a rerun floor), {differ} differ from it beyond one"
    )
    unsure = grades.count("?")
    if unsure:
        verdict += f", {unsure} cannot tell (no rerun floor that decides, or too few items)"
    return f"{opening}: {spread}; {verdict}."

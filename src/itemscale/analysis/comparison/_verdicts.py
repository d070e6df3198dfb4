"""The sentences `compare` ends with: is the gap more than noise, do the runs look like the same
input, which set-up differences could explain the gap, and where it sits, each with its counts."""

from __future__ import annotations

from ...core.responses import SourceFile, same_file_sentence
from ..measures import (
    SAME_INPUT_MIN_ITEMS,
    AnswerAgreement,
    Estimate,
    SameInput,
    p_value_text,
)
from ._provenance import ONE_CONFIGURATION, SOURCE_FILE, SOURCE_HOLDS, SOURCE_SHA256
from ._records import (
    STACK_FIELDS,
    AnswerDiff,
    AttributeGaps,
    CompareSide,
    GroupGap,
    InputScale,
    MatchCounts,
    ProvenanceField,
    RerunNoise,
    Verdict,
)

#: the level a paired test's p must be below for "more than noise"
ALPHA = 0.05
#: fields that name where a number came from rather than how it was made
_NOT_SETTINGS = frozenset({"source", "tool version", SOURCE_FILE, SOURCE_SHA256, SOURCE_HOLDS})


def _points(value: float | None) -> str:
    return "unknown" if value is None else f"{100 * value:+.2f}"


def _ci(est: Estimate) -> str:
    if est.ci_low is None or est.ci_high is None:
        return "no interval"
    return f"95% CI [{100 * est.ci_low:+.2f}, {100 * est.ci_high:+.2f}]"


def _p_is(p: float | None, draws: int | None) -> str:
    """'= 0.0123', or '< 0.01' for a bootstrap p at its floor."""
    text = "unknown" if p is None else p_value_text(p, draws=draws)
    return f"< {text[1:]}" if text.startswith("<") else f"= {text}"


def gap_sentence(
    counts: MatchCounts, answers: AnswerDiff, noise: RerunNoise | None, *, draws: int | None = None
) -> str:
    """The gap and its test; `draws` the video bootstrap's resamples, so a bootstrap p at its
    floor reads '< 1/draws' (`p_value_text`), not a number the draws cannot resolve."""
    if counts.matched == 0:
        return "No item was answered on both sides: there is nothing to compare."
    what = "accuracy" if answers.kind == "binary" else "mean score"
    p = answers.clustered_p if answers.kind == "binary" else answers.bootstrap_p
    floor_draws = None if answers.kind == "binary" else draws  # the clustered p is analytic
    test = "clustered McNemar" if answers.kind == "binary" else "paired video bootstrap"
    beyond = p is not None and p < ALPHA
    head = (
        f"B's {what} is {_points(answers.difference.value)} points against A's "
        f"({_ci(answers.difference)}; {test} p {_p_is(p, floor_draws)} on {counts.matched} matched pairs, "
        f"{counts.matched_videos} videos)"
    )
    if answers.kind == "binary":
        head += f": right only in A {answers.right_only_a}, right only in B {answers.right_only_b}"
    if p is None:
        verdict = "not tested (the paired video bootstrap needs resamples: --bootstrap B > 0)"
    else:
        verdict = "more than noise" if beyond else f"within noise (p >= {ALPHA})"
    text = f"{head}. The gap is {verdict}."
    if noise is not None:
        floors = "; ".join(
            f"{side}'s own reruns ({r} repeats) on {_share(est)}"
            if est is not None
            else f"{side} has no reruns ({r} repeat)"
            for side, est, r in (
                ("A", noise.noise_a, noise.repeats_a),
                ("B", noise.noise_b, noise.repeats_b),
            )
        )
        text += (
            f" On the {noise.items} items every repeat answered, a run of A and a run of B "
            f"disagree on {_share(noise.between)} of items; {floors}"
            + (
                ": the two runs differ no more than a side differs from itself."
                if not _above(noise)
                else ": more than a side's own reruns differ."
            )
        )
    return text


def _share(est: Estimate | None) -> str:
    if est is None or est.value is None:
        return "unknown"
    return f"{100 * est.value:.1f}% ({_ci(est).replace('+', '')})"


def _above(noise: RerunNoise) -> bool:
    """The between-run disagreement's interval lies above both noise floors' point values."""
    low = noise.between.ci_low if noise.between.ci_low is not None else noise.between.value
    floors = [
        n.value for n in (noise.noise_a, noise.noise_b) if n is not None and n.value is not None
    ]
    return low is not None and bool(floors) and low > max(floors)


def setup_differences(setup: tuple[ProvenanceField, ...]) -> list[ProvenanceField]:
    return [f for f in setup if f.status == "differs" and f.field not in _NOT_SETTINGS]


def _one_file(setup: tuple[ProvenanceField, ...]) -> str | None:
    """`B is the same log file as A, sha256 ...` when both sides' recorded SHA-256 agree."""
    fields = {f.field: f for f in setup}
    digest = fields.get(SOURCE_SHA256)
    if digest is None or digest.status != "same" or digest.a is None:
        return None
    holds = fields.get(SOURCE_HOLDS)
    config = fields.get("configuration")
    one_each = holds is not None and holds.a == holds.b == ONE_CONFIGURATION
    if not one_each and (config is None or config.status != "same"):
        return None  # one table holding both configurations: the file is shared by design
    names = fields.get(SOURCE_FILE)
    name_a = names.a if names is not None and names.a else "name not recorded"
    name_b = names.b if names is not None and names.b else name_a
    return same_file_sentence(SourceFile("A", digest.a, name_a), SourceFile("B", digest.a, name_b))


def same_input_sentence(
    same: SameInput | None,
    setup: tuple[ProvenanceField, ...],
    agreement: AnswerAgreement,
    scale: InputScale | None,
) -> str:
    """The `same_input` verdict: the rule's answer with its counts and the floor it used, or
    why it cannot tell (no floor, a thin one, no answers to compare) and how to tell."""
    one_file = _one_file(setup)
    if one_file is not None:
        return one_file[0].upper() + one_file[1:] + "."
    differs = setup_differences(setup)
    names = ", ".join(f.field for f in differs)
    if same is None:
        return _not_same(setup, agreement, scale, names)
    if same.answers == "different" or (same.answers == "cannot_tell" and same.differ):
        return _unexplained(same, setup, scale)
    why = same.sentence("A", "B")
    if same.basis == "rerun_answers":
        kind = "stated" if same.floor is not None and same.floor.stated else "measured"
        why = (
            f"Same input within the {kind} rerun floor: {same.counts()}, and nothing recorded "
            "(visual tokens, frames sent) tells the two sides apart"
        )
    settings = ", ".join(f.field for f in differs if f.field not in STACK_FIELDS)
    stack = ", ".join(f.field for f in differs if f.field in STACK_FIELDS)
    if settings:
        why += f", although the set-up says they differ in {settings}: was the setting applied?"
    if stack:
        why += f"{';' if settings else ','} the software stack differs ({stack}) and the answers "
        why += "stay within the rerun floor" if same.answers == "rerun" else "agree"
    if differs:
        return why + ("" if why.endswith("?") else ".")
    return f"{why}; the recorded set-up shows no difference either."


def _not_same(
    setup: tuple[ProvenanceField, ...],
    agreement: AnswerAgreement,
    scale: InputScale | None,
    names: str,
) -> str:
    """The verdict where the rule did not call the two sides one input."""
    identical = (
        f"identical answers on {agreement.identical} of {agreement.answered} compared pairs"
        + agreement.no_answer_note()
    )
    if agreement.answered == 0:
        return (
            f"Cannot tell whether the two sides are the same input: no matched pair has an "
            f"answer on either side to compare ({agreement.no_answer} where neither side gave "
            f"one, of {agreement.items}), and nothing recorded on most items decides."
        )
    if agreement.differ == 0 and not agreement.missing:
        evidence = [
            f.field
            for f in setup
            if f.field in ("visual tokens", "frames sent (effective)") and f.status != "unknown"
        ]
        if agreement.answered >= SAME_INPUT_MIN_ITEMS and evidence:
            return (
                f"Every answer agrees ({identical}), but the recorded {evidence[0]} say "
                "the model saw different inputs: it answered alike anyway."
            )
        return (
            f"Every answer agrees ({identical}), but nothing recorded on most items says what "
            f"the model saw, and fewer than {SAME_INPUT_MIN_ITEMS} compared items are too few "
            "to tell the same input from chance"
            + (
                f"; the set-up says they differ in {names}: was the setting applied?"
                if names
                else "."
            )
        )
    if agreement.answers == "different":
        return f"The two sides do not look like the same input ({identical}; {_beyond(agreement)})."
    text = f"Not identical: {agreement.counts()}"
    if scale is not None:
        text += f"; {scale.sentence()}"
    return text + "."


def _beyond(agreement: AnswerAgreement) -> str:
    """`15 of 80 answers differ, beyond what a rerun moves (...)`."""
    floor = agreement.floor
    head = f"{agreement.differ} of {agreement.answered} answers differ"
    if floor is None:
        return head
    if floor.weakness() is not None:
        return (
            f"{head}, beyond what even the upper end of the thin rerun floor moves ({floor.line()})"
        )
    kind = "stated" if floor.stated else "measured"
    return (
        f"{head}, beyond what a rerun moves (at most {agreement.rerun_bound} at the {kind} "
        f"floor, {100 * floor.rate:.2f}% per answer: {floor.source})"
    )


def _unexplained(
    same: SameInput, setup: tuple[ProvenanceField, ...], scale: InputScale | None = None
) -> str:
    """Same input by the recorded evidence, answers beyond a rerun (or, without a floor that
    decides, answers that differ by an amount no floor can judge): what differs in the recorded
    set-up (the stack included) can explain them, else something unrecorded does."""
    what = "visual tokens" if same.basis == "visual_tokens" else "frames actually sent"
    answers = (
        f"answers differ beyond a rerun ({_beyond(same.agreement)})"
        if same.answers == "different"
        else f"answers differ, whether beyond a rerun cannot be told ({same.counts()}"
        + (f"; {scale.sentence()})" if scale is not None else ")")
    )
    head = f"Same input; {answers}: the recorded {what} do not grow on any of {same.recorded} items"
    differs = setup_differences(setup)
    unknown = [f.field for f in setup if f.status == "unknown"]
    if differs:
        shown = "; ".join(f"{f.field} {_cut(f.a)} vs {_cut(f.b)}" for f in differs[:6])
        settings = [f.field for f in differs if f.field not in STACK_FIELDS]
        text = f"{head}; the recorded set-up differs in {shown}: " + (
            f"{', '.join(settings)} did not change the input (was the setting applied?), and "
            "any of these differences can explain the answers"
            if settings
            else "the software stack that computed the answers differs, which can explain them"
        )
    else:
        text = f"{head}: something unrecorded differs"
    if unknown:
        text += f" (unknown on one side or both: {', '.join(unknown[:8])})"
    return text + "."


def setup_sentence(setup: tuple[ProvenanceField, ...]) -> str:
    differs = setup_differences(setup)
    unknown = [f.field for f in setup if f.status == "unknown"]
    if differs:
        shown = "; ".join(f"{f.field}: A {_cut(f.a)} vs B {_cut(f.b)}" for f in differs[:6])
        more = f" (and {len(differs) - 6} more)" if len(differs) > 6 else ""
        text = f"Set-up differences that could explain the gap ({len(differs)}): {shown}{more}."
    else:
        text = "The recorded set-up shows no difference that could explain the gap."
    if unknown:
        text += f" Unknown on one side or both ({len(unknown)}): {', '.join(unknown[:8])}"
        text += " ..." if len(unknown) > 8 else ""
        text += "."
    return text


def _cut(value: str | None, width: int = 60) -> str:
    if value is None:
        return "unknown"
    return value if len(value) <= width else value[: width - 3] + "..."


def where_sentence(
    attributes: tuple[AttributeGaps, ...], top: tuple[GroupGap, ...], answers: AnswerDiff
) -> str:
    flips = (answers.right_only_a or 0) + (answers.right_only_b or 0)
    if answers.kind == "binary" and flips == 0:
        return "No item is right on one side only: the gap sits nowhere."
    parts = []
    for block in attributes:
        ranked = sorted(block.groups, key=lambda g: -abs(g.right_only_b - g.right_only_a))
        g = ranked[0]
        parts.append(
            f"{block.attribute} = {g.value} moves most (right only in A {g.right_only_a}, in B "
            f"{g.right_only_b}, of {g.pairs} pairs; {_points(g.difference)} points)"
        )
    if top:
        videos = ", ".join(
            f"{v.value} ({v.right_only_b - v.right_only_a:+d}: A {v.right_only_a}, B {v.right_only_b})"
            for v in top
        )
        parts.append(f"the videos contributing most (B minus A, right-only items): {videos}")
    if not parts:
        return "No item attribute is recorded to say where the gap sits."
    return "Where the gap sits: " + "; ".join(parts) + "."


def verdicts(
    counts: MatchCounts,
    answers: AnswerDiff,
    noise: RerunNoise | None,
    same: SameInput | None,
    setup: tuple[ProvenanceField, ...],
    attributes: tuple[AttributeGaps, ...],
    top: tuple[GroupGap, ...],
    open_ended: Verdict | None = None,
    gap_counts: MatchCounts | None = None,
    *,
    agreement: AnswerAgreement,
    scale: InputScale | None,
    draws: int,
) -> tuple[Verdict, ...]:
    """Every sentence; with both task kinds, `gap_counts` are the multiple-choice pairs' and
    `open_ended` the open-ended items' own gap sentence. `agreement` is the two sides' answers
    graded against the comparison's rerun floor, `scale` the runs' own scale where it has no
    floor (the `same_input` sentence says both)."""
    gap = gap_sentence(gap_counts or counts, answers, noise, draws=draws)
    if open_ended is not None:  # both kinds: each its own sentence, multiple choice first
        gap = "Multiple-choice items: " + gap
    out = [Verdict(key="gap", sentence=gap)]
    if open_ended is not None:
        out.append(open_ended)
    if counts.matched:
        sentence = same_input_sentence(same, setup, agreement, scale)
        out.append(Verdict(key="same_input", sentence=sentence))
    out.append(Verdict(key="setup", sentence=setup_sentence(setup)))
    if counts.matched:
        out.append(Verdict(key="where", sentence=where_sentence(attributes, top, answers)))
    return tuple(out)


def cost_verdict(a: CompareSide, b: CompareSide) -> tuple[Verdict, ...]:
    """When either side replays a selection: the frames each side used on average (what it
    is charged: an adaptive selector's frame count is only a cap), the selector's declared
    own cost, and whether the gap was measured at unequal cost."""
    if a.selection is None and b.selection is None:
        return ()
    if a.frames_used_mean is None or b.frames_used_mean is None:
        return ()
    parts = [
        f"Cost: A used {a.frames_used_mean:.1f} frames per answered item, "
        f"B {b.frames_used_mean:.1f}"
    ]
    for side in (a, b):
        sel = side.selection
        if sel is None:
            continue
        if sel.cap and sel.frames_used_min is not None:
            parts.append(
                f"{side.name}'s selector ({sel.selection}) takes up to {sel.frames_cap} frames "
                f"and used {sel.frames_used_min}-{sel.frames_used_max}"
            )
        if sel.frames_scored_mean is not None:
            parts.append(
                f"{side.name}'s selector scored {sel.frames_scored_mean:.1f} frames per item "
                "to choose them (its own cost, declared by its file)"
            )
    sentence = "; ".join(parts) + "."
    if abs(a.frames_used_mean - b.frames_used_mean) >= 0.05:
        sentence += (
            " The gap is at unequal cost: `analyze` compares a selector with uniform sampling "
            "at its matched mean cost."
        )
    return (Verdict(key="cost", sentence=sentence),)

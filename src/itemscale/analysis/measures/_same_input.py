"""Do two budgets (or two series, or two runs) look like the same input to the model?

Every number that compares two budgets rests on the model having seen something different at
each, and often it did not (a short video, a server's frame cap, a selector never applied). One
rule decides it for `analyze`, `cascade`, `compare` and the selector reports: recorded visual
tokens, else recorded frames, else the answers against the rerun floor (docs/measures.md,
"Budgets that add nothing", states the three rules and the grading). Recorded evidence wins
over answers: recorded tokens that grow mean different inputs even when every answer agrees,
and the rule says so by returning None.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from ...core.rerun_floor import (
    HOW_TO_MEASURE,
    AnswersGrade,
    RerunFloor,
    grade_answers,
    rerun_bound,
)
from ...core.responses import NOANSWER

#: the fewest compared items on which identical answers count as "the same input" (rule 3)
SAME_INPUT_MIN_ITEMS = 50

#: None as a 0-d object array, to compare an answer column with it element by element
_NONE = np.asarray(None, dtype=object)

SameInputBasis = Literal["visual_tokens", "effective_frames", "identical_answers", "rerun_answers"]

#: An answer column: a sequence of answers (None where missing), an object array, or integer
#: codes (equal codes for equal answers, -1 for none)
Answers = Sequence[str | None] | np.ndarray


def _num(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"{value:g}"


class AnswerAgreement(BaseModel):
    """How two aligned answer columns agree, graded against a rerun floor (or none)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: matched items
    items: int
    #: items compared: answered on both sides, and not without an answer on both
    answered: int
    #: compared items whose answers are equal
    identical: int
    #: compared items whose answers differ
    differ: int
    #: items where neither side gave an answer (`NOANSWER` on both): they tell nothing
    no_answer: int = 0
    #: items a side has no answer for at all (a failed cell, a missing value)
    missing: int = 0
    answers: AnswersGrade
    #: the most a rerun moves of `answered` (None without a floor)
    rerun_bound: int | None = None
    floor: RerunFloor | None = None

    def counts(self) -> str:
        """`k of n answers differ; a rerun moves at most B (floor ...)`, or what is missing to
        tell (no floor, a thin one)."""
        head = f"{self.differ} of {self.answered} answers differ"
        floor = self.floor
        if floor is None:
            return f"{head}; no rerun floor is measured, so whether a rerun moves that many cannot be told ({HOW_TO_MEASURE})"
        why = floor.weakness()
        if why is not None:
            return f"{head}; the rerun floor ({floor.line()}) is too thin to call it a rerun" + (
                ": beyond what even its upper end moves" if self.answers == "different" else ""
            )
        return (
            f"{head}; a rerun moves at most {self.rerun_bound} (floor "
            f"{100 * floor.rate:.2f}% per answer, {floor.source})"
        )

    def no_answer_note(self) -> str:
        """`; 10 items where neither side gave an answer cannot tell` ('' when none)."""
        if not self.no_answer:
            return ""
        return f"; {self.no_answer} item{'s' if self.no_answer != 1 else ''} where neither side gave an answer cannot tell"


def _present(answers: np.ndarray) -> np.ndarray:
    """Which answers are present: not None, or a code >= 0 (`AnswerCodes`, -1 for none)."""
    if answers.dtype.kind in "iu":
        return np.asarray(answers >= 0)
    return np.asarray(np.not_equal(answers, _NONE))


def _equal_to(answers: np.ndarray, value: object) -> np.ndarray:
    """Element by element `answers == value` (a code or a string)."""
    if answers.dtype.kind in "iu":
        if not isinstance(value, int | np.integer):
            return np.zeros(answers.shape, dtype=bool)
        return np.asarray(answers == value)
    return np.asarray(np.equal(answers, np.asarray(value, dtype=object)), dtype=bool)


def _answers(values: Answers) -> np.ndarray:
    """A 1-D array of the answers (an object array or integer codes used as they are)."""
    if isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "Oiu":
        return values
    return np.asarray(list(values), dtype=object)


def answer_agreement(
    answers_from: Answers,
    answers_to: Answers,
    *,
    floor: RerunFloor | None = None,
    no_answer: object = NOANSWER,
) -> AnswerAgreement:
    """Two aligned answer columns compared item by item and graded against `floor`.

    `no_answer` is the value that means "no answer was given" (`NOANSWER`, or its code where
    the columns are integer codes): items holding it on both sides are counted apart, never as
    identical. Open-ended items have no parsed answer: pass their raw outputs.
    """
    a_from, a_to = _answers(answers_from), _answers(answers_to)
    if a_from.shape != a_to.shape:
        raise ValueError(f"answer columns differ in length: {a_from.shape[0]} vs {a_to.shape[0]}")
    n = int(a_from.shape[0])
    if n == 0:
        return AnswerAgreement(
            items=0, answered=0, identical=0, differ=0, answers="cannot_tell", floor=floor
        )
    present = _present(a_from) & _present(a_to)
    neither = present & _equal_to(a_from, no_answer) & _equal_to(a_to, no_answer)
    compared = present & ~neither
    # item by item `a == b` (one element-wise comparison), counted where both are compared
    same = np.asarray(a_from == a_to, dtype=bool) & compared
    answered = int(np.count_nonzero(compared))
    identical = int(np.count_nonzero(same))
    differ = answered - identical
    return AnswerAgreement(
        items=n,
        answered=answered,
        identical=identical,
        differ=differ,
        no_answer=int(np.count_nonzero(neither)),
        missing=n - int(np.count_nonzero(present)),
        answers=grade_answers(differ, answered, floor),
        rerun_bound=rerun_bound(answered, floor),
        floor=floor,
    )


class SameInput(BaseModel):
    """Why a pair of budgets looks like one input (its JSON form is `analyze --json`'s
    `effective_budget` entry without the two labels)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: which rule decided: recorded visual tokens, recorded effective frames, or answers alone
    basis: SameInputBasis
    #: compared items whose answers are identical on both sides
    identical: int
    #: matched items
    items: int
    #: items on which the basis was recorded on both sides (== items for the answers rules)
    recorded: int
    #: median of the recorded quantity on each side (None for the answers-only rules)
    median_from: float | None = None
    median_to: float | None = None
    #: the answers graded: items compared (answered on both sides, not without an answer on
    #: both), those whose answers differ, the most a rerun moves of them and the floor that
    #: bound comes from (None: no floor measured or stated)
    answers: AnswersGrade = "identical"
    answered: int = 0
    differ: int = 0
    rerun_bound: int | None = None
    floor: RerunFloor | None = None
    #: items where neither side gave an answer: left out of `answered`, never identical
    no_answer: int = 0

    @property
    def agreement(self) -> AnswerAgreement:
        """The graded answers as their own record."""
        return AnswerAgreement(
            items=self.items,
            answered=self.answered,
            identical=self.identical,
            differ=self.differ,
            no_answer=self.no_answer,
            answers=self.answers,
            rerun_bound=self.rerun_bound,
            floor=self.floor,
        )

    def counts(self) -> str:
        """`k of n answers differ; a rerun moves at most B (floor: SOURCE)`."""
        return self.agreement.counts()

    def sentence(self, label_from: str, label_to: str) -> str:
        """One plain sentence for the console and the report."""
        note = self.agreement.no_answer_note()
        if self.basis == "identical_answers":
            why = f"identical answers on {self.identical} of {self.answered} items{note}"
        elif self.basis == "rerun_answers":
            why = (
                f"nothing recorded tells them apart and the answers are within the rerun "
                f"floor ({self.counts()}){note}"
            )
        else:
            what = "visual tokens" if self.basis == "visual_tokens" else "frames actually sent"
            why = (
                f"the {what} do not grow on any of {self.recorded} items "
                f"(median {_num(self.median_from)} -> {_num(self.median_to)}); "
                f"identical answers on {self.identical} of {self.answered}{note}"
            )
            if self.answers == "rerun":
                why += f"; within the rerun floor ({self.counts()})"
            elif self.answers == "different":
                why += (
                    f"; answers differ beyond a rerun ({self.differ} of {self.answered}): "
                    "something unrecorded differs"
                )
            elif self.answers == "cannot_tell" and self.differ:
                why += f"; {self.counts()}"
        return f"{label_to} looks like the same input as {label_from}: {why}"


def _does_not_grow(
    before: np.ndarray, after: np.ndarray
) -> tuple[bool, int, float | None, float | None]:
    """Whether `after` grows on no item recorded on both sides, with the count and medians."""
    both = np.isfinite(before) & np.isfinite(after)
    n = int(both.sum())
    if n == 0:
        return False, 0, None, None
    flat = bool(np.all(after[both] <= before[both]))
    return flat, n, float(np.median(before[both])), float(np.median(after[both]))


def _as_float(values: Sequence[float | None] | np.ndarray | None, n: int) -> np.ndarray | None:
    if values is None:
        return None
    if isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
        out = np.asarray(values, dtype=np.float64)  # what float(v) gives each, without a loop
    else:
        out = np.asarray(
            [np.nan if v is None else float(v) for v in list(values)], dtype=np.float64
        )
    if out.shape != (n,):
        raise ValueError(f"expected {n} values aligned with the answers, got {out.shape[0]}")
    return out


def recorded_decides(recorded: int, items: int) -> bool:
    """A recorded input field speaks for the pair only where most matched items (more than
    half) record it on both sides: one item's tokens decide nothing for the rest."""
    return recorded > 0 and 2 * recorded > items


def same_input(
    answers_from: Answers,
    answers_to: Answers,
    *,
    visual_tokens_from: Sequence[float | None] | np.ndarray | None = None,
    visual_tokens_to: Sequence[float | None] | np.ndarray | None = None,
    effective_frames_from: Sequence[float | None] | np.ndarray | None = None,
    effective_frames_to: Sequence[float | None] | np.ndarray | None = None,
    frame_step: bool = True,
    min_items: int = SAME_INPUT_MIN_ITEMS,
    floor: RerunFloor | None = None,
    no_answer: object = NOANSWER,
) -> SameInput | None:
    """The rule on aligned columns of matched items (`from` the smaller budget); a missing value
    is None or NaN (answers may be integer codes, -1 for none, `no_answer` the code of
    `NOANSWER`). `frame_step`: the budgets ask different frame counts (the frames rule applies
    only then). `floor`: the rerun floor the caller has evidence for (None: only identical
    answers make one input). None when the pair looks like different inputs, or cannot tell.
    """
    agreement = answer_agreement(answers_from, answers_to, floor=floor, no_answer=no_answer)
    n = agreement.items
    graded = {
        "answers": agreement.answers,
        "answered": agreement.answered,
        "differ": agreement.differ,
        "rerun_bound": agreement.rerun_bound,
        "floor": floor,
        "no_answer": agreement.no_answer,
    }
    tokens = (_as_float(visual_tokens_from, n), _as_float(visual_tokens_to, n))
    frames = (_as_float(effective_frames_from, n), _as_float(effective_frames_to, n))
    evidence: list[tuple[SameInputBasis, tuple[np.ndarray | None, np.ndarray | None]]] = [
        ("visual_tokens", tokens)
    ]
    if frame_step:
        evidence.append(("effective_frames", frames))
    for basis, (before, after) in evidence:
        if before is None or after is None:
            continue
        flat, recorded, med_from, med_to = _does_not_grow(before, after)
        if not recorded_decides(recorded, n):
            continue
        if not flat:
            return None
        return SameInput.model_validate(
            {
                "basis": basis,
                "identical": agreement.identical,
                "items": n,
                "recorded": recorded,
                "median_from": med_from,
                "median_to": med_to,
                **graded,
            }
        )
    if agreement.missing or agreement.answered < min_items:
        return None
    common = {"identical": agreement.identical, "items": n, "recorded": n, **graded}
    if agreement.differ == 0:
        return SameInput.model_validate({"basis": "identical_answers", **common})
    if agreement.answers == "rerun":
        return SameInput.model_validate({"basis": "rerun_answers", **common})
    return None

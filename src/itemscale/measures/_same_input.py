"""Do two budgets (or two series, or two runs) look like the same input to the model?

itemscale's claim is "how answers change as the visual budget changes", so every number that
compares two budgets rests on the model having seen something different at each. It often did
not: a video shorter than the frame budget adds no frame, a server caps frames at its own limit,
a selector file was never applied. Nothing downstream may report a saving, a difference or a
label that rests on such a pair, so one rule decides it, used by `analyze` (the
`effective_budget` block), `cascade` (a terminal that repeats its predecessor), `compare` and the
selector reports (docs/measures.md, "Budgets that add nothing"):

1. Where both sides record the visual tokens the model counted, the pair is the same input when
   the larger side's tokens do not grow on any matched item that records them on both sides.
2. Otherwise, where both sides record the frames actually sent (effective frames) and the two
   budgets ask for different frame counts, the pair is the same input when the effective frames
   do not grow on any such item.
3. Otherwise (nothing recorded: imported labels, a release of answers), the pair is the same
   input when the parsed answers are identical on every matched item, or differ on no more
   items than a rerun of one input does (`rerun_bound`), and there are at least
   `SAME_INPUT_MIN_ITEMS` of them (below that, identical answers are too likely by chance).

The answers are graded under every rule (`AnswersGrade`): *identical*; *rerun* (they differ on
k of n items, and k is within the rerun floor: at most the exact one-sided 95% binomial bound
of n answers each moving with the floor's rate); *different*. The floor is measured from
repeats where the caller has them (`RerunFloor.measured`), else `DEFAULT_RERUN_FLOOR` with its
source. Same input (by rules 1-2) with answers *different* means something unrecorded differs.

Recorded evidence wins over answers: two budgets whose recorded tokens grow are different inputs
even when every answer agrees (the model may simply be robust), and the rule says so by
returning None.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from scipy.stats import binom

#: the fewest matched items on which identical answers count as "the same input" (rule 3)
SAME_INPUT_MIN_ITEMS = 50

#: None as a 0-d object array, to compare an answer column with it element by element
_NONE = np.asarray(None, dtype=object)

SameInputBasis = Literal["visual_tokens", "effective_frames", "identical_answers", "rerun_answers"]
#: how two sides' answers compare: all identical, within a rerun's floor, beyond it
AnswersGrade = Literal["identical", "rerun", "different"]
#: the one-sided level of the rerun bound: a count a rerun reaches with probability < 5% is
#: beyond a rerun
RERUN_LEVEL = 0.95


class RerunFloor(BaseModel):
    """The share of answers a rerun of one input moves, and where that figure comes from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rate: float = Field(ge=0.0, le=1.0)
    source: str
    #: measured from the caller's own repeats (else a documented default)
    measured: bool = False


#: The default floor where neither side has repeats: 7 of 2,700 answers (0.26%), the most that
#: any of eight public lmms-eval runs of a 7B Video LLM on Video-MME (greedy, on GPU) differs
#: from a frame-0 control whose frame selection never reached the model (2-7 answers each);
#: the built-in model on CPU moves none (docs/compare.md, "Reruns", benchmarks/rerun_floor.py).
DEFAULT_RERUN_FLOOR = RerunFloor(
    rate=7 / 2700,
    source=(
        "default: 7 of 2,700 answers (0.26%), the most a greedy GPU rerun of a 7B Video LLM on "
        "Video-MME moved in public lmms-eval logs (docs/compare.md, 'Reruns')"
    ),
)


def rerun_bound(n: int, floor: RerunFloor = DEFAULT_RERUN_FLOOR) -> int:
    """The most answers of `n` a rerun moves: the exact one-sided 95% binomial bound, the
    smallest k with P(X <= k) >= 0.95 for X ~ Binomial(n, floor.rate)."""
    if n <= 0 or floor.rate <= 0.0:
        return 0
    return int(binom.ppf(RERUN_LEVEL, n, floor.rate))


def grade_answers(differ: int, n: int, floor: RerunFloor = DEFAULT_RERUN_FLOOR) -> AnswersGrade:
    """*identical* (none of `n` differs), *rerun* (at most `rerun_bound`), else *different*."""
    if differ == 0:
        return "identical"
    return "rerun" if differ <= rerun_bound(n, floor) else "different"


class SameInput(BaseModel):
    """Why a pair of budgets looks like one input (its JSON form is `analyze --json`'s
    `effective_budget` entry without the two labels)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: which rule decided: recorded visual tokens, recorded effective frames, or answers alone
    basis: SameInputBasis
    #: matched items whose parsed answers are identical on both sides
    identical: int
    #: matched items compared
    items: int
    #: items on which the basis was recorded on both sides (== items for identical_answers)
    recorded: int
    #: median of the recorded quantity on each side (None for the answers-only rules)
    median_from: float | None = None
    median_to: float | None = None
    #: the answers graded: matched items both sides answered, those whose answers differ, the
    #: most a rerun moves of them and the floor that bound comes from
    answers: AnswersGrade = "identical"
    answered: int = 0
    differ: int = 0
    rerun_bound: int = 0
    floor: RerunFloor = DEFAULT_RERUN_FLOOR

    def counts(self) -> str:
        """`k of n answers differ; a rerun moves at most B (floor: SOURCE)`."""
        return (
            f"{self.differ} of {self.answered} answers differ; a rerun moves at most "
            f"{self.rerun_bound} (floor {100 * self.floor.rate:.2f}% per answer, "
            f"{self.floor.source})"
        )

    def sentence(self, label_from: str, label_to: str) -> str:
        """One plain sentence for the console and the report."""
        if self.basis == "identical_answers":
            why = f"identical answers on {self.identical} of {self.items} items"
        elif self.basis == "rerun_answers":
            why = (
                f"nothing recorded tells them apart and the answers are indistinguishable "
                f"from a rerun ({self.counts()})"
            )
        else:
            what = "visual tokens" if self.basis == "visual_tokens" else "frames actually sent"
            why = (
                f"the {what} do not grow on any of {self.recorded} items "
                f"(median {_num(self.median_from)} -> {_num(self.median_to)}); "
                f"identical answers on {self.identical} of {self.items}"
            )
            if self.answers == "rerun":
                why += f"; indistinguishable from a rerun ({self.counts()})"
            elif self.answers == "different":
                why += (
                    f"; answers differ beyond a rerun ({self.differ} of {self.answered}): "
                    "something unrecorded differs"
                )
        return f"{label_to} looks like the same input as {label_from}: {why}"


def _num(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"{value:g}"


def _present(answers: np.ndarray) -> np.ndarray:
    """Which answers are present: not None, or a code >= 0 (`AnswerCodes`, -1 for none)."""
    if answers.dtype.kind in "iu":
        return np.asarray(answers >= 0)
    return np.asarray(np.not_equal(answers, _NONE))


def _identical(same: np.ndarray, answers_from: np.ndarray) -> int:
    """Items whose answers are present and equal, from `same` (`a == b` item by item): an
    answer equal to a present one is present too, so only one side is checked for None."""
    return int(np.count_nonzero(same & _present(answers_from)))


def _does_not_grow(
    before: np.ndarray, after: np.ndarray
) -> tuple[bool, int, float | None, float | None]:
    """Whether `after` grows on no item recorded on both sides, with the count and medians;
    (False, 0, ...) when nothing is recorded on both sides."""
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


def _answers(values: Sequence[str | None] | np.ndarray) -> np.ndarray:
    """A 1-D object array of the answers (an object array, or integer codes with -1 for none,
    used as they are)."""
    if isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "Oiu":
        return values
    return np.asarray(list(values), dtype=object)


def same_input(
    answers_from: Sequence[str | None] | np.ndarray,
    answers_to: Sequence[str | None] | np.ndarray,
    *,
    visual_tokens_from: Sequence[float | None] | np.ndarray | None = None,
    visual_tokens_to: Sequence[float | None] | np.ndarray | None = None,
    effective_frames_from: Sequence[float | None] | np.ndarray | None = None,
    effective_frames_to: Sequence[float | None] | np.ndarray | None = None,
    frame_step: bool = True,
    min_items: int = SAME_INPUT_MIN_ITEMS,
    floor: RerunFloor = DEFAULT_RERUN_FLOOR,
) -> SameInput | None:
    """The rule above on two aligned columns of matched items (`from` the smaller budget).

    Every sequence is aligned item by item; a missing value is None or NaN (the answers may
    be integer codes instead, equal codes for equal answers and -1 for none). `frame_step` says
    whether the two budgets ask for different frame counts (the effective-frames rule applies
    only then: a pixel step keeps the frame count by design). Returns None when the pair looks
    like different inputs, or when the rule cannot tell.
    """
    a_from = _answers(answers_from)
    a_to = _answers(answers_to)
    if a_from.shape != a_to.shape:
        raise ValueError(f"answer columns differ in length: {a_from.shape[0]} vs {a_to.shape[0]}")
    n = int(a_from.shape[0])
    # item by item `a == b` (one element-wise comparison); the count of identical answers is
    # taken only where a verdict reports it
    same = np.asarray(a_from == a_to, dtype=bool) if n else np.zeros(0, dtype=bool)
    identical = _identical(same, a_from)
    answered = int(np.count_nonzero(_present(a_from) & _present(a_to)))
    differ = answered - identical
    bound = rerun_bound(answered, floor)
    graded = {
        "answers": grade_answers(differ, answered, floor),
        "answered": answered,
        "differ": differ,
        "rerun_bound": bound,
        "floor": floor,
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
        if recorded == 0:
            continue
        if not flat:
            return None
        return SameInput.model_validate(
            {
                "basis": basis,
                "identical": identical,
                "items": n,
                "recorded": recorded,
                "median_from": med_from,
                "median_to": med_to,
                **graded,
            }
        )
    if n < min_items or answered < n:
        return None
    if identical == n:
        return SameInput.model_validate(
            {"basis": "identical_answers", "identical": n, "items": n, "recorded": n, **graded}
        )
    if graded["answers"] == "rerun":
        return SameInput.model_validate(
            {"basis": "rerun_answers", "identical": identical, "items": n, "recorded": n, **graded}
        )
    return None

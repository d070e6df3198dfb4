"""The rerun floor: the share of answers two executions of one configuration give differently,
and how a count of differing answers is graded against it.

Greedy decoding is not bit-identical across GPU runs (batching, kernels, reduction order), so
whether k of n differing answers are "a rerun" needs the floor of the set-up, never of the pair
it judges, and from evidence only (docs/compare.md, "Reruns"): **measured** from repeats or
reruns (`RerunFloor.of_counts`) or **stated** by the user (`--rerun-floor`,
`RerunFloor.of_percent`). Without one the grade is *identical* or *cannot tell*; a floor on fewer
than `FLOOR_MIN_ANSWERS` answers or above `FLOOR_MAX_RATE` cannot call a gap a rerun
(`RerunFloor.weakness`).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from scipy.stats import beta, binom

#: how two sides' answers compare (cannot tell: no floor, one too thin, or no answer)
AnswersGrade = Literal["identical", "rerun", "different", "cannot_tell"]
#: the one-sided level of the rerun bound (a count a rerun reaches with p < 5% is beyond one)
RERUN_LEVEL = 0.95
#: the fewest answers a measured floor must rest on to call a gap "a rerun"
FLOOR_MIN_ANSWERS = 100
#: the largest floor that can call a gap "a rerun" (beyond it, no one input run twice)
FLOOR_MAX_RATE = 0.05
#: what every verdict without a floor says, so the reader knows how to get one
HOW_TO_MEASURE = (
    "measure one with repeats of one configuration, a rerun of it (`compare A B --rerun RUN`, "
    "`import lmms-eval --rerun-of LABEL`) or `sweep --rerun-check 0.2`, or state one with "
    "`--rerun-floor PERCENT`"
)


class RerunFloor(BaseModel):
    """The share of answers a rerun of one input moves, and where that figure comes from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rate: float = Field(ge=0.0, le=1.0)
    #: one sentence naming the evidence (`measured: k of n answers moved between ...`)
    source: str
    #: measured from executions the caller has (repeats, reruns)
    measured: bool = False
    #: stated by the user (`--rerun-floor`)
    stated: bool = False
    #: a measured floor's counts: the answers that moved, of those compared
    moved: int | None = Field(default=None, ge=0)
    answers: int | None = Field(default=None, ge=0)
    #: what was compared, for a measured floor (`between A's own repeats`)
    evidence: str | None = None

    @classmethod
    def of_counts(cls, moved: int, answers: int, evidence: str) -> RerunFloor:
        """`moved` of `answers` (at least 1) answers moving `evidence` (`between cells and their
        reruns`)."""
        if answers < 1 or not 0 <= moved <= answers:
            raise ValueError(f"a floor needs 0 <= moved <= answers >= 1 (got {moved} of {answers})")
        return cls(
            rate=moved / answers,
            source=f"measured: {moved} of {answers} answers moved {evidence}",
            measured=True,
            moved=moved,
            answers=answers,
            evidence=evidence,
        )

    @classmethod
    def of_percent(cls, percent: float, flag: str = "--rerun-floor") -> RerunFloor:
        """The floor a user states, in percent of answers (`--rerun-floor 0.3`)."""
        if not math.isfinite(percent) or not 0.0 <= percent <= 100.0:
            raise ValueError(f"{flag} {percent}: give a percent of answers in [0, 100]")
        return cls(
            rate=percent / 100.0,
            source=f"stated: {percent:g}% per answer ({flag} {percent:g})",
            stated=True,
        )

    @property
    def interval(self) -> tuple[float, float] | None:
        """The two-sided 95% Clopper-Pearson interval of a measured rate (None without counts)."""
        if self.moved is None or not self.answers:
            return None
        k, n = self.moved, self.answers
        low = 0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1))
        high = 1.0 if k == n else float(beta.ppf(0.975, k + 1, n - k))
        return low, high

    def weakness(self) -> str | None:
        """Why this floor cannot call a gap "a rerun" (too few answers, too high a rate), or
        None."""
        if self.measured and self.answers is not None and self.answers < FLOOR_MIN_ANSWERS:
            return (
                f"it rests on {self.answers} answer{'s' if self.answers != 1 else ''}, fewer "
                f"than {FLOOR_MIN_ANSWERS}"
            )
        if self.rate > FLOOR_MAX_RATE:
            return (
                f"{_percent(self.rate)} per answer is above {_percent(FLOOR_MAX_RATE)}: such "
                "reruns do not give one input"
            )
        return None

    def line(self) -> str:
        """`measured, 3 of 160 answers moved between ... (1.88% per answer, 95% CI 0.39% to
        5.38%)` or `stated, 0.3% per answer (--rerun-floor 0.3)`; a thin floor says so."""
        kind = "measured" if self.measured else "stated" if self.stated else "given"
        rest = self.source.split(": ", 1)[1] if ": " in self.source else self.source
        text = f"{kind}, {rest}"
        interval = self.interval
        if interval is not None:
            text += (
                f" ({_percent(self.rate)} per answer, 95% CI {_percent(interval[0])} to "
                f"{_percent(interval[1])})"
            )
        why = self.weakness()
        if why is not None:
            text += f"; too thin to call any gap a rerun: {why}"
        return text

    @property
    def upper(self) -> float:
        """The interval's upper end (the rate itself for a stated floor)."""
        interval = self.interval
        return self.rate if interval is None else max(self.rate, interval[1])


def _percent(rate: float) -> str:
    return f"{100 * rate:.2f}%"


def _bound(n: int, rate: float) -> int:
    if n <= 0 or rate <= 0.0:
        return 0
    return int(binom.ppf(RERUN_LEVEL, n, min(rate, 1.0)))


def rerun_bound(n: int, floor: RerunFloor | None = None) -> int | None:
    """The most answers of `n` a rerun moves: the smallest k with P(X <= k) >= 0.95 for X ~
    Binomial(n, floor.rate); None without a floor."""
    if floor is None:
        return None
    return _bound(n, floor.rate)


def grade_answers(differ: int, n: int, floor: RerunFloor | None = None) -> AnswersGrade:
    """*identical* (none of `n` differs); with a floor that can decide, *rerun* (at most
    `rerun_bound`) else *different*; with a thin floor, *different* only beyond the bound at
    its interval's upper end, else *cannot_tell*; without a floor, *cannot_tell*. No answer
    compared (`n` 0) is *cannot_tell*."""
    if n <= 0:
        return "cannot_tell"
    if differ == 0:
        return "identical"
    if floor is None:
        return "cannot_tell"
    if floor.weakness() is not None:
        return "different" if differ > _bound(n, floor.upper) else "cannot_tell"
    return "rerun" if differ <= _bound(n, floor.rate) else "different"


def retired_default_floor() -> RerunFloor:
    """The floor once used without evidence, 7 of 2,700 answers (0.26%), kept for the retired
    name's one release: it came from eight public lmms-eval runs of frame selectors against a
    control, the runs it then judged, and no rerun at all."""
    return RerunFloor(
        rate=7 / 2700,
        source=(
            "retired default: 7 of 2,700 answers (0.26%), taken from the selector runs it "
            "judged, not from reruns"
        ),
    )

"""The verdicts a binary block adds after its flips (paired tests, minimum detectable effect,
additive-model test, noise bound), computed once as records holding their numbers and scope
(the small-sample note, the draws behind a resampled p's floor, the counts) and laid out by
`itemscale analyze` and by the report's `section_inference.html` alike."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..analysis.measures import (
    BinarySeries,
    ComparisonRecord,
    Estimate,
    Heterogeneity,
    HeterogeneitySkipped,
    Power,
    p_value_text,
    signed_text,
    stat_text,
)


@dataclass(frozen=True)
class PairedTestVerdict:
    """One pair's accuracy change and its p-values as written; `holds`: the change holds
    after Holm's adjustment at 5% (None: not estimable, the note in every figure's place)."""

    pair: str
    requested: bool
    change: str
    clustered_p: str
    holm_p: str
    holds: bool | None
    exact_p: str
    bootstrap_p: str


@dataclass(frozen=True)
class PairedTestsVerdict:
    """The adjacent pairs (one Holm family of `n_family`) and the requested ones (another)."""

    n_family: int
    adjacent: tuple[PairedTestVerdict, ...]
    requested: tuple[PairedTestVerdict, ...]
    note: str | None

    @classmethod
    def of(cls, block: BinarySeries, note: str | None) -> PairedTestsVerdict | None:
        tests = block.paired_tests
        if tests is None or not tests.adjacent:
            return None
        families = {
            requested: tuple(
                PairedTestVerdict(
                    pair=arrow,
                    requested=requested,
                    change=signed_text(t.difference, note),
                    clustered_p=p_value_text(t.clustered_mcnemar_p, note=note),
                    holm_p=p_value_text(t.holm_p, note=note),
                    holds=None if note is not None else t.significant_after_holm,
                    exact_p=p_value_text(t.exact_mcnemar_p, note=note),
                    bootstrap_p=p_value_text(t.bootstrap_p, draws=tests.bootstrap_draws, note=note),
                )
                for arrow, t in (records or {}).items()
            )
            for requested, records in ((False, tests.adjacent), (True, tests.requested))
        }
        return cls(tests.n_family, families[False], families[True], note)

    def verdict(self, test: PairedTestVerdict) -> str:
        return self.note or ("holds" if test.holds else "does not hold")

    def in_budget_order(self, adjacent: list[str]) -> list[PairedTestVerdict]:
        """Every pair in the budget order of the block's `adjacent` list, others after it."""
        rank = {arrow: n for n, arrow in enumerate(adjacent)}
        return sorted(
            [*self.adjacent, *self.requested],
            key=lambda t: (t.requested, rank.get(t.pair, len(rank)), t.pair),
        )


def _figure(
    value: float | None, why: str | None, note: str | None, text: Callable[[float], str]
) -> str:
    if note is not None:
        return note
    if why is not None:
        return f"not estimable ({why})"
    return "n/a" if value is None else text(float(value))


@dataclass(frozen=True)
class AxisPowerVerdict:
    """An axis' minimum detectable effect and the videos the target needs (fractions and a
    count), each with the reason `analyze` recorded where it is not estimable."""

    axis: str
    mde: float | None
    videos_needed: float | None
    mde_why: str | None
    need_why: str | None
    pairs: tuple[str, ...]
    note: str | None

    def mde_text(self, unit: str = "") -> str:
        return _figure(self.mde, self.mde_why, self.note, lambda v: f"{100 * v:.1f}{unit}")

    def need_text(self, unit: str = "") -> str:
        return _figure(self.videos_needed, self.need_why, self.note, lambda v: f"{int(v):,}{unit}")

    def text(self, target: float) -> str:
        """As `analyze` prints it: both figures, or "not estimable" with the reason for each
        that is (one reason when both share it)."""
        if self.note is None and self.mde_why is not None and self.mde_why == self.need_why:
            return f"not estimable ({self.mde_why})"
        if self.note is None and self.need_why is not None:
            return f"{self.mde_text(' points')}; {target:.1f} points: {self.need_text()}"
        return f"{self.mde_text(' points')} ({target:.1f} points needs {self.need_text(' videos')})"


@dataclass(frozen=True)
class PowerVerdict:
    """The power record (`power` and two-sided `alpha`, the `target` change, `n_videos`) and
    each axis' figures."""

    record: Power
    axes: tuple[AxisPowerVerdict, ...]

    @classmethod
    def of(cls, block: BinarySeries, note: str | None) -> PowerVerdict | None:
        power = block.power
        if power is None or not power.axes:
            return None
        return cls(
            record=power,
            axes=tuple(
                AxisPowerVerdict(
                    str(axis),
                    a.mde,
                    a.videos_needed,
                    a.mde_not_estimable,
                    a.videos_needed_not_estimable,
                    tuple(a.pairs),
                    note,
                )
                for axis, a in power.axes.items()
            ),
        )


@dataclass(frozen=True)
class ShareVerdict:
    """A share of items (the harmful rate, or a trajectory's) observed against the additive
    model, their difference and its two-sided parametric-bootstrap p as written."""

    name: str
    observed: Estimate
    additive: Estimate
    difference: str
    p: str


@dataclass(frozen=True)
class AdditiveVerdict:
    """The additive-model (item + budget, no interaction) test of one grid: its shares (the
    harmful rate first, then each trajectory's) from `n_null` parametric draws, and with
    repeats the noise bound (bound, harmful rate minus it, one-sided p); or `skipped`, why it
    was not tested (it did not run, or too few videos to show it)."""

    skipped: str | None
    n_items: int = 0
    n_informative: int = 0
    n_null: int = 0
    shares: tuple[ShareVerdict, ...] = ()
    noise: tuple[str, str, str] | None = None

    @classmethod
    def of(
        cls, h: Heterogeneity | HeterogeneitySkipped | None, not_tested: str | None
    ) -> AdditiveVerdict | None:
        """`not_tested` is why a test that ran is not shown (too few videos: "not estimable
        with 4 video(s)")."""
        if h is None:
            return None
        if isinstance(h, HeterogeneitySkipped) or not_tested is not None:
            return cls(h.skipped if isinstance(h, HeterogeneitySkipped) else not_tested)
        shares: list[tuple[str, Heterogeneity | ComparisonRecord]] = [
            ("harmful rate", h),
            *h.trajectories.items(),
        ]
        noise = h.noise
        return cls(
            skipped=None,
            n_items=h.n_items,
            n_informative=h.n_informative,
            n_null=h.n_null,
            shares=tuple(
                ShareVerdict(
                    name,
                    c.observed,
                    c.additive,
                    signed_text(c.difference),
                    p_value_text(c.p_value, draws=h.n_null, sides=2),
                )
                for name, c in shares
            ),
            noise=None
            if noise is None
            else (
                stat_text(noise.noise_bound),
                signed_text(noise.difference),
                p_value_text(noise.p_value),
            ),
        )


@dataclass(frozen=True)
class InferenceVerdicts:
    """Everything a binary block adds after its flips, for both ways of writing it: `note`
    ("not estimable", too few videos) stands in the intervals, p-values and power figures, and
    the additive tests read "not tested (not estimable with N video(s))"."""

    paired: PairedTestsVerdict | None
    power: PowerVerdict | None
    additive: AdditiveVerdict | None
    #: The additive test of the grid with the text-only answer as budget 0.
    additive_with_text: AdditiveVerdict | None

    @classmethod
    def of(cls, block: BinarySeries, note: str | None = None) -> InferenceVerdicts:
        why = None if note is None else f"{note} with {block.n_videos} video(s)"
        with_text = block.grid_with_text
        return cls(
            paired=PairedTestsVerdict.of(block, note),
            power=PowerVerdict.of(block, note),
            additive=AdditiveVerdict.of(block.heterogeneity, why),
            additive_with_text=AdditiveVerdict.of(
                with_text.heterogeneity if with_text is not None else None, why
            ),
        )

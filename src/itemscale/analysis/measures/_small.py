"""Small samples say so: below `MIN_VIDEOS` videos the video bootstrap, the clustered tests and
the power calculation have too few clusters to mean anything (one video gives an interval of
width 0, four a "minimum detectable effect" of hundreds of points), so `analyze` records which
numbers cannot be trusted and the console and the report print "not estimable" in their place.
The point estimates stay: they are what the run measured."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ._result_models import SmallSample
from ._result_series import OpenEndedSeries

#: Fewer videos than this and the intervals, tests and power are not estimable.
MIN_VIDEOS: Final[int] = 10
NOT_ESTIMABLE: Final[str] = "not estimable"
#: What `small_sample.not_estimable` lists, each with why.
UNTRUSTED: Final[dict[str, str]] = {
    "intervals": "a bootstrap over fewer than {m} videos resamples too few clusters: with one "
    "video every interval has width 0",
    "paired_tests": "the clustered McNemar test and the bootstrap p need many videos; with few "
    "they disagree and the exact test ignores the clustering",
    "power": "the per-video variance behind the minimum detectable effect is estimated from too "
    "few videos",
    "heterogeneity": "the additive-model test's parametric bootstrap resamples videos",
}


def small_sample(n_videos: int) -> SmallSample | None:
    """The `small_sample` record of a block over `n_videos` videos, None when enough."""
    if n_videos >= MIN_VIDEOS:
        return None
    return SmallSample(
        n_videos=int(n_videos),
        min_videos=MIN_VIDEOS,
        not_estimable={k: v.format(m=MIN_VIDEOS) for k, v in UNTRUSTED.items()},
    )


def _record(block: Any) -> SmallSample | Mapping[str, Any] | None:
    """A block's `small_sample` record: the typed block's, or the JSON form's as it is. A
    series of open-ended items only keeps it on its continuous block (the entry has no record
    of its own), so that one is read: its numbers are as untrustworthy as any."""
    if isinstance(block, Mapping):
        found = block.get("small_sample")
        if found is None and "kind" not in block and isinstance(block.get("continuous"), Mapping):
            found = block["continuous"].get("small_sample")
        return found if isinstance(found, Mapping | SmallSample) else None
    if isinstance(block, OpenEndedSeries):
        return block.continuous.small_sample
    found = getattr(block, "small_sample", None)
    return found if isinstance(found, SmallSample) else None


def small_sample_text(block: Any) -> str | None:
    """One sentence for the console and the report, or None; `block` typed or as JSON."""
    record = _record(block)
    if record is None:
        return None
    if isinstance(record, SmallSample):
        n_videos, min_videos = record.n_videos, record.min_videos
    else:
        n_videos, min_videos = record["n_videos"], record["min_videos"]
    return (
        f"small sample: {n_videos} video(s), fewer than {min_videos}: "
        "intervals, paired tests' p-values, the minimum detectable effect and the additive-model "
        "test are not estimable (a bootstrap or a clustered test over so few videos gives "
        "degenerate numbers); the point estimates stand"
    )


def interval_note(block: Any) -> str | None:
    """What the console and the report write in place of an interval, a p-value or a power
    figure of this block: "not estimable" where it has a `small_sample` record (typed or JSON),
    else None (the numbers are shown). The stored numbers are never changed: this is decided
    when they are displayed."""
    return NOT_ESTIMABLE if _record(block) is not None else None

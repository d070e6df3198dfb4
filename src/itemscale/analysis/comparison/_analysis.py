"""Two sides of the response table, item by item: the analysis behind `itemscale compare`
(docs/compare.md), which `itemscale.workflows.compare` runs on the sides it chose.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from ...core.responses import ANSWERED_STATUSES
from ..measures import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_CI,
    AnswerAgreement,
    Estimate,
    RerunFloor,
    SameInput,
    VideoBootstrap,
    answer_agreement,
    answer_keys,
    intervals,
    paired_tests,
    same_input,
)
from ._errors import CompareError
from ._floor import choose_floor, input_scale
from ._pairs import Matched, NamedRerun, Side, match_pairs
from ._provenance import Transport, provenance_diff, side_setup
from ._records import (
    AnswerDiff,
    AttributeGaps,
    BootstrapInfo,
    CompareResult,
    CompareSide,
    CompareTaskKind,
    GroupGap,
    MatchCounts,
    RerunNoise,
    SelectionSide,
    Verdict,
)
from ._verdicts import cost_verdict, gap_sentence, verdicts

#: an attribute is broken down when it has at least 2 and at most this many values
MAX_GROUPS = 12
#: videos listed as contributing most to the gap
TOP_VIDEOS = 5


def _interval(value: float | None, ci: np.ndarray | None) -> Estimate:
    """Each end None where undefined (no interval at all when either end is)."""

    def clean(x: float | None) -> float | None:
        return None if x is None or not np.isfinite(x) else float(x)

    if ci is None:
        return Estimate(clean(value))
    return Estimate(clean(value), clean(ci[0]), clean(ci[1]))


def _mean_intervals(
    boot: VideoBootstrap, matrix: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Column means of `matrix` [n, M], their intervals [M, 2] and resampled means [B, M]."""
    if matrix.shape[0] == 0:
        width = matrix.shape[1]
        return np.full(width, np.nan), np.full((width, 2), np.nan), np.zeros((0, width))
    point = matrix.mean(axis=0)
    if boot.bootstrap == 0:
        return point, np.full((matrix.shape[1], 2), np.nan), np.zeros((0, matrix.shape[1]))
    samples = boot.means(matrix)
    jack = None
    if boot.method == "bca" and boot.n_clusters >= 3:
        per_video = boot.cluster_sums(matrix)
        counts = boot.items_per_cluster
        with np.errstate(invalid="ignore", divide="ignore"):
            jack = (per_video.sum(axis=0)[None, :] - per_video) / (counts.sum() - counts)[:, None]
    return point, intervals(point, samples, jack, boot.method), samples


def _outcomes(pairs: pd.DataFrame) -> tuple[str, np.ndarray, np.ndarray]:
    """('binary', correct A, correct B) when both sides score correctness on every pair, else
    ('continuous', score A, score B); a pair with neither is refused."""
    for kind, column in (("binary", "correct"), ("continuous", "score")):
        va = pd.to_numeric(pairs[f"{column}_a"], errors="coerce").to_numpy(dtype=float)
        vb = pd.to_numeric(pairs[f"{column}_b"], errors="coerce").to_numpy(dtype=float)
        if np.isfinite(va).all() and np.isfinite(vb).all():
            return kind, va, vb
    raise CompareError(
        "the matched rows do not all carry `correct` (or all `score`) on both sides: compare "
        "needs one outcome for every matched answer"
    )


def _answer_diff(
    kind: str, ya: np.ndarray, yb: np.ndarray, videos: np.ndarray, boot: VideoBootstrap
) -> AnswerDiff:
    point, ci, samples = _mean_intervals(boot, np.column_stack([ya, yb, yb - ya]))
    acc_a, acc_b = _interval(point[0], ci[0]), _interval(point[1], ci[1])
    if kind == "binary" and len(ya):
        test = paired_tests(np.column_stack([ya, yb]), videos, [(0, 1)], ["A", "B"], boot)[0]
        right_a, right_b = ya >= 1, yb >= 1
        diff = test.difference_ci
        return AnswerDiff(
            kind="binary",
            both_right=int((right_a & right_b).sum()),
            both_wrong=int((~right_a & ~right_b).sum()),
            right_only_a=test.n_down,
            right_only_b=test.n_up,
            accuracy_a=acc_a,
            accuracy_b=acc_b,
            difference=_interval(test.difference, None if diff is None else np.array(diff)),
            clustered_statistic=test.clustered_statistic,
            clustered_p=test.clustered_p,
            exact_mcnemar_p=test.exact_mcnemar_p,
            bootstrap_p=test.bootstrap_p,
        )
    boot_p = None
    if samples.shape[0] and len(ya):
        d = point[2]
        extreme = np.abs(samples[:, 2] - d) >= abs(d) - 1e-9 * max(abs(d), 1.0)
        boot_p = float((1.0 + extreme.sum()) / (samples.shape[0] + 1.0))
    return AnswerDiff(
        kind="binary" if kind == "binary" else "continuous",
        both_right=0 if kind == "binary" else None,
        both_wrong=0 if kind == "binary" else None,
        right_only_a=0 if kind == "binary" else None,
        right_only_b=0 if kind == "binary" else None,
        accuracy_a=acc_a,
        accuracy_b=acc_b,
        difference=_interval(point[2], ci[2]),
        clustered_statistic=None,
        clustered_p=None,
        exact_mcnemar_p=None,
        bootstrap_p=boot_p,
    )


def _kind_rows(side: Side, kind: CompareTaskKind | None) -> Side:
    """The side's rows of one task kind (`--task-kind`); refused when it has none."""
    if kind is None:
        return side
    mcqa = side.rows["task_kind"].astype(str) == "mcqa"
    keep = mcqa if kind == "mcqa" else ~mcqa
    if not keep.any():
        held = ", ".join(sorted(set(side.rows["task_kind"].astype(str)))) or "none"
        raise CompareError(
            f"{side.run}: no {kind} items in {side.config} (it holds: {held}); --task-kind"
        )
    return replace(side, rows=side.rows[keep].reset_index(drop=True))


def _by_kind(
    pairs: pd.DataFrame, bootstrap: int, seed: int, method: str
) -> dict[CompareTaskKind, tuple[pd.DataFrame, np.ndarray, np.ndarray, AnswerDiff]]:
    """Each task kind's matched pairs, outcomes and difference, each with its own bootstrap."""
    mcqa = pairs["task_kind_a"].astype(str) == "mcqa"
    out: dict[CompareTaskKind, tuple[pd.DataFrame, np.ndarray, np.ndarray, AnswerDiff]] = {}
    for name, mask in (("mcqa", mcqa), ("open_ended", ~mcqa)):
        sub = pairs[mask].reset_index(drop=True)
        if not len(sub):
            continue
        kind, ya, yb = _outcomes(sub)
        videos = sub["video_id_a"].astype(str).to_numpy()
        boot = VideoBootstrap(videos, bootstrap, seed, method=method)
        key: CompareTaskKind = "mcqa" if name == "mcqa" else "open_ended"
        out[key] = (sub, ya, yb, _answer_diff(kind, ya, yb, videos, boot))
    return out


def _counts(m: Matched) -> MatchCounts:
    pairs = m.pairs
    raw = pairs["raw_text_a"].notna() & pairs["raw_text_b"].notna()
    ans = pairs["answer_a"].notna() & pairs["answer_b"].notna()
    same_raw = raw & (pairs["raw_text_a"].astype(str) == pairs["raw_text_b"].astype(str))
    same_ans = ans & (pairs["answer_a"].astype(str) == pairs["answer_b"].astype(str))
    return MatchCounts(
        matched=len(pairs),
        matched_items=int(pairs["item_id"].nunique()),
        matched_videos=int(pairs["video_id_a"].nunique()),
        only_a=m.only_a,
        only_b=m.only_b,
        failed_a=m.failed_a,
        failed_b=m.failed_b,
        identical_raw=int(same_raw.sum()),
        raw_recorded=int(raw.sum()),
        identical_answers=int(same_ans.sum()),
        answers_recorded=int(ans.sum()),
    )


def _repeat_means(rows: pd.DataFrame, items: pd.Index) -> tuple[int, pd.DataFrame]:
    """(the most repeats any item of `items` has, per-item count, mean correctness, noise)."""
    answered = rows[
        rows["status"].astype(str).isin(ANSWERED_STATUSES) & rows["item_id"].isin(items)
    ]
    correct = pd.to_numeric(answered["correct"], errors="coerce")
    grouped = correct.groupby(answered["item_id"].astype(str))
    table = pd.DataFrame({"n": grouped.count(), "p": grouped.mean()})
    r = int(table["n"].max()) if len(table) else 0
    n, p = table["n"].to_numpy(dtype=float), table["p"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        table["noise"] = np.where(n >= 2, 2.0 * p * (1.0 - p) * n / (n - 1.0), np.nan)
    return r, table


def _rerun_noise(
    pairs: pd.DataFrame, a: Side, b: Side, kind: str, bootstrap: int, seed: int, method: str
) -> RerunNoise | None:
    """With repeats on either side: each side's noise floor (P two of its own reruns disagree
    on correctness, docs/measures.md "Repeats") beside P(a run of A and a run of B disagree),
    each side's every answered repeat counted (they need not match one for one), on the matched
    items that every repeat of both sides answered; binary outcomes only."""
    if kind != "binary" or max(a.rows["repeat"].nunique(), b.rows["repeat"].nunique()) < 2:
        return None
    items = pd.Index(pairs["item_id"].astype(str).unique())
    r_a, side_a = _repeat_means(a.rows, items)
    r_b, side_b = _repeat_means(b.rows, items)
    if max(r_a, r_b) < 2:
        return None
    full = side_a.index[side_a["n"] == r_a].intersection(side_b.index[side_b["n"] == r_b])
    full = full.sort_values()
    pa, pb = side_a.loc[full, "p"].to_numpy(), side_b.loc[full, "p"].to_numpy()
    between = pa * (1 - pb) + pb * (1 - pa)
    first = pairs.assign(item=pairs["item_id"].astype(str)).drop_duplicates("item")
    videos = first.set_index("item").loc[full, "video_id_a"].astype(str).to_numpy()
    boot = VideoBootstrap(videos, bootstrap, seed, method=method)
    nan = np.full(len(full), np.nan)
    noise = [
        s.loc[full, "noise"].to_numpy() if r >= 2 else nan
        for s, r in ((side_a, r_a), (side_b, r_b))
    ]
    point, ci, _ = _mean_intervals(boot, np.column_stack([between, *noise]))
    noise_a = _interval(point[1], ci[1]) if r_a >= 2 else None
    noise_b = _interval(point[2], ci[2]) if r_b >= 2 else None
    return RerunNoise(
        repeats_a=r_a,
        repeats_b=r_b,
        items=len(full),
        noise_a=noise_a,
        noise_b=noise_b,
        between=_interval(point[0], ci[0]),
    )


def _answer_keys(pairs: pd.DataFrame, side: str) -> np.ndarray:
    """The parsed answer of a multiple-choice pair, the raw output of an open-ended one."""
    frame = pd.DataFrame(
        {
            "task_kind": pairs[f"task_kind_{side}"].astype(str).to_numpy(),
            "answer": pairs[f"answer_{side}"].astype(object).to_numpy(),
            "raw_text": pairs[f"raw_text_{side}"].astype(object).to_numpy(),
        }
    )
    return answer_keys(frame).to_numpy(dtype=object)


def _same_input(
    pairs: pd.DataFrame, a: Side, b: Side, floor: RerunFloor | None
) -> tuple[SameInput | None, AnswerAgreement]:
    """The one rule, both ways: the two sides are the same input only when neither side's
    recorded input grows over the other's (or, with nothing recorded on most items, the
    answers agree, or agree within the rerun floor); with the answers graded either way."""

    def col(name: str) -> np.ndarray:
        return pd.to_numeric(pairs[name], errors="coerce").to_numpy(dtype=float)

    frames_a = pd.to_numeric(a.rows["frames"], errors="coerce").dropna().unique()
    frames_b = pd.to_numeric(b.rows["frames"], errors="coerce").dropna().unique()
    frame_step = set(frames_a.tolist()) != set(frames_b.tolist())
    answers = {side: _answer_keys(pairs, side) for side in "ab"}

    def one_way(first: str, second: str) -> SameInput | None:
        return same_input(
            answers[first],
            answers[second],
            visual_tokens_from=col(f"visual_tokens_{first}"),
            visual_tokens_to=col(f"visual_tokens_{second}"),
            effective_frames_from=col(f"effective_frames_{first}"),
            effective_frames_to=col(f"effective_frames_{second}"),
            frame_step=frame_step,
            floor=floor,
        )

    # equal budgets have no direction: the two sides are one input only if it holds both ways
    one_way_verdict, other_way = one_way("a", "b"), one_way("b", "a")
    same = one_way_verdict if one_way_verdict is not None and other_way is not None else None
    return same, answer_agreement(answers["a"], answers["b"], floor=floor)


def _attributes(pairs: pd.DataFrame) -> pd.DataFrame:
    """Each pair's item attributes (A's, else B's); each distinct JSON text is parsed once."""
    text = pairs["attributes_a"].where(pairs["attributes_a"].notna(), pairs["attributes_b"])
    codes, uniques = pd.factorize(text)
    parsed = [json.loads(t) if isinstance(t, str) and t else {} for t in uniques]
    table = pd.DataFrame([*parsed, {}], dtype="string")  # the last row: no attributes
    return table.iloc[np.where(codes < 0, len(parsed), codes)].set_index(pairs.index)


def _group_table(keys: pd.Series, ya: np.ndarray, yb: np.ndarray) -> pd.DataFrame:
    """Per group (sorted by key): pairs, right only in A, right only in B, and B - A."""
    frame = pd.DataFrame(
        {
            "key": keys.astype(str).to_numpy(),
            "a": ya,
            "b": yb,
            "only_a": (ya > yb).astype(np.int64),
            "only_b": (yb > ya).astype(np.int64),
        }
    )
    table = frame.groupby("key", sort=True).agg(
        pairs=("a", "size"),
        only_a=("only_a", "sum"),
        only_b=("only_b", "sum"),
        mean_a=("a", "mean"),
        mean_b=("b", "mean"),
    )
    table["difference"] = table["mean_b"] - table["mean_a"]
    return table


def _gaps(table: pd.DataFrame) -> tuple[GroupGap, ...]:
    pairs = table["pairs"].to_numpy(dtype=np.int64)
    only_a = table["only_a"].to_numpy(dtype=np.int64)
    only_b = table["only_b"].to_numpy(dtype=np.int64)
    difference = table["difference"].to_numpy(dtype=float)
    return tuple(
        GroupGap(
            value=str(key),
            pairs=int(pairs[j]),
            right_only_a=int(only_a[j]),
            right_only_b=int(only_b[j]),
            difference=float(difference[j]),
        )
        for j, key in enumerate(table.index)
    )


def _where(
    pairs: pd.DataFrame, ya: np.ndarray, yb: np.ndarray, by: Sequence[str]
) -> tuple[tuple[AttributeGaps, ...], tuple[GroupGap, ...]]:
    attrs = _attributes(pairs)
    names = (
        list(by)
        if by
        else sorted(c for c in attrs.columns if 2 <= attrs[c].nunique() <= MAX_GROUPS)
    )
    missing = [n for n in names if n not in attrs.columns]
    if missing:
        known = ", ".join(sorted(attrs.columns)) or "none"
        raise CompareError(f"--by {missing[0]}: no such item attribute (recorded: {known})")
    gaps = tuple(
        AttributeGaps(attribute=n, groups=_gaps(_group_table(attrs[n].fillna("(none)"), ya, yb)))
        for n in names
    )
    videos = _group_table(pairs["video_id_a"], ya, yb)
    videos = videos[(videos["only_a"] + videos["only_b"]) > 0]
    ranked = videos.assign(
        net=-(videos["only_b"] - videos["only_a"]).abs(),
        total=-(videos["only_a"] + videos["only_b"]),
        name=videos.index,
    ).sort_values(["net", "total", "name"], kind="stable")
    return gaps, _gaps(ranked.head(TOP_VIDEOS))


def _frames_used(rows: pd.DataFrame) -> pd.Series:
    """The frames each answered row used: `effective_frames`, else the count asked."""
    answered = rows[rows["status"].isin(list(ANSWERED_STATUSES))]
    used = pd.to_numeric(answered["effective_frames"], errors="coerce")
    asked = pd.to_numeric(answered["frames"], errors="coerce")
    return used.fillna(asked).dropna()


def _selection_side(side: Side, used: pd.Series) -> SelectionSide | None:
    """The selector's record of a side whose series replays a selection file."""
    name = side.series.split("/")[-2] if "/" in side.series else side.series
    if not name.startswith("selection:"):
        return None
    sweep = side.provenance.get("sweep")
    chosen = sweep.get("selections") if isinstance(sweep, dict) else None
    record = chosen.get(side.config) if isinstance(chosen, dict) else None
    record = record if isinstance(record, dict) else {}
    asked = pd.to_numeric(side.rows["frames"], errors="coerce").dropna()
    scored = record.get("frames_scored_mean")
    return SelectionSide(
        selection=name.removeprefix("selection:"),
        path=record.get("path"),
        format=record.get("format"),
        sha256=record.get("sha256"),
        cap=side.config.startswith("<="),
        frames_cap=int(asked.max()) if len(asked) else None,
        frames_used_mean=float(used.mean()) if len(used) else None,
        frames_used_min=int(used.min()) if len(used) else None,
        frames_used_max=int(used.max()) if len(used) else None,
        frames_scored_mean=float(scored) if isinstance(scored, int | float) else None,
    )


def _subset_counts(counts: MatchCounts, pairs: pd.DataFrame) -> MatchCounts:
    """The counts with `matched` and `matched_videos` of a subset of the pairs (one kind)."""
    return counts.model_copy(
        update={"matched": len(pairs), "matched_videos": int(pairs["video_id_a"].nunique())}
    )


def _open_ended_gap(
    kinds: dict[CompareTaskKind, tuple[pd.DataFrame, np.ndarray, np.ndarray, AnswerDiff]],
    counts: MatchCounts,
    draws: int,
) -> Verdict | None:
    """The open-ended items' own gap sentence where the pairs also hold multiple choice."""
    if "mcqa" not in kinds or "open_ended" not in kinds:
        return None
    sub, _, _, diff = kinds["open_ended"]
    own = _subset_counts(counts, sub)
    return Verdict(
        key="gap_open_ended",
        sentence="Open-ended items: " + gap_sentence(own, diff, None, draws=draws),
    )


def _side_record(name: str, side: Side) -> CompareSide:
    rows = side.rows
    used = _frames_used(rows)
    return CompareSide(
        name="A" if name == "A" else "B",
        run=side.run,
        model=side.model,
        series=side.series,
        config=side.config,
        config_id=side.config_id,
        rows=len(rows),
        items=int(rows["item_id"].nunique()),
        videos=int(rows["video_id"].nunique()),
        repeats=int(rows["repeat"].nunique()),
        frames_used_mean=float(used.mean()) if len(used) else None,
        selection=_selection_side(side, used),
    )


def compare_settings(
    bootstrap: int | None, ci: str | None, task_kind: str | None
) -> tuple[int, str]:
    """(bootstrap, interval method), defaults filled in; refused before any run is read."""
    bootstrap = DEFAULT_BOOTSTRAP if bootstrap is None else bootstrap
    method = DEFAULT_CI if ci is None else ci
    if bootstrap < 0:
        raise CompareError(f"bootstrap={bootstrap}: resamples must be >= 0")
    if method not in ("bca", "percentile"):
        raise CompareError(f"ci={method!r}: use bca or percentile")
    if task_kind not in (None, "mcqa", "open_ended"):
        raise CompareError(f"task_kind={task_kind!r}: use mcqa or open_ended")
    return bootstrap, method


def compare_sides(
    side_a: Side,
    side_b: Side,
    *,
    by: Sequence[str] = (),
    bootstrap: int | None = None,
    seed: int = 0,
    ci: str | None = None,
    task_kind: CompareTaskKind | None = None,
    transport: Transport | None = None,
    rerun: NamedRerun | None = None,
    rerun_floor: RerunFloor | None = None,
) -> CompareResult:
    """Two chosen sides, item by item, as `itemscale compare` computes them (docs/compare.md).

    `by` names item attributes to break the gap down by (default: every attribute with 2 to 12
    values). `bootstrap` resamples of whole videos (default 1000), `seed`, `ci` (`bca` or
    `percentile`) as `analyze` takes them. `task_kind` keeps multiple-choice (`mcqa`) or
    open-ended (`open_ended`) items only; without it sides holding both compare each apart
    (`outcomes`), the multiple-choice accuracy first. `transport` describes how a recorded
    model entry's frames reach its model (the set-up diff's `transport`; None: unknown), which
    needs the installed backends, so the workflow passes it in. The same-input verdict grades
    the answers against a rerun floor from evidence only (`_floor.choose_floor`): `rerun_floor`
    (stated, `--rerun-floor`), else the floor the named `rerun` measures (`--rerun`), else the
    one the sides' own repeats and reruns measure; without any, identical or cannot tell.
    """
    bootstrap, method = compare_settings(bootstrap, ci, task_kind)
    side_a, side_b = _kind_rows(side_a, task_kind), _kind_rows(side_b, task_kind)
    matched = match_pairs(side_a.rows, side_b.rows)
    pairs = matched.pairs
    counts = _counts(matched)
    setup = provenance_diff(
        *(
            side_setup(s.provenance, s.rows, s.model, s.config, s.config_id, transport=transport)
            for s in (side_a, side_b)
        )
    )
    kinds = _by_kind(pairs, bootstrap, seed, method)
    if kinds:
        # the first kind (multiple choice where present) is the headline: its gap, noise, where
        main, ya, yb, answers = next(iter(kinds.values()))
    else:
        main, ya, yb = pairs, np.zeros(0), np.zeros(0)
        videos = pairs["video_id_a"].astype(str).to_numpy()
        answers = _answer_diff(
            "binary", ya, yb, videos, VideoBootstrap(videos, bootstrap, seed, method=method)
        )
    noise = (
        _rerun_noise(main, side_a, side_b, answers.kind, bootstrap, seed, method)
        if len(main)
        else None
    )
    try:
        floor = choose_floor(side_a, side_b, rerun, rerun_floor)
    except ValueError as exc:
        raise CompareError(str(exc)) from None
    same, agreement = _same_input(pairs, side_a, side_b, floor)
    scale = input_scale(side_a, side_b) if floor is None and agreement.differ else None
    by_attribute, top = _where(main, ya, yb, by) if len(main) else ((), ())
    extra = _open_ended_gap(kinds, counts, bootstrap)
    record_a, record_b = _side_record("A", side_a), _side_record("B", side_b)
    return CompareResult(
        a=record_a,
        b=record_b,
        provenance=setup,
        counts=counts,
        task_kind=task_kind,
        answers=answers,
        outcomes={k: v[3] for k, v in kinds.items()},
        repeats=noise,
        same_input=same,
        rerun_floor=floor,
        answer_agreement=agreement,
        input_scale=scale,
        by_attribute=by_attribute,
        top_videos=top,
        verdicts=(
            *verdicts(
                counts,
                answers,
                noise,
                same,
                setup,
                by_attribute,
                top,
                extra,
                _subset_counts(counts, main) if extra is not None else None,
                agreement=agreement,
                scale=scale,
                draws=bootstrap,
            ),
            *cost_verdict(record_a, record_b),
        ),
        bootstrap=BootstrapInfo(bootstrap=bootstrap, seed=seed, method=method),
    )

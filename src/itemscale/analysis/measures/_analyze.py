"""`analyze`: every measure for every model of a response table, as the typed records of the
documented JSON layout (`AnalysisResult`).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Unpack

import numpy as np
import pandas as pd

from ...core.responses import normalise_responses
from ._alternatives import (
    alternatives_fields,
    axis_warnings,
    is_alternatives,
    members_of,
    merged_series,
)
from ._binary import harmful_indicator, terminal_regression_indicator
from ._blocks import (
    BlockFields,
    binary_fields,
    binary_grid_with_text,
    continuous_block,
    continuous_fields,
    continuous_grid_with_text,
)
from ._bootstrap import DEFAULT_CI, VideoBootstrap, resample_counts
from ._inference import (
    check_requested,
    churn_records,
    heterogeneity_with_text,
    inference_block,
)
from ._matrix import INTERVENTION_SERIES_PREFIX, ResponseMatrix, build_matrices
from ._options import AnalysisOptions
from ._registry import measure_origins
from ._result import (
    ANALYSIS_SCHEMA_VERSION,
    AnalysisResult,
)
from ._result_models import (
    BootstrapSettings,
    GridSelection,
    Membership,
    Overlap,
    SmallSample,
    given,
)
from ._result_series import (
    AlternativesSeries,
    BinarySeries,
    BinaryWithText,
    ByAttribute,
    ContinuousBlock,
    ContinuousWithText,
    OpenEndedSeries,
    PluginMeasure,
)
from ._select import UnknownConfigError, select_configs
from ._settings import AnalysisSettings
from ._small import small_sample
from ._threads import thread_map

#: A model's entry (and each of its series'): a series with multiple-choice items, one of
#: open-ended items only, or configurations that ask one budget (alternatives).
ModelEntry = BinarySeries | OpenEndedSeries | AlternativesSeries


def _sets_overlap(p: set[str], q: set[str]) -> Overlap:
    union = p | q
    both = p & q
    return Overlap(
        n_p=len(p),
        n_q=len(q),
        n_both=len(both),
        jaccard=len(both) / len(union) if union else None,
        kept_share=len(both) / len(p) if p else None,
    )


def _flagged(m: ResponseMatrix, y: np.ndarray, common: np.ndarray) -> dict[str, set[str]]:
    mask = np.isin(m.item_ids, common)
    order = m.budget_order
    less = order.less if order.multi_axis else None
    return {
        "harmful": set(m.item_ids[mask & harmful_indicator(y, less)].tolist()),
        "terminal_regression": set(
            m.item_ids[mask & terminal_regression_indicator(y, order)].tolist()
        ),
    }


def _membership(n_common: int, fp: dict[str, set[str]], fq: dict[str, set[str]]) -> Membership:
    return Membership(
        n_common_items=n_common,
        harmful=_sets_overlap(fp["harmful"], fq["harmful"]),
        terminal_regression=_sets_overlap(fp["terminal_regression"], fq["terminal_regression"]),
    )


def membership(matrices: list[ResponseMatrix]) -> dict[str, Membership]:
    """Overlap of the items flagged harmful (or terminal regression) under two protocols:
    every pair of series of one model, and every pair of repeats within a series. Only items
    matched under both protocols are compared."""
    out: dict[str, Membership] = {}
    binary = [
        m
        for m in matrices
        if m.kind == "binary" and not m.series.startswith(INTERVENTION_SERIES_PREFIX)
    ]
    for i, mp in enumerate(binary):
        for mq in binary[i + 1 :]:
            common = np.intersect1d(mp.item_ids, mq.item_ids)
            fp, fq = _flagged(mp, mp.y, common), _flagged(mq, mq.y, common)
            out[f"series:{mp.series}|{mq.series}"] = _membership(len(common), fp, fq)
    for m in binary:
        for r in range(m.n_repeats):
            for q in range(r + 1, m.n_repeats):
                fp = _flagged(m, m.values[:, :, r], m.item_ids)
                fq = _flagged(m, m.values[:, :, q], m.item_ids)
                out[f"repeat:{m.series}:{r}|{q}"] = _membership(m.n_items, fp, fq)
    return out


def _on_chain(matrices: list[ResponseMatrix], axis: str) -> list[ResponseMatrix]:
    """Each multi-axis matrix restricted to the chain `axis` (`frames@112`); an unknown name is
    an error listing the chains."""
    known = sorted({name for m in matrices for name in m.budget_order.chains})
    if axis not in known:
        raise UnknownConfigError(
            f"no budget chain {axis!r}; "
            + (f"the run's chains: {', '.join(known)}" if known else "the run has one axis only")
        )
    out = []
    for m in matrices:
        line = m.budget_order.chains.get(axis)
        out.append(m.chain(line) if line is not None else m)
    return out


class _BootstrapCache:
    """One count matrix per set of videos: models evaluated on the same videos share it. Models
    computed on several threads share it too: the first to need a video set draws its counts
    (under the lock, so no set is drawn twice), and the draw depends only on the set and the
    seed, never on which model asked first."""

    def __init__(self, bootstrap: int, seed: int, method: str = DEFAULT_CI) -> None:
        self.bootstrap = bootstrap
        self.seed = seed
        self.method = method
        self._counts: dict[tuple[str, ...], tuple[np.ndarray, dict[str, np.ndarray]]] = {}
        self._lock = threading.Lock()

    def get(self, video_ids: np.ndarray) -> VideoBootstrap:
        videos = tuple(sorted(set(video_ids.tolist())))
        with self._lock:
            shared = self._counts.get(videos)
            if shared is None and videos:
                counts = resample_counts(len(videos), self.bootstrap, self.seed)
                shared = self._counts[videos] = (counts, {})
        return VideoBootstrap(
            video_ids,
            self.bootstrap,
            self.seed,
            counts=None if shared is None else shared[0],
            method=self.method,
            converted=None if shared is None else shared[1],
        )

    def boot_for(self, video_ids: np.ndarray) -> VideoBootstrap | None:
        return self.get(video_ids) if self.bootstrap > 0 and len(video_ids) else None


#: The item attribute that names an open-ended item's task (MLVU's `subPlot` and `summary`,
#: AVSD's `dialogue`): a continuous block reports its oracle gap per value under `tasks`.
TASK_ATTRIBUTE = "task_type"


def _task_blocks(
    m: ResponseMatrix, boots: _BootstrapCache, eps: float
) -> dict[str, ContinuousBlock]:
    """The continuous measures of each task's items (the generation benchmarks' oracle gaps
    differ by task, and a pooled gap hides which task the budget matters for)."""
    tasks = np.array([a.get(TASK_ATTRIBUTE) for a in m.attributes], dtype=object)
    out = {}
    for task in sorted({str(t) for t in tasks.tolist() if t is not None}):
        sub = m.subset(tasks == task)
        out[task] = continuous_block(sub, boots.boot_for(sub.video_ids), eps, chains=False)
    return out


def _block(
    m: ResponseMatrix,
    boots: _BootstrapCache,
    settings: AnalysisSettings,
    by: dict[str, ByAttribute] | None = None,
) -> BlockFields:
    """One matrix's measures: a binary block with its tests, or a continuous one with its
    tasks; the grid with the text-only answer where there is one; `by` last."""
    boot = boots.boot_for(m.video_ids)
    eps = settings.eps
    if m.kind == "binary":
        block = binary_fields(m, boot)
        block.update(
            inference_block(
                m,
                boot,
                power_target=settings.power_target / 100,
                test_pairs=settings.test_pairs,
                heterogeneity_draws=settings.heterogeneity_draws,
            )
        )
        draws = settings.heterogeneity_draws
        tested = heterogeneity_with_text(m, boot, boots.boot_for, draws)
        with_text: BinaryWithText | ContinuousWithText | None = binary_grid_with_text(
            m, boots.boot_for, tested
        )
    else:
        block = continuous_fields(m, boot, eps)
        with_text = continuous_grid_with_text(m, boots.boot_for, eps)
        tasks = _task_blocks(m, boots, eps)
        if tasks:
            block["task_attribute"] = TASK_ATTRIBUTE
            block["tasks"] = tasks
    if with_text is not None:
        block["grid_with_text"] = with_text
    block["series"] = m.series
    warnings = axis_warnings(m)
    if warnings:
        block["axis_warnings"] = warnings
    small = small_sample(len(set(m.video_ids.tolist())))
    if small is not None:
        block["small_sample"] = SmallSample.model_validate(small)
    if by is not None:
        block["by"] = by
    return block


def _group(
    m: ResponseMatrix, boots: _BootstrapCache, settings: AnalysisSettings
) -> BinarySeries | ContinuousBlock:
    """The block of one `--by` group's items."""
    fields = _block(m, boots, settings)
    if m.kind == "binary":
        return BinarySeries.model_validate(fields)
    return ContinuousBlock.model_validate(fields)


def scoring_rule_warnings(matrices: Sequence[ResponseMatrix]) -> list[str]:
    """One model's series that do not answer multiple choice by one rule: a series whose rows
    record two rules, or series (compared with each other by `membership` and `churn`) that
    record different ones. A rule no row records (imports, older tables) is not compared."""
    out = []
    by_series: dict[str, set[str]] = defaultdict(set)
    for m in matrices:
        by_series[m.series].update(m.scoring_rules)
    for series, rules in sorted(by_series.items()):
        if len(rules) > 1:
            out.append(
                f"series {series} mixes scoring rules ({', '.join(sorted(rules))}): its budgets "
                "are not compared on one rule"
            )
    return out + _different_rules("series", by_series)


def _models_rules(grouped: dict[str, list[ResponseMatrix]]) -> list[str]:
    """Models whose multiple choice is answered by different rules (each by one)."""
    rules = {model: {r for m in mats for r in m.scoring_rules} for model, mats in grouped.items()}
    return _different_rules("models", rules)


def _different_rules(what: str, rules: Mapping[str, set[str]]) -> list[str]:
    single = {name: next(iter(r)) for name, r in rules.items() if len(r) == 1}
    if len(set(single.values())) < 2:
        return []
    named = ", ".join(f"{name}: {rule}" for name, rule in sorted(single.items()))
    return [f"{what} scored by different rules ({named}): comparing them compares the rules too"]


def _primary(entries: Mapping[str, ModelEntry]) -> str:
    axes = {s: e for s, e in entries.items() if not s.startswith(INTERVENTION_SERIES_PREFIX)}
    if "default" in axes:
        return "default"
    pool = axes or entries
    return max(sorted(pool), key=lambda s: len(pool[s].axis))


def _entry(fields: BlockFields) -> ModelEntry:
    """A series' entry: binary keys at the top, alternatives, or open-ended items only."""
    if fields.get("kind") == "alternatives":
        return AlternativesSeries.model_validate(fields)
    if "kind" in fields:
        return BinarySeries.model_validate(fields)
    return OpenEndedSeries.model_validate(fields)


def _model_result(
    per_series: dict[str, BlockFields],
    mats: list[ResponseMatrix],
    boots: _BootstrapCache,
) -> ModelEntry:
    """One model's entry: its primary series' block with the model-level keys."""
    entries = {s: _entry(fields) for s, fields in per_series.items()}
    primary = _primary(entries)
    result = dict(per_series[primary])
    others = {
        s: e
        for s, e in entries.items()
        if s != primary and not s.startswith(INTERVENTION_SERIES_PREFIX)
    }
    if others:
        result["other_series"] = others
    reruns = {
        s: e
        for s, e in entries.items()
        if s != primary and s.startswith(INTERVENTION_SERIES_PREFIX)
    }
    if reruns:  # controlled re-runs of chosen items: measured, but not as a budget axis
        result["interventions"] = reruns
    # alternatives have no budget order to flag items along, and are compared pair by pair
    axes = [m for m in mats if not is_alternatives(m)]
    overlap = membership(axes)
    if overlap:
        result["membership"] = overlap
    churn = churn_records(axes, boots.boot_for)
    if churn:
        result["churn"] = churn
    rule_warnings = scoring_rule_warnings(mats)
    if rule_warnings:
        result["scoring_rule_warnings"] = rule_warnings
    return _entry(result)


def analyze_responses(
    df: pd.DataFrame,
    settings: AnalysisSettings | None = None,
    **options: Unpack[AnalysisOptions],
) -> AnalysisResult:
    """All measures for every model, as the typed `AnalysisResult` (its `to_json()` is the
    `analyze --json` layout of docs/measures.md).

    `settings` (an `AnalysisSettings`) or its fields as keywords (`AnalysisOptions`, typed:
    `bootstrap`, `seed`, `ci`, `configs`, `axis`, `by`, `metric`, `eps`, `power_target` in
    points, `test_pairs`, `heterogeneity_draws`) say how; a bad value is a `ValidationError`
    naming the setting. `configs` restricts every measure to those configuration labels (a
    model lacking one is listed under `grid.excluded_models`; an unknown label raises
    `UnknownConfigError`).
    """
    chosen = AnalysisSettings.of(settings, options)
    # a table built by hand (a notebook) gets the checks a stored one had: a missing optional
    # column is filled, a missing required one or a bad status is a SchemaError naming it (a
    # frame read by `read_run` passes without a copy); a duplicate row key is refused by
    # `build_matrices`, on the integer codes it computes anyway
    df = normalise_responses(df, where="the response table", check_keys=False)
    grid: GridSelection | None = None
    if chosen.configs is not None:
        df, grid = select_configs(df, chosen.configs)
    matrices = _matrices(df, chosen)
    grouped: dict[str, list[ResponseMatrix]] = defaultdict(list)
    for m in matrices:
        grouped[m.model].append(m)
    for model, mats in grouped.items():
        grouped[model] = _with_merged_series(mats)
    _check_control(grouped, chosen.control)
    boots = _BootstrapCache(chosen.bootstrap, chosen.seed, chosen.ci)

    def one_model(mats: list[ResponseMatrix]) -> ModelEntry:
        return _model_result(_series_blocks(mats, boots, chosen), mats, boots)

    entries = thread_map(one_model, list(grouped.values()), chosen.workers)
    models = dict(zip(grouped, entries, strict=True))
    used = _plugin_measures(models)
    return AnalysisResult(
        schema_version=ANALYSIS_SCHEMA_VERSION,
        bootstrap=BootstrapSettings(
            bootstrap=chosen.bootstrap,
            seed=chosen.seed,
            unit="video",
            ci_level=0.95,
            interval=chosen.ci,
        ),
        binary_repeat=0,
        metric=chosen.metric,
        models=models,
        **given(
            grid=grid,
            scoring_rule_warnings=_models_rules(grouped) or None,
            plugin_measures=used or None,
        ),
    )


def _plugin_measures(models: Mapping[str, ModelEntry]) -> list[PluginMeasure]:
    """The measures of other packages whose keys the blocks hold, in registry order: the trace
    that says what must be installed to compute these numbers again (`verify` reads it)."""
    others = measure_origins()
    if not others:
        return []
    keys: set[str] = set()
    _keys_of({m: e.model_dump(mode="json") for m, e in models.items()}, keys)
    return [
        PluginMeasure(
            key=unit.key,
            kinds=list(unit.kinds),
            distribution=origin.distribution,
            version=origin.version,
            entry_point=origin.entry_point,
        )
        for unit, origin in others
        if unit.key in keys
    ]


def _keys_of(value: object, keys: set[str]) -> None:
    if isinstance(value, dict):
        keys.update(value)
        for inner in value.values():
            _keys_of(inner, keys)
    elif isinstance(value, list):
        for inner in value:
            _keys_of(inner, keys)


def _matrices(df: pd.DataFrame, settings: AnalysisSettings) -> list[ResponseMatrix]:
    """The matrices the settings measure, with requested pairs and `by` attributes checked."""
    matrices = build_matrices(
        df, metric=settings.metric, workers=settings.workers, rerun_floor=settings.stated_floor
    )
    if settings.axis is not None:
        matrices = _on_chain(matrices, settings.axis)
    if settings.test_pairs:
        check_requested(matrices, settings.test_pairs)
    if settings.by:
        known = sorted({key for m in matrices for a in m.attributes for key in a})
        unknown = [attr for attr in settings.by if attr not in known]
        if unknown:
            raise UnknownConfigError(
                f"no item has attribute(s) {', '.join(repr(u) for u in unknown)} for --by; "
                f"the items' attributes: {', '.join(known) or '(none)'}"
            )
    return matrices


def _with_merged_series(mats: list[ResponseMatrix]) -> list[ResponseMatrix]:
    """One model's matrices, its one-configuration series at one budget `merged_series`."""
    merged = merged_series(mats)
    if merged is None:
        return mats
    names = set(merged.labels)
    return [merged, *(m for m in mats if m.kind != "binary" or m.series not in names)]


def _check_control(grouped: Mapping[str, list[ResponseMatrix]], control: str | None) -> None:
    """`--control` must name an alternative of some model (a configuration, or a series where
    each alternative is its own series)."""
    if control is None:
        return
    sets = [m for mats in grouped.values() for m in mats if is_alternatives(m)]
    if any(control in m.labels for m in sets):
        return
    if not sets:
        raise UnknownConfigError(
            f"--control {control}: no configurations ask one budget here (no alternatives to "
            "compare with a control); the control names one of a set of alternatives"
        )
    named = "; ".join(f"{m.model}: {', '.join(m.labels)}" for m in sets)
    raise UnknownConfigError(f"--control {control}: not among the alternatives ({named})")


def _alternatives_block(
    m: ResponseMatrix, boots: _BootstrapCache, settings: AnalysisSettings
) -> BlockFields:
    """A set of alternatives' keys: its configurations, or its series when merged."""
    boot = boots.boot_for(m.video_ids)
    block = alternatives_fields(m, boot, settings.control, members_of(m))
    small = small_sample(len(set(m.video_ids.tolist())))
    if small is not None:
        block["small_sample"] = SmallSample.model_validate(small)
    return block


def _series_blocks(
    mats: list[ResponseMatrix], boots: _BootstrapCache, settings: AnalysisSettings
) -> dict[str, BlockFields]:
    """One model's entries by series, as their keys (no `by` breakdown for a set of
    alternatives: its pairs are its measures)."""
    per_series: dict[str, BlockFields] = {}
    for m in mats:
        if is_alternatives(m):
            per_series[m.series] = _alternatives_block(m, boots, settings)
            continue
        by = {attr: _breakdown(m, attr, boots, settings) for attr in settings.by or ()}
        block = _block(m, boots, settings, by or None)
        entry = per_series.setdefault(m.series, {})
        if m.kind == "binary":
            entry.update(block)
        else:
            entry["continuous"] = ContinuousBlock.model_validate(block)
            entry.setdefault("axis", block["axis"])
    return per_series


def _breakdown(
    m: ResponseMatrix, attr: str, boots: _BootstrapCache, settings: AnalysisSettings
) -> ByAttribute:
    """The measures of each value of an item attribute, and how many items have none."""
    values = np.array([a.get(attr) for a in m.attributes], dtype=object)
    groups: dict[str, BinarySeries | ContinuousBlock] = {
        str(value): _group(m.subset(values == value), boots, settings)
        for value in sorted({v for v in values.tolist() if v is not None})
    }
    missing = int(sum(v is None for v in values.tolist()))
    return ByAttribute(groups=groups, n_items_without=missing)

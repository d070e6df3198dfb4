"""From the long response table to items x configurations matrices on the matched grid.

Every measure runs on the matched grid: the items that have an answered (`ok` or `noanswer`)
response for every configuration and every repeat of one (model, series). Items left out are
counted by reason, never silently dropped.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from ...core.rerun_evidence import measured_floors
from ...core.rerun_floor import RerunFloor
from ...core.responses import ANSWERED_STATUSES, ROW_KEY, SchemaError, without_reruns
from ._order import BudgetOrder, budget_order
from ._threads import thread_map

Kind = Literal["binary", "continuous"]
#: Series of `itemscale intervene` re-runs: controlled changes of sampling on chosen items, not
#: a budget axis (measured apart, under `interventions`).
INTERVENTION_SERIES_PREFIX = "intervention:"
CONTINUOUS_METRICS = ("score", "token_f1", "rouge_l", "exact_match")


@dataclass(frozen=True, eq=False)
class AnswerCodes:
    """A matrix's answers as codes into `vocab` (its last entry None, which code -1 takes):
    equal codes are equal answers. Comparing the answers of two budgets as strings was 0.4 s
    of the analysis benchmark's 5 models of 100,000 items; as integers it is a few ms."""

    cells: np.ndarray  # [n, K] int32, like `answers`
    text: np.ndarray  # [n] int32, like `text_answer`
    vocab: np.ndarray  # [V + 1] object

    def code_of(self, answer: str) -> int:
        """The code of `answer` (-2, which no cell holds, when no cell has it)."""
        found = np.flatnonzero(self.vocab[:-1] == answer)
        return int(found[0]) if found.size else -2

    def chain(self, cols: np.ndarray) -> AnswerCodes:
        return AnswerCodes(cells=self.cells[:, cols], text=self.text, vocab=self.vocab)

    def subset(self, mask: np.ndarray) -> AnswerCodes:
        return AnswerCodes(cells=self.cells[mask], text=self.text[mask], vocab=self.vocab)


#: The arrays of a `ResponseMatrix` with a row per item ([n]), and those with a cell per item
#: and configuration ([n, K, ...]): what `subset` and `chain` cut.
_PER_ITEM = ("item_ids", "video_ids", "text_answer", "text_value")
_PER_CELL = (
    "values",
    "answers",
    "confidence",
    "margin",
    "latency",
    "visual_tokens",
    "effective_frames",
    "frame_indices",
)


@dataclass(frozen=True, eq=False)
class ResponseMatrix:
    """One (model, series, kind) slice of the table as aligned numpy arrays: `values[i, k, r]`
    is correctness or score of item i at configuration k in repeat r (repeat 0: what a single
    run would show)."""

    model: str
    series: str
    kind: Kind
    metric: str
    labels: tuple[str, ...]
    config_ids: tuple[str, ...]
    frames: np.ndarray  # [K] int
    pixels: np.ndarray  # [K] float, nan when unknown
    item_ids: np.ndarray  # [n] object
    video_ids: np.ndarray  # [n] object
    values: np.ndarray  # [n, K, R] float
    answers: np.ndarray  # [n, K] object (repeat 0), None when absent
    confidence: np.ndarray  # [n, K] float, nan when absent
    margin: np.ndarray  # [n, K] float: top-two option probability margin, nan when absent
    latency: np.ndarray  # [n, K] float: seconds the cell took, nan when absent
    visual_tokens: np.ndarray  # [n, K] float, nan when absent
    effective_frames: np.ndarray  # [n, K] float: frames actually sent, nan when absent
    frame_indices: np.ndarray  # [n, K] object: int arrays or None
    text_answer: np.ndarray  # [n] object: the text-only answer, None when absent
    text_value: np.ndarray  # [n] float: text-only correctness/score, nan when absent
    attributes: tuple[dict[str, str], ...]
    n_dropped: int
    drop_reasons: dict[str, int] = field(default_factory=dict)
    #: Label of the text-only configuration whose answers fill `text_answer` / `text_value`.
    text_label: str | None = None
    #: the multiple-choice scoring rules the slice's rows record (`letter`, `likelihood`),
    #: sorted; empty when none is recorded (imports, open-ended items, older tables)
    scoring_rules: tuple[str, ...] = ()
    #: `answers` and `text_answer` as integer codes (None for a matrix built by hand): the
    #: rules that compare answers compare integers, not strings
    answer_codes: AnswerCodes | None = None
    #: the rerun floor of the model's set-up that the same-input rule grades answers against:
    #: measured from the table's repeats and reruns, or stated (`build_matrices(rerun_floor=)`);
    #: None: neither
    rerun_floor: RerunFloor | None = None

    @property
    def n_items(self) -> int:
        return int(self.values.shape[0])

    @property
    def n_configs(self) -> int:
        return int(self.values.shape[1])

    @property
    def n_repeats(self) -> int:
        return int(self.values.shape[2])

    @property
    def y(self) -> np.ndarray:
        """Repeat-0 matrix [n, K]."""
        return self.values[:, :, 0]

    @functools.cached_property
    def budget_order(self) -> BudgetOrder:
        """Which configuration is the larger budget (`_order`)."""
        return budget_order(self.frames, self.pixels, self.labels)

    def chain(self, positions: tuple[int, ...]) -> ResponseMatrix:
        """The same matrix on some of its configurations (a chain of a multi-axis grid)."""
        cols = np.asarray(positions, dtype=np.int64)
        return dataclasses.replace(
            self,
            labels=tuple(self.labels[i] for i in cols),
            config_ids=tuple(self.config_ids[i] for i in cols),
            frames=self.frames[cols],
            pixels=self.pixels[cols],
            **{name: getattr(self, name)[:, cols] for name in _PER_CELL},
            answer_codes=None if self.answer_codes is None else self.answer_codes.chain(cols),
        )

    def subset(self, mask: np.ndarray) -> ResponseMatrix:
        """The same matrix restricted to the items where `mask` is true."""
        mask = np.asarray(mask, dtype=bool)
        return dataclasses.replace(
            self,
            **{name: getattr(self, name)[mask] for name in (*_PER_ITEM, *_PER_CELL)},
            attributes=tuple(a for a, m in zip(self.attributes, mask, strict=True) if m),
            drop_reasons=dict(self.drop_reasons),
            answer_codes=None if self.answer_codes is None else self.answer_codes.subset(mask),
        )


def _parse_all_attributes(raw: np.ndarray) -> tuple[dict[str, str], ...]:
    """Parse each distinct attribute JSON once (items usually share few distinct values); a
    missing value (None, NaN) is an empty dict. Distinct values are found by one factorize: a
    dict look-up per item cost 0.08 s a model of 100,000 items."""
    codes, uniques = pd.factorize(np.asarray(raw, dtype=object), use_na_sentinel=True)
    parsed = [_parse_attributes(u if isinstance(u, str) else None) for u in uniques.tolist()]
    table = np.empty(len(parsed) + 1, dtype=object)
    table[:] = [*parsed, {}]  # code -1 (missing) takes the last
    return tuple(table[codes].tolist())


def _parse_attributes(raw: object) -> dict[str, str]:
    if raw is None or (isinstance(raw, float) and np.isnan(raw)):
        return {}
    parsed = json.loads(str(raw))
    if not isinstance(parsed, dict):
        return {}
    return {str(k): str(v) for k, v in parsed.items()}


@dataclass(frozen=True)
class _Coded:
    """The table's columns as numpy arrays and integer codes, computed once per table."""

    item: np.ndarray
    item_names: np.ndarray
    video: np.ndarray
    video_names: np.ndarray
    config: np.ndarray
    config_names: np.ndarray
    answer: np.ndarray
    answer_names: np.ndarray
    repeat: np.ndarray
    frames: np.ndarray
    answered: np.ndarray
    status: np.ndarray
    status_names: np.ndarray
    #: whether any row records its frame indices (an object column: checked once per table,
    #: not once per model)
    has_frame_indices: bool

    @staticmethod
    def of(df: pd.DataFrame, workers: int | None = None) -> _Coded:
        def codes(col: str) -> tuple[np.ndarray, np.ndarray]:
            c, u = pd.factorize(df[col], sort=True, use_na_sentinel=True)
            return np.asarray(c, dtype=np.int64), np.asarray(u, dtype=object)

        # each column's codes alone (Arrow's hashing releases the GIL: two cores code two)
        columns = ("item_id", "video_id", "config_id", "answer", "status")
        coded = dict(zip(columns, thread_map(codes, columns, workers), strict=True))
        item, item_names = coded["item_id"]
        video, video_names = coded["video_id"]
        config, config_names = coded["config_id"]
        answer, answer_names = coded["answer"]
        status, status_names = coded["status"]
        # answered by the status's code: each distinct status is looked up once, not each row
        # (-1, a missing status, takes the last entry: not answered)
        answered = np.array([*(s in ANSWERED_STATUSES for s in status_names.tolist()), False])
        return _Coded(
            item=item,
            item_names=item_names,
            video=video,
            video_names=video_names,
            config=config,
            config_names=config_names,
            answer=answer,
            answer_names=np.array([*answer_names.tolist(), None], dtype=object),  # -1 -> None
            repeat=df["repeat"].to_numpy(dtype=np.int64),
            frames=df["frames"].to_numpy(dtype=np.int64),
            answered=answered[status],
            status=status,
            status_names=status_names,
            has_frame_indices=bool(df["frame_indices"].notna().any()),
        )


def build_matrices(
    df: pd.DataFrame,
    *,
    metric: str = "score",
    models: list[str] | None = None,
    text_on_axis: bool = False,
    workers: int | None = None,
    rerun_floor: RerunFloor | None = None,
) -> list[ResponseMatrix]:
    """One matrix per (model, series, kind) on its matched grid.

    `metric` picks the continuous value (`score`, `token_f1`, `rouge_l`, `exact_match`).
    Rows with `frames == 0` are the text-only baseline: not on any axis, attached to every
    matrix of their model; with `text_on_axis` they are also its first column (a zero-frame
    budget, as a cascade that may stop on the blind answer needs), so the matched grid then
    requires a text-only answer. Multiple-choice rows are binary, every other task kind
    continuous. `workers` threads build the matrices (None: one per usable core); the matrices
    do not depend on it.

    Rerun rows (`rerun_of`) are in no matrix: with the repeats, they measure each model's rerun
    floor (`measured_floors`), which its matrices carry (`ResponseMatrix.rerun_floor`) for the
    same-input rule; `rerun_floor` (a stated one, `--rerun-floor`) takes its place.
    """
    if metric not in CONTINUOUS_METRICS:
        raise ValueError(f"unknown metric {metric!r}; allowed: {', '.join(CONTINUOUS_METRICS)}")
    floors = {} if rerun_floor is not None else measured_floors(df)
    df = without_reruns(df).reset_index(drop=True)
    coded = _Coded.of(df, workers)
    binary = (df["task_kind"] == "mcqa").to_numpy()
    model_codes, model_names = pd.factorize(df["model"], sort=True)
    series_codes, series_names = pd.factorize(df["series"], sort=True)
    slices: list[tuple[str, str, Kind, np.ndarray, np.ndarray]] = []
    for m_code, model in enumerate(model_names):
        if models is not None and model not in models:
            continue
        in_model = np.flatnonzero(model_codes == m_code)
        text_rows = _text_only_rows(df, coded, in_model)
        text_column = _text_only_rows(df, coded, in_model, all_repeats=True)
        grid_rows = in_model[coded.frames[in_model] > 0]
        keys = series_codes[grid_rows] * 2 + (~binary[grid_rows]).astype(np.int64)
        for key in np.unique(keys):
            rows = grid_rows[keys == key]
            kind: Kind = "binary" if key % 2 == 0 else "continuous"
            series = str(series_names[key // 2])
            if text_on_axis:
                same_kind = binary[text_column] == (kind == "binary")
                rows = np.concatenate([text_column[same_kind], rows])
            slices.append((str(model), series, kind, rows, text_rows))

    def build(piece: tuple[str, str, Kind, np.ndarray, np.ndarray]) -> ResponseMatrix:
        model, series, kind, rows, text_rows = piece
        built = _build_one(df, coded, model, series, kind, metric, rows, text_rows)
        floor = rerun_floor if rerun_floor is not None else floors.get(model)
        return built if floor is None else dataclasses.replace(built, rerun_floor=floor)

    return thread_map(build, slices, workers)


def _check_one_row_per_key(df: pd.DataFrame, rows: np.ndarray, cell: np.ndarray) -> None:
    """Refuse two rows of one (model, item, configuration, repeat), which the matrix would
    silently overwrite. `cell` numbers each row's place in the matrix; counting them is the
    row-key check of `normalise_responses` on integer codes already computed, a fraction of
    hashing the key's strings again."""
    if not len(cell):
        return
    counts = np.bincount(cell)
    repeated = counts[cell] > 1
    if repeated.any():
        first = df.loc[int(rows[np.flatnonzero(repeated)[0]]), list(ROW_KEY)].to_dict()
        raise SchemaError(
            f"the response table: duplicate row key {first} ({int(repeated.sum())} rows)"
        )


def _text_only_rows(
    df: pd.DataFrame, coded: _Coded, in_model: np.ndarray, *, all_repeats: bool = False
) -> np.ndarray:
    """Rows of the model's first text-only configuration, repeat 0 unless `all_repeats`."""
    blind = in_model[coded.frames[in_model] == 0]
    text = blind[coded.repeat[blind] == 0]
    if text.size == 0:
        return np.asarray(text)
    order = _take(df, "axis_order", text, dtype=float)
    first = text[np.lexsort((coded.config[text], order))[0]]
    pool = blind if all_repeats else text
    chosen = np.asarray(pool[coded.config[pool] == coded.config[first]])
    _check_one_row_per_key(
        df,
        chosen,
        coded.item[chosen] * (int(coded.repeat[chosen].max()) + 1) + coded.repeat[chosen],
    )
    return chosen


def _take(df: pd.DataFrame, column: str, rows: np.ndarray, **kwargs: object) -> np.ndarray:
    """`df[column]` at row positions `rows` as numpy: the rows are taken first, so a 10^6-row
    string column is never converted whole (once per model). A numeric column held by numpy is
    indexed directly: the same values without a pandas Series and index built per take (0.4 s
    of the 5 x 10^6-row benchmark)."""
    series = df[column]
    if kwargs.get("dtype") is float and _numeric_numpy(series.dtype):
        out = np.asarray(series.to_numpy()[rows], dtype=float)
        if "na_value" in kwargs and series.dtype.kind == "f":
            out[np.isnan(out)] = kwargs["na_value"]  # as pandas' na_value does
        return out
    return np.asarray(series.take(rows).to_numpy(**kwargs))  # type: ignore[call-overload]


def _numeric_numpy(dtype: object) -> bool:
    """A plain numpy bool, integer or float dtype (not a nullable or Arrow-backed one, whose
    missing values `to_numpy`'s `na_value` converts)."""
    return isinstance(dtype, np.dtype) and dtype.kind in "biuf"


def _text_only_values(
    df: pd.DataFrame,
    coded: _Coded,
    text_rows: np.ndarray,
    item_codes: np.ndarray,
    value_col: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each item's text-only answer, its code and its value (None, -1, NaN where none)."""
    n = len(item_codes)
    text_answer = np.full(n, None, dtype=object)
    text_code = np.full(n, -1, dtype=np.int32)
    text_value = np.full(n, np.nan)
    text_ok = text_rows[coded.answered[text_rows]]
    if text_ok.size:
        tpos = np.searchsorted(item_codes, coded.item[text_ok])
        tpos = np.minimum(tpos, n - 1) if n else tpos
        keep = (item_codes[tpos] == coded.item[text_ok]) if n else np.zeros(0, dtype=bool)
        text_code[tpos[keep]] = coded.answer[text_ok[keep]]
        text_answer[tpos[keep]] = coded.answer_names[text_code[tpos[keep]]]
        text_value[tpos[keep]] = _take(df, value_col, text_ok[keep], dtype=float, na_value=np.nan)
    return text_answer, text_code, text_value


def _unique_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(values, return_inverse=True)` for non-negative integers (codes, repeats),
    counted instead of sorted when they are small: the same two arrays, without five sorts of
    every model's rows (0.1 s each at 10^6 rows)."""
    if values.size and values.min() >= 0 and values.max() <= 2 * values.size:
        present = np.bincount(values) > 0
        rank = np.cumsum(present) - 1
        return np.flatnonzero(present).astype(values.dtype), rank[values]
    uniques, inverse = np.unique(values, return_inverse=True)
    return uniques, inverse


def _first_index(positions: np.ndarray, n_values: int) -> np.ndarray:
    """`np.unique(positions, return_index=True)[1]` without sorting (every value present)."""
    first = np.full(n_values, positions.size, dtype=np.int64)
    np.minimum.at(first, positions, np.arange(positions.size, dtype=np.int64))
    return first


def _build_one(
    df: pd.DataFrame,
    coded: _Coded,
    model: str,
    series: str,
    kind: Kind,
    metric: str,
    rows: np.ndarray,
    text_rows: np.ndarray,
) -> ResponseMatrix:
    config_codes, config_pos = _unique_inverse(coded.config[rows])
    first_row = rows[_first_index(config_pos, len(config_codes))]
    order = _take(df, "axis_order", first_row, dtype=float)
    frames = coded.frames[first_row]
    order = np.where(frames == 0, -np.inf, order)  # a text-only column on the axis comes first
    pixels = _take(df, "pixels", first_row, dtype=float, na_value=np.nan)
    labels_raw = _take(df, "config_label", first_row, dtype=object)
    axis = np.lexsort((labels_raw.astype(str), np.nan_to_num(pixels, nan=-1.0), frames, order))
    rank = np.empty_like(axis)
    rank[axis] = np.arange(len(axis))
    config_pos = rank[config_pos]
    config_ids = tuple(str(c) for c in coded.config_names[config_codes[axis]])
    labels = tuple(str(c) for c in labels_raw[axis])

    item_codes, item_pos = _unique_inverse(coded.item[rows])
    repeats, repeat_pos = _unique_inverse(coded.repeat[rows])
    n, k, r = len(item_codes), len(config_ids), len(repeats)
    _check_one_row_per_key(df, rows, (item_pos * k + config_pos) * r + repeat_pos)

    value_col = "correct" if kind == "binary" else metric
    value = _take(df, value_col, rows, dtype=float, na_value=np.nan)
    answered = coded.answered[rows]
    values = np.full((n, k, r), np.nan)
    ok = np.zeros((n, k, r), dtype=bool)
    reason = np.full((n, k, r), -1, dtype=np.int64)  # -1: missing
    values[item_pos, config_pos, repeat_pos] = value
    ok[item_pos, config_pos, repeat_pos] = answered & ~np.isnan(value)
    n_status = len(coded.status_names)
    reason[item_pos, config_pos, repeat_pos] = np.where(
        answered & np.isnan(value), n_status, coded.status[rows]
    )
    reason_names = [*coded.status_names.tolist(), f"no_{value_col}"]

    matched = ok.all(axis=(1, 2))
    drop_reasons: dict[str, int] = {}
    if not matched.all():
        bad = ~ok[~matched]
        codes = reason[~matched]
        for code in np.unique(codes[bad]):
            name = "missing" if code < 0 else str(reason_names[code])
            drop_reasons[name] = int(((codes == code) & bad).any(axis=(1, 2)).sum())

    keep = _kept(np.asarray(matched))
    first = repeat_pos == 0
    fi, fc, fr = item_pos[first], config_pos[first], rows[first]
    answer_codes = np.full((n, k), -1, dtype=np.int32)
    answer_codes[fi, fc] = coded.answer[fr]
    answers = coded.answer_names[answer_codes]
    cell = functools.partial(_cell_values, df, fi, fc, fr, (n, k))
    confidence, margin, latency = cell("confidence"), cell("margin"), cell("latency_s")
    tokens, sent = cell("visual_tokens"), cell("effective_frames")
    indices = np.full((n, k), None, dtype=object)
    if coded.has_frame_indices:
        indices[fi, fc] = _take(df, "frame_indices", fr, dtype=object)

    item_first_row = rows[_first_index(item_pos, n)]
    video_ids = coded.video_names[coded.video[item_first_row]]
    attributes_raw = _take(df, "attributes", item_first_row[keep], dtype=object)

    text_answer, text_code, text_value = _text_only_values(
        df, coded, text_rows, item_codes, value_col
    )
    return ResponseMatrix(
        model=model,
        series=series,
        kind=kind,
        metric="correct" if kind == "binary" else metric,
        labels=labels,
        config_ids=config_ids,
        frames=frames[axis].astype(np.int64),
        pixels=pixels[axis],
        item_ids=coded.item_names[item_codes][keep],
        video_ids=video_ids[keep],
        values=values[keep],
        answers=answers[keep],
        confidence=confidence[keep],
        margin=margin[keep],
        latency=latency[keep],
        visual_tokens=tokens[keep],
        effective_frames=sent[keep],
        frame_indices=indices[keep],
        text_answer=text_answer[keep],
        text_value=text_value[keep],
        attributes=_parse_all_attributes(attributes_raw),
        n_dropped=int((~matched).sum()),
        drop_reasons=drop_reasons,
        text_label=(
            str(_take(df, "config_label", text_rows[:1], dtype=object)[0])
            if text_rows.size
            else None
        ),
        scoring_rules=_scoring_rules(df, rows),
        answer_codes=AnswerCodes(
            cells=answer_codes[keep], text=text_code[keep], vocab=coded.answer_names
        ),
    )


def _cell_values(
    df: pd.DataFrame,
    fi: np.ndarray,
    fc: np.ndarray,
    fr: np.ndarray,
    shape: tuple[int, int],
    column: str,
) -> np.ndarray:
    """A numeric column's repeat-0 values as [n, K] (NaN where absent): row `fr[j]` at
    (`fi[j]`, `fc[j]`)."""
    out = np.full(shape, np.nan)
    out[fi, fc] = _take(df, column, fr, dtype=float, na_value=np.nan)
    return out


def _kept(matched: np.ndarray) -> np.ndarray | slice:
    """What selects the matched items: every item (a view, no copy of each [n, K] array,
    which on a 2 x 10^6-row table is 150 MB) when all are matched, else the mask."""
    return slice(None) if bool(matched.all()) else matched


def _scoring_rules(df: pd.DataFrame, rows: np.ndarray) -> tuple[str, ...]:
    """The distinct scoring rules recorded on the slice's rows (an older table has none)."""
    if "scoring_rule" not in df.columns:
        return ()
    values = df["scoring_rule"].take(rows).dropna().unique()
    return tuple(sorted(str(v) for v in values))

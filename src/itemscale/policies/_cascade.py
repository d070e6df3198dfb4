"""Stopping rules on the response matrix, cross-fitted and reported on held-out folds.

Every stopping rule is fitted on the items of one half of the videos and reported on the other half,
then the halves swap, so each item's reported outcome comes from thresholds that never saw it.
Intervals resample videos of those held-out outcomes (thresholds are not refitted per resample:
the interval is the sampling uncertainty of the held-out evaluation). All rules share the
folds and the resamples, so their differences are paired.

A rule *matches* the terminal budget when the 95% interval of its held-out accuracy change
reaches 0 (the data cannot tell it apart from the terminal); the best match is the matching
rule that saves the most. `--threshold T` adds the seed paper's fixed rule (`_fixed.py`).
The JSON keeps the keys it always had (`policies`, `best_match.policy`): docs/glossary.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..errors import renamed_keywords
from ..measures import (
    DEFAULT_BOOTSTRAP,
    ResponseMatrix,
    VideoBootstrap,
    build_matrices,
    main_chain,
    repeated_terminal,
)
from ..measures import INTERVENTION_SERIES_PREFIX as MEASURED_APART
from ._cost import StageCosts
from ._fixed import fixed_rule
from ._folds import video_folds
from ._inputs import (
    SCORE_DESCRIPTIONS,
    CascadeInputs,
    ScoreName,
    SharingChoice,
    StageError,
    inputs_from_matrix,
    resolve_stages,
)
from ._learned import (
    agreement_matrix,
    fit_stopping_model,
    stopping_features,
    stopping_targets,
)
from ._search import (
    active_stages,
    fit_threshold_path,
    outcome_at,
    pareto_front,
    score_quantiles,
    shared_threshold_sweep,
    stopping_stage,
)
from ._summary import summarise_stops

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

#: 2: cost models (`sharing`), latency, `--stages`, `--score`, `--threshold`, agreement of
#: three stages (`agreement_3`), `matches_terminal` by the interval of the change,
#: `best_match`. 3: `same_input_terminal` (a terminal that repeats its predecessor is dropped).
CASCADE_SCHEMA_VERSION: Final[int] = 3
#: Where `itemscale cascade` writes its report in a run folder (the artifact copies and checks it).
CASCADE_FILE: Final[str] = "cascade.json"
#: Series written by `itemscale intervene`; they are single re-runs, not budget axes.
INTERVENTION_SERIES_PREFIX: Final[str] = MEASURED_APART

StoppingRuleName = Literal["confidence", "agreement", "agreement_3", "learned"]
STOPPING_RULE_NAMES: Final[tuple[StoppingRuleName, ...]] = (
    "confidence",
    "agreement",
    "agreement_3",
    "learned",
)
#: How many stages in a row must give one answer before an agreement rule may stop.
AGREEING_STAGES: Final[dict[str, int]] = {"agreement": 2, "agreement_3": 3}
STOPPING_RULE_DESCRIPTIONS: Final[dict[str, str]] = {
    "confidence": (
        "confidence cascade (docs/policies.md): stage k answers when its score (option "
        "confidence or margin) >= tau_k; "
        "the last stage always answers; a stage with tau = +inf is never run"
    ),
    "agreement": (
        "stage k answers when it gives the same answer as stage k-1 and its score clears a "
        "fitted floor (answers alone where no score is recorded)"
    ),
    "agreement_3": (
        "stage k answers when stages k-2, k-1 and k give one answer and its score clears a "
        "fitted floor (answers alone where no score is recorded)"
    ),
    "learned": (
        "stage k answers when a logistic stopping model on confidence and agreement features, "
        "fitted on the other fold, predicts that stopping loses nothing against the terminal "
        "budget with probability >= tau_k"
    ),
}


class CascadeSettings(BaseModel):
    """How `itemscale cascade` fits and reports its stopping rules."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_boot: int = Field(default=DEFAULT_BOOTSTRAP, ge=0)
    seed: int = 0
    #: The currency the thresholds minimise.
    cost: Literal["frames", "tokens", "latency"] = "frames"
    #: What stages share (docs/policies.md, "Cost models"); `auto`: the recorded frame union
    #: where every cell has its indices, else `prefix` with `none` beside it.
    sharing: SharingChoice = "auto"
    #: The stopping score: the chosen option's probability or the top-two margin.
    score: ScoreName = "prob"
    #: Stage labels in order (None: the budget axis, or its main chain on a grid of two axes).
    stages: tuple[str, ...] | None = None
    #: A fixed threshold on the score (no fitting, every item): the seed paper's rule.
    threshold: float | None = None
    #: Frontier targets: held-out accuracy offsets from the terminal budget's fit-fold accuracy.
    frontier_offsets: tuple[float, ...] = tuple(
        float(x) for x in np.round(np.linspace(-0.15, 0.05, 21), 4)
    )

    @field_validator("stages")
    @classmethod
    def _two_stages_or_more(cls, stages: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if stages is not None and len(stages) < 2:
            raise ValueError(f"stages={list(stages)}: a cascade needs at least two stages")
        return stages

    @model_validator(mode="after")
    def _union_counts_frames(self) -> CascadeSettings:
        """`union` shares distinct frame indices, which only a frame cost has: held here, so the
        command line and a notebook refuse the same combination with one message."""
        if self.sharing == "union" and self.cost != "frames":
            raise ValueError(
                f"sharing='union' counts distinct frame indices; with cost={self.cost!r} "
                "choose sharing='prefix' or sharing='none'"
            )
        return self


#: Rules whose gate or features read the previous stage must run every stage; the
#: confidence cascade may skip a stage that can never answer.
SKIPS_SILENT_STAGES: Final[dict[str, bool]] = {
    "confidence": True,
    "agreement": False,
    "agreement_3": False,
    "learned": False,
}


@dataclass(frozen=True)
class HeldOut:
    """Where each item stopped, and what it paid in every currency (and, beside a `prefix`
    cost, with nothing shared), under thresholds fitted on the other fold."""

    stop: IntArray
    paid: dict[str, FloatArray]
    paid_unshared: dict[str, FloatArray]
    fold_fits: tuple[dict[str, Any], ...]

    def cost(self, currency: str) -> FloatArray:
        return self.paid[currency]


def agreeing_run(answers: npt.NDArray[np.object_]) -> FloatArray:
    """run[i, k]: how many stages before k in a row gave stage k's (real) answer."""
    agree = agreement_matrix(answers)
    run = np.zeros(agree.shape)
    for k in range(1, agree.shape[1]):
        run[:, k] = np.where(agree[:, k], run[:, k - 1] + 1.0, 0.0)
    return run


def _rule_scores(
    rule: StoppingRuleName, inputs: CascadeInputs, fit_items: BoolArray
) -> tuple[BoolArray, FloatArray, dict[str, Any]]:
    """(gate, score, extra report) of a stopping rule; `fit_items` is the only data a learned
    part may see."""
    n, k = inputs.correct.shape
    conf = inputs.confidence[:, : k - 1]
    if rule == "confidence":
        return np.ones((n, k - 1), dtype=bool), conf.copy(), {}
    if rule in AGREEING_STAGES:
        run = agreeing_run(inputs.answers)[:, : k - 1]
        gate = run >= AGREEING_STAGES[rule] - 1
        return gate, np.where(np.isnan(conf), -np.inf, conf), {}
    features = stopping_features(inputs.confidence, inputs.answers)
    targets = stopping_targets(inputs.correct)
    model = fit_stopping_model(features[fit_items], targets[fit_items])
    score = model.predict(features)
    return np.ones((n, k - 1), dtype=bool), score, {"weights": model.weights.tolist()}


def _threshold_json(value: float) -> float | str:
    if np.isposinf(value):
        return "never"
    if np.isneginf(value):
        return "always"
    return float(value)


@renamed_keywords(policy="rule")
def cross_fit(
    rule: StoppingRuleName,
    inputs: CascadeInputs,
    folds: IntArray,
    currency: str,
    target_offsets: tuple[float, ...] = (0.0,),
) -> list[HeldOut]:
    """Held-out stops and costs for each target (the terminal budget's accuracy on the fitting
    fold plus an offset), fitted on each fold and reported on the other."""
    n, k = inputs.correct.shape
    primary = inputs.cost(currency)
    skip = SKIPS_SILENT_STAGES[rule]
    m = len(target_offsets)
    stops = [np.full(n, k - 1, dtype=np.int64) for _ in range(m)]
    paid = [{c: np.zeros(n) for c in inputs.costs} for _ in range(m)]
    unshared = [{c: np.zeros(n) for c in inputs.bounds} for _ in range(m)]
    fold_reports: list[list[dict[str, Any]]] = [[] for _ in range(m)]
    for fit_fold in (0, 1):
        fit_items = folds == fit_fold
        held = ~fit_items
        gate, score, extra = _rule_scores(rule, inputs, fit_items)
        terminal_acc = float(inputs.correct[fit_items, -1].mean())
        targets = [terminal_acc + off for off in target_offsets]

        def fold_cost(active: tuple[bool, ...], rows: BoolArray = fit_items) -> FloatArray:
            return np.asarray(primary.cumulative(active)[rows], dtype=np.float64)

        fits = fit_threshold_path(
            gate[fit_items],
            score[fit_items],
            inputs.correct[fit_items],
            fold_cost,
            targets,
            skip_silent=skip,
        )
        for t, fit in enumerate(fits):
            stop = stopping_stage(gate[held], score[held], fit.thresholds)
            active = active_stages(fit.thresholds, skip)
            stops[t][held] = stop
            for out, costs in ((paid[t], inputs.costs), (unshared[t], inputs.bounds)):
                for c, stage_costs in costs.items():
                    out[c][held] = outcome_at(stop, stage_costs.cumulative(active)[held])
            fold_reports[t].append(
                {
                    "fitted_on_fold": fit_fold,
                    "reported_on_fold": 1 - fit_fold,
                    "target_accuracy": targets[t],
                    "fit_accuracy": fit.accuracy,
                    "fit_mean_cost": fit.mean_cost,
                    "target_reached": fit.feasible,
                    "thresholds": {
                        inputs.labels[s]: _threshold_json(float(fit.thresholds[s]))
                        for s in range(k - 1)
                    },
                    "stages_run": [inputs.labels[s] for s in range(k) if active[s]],
                    **extra,
                }
            )
    return [
        HeldOut(
            stop=stops[t],
            paid=paid[t],
            paid_unshared=unshared[t],
            fold_fits=tuple(fold_reports[t]),
        )
        for t in range(m)
    ]


def _summarise(
    held: HeldOut, inputs: CascadeInputs, primary: str, boot: VideoBootstrap | None
) -> dict[str, Any]:
    return summarise_stops(held.stop, held.paid, held.paid_unshared, inputs, primary, boot)


def _frontier(
    inputs: CascadeInputs,
    held: list[HeldOut],
    offsets: tuple[float, ...],
    currency: str,
) -> list[dict[str, Any]]:
    accs = np.array([outcome_at(h.stop, inputs.correct).mean() for h in held])
    costs = np.array([h.cost(currency).mean() for h in held])
    terminal_cost = float(inputs.cost(currency).terminal.mean())
    front = set(pareto_front(costs, accs).tolist())
    return [
        {
            "target_offset": float(offsets[j]),
            "accuracy": float(accs[j]),
            "mean_cost": float(costs[j]),
            "cost_reduction": 1.0 - float(costs[j]) / terminal_cost if terminal_cost else None,
            "pareto": j in front,
        }
        for j in np.argsort(costs, kind="stable")
    ]


def _threshold_sweep(inputs: CascadeInputs, costs: StageCosts) -> list[dict[str, Any]]:
    """Pareto points of one threshold shared by every stage; nothing is fitted, so every item
    counts."""
    k = inputs.correct.shape[1]
    gate = np.ones((inputs.n_items, k - 1), dtype=bool)
    score = inputs.confidence[:, : k - 1]
    candidates = np.r_[score_quantiles(score, 128), np.inf]
    acc, mean_cost = shared_threshold_sweep(
        gate, score, inputs.correct, costs.cumulative, candidates
    )
    terminal_cost = float(costs.terminal.mean())
    return [
        {
            "threshold": _threshold_json(float(candidates[j])),
            "accuracy": float(acc[j]),
            "mean_cost": float(mean_cost[j]),
            "cost_reduction": 1.0 - float(mean_cost[j]) / terminal_cost if terminal_cost else None,
        }
        for j in pareto_front(mean_cost, acc)
    ]


def _unavailable(name: str, inputs: CascadeInputs, has_score: bool) -> str | None:
    """Why a stopping rule cannot run on these inputs (None when it can)."""
    if name == "confidence" and not has_score:
        return f"no {inputs.score_name} score recorded below the terminal budget"
    needed = AGREEING_STAGES.get(name, 0)
    if needed > len(inputs.labels) - 1:
        return (
            f"needs {needed} stages below the terminal one to agree ({len(inputs.labels)} in all)"
        )
    return None


@renamed_keywords(policies="rules")
def best_match(rules: dict[str, Any]) -> dict[str, Any] | None:
    """The matching stopping rule (interval of the change reaching 0) that saves the most;
    `rules` is a block's `policies` (rule name -> its record)."""
    matching = [
        (name, p)
        for name, p in rules.items()
        if p.get("available")
        and p.get("matches_terminal")
        and (p["cost_reduction"]["value"] or 0.0) > 1e-12
    ]
    if not matching:
        return None
    name, block = max(matching, key=lambda np_: np_[1]["cost_reduction"]["value"])
    return {
        "policy": name,
        "accuracy": block["accuracy"],
        "accuracy_change": block["accuracy_change"],
        "cost_reduction": block["cost_reduction"],
        "mean_cost": block["mean_cost"],
    }


def _cost_record(inputs: CascadeInputs, settings: CascadeSettings) -> dict[str, Any]:
    record: dict[str, Any] = {
        "primary": settings.cost,
        "sharing": inputs.sharing,
        "sharing_requested": settings.sharing,
        "unshared_bound": "none" if inputs.bounds else None,
    }
    for c in ("frames", "tokens", "latency"):
        costs = inputs.costs.get(c)
        record[f"{c}_basis"] = costs.basis if costs is not None else None
        record[f"{c}_note"] = costs.note if costs is not None else inputs.missing.get(c)
    return record


def run_stopping_rules(inputs: CascadeInputs, settings: CascadeSettings) -> dict[str, Any]:
    """Every stopping rule on one matrix: held-out accuracy, cost, cost reduction, frontier.
    The block keeps its JSON keys (`policies`: rule name -> record)."""
    n, k = inputs.correct.shape
    if k < 2:
        raise ValueError(f"{inputs.model}/{inputs.series}: a cascade needs at least two budgets")
    folds = video_folds(inputs.video_ids, np.random.default_rng(settings.seed))
    primary = inputs.cost(settings.cost)
    boot = VideoBootstrap(inputs.video_ids, settings.n_boot, settings.seed) if n else None
    has_score = bool(np.isfinite(inputs.confidence[:, : k - 1]).any())

    rules: dict[str, Any] = {}
    frontier: list[dict[str, Any]] = []
    for name in STOPPING_RULE_NAMES:
        reason = _unavailable(name, inputs, has_score)
        if reason is not None:
            rules[name] = {
                "available": False,
                "reason": reason,
                "description": STOPPING_RULE_DESCRIPTIONS[name],
            }
            continue
        offsets = (0.0, *settings.frontier_offsets) if name == "confidence" else (0.0,)
        held = cross_fit(name, inputs, folds, settings.cost, offsets)
        rules[name] = {
            "available": True,
            "description": STOPPING_RULE_DESCRIPTIONS[name],
            **_summarise(held[0], inputs, settings.cost, boot),
            "folds": list(held[0].fold_fits),
        }
        if name == "confidence":
            frontier = _frontier(inputs, held[1:], settings.frontier_offsets, settings.cost)

    terminal_stop = np.full(n, k - 1, dtype=np.int64)
    terminal = summarise_stops(
        terminal_stop,
        {c: inputs.cost(c).terminal for c in inputs.costs},
        {},
        inputs,
        settings.cost,
        boot,
    )
    fold_sizes = [int((folds == f).sum()) for f in (0, 1)]
    fold_videos = [len(set(inputs.video_ids[folds == f].tolist())) for f in (0, 1)]
    block: dict[str, Any] = {
        "model": inputs.model,
        "series": inputs.series,
        "labels": list(inputs.labels),
        "n_items": n,
        "n_videos": len(set(inputs.video_ids.tolist())),
        "score": {"name": inputs.score_name, "description": SCORE_DESCRIPTIONS[inputs.score_name]},
        "cost": _cost_record(inputs, settings),
        "folds": {"seed": settings.seed, "n_items": fold_sizes, "n_videos": fold_videos},
        "terminal": {
            "label": inputs.labels[-1],
            "accuracy": terminal["accuracy"],
            "mean_cost": terminal["mean_cost"],
            **{f"mean_cost_{c}": terminal[f"mean_cost_{c}"] for c in inputs.costs},
        },
        "cascade": rules["confidence"],
        "policies": rules,
        "best_match": best_match(rules),
        "frontier": frontier,
        "threshold_sweep": _threshold_sweep(inputs, primary) if has_score else [],
    }
    if settings.threshold is not None:
        block["fixed_rule"] = fixed_rule(inputs, settings.threshold, settings.cost, boot)
    return block


def _axis_matrix(
    df: pd.DataFrame, matrix: ResponseMatrix, stages: tuple[str, ...]
) -> tuple[ResponseMatrix, tuple[int, ...]]:
    """The matrix of the requested stages, on the matched grid of those stages alone (the
    text-only answer on the axis when it is one of them), and their positions in it."""
    rows = df[
        (df["model"] == matrix.model) & ((df["series"] == matrix.series) | (df["frames"] == 0))
    ]
    text_label = matrix.text_label
    labels = tuple(matrix.labels) + ((text_label,) if text_label is not None else ())
    frames = np.r_[matrix.frames, [0] if text_label is not None else []].astype(np.int64)
    wanted = [labels[p] for p in resolve_stages(stages, labels, frames)]
    text_wanted = text_label is not None and text_label in wanted
    sub = rows[rows["config_label"].isin(wanted) & ((rows["frames"] > 0) | text_wanted)]
    built = [
        m
        for m in build_matrices(sub, models=[matrix.model], text_on_axis=text_wanted)
        if m.series == matrix.series and m.kind == "binary"
    ]
    if not built:
        raise StageError(f"no answered item has every stage {', '.join(wanted)}")
    axis = built[0]
    return axis, tuple(axis.labels.index(label) for label in wanted)


def _without_repeated_terminal(
    matrix: ResponseMatrix,
) -> tuple[ResponseMatrix, list[dict[str, Any]]]:
    """The stages without a terminal that looks like the same input as the stage before it
    (`same_input`, docs/measures.md): a policy that stops before such a terminal runs what the
    terminal runs, so the saving it would claim is none. Costed as its predecessor, the
    repeated stage is simply not a stage."""
    repeats = repeated_terminal(matrix)
    if not repeats:
        return matrix, []
    keep = tuple(range(matrix.n_configs - len(repeats)))
    return matrix.chain(keep), repeats


def _repeat_reason(repeats: list[dict[str, Any]]) -> str:
    """Why the requested terminal is not the terminal, in one line."""
    kept = repeats[-1]["from"]
    why = "; ".join(entry["evidence"]["sentence"] for entry in reversed(repeats))
    dropped = ", ".join(entry["to"] for entry in reversed(repeats))
    return (
        f"terminal {kept}, not {repeats[0]['to']}: {why}; {dropped} is costed as {kept} "
        "(left out of the stages), so no saving rests on it"
    )


def cascade_report(df: pd.DataFrame, settings: CascadeSettings) -> dict[str, Any]:
    """Stopping rules for every (model, series) budget axis of a response table, in the
    `cascade --json` layout."""
    results: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for matrix in build_matrices(df):
        where = {"model": matrix.model, "series": matrix.series}
        if matrix.series.startswith(INTERVENTION_SERIES_PREFIX):
            skipped.append({**where, "reason": "intervention re-runs are not a budget axis"})
            continue
        if matrix.kind != "binary":
            skipped.append(
                {
                    **where,
                    "kind": matrix.kind,
                    "n_items": matrix.n_items,
                    "reason": "open-ended items: policies need 0/1 correctness (mcqa)",
                }
            )
            continue
        chain = None
        if settings.stages is not None:
            try:
                matrix, positions = _axis_matrix(df, matrix, settings.stages)
            except StageError as exc:
                skipped.append({**where, "reason": str(exc)})
                continue
            matrix = matrix.chain(positions)
        elif matrix.n_configs >= 2:
            chain = main_chain(matrix.budget_order, matrix.frames)
            if chain is not None:  # a grid of frames x resolutions: stages climb one chain
                matrix = matrix.chain(chain[1])
        if matrix.n_configs < 2:
            skipped.append({**where, "reason": "fewer than two budgets"})
            continue
        matrix, repeats = _without_repeated_terminal(matrix)
        if matrix.n_configs < 2:
            skipped.append(
                {**where, "reason": _repeat_reason(repeats) + "; fewer than two budgets remain"}
            )
            continue
        n_videos = len(set(np.asarray(matrix.video_ids).tolist()))
        if n_videos < 2:
            skipped.append({**where, "reason": f"{n_videos} video(s): cannot cross-fit"})
            continue
        inputs = inputs_from_matrix(matrix, sharing=settings.sharing, score=settings.score)
        block = run_stopping_rules(inputs, settings)
        if chain is not None:
            block["chain"] = chain[0]
        if repeats:
            block["same_input_terminal"] = repeats
            block["same_input_note"] = _repeat_reason(repeats)
        block["n_dropped"] = matrix.n_dropped
        block["drop_reasons"] = dict(matrix.drop_reasons)
        results.append(block)
    return {
        "schema_version": CASCADE_SCHEMA_VERSION,
        "settings": settings.model_dump(mode="json"),
        "results": results,
        "skipped": skipped,
    }

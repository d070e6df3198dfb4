"""Stopping rules on the response matrix, cross-fitted and reported on held-out folds.

Every rule is fitted on one half of the videos and reported on the other, then the halves swap,
so each reported outcome comes from thresholds that never saw its item. Intervals resample
videos of those held-out outcomes (thresholds are not refitted per resample); all rules share
the folds and resamples, so their differences are paired. The JSON keeps the keys it always
had (`policies`, `best_match.policy`): docs/glossary.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal, get_args

import numpy as np
import numpy.typing as npt
import pandas as pd

from ...core.errors import renamed_keywords
from ..measures import INTERVENTION_SERIES_PREFIX as MEASURED_APART
from ..measures import (
    Count,
    RerunFloor,
    ResponseMatrix,
    VideoBootstrap,
    build_matrices,
    main_chain,
    repeated_terminal,
)
from ._cascade_report import (
    CURRENCIES,
    AvailableRule,
    BestMatch,
    CascadeBlock,
    CascadeReport,
    CostRecord,
    FoldFit,
    FoldSizes,
    FrontierPoint,
    RuleRecord,
    SameInputStep,
    ScoreRecord,
    SkippedAxis,
    SweepPoint,
    TerminalRecord,
    UnavailableRule,
)
from ._cost import StageCosts
from ._fixed import fixed_rule
from ._folds import video_folds
from ._inputs import (
    SCORE_DESCRIPTIONS,
    CascadeInputs,
    StageError,
    inputs_from_matrix,
    resolve_stages,
)
from ._learned import (
    agreeing_run,
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
from ._settings import CASCADE_SCHEMA_VERSION, CascadeSettings
from ._summary import summarise_stops

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

#: Where `itemscale cascade` writes its report in a run folder (the artifact copies and checks it).
CASCADE_FILE: Final[str] = "cascade.json"
#: Series written by `itemscale intervene`; they are single re-runs, not budget axes.
INTERVENTION_SERIES_PREFIX: Final[str] = MEASURED_APART

StoppingRuleName = Literal["confidence", "agreement", "agreement_3", "learned"]
STOPPING_RULE_NAMES: Final[tuple[StoppingRuleName, ...]] = get_args(StoppingRuleName)
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

#: The same rules where no stopping score is recorded (an imported table of answers): a
#: description lists only what the rule reads on such data.
_ANSWERS_ONLY_DESCRIPTIONS: Final[dict[str, str]] = {
    "agreement": "stage k answers when it gives the same answer as stage k-1 (answers alone: "
    "no score is recorded)",
    "agreement_3": "stage k answers when stages k-2, k-1 and k give one answer (answers alone: "
    "no score is recorded)",
    "learned": (
        "stage k answers when a logistic stopping model on answer features (agreement with the "
        "stage before, the run of agreeing stages, no answer, the stage's position; no score is "
        "recorded), fitted on the other fold, predicts that stopping loses nothing against the "
        "terminal budget with probability >= tau_k"
    ),
}


def rule_description(name: str, has_score: bool) -> str:
    if has_score:
        return STOPPING_RULE_DESCRIPTIONS[name]
    return _ANSWERS_ONLY_DESCRIPTIONS.get(name, STOPPING_RULE_DESCRIPTIONS[name])


#: Rules whose gate or features read the previous stage must run every stage; the
#: confidence cascade may skip a stage that can never answer.
SKIPS_SILENT_STAGES: Final[dict[str, bool]] = {
    name: name == "confidence" for name in STOPPING_RULE_NAMES
}


@dataclass(frozen=True)
class HeldOut:
    """Where each item stopped, and what it paid in every currency (and, beside a `prefix`
    cost, with nothing shared), under thresholds fitted on the other fold."""

    stop: IntArray
    paid: dict[str, FloatArray]
    paid_unshared: dict[str, FloatArray]
    fold_fits: tuple[FoldFit, ...]

    def cost(self, currency: str) -> FloatArray:
        return self.paid[currency]


def _rule_scores(
    rule: StoppingRuleName, inputs: CascadeInputs, fit_items: BoolArray
) -> tuple[BoolArray, FloatArray, tuple[float, ...] | None]:
    """(gate, score, the learned model's weights); `fit_items` is all a learned part may see."""
    n, k = inputs.correct.shape
    conf = inputs.confidence[:, : k - 1]
    if rule == "confidence":
        return np.ones((n, k - 1), dtype=bool), conf.copy(), None
    if rule in AGREEING_STAGES:
        run = agreeing_run(agreement_matrix(inputs.answers))[:, : k - 1]
        gate = run >= AGREEING_STAGES[rule] - 1
        return gate, np.where(np.isnan(conf), -np.inf, conf), None
    features = stopping_features(inputs.confidence, inputs.answers)
    targets = stopping_targets(inputs.correct)
    model = fit_stopping_model(features[fit_items], targets[fit_items])
    score = model.predict(features)
    return np.ones((n, k - 1), dtype=bool), score, tuple(model.weights.tolist())


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
    fold_reports: list[list[FoldFit]] = [[] for _ in range(m)]
    for fit_fold in (0, 1):
        fit_items = folds == fit_fold
        held = ~fit_items
        gate, score, weights = _rule_scores(rule, inputs, fit_items)
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
                FoldFit(
                    fitted_on_fold=fit_fold,
                    reported_on_fold=1 - fit_fold,
                    target_accuracy=targets[t],
                    fit_accuracy=fit.accuracy,
                    fit_mean_cost=fit.mean_cost,
                    target_reached=fit.feasible,
                    thresholds={
                        inputs.labels[s]: _threshold_json(float(fit.thresholds[s]))
                        for s in range(k - 1)
                    },
                    stages_run=tuple(inputs.labels[s] for s in range(k) if active[s]),
                    weights=weights,
                )
            )
    return [HeldOut(stops[t], paid[t], unshared[t], tuple(fold_reports[t])) for t in range(m)]


def _frontier(
    inputs: CascadeInputs,
    held: list[HeldOut],
    offsets: tuple[float, ...],
    currency: str,
) -> tuple[FrontierPoint, ...]:
    right = np.array([outcome_at(h.stop, inputs.correct).sum() for h in held])
    n = inputs.n_items
    accs = right / n if n else np.full(len(held), np.nan)
    costs = np.array([h.cost(currency).mean() for h in held])
    terminal_cost = float(inputs.cost(currency).terminal.mean())
    front = set(pareto_front(costs, accs).tolist())
    return tuple(
        FrontierPoint(
            target_offset=float(offsets[j]),
            accuracy=float(accs[j]),
            mean_cost=float(costs[j]),
            cost_reduction=1.0 - float(costs[j]) / terminal_cost if terminal_cost else None,
            pareto=j in front,
            count=Count(k=round(float(right[j])), n=n),
        )
        for j in np.argsort(costs, kind="stable")
    )


def _threshold_sweep(inputs: CascadeInputs, costs: StageCosts) -> tuple[SweepPoint, ...]:
    """Pareto points of one threshold shared by every stage (nothing fitted: every item)."""
    k = inputs.correct.shape[1]
    gate = np.ones((inputs.n_items, k - 1), dtype=bool)
    score = inputs.confidence[:, : k - 1]
    candidates = np.r_[score_quantiles(score, 128), np.inf]
    acc, mean_cost = shared_threshold_sweep(
        gate, score, inputs.correct, costs.cumulative, candidates
    )
    terminal_cost = float(costs.terminal.mean())
    return tuple(
        SweepPoint(
            threshold=_threshold_json(float(candidates[j])),
            accuracy=float(acc[j]),
            mean_cost=float(mean_cost[j]),
            cost_reduction=1.0 - float(mean_cost[j]) / terminal_cost if terminal_cost else None,
        )
        for j in pareto_front(mean_cost, acc)
    )


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
def best_match(rules: Mapping[str, RuleRecord]) -> BestMatch | None:
    """The matching stopping rule (interval of the change reaching 0) that saves the most;
    `rules` is a block's `policies` (rule name -> its record)."""
    matching = [
        (name, p)
        for name, p in rules.items()
        if isinstance(p, AvailableRule)
        and p.matches_terminal
        and (p.cost_reduction.value or 0.0) > 1e-12
    ]
    if not matching:
        return None
    name, block = max(matching, key=lambda np_: np_[1].cost_reduction.value or 0.0)
    return BestMatch(
        policy=name,
        accuracy=block.accuracy,
        accuracy_change=block.accuracy_change,
        cost_reduction=block.cost_reduction,
        mean_cost=block.mean_cost,
    )


def _cost_record(inputs: CascadeInputs, settings: CascadeSettings) -> CostRecord:
    record: dict[str, str | None] = {
        "primary": settings.cost,
        "sharing": inputs.sharing,
        "sharing_requested": settings.sharing,
        "unshared_bound": "none" if inputs.bounds else None,
    }
    for c in CURRENCIES:
        costs = inputs.costs.get(c)
        record[f"{c}_basis"] = None if costs is None else costs.basis
        record[f"{c}_note"] = inputs.missing.get(c) if costs is None else costs.note
    return CostRecord.model_validate(record)


def run_stopping_rules(inputs: CascadeInputs, settings: CascadeSettings) -> CascadeBlock:
    """Every stopping rule on one matrix: held-out accuracy, cost, cost reduction, frontier.
    The block keeps its JSON keys (`policies`: rule name -> record)."""
    n, k = inputs.correct.shape
    if k < 2:
        raise ValueError(f"{inputs.model}/{inputs.series}: a cascade needs at least two budgets")
    folds = video_folds(inputs.video_ids, np.random.default_rng(settings.seed))
    primary = inputs.cost(settings.cost)
    boot = VideoBootstrap(inputs.video_ids, settings.bootstrap, settings.seed) if n else None
    has_score = bool(np.isfinite(inputs.confidence[:, : k - 1]).any())

    rules: dict[str, RuleRecord] = {}
    frontier: tuple[FrontierPoint, ...] = ()
    for name in STOPPING_RULE_NAMES:
        reason = _unavailable(name, inputs, has_score)
        if reason is not None:
            rules[name] = UnavailableRule(
                available=False, reason=reason, description=rule_description(name, has_score)
            )
            continue
        offsets = (0.0, *settings.frontier_offsets) if name == "confidence" else (0.0,)
        held = cross_fit(name, inputs, folds, settings.cost, offsets)
        first = held[0]
        summary = summarise_stops(
            first.stop, first.paid, first.paid_unshared, inputs, settings.cost, boot
        )
        rules[name] = AvailableRule(
            available=True,
            description=rule_description(name, has_score),
            folds=first.fold_fits,
            **dict(summary),
        )
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
    return CascadeBlock(
        model=inputs.model,
        series=inputs.series,
        labels=tuple(inputs.labels),
        n_items=n,
        n_videos=len(set(inputs.video_ids.tolist())),
        score=ScoreRecord(
            name=inputs.score_name, description=SCORE_DESCRIPTIONS[inputs.score_name]
        ),
        cost=_cost_record(inputs, settings),
        folds=FoldSizes(
            seed=settings.seed,
            n_items=tuple(int((folds == f).sum()) for f in (0, 1)),
            n_videos=tuple(len(set(inputs.video_ids[folds == f].tolist())) for f in (0, 1)),
        ),
        terminal=TerminalRecord(
            label=inputs.labels[-1],
            accuracy=terminal.accuracy,
            mean_cost=terminal.mean_cost,
            **{f"mean_cost_{c}": getattr(terminal, f"mean_cost_{c}") for c in inputs.costs},
        ),
        cascade=rules["confidence"],
        policies=rules,
        best_match=best_match(rules),
        frontier=frontier,
        threshold_sweep=_threshold_sweep(inputs, primary) if has_score else (),
        fixed_rule=(
            fixed_rule(inputs, settings.threshold, settings.cost, boot)
            if settings.threshold is not None
            else None
        ),
        n_dropped=0,
        drop_reasons={},
    )


def _axis_matrix(
    df: pd.DataFrame, matrix: ResponseMatrix, stages: tuple[str, ...]
) -> tuple[ResponseMatrix, tuple[int, ...]]:
    """The matrix on the matched grid of the requested stages alone, and their positions."""
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
        for m in build_matrices(
            sub, models=[matrix.model], text_on_axis=text_wanted, rerun_floor=matrix.rerun_floor
        )
        if m.series == matrix.series and m.kind == "binary"
    ]
    if not built:
        raise StageError(f"no answered item has every stage {', '.join(wanted)}")
    axis = built[0]
    return axis, tuple(axis.labels.index(label) for label in wanted)


def _without_repeated_terminal(
    matrix: ResponseMatrix,
) -> tuple[ResponseMatrix, tuple[SameInputStep, ...]]:
    """The stages without a terminal that looks like the same input as the stage before it
    (`same_input`, docs/measures.md): a policy that stops before such a terminal runs what the
    terminal runs, so the saving it would claim is none. Costed as its predecessor, the
    repeated stage is simply not a stage."""
    repeats = tuple(SameInputStep.model_validate(r.model_dump()) for r in repeated_terminal(matrix))
    if not repeats:
        return matrix, ()
    keep = tuple(range(matrix.n_configs - len(repeats)))
    return matrix.chain(keep), repeats


def _repeat_reason(repeats: tuple[SameInputStep, ...]) -> str:
    kept = repeats[-1].from_
    why = "; ".join(entry.evidence.sentence for entry in reversed(repeats))
    dropped = ", ".join(entry.to for entry in reversed(repeats))
    return (
        f"terminal {kept}, not {repeats[0].to}: {why}; {dropped} is costed as {kept} "
        "(left out of the stages), so no saving rests on it"
    )


def cascade_report(df: pd.DataFrame, settings: CascadeSettings) -> CascadeReport:
    """Stopping rules for every (model, series) budget axis of a response table: the typed
    report whose `to_json()` is what `cascade --json` writes. `settings.models` limits it to
    those models (a name without responses is a `ValueError`) and is recorded as `models`."""
    if settings.models is not None:
        unknown = sorted(set(settings.models) - set(df["model"].unique()))
        if unknown:
            raise ValueError(f"no responses for model(s) {', '.join(unknown)}")
        df = df[df["model"].isin(list(settings.models))]
    results: list[CascadeBlock] = []
    skipped: list[SkippedAxis] = []
    stated = None if settings.rerun_floor is None else RerunFloor.of_percent(settings.rerun_floor)
    # the same-input rule judges the terminal against the floor the run's repeats and reruns
    # measure (each matrix carries its model's), or the one stated
    for matrix in build_matrices(df, rerun_floor=stated):
        where = {"model": matrix.model, "series": matrix.series}
        if matrix.series.startswith(INTERVENTION_SERIES_PREFIX):
            skipped.append(
                SkippedAxis(**where, reason="intervention re-runs are not a budget axis")
            )
            continue
        if matrix.kind != "binary":
            skipped.append(
                SkippedAxis(
                    **where,
                    kind=matrix.kind,
                    n_items=matrix.n_items,
                    reason="open-ended items: policies need 0/1 correctness (mcqa)",
                )
            )
            continue
        chain = None
        if settings.stages is not None:
            try:
                matrix, positions = _axis_matrix(df, matrix, settings.stages)
            except StageError as exc:
                skipped.append(SkippedAxis(**where, reason=str(exc)))
                continue
            matrix = matrix.chain(positions)
        elif matrix.n_configs >= 2:
            chain = main_chain(matrix.budget_order, matrix.frames)
            if chain is not None:  # a grid of frames x resolutions: stages climb one chain
                matrix = matrix.chain(chain[1])
        if matrix.n_configs < 2:
            skipped.append(SkippedAxis(**where, reason="fewer than two budgets"))
            continue
        matrix, repeats = _without_repeated_terminal(matrix)
        if matrix.n_configs < 2:
            reason = _repeat_reason(repeats) + "; fewer than two budgets remain"
            skipped.append(SkippedAxis(**where, reason=reason))
            continue
        n_videos = len(set(np.asarray(matrix.video_ids).tolist()))
        if n_videos < 2:
            skipped.append(SkippedAxis(**where, reason=f"{n_videos} video(s): cannot cross-fit"))
            continue
        inputs = inputs_from_matrix(matrix, sharing=settings.sharing, score=settings.score)
        block = run_stopping_rules(inputs, settings)
        results.append(
            block.model_copy(
                update={
                    "chain": None if chain is None else chain[0],
                    "same_input_terminal": repeats or None,
                    "same_input_note": _repeat_reason(repeats) if repeats else None,
                    "n_dropped": matrix.n_dropped,
                    "drop_reasons": dict(matrix.drop_reasons),
                }
            )
        )
    return CascadeReport(
        schema_version=CASCADE_SCHEMA_VERSION,
        settings=settings,
        results=tuple(results),
        skipped=tuple(skipped),
        models=tuple(sorted(settings.models)) if settings.models is not None else None,
    )

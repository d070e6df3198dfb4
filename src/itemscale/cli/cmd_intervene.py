"""`itemscale intervene RUN_DIR --policy nested|phase-shift`: re-run the terminal budget of every
terminal regression (and of a seeded control sample of correct items) with one controlled change
of sampling, through the sweep, and report `recovered_rate` beside `broken_rate`.

The re-runs are stored in the run like any other cells, as a configuration of their own series
(`intervention:<policy>`), so `itemscale analyze` sees them and a crash resumes where it stopped.
The plan (which items, which control sample, which configuration) and the result are written to
`RUN_DIR/intervention/`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO, cast

from . import CommandError
from ._format import points_text

if TYPE_CHECKING:
    from ..measures import ResponseMatrix
    from ..policies import InterventionName
    from ..sweep import BackendFactory

INTERVENTION_DIR = "intervention"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "intervene",
        help="re-run terminal regressions with a controlled change of sampling",
        description="Re-run the terminal budget of every terminal regression, and of a seeded "
        "control sample of items right at the terminal budget, with one controlled change of "
        "sampling; report the share of regressions recovered and the share of controls broken, "
        "with 95% video-bootstrap intervals.",
    )
    p.add_argument("run_dir", help="run directory written by `itemscale sweep`")
    p.add_argument(
        "--policy",
        required=True,
        choices=["nested", "phase-shift"],
        help="nested: the terminal frame count with nested sampling; phase-shift: the same grid "
        "shifted by half a sampling interval",
    )
    p.add_argument(
        "--control",
        type=int,
        default=None,
        metavar="N",
        help="control items (right at the terminal budget) to re-run; default: as many as "
        "there are terminal regressions",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the control sample and bootstrap")
    p.add_argument(
        "--bootstrap", type=int, default=1000, metavar="B", help="resamples (0: none; default 1000)"
    )
    p.add_argument("--model", default=None, help="model to intervene on (needed if several)")
    p.add_argument("--series", default=None, help="budget axis (needed if several)")
    p.add_argument("--executor", choices=("local", "ray"), default="local")
    p.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, ... (local models)")
    p.add_argument("--batch-size", type=int, default=1, help="requests per model call")
    p.add_argument(
        "--no-run",
        action="store_true",
        help="do not run anything: compute the rates from cells already in the table",
    )
    p.add_argument("--json", dest="json_out", metavar="OUT", help="also write the result here")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _pick_matrix(
    matrices: list[ResponseMatrix],
    model: str | None,
    series: str | None,
    where: str,
    policy: str | None = None,
) -> ResponseMatrix:
    """The one budget axis to intervene on. Among several, a series that already samples with
    the intervention's policy (`nested/cached` for `--policy nested`) is set aside, since
    re-running it with the same sampling would compare the policy with itself."""
    from ..policies import INTERVENTION_SERIES_PREFIX

    axes = [
        m
        for m in matrices
        if m.kind == "binary"
        and m.n_configs >= 2
        and not m.series.startswith(INTERVENTION_SERIES_PREFIX)
    ]
    if model is not None:
        axes = [m for m in axes if m.model == model]
    if series is not None:
        axes = [m for m in axes if m.series == series]
    if not axes:
        raise CommandError(
            f"{where}: no multiple-choice budget axis with two or more budgets"
            + (f" for model {model!r}" if model else "")
            + (f" in series {series!r}" if series else "")
        )
    if len(axes) > 1 and policy is not None and series is None:
        others = [m for m in axes if policy not in m.series.split("/")]
        if len(others) == 1:
            print(
                f"intervening on series {others[0].series} (series "
                + ", ".join(m.series for m in axes if m not in others)
                + f" already samples with {policy}; --series picks another)"
            )
            return others[0]
    if len(axes) > 1:
        options = ", ".join(f"--model {m.model} --series {m.series}" for m in axes)
        raise CommandError(f"{where}: several budget axes; pick one of: {options}")
    return axes[0]


def run_intervention(
    run_dir: str | Path,
    *,
    policy: str,
    n_control: int | None = None,
    seed: int = 0,
    n_boot: int = 1000,
    model: str | None = None,
    series: str | None = None,
    execute: bool = True,
    executor: Literal["local", "ray"] = "local",
    device: str = "cpu",
    batch_size: int = 1,
    backend_factory: BackendFactory | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Plan, run (through the sweep, resumably) and measure one intervention; returns the result
    that `RUN_DIR/intervention/<policy>.json` holds."""
    import numpy as np
    from pydantic import ValidationError

    from ..measures import build_matrices, main_chain
    from ..policies import (
        INTERVENTION_NAMES,
        InterventionError,
        intervention_outcomes,
        plan_intervention,
    )
    from ..protocol import Protocol
    from ..responses import SchemaError, read_run, run_lock, write_json_atomic

    if policy not in INTERVENTION_NAMES:
        raise CommandError(
            f"unknown intervention {policy!r}; choose one of {', '.join(INTERVENTION_NAMES)}"
        )
    run_dir = Path(run_dir)
    try:
        df, provenance = read_run(run_dir)
    except (FileNotFoundError, SchemaError) as exc:
        raise CommandError(str(exc)) from exc
    if "protocol" not in provenance:
        raise CommandError(
            f"{run_dir / 'run.json'}: no protocol recorded (not written by `itemscale sweep`?); "
            "intervene re-runs the terminal budget and needs the protocol that produced it"
        )
    try:
        protocol = Protocol.model_validate(provenance["protocol"])
    except ValidationError as exc:
        raise CommandError(f"{run_dir / 'run.json'}: recorded protocol is invalid: {exc}") from exc

    matrix = _pick_matrix(build_matrices(df), model, series, str(run_dir), policy)
    chain = main_chain(matrix.budget_order, matrix.frames)
    if chain is not None:  # frames x resolutions: the lower budgets along the frame axis only
        matrix = matrix.chain(chain[1])
    terminal_id = matrix.config_ids[-1]
    terminal = next((c for c in protocol.configurations() if c.config_id == terminal_id), None)
    if terminal is None:
        raise CommandError(
            f"{run_dir}: the terminal budget {matrix.labels[-1]} (config {terminal_id}) is not in "
            "the recorded protocol's grid"
        )
    try:
        plan = plan_intervention(
            matrix,
            policy=cast("InterventionName", policy),
            terminal=terminal,
            rng=np.random.default_rng(seed),
            seed=seed,
            n_control=n_control,
        )
    except InterventionError as exc:
        raise CommandError(f"{run_dir}: {exc}") from exc
    out_dir = run_dir / INTERVENTION_DIR
    with run_lock(run_dir, what="intervene"):
        write_json_atomic(out_dir / f"{policy}.plan.json", plan.model_dump(mode="json"))

    if execute and plan.items:
        from ..models import BackendError
        from ..protocol import Configuration
        from ..store import StoreError
        from ..sweep import BenchmarkLoadError, ExtraConfig, run_sweep

        entry = next((m for m in protocol.models if m.name == plan.model), None)
        if entry is None:
            raise CommandError(f"{run_dir}: model {plan.model!r} is not in the recorded protocol")
        one_model = protocol.model_copy(update={"models": (entry,)})
        interventions = dict(provenance.get("interventions", {}))
        interventions[policy] = {
            "plan_file": f"{INTERVENTION_DIR}/{policy}.plan.json",
            "model": plan.model,
            "source_series": plan.source_series,
            "series": plan.series,
            "configs": plan.configs,
            "config_series": plan.config_series,
            "terminal_config_id": plan.terminal_config_id,
            "seed": seed,
            "n_regressions": plan.n_regressions,
            "n_controls": sum(1 for i in plan.items if i.group == "control"),
        }
        try:
            result = run_sweep(
                one_model,
                extra_configs=[
                    ExtraConfig(
                        Configuration.model_validate(config),
                        series=plan.config_series[config_id],
                        item_ids=plan.items_for(config_id),
                    )
                    for config_id, config in plan.configs.items()
                ],
                item_filter=plan.item_ids,
                run_dir=run_dir,
                executor=executor,
                device=device,
                batch_size=batch_size,
                backend_factory=backend_factory,
                progress=progress,
                # run.json keeps the whole protocol, not the one-model copy the re-run used.
                provenance={"protocol": provenance["protocol"], "interventions": interventions},
            )
        except (BackendError, StoreError, BenchmarkLoadError) as exc:
            raise CommandError(f"{run_dir}: {exc}") from exc
        if result.interrupted:
            raise CommandError(
                f"{run_dir}: interrupted; finished re-runs are stored, run the command again "
                "to resume"
            )
        df, _ = read_run(run_dir)

    outcome = intervention_outcomes(df, plan, n_boot=n_boot, seed=seed)
    outcome["run_dir"] = str(run_dir)
    with run_lock(run_dir, what="intervene"):  # the re-run's sweep held it while it ran
        write_json_atomic(out_dir / f"{policy}.json", outcome)
    return outcome


def print_summary(result: dict[str, Any], out: TextIO | None = None) -> None:
    out = out if out is not None else sys.stdout
    reg, ctrl = result["regressions"], result["controls"]
    print(
        f"itemscale intervene: {result['model']} / {result['source_series']}, policy "
        f"{result['policy']} at {result['terminal_label']} (series {result['series']})",
        file=out,
    )
    print(f"  change: {result['description']}", file=out)
    print(
        f"  terminal regressions: {result['n_regressions']} of {result['n_items']} items; "
        f"re-run {reg['n_answered']} (failed {reg['n_failed']}, missing {reg['n_missing']})",
        file=out,
    )
    print(
        f"  controls (right at the terminal): {ctrl['n_planned']} drawn with seed "
        f"{result['seed']}; re-run {ctrl['n_answered']} (failed {ctrl['n_failed']}, missing "
        f"{ctrl['n_missing']})",
        file=out,
    )
    print(f"  recovered_rate: {points_text(result['recovered_rate'])}", file=out)
    print(f"  broken_rate:    {points_text(result['broken_rate'])}", file=out)
    print(
        f"  net accuracy change if applied to every item: "
        f"{points_text(result['net_accuracy_change_estimate'])} points",
        file=out,
    )
    kept, before = reg["reference_frames_kept"], reg["reference_frames_kept_before"]
    if kept is not None and before is not None:
        print(
            f"  frames of the lower budget that was right, kept at the terminal: "
            f"{100 * before:.0f}% before, {100 * kept:.0f}% after the change",
            file=out,
        )


def run(args: argparse.Namespace) -> int:
    if args.bootstrap < 0:
        raise CommandError("--bootstrap must be >= 0")
    if args.batch_size < 1:
        raise CommandError(f"--batch-size must be at least 1 (got {args.batch_size})")
    if args.control is not None and args.control < 0:
        raise CommandError(f"--control must be >= 0 (got {args.control})")
    result = run_intervention(
        args.run_dir,
        policy=args.policy,
        n_control=args.control,
        seed=args.seed,
        n_boot=args.bootstrap,
        model=args.model,
        series=args.series,
        execute=not args.no_run,
        executor=args.executor,
        device=args.device,
        batch_size=args.batch_size,
        progress=not args.no_progress,
    )
    print_summary(result)
    from ..responses import write_json_atomic

    if args.json_out:
        write_json_atomic(args.json_out, result)
    print(f"\nplan and result written to {Path(args.run_dir) / INTERVENTION_DIR}")
    return 0

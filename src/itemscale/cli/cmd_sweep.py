"""`itemscale sweep protocol.toml`: run (or resume) a protocol's grid into its run directory."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import CommandError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help="run a protocol's budget grid against its models (resumable)",
        description=(
            "Plan the cells (models x items x configurations x repeats, plus the text-only "
            "baseline), skip the finished ones, decode each video once for all its "
            "configurations, run the rest in batches and commit each result to RUN_DIR/"
            "store.sqlite as it arrives; then export RUN_DIR/responses.parquet and run.json. "
            "Ctrl-C stops after the cells in flight (exit status 130); rerun to resume."
        ),
    )
    parser.add_argument("protocol", type=Path, help="protocol file (TOML)")
    parser.add_argument(
        "--dry-run", action="store_true", help="print the plan and its cost; run nothing"
    )
    parser.add_argument(
        "--limit", type=int, default=None, metavar="N", help="only the first N items"
    )
    parser.add_argument(
        "--retry-errors",
        action="store_true",
        help="run again the cells stored as media_error, model_error or timeout",
    )
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="local: this process; ray: one actor per GPU or CPU slot (driver owns the store)",
    )
    parser.add_argument(
        "--device",
        default="cpu",
        help="cpu, cuda, cuda:1, ... for local models (default: cpu, even when a GPU is present)",
    )
    parser.add_argument(
        "--batch-size",
        type=_batch_size,
        default=1,
        metavar="N|auto",
        help="requests per model call (default 1); auto: per configuration, from its visual "
        "tokens and the device's free memory (an out-of-memory call is halved and run again)",
    )
    _served_arguments(parser)
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        metavar="DIR",
        help="run directory (default: the protocol's `output`)",
    )
    parser.add_argument(
        "--videos",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder of the benchmark's video files (overrides the protocol)",
    )
    parser.add_argument(
        "--frame-cache",
        type=Path,
        default=None,
        metavar="DIR",
        help="keep decoded frames in this folder, shared across runs",
    )
    _add_ray_options(parser)
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bars (neither itemscale's nor transformers' model loading bar)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the plan (--dry-run) or the summary as one JSON object",
    )
    _rerun_check_arguments(parser)
    parser.add_argument(
        "--deterministic",
        action="store_true",
        help="local models: torch's deterministic algorithms, TF32 off, one request per model "
        "call (batch size 1), so reruns and resumes give the same answers (run.json records "
        "it; docs/sweep.md)",
    )
    parser.set_defaults(func=run)


def _rerun_check_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rerun-check",
        type=float,
        default=None,
        metavar="FRACTION",
        help="after each model's grid, run this share of its finished cells again (a seeded "
        "sample, shuffled, at another batch size), stored as reruns: the run's own rerun "
        "floor, recorded per session in run.json and printed by analyze (local executor)",
    )
    parser.add_argument(
        "--rerun-seed",
        type=int,
        default=0,
        metavar="S",
        help="seed of the rerun check's sample and order (default 0)",
    )
    parser.add_argument(
        "--rerun-batch-size",
        type=int,
        default=None,
        metavar="N",
        help="batch size of the reruns (default: 8 when the grid runs at batch size 1, else 1)",
    )


def _served_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--concurrency",
        type=int,
        default=8,
        metavar="N",
        help="requests in flight to a served model (openai backend)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="deadline in seconds for each served-model request attempt, connect to last byte "
        "(default 120); past it the cell is a `timeout` row",
    )
    parser.add_argument(
        "--max-retries",
        type=int,
        default=4,
        metavar="N",
        help="retries of a served-model request on 429/5xx and connection errors",
    )
    parser.add_argument(
        "--accept-budget-cap",
        action="store_true",
        help="sweep a served model even when the budget probe finds that the server does not "
        "show the model the frames it is sent (run.json records it; docs/backends.md)",
    )


def _add_ray_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="Ray actors per model (default: one per GPU or CPU slot)",
    )
    parser.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDR",
        help="the Ray cluster for --executor ray: its head node's HOST:PORT, e.g. 10.0.0.5:6379 "
        "(default: RAY_ADDRESS, else the Ray `ray start` started here, else a local Ray "
        "started for this sweep)",
    )


def _print_plan(cost: Any, run_dir: Path, as_json: bool, stack: Any, notes: Sequence[str]) -> None:
    payload = {"run_dir": str(run_dir), **cost.as_dict(), "stack": stack, "stack_notes": notes}
    if as_json:
        print(json.dumps(payload, sort_keys=True))
        return
    print(f"plan for {run_dir}")
    if stack is not None:  # the stack the sweep would run under, and how it differs from before
        from ..core.responses import stack_fields

        shown = ", ".join(
            f"{k} {'none' if v is None else v}" for k, v in stack_fields(stack).items()
        )
        print(f"software stack: {shown}")
        for note in notes:
            print(f"note: {note}")
    print(f"{'configuration':<24} {'cells':>8} {'to run':>8} {'frames':>10} {'vis. tokens':>12}")
    for label, row in cost.by_config.items():
        print(
            f"{label:<24} {row['cells']:>8} {row['cells_todo']:>8} {row['frames']:>10} "
            f"{row['visual_tokens_estimated']:>12}"
        )
    print(
        f"{'total':<24} {cost.cells:>8} {cost.cells_todo:>8} {cost.frames:>10} "
        f"{cost.visual_tokens:>12}"
    )
    print(
        f"{cost.cells_done} cells already done; visual tokens estimated with Qwen2-VL's "
        "28x28-pixel, 2-frame patches"
    )
    if cost.visual_tokens_unknown_cells:
        print(f"{cost.visual_tokens_unknown_cells} cells have no readable video: tokens unknown")
        missing = sorted(cost.unreadable_videos)
        folders = sorted({str(Path(p).parent) for p in missing})
        for folder in folders[:3]:
            state = "exists" if Path(folder).is_dir() else "does not exist"
            inside = [p for p in missing if str(Path(p).parent) == folder]
            print(
                f"  {len(inside)} video(s) unreadable in {folder} (the folder {state}), e.g. "
                f"{Path(inside[0]).name}"
            )
        if folders and not Path(folders[0]).is_dir():
            print("  check the protocol's [benchmark] videos folder")


def _dry_run_stack(protocol: Any, run_dir: Path, device: str) -> tuple[Any, list[str]]:
    """The stack this machine would record, and the notes a resume would print."""
    from ..collect.models import BACKENDS
    from ..collect.store import STORE_FILE, RunStore
    from ..collect.sweep import software_stack, stack_notice

    local = any(BACKENDS[m.backend].on_device for m in protocol.models)
    stack = software_stack(device, local=local)
    if not (run_dir / STORE_FILE).is_file():
        return stack, stack_notice([], stack, cells_by_session={})
    with RunStore(run_dir / STORE_FILE) as store:
        notes = stack_notice(store.sessions(), stack, cells_by_session=store.cells_by_session())
    return stack, notes


def _print_budget_probe(model: str, record: dict[str, Any] | None) -> None:
    if record is None:
        return
    small, large = record["small"], record["large"]
    if record["honoured"] is None:
        print(f"served model {model}: budget probe not checked ({record['reason']})")
        return
    verdict = "honoured" if record["honoured"] else "NOT honoured (accepted)"
    print(
        f"served model {model}: budget probe {verdict}: {small['label']} "
        f"{small['frames_sent']} frames -> {small['visual_tokens']} visual tokens, "
        f"{large['label']} {large['frames_sent']} -> {large['visual_tokens']}"
    )


def _batch_size(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number or 'auto', got {text!r}"
        ) from None


def _check_flags(args: argparse.Namespace) -> None:
    if args.limit is not None and args.limit < 1:
        raise CommandError(f"--limit must be at least 1 (got {args.limit})")
    if args.batch_size != "auto" and args.batch_size < 1:
        raise CommandError(f"--batch-size must be at least 1 (got {args.batch_size})")
    if args.deterministic and args.batch_size != 1:
        raise CommandError(
            f"--deterministic runs one request per model call: drop --batch-size "
            f"{args.batch_size} (a batch's padding and kernels would move its answers)"
        )
    if args.concurrency < 1 or args.timeout <= 0 or args.max_retries < 0:
        raise CommandError("--concurrency must be >= 1, --timeout > 0, --max-retries >= 0")
    if args.ray_address is not None and args.executor != "ray":
        raise CommandError("--ray-address needs --executor ray")
    if args.workers is not None and args.workers < 1:
        raise CommandError(f"--workers must be at least 1 (got {args.workers})")
    _rerun_check(args)


def _rerun_check(args: argparse.Namespace) -> Any:
    """The sweep's `RerunCheck` (None without `--rerun-check`)."""
    from ..collect.sweep import RerunCheck

    if args.rerun_check is None:
        if args.rerun_batch_size is not None:
            raise CommandError("--rerun-batch-size needs --rerun-check FRACTION")
        return None
    if args.executor != "local":
        raise CommandError("--rerun-check runs on the local executor (it reuses the loaded model)")
    try:
        return RerunCheck(args.rerun_check, args.rerun_seed, args.rerun_batch_size)
    except ValueError as exc:
        raise CommandError(f"--rerun-check: {exc}") from None


def run(args: argparse.Namespace) -> int:
    from ..collect.models import BACKENDS
    from ..collect.protocol import load_protocol
    from ..collect.sweep import Numerics, RuntimeBackendFactory, plan_sweep, run_sweep

    _check_flags(args)
    protocol = load_protocol(args.protocol, backends=BACKENDS)
    if args.videos is not None:
        bench = protocol.benchmark.model_copy(update={"videos": str(args.videos.resolve())})
        protocol = protocol.model_copy(update={"benchmark": bench})
    run_dir = args.output if args.output is not None else Path(protocol.output)
    try:
        if args.dry_run:
            cost = plan_sweep(
                protocol, limit=args.limit, retry_errors=args.retry_errors, run_dir=run_dir
            )
            stack, notes = _dry_run_stack(protocol, run_dir, args.device)
            _print_plan(cost, run_dir, args.json, stack, notes)
            return 0
        if args.no_progress:  # nor the "Loading weights" bars of transformers and the hub
            os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
            with contextlib.suppress(ImportError):  # analysis-only install: no local models
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        local = [m.name for m in protocol.models if BACKENDS[m.backend].on_device]
        if local:
            hint = " (pass --device cuda to use a GPU)" if args.device == "cpu" else ""
            print(
                f"itemscale sweep -> {run_dir}: local model(s) {', '.join(local)} on "
                f"{args.device}{hint}",
                file=sys.stderr,
            )
        cache = None
        if args.frame_cache is not None:
            from ..collect.video import FrameCache

            cache = FrameCache(args.frame_cache)
        result = run_sweep(
            protocol,
            executor=args.executor,
            limit=args.limit,
            retry_errors=args.retry_errors,
            run_dir=run_dir,
            device=args.device,
            batch_size=args.batch_size,
            backend_factory=RuntimeBackendFactory(
                concurrency=args.concurrency, timeout_s=args.timeout, max_retries=args.max_retries
            ),
            frame_cache=cache,
            workers=args.workers,
            ray_address=args.ray_address,
            progress=not args.no_progress,
            provenance={"argv": ["itemscale", "sweep", *sys.argv[2:]]},
            accept_budget_cap=args.accept_budget_cap,
            numerics=Numerics(deterministic=args.deterministic),
            rerun_check=_rerun_check(args),
        )
    except FileNotFoundError as exc:
        raise CommandError(str(exc)) from None
    _print_summary(result, as_json=args.json)
    _say_failures(result)
    return result.exit_code


def _print_summary(result: Any, *, as_json: bool) -> None:
    if as_json:  # keys sorted: their order here is free
        same = "planned skipped ran by_status interrupted not_loaded served warnings budget_probe "
        same += "selections failed batch_sizes out_of_memory"
        summary = {name: getattr(result, name) for name in same.split()}
        summary |= {"run_dir": str(result.run_dir), "rows": len(result.table)}
        summary |= {"throughput": result.throughput(), "rerun_check": result.rerun_checks}
        summary |= {"exit_status": result.exit_code, **({"ray": result.ray} if result.ray else {})}
        print(json.dumps(summary, sort_keys=True))
    else:
        status = ", ".join(f"{k} {v}" for k, v in sorted(result.by_status.items())) or "nothing"
        print(
            f"{result.planned} cells planned, {result.skipped} already done, {result.ran} run "
            f"({status}); {len(result.table)} rows in {result.run_dir / 'responses.parquet'}"
        )
        if result.ran:
            print(result.throughput_line())
        if result.out_of_memory:
            print(
                f"out of memory: {result.out_of_memory} model call(s) ran out of device memory "
                "and were run again in halves; batch sizes used: "
                + "; ".join(
                    f"{model}: " + ", ".join(f"{label} {size}" for label, size in sizes.items())
                    for model, sizes in sorted(result.batch_sizes.items())
                )
            )
        if result.not_loaded:
            print(
                "not loaded (every cell already done with the same model, options, device and "
                f"checkpoint folder): {', '.join(result.not_loaded)}"
            )
        for model, seen in sorted(result.served.items()):
            print(f"served model {model}: up to {seen['max_in_flight']} request(s) in flight")
            _print_budget_probe(model, result.budget_probe.get(model))
        _print_selections(result.selections)
        _print_rerun_checks(result.rerun_checks)
        if result.ray:
            ray = result.ray
            print(
                f"ray: {ray['nodes']} node(s), {ray['actors']} actor(s) started, "
                f"{ray['actors_lost']} lost, {ray['jobs_retried']} job(s) retried, "
                f"{ray['cells_failed_actor_lost']} cell(s) failed because their job's actor was "
                "lost on every try"
            )
        for warning in result.warnings:
            print(f"warning: {warning}")
        if result.interrupted:
            print("interrupted: rerun the same command to resume", file=sys.stderr)


def _print_rerun_checks(checks: dict[str, Any]) -> None:
    for model, record in sorted(checks.items()):
        floor = record.get("floor") or "no answer to compare"
        print(
            f"rerun check, model {model}: {record['cells_sampled']} of "
            f"{record['cells_finished']} finished cells run again ({record['cells_run']} this "
            f"time) at batch size {record['batch_size']}, in a seeded shuffle (seed "
            f"{record['seed']}); rerun floor: {floor}"
        )


def _print_selections(selections: dict[str, Any]) -> None:
    """One line per selection configuration; for a cap (records give up to K frames once
    duplicates are merged), the frames they give."""
    for label, sel in sorted(selections.items()):
        lost = sel.get("items_with_duplicates") or 0
        extra = f" ({lost} record(s) lost frames that way)" if lost else ""
        if sel.get("cap"):
            extra += (
                f", distinct frames {sel['frames_listed_min']}-{sel['frames_listed_max']} "
                f"(mean {sel['frames_listed_mean']:.1f})"
            )
        if sel.get("frames_scored_mean") is not None:
            extra += f", frames scored by the selector: mean {sel['frames_scored_mean']:.1f}"
        if sel.get("matched_by") == "question":
            extra += ", ids repeat: records matched by (video, question text)"
        print(
            f"selection {label}: {sel['path']} ({sel['format']}, sha256 "
            f"{sel['sha256'][:12]}), {sel['items_checked']} items, "
            f"{sel['duplicate_frames_removed']} duplicate frames removed{extra}"
        )


def _say_failures(result: Any) -> None:
    """How many cells failed, of which kind; past the limit, why the exit status is 3."""
    from ..collect.sweep import FAILED_CELLS_EXIT, FAILED_SHARE_LIMIT

    said = result.failure_summary()
    if not said or result.interrupted:
        return
    if result.mostly_failed:
        print(
            f"itemscale sweep: {said}: more than {FAILED_SHARE_LIMIT:.0%} of the cells run "
            f"failed, so the exit status is {FAILED_CELLS_EXIT} (every cell is stored; fix the "
            "cause, e.g. the server or the videos, and rerun with --retry-errors)",
            file=sys.stderr,
        )
    else:
        print(f"itemscale sweep: {said}", file=sys.stderr)

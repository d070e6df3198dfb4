"""Steps of `itemscale demo` that are more than one library call: the terminal regressions
grouped by what the frame audit saw, and the built-in frame selector compared with uniform
sampling. Each returns what it found; the command line prints it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Required, TypedDict

from pydantic import JsonValue

from ..analysis.measures import Selector
from ..core.errors import renamed_keywords

if TYPE_CHECKING:
    from ..analysis.policies import InterventionResult

#: What the audit saw of an item's evidence between the budget it was right at and the
#: terminal, in words (the groups `regression_pathways` tallies).
EVIDENCE_NOT_KNOWN: Final[str] = "evidence not known"
RIGHT_WITHOUT_EVIDENCE: Final[str] = "right without seeing the evidence (a guess or the prior)"
SAMPLING_ACCIDENT: Final[str] = (
    "evidence seen below, missed by the terminal grid (a sampling accident)"
)
SEEN_AT_TERMINAL: Final[str] = (
    "evidence seen at the terminal too (diluted, distracted or the prior)"
)


@dataclass(frozen=True)
class RegressionPathway:
    """One terminal regression: what the audit saw and what the nested re-run did."""

    item_id: str
    #: The item's `question_kind` attribute ("?" when the item file lacks it).
    kind: str
    reference_label: str
    #: Evidence frames shown at the two budgets ("4 -> 0"), "?" when the evidence is not known.
    seen: str
    pathway: str
    #: One of the evidence groups above.
    group: str
    #: "recovered", "still wrong", or the re-run's status.
    outcome: str


@dataclass(frozen=True)
class RegressionPathways:
    terminal: str
    rows: tuple[RegressionPathway, ...]
    #: Per evidence group, the re-run's outcomes counted.
    tally: dict[str, Counter[str]]


def _evidence(pair: Any) -> tuple[str, str]:
    if not len(pair) or not bool(pair["evidence_known"].iloc[0]):
        return "?", EVIDENCE_NOT_KNOWN
    before, after = int(pair["evidence_from"].iloc[0]), int(pair["evidence_to"].iloc[0])
    if before == 0:
        group = RIGHT_WITHOUT_EVIDENCE
    elif after == 0:
        group = SAMPLING_ACCIDENT
    else:
        group = SEEN_AT_TERMINAL
    return f"{before} -> {after}", group


def regression_pathways(
    intervention: InterventionResult, run_dir: Path, items_file: Path | None = None
) -> RegressionPathways:
    """Every terminal regression of a nested intervention with the audit's pathway and what the
    re-run did: which regressions a sampling change can fix (evidence dropped by the larger
    grid) and which it cannot (diluted). `items_file` defaults to RUN/suite/items.jsonl."""
    from ..analysis.audit import audit_transitions
    from ..collect.items import ITEMS_FILE, read_items_jsonl
    from ..core.responses import read_run

    path = items_file if items_file is not None else run_dir / "suite" / ITEMS_FILE
    items = {item.item_id: item for item in read_items_jsonl(path)}
    terminal = str(intervention.terminal_label)
    regressions = [r for r in intervention.items if r.group == "regression"]
    df, _ = read_run(run_dir)
    regressed = {r.item_id for r in regressions}
    chosen = df[
        (df["series"] == intervention.source_series) & df["item_id"].isin(regressed)
        | (df["frames"] == 0) & df["item_id"].isin(regressed)
    ]
    # every comparable pair, not only adjacent ones: the pair here is (right at, terminal)
    audit = audit_transitions(chosen, items, pairs="all")
    rows = []
    tally: dict[str, Counter[str]] = {}
    for r in regressions:
        pair = audit[
            (audit["item_id"] == r.item_id)
            & (audit["from_label"] == r.reference_label)
            & (audit["to_label"] == terminal)
        ]
        seen, group = _evidence(pair)
        outcome = {1.0: "recovered", 0.0: "still wrong"}.get(
            -1.0 if r.after is None else r.after, r.status
        )
        tally.setdefault(group, Counter())[outcome] += 1
        item = items.get(r.item_id)
        kind = item.attributes.get("question_kind", "?") if item is not None else "?"
        rows.append(
            RegressionPathway(
                item_id=r.item_id,
                kind=str(kind),
                reference_label=r.reference_label,
                seen=seen,
                pathway=str(pair["pathway"].iloc[0]) if len(pair) else "not audited",
                group=group,
                outcome=str(outcome),
            )
        )
    return RegressionPathways(terminal=terminal, rows=tuple(rows), tally=tally)


#: The budget the demo's selector runs at: a frame count whose uniform gap (about 1.5 s on the
#: demo's 12 s videos) is wider than a blink, at the demo's smaller resolution.
DEMO_SELECTOR_FRAMES: Final[int] = 8
DEMO_SELECTOR_SIDE: Final[int] = 56
DEMO_SELECTION: Final[str] = "change"
#: Where the demo writes its selection file and the comparison, inside the run folder.
SELECTOR_DIR: Final[str] = "selections"
SELECTOR_FILE: Final[str] = "selector.json"
#: The demo's adaptive selector: `change --adaptive` at a cap of DEMO_SELECTOR_FRAMES, at least
#: this many frames a video, and where its comparison is written.
DEMO_ADAPTIVE_SELECTION: Final[str] = "change-adaptive"
DEMO_ADAPTIVE_MIN_FRAMES: Final[int] = 2
ADAPTIVE_SELECTOR_FILE: Final[str] = "selector_adaptive.json"


class SelectorFile(TypedDict, total=False):
    """`RUN/selector.json` (`selector`: the churn block's, `analyze --json`'s layout)."""

    selection_file: Required[str]
    config: Required[str]
    budget: str
    selector: JsonValue


@dataclass(frozen=True)
class SelectorComparison:
    """The selector's series beside uniform sampling at the same budget."""

    selection_file: Path
    series: str
    cells_run: int
    #: the selector's configuration label
    config: str
    #: the first budget both series ran, and the selector's record there (None: none shared)
    budget: str | None = None
    selector: Selector | None = None

    def as_json(self) -> SelectorFile:
        out: SelectorFile = {"selection_file": str(self.selection_file), "config": self.config}
        if self.budget is not None and self.selector is not None:
            out["budget"] = self.budget
            out["selector"] = self.selector.model_dump(mode="json")
        return out


@renamed_keywords(n_boot="bootstrap")
def selector_comparison(
    run_dir: Path, *, bootstrap: int, batch_size: int, adaptive: bool = False
) -> SelectorComparison:
    """Sweep the built-in `change` selection as one more series, compare it with uniform
    sampling at the same budget (RUN/selector.json). `adaptive`: `change --adaptive` at a cap
    of that budget, compared at its matched mean cost (RUN/selector_adaptive.json)."""
    from ..analysis.measures import VideoBootstrap, build_matrices, series_churn
    from ..collect.models import BACKENDS
    from ..collect.protocol import (
        Configuration,
        SamplingPolicy,
        load_protocol,
        read_selection,
        selection_file_digest,
    )
    from ..collect.sweep import load_benchmark_items, run_sweep
    from ..collect.video import Adaptive, write_selection_files
    from ..core.responses import read_run, write_json_atomic

    k, side = DEMO_SELECTOR_FRAMES, DEMO_SELECTOR_SIDE
    name = DEMO_ADAPTIVE_SELECTION if adaptive else DEMO_SELECTION
    setting = Adaptive(min_frames=DEMO_ADAPTIVE_MIN_FRAMES) if adaptive else None
    protocol = load_protocol(run_dir / "protocol.toml", backends=BACKENDS)
    items = load_benchmark_items(protocol.benchmark)
    selections = write_selection_files(
        items, [k], run_dir / SELECTOR_DIR, name=name, adaptive=setting
    )
    (path,) = selections.values()
    sampling = SamplingPolicy(
        name="selection",
        selection=name,
        selection_format="auto",
        selection_digest=selection_file_digest(path),
        selection_path=str(path),
        selection_cap=None if read_selection(path).is_exact(k) else True,
    )
    config = Configuration(frames=k, short_side=side, sampling=sampling)
    result = run_sweep(
        protocol, run_dir=run_dir, extra_configs=[config], progress=False, batch_size=batch_size
    )
    df, _ = read_run(run_dir)
    mcqa = [m for m in build_matrices(df) if m.kind == "binary"]
    uniform = next(m for m in mcqa if m.series == "linspace/cached")
    chosen = next(m for m in mcqa if m.series == config.series)
    churn = series_churn(
        uniform, chosen, lambda videos: VideoBootstrap(videos, bootstrap, 0) if bootstrap else None
    )
    budget = next((b for b in churn.budgets if b.selector is not None), None) if churn else None
    found = SelectorComparison(
        selection_file=Path(path), series=config.series, cells_run=result.ran, config=config.label
    )
    if budget is not None and budget.selector is not None:
        found = replace(found, budget=budget.budget, selector=budget.selector)
    write_json_atomic(
        run_dir / (ADAPTIVE_SELECTOR_FILE if adaptive else SELECTOR_FILE), found.as_json()
    )
    return found

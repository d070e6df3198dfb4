"""The seed paper's released labels (five Video LLMs on Video-MME V1 short,
`src/itemscale/data/scalegrid/`, CC BY 4.0), reproduced through the same `import table --wide`
path a user would take: the real-data half of `itemscale demo`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..core.errors import renamed_keywords
from ..report import PaperComparison, PaperNumber

if TYPE_CHECKING:
    from ..analysis.measures import AnalysisResult, Estimate
    from ..analysis.policies import CascadeReport


def paper_measures() -> list[tuple[str, str, str]]:
    """(the paper's name, its key in the release's JSON, itemscale's key) of every registered
    measure the paper publishes."""
    from ..analysis.measures import measures_for

    return [
        (unit.paper[0], unit.paper[1], unit.key)
        for unit in measures_for("binary_with_text")
        if unit.paper is not None
    ]


TABLE2_CONFIGS: Final[tuple[str, ...]] = ("textonly", "16f_151k", "32f_151k", "64f_151k")
RELEASE_ANSWER_KEY: Final[str] = "V1_short_answer_key.csv"
#: Agreement to this many points counts as "the same number" (the JSON rounds to 0.0001).
PAPER_TOLERANCE_POINTS: Final[float] = 0.005


def release_dir() -> Path:
    return Path(str(resources.files("itemscale") / "data" / "scalegrid"))


def release_models(root: Path | None = None) -> list[tuple[str, Path, dict[str, Any]]]:
    root = root if root is not None else release_dir()
    out = []
    for table in sorted(root.glob("*_V1_short_predictions_wide.csv")):
        model = table.name[: -len("_V1_short_predictions_wide.csv")]
        paper = json.loads((root / f"{model}_V1_short.json").read_text(encoding="utf-8"))
        out.append((model, table, paper))
    return out


def import_release(run_dir: Path, root: Path | None = None) -> tuple[int, int]:
    """Import every wide table into `run_dir` (idempotent); (rows added, rows already there)."""
    from ..collect.importers import (
        TableOptions,
        finish_import,
        import_record,
        import_table,
        load_answer_key,
        source_record,
    )

    root = root if root is not None else release_dir()
    key = load_answer_key(root / RELEASE_ANSWER_KEY)
    added = unchanged = 0
    for model, table, _ in release_models(root):
        options = TableOptions(wide=True, id_column="sample_id", model=model)
        rows, notes = import_table(table, options, key=key)
        record = import_record(
            "table",
            [source_record(table, rows=len(rows))],
            wide=True,
            id_column="sample_id",
            model=model,
            answer_key=source_record(root / RELEASE_ANSWER_KEY),
        )
        summary = finish_import(
            importer="table",
            run_dir=run_dir,
            files=[str(table)],
            rows=rows,
            record=record,
            skipped=Counter(),
            notes=notes,
        )
        added += summary.rows_added
        unchanged += summary.rows_unchanged
    return added, unchanged


def compare_with_paper(
    measures: AnalysisResult | Mapping[str, Any], root: Path | None = None
) -> list[PaperNumber]:
    """One record per (model, measure): the paper's value, itemscale's, its interval, agreement.

    itemscale's side is the model's `grid_with_text` block (the text-only answer as budget 0),
    computed on the model's whole released grid, which is the grid of its JSON. `measures` is
    the analysis (`analyze_responses`), or an `analyze --json` file's content, read as one.
    """
    from ..analysis.measures import AnalysisResult, BinarySeries

    result = AnalysisResult.from_json(measures)
    rows: list[PaperNumber] = []
    for model, _, paper in release_models(root):
        entry = result.models.get(model)
        block = entry.grid_with_text if isinstance(entry, BinarySeries) else None
        if block is None:
            raise ValueError(f"no grid_with_text block for {model} (is the text-only run there?)")
        if sorted(block.configs) != sorted(paper["configs"]):
            raise ValueError(
                f"{model}: itemscale's grid {block.configs} is not the paper's {paper['configs']}"
            )
        checks = [
            (f"accuracy {c}", paper["accuracy_by_config"][c], block.accuracy[c])
            for c in paper["configs"]
        ]
        checks += [
            (name, paper[pk], _estimate(block.entry(ik))) for name, pk, ik in paper_measures()
        ]
        for name, paper_value, stat in checks:
            ours = 100 * _value(stat)
            rows.append(
                PaperNumber(
                    model=model,
                    measure=name,
                    paper=float(paper_value),
                    itemscale=ours,
                    ci=[100 * c for c in stat.ci] if stat.ci else None,
                    same=abs(ours - float(paper_value)) < PAPER_TOLERANCE_POINTS,
                    n_items=block.n_items,
                    n_videos=block.n_videos,
                    configs=list(block.configs),
                )
            )
    return rows


def _estimate(entry: object) -> Estimate:
    from ..analysis.measures import BestFixed, Estimate

    if isinstance(entry, BestFixed):
        return entry.estimate
    if isinstance(entry, Estimate):
        return entry
    if isinstance(entry, Mapping):
        return Estimate.from_json(entry)
    raise ValueError(f"not an estimate: {entry!r}")


def _value(stat: Estimate) -> float:
    if stat.value is None:
        raise ValueError("a published measure without a value")
    return float(stat.value)


#: The prescription's bar (the seed paper's headline: 31.7% fewer shared frames at the
#: terminal accuracy), used only to count the models that clear it.
SAVING_BAR: Final[float] = 0.30
#: What `reproduce_paper` writes beside the measures: the comparison and the Table 2 grid.
TABLE2_FILE: Final[str] = "table2.json"


@dataclass(frozen=True)
class PaperReproduction:
    """What `reproduce_paper` computed and where it wrote it."""

    run_dir: Path
    rows_added: int
    rows_unchanged: int
    measures: AnalysisResult
    table2: AnalysisResult
    comparison: list[PaperNumber]
    #: shared frames: `--sharing prefix`
    cascade: CascadeReport
    report: Path | None

    @property
    def reproduced(self) -> int:
        return sum(r.same for r in self.comparison)

    def summary(self) -> dict[str, object]:
        """The paper's entry of `demo.json`."""
        from ..analysis.policies import CASCADE_FILE
        from ..report import MEASURES_FILE

        out: dict[str, object] = {
            "run_dir": str(self.run_dir),
            "measures": str(self.run_dir / MEASURES_FILE),
            "table2": str(self.run_dir / TABLE2_FILE),
            "cascade": str(self.run_dir / CASCADE_FILE),
            "reproduced": self.reproduced,
            "published": len(self.comparison),
        }
        if self.report is not None:
            out["report"] = str(self.report)
        return out


@renamed_keywords(n_boot="bootstrap")
def reproduce_paper(paper_dir: Path, *, bootstrap: int, report: bool) -> PaperReproduction:
    """Import the seed paper's released labels into `paper_dir`, reproduce its numbers, measure
    its Table 2 grid, fit the cascade on them and (with `report`) write their report."""
    from ..analysis.measures import AnalysisSettings, analyze_responses
    from ..analysis.policies import CASCADE_FILE, CascadeSettings, cascade_report
    from ..core.responses import read_run, responses_digest, write_json_atomic
    from ..report import COMPARISON_FILE, MEASURES_FILE, REPORT_FILE, build_artifact

    added, unchanged = import_release(paper_dir)
    df, _ = read_run(paper_dir)
    measures = analyze_responses(df, AnalysisSettings(bootstrap=bootstrap, seed=0))
    write_json_atomic(paper_dir / MEASURES_FILE, measures.to_json())
    rows = compare_with_paper(measures)
    write_json_atomic(paper_dir / COMPARISON_FILE, PaperComparison(tuple(rows)).as_json())
    grid = AnalysisSettings(bootstrap=bootstrap, seed=0, configs=TABLE2_CONFIGS)
    table2 = analyze_responses(df, grid)
    write_json_atomic(paper_dir / TABLE2_FILE, table2.to_json())
    # The same labels turned into a prescription; written where the report picks it up, with
    # the settings `itemscale cascade RUN --sharing prefix` records, so verify recomputes it.
    cascade = cascade_report(
        df, CascadeSettings(bootstrap=bootstrap, seed=0, sharing="prefix")
    ).for_run(paper_dir, responses_digest(paper_dir))
    write_json_atomic(paper_dir / CASCADE_FILE, cascade.as_json())
    page = None
    if report:
        title = "itemscale report: the seed paper's labels"
        page = build_artifact(paper_dir, bootstrap=bootstrap, seed=0, title=title) / REPORT_FILE
    return PaperReproduction(
        run_dir=paper_dir,
        rows_added=added,
        rows_unchanged=unchanged,
        measures=measures,
        table2=table2,
        comparison=rows,
        cascade=cascade,
        report=page,
    )

"""The seed paper's release as the tests use it: its splits, their tables, and an answer key per
split written from published files.

V1 short ships its key (`V1_short_answer_key.csv`, from Video-MME's question file); V1 medium's
is Video-MME's question file restricted to the split's items (the release's `derived.csv`
lists them). The V2 medium and MLVU splits have no question file here (Video-MME v2 is not
published among the fixtures; the MLVU file's order is not the release's), so their keys are
written from the release's own labels: an item that some model answers right at some
configuration has as gold that model's answer at its `best_config` (the first configuration
it is right at; every such answer agrees across the five models), and an item no model ever
answers right gets a letter no model predicted for it, which makes every answer to it wrong,
as its labels say, without claiming to be the benchmark's gold. Accuracy checks on these keys
are exact; only the letter of a never-answered item is a stand-in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from _support.paths import DATA, shared
from itemscale.workflows import release_dir

DERIVED = DATA / "scalegrid_labels" / "derived.csv.gz"
SPLIT_DIRS = {
    "V1_short": release_dir(),
    "V1_medium": DATA / "scalegrid_v1_medium",
    "V2_medium": DATA / "scalegrid_v2_medium",
    "MLVU": DATA / "scalegrid_mlvu",
}


@dataclass(frozen=True)
class ReleaseTable:
    model: str
    split: str
    table: Path
    paper: dict[str, Any]


def derived() -> pd.DataFrame:
    """`labels/derived.csv` as strings (empty `matched_grid_best_config` stays '')."""
    return pd.read_csv(DERIVED, dtype=str, keep_default_na=False)


def release_tables(split: str) -> list[ReleaseTable]:
    root = SPLIT_DIRS[split]
    out = []
    for table in sorted(root.glob(f"*_{split}_predictions_wide.csv")):
        model = table.name[: -len(f"_{split}_predictions_wide.csv")]
        paper = json.loads((root / f"{model}_{split}.json").read_text(encoding="utf-8"))
        out.append(ReleaseTable(model, split, table, paper))
    return out


def needs_videomme() -> Path:
    return shared("benchmarks/videomme-test.parquet")


def _reconstructed_gold(split: str, labels: pd.DataFrame) -> dict[str, str]:
    gold: dict[str, str] = {}
    predicted: dict[str, set[str]] = {}
    for release in release_tables(split):
        wide = pd.read_csv(release.table, dtype=str, keep_default_na=False).set_index("sample_id")
        for sample, row in wide.iterrows():
            predicted.setdefault(str(sample), set()).update(v for v in row.tolist() if v)
        mine = labels[(labels["split"] == split) & (labels["model"] == release.model)]
        for sample, cls, best in zip(
            mine["sample_id"], mine["trajectory_class"], mine["best_config"], strict=True
        ):
            if cls != "always_wrong" and sample in wide.index:
                letter = str(wide.at[sample, best])
                assert gold.setdefault(sample, letter) == letter, (split, sample)
    for sample in labels.loc[labels["split"] == split, "sample_id"].unique():
        if sample not in gold:
            unused = [c for c in "ABCDEFGHIJ" if c not in predicted.get(sample, set())]
            gold[sample] = unused[0]
    return gold


def split_key(split: str, out: Path) -> Path:
    """An answer key (`item_id, gold, video_id`) listing exactly the split's items, in the
    release's order; Video-MME-style ids name their video by their number."""
    if split == "V1_short":
        return release_dir() / "V1_short_answer_key.csv"
    labels = derived()
    ids = labels.loc[labels["split"] == split, "sample_id"].drop_duplicates().tolist()
    if split == "V1_medium":
        answers = pd.read_parquet(needs_videomme()).set_index("question_id")["answer"]
        gold = {i: str(answers[i]) for i in ids}
    else:
        gold = _reconstructed_gold(split, labels)
    key = pd.DataFrame({"item_id": ids, "gold": [gold[i] for i in ids]})
    if split != "MLVU":
        key["video_id"] = key["item_id"].str.split("-").str[0]
    key.to_csv(out, index=False)
    return out

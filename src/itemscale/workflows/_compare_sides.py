"""Which rows of which run each side of a comparison is (the comparison itself, matching the
sides' rows included, is `itemscale.analysis.comparison`'s).

A side is one (model, series, configuration) of one run folder. `compare A B` takes one from each
run; `compare RUN` needs exactly one of --series, --model or --config given twice (the two sides),
the others at most once (they narrow both). A side that still holds several slices is refused
with the ones it holds, so the user names one: nothing is pooled behind their back.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ..analysis.comparison import NamedRerun, Side
from ..core.responses import read_run, without_reruns
from ._errors import WorkflowError


def load_run(path: str | os.PathLike[str]) -> tuple[pd.DataFrame, dict[str, object]]:
    folder = Path(path)
    if not folder.is_dir():
        raise WorkflowError(f"{folder}: not a run folder (give a folder holding responses.parquet)")
    if not (folder / "responses.parquet").is_file():
        raise WorkflowError(f"{folder}: no responses.parquet (is this a run folder?)")
    df, provenance = read_run(folder)
    check_outcomes(df, folder / "responses.parquet")
    return df, provenance


#: the values each outcome column may hold (a missing value is allowed: a failed answer)
_OUTCOME_RULES = (("correct", "0 or 1"), ("score", "in [0, 1]"))


def check_outcomes(df: pd.DataFrame, where: Path) -> None:
    """Refuse outcome values no scorer writes (a hand-written or damaged Parquet): the means
    compare reports would otherwise be no accuracy at all."""
    for column, rule in _OUTCOME_RULES:
        if column not in df.columns:
            continue
        raw = df[column]
        values = pd.to_numeric(raw, errors="coerce")
        if column == "correct":
            bad = values.notna() & ~values.isin([0.0, 1.0])
        else:
            bad = values.notna() & ~values.between(0.0, 1.0)
        bad |= raw.notna() & values.isna()  # a value that is no number
        if bad.any():
            first = df.index[bad.to_numpy()][0]
            raise WorkflowError(
                f"{where}: column '{column}': {int(bad.sum())} row(s) hold a value that is not "
                f"{rule} (first: item {df.at[first, 'item_id']!s}, {raw.at[first]}); "
                "compare reads outcomes as a scorer writes them: re-import or fix the table"
            )


def _flag_values(flag: str, values: Sequence[str]) -> None:
    if len(values) > 2:
        raise WorkflowError(
            f"{flag} given {len(values)} times: give it once (both sides) or twice (A, B)"
        )


def _pick(
    df: pd.DataFrame, run: str, model: str | None, series: str | None, config: str | None
) -> pd.DataFrame:
    rows = df
    for flag, column, value in (("--model", "model", model), ("--series", "series", series)):
        if value is None:
            continue
        known = sorted(set(rows[column].astype(str)))
        if value not in known:
            raise WorkflowError(
                f"{run}: no {column} {value!r} (the run holds: {', '.join(known)}); {flag}"
            )
        rows = rows[rows[column].astype(str) == value]
    if config is not None:
        hit = (rows["config_label"].astype(str) == config) | (
            rows["config_id"].astype(str) == config
        )
        if not hit.any():
            known = sorted(set(rows["config_label"].astype(str)))
            raise WorkflowError(
                f"{run}: no configuration {config!r} (the run holds: {', '.join(known)}); --config"
            )
        rows = rows[hit]
    return rows


def _names(row: pd.Series) -> tuple[str, str, str, str]:
    return str(row["model"]), str(row["series"]), str(row["config_label"]), str(row["config_id"])


def _one_slice(rows: pd.DataFrame, run: str, name: str) -> tuple[str, str, str, str]:
    slices = (
        rows[["model", "series", "config_label", "config_id"]]
        .astype(str)
        .drop_duplicates()
        .sort_values(["model", "series", "config_label"])
    )
    if len(slices) == 0:
        raise WorkflowError(f"side {name} ({run}): no rows hold every name given for this side")
    if len(slices) == 1:
        return _names(slices.iloc[0])
    listed = "; ".join(
        f"model {r.model}, series {r.series}, config {r.config_label}"
        for r in slices.head(12).itertuples()
    )
    more = f" (and {len(slices) - 12} more)" if len(slices) > 12 else ""
    need = [
        flag
        for flag, column in (
            ("--model", "model"),
            ("--series", "series"),
            ("--config", "config_label"),
        )
        if slices[column].nunique() > 1
    ]
    raise WorkflowError(
        f"side {name} ({run}) holds {len(slices)} slices: {listed}{more}; name one with "
        f"{' / '.join(need) or '--config'} (once for both sides, or twice: A then B)"
    )


def select_sides(
    run_a: str | os.PathLike[str],
    run_b: str | os.PathLike[str] | None,
    *,
    models: Sequence[str] = (),
    series: Sequence[str] = (),
    configs: Sequence[str] = (),
) -> tuple[Side, Side]:
    flags = {"--model": tuple(models), "--series": tuple(series), "--config": tuple(configs)}
    for flag, values in flags.items():
        _flag_values(flag, values)
    twice = [flag for flag, values in flags.items() if len(values) == 2]
    if run_b is None and len(twice) != 1:
        raise WorkflowError(
            "compare within one run needs exactly one of --series, --model or --config given "
            f"twice (side A, then side B); got {', '.join(twice) if twice else 'none twice'}. "
            "To compare two runs give two run folders"
        )
    df_a, prov_a = load_run(run_a)
    df_b, prov_b = (df_a, prov_a) if run_b is None else load_run(run_b)
    name_b = str(run_a if run_b is None else run_b)

    def choice(flag: str, side: int) -> str | None:
        values = flags[flag]
        if not values:
            return None
        return values[side] if len(values) == 2 else values[0]

    sides = []
    for index, (name, df, prov, run) in enumerate(
        (("A", df_a, prov_a, str(run_a)), ("B", df_b, prov_b, name_b))
    ):
        # rerun rows measure the floor only: a side is the run's ordinary rows
        rows = _pick(
            without_reruns(df),
            run,
            choice("--model", index),
            choice("--series", index),
            choice("--config", index),
        )
        model, series_name, label, config_id = _one_slice(rows, run, name)
        evidence = df[df["model"].astype(str) == model].reset_index(drop=True)
        sides.append(
            Side(
                run,
                prov,
                rows.reset_index(drop=True),
                model,
                series_name,
                label,
                config_id,
                evidence=evidence,
            )
        )
    if (
        run_b is None
        and sides[0].config_id == sides[1].config_id
        and sides[0].model == sides[1].model
    ):
        raise WorkflowError(f"{run_a}: both sides are the same slice ({sides[0].config}); name two")
    return sides[0], sides[1]


def select_rerun(value: str | os.PathLike[str], side_a: Side, side_b: Side) -> NamedRerun:
    """The rerun `compare --rerun` names: a second execution of one side's configuration.

    `value` is a run folder, or a configuration label of side A's run. A folder's rows of side
    A's model and configuration label are a rerun of A, else those of side B's; a folder (or
    a label) holding one slice of a side's model is a rerun of that side, A first."""
    folder = Path(value)
    if folder.is_dir():
        df, prov = load_run(folder)
        run = str(folder)
    else:
        run, prov = side_a.run, side_a.provenance
        df = load_run(side_a.run)[0]
        df = df[df["config_label"].astype(str) == str(value)]
        if df.empty:
            raise WorkflowError(
                f"--rerun {value}: not a run folder, nor a configuration label of {side_a.run}"
            )
    rows = without_reruns(df)
    for side in (side_a, side_b) if folder.is_dir() else ():
        hit = rows[
            (rows["model"].astype(str) == side.model)
            & (rows["config_label"].astype(str) == side.config)
        ]
        if len(hit):
            return _named(run, prov, hit, side, side_a)
    slices = rows[["model", "config_label"]].astype(str).drop_duplicates()
    for side in (side_a, side_b):
        if len(slices) == 1 and slices.iloc[0]["model"] == side.model:
            return _named(run, prov, rows, side, side_a)
    held = "; ".join(f"{r.model} {r.config_label}" for r in slices.head(8).itertuples())
    raise WorkflowError(
        f"--rerun {value}: a rerun is a second execution of one side's configuration "
        f"(A: {side_a.model} {side_a.config}; B: {side_b.model} {side_b.config}), but it holds "
        f"{held or 'nothing'}"
    )


def _named(
    run: str, prov: dict[str, object], rows: pd.DataFrame, side: Side, side_a: Side
) -> NamedRerun:
    rerun = Side(run, prov, rows.reset_index(drop=True), *_names(rows.iloc[0]))
    return NamedRerun(of="A" if side is side_a else "B", side=rerun)

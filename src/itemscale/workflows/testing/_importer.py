"""`check_importer`: what `itemscale import KIND` relies on from an importer: its command line
and its run function's keywords are one list, a file it cannot read is an `ImportInputError`
(never a crash, never a half-written run), and, given files it reads, a dry run writes nothing,
the import writes a run `read_run` reads, and the same import again adds no row."""

from __future__ import annotations

import inspect
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...collect.importers import IMPORTERS, Importer, ImportInputError, ImportOption, ImportSummary
from ...core.responses import RESPONSES_FILE, read_run
from ._report import Findings

#: The keywords every run function takes besides its options (the CLI adds them).
ALWAYS = ("run_dir", "dry_run")


def check_importer(
    importer: Importer | str,
    *,
    files: Sequence[str | os.PathLike[str]] = (),
    options: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> None:
    """Check an importer (an `Importer`, or a KIND of `itemscale.collect.importers.IMPORTERS`); raises
    a `ConformanceError` listing every failure. With `files` (and the `options` its command
    line would pass, as keywords: `configs`, `model`, ...), it also imports them into
    temporary folders."""
    kind = importer if isinstance(importer, str) else (name or "conformance")
    found = Findings(f"importer {kind!r}")
    named = IMPORTERS.get(importer) if isinstance(importer, str) else importer
    entry = found.instance_of(named, Importer, "itemscale.collect.importers.Importer")
    _check_declared(entry, found)
    with tempfile.TemporaryDirectory(prefix="itemscale-check-") as scratch:
        _check_unreadable(entry, Path(scratch), found)
        if files:
            given = [os.fspath(f) for f in files]
            _check_import(entry, given, dict(options or {}), Path(scratch), found)
    found.done()


def _check_declared(entry: Importer, found: Findings) -> None:
    found.check(callable(entry.run), "run is not callable")
    for part in ("help", "description"):
        value = getattr(entry, part)
        found.check(isinstance(value, str) and bool(value.strip()), f"{part} is empty")
    options = entry.options
    if not found.check(
        isinstance(options, tuple) and all(isinstance(o, ImportOption) for o in options),
        "options is not a tuple of ImportOption",
    ):
        return
    keywords = [o.keyword for o in options]
    twice = sorted({k for k in keywords if keywords.count(k) > 1})
    found.check(not twice, f"options fill the keyword(s) {twice} twice")
    found.check("files" in keywords, "no option fills `files` (the PATH... argument)")
    try:
        params = inspect.signature(entry.run).parameters
    except (TypeError, ValueError):
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    missing = [k for k in (*keywords, *ALWAYS) if k not in params]
    found.check(
        not missing, f"run takes no keyword {', '.join(missing)}, which the command line passes"
    )
    extra = [
        n
        for n, p in params.items()
        if n not in (*keywords, *ALWAYS) and p.default is inspect.Parameter.empty
    ]
    found.check(not extra, f"run requires {', '.join(extra)}, which no option fills")


def _check_unreadable(entry: Importer, scratch: Path, found: Findings) -> None:
    junk = scratch / "not-a-result-file.txt"
    junk.write_bytes(b"\x00\xff this is no tool's result file\n")
    run_dir = scratch / "junk-run"
    try:
        entry.run(files=[str(junk)], run_dir=run_dir, dry_run=False)
    except ImportInputError:
        pass
    except Exception as exc:
        found.fail(
            f"a file it cannot read raised {type(exc).__name__} ({exc}), not an "
            "ImportInputError naming the file"
        )
    else:
        found.fail("imported a file of junk without an error")
    found.check(not (run_dir / RESPONSES_FILE).exists(), "a refused import left a response table")


def _check_import(
    entry: Importer, files: list[str], options: dict[str, Any], scratch: Path, found: Findings
) -> None:
    run_dir = scratch / "run"

    def run(dry_run: bool) -> Any:
        return entry.run(files=files, run_dir=run_dir, dry_run=dry_run, **options)

    ok, summary = found.attempt("a dry run", lambda: run(True))
    if not ok:
        return
    found.check(isinstance(summary, ImportSummary), "a dry run returned no ImportSummary")
    found.check(not (run_dir / RESPONSES_FILE).exists(), "a dry run wrote a response table")
    ok, first = found.attempt("the import", lambda: run(False))
    if not ok:
        return
    found.check(
        isinstance(first, ImportSummary) and first.rows_added > 0, "the import added no row"
    )
    ok, read = found.attempt("read_run on the imported run", lambda: read_run(run_dir))
    if ok and isinstance(first, ImportSummary):
        found.check(
            len(read[0]) == first.rows_added,
            f"the run holds {len(read[0])} rows, the summary says {first.rows_added} added",
        )
    ok, again = found.attempt("the same import again", lambda: run(False))
    if ok and isinstance(again, ImportSummary):
        found.check(again.rows_added == 0, f"the same import again added {again.rows_added} rows")

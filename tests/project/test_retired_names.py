"""One vocabulary (docs/glossary.md, "One name per concept" and "Retired names"): the names
retired for a concept appear nowhere in the package's code outside the shims that keep them
working for one more release, and no two classes of the package share a name.

The code is read as Python tokens, so a retired name inside a comment is not a use of it; a
shim is a line that routes the old name to the new (`renamed_fields`, `renamed_keywords`,
`warn_renamed`, or the deprecated property itself). The retired JSON key `n_boot`, which files
of older schema versions hold, may appear in a string only where a reader takes it from such a
file (`stored_value`, `renamed_fields`, an `AliasChoices`): every writer writes `bootstrap`."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from functools import cache

import pytest

from _support.paths import DOCS, REPO, SRC

PACKAGE = SRC / "itemscale"

#: Retired identifiers, each with the name that replaced it (docs/glossary.md, "Retired names").
RETIRED = {
    "Budget": "protocol.Configuration (lmms-eval's budget record)",
    "EvalBudget": "protocol.Configuration (the built-in model's evaluation)",
    "budget_configuration": "protocol.Configuration (the built-in model's evaluation)",
    "_budget": "protocol.Configuration and config_columns (VLMEvalKit's 5-tuple)",
    "Statistic": "measures.Estimate (the cascade's and the intervention's intervals)",
    "Interval": "measures.Estimate (the anchors' and compare's intervals)",
    "n_boot": "bootstrap (the bootstrap's resample count)",
    "frames_used_matrix": "effective_frames_matrix",
    "frames_used": "effective_frames (VideoResponse.effective_frames, the backend contract's)",
    "DEFAULT_RERUN_FLOOR": "a measured or stated rerun floor (measured_floors, RerunFloor)",
    "num_workers": "workers (run_sweep(workers=...), the Ray actors per model)",
    "Session": "SweepContext (a session is the store's record of one sweep)",
}

#: Where a name is checked when it is retired only there (the sweep's `_budget` module is the
#: token-budget probe, another concept).
SCOPE = {"_budget": "itemscale/collect/importers/"}

#: A line that keeps a retired name working for a release, with its warning.
SHIM_LINE = re.compile(
    r"renamed_fields\(|renamed_keywords\(|warn_renamed\(|def n_boot\(|def frames_used\("
)


@cache
def _identifiers() -> dict[str, list[tuple[str, int, str]]]:
    """Every identifier of the package's modules -> (module, line, the line's text)."""
    found: dict[str, list[tuple[str, int, str]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        module = path.relative_to(SRC).as_posix()
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NAME and token.string in RETIRED:
                row = token.start[0]
                found.setdefault(token.string, []).append((module, row, lines[row - 1]))
    return found


def _uses(name: str) -> list[str]:
    return [
        f"{module}:{row}: {line.strip()}"
        for module, row, line in _identifiers().get(name, [])
        if module.startswith(SCOPE.get(name, "")) and not SHIM_LINE.search(line)
    ]


#: A line that reads a retired JSON key from a stored file (`n_boot`, which files of the older
#: schema versions hold): every writer writes the new key.
READER_LINE = re.compile(r"stored_value\(|AliasChoices\(")
#: The retired JSON key as a string's content (`"n_boot"`, `boot['n_boot']` in an f-string).
RETIRED_KEY = re.compile(r"""["']n_boot["']""")


def _key_uses() -> list[str]:
    """Every line of the package with the retired key in a string that neither reads it from a
    stored file nor routes it through a shim: an alias that writes it, a dict that holds it."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type not in (tokenize.STRING, tokenize.OP) and "FSTRING" not in str(
                tokenize.tok_name.get(token.type)
            ):
                continue
            for row in range(token.start[0], token.end[0] + 1):  # a string may span lines
                line = lines[row - 1]
                if RETIRED_KEY.search(line) and not (
                    SHIM_LINE.search(line) or READER_LINE.search(line)
                ):
                    found.append(f"{path.relative_to(SRC).as_posix()}:{row}: {line.strip()}")
    return found


def test_the_retired_key_is_read_never_written() -> None:
    """`n_boot` in a string is only ever read (docs/glossary.md: every file is written with
    `bootstrap`; a file of an older schema version is read alike)."""
    uses = _key_uses()
    assert not uses, "the retired key n_boot outside a reader:\n" + "\n".join(uses)
    source = 'a = Field(serialization_alias="n_boot")\nb = stored_value(x, "bootstrap", "n_boot")\n'
    hits = [
        t.start[0]
        for t in tokenize.generate_tokens(io.StringIO(source).readline)
        if t.type == tokenize.STRING and RETIRED_KEY.search(t.string)
    ]
    assert hits == [1, 2]
    assert [SHIM_LINE.search(line) or READER_LINE.search(line) for line in source.splitlines()][1]


@pytest.mark.parametrize("name", sorted(RETIRED))
def test_a_retired_name_is_not_used_outside_its_shim(name: str) -> None:
    uses = _uses(name)
    assert not uses, f"{name} is retired (use {RETIRED[name]}), yet:\n" + "\n".join(uses)


def test_no_two_classes_share_a_name() -> None:
    """A class name means one thing in the package: `BestFixed` is the record (its measure is
    `BestFixedMeasure`), `Block` the analysis's block (a measure reads it as a `BlockLike`)."""
    where: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(path.relative_to(SRC).as_posix())
    shared = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert not shared, f"classes defined more than once: {shared}"


def test_the_retired_names_list_is_the_glossarys() -> None:
    """Every name checked here is in the glossary's list of retired names, with what replaced
    it, so that a reader of the code finds why a name went."""
    page = (DOCS / "glossary.md").read_text(encoding="utf-8")
    retired = page[page.index("## Retired names") :]
    missing = [name for name in RETIRED if f"`{name}" not in retired and name not in retired]
    assert not missing, f"docs/glossary.md, 'Retired names', does not list {missing}"


@pytest.mark.parametrize(
    "pattern",
    [r"\bn_boot=", r"\bStatistic\b", r"\bEvalBudget\b", r"\bDEFAULT_RERUN_FLOOR\b"],
)
def test_the_pages_use_the_one_names(pattern: str) -> None:
    """The docs show the one names (the glossary, which lists the retired ones, aside; `n_boot`
    named as the key older files hold is a key, not a keyword)."""
    pages = [*sorted(DOCS.glob("*.md")), REPO / "README.md"]
    hits = [
        f"{page.name}:{row}"
        for page in pages
        if page.name != "glossary.md"
        for row, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1)
        if re.search(pattern, line)
    ]
    assert not hits, f"{pattern} in {hits}"


def test_the_check_finds_a_retired_name() -> None:
    """The token scan sees an identifier and skips the same word in a string or a comment."""
    source = 'x = CascadeSettings(n_boot=3)  # n_boot\ny = "n_boot"\n'
    names = [
        t.string
        for t in tokenize.generate_tokens(io.StringIO(source).readline)
        if t.type == tokenize.NAME and t.string in RETIRED
    ]
    assert names == ["n_boot"]

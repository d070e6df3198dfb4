"""Every command block of the README and docs/, run as written, in order, as a new user would.

Each document gets a fresh folder holding the files its commands name (`logs/uniform16/`,
`videomme-test.parquet`, `per_item.csv`, ...), built from the real fixtures in
`../shared/fixtures/` and a small synthetic suite. The blocks fenced as `bash` run through
bash exactly as printed (comments, continuations and `&&` included) with the project's
`itemscale` on PATH. What cannot run here is substituted, and each substitution is listed below
with its reason and checked to still match the document: the README's protocol names a 7B model
and a GPU this machine does not have, so the same protocol points at the shipped tiny model and a
six-video suite. A block preceded by `<!-- docs-test: skip: REASON -->` is not run (a benchmark, a
32-minute training run); its `itemscale` commands are still parsed by the real CLI parser and
its scripts' options checked against their `--help`, so a renamed option fails here too.
`make test` is the command that runs this test, so it is the one line never run. The
`python` blocks of a notebook page (`PYTHON_SESSIONS`) run in order as one session, after its
`bash` blocks, in the same folder; elsewhere `python` blocks show module code (a backend, a
measure) and are checked by the tests that define the same code.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from _support.paths import FIXTURES, REPO, SRC, shared
from itemscale.cli import build_parser

BIN = Path(sys.executable).parent
SHIPPED_MODEL = SRC / "itemscale" / "data" / "builtin"
DOCUMENTS = ["README.md", *sorted(p.relative_to(REPO).as_posix() for p in REPO.glob("docs/*.md"))]

FENCE = re.compile(r"^```(?P<lang>[^\n`]*)\n(?P<body>.*?)^```$", re.S | re.M)
SKIP = re.compile(r"<!-- docs-test: skip: (?P<reason>[^>]+?) -->\s*$")
#: What a `text` block is: the printed output of a command this document runs ("output of":
#: checked against what it printed, below), an excerpt of something the docs test does not
#: run ("excerpt of": a named benchmark, test or check, with its command), or no output at all
#: (a synopsis, a diagram).
MARKER = re.compile(
    r"<!-- docs-test: (?P<kind>output of|excerpt of|not output): (?P<what>[^>]+?) -->\s*$"
)
#: The documents whose console excerpts must each say where they come from.
EXCERPT_DOCUMENTS = ("README.md", "docs/compare.md", "docs/anchors.md")

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Block:
    document: str
    line: int
    lang: str
    body: str
    skip_reason: str | None
    #: (kind, what) of a `<!-- docs-test: output of|excerpt of|not output: ... -->` line
    marker: tuple[str, str] | None = None


def blocks(document: str) -> list[Block]:
    text = (REPO / document).read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = SKIP.search(before)
        marker = MARKER.search(before)
        found.append(
            Block(
                document,
                text.count("\n", 0, match.start()) + 1,
                match.group("lang").strip(),
                match.group("body"),
                skip.group("reason") if skip else None,
                (marker.group("kind"), marker.group("what").strip()) if marker else None,
            )
        )
    return found


def commands(body: str) -> list[str]:
    """The block's commands: continuations joined, comments and blank lines dropped."""
    joined = re.sub(r"\\\n\s*", " ", body)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


# -- workspaces: the files each document's commands name ------------------------------------


def _lmms_eval_run(source: str, dest: Path, frames: int, flip_every: int) -> None:
    """A copy of a real lmms-eval log folder recorded at `frames` frames, every `flip_every`-th
    answer changed (so runs at different budgets are not byte-identical)."""
    src = FIXTURES / "lmms-eval" / source
    dest.mkdir(parents=True)
    for path in src.iterdir():
        text = path.read_text(encoding="utf-8")
        if path.name.endswith("_results.json"):
            text = re.sub(r"max_frames_num=\d+", f"max_frames_num={frames}", text)
        elif path.suffix == ".jsonl" and flip_every:
            lines = []
            for n, line in enumerate(text.splitlines()):
                record = json.loads(line)
                if n % flip_every == 0:
                    gold = record["target"]
                    record["filtered_resps"] = [
                        gold if record["filtered_resps"][0][:1] != gold else "A"
                    ]
                lines.append(json.dumps(record))
            text = "\n".join(lines) + "\n"
        (dest / path.name).write_text(text, encoding="utf-8")


def _vlmevalkit_file(path: Path, questions: pd.DataFrame, right_every: int) -> None:
    """A VLMEvalKit Video-MME prediction file (its `Video-MME.tsv` columns plus `prediction`)."""
    rows = []
    for n, q in enumerate(questions.itertuples()):
        wrong = "B" if q.answer != "B" else "C"
        rows.append(
            {
                "index": n,
                "video": q.videoID,
                "video_path": f"./video/{q.videoID}.mp4",
                "duration": q.duration,
                "domain": q.domain,
                "candidates": str(list(q.options)),
                "sub_category": q.sub_category,
                "task_type": q.task_type,
                "question": q.question,
                "answer": q.answer,
                "prediction": f"{q.answer}." if n % right_every else wrong,
            }
        )
    pd.DataFrame(rows).to_excel(path, index=False)


def _long_table(path: Path) -> None:
    """`my_results.csv`: README workflow 2's long format, one model, 12 items on 6 videos."""
    rows = ["model,item_id,video_id,config,order,frames,correct"]
    for i in range(12):
        for order, frames in enumerate((0, 8, 16, 32)):
            label = "text" if frames == 0 else f"{frames}f"
            correct = int((i * 7 + frames // 8 * 3) % 5 < 3)
            rows.append(f"m,q{i},v{i // 2},{label},{order},{frames},{correct}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def _per_item_long(path: Path, wide: Path, benchmark: Path) -> None:
    """`per_item.csv`: the paper's wide labels as a long table with its own column names."""
    answers = pd.read_parquet(benchmark).set_index("question_id")["answer"]
    table = pd.read_csv(wide, dtype=str).melt(
        id_vars="sample_id", var_name="config", value_name="predicted_option"
    )
    table["frame_count"] = [
        0 if c == "textonly" else int(c.split("f_")[0]) for c in table["config"]
    ]
    table["ground_truth_option"] = table["sample_id"].map(answers)
    table.insert(0, "model", "Qwen3-VL-8B")
    table.to_csv(path, index=False)


def _synth(workspace: Path, out: str, n: int) -> Path:
    _run(workspace, f"itemscale synth --out {out} --n {n} --seed 3 --layout focus")
    return workspace / out


def prepare_readme(ws: Path) -> None:
    benchmark = FIXTURES / "benchmarks" / "videomme-test.parquet"
    _lmms_eval_run("videomme-dbfp8", ws / "logs" / "uniform8", 8, 0)
    _lmms_eval_run("videomme-uniform16", ws / "logs" / "uniform16", 16, 0)
    _lmms_eval_run("videomme-uniform16", ws / "logs" / "uniform32", 32, 4)
    _lmms_eval_run("videomme-dbfp8", ws / "logs" / "keyframe", 16, 0)
    questions = pd.read_parquet(benchmark).head(12)
    _vlmevalkit_file(ws / "Qwen2-VL-7B_Video-MME_8frame.xlsx", questions, 2)
    _vlmevalkit_file(ws / "Qwen2-VL-7B_Video-MME_16frame.xlsx", questions, 3)
    _long_table(ws / "my_results.csv")
    shutil.copy(benchmark, ws / "videomme-test.parquet")
    shutil.copy(FIXTURES / "scalegrid" / "Qwen3-VL-8B_V1_short_predictions_wide.csv", ws)
    suite = _synth(ws, "suite", 6)
    shutil.copy(next((suite / "videos").glob("*.mp4")), ws / "video.mp4")
    toml = next(
        b.body for b in blocks("README.md") if b.lang == "toml" and "protocol.toml" in b.body
    )
    (ws / "protocol.toml").write_text(_substitute(toml, PROTOCOL_SUBSTITUTIONS), encoding="utf-8")


def _generation_predictions(path: Path, benchmark: Path) -> None:
    """`mlvu_predictions.csv`: a model's answers to the hand-made MLVU generation file at two
    budgets (the reference's first word at 8 frames, its first six words at 16)."""
    from itemscale.collect.items import load_benchmark

    rows = []
    for item in load_benchmark(benchmark):
        words = item.references[0].split()
        rows.append(("m", item.item_id, "8f", 8, words[0]))
        rows.append(("m", item.item_id, "16f", 16, " ".join(words[:6])))
    columns = ["model", "item_id", "config", "frames", "prediction"]
    pd.DataFrame(rows, columns=columns).to_csv(path, index=False)


def prepare_importers(ws: Path) -> None:
    benchmark = FIXTURES / "benchmarks" / "videomme-test.parquet"
    wide = FIXTURES / "scalegrid" / "Qwen3-VL-8B_V1_short_predictions_wide.csv"
    shutil.copy(benchmark, ws / "videomme-test.parquet")
    for release in (FIXTURES / "scalegrid").glob("*_V1_short_predictions_wide.csv"):
        shutil.copy(release, ws)  # the release's five files, one model each
    # two real runs that both log max_frames_num=16: a uniform run and a frame selector's
    _lmms_eval_run("videomme-uniform16", ws / "logs" / "uniform16", 16, 0)
    _lmms_eval_run("videomme-dbfp8", ws / "logs" / "dbfp8", 16, 0)
    _per_item_long(ws / "per_item.csv", wide, benchmark)
    shutil.copy(SRC / "itemscale" / "data" / "scalegrid" / "V1_short_answer_key.csv", ws)
    generation = REPO / "tests" / "data" / "generation" / "mlvu_generation.json"
    shutil.copy(generation, ws)
    _generation_predictions(ws / "mlvu_predictions.csv", generation)


PREPARE = {"README.md": prepare_readme, "docs/importers.md": prepare_importers}

#: Documents whose `python` blocks are a notebook: run in order, as one session.
PYTHON_SESSIONS = ("docs/python.md", "docs/compare.md")

#: README workflow 3's protocol, as printed, with what this machine lacks replaced (reason: no
#: 7B weights, no Video-MME videos, a CPU; the same backend, grid keys and sampling run).
PROTOCOL_SUBSTITUTIONS = {
    'model = "/models/Qwen2.5-VL-7B-Instruct"': f'model = "{SHIPPED_MODEL}"',
    'kind = "videomme"': 'kind = "synthetic"',
    'path = "videomme-test.parquet"': 'path = "suite"',
    'videos = "/data/videomme/videos"\n': "",
    "frames = [8, 16, 32, 64, 128]": "frames = [2, 4, 8]",
    "max_pixels = [200704]": "max_pixels = [12544]",
}


def _device_substitutions() -> dict[str, str]:
    import torch

    return {} if torch.cuda.is_available() else {"--device cuda": "--device cpu"}


def _substitute(text: str, substitutions: dict[str, str]) -> str:
    for old, new in substitutions.items():
        assert old in text, f"substitution {old!r} no longer matches the document: update it"
        text = text.replace(old, new)
    return text


# -- running --------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.pop("RAY_ADDRESS", None)
    return env


def _run(cwd: Path, script: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, (
        f"in {cwd}:\n{script}\nexit {done.returncode}\n"
        f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}"
    )
    assert "Traceback" not in done.stderr, done.stderr[-4000:]
    return done


@functools.cache
def _script_help(script: str) -> str:
    """A script's (or, `-m MODULE`, a module's) `--help`, run once per test process:
    docs/performance.md names several benchmarks on two or three lines each (each run is a
    fresh interpreter, some importing torch)."""
    return _run(REPO, f"{sys.executable} {script} --help").stdout


def _check_without_running(block: Block) -> None:
    """A skipped block still names real options: `itemscale` lines go through the CLI parser,
    scripts' options must appear in their own `--help`."""
    parser = build_parser()
    lines = [part for c in commands(block.body) for part in c.split(" && ")]
    for command in lines:
        words = shlex.split(command, comments=True)
        while words and "=" in words[0] and not words[0].startswith("-"):
            words = words[1:]  # leading VAR=value
        if re.fullmatch(r"python3(\.\d+)? -m venv \.venv[\w-]*", " ".join(words)):
            continue  # a new virtual environment
        if re.fullmatch(r"\.venv[\w-]*/bin/pip", words[0]):
            assert words[1] == "install", f"{block.document}:{block.line}: {command!r}"
            continue
        if re.fullmatch(r"\.venv[\w-]*/bin/itemscale", words[0]):
            words[0] = "itemscale"  # the same command from another environment
        if words[0] == "itemscale":
            try:
                parser.parse_args(words[1:])
            except SystemExit as exc:  # argparse's way of refusing (or of printing --help)
                if exc.code != 0:
                    raise AssertionError(f"{block.document}:{block.line}: {command!r}") from exc
        elif words[0].endswith("python"):
            if words[1] == "-m":  # a recipe, run from the checkout's root
                target, script = REPO.joinpath(*words[2].split(".")), f"-m {words[2]}"
            else:
                target, script = REPO / words[1], shlex.quote(str(REPO / words[1]))
            assert target.exists(), f"{block.document}:{block.line}: no {target}"
            help_text = _script_help(script)
            for word in words[2:]:
                if word.startswith("--"):
                    assert word in help_text, f"{block.document}:{block.line}: {word} not in help"
        else:
            raise AssertionError(f"{block.document}:{block.line}: cannot check {command!r}")


def _runnable(block: Block) -> str:
    lines = [
        line
        for line in block.body.splitlines()
        if not re.match(r"\s*make test\b", line)  # this test is what `make test` runs
    ]
    return "\n".join(lines)


def test_every_fence_says_what_it_holds() -> None:
    """`bash` blocks are run below; synopses and printed output are fenced as `text` (or the
    file format they show), so no command block escapes this test by being untagged."""
    untagged = [f"{b.document}:{b.line}" for d in DOCUMENTS for b in blocks(d) if not b.lang]
    assert not untagged, f"fences without a language: {untagged}"
    # an indented (unfenced) code block would escape the test the same way
    command = re.compile(r"^(?:    |\t)(?:\$ )?(?:itemscale|\.venv/bin/\S+|python\S*|make) ")
    indented = []
    for document in DOCUMENTS:
        text = FENCE.sub("", (REPO / document).read_text(encoding="utf-8"))
        indented += [
            f"{document}: {line.strip()}" for line in text.splitlines() if command.match(line)
        ]
    assert not indented, "commands in indented blocks (fence them):\n" + "\n".join(indented)


@pytest.mark.parametrize(
    "document",
    [d for d in DOCUMENTS if d in PYTHON_SESSIONS or any(b.lang == "bash" for b in blocks(d))],
)
def test_document_commands_run_as_written(document: str, tmp_path: Path) -> None:
    prepare = PREPARE.get(document)
    if prepare is not None:
        shared()  # its workspace is built from the shared fixtures: a skip (or CI's failure)
    ws = tmp_path / "ws"
    ws.mkdir()
    if prepare is not None:
        prepare(ws)
    ran = 0
    printed: list[tuple[Block, str]] = []
    for block in blocks(document):
        if block.lang != "bash":
            continue
        if block.skip_reason is not None:
            _check_without_running(block)
            continue
        script = _runnable(block)
        # `.venv/bin/itemscale` is the project's own environment: the one running this test
        script = re.sub(r"(?<![\w/.])\.venv/bin/", f"{BIN}/", script)
        if "--device cuda" in script:
            script = _substitute(script, _device_substitutions())
        # `make demo` runs the repository's Makefile, writing into this workspace; beside the
        # suite's other worker (`pytest -n 2`) on one thread, as two on two busy cores are slower
        threads = " DEMO_THREADS=1" if os.environ.get("PYTEST_XDIST_WORKER") else ""
        script = re.sub(
            r"^make demo\b",
            f"make -C {shlex.quote(str(REPO))} demo DEMO_OUT={ws}/runs/demo{threads}",
            script,
            flags=re.M,
        )
        if script.strip():
            # `make demo` takes ~3 min alone, several times that on 2 cores other suites share
            done = _run(ws, script, timeout=1800)
            printed.append((block, done.stdout.replace(f"{ws}/", "")))
            ran += 1
    if document in PYTHON_SESSIONS:
        cells = [b.body for b in blocks(document) if b.lang == "python" and not b.skip_reason]
        assert cells, f"{document}: no python blocks to run"
        (ws / "notebook.py").write_text("\n".join(cells), encoding="utf-8")
        _run(ws, f"MPLBACKEND=Agg {shlex.quote(sys.executable)} notebook.py", timeout=1800)
        ran += 1
    assert ran or all(b.skip_reason for b in blocks(document) if b.lang == "bash")
    EXPECTED_FILES.get(document, lambda _ws: None)(ws)
    _check_excerpts(document, printed)


def excerpt_lines_missing(excerpt: str, printed: str) -> list[str]:
    """The lines of `excerpt` not found in `printed`, in order: each line must be a line of the
    output after the previous one's (lines may be left out between them; a line `...` says so),
    `...` inside a line stands for any text (a timing, a path, a long list cut short)."""
    lines = [line.rstrip() for line in printed.splitlines()]
    at, missing = 0, []
    for wanted in excerpt.splitlines():
        if not wanted.strip() or wanted.strip() == "...":
            continue
        pattern = re.compile(
            ".*?".join(re.escape(part) for part in wanted.rstrip().split("...")) + r"\Z"
        )
        found = next((n for n in range(at, len(lines)) if pattern.match(lines[n])), None)
        if found is None:
            missing.append(wanted)
        else:
            at = found + 1
    return missing


def _check_excerpts(document: str, printed: list[tuple[Block, str]]) -> None:
    """Each `text` block marked "output of: COMMAND" is, line by line and in order, what the
    bash block running COMMAND printed on this run."""
    problems = []
    for block in blocks(document):
        if block.lang != "text" or block.marker is None or block.marker[0] != "output of":
            continue
        command = block.marker[1]
        outputs = [out for ran, out in printed if command in ran.body]
        assert outputs, f"{document}:{block.line}: no bash block that ran {command!r}"
        missing = excerpt_lines_missing(block.body, "\n".join(outputs))
        if missing:
            problems.append(
                f"{document}:{block.line}: {len(missing)} line(s) not printed by {command!r}, "
                f"first: {missing[0]!r}\n--- what it printed:\n" + "\n".join(outputs)
            )
    assert not problems, "\n".join(problems)


def test_console_excerpts_say_where_they_come_from() -> None:
    """In the README, docs/compare.md and docs/anchors.md every `text` block says what it is:
    the output of a command the document runs (then checked against what it printed, above),
    an excerpt of a named benchmark, test or check with its command, or no output at all; an
    "output of" names a command of a bash block the docs test runs."""
    unmarked, dangling = [], []
    for document in EXCERPT_DOCUMENTS:
        run = [b for b in blocks(document) if b.lang == "bash" and b.skip_reason is None]
        for block in blocks(document):
            if block.lang != "text":
                continue
            if block.marker is None:
                unmarked.append(f"{document}:{block.line}")
            elif block.marker[0] == "output of" and not any(block.marker[1] in b.body for b in run):
                dangling.append(f"{document}:{block.line}: {block.marker[1]!r}")
            elif block.marker[0] == "excerpt of":
                assert re.search(r"itemscale |benchmarks/|tests/|make ", block.marker[1]), (
                    f"{document}:{block.line}: an excerpt names the command that printed it"
                )
    assert not unmarked, "text blocks that do not say what they are: " + ", ".join(unmarked)
    assert not dangling, "output of a command no bash block runs: " + ", ".join(dangling)


def test_excerpts_are_matched_line_by_line_in_order() -> None:
    printed = "a: 1\nb: 2 (0.7 s)\nc: 3\n  d: 4\n"
    assert excerpt_lines_missing("a: 1\n...\nc: 3", printed) == []
    assert excerpt_lines_missing("b: 2 (... s)\n  d: 4", printed) == []
    assert excerpt_lines_missing("c: 3\na: 1", printed) == ["a: 1"]  # out of order
    assert excerpt_lines_missing("b: 2", printed) == ["b: 2"]  # a whole line, not a prefix
    assert excerpt_lines_missing("a: 9", printed) == ["a: 9"]


def _readme_outputs(ws: Path) -> None:
    for path in (
        "runs/demo/artifact/report.html",
        "runs/demo/paper/comparison.json",
        "runs/llava/measures.json",
        "runs/llava/artifact/report.html",
        "runs/selectors/responses.parquet",
        "runs/qwen/responses.parquet",
        "runs/mine/responses.parquet",
        "runs/paper/responses.parquet",
        "runs/qwen25vl/responses.parquet",
        "runs/qwen25vl/cascade.json",
        "runs/qwen25vl/artifact/report.html",
        "annotations.csv",
    ):
        assert (ws / path).is_file(), path
    assert list((ws / "sheets").glob("*.png")), "itemscale frames wrote no sheet"
    llava = json.loads((ws / "runs/llava/measures.json").read_text())["models"]
    (block,) = llava.values()
    assert len(block["axis"]) == 3 and "duration" in block["by"]
    run = json.loads((ws / "runs/qwen25vl/run.json").read_text())
    assert run["sweep"]["executor"] == "ray" and run["sweep"]["ran_cells"] == 0


def _importers_outputs(ws: Path) -> None:
    from itemscale.core.responses import read_run

    wide, _ = read_run(ws / "runs/paper")
    long, _ = read_run(ws / "runs/paper-long")
    assert len(wide) == len(long) == 786 * 6
    key = ["item_id", "frames"]
    merged = wide.merge(long, on=key, suffixes=("_wide", "_long"))
    assert len(merged) == len(wide)
    assert (merged["correct_wide"] == merged["correct_long"]).all()
    items = pd.read_csv(ws / "runs/split/items.csv")
    assert len(items) == 786 and set(items["in_matched_grid"]) == {1}
    generation, _ = read_run(ws / "runs/mlvu-gen")
    assert set(generation["task_kind"]) == {"summary"} and generation["token_f1"].notna().all()
    release, _ = read_run(ws / "runs/release")
    assert (
        release["model"].nunique() == 5
        and release.groupby("model")["item_id"].nunique().eq(786).all()
    )
    by_series, _ = read_run(ws / "runs/by-series")
    assert set(by_series["series"]) == {"control", "selection:dbfp8"}


def _python_outputs(ws: Path) -> None:
    assert (ws / "curve.png").stat().st_size > 1000
    items = pd.read_csv(ws / "items.csv")
    assert len(items) == 786
    assert set(items["matched_grid_trajectory_class"]) <= {
        "always_correct",
        "always_wrong",
        "monotonic_increasing",
        "monotonic_decreasing",
        "oscillating",
    }


EXPECTED_FILES = {
    "README.md": _readme_outputs,
    "docs/importers.md": _importers_outputs,
    "docs/python.md": _python_outputs,
}


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options_of(words: list[str]) -> tuple[str, set[str]]:
    """The (sub)command a synopsis line names, and every option string its parser accepts."""
    parser = build_parser()
    named = ["itemscale"]
    for word in words[1:]:
        choices = _subcommands(parser)
        if word not in choices:
            break
        parser = choices[word]
        named.append(word)
    options = {s for action in parser._actions for s in action.option_strings}
    return " ".join(named), options


def test_synopses_name_real_options() -> None:
    """The `text` blocks that print a command's synopsis (`itemscale cascade runs/x [--json ...]`)
    are not run, so each option they show is checked against the real parser instead."""
    stale = []
    for document in DOCUMENTS:
        for block in blocks(document):
            if block.lang == "bash":
                continue
            command: list[str] = []
            for line in block.body.splitlines():
                line = line.strip().removeprefix("$ ")
                if line.startswith("itemscale "):
                    command = line.split()
                elif not (command and line.startswith(("[", "-", "("))):
                    command = []
                    continue
                name, options = _options_of(command)
                assert name != "itemscale", f"{document}:{block.line}: no such command {line!r}"
                for option in re.findall(r"(?<![\w-])--?[a-zA-Z][\w-]*", line):
                    if option not in options:
                        stale.append(f"{document}:{block.line}: {name} has no {option}")
    assert not stale, "\n".join(stale)


def test_synopses_list_every_option() -> None:
    """A command's synopsis (a `text` block line `itemscale CMD ...` with its `[--option]`
    continuation lines) names every option the command takes, so a new flag cannot be left out
    of the documentation (`report --force`, `intervene --no-progress`)."""
    missing = []
    for document in DOCUMENTS:
        for block in blocks(document):
            if block.lang != "text":
                continue
            synopses: dict[str, tuple[set[str], set[str]]] = {}
            name = ""
            for line in block.body.splitlines():
                line = line.strip().removeprefix("$ ")
                if line.startswith("itemscale ") and "[" in line:
                    name, options = _options_of(line.split())
                    synopses.setdefault(name, (options, set()))
                elif not (name and line.startswith(("[", "-"))):
                    name = ""
                    continue
                shown = set(re.findall(r"(?<![\w-])--?[a-zA-Z][\w-]*", line))
                synopses[name][1].update(shown)
            for name, (options, shown) in synopses.items():
                # a retired spelling kept hidden from --help (`intervene --policy`) is not shown
                wanted = {
                    o
                    for o in options
                    if o.startswith("--") and o != "--help" and o not in _hidden_options(name)
                }
                # an option shown by its other spelling counts (`-o` for `--out`)
                lacking = sorted(o for o in wanted - shown if not _other_spelling(name, o, shown))
                if lacking:
                    missing.append(f"{document}:{block.line}: {name} lacks {', '.join(lacking)}")
    assert not missing, "\n".join(missing)


def _hidden_options(name: str) -> set[str]:
    """The options of a command that `--help` does not list (`help=argparse.SUPPRESS`)."""
    parser = build_parser()
    for word in name.split()[1:]:
        parser = _subcommands(parser)[word]
    return {
        s
        for action in parser._actions
        if action.help == argparse.SUPPRESS
        for s in action.option_strings
    }


def _other_spelling(name: str, option: str, shown: set[str]) -> bool:
    parser = build_parser()
    for word in name.split()[1:]:
        parser = _subcommands(parser)[word]
    for action in parser._actions:
        if option in action.option_strings:
            return bool(set(action.option_strings) & shown)
    return False

"""Every file a command reads is read by one rule (`itemscale.core.files.read_input_bytes` and
`open_input`, the rule selection files followed first): regular files only, bounded, opened
without blocking. A FIFO (which would block the command forever) and `/dev/zero` (read until
memory runs out) given to each flag that names a file to read stop the command with exit 2
within 5 s.

The commands run in one child interpreter (a hang must fail the test, not block it): each case
under its own 5 s alarm, the child under a 3 GiB address-space limit (an unbounded read fails
there rather than on the machine) and a wall-clock timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _support.runs import make_irt_run
from _support.sweep import write_benchmark, write_protocol
from itemscale.cli import INPUT_ARGUMENTS, main

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")

#: Each flag that names a file to read, `{F}` the hostile path (`{R}` a run, `{W}` a folder
#: holding a fit, an anchor file, a table and a protocol).
CASES: dict[str, list[str]] = {
    "analyze --anchors": ["analyze", "{R}", "--anchors", "{F}", "--irt", "{W}/fit.json"],
    "analyze --irt": ["analyze", "{R}", "--anchors", "{W}/a.txt", "--irt", "{F}"],
    "anchors --irt": ["anchors", "{R}", "--k", "10", "--irt", "{F}", "--out", "{W}/o.txt"],
    "audit --import": ["audit", "{R}", "--import", "{F}"],
    "audit --items": ["audit", "{R}", "--items", "{F}"],
    "frames video": ["frames", "{F}", "--frames", "2", "--out", "{W}/sheets"],
    "frames --protocol": ["frames", "{W}/v.mp4", "--protocol", "{F}", "--out", "{W}/sheets"],
    "import files (table)": ["import", "table", "{F}", "-o", "{W}/new"],
    "import files (lmms-eval)": ["import", "lmms-eval", "{F}", "-o", "{W}/new"],
    "import files (vlmevalkit)": ["import", "vlmevalkit", "{F}", "-o", "{W}/new"],
    "import --benchmark": ["import", "table", "{W}/t.csv", "--benchmark", "{F}", "-o", "{W}/new"],
    "import --answer-key": ["import", "table", "{W}/t.csv", "--answer-key", "{F}", "-o", "{W}/new"],
    "report --items": ["report", "{R}", "--items", "{F}", "--out", "{W}/art"],
    "select protocol": ["select", "{F}", "--frames", "2", "--out", "{W}/sel"],
    "sweep protocol": ["sweep", "{F}", "--dry-run"],
    "protocol [selections] path": ["sweep", "{W}/sel.toml", "--dry-run"],
    "protocol [benchmark] items": ["sweep", "{W}/items.toml", "--dry-run"],
}  # fmt: skip

#: The child: runs each (case, argv) it is given under a 5 s alarm that raises a BaseException
#: (so no `except OSError` in the command can turn a hang into an exit status), and prints one
#: JSON line per case.
CHILD = r"""
import contextlib, io, json, resource, signal, sys, time
resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
from itemscale.cli import build_parser, main

class Hung(BaseException):
    pass

def on_alarm(signum, frame):
    raise Hung()

signal.signal(signal.SIGALRM, on_alarm)
cases = json.loads(sys.stdin.read())
for name, argv in cases:
    build_parser(argv[0])  # the command's imports, outside the timing
for name, argv in cases:
    err = io.StringIO()
    start = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, 5.0)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(argv)
    except Hung:
        code = "hung"
    except BaseException as exc:
        code = type(exc).__name__
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    seconds = time.monotonic() - start
    print(json.dumps([name, code, seconds, err.getvalue()[-400:]]), flush=True)
"""


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a run, a folder with its fit, anchors, a table, a suite and the protocols naming the
    hostile file `hostile` beside them)."""
    root = tmp_path_factory.mktemp("inputs")
    run, work = root / "R", root / "work"
    make_irt_run(run)
    work.mkdir()
    assert main(["irt", str(run), "--json", str(work / "fit.json")]) == 0
    fit = ["--irt", str(work / "fit.json")]
    assert main(["anchors", str(run), "--k", "10", *fit, "--out", str(work / "a.txt")]) == 0
    (work / "t.csv").write_text("model,item_id,config,frames,correct\nm,q1,8f,8,1\n")
    suite = write_benchmark(work / "suite", 1)
    write_protocol(
        work / "sel.toml",
        suite,
        frames=(2,),
        extra='[selections.s]\npath = "hostile"',
    )
    text = (work / "sel.toml").read_text()
    text = text.replace("frames = [2]", 'frames = [2]\nsampling = [{ name = "selection", '
                        'selection = "s" }]')  # fmt: skip
    (work / "sel.toml").write_text(text)
    write_protocol(work / "items.toml", suite, frames=(2,))
    items = (
        (work / "items.toml")
        .read_text()
        .replace('kind = "synthetic"', 'kind = "synthetic"\nitems = "hostile"')
    )
    (work / "items.toml").write_text(items)
    return run, work


def _run_cases(run: Path, work: Path, hostile: Path) -> dict[str, tuple[object, float, str]]:
    link = work / "hostile"
    link.unlink(missing_ok=True)
    link.symlink_to(hostile)  # the protocols name `hostile` beside them
    cases = [
        (name, [a.format(R=run, W=work, F=hostile) for a in argv]) for name, argv in CASES.items()
    ]
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=work,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    out: dict[str, tuple[object, float, str]] = {}
    for line in done.stdout.splitlines():
        if line.startswith("["):
            name, code, seconds, err = json.loads(line)
            out[name] = (code, seconds, err)
    assert set(out) == set(CASES), f"the child stopped early: {done.stderr[-2000:]}"
    return out


def test_the_cases_cover_every_input_argument_of_the_table() -> None:
    covered = {(argv[0], a) for argv in CASES.values() for a in argv if a.startswith("--")}
    covered |= {(name.split()[0], name.split()[1]) for name in CASES}
    listed = {(command, arg) for command, args in INPUT_ARGUMENTS.items() for arg in args}
    assert listed <= covered, f"input arguments without a case: {sorted(listed - covered)}"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_fifo_or_a_device_given_to_any_input_stops_the_command_within_5_s(
    workspace: tuple[Path, Path], tmp_path: Path, kind: str
) -> None:
    run, work = workspace
    if kind == "fifo":
        hostile = tmp_path / "pipe"
        os.mkfifo(hostile)
    else:
        hostile = Path("/dev/zero")
        if not hostile.exists():
            pytest.skip("no /dev/zero")
    results = _run_cases(run, work, hostile)
    wrong = {
        name: (code, round(seconds, 2), err)
        for name, (code, seconds, err) in results.items()
        if code != 2 or seconds >= 5.0 or "not a regular file" not in err
    }
    assert not wrong, json.dumps(wrong, indent=1)

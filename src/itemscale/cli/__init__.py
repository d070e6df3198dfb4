"""The `itemscale` command line: flags in, a workflow or library call, printing out.

Stages are wired together by `itemscale.workflows` (a command minus its flags and printing), so
a script gets what a command computes; the CLI parses, calls and prints. Each subcommand lives
in its own module `cmd_<name>.py` exposing `register(subparsers)`; the module imports its heavy
dependencies (torch, PyAV, Ray) inside the command function, so `itemscale analyze` starts
without them.

Exit status: 0 done; 2 for input the user can fix (every `itemscale.core.errors.ItemscaleError`,
printed as one `itemscale COMMAND: error: ...` line; argparse's usage errors too); 1 for a failure
of the run itself (`verify` found a problem; a full disk, `DiskFullError`, printed the same way;
an unexpected error, with its traceback); 130 interrupted (Ctrl-C); 141 when the reader of stdout
went away.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Final, NoReturn

from ..core.errors import ItemscaleError
from ..core.version import __version__

#: The packages of each pyproject extra: a command that needs one of them, in an install
#: without it, says which extra to add instead of a traceback.
EXTRAS = {
    **dict.fromkeys(("torch", "torchvision", "transformers", "tokenizers", "httpx"), "models"),
    **dict.fromkeys(("av", "PIL"), "video"),
    "ray": "ray",
}


class CommandError(ItemscaleError):
    """What a command itself finds wrong with its arguments (a bad flag value, a run without
    the data the command needs); the library's own errors reach `main` as they are."""


#: Every command's one-line help, for `itemscale --help` without importing the command's module
#: (a test checks each module registers the same line; a command missing here is imported).
COMMAND_HELP: dict[str, str] = {
    "anchors": "pick K anchor items from a run's 2PL fit: a sweep of only those predicts the "
    "full set",
    "analyze": "measure what the accuracy curve hides (item-level flips, oracle, text overwrite)",
    "audit": "frame audit of harmful transitions: frames kept/dropped/added, evidence, pathway",
    "cascade": "how much compute a stopping policy saves at the terminal budget's accuracy",
    "compare": "why doesn't my number match? two runs side by side, item by item",
    "demo": "run the whole audit offline: the seed paper's released labels, then the synthetic "
    "suite with the built-in model",
    "frames": "show the frames each configuration sees (contact sheets, indices, timestamps)",
    "import": "import results of lmms-eval, VLMEvalKit or any table into a run directory",
    "irt": "fit a 2PL item response model: an ability per (model, configuration), items' "
    "difficulty",
    "intervene": "re-run terminal regressions with a controlled change of sampling",
    "select": "write selection files with the built-in content-aware frame selector",
    "report": "write the audit artifact (responses, trajectories, measures, provenance, "
    "report.html, MANIFEST.json)",
    "sweep": "run a protocol's budget grid against its models (resumable)",
    "synth": "generate the synthetic video suite (H.264 videos, items.jsonl, suite.json)",
    "train-builtin": "where training the built-in model went (a recipe run from a checkout)",
    "verify": "check an audit artifact: every file's sha256, and every measure recomputed",
}

_CHOICE = re.compile(r"invalid choice: '(?P<bad>[^']*)' \(choose from (?P<choices>.*)\)")


def suggestion(word: str, candidates: Sequence[str]) -> str | None:
    """The closest of `candidates` to a mistyped `word` (difflib's ratio >= 0.6), or None."""
    import difflib

    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return close[0] if close else None


class Parser(argparse.ArgumentParser):
    """argparse with "did you mean" (Python 3.11's has no `suggest_on_error`), and a mistyped
    flag reported with the usage of the command it was given to."""

    def error(self, message: str) -> NoReturn:
        found = _CHOICE.search(message)
        if found:
            choices = re.findall(r"'([^']*)'", found.group("choices"))
            near = suggestion(found.group("bad"), choices)
            if near:
                message += f"; did you mean '{near}'?"
        super().error(message)

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            owner = _command_parser(self, parsed)
            hints = []
            for extra in extras:
                flag = extra.split("=", 1)[0]
                if flag.startswith("--"):
                    flags = [o for a in owner._actions for o in a.option_strings]
                    near = suggestion(flag, [o for o in flags if o.startswith("--")])
                    if near:
                        hints.append(f"{flag}: did you mean {near}?")
            owner.error(
                f"unrecognized arguments: {' '.join(extras)}"
                + (f" ({'; '.join(hints)})" if hints else "")
            )
        return parsed


def _command_parser(top: argparse.ArgumentParser, parsed: argparse.Namespace) -> Parser:
    """The (sub)parser the command line ended in: `import table`'s for `import table ...`."""
    parser: argparse.ArgumentParser = top
    for dest in ("command", "import_kind"):
        name = getattr(parsed, dest, None)
        action = next(
            (a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None
        )
        if name is None or action is None or name not in action.choices:
            break
        parser = action.choices[name]
    return parser if isinstance(parser, Parser) else Parser()


def _command_modules() -> dict[str, str]:
    """Command name -> module name (`cmd_train_builtin` is `train-builtin`)."""
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("cmd_"))
    return {n.removeprefix("cmd_").replace("_", "-"): n for n in names}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with `command`, that command's module alone is imported and the
    others are listed by name and help line (what `--help`, `--version` and one command need,
    so they start without scipy or pandas)."""
    parser = Parser(
        prog="itemscale",
        description="Item-level audits of Video LLMs across visual budgets. Documentation: "
        "README.md and docs/ (docs/python.md for the Python API).",
    )
    parser.add_argument("--version", action="version", version=f"itemscale {__version__}")
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=Parser
    )
    for name, module_name in _command_modules().items():
        if command is not None and name != command and name in COMMAND_HELP:
            sub.add_parser(name, help=COMMAND_HELP[name])
            continue
        module = importlib.import_module(f"{__name__}.{module_name}")
        module.register(sub)
    return parser


#: Commands whose peak is whole response tables built and dropped (`_malloc`); a model's
#: tensors are not (a sweep under the fixed threshold maps and unmaps every tensor from 1 MB
#: up: 25% slower on the demo's sweep).
TABLE_COMMANDS: Final[frozenset[str]] = frozenset({"analyze", "report", "verify", "compare"})


#: Every flag whose value is a path a command writes (a file, or a folder it writes into), checked
#: by `check_output_path` before the command runs: no output replaces a run's data or records
#: (docs/run-folders.md). `import -o`, `sweep --output`, `demo --out` may be runs, never a run's
#: file; `report --out` keeps its own stricter rule too, and `compare` applies it in its own.
OUTPUT_FLAGS: Final[Mapping[str, tuple[str, ...]]] = {
    "analyze": ("--json", "--per-item"),
    "anchors": ("--out",),
    "audit": ("--export",),
    "cascade": ("--json",),
    "demo": ("--out",),
    "frames": ("--json", "--out"),
    "import": ("--summary-json", "--out"),
    "intervene": ("--json",),
    "irt": ("--json",),
    "report": ("--out",),
    "select": ("--out",),
    "sweep": ("--output",),
    "synth": ("--out",),
}


#: Every argument whose value names a file a command reads (a flag, or a positional by its
#: name), checked by `checked_input` before the command runs: a FIFO or a device (`/dev/zero`) is
#: refused at once, not after minutes of computing (the readers check again, for a file swapped
#: in meanwhile). A missing file, or a folder, is left to the command to name.
INPUT_ARGUMENTS: Final[Mapping[str, tuple[str, ...]]] = {
    "analyze": ("--anchors", "--irt"),
    "anchors": ("--irt",),
    "audit": ("--items", "--import"),
    "frames": ("video", "--protocol"),
    "import": ("files", "--benchmark", "--answer-key"),
    "report": ("--items",),
    "select": ("protocol",),
    "sweep": ("protocol",),
}


def _values(value: object) -> list[str]:
    if isinstance(value, str | os.PathLike):
        return [os.fspath(value)]
    if isinstance(value, list | tuple):
        return [os.fspath(v) for v in value if isinstance(v, str | os.PathLike)]
    return []


def check_paths(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse (exit 2) an output of `OUTPUT_FLAGS` whose path resolves to a run's data or
    records (`OutputPathError`), and an input of `INPUT_ARGUMENTS` that is a FIFO, a device or
    a socket (`InputFileError`), before the command reads or computes anything."""
    from ..core.files import InputFileError, MissingInputError, check_output_path, checked_input

    command = getattr(args, "command", "")
    outputs, inputs = OUTPUT_FLAGS.get(command, ()), INPUT_ARGUMENTS.get(command, ())
    for action in _command_parser(parser, args)._actions:
        value = getattr(args, action.dest, None)
        for name in action.option_strings or [action.dest]:
            for path in _values(value) if name in outputs or name in inputs else []:
                if name in outputs:
                    check_output_path(path, flag=name)
                    continue
                try:
                    checked_input(path, folder=True)
                except MissingInputError:
                    pass
                except InputFileError as exc:
                    if not name.startswith("-"):
                        raise
                    raise InputFileError(f"{name} {exc.path}", exc.reason) from None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    wanted = next((a for a in argv if not a.startswith("-")), "")  # '' for --help, --version
    try:
        parser = build_parser(wanted)
    except ItemscaleError as exc:  # a command built from a registry (import KIND) met a plugin
        where = f"itemscale {wanted}" if wanted else "itemscale"
        print(f"{where}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    args = parser.parse_args(argv)
    if wanted in TABLE_COMMANDS:
        from ._malloc import unmap_large_blocks

        unmap_large_blocks()  # a freed column goes back to the system (`_malloc`)
    try:
        check_paths(parser, args)
        result = args.func(args)
    except ItemscaleError as exc:
        # every typed error names its file, key or flag: one line, no traceback
        print(f"itemscale {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except ModuleNotFoundError as exc:
        extra = EXTRAS.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        # the light install (`pip install -e .`) leaves the heavy packages out on purpose
        print(
            f"itemscale {args.command}: error: needs {exc.name} (the '{extra}' extra), which "
            f"the light install leaves out: pip install -e '.[{extra}]', or '.[all]' (what "
            "`make` installs) for every extra",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        print(f"itemscale {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`itemscale analyze RUN | head`): no traceback; stdout goes to
        # devnull so the interpreter's final flush does not raise again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    return int(result or 0)

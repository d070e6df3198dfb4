"""The `itemscale` command line: the only place that wires pipeline stages together.

Each subcommand lives in its own module `cmd_<name>.py` exposing `register(subparsers)`; the
module imports its heavy dependencies (torch, PyAV, Ray) inside the command function, so
`itemscale analyze` starts without them.

Exit status: 0 done; 2 for input the user can fix (every `itemscale.errors.ItemscaleError`,
printed as one `itemscale COMMAND: error: ...` line; argparse's usage errors too); 1 for a failure
of the run itself (`verify` found a problem; a full disk, `DiskFullError`, printed the same way;
an unexpected error, with its traceback); 130 interrupted (Ctrl-C); 141 when the reader of stdout
went away.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from .. import __version__
from ..errors import ItemscaleError

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="itemscale",
        description="Item-level audits of Video LLMs across visual budgets.",
    )
    parser.add_argument("--version", action="version", version=f"itemscale {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("cmd_"))
    for name in names:
        module = importlib.import_module(f"{__name__}.{name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
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
        # the reader went away (`itemscale analyze RUN | head`): what was written is the
        # output asked for, so no traceback; stdout is pointed at devnull so the interpreter's
        # final flush does not raise again
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    return int(result or 0)

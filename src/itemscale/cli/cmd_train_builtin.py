"""`itemscale train-builtin`: where training the built-in model went (recipes/builtin_model/ of
a checkout); the command stays so that an old command line says where to go, not "invalid
choice"."""

from __future__ import annotations

import argparse
import shlex

from . import CommandError

RECIPE = "python -m recipes.builtin_model"

MOVED = (
    "training the built-in model is not part of the installed package: it is the recipe "
    "recipes/builtin_model/ of an itemscale checkout, with the same flags "
    '(docs/builtin-model.md, "How it was trained"); from the checkout\'s root run: {command}'
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    # "+" prefixes: an old command line's arguments (--suite, ...) kept to be printed back
    parser = subparsers.add_parser(
        "train-builtin",
        help="where training the built-in model went (a recipe run from a checkout)",
        prefix_chars="+",
        add_help=False,
    )
    parser.add_argument(
        "arguments",
        nargs="*",
        help="the old command line's arguments, printed back in the recipe's",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """`--help` (or `-h`): the pointer on stdout, exit 0; any other command line: the pointer
    as an error (exit 2), since nothing was trained."""
    arguments: list[str] = args.arguments
    if arguments in (["--help"], ["-h"]):
        print(MOVED.format(command=f"{RECIPE} --help"))
        return 0
    raise CommandError(MOVED.format(command=shlex.join([*RECIPE.split(), *arguments])))

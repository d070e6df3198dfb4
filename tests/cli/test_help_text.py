"""Every `--help` wraps between words, never inside one (`...,status,s` / `eries,...`)."""

from __future__ import annotations

import argparse
import os

import pytest

from itemscale.cli import build_parser


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _parsers(sub)
    return found


def _at_a_hyphen(word: str, rendered: set[str]) -> bool:
    """`split-sized` printed as `split-` / `sized`: a break at a hyphen is a fair one."""
    return any(
        f"{word[: i + 1]}" in rendered and word[i + 1 :] in rendered
        for i, ch in enumerate(word)
        if ch == "-"
    )


def test_help_never_breaks_a_word(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    broken = []
    for parser in _parsers(build_parser()):
        rendered = set(parser.format_help().split())
        texts = [parser.description or ""] + [
            a.help for a in parser._actions if a.help and a.help != argparse.SUPPRESS
        ]
        for text in texts:
            if "%(" in text:
                continue  # argparse fills these in; their words are its own
            broken += [
                f"{parser.prog}: {word!r}"
                for word in text.split()
                if word not in rendered and not _at_a_hyphen(word, rendered)
            ]
    assert not broken, "words split across lines:\n" + "\n".join(broken)
    assert os.environ["COLUMNS"] == "80"


def test_every_option_and_argument_has_help() -> None:
    missing = [
        f"{parser.prog}: {'/'.join(action.option_strings) or action.dest}"
        for parser in _parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction)
        and not (action.help and action.help.strip())
    ]
    assert not missing, missing


def test_help_names_only_options_the_command_has() -> None:
    """A help text that names `--flag` names one of the same command's flags (or a command
    that has it, e.g. `itemscale cascade ... --sharing`)."""
    import re

    every = {o for p in _parsers(build_parser()) for a in p._actions for o in a.option_strings}
    wrong = []
    for parser in _parsers(build_parser()):
        own = {o for a in parser._actions for o in a.option_strings}
        for action in parser._actions:
            for flag in re.findall(r"(?<![\w`])--[a-z][a-z-]*", action.help or ""):
                if flag not in own and flag in every and "itemscale" not in (action.help or ""):
                    wrong.append(f"{parser.prog}: {flag} in the help of {action.dest}")
    assert not wrong, wrong


def test_the_command_table_matches_each_command() -> None:
    """`itemscale --help` lists each command from COMMAND_HELP without importing it: the line
    must be the one the command registers."""
    from itemscale.cli import COMMAND_HELP

    full = build_parser()
    action = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    registered = {c.dest: c.help for c in action._choices_actions}
    assert registered == COMMAND_HELP


def test_a_mistyped_command_or_flag_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    from itemscale.cli import main

    for argv, hint in (
        (["analyse", "run"], "did you mean 'analyze'?"),
        (["analyze", "run", "--boostrap", "5"], "--boostrap: did you mean --bootstrap?"),
        (["import", "tabel", "x"], "did you mean 'table'?"),
        (["report", "run", "--ci", "bcx"], "did you mean 'bca'?"),
    ):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert hint in err, err
    # the error comes with the command's own usage, not the top level's
    with pytest.raises(SystemExit):
        main(["analyze", "run", "--boostrap", "5"])
    assert capsys.readouterr().err.startswith("usage: itemscale analyze")

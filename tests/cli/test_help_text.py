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

"""Booleans in a protocol are TOML booleans, never coerced from "no", 0 or "false"; an integer
past Python's digit limit is named in plain words (docs/protocol.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from itemscale.collect.protocol import ProtocolError, load_protocol

BASE = """output = "run"
{top}
[[models]]
name = "m"
backend = "openai"
model = "x"
[models.options]
{option}
[benchmark]
kind = "jsonl"
path = "items.jsonl"
[grid]
frames = [2]
{grid}
[decoding]
{decoding}
"""


def _write(tmp_path: Path, **parts: str) -> Path:
    fields = {"top": "", "option": "", "grid": "", "decoding": "", **parts}
    path = tmp_path / "p.toml"
    path.write_text(BASE.format(**fields), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("parts", "key"),
    [
        ({"top": 'text_only = "no"'}, "text_only"),
        ({"top": "text_only = 0"}, "text_only"),
        ({"top": 'text_only = "false"'}, "text_only"),
        ({"decoding": "score_options = 1"}, "decoding.score_options"),
        ({"grid": 'native = "yes"'}, "grid.native"),
    ],
)
def test_a_boolean_written_as_text_or_a_number_is_refused(
    tmp_path: Path, parts: dict[str, str], key: str
) -> None:
    with pytest.raises(ProtocolError) as caught:
        load_protocol(_write(tmp_path, **parts))
    assert f"{key}: must be true or false (a TOML boolean, unquoted)" in str(caught.value)


def test_a_backend_boolean_option_is_strict_too(tmp_path: Path) -> None:
    from itemscale.collect.models import BackendError, check_backend_options

    protocol = load_protocol(_write(tmp_path, option='video_input = "no"'))
    with pytest.raises(BackendError, match="option 'video_input': must be true or false"):
        check_backend_options(protocol.models[0])


def test_real_booleans_still_load(tmp_path: Path) -> None:
    protocol = load_protocol(_write(tmp_path, top="text_only = false"))
    assert protocol.text_only is False


def test_an_integer_past_the_digit_limit_is_named_in_plain_words(tmp_path: Path) -> None:
    with pytest.raises(ProtocolError) as caught:
        load_protocol(_write(tmp_path, top="repeats = " + "9" * 5000))
    message = str(caught.value)
    assert "an integer with more than 4300 digits" in message
    assert "sys.set_int_max_str_digits" not in message

"""Protocol files and configurations: validation, grid expansion, stable ids and labels."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from itemscale.collect.protocol import (
    Configuration,
    ProtocolError,
    SamplingPolicy,
    load_protocol,
    parse_protocol,
)

PROTOCOL = """\
version = 1
output = "runs/audit"
repeats = 2
seeds = [11, 12]
text_only = true

[[models]]
name = "qwen2-vl-2b"
backend = "hf"
model = "Qwen/Qwen2-VL-2B-Instruct"
revision = "abc123"
dtype = "bfloat16"
options = { attn_implementation = "sdpa" }

[[models]]
name = "served"
backend = "openai"
model = "qwen2-vl"

[benchmark]
kind = "videomme"
path = "data/videomme.parquet"
videos = "data/videos"
limit = 50

[grid]
frames = [32, 8, 16]
short_side = [224, 448]
token_budgets = [4096]
sampling = ["linspace", { name = "interior" }, { name = "fps", fps = 1.0 }]
pipeline = ["cached", "raw"]

[decoding]
max_new_tokens = 16
temperature = 0.0
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "protocol.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_load_full_protocol(tmp_path: Path) -> None:
    protocol = load_protocol(write(tmp_path, PROTOCOL))
    assert [m.name for m in protocol.models] == ["qwen2-vl-2b", "served"]
    assert protocol.models[0].options == {"attn_implementation": "sdpa"}
    assert protocol.benchmark.path == str(tmp_path / "data/videomme.parquet")
    assert protocol.benchmark.videos == str(tmp_path / "data/videos")
    assert protocol.output == str(tmp_path / "runs/audit")
    assert protocol.repeat_seeds == (11, 12)
    assert protocol.decoding.max_new_tokens == 16

    configs = protocol.configurations()
    # text-only + 2 pipelines x 3 policies x (2 short sides + 1 token budget) x 3 frame counts
    assert len(configs) == 1 + 2 * 3 * 3 * 3
    assert configs[0].is_text_only and configs[0].label == "text-only"
    labels = [c.label for c in configs]
    assert len(set(labels)) == len(labels)
    assert len({c.config_id for c in configs}) == len(configs)
    assert labels[1:4] == ["8f@224", "16f@224", "32f@224"]
    assert "16f@tok4096/interior/raw" in labels
    assert "8f@448/fps1" in labels
    series = {c.series for c in configs}
    assert series == {
        "text-only",
        *(f"{p}/{pipe}" for p in ("linspace", "interior", "fps1") for pipe in ("cached", "raw")),
        *(f"tok4096/{p}/{pipe}" for p in ("linspace", "interior", "fps1") for pipe in ("cached", "raw")),
    }  # fmt: skip
    # along a series, axis_order orders by frames then pixels
    linspace = [c for c in configs if c.series == "linspace/cached"]
    ordered = sorted(linspace, key=lambda c: c.axis_order)
    assert [c.label for c in ordered] == [
        "8f@224", "8f@448", "16f@224", "16f@448", "32f@224", "32f@448",
    ]  # fmt: skip


def test_config_id_golden() -> None:
    # Pinned: changing the canonical fields changes every stored id, so it needs a new
    # CONFIG_ID_VERSION. The hash is SHA-256 over this exact canonical JSON.
    config = Configuration(frames=16, short_side=448)
    canonical = (
        '{"frames":16,"max_pixels":null,"pipeline":"cached","sampling":{"fps":null,'
        '"name":"linspace","phase":0.0,"seed":null},"short_side":448,"token_budget":null,"v":1}'
    )
    assert json.dumps(config.canonical(), sort_keys=True, separators=(",", ":")) == canonical
    assert config.config_id == hashlib.sha256(canonical.encode()).hexdigest()[:16]
    assert config.config_id == "18cc704010b8961b"
    assert Configuration(frames=0).config_id == "38facb45e547299a"
    assert (
        Configuration(
            frames=32,
            token_budget=4096,
            sampling=SamplingPolicy(name="random", seed=3),
            pipeline="raw",
        ).config_id
        == "e68872cbbd8b095c"
    )


def test_labels_and_series() -> None:
    assert Configuration(frames=16).label == "16f"
    assert Configuration(frames=16, short_side=448).label == "16f@448"
    assert Configuration(frames=16, max_pixels=200704).label == "16f@px200704"
    assert (
        Configuration(frames=16, sampling=SamplingPolicy(name="interior")).label == "16f/interior"
    )
    phased = Configuration(frames=8, sampling=SamplingPolicy(name="left", phase=0.25))
    assert phased.label == "8f/left+0.25"
    assert phased.series == "left+0.25/cached"
    assert Configuration(frames=8, pipeline="raw").series == "linspace/raw"
    assert Configuration(frames=0).axis_order == 0.0
    assert Configuration(frames=8).axis_order > Configuration(frames=8, short_side=448).axis_order
    assert Configuration(frames=16, short_side=224).axis_order > Configuration(frames=8).axis_order


def test_text_only_is_normalised() -> None:
    a = Configuration(frames=0, sampling=SamplingPolicy(name="interior"), pipeline="raw")
    assert a == Configuration(frames=0)
    assert a.config_id == Configuration.text_only().config_id
    with pytest.raises(ValidationError, match="no resolution"):
        Configuration(frames=0, short_side=224)


def test_configuration_rejects_bad_fields() -> None:
    with pytest.raises(ValidationError, match="at most one"):
        Configuration(frames=8, short_side=224, max_pixels=1000)
    with pytest.raises(ValidationError):
        Configuration(frames=-1)
    with pytest.raises(ValidationError, match="Extra inputs"):
        Configuration.model_validate({"frames": 8, "nframes": 8})
    with pytest.raises(ValidationError, match="only allowed with name='fps'"):
        SamplingPolicy(name="linspace", fps=2.0)
    with pytest.raises(ValidationError, match="phase is only allowed"):
        SamplingPolicy(name="random", phase=0.5)
    with pytest.raises(ValidationError):
        SamplingPolicy(name="left", phase=1.0)
    assert SamplingPolicy(name="fps").fps == 2.0
    config = Configuration(frames=8)
    with pytest.raises(ValidationError):
        config.frames = 9  # type: ignore[misc]


@given(
    frames=st.integers(0, 512),
    side=st.one_of(st.none(), st.integers(1, 2000)),
    name=st.sampled_from(["linspace", "interior", "centre", "left", "nested"]),
)
def test_config_id_depends_only_on_canonical_fields(
    frames: int, side: int | None, name: str
) -> None:
    kwargs = {"frames": frames, "sampling": {"name": name}}
    if frames and side:
        kwargs["short_side"] = side
    a = Configuration.model_validate(kwargs)
    b = Configuration.model_validate(json.loads(a.model_dump_json()))
    assert a == b and a.config_id == b.config_id and a.label == b.label
    if frames:
        other = Configuration.model_validate({**kwargs, "frames": frames + 1})
        assert other.config_id != a.config_id and other.label != a.label


def error_of(tmp_path: Path, text: str, backends: tuple[str, ...] | None = None) -> str:
    with pytest.raises(ProtocolError) as info:
        load_protocol(write(tmp_path, text), backends=backends)
    return str(info.value)


def test_errors_name_key_path_and_allowed_values(tmp_path: Path) -> None:
    message = error_of(tmp_path, PROTOCOL.replace('"videomme"', '"videomm"'))
    assert "protocol.toml" in message
    assert "benchmark.kind" in message and "'videomme'" in message and "'synthetic'" in message
    assert "(got 'videomm')" in message

    message = error_of(tmp_path, PROTOCOL.replace('{ name = "interior" }', '{ name = "middle" }'))
    assert "grid.sampling[1].name" in message and "'interior'" in message and "'nested'" in message

    # a backend is checked against the names the protocol is read with (the command line
    # gives the installed ones, `itemscale.collect.models.BACKENDS`); without them, any name is read
    vllm = PROTOCOL.replace('backend = "openai"', 'backend = "vllm"')
    message = error_of(tmp_path, vllm, backends=("hf", "openai"))
    assert "models[1].backend: Input should be 'hf' or 'openai' (got 'vllm')" in message
    assert load_protocol(write(tmp_path, vllm)).models[1].backend == "vllm"

    message = error_of(tmp_path, PROTOCOL.replace("frames = [32, 8, 16]", "framez = [32]"))
    assert "grid.framez" in message and "Extra inputs" in message
    assert "grid.frames" in message and "required" in message

    message = error_of(tmp_path, PROTOCOL.replace("frames = [32, 8, 16]", "frames = [8, -1]"))
    assert "grid.frames[1]" in message and "greater than 0 (got -1)" in message

    message = error_of(tmp_path, PROTOCOL.replace("seeds = [11, 12]", "seeds = [11]"))
    assert "one seed per repeat" in message

    message = error_of(tmp_path, "version = 2\n" + PROTOCOL.split("\n", 1)[1])
    assert "version" in message and "unsupported protocol version 2" in message


def test_toml_syntax_and_missing_file(tmp_path: Path) -> None:
    message = error_of(tmp_path, "[grid\nframes = [1]\n")
    assert "not valid TOML" in message and "line 1" in message
    with pytest.raises(ProtocolError, match="not found"):
        load_protocol(tmp_path / "nope.toml")


def test_minimal_synthetic_protocol_defaults_to_native_resolution() -> None:
    protocol = parse_protocol(
        {
            "models": [{"name": "tiny", "backend": "builtin", "model": "tiny"}],
            "benchmark": {"kind": "synthetic"},
            "grid": {"frames": [4, 8]},
            "text_only": False,
        }
    )
    assert [c.label for c in protocol.configurations()] == ["4f", "8f"]
    assert protocol.repeat_seeds == (0,)
    with pytest.raises(ProtocolError, match="needs a path"):
        parse_protocol(
            {
                "models": [{"name": "tiny", "backend": "builtin", "model": "tiny"}],
                "benchmark": {"kind": "jsonl"},
                "grid": {"frames": [4]},
            }
        )


def test_native_alongside_resolutions_and_policy_shorthand() -> None:
    protocol = parse_protocol(
        {
            "models": [{"name": "tiny", "backend": "builtin", "model": "tiny"}],
            "benchmark": {"kind": "synthetic"},
            "grid": {
                "frames": [8],
                "short_side": [224],
                "max_pixels": [50176],
                "native": True,
                "sampling": ["nested", {"name": "random", "seed": 2}],
            },
        }
    )
    assert [c.label for c in protocol.configurations()] == [
        "text-only",
        "8f/nested",
        "8f@px50176/nested",
        "8f@224/nested",
        "8f/random#2",
        "8f@px50176/random#2",
        "8f@224/random#2",
    ]
    with pytest.raises(ProtocolError, match=r"grid.frames: Value error, values must be unique"):
        parse_protocol(
            {
                "models": [{"name": "tiny", "backend": "builtin", "model": "tiny"}],
                "benchmark": {"kind": "synthetic"},
                "grid": {"frames": [8, 8]},
            }
        )


# -- implausible grids are refused, the key named (issue 23) -------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("frames = [100000000000000000000]", r"grid\.frames: .*more than the 10000"),
        ("frames = [8, 10001]", r"grid\.frames: .*10001 frames is more than the 10000"),
        ("frames = [true]", r"grid\.frames\[0\]: Input should be a valid integer \(got True\)"),
        ('frames = ["8"]', r"grid\.frames\[0\]: Input should be a valid integer \(got '8'\)"),
        ("frames = [8.0]", r"grid\.frames\[0\]: Input should be a valid integer"),
        ("frames = [8]\nmax_pixels = [1]", r"grid\.max_pixels: .*below the processor's minimum"),
        ("frames = [8]\nmax_pixels = [3135]", r"grid\.max_pixels: .*3135 pixels per frame"),
        ("frames = [8]\nmax_pixels = [99999999999]", r"grid\.max_pixels: .*above the processor"),
        ("frames = [8]\nshort_side = [4]", r"grid\.short_side: .*outside 28\.\.4320"),
        ("frames = [8]\nshort_side = [true]", r"grid\.short_side\[0\]: Input should be a valid"),
        (
            "frames = [8, 32]\ntoken_budgets = [1]",
            r"grid\.token_budgets: .*1 visual tokens over 32 frames .* at least 64 tokens",
        ),
        ("frames = [8]\ntoken_budgets = [true]", r"grid\.token_budgets\[0\]: Input should be"),
    ],
)
def test_implausible_grids_are_refused_with_the_key_named(
    tmp_path: Path, line: str, message: str
) -> None:
    text = PROTOCOL.replace("frames = [32, 8, 16]\nshort_side = [224, 448]\n", "").replace(
        "token_budgets = [4096]\n", line + "\n"
    )
    with pytest.raises(ProtocolError, match=message):
        load_protocol(write(tmp_path, text))


def test_the_smallest_budgets_the_processor_takes_are_accepted(tmp_path: Path) -> None:
    text = PROTOCOL.replace("short_side = [224, 448]", "short_side = [28]\nmax_pixels = [3136]")
    text = text.replace("token_budgets = [4096]", "token_budgets = [64]")  # 2 tokens x 32 frames
    protocol = load_protocol(write(tmp_path, text))
    assert "32f@tok64" in [c.label for c in protocol.configurations()]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("repeats = 2", "repeats = 1000000000"), r"repeats: .*more than the 1000"),
        (("repeats = 2", "repeats = true"), r"repeats: Input should be a valid integer"),
        (("seeds = [11, 12]", "seeds = [11, -1]"), r"seeds\[1\]: Input should be greater"),
        (("limit = 50", "limit = true"), r"benchmark\.limit: Input should be a valid integer"),
        (("max_new_tokens = 16", 'max_new_tokens = "16"'), r"decoding\.max_new_tokens: Input"),
    ],
)
def test_counts_outside_the_grid_are_strict_too(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    with pytest.raises(ProtocolError, match=message):
        load_protocol(write(tmp_path, PROTOCOL.replace(*edit)))


def test_toml_nested_too_deeply_or_with_a_huge_integer_is_typed(tmp_path: Path) -> None:
    deep = PROTOCOL + "x = " + "[" * 100_000 + "]" * 100_000 + "\n"
    with pytest.raises(ProtocolError, match=r"protocol\.toml: not valid TOML: .*nested too deeply"):
        load_protocol(write(tmp_path, deep))
    huge = PROTOCOL.replace("repeats = 2", "repeats = " + "1" * 5000)
    with pytest.raises(ProtocolError, match=r"protocol\.toml: not valid TOML: .*4300 digits"):
        load_protocol(write(tmp_path, huge))


def test_the_decoding_table_is_the_backends_decoding_settings(tmp_path: Path) -> None:
    from itemscale.collect.models import DecodingSettings as BackendDecoding
    from itemscale.collect.protocol import PROTOCOL_MAX_NEW_TOKENS, DecodingSettings, Protocol

    assert DecodingSettings is BackendDecoding
    no_table = PROTOCOL[: PROTOCOL.index("[decoding]")]
    protocol = load_protocol(write(tmp_path, no_table))
    # the protocol's default, not the 16 of a backend called directly
    assert protocol.decoding == BackendDecoding(max_new_tokens=PROTOCOL_MAX_NEW_TOKENS)
    assert BackendDecoding().max_new_tokens == 16
    # run.json records every setting but the seed, which is each repeat's (`seeds`)
    assert protocol.model_dump(mode="json")["decoding"] == {
        "max_new_tokens": 64,
        "temperature": 0.0,
        "top_p": 1.0,
        "score_options": True,
    }
    # the record is every field of the settings but the seed, as the settings dump them
    from itemscale.collect.protocol._decoding import DecodingRecord

    assert set(DecodingRecord.__annotations__) == set(BackendDecoding.model_fields) - {"seed"}
    assert protocol.model_dump(mode="json")["decoding"] == protocol.decoding.model_dump(
        mode="json", exclude={"seed"}
    )
    sampled = load_protocol(write(tmp_path, no_table + "[decoding]\ntemperature = 0.7\n"))
    assert (sampled.decoding.max_new_tokens, sampled.decoding.temperature) == (64, 0.7)
    # a protocol built in Python gets the same default
    built = Protocol.model_validate(
        {**protocol.model_dump(), "decoding": BackendDecoding(score_options=False)}
    )
    assert (built.decoding.max_new_tokens, built.decoding.score_options) == (64, False)
    # run.json before issue 27 recorded top_p null: no cut-off, 1.0
    recorded = {**protocol.model_dump(mode="json"), "decoding": {"top_p": None}}
    assert Protocol.model_validate(recorded).decoding.top_p == 1.0


def test_a_protocol_cannot_set_the_decoding_seed(tmp_path: Path) -> None:
    text = PROTOCOL.replace("temperature = 0.0", "temperature = 0.0\nseed = 3")
    with pytest.raises(
        ProtocolError, match=r"decoding: 'seed' is not a protocol's decoding .*`seeds`"
    ):
        load_protocol(write(tmp_path, text))

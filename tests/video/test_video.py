"""Decoding real video files: exact frames by index, stream timestamps, VFR, containers, the
decode-once pipeline against the per-configuration one, and typed media errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from itemscale.collect.protocol import Configuration, SamplingPolicy
from itemscale.collect.video import (
    MediaError,
    _pipeline,
    allocation_max_pixels,
    decode_for_configs,
    decode_frames,
    decode_raw,
    encode_video,
    probe_video,
    sample_indices,
    smart_resize,
    stream_index,
    target_size,
)

H, W = 48, 64
CODECS = {".mp4": "libx264", ".mkv": "libx264", ".webm": "libvpx"}


def pattern(i: int) -> np.ndarray:
    """Frame i shows i in binary: 16 black/white cells (8 columns x 2 rows) that survive lossy
    coding, so a decoded frame tells which index it is."""
    frame = np.zeros((H, W, 3), dtype=np.uint8)
    for bit in range(16):
        if (i >> bit) & 1:
            row, col = divmod(bit, 8)
            frame[row * 24 : (row + 1) * 24, col * 8 : (col + 1) * 8] = 255
    return frame


def read_pattern(frame: np.ndarray) -> int:
    value = 0
    for bit in range(16):
        row, col = divmod(bit, 8)
        cell = frame[row * 24 + 4 : (row + 1) * 24 - 4, col * 8 + 2 : (col + 1) * 8 - 2]
        value |= int(cell.mean() > 128) << bit
    return value


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("videos")
    out = {}
    for suffix, codec in CODECS.items():
        out[suffix] = encode_video(
            root / f"clip{suffix}", (pattern(i) for i in range(120)), fps=24, codec=codec, gop=16
        )
    return out


@pytest.mark.parametrize("suffix", list(CODECS))
def test_probe(videos: dict[str, Path], suffix: str) -> None:
    info = probe_video(videos[suffix])
    assert info.video_frames == 120
    assert info.fps == pytest.approx(24.0)
    assert info.duration_s == pytest.approx(5.0, abs=0.002)  # Matroska: 1 ms ticks
    assert (info.width, info.height) == (W, H)
    assert info.codec == ("vp8" if suffix == ".webm" else "h264")


@pytest.mark.parametrize("suffix", list(CODECS))
def test_decode_exact_frames_with_seeks(videos: dict[str, Path], suffix: str) -> None:
    index = stream_index(videos[suffix])
    # sparse indices across several keyframe intervals, the first and the last frame
    wanted = [0, 1, 17, 40, 41, 77, 100, 119]
    got = decode_frames(index, wanted)
    assert sorted(got) == wanted
    assert [read_pattern(got[i]) for i in wanted] == wanted
    everything = decode_frames(index, range(120))
    assert [read_pattern(everything[i]) for i in range(120)] == list(range(120))
    # a frame reached by seeking is bit-identical to the same frame reached by decoding through
    for i in wanted:
        assert np.array_equal(got[i], everything[i])
    # from the stream: Matroska stores milliseconds, so 1/24 s reads as 0.042
    stamps = index.timestamps(np.array(wanted)).tolist()
    assert stamps == pytest.approx([i / 24 for i in wanted], abs=0.0006)


def grid() -> list[Configuration]:
    configs = [Configuration.text_only()]
    for name in ("linspace", "interior", "centre", "nested", "fps"):
        for frames in (4, 8, 16, 200):
            configs.append(Configuration(frames=frames, sampling=SamplingPolicy(name=name)))
            configs.append(
                Configuration(frames=frames, sampling=SamplingPolicy(name=name), short_side=56)
            )
    configs.append(Configuration(frames=8, max_pixels=3136))
    configs.append(Configuration(frames=8, token_budget=16))
    configs.append(Configuration(frames=8, sampling=SamplingPolicy(name="random", seed=4)))
    configs.append(Configuration(frames=8, pipeline="raw", short_side=56))
    return configs


@pytest.mark.parametrize("suffix", list(CODECS))
def test_shared_pass_equals_raw_pipeline_bit_for_bit(
    videos: dict[str, Path], suffix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = videos[suffix]
    configs = grid()
    calls: list[list[int]] = []
    real = _pipeline.decode_resized

    def counting(index, requests, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(sorted(requests))
        return real(index, requests, **kwargs)

    monkeypatch.setattr(_pipeline, "decode_resized", counting)
    shared = decode_for_configs(path, configs, item_key="q7", repeat=1)
    # one decode of the union for every cached configuration, plus one for the raw one
    assert len(calls) == 2
    union = sorted(
        {
            int(i)
            for c in configs
            if c.pipeline == "cached" and not c.is_text_only
            for i in shared[c.config_id].indices
        }
    )
    assert calls[0] == union
    monkeypatch.setattr(_pipeline, "decode_resized", real)

    assert set(shared) == {c.config_id for c in configs}
    for config in configs:
        got = shared[config.config_id]
        raw = decode_raw(path, config, item_key="q7", repeat=1)
        assert np.array_equal(got.indices, raw.indices), config.label
        assert np.array_equal(got.array, raw.array), config.label
        assert np.array_equal(got.timestamps, raw.timestamps)
        assert got.array.dtype == np.uint8
        assert got.array.shape == (got.effective_frames, got.height, got.width, 3)
        assert got.label == config.label and got.config_id == config.config_id
        if config.is_text_only:
            assert got.effective_frames == 0 and got.pixels == 0
            continue
        expected = sample_indices(
            config.sampling, 120, config.frames, fps=24.0, item_key="q7", repeat=1
        )
        assert got.indices.tolist() == expected.tolist()
        assert got.effective_frames == min(expected.size, 120)
        assert (got.height, got.width) == target_size(config, H, W)
        if (got.height, got.width) == (H, W):
            assert [read_pattern(f) for f in got.array] == got.indices.tolist()
    # 200 frames asked of a 120-frame video: each frame once, the effective count recorded
    big = shared[Configuration(frames=200).config_id]
    assert big.effective_frames == 120 and big.requested_frames == 200
    assert (
        shared[Configuration(frames=8, short_side=56).config_id].width == 84
    )  # 64*56/48=74.7 -> 84


def test_variable_frame_rate(tmp_path: Path) -> None:
    times = [0.0, 0.04, 0.08, 0.5, 0.54, 1.5, 1.52, 1.54, 2.0, 3.0, 3.5, 5.0]
    for suffix, codec in CODECS.items():
        path = encode_video(
            tmp_path / f"vfr{suffix}",
            (pattern(i) for i in range(len(times))),
            codec=codec,
            pts_s=times,
        )
        info = probe_video(path)
        assert info.video_frames == len(times)
        # the last frame lasts the median frame interval (0.42 s of
        # .02 .02 .04 .04 .04 .42 .46 .5 .96 1 1.5) past 5.0 s
        assert info.duration_s == pytest.approx(5.42, abs=0.001)
        assert info.fps == pytest.approx(12 / 5.42, abs=0.001)
        config = Configuration(frames=6, sampling=SamplingPolicy(name="left"))
        frames = decode_for_configs(path, [config])[config.config_id]
        # left: int(i * 12 / 6) = 0, 2, 4, 6, 8, 10
        assert frames.indices.tolist() == [0, 2, 4, 6, 8, 10]
        assert frames.timestamps.tolist() == pytest.approx([0.0, 0.08, 0.54, 1.52, 2.0, 3.5])
        assert [read_pattern(f) for f in frames.array] == [0, 2, 4, 6, 8, 10]
        # fps policy counts from the stream duration: 5.42 s at 2 fps = 10.84 -> 10 frames
        fps = Configuration(frames=64, sampling=SamplingPolicy(name="fps"))
        assert decode_for_configs(path, [fps])[fps.config_id].effective_frames == 10


def test_smart_resize_golden() -> None:
    # 360x640 at 256*28*28 = 200704 pixels: rounding to 28 gives 364x644 = 234416 > max, so
    # beta = sqrt(230400 / 200704) = 15/14 and the sides are floored: 336x588
    assert smart_resize(360, 640, max_pixels=200704) == (336, 588)
    # within the budget: round each side to 28 -> 364x644
    assert smart_resize(360, 640, max_pixels=16384 * 28 * 28) == (364, 644)
    # 48x64 is below 4*28*28 = 3136 pixels after rounding (56x56 = 3136 is not below): 56x56
    assert smart_resize(48, 64) == (56, 56)
    # a tiny frame is scaled up to the minimum: 20x20 -> beta = sqrt(3136/400) = 2.8 -> 56x56
    assert smart_resize(20, 20) == (56, 56)
    with pytest.raises(ValueError, match="aspect ratio"):
        smart_resize(10, 2500)
    # short side 224 of 360x640: 224 x round(398.2 / 28) * 28 = 224 x 392
    assert target_size(Configuration(frames=8, short_side=224), 360, 640) == (224, 392)
    # allocation: 4096 tokens over 16 frames = 4096*784*2/16 = 401408 px/frame; 364x644 fits
    assert target_size(Configuration(frames=16, token_budget=4096), 360, 640) == (364, 644)
    # over 128 frames: 50176 px/frame; beta = sqrt(230400/50176) = 2.1429 -> 168x294 -> 168x280
    assert target_size(Configuration(frames=128, token_budget=4096), 360, 640) == (168, 280)


# --- typed media errors on real broken files ---------------------------------------------------


def reason(path: Path) -> str:
    with pytest.raises(MediaError) as info:
        probe_video(path)
    config = Configuration(frames=4)
    with pytest.raises(MediaError) as again:
        decode_for_configs(path, [config])
    assert again.value.reason == info.value.reason
    assert str(path) in str(info.value)
    return info.value.reason


def test_missing_and_empty(tmp_path: Path) -> None:
    assert reason(tmp_path / "absent.mp4") == "missing_file"
    empty = tmp_path / "empty.mp4"
    empty.write_bytes(b"")
    assert reason(empty) == "empty_file"


def test_truncated_mp4(videos: dict[str, Path], tmp_path: Path) -> None:
    data = videos[".mp4"].read_bytes()
    cut = tmp_path / "cut.mp4"  # index (moov) written last, so cutting loses it
    cut.write_bytes(data[: len(data) // 2])
    assert reason(cut) == "truncated"
    faststart = encode_video(
        tmp_path / "fast.mp4",
        (pattern(i) for i in range(120)),
        container_options={"movflags": "faststart"},
    )
    data = faststart.read_bytes()
    cut_media = tmp_path / "cut_media.mp4"  # index intact, media data cut short
    cut_media.write_bytes(data[: len(data) * 2 // 3])
    assert reason(cut_media) == "truncated"


def test_garbage_and_unsupported_codec(videos: dict[str, Path], tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.mp4"
    garbage.write_bytes(np.random.default_rng(0).integers(0, 256, 50_000, dtype=np.uint8).tobytes())
    assert reason(garbage) == "decode_error"
    data = videos[".mp4"].read_bytes()
    # the sample description's codec tag (the last "avc1"; the first is a brand in ftyp)
    at = data.rindex(b"avc1")
    assert data.index(b"stsd") < at
    unknown = tmp_path / "unknown_codec.mp4"
    unknown.write_bytes(data[:at] + b"zzzz" + data[at + 4 :])
    assert reason(unknown) == "unsupported_codec"


def test_unseekable_raw_bitstream(tmp_path: Path) -> None:
    import av

    path = tmp_path / "raw.h264"
    with av.open(str(path), mode="w", format="h264") as container:
        stream = container.add_stream("libx264", rate=25)
        stream.width, stream.height, stream.pix_fmt = W, H, "yuv420p"
        for i in range(10):
            for packet in stream.encode(av.VideoFrame.from_ndarray(pattern(i), format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    assert reason(path) == "unseekable"


def test_media_error_reason_is_checked() -> None:
    with pytest.raises(ValueError, match="unknown media error reason"):
        MediaError("bad_reason", "x.mp4")  # type: ignore[arg-type]


def test_imprecise_seek_falls_back_to_decoding_through(
    videos: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A container whose seeks land one keyframe late: the frames must still be the right ones."""
    from itemscale.collect.video import _media

    path = videos[".mp4"]
    index = stream_index(path)
    real = _media._frames_from
    keyframes = index.keyframe_pts.tolist()
    seeks: list[int | None] = []

    def late(container, stream, seek_pts):  # type: ignore[no-untyped-def]
        seeks.append(seek_pts)
        if seek_pts is not None and seek_pts != keyframes[0]:
            later = [k for k in keyframes if k > seek_pts]
            seek_pts = later[0] if later else seek_pts
        return real(container, stream, seek_pts)

    monkeypatch.setattr(_media, "_frames_from", late)
    wanted = [5, 40, 41, 100]
    got = decode_frames(index, wanted)
    assert [read_pattern(got[i]) for i in wanted] == wanted
    assert seeks[-1] == keyframes[0]  # it went back to the start once and decoded forward


def test_converted_frames_match_pyav_reference(videos: dict[str, Path]) -> None:
    """The converter hands out views of padded row buffers; check them against PyAV's own
    conversion of the same scaled frame, at widths whose RGB rows need padding."""
    import av

    from itemscale.collect.video import FrameConverter

    convert = FrameConverter()
    with av.open(str(videos[".mp4"])) as container:
        for n, frame in enumerate(container.decode(video=0)):
            for height, width in ((56, 84), (28, 28), (90, 122), (H, W)):
                got = convert(frame, height, width)
                scaled = frame
                if (height, width) != (H, W):
                    scaled = frame.reformat(width=width, height=height, interpolation="BICUBIC")
                reference = scaled.to_ndarray(format="rgb24")
                assert got.shape == (height, width, 3)
                assert np.array_equal(got, reference), (n, height, width)
            if n == 3:
                break


# ---- Review: frame sizes against Qwen2-VL's smart_resize (factor 28, min/max pixels), by hand


PX = 28 * 28


def test_within_bounds_rounds_each_side() -> None:
    # 360 / 28 = 12.86 -> 13 -> 364; 640 / 28 = 22.86 -> 23 -> 644; 234416 pixels, in bounds
    assert smart_resize(360, 640) == (364, 644)
    # Python's round is half-to-even, as in Qwen's round_by_factor: 70/28 = 2.5 -> 2,
    # 98/28 = 3.5 -> 4, 42/28 = 1.5 -> 2
    assert smart_resize(70, 98) == (56, 112)
    assert smart_resize(42, 1000) == (56, 1008)


def test_above_max_pixels_scales_down_and_floors() -> None:
    # 364 x 644 > 128*784 = 100352; beta = sqrt(230400 / 100352) = 1.5152;
    # 360 / beta = 237.6 -> floor to 224; 640 / beta = 422.4 -> 420
    assert smart_resize(360, 640, max_pixels=128 * PX) == (224, 420)
    # 1080p to 768*784 = 602112: beta = 1.8558; 581.97 -> 560; 1034.6 -> 1008
    assert smart_resize(1080, 1920, max_pixels=768 * PX) == (560, 1008)


def test_below_min_pixels_scales_up_and_ceils() -> None:
    # 20 x 30 rounds to 28 x 28 = 784 < 3136; beta = sqrt(3136 / 600) = 2.2862;
    # 45.7 -> ceil to 56; 68.6 -> 84
    assert smart_resize(20, 30) == (56, 84)


def test_extreme_aspect_ratio_is_rejected() -> None:
    with pytest.raises(ValueError, match="aspect ratio"):
        smart_resize(10, 2100)


def qwen2vl_smart_resize(h: int, w: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """Qwen2-VL's algorithm, written out from its description as an oracle."""
    h_bar = max(28, round(h / 28) * 28)
    w_bar = max(28, round(w / 28) * 28)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(h * w / max_pixels)
        h_bar = max(28, math.floor(h / beta / 28) * 28)
        w_bar = max(28, math.floor(w / beta / 28) * 28)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (h * w))
        h_bar = math.ceil(h * beta / 28) * 28
        w_bar = math.ceil(w * beta / 28) * 28
    return h_bar, w_bar


@settings(max_examples=300, deadline=None)
@given(
    h=st.integers(16, 2160),
    w=st.integers(16, 3840),
    max_tokens=st.sampled_from([64, 128, 256, 768, 16384]),
)
def test_matches_qwen_and_invariants(h: int, w: int, max_tokens: int) -> None:
    assume(max(h, w) / min(h, w) <= 200)
    got = smart_resize(h, w, max_pixels=max_tokens * PX)
    assert got == qwen2vl_smart_resize(h, w, 4 * PX, max_tokens * PX)
    assert got[0] % 28 == 0 and got[1] % 28 == 0
    # the pixel cap holds unless a side is clamped up to one 28-pixel row (as in Qwen)
    if min(got) > 28:
        assert got[0] * got[1] <= max_tokens * PX


def test_configuration_sizes_by_hand() -> None:
    # short side 224 on 360x640: scale 0.6222; 640 * 0.6222 = 398.2 -> 14 * 28 = 392
    assert target_size(Configuration(frames=8, short_side=224), 360, 640) == (224, 392)
    assert target_size(Configuration(frames=8, max_pixels=128 * PX), 360, 640) == (224, 420)
    # allocation: one token per 28x28 pixels per 2 frames, so T tokens over F frames give
    # T * 784 * 2 / F pixels a frame: 4096 over 16 -> 401408 (native 364x644 fits), over 64 ->
    # 100352 (the 128-token case above)
    assert allocation_max_pixels(4096, 16) == 401408
    assert allocation_max_pixels(4096, 64) == 100352
    assert target_size(Configuration(frames=16, token_budget=4096), 360, 640) == (364, 644)
    assert target_size(Configuration(frames=64, token_budget=4096), 360, 640) == (224, 420)
    # a config with no resolution keeps the native size
    assert target_size(Configuration(frames=8), 360, 640) == (360, 640)

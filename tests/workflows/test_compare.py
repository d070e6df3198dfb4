"""`compare`: every count hand-counted on small runs, the set-up diff, the same-input rule applied
to two sides whose set-up differs, repeats against rerun noise, the ways of naming two sides and
their errors, and the command's JSON and page."""

from __future__ import annotations

import json
from html import escape as html_escape
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markupsafe import escape
from scipy.stats import chi2

from _support.compare_rows import compare_row
from itemscale import CompareResult, compare
from itemscale.cli import main
from itemscale.core.responses import normalise_responses, write_run
from itemscale.workflows import COMPARE_SCHEMA_VERSION, WorkflowError

_row = compare_row


def _write(
    folder: Path, rows: list[dict[str, Any]], provenance: dict[str, Any] | None = None
) -> Path:
    write_run(folder, normalise_responses(pd.DataFrame(rows)), provenance or {})
    return folder


SHORT = json.dumps({"duration": "short"})
LONG = json.dumps({"duration": "long"})


def _hand_runs(tmp_path: Path) -> tuple[Path, Path]:
    """Six items answered on both sides (videos v1..v3, two items each), one failed on each side,
    one on each side only."""
    a = [
        _row("i1", "v1", 1, answer="A", raw_text="A", attributes=SHORT),
        _row("i2", "v1", 1, answer="A", raw_text="A.", attributes=SHORT),
        _row("i3", "v2", 0, answer="B", raw_text="B", attributes=LONG),
        _row("i4", "v2", 0, answer="C", raw_text="C", attributes=LONG),
        _row("i5", "v3", 1, answer="A", raw_text="A", attributes=LONG),
        _row("i6", "v3", 0, answer="NOANSWER", raw_text="none", attributes=LONG),
        _row("i7", "v4", 1, answer="A", raw_text="A"),
        _row("i8", "v4", None, status="model_error", error="boom"),
        _row("i10", "v5", 1, answer="A", raw_text="A"),
    ]
    b = [
        _row("i1", "v1", 1, answer="A", raw_text="A", attributes=SHORT),
        _row("i2", "v1", 0, answer="B", raw_text="B", attributes=SHORT),
        _row("i3", "v2", 1, answer="A", raw_text="A", attributes=LONG),
        _row("i4", "v2", 0, answer="C", raw_text="C.", attributes=LONG),
        _row("i5", "v3", 0, answer="D", raw_text="D", attributes=LONG),
        _row("i6", "v3", 0, answer="D", attributes=LONG),
        _row("i7", "v4", None, status="timeout", error="slow"),
        _row("i8", "v4", 1, answer="A", raw_text="A"),
        _row("i9", "v6", 1, answer="A", raw_text="A"),
    ]
    return _write(tmp_path / "a", a), _write(tmp_path / "b", b)


def test_every_count_by_hand(tmp_path: Path) -> None:
    run_a, run_b = _hand_runs(tmp_path)
    r = compare(run_a, run_b, bootstrap=200)
    c = r.counts
    assert (c.matched, c.matched_items, c.matched_videos) == (6, 6, 3)
    assert (c.only_a, c.only_b) == (1, 1)  # i10, i9
    assert (c.failed_a, c.failed_b) == (1, 1)  # i8 in A, i7 in B
    assert (c.identical_raw, c.raw_recorded) == (1, 5)  # i1; i6 has no raw text in B
    assert (c.identical_answers, c.answers_recorded) == (2, 6)  # i1, i4
    ans = r.answers
    assert (ans.both_right, ans.both_wrong) == (1, 2)  # i1; i4, i6
    assert (ans.right_only_a, ans.right_only_b) == (2, 1)  # i2, i5; i3
    assert ans.accuracy_a.value == pytest.approx(3 / 6)
    assert ans.accuracy_b.value == pytest.approx(2 / 6)
    assert ans.difference.value == pytest.approx(-1 / 6)
    # per video (up - down): v1 -1, v2 +1, v3 -1: X^2 = (-1)^2 / 3
    assert ans.clustered_statistic == pytest.approx(1 / 3)
    assert ans.clustered_p == pytest.approx(float(chi2.sf(1 / 3, 1)))
    assert ans.exact_mcnemar_p == pytest.approx(1.0)  # 2 * P(X <= 1 | 3, 1/2) capped
    (duration,) = r.by_attribute
    groups = {g.value: (g.pairs, g.right_only_a, g.right_only_b) for g in duration.groups}
    assert groups == {"short": (2, 1, 0), "long": (4, 1, 1)}
    assert [(v.value, v.right_only_a, v.right_only_b) for v in r.top_videos] == [
        ("v1", 1, 0),
        ("v2", 0, 1),
        ("v3", 1, 0),
    ]
    keys = [v.key for v in r.verdicts]
    assert keys == ["gap", "same_input", "setup", "where"]
    assert "within noise" in r.verdicts[0].sentence
    assert "right only in A 2, right only in B 1" in r.verdicts[0].sentence


def _pixel_runs(tmp_path: Path, n: int, *, tokens: bool, same_answers: bool) -> tuple[Path, Path]:
    rows_a, rows_b = [], []
    for i in range(n):
        answer = "ABCD"[i % 4]
        other = answer if same_answers or i % 5 else "ABCD"[(i + 1) % 4]
        common = {"pixels": None, "answer": answer, "raw_text": answer}
        a = _row(f"q{i}", f"v{i // 2}", float(i % 3 == 0), **common)
        b = _row(f"q{i}", f"v{i // 2}", float(i % 3 == 0 and other == answer), **common)
        a.update(pixels=151_000, config_label="64f_151k", config_id="p151")
        b.update(
            pixels=235_000, config_label="64f_235k", config_id="p235", answer=other, raw_text=other
        )
        if tokens:
            a["visual_tokens"], b["visual_tokens"] = 1000, 1500
        rows_a.append(a)
        rows_b.append(b)
    return _write(tmp_path / "p151", rows_a), _write(tmp_path / "p235", rows_b)


def test_setup_differs_but_answers_do_not(tmp_path: Path) -> None:
    """Other pixels on paper, identical answers on 60 items, nothing recorded of the input: the
    one same-input rule says the same input, and the verdict asks whether the setting applied."""
    run_a, run_b = _pixel_runs(tmp_path, 60, tokens=False, same_answers=True)
    r = compare(run_a, run_b, bootstrap=0)
    pixels = next(f for f in r.provenance if f.field == "pixels per frame")
    assert (pixels.a, pixels.b, pixels.status) == ("151000", "235000", "differs")
    assert r.provenance[0].status == "differs"  # differences first
    assert [f.status for f in r.provenance] == sorted(
        (f.status for f in r.provenance), key=["differs", "unknown", "same"].index
    )
    assert r.same_input is not None and r.same_input.basis == "identical_answers"
    assert (r.same_input.identical, r.same_input.items) == (60, 60)
    sentence = next(v.sentence for v in r.verdicts if v.key == "same_input")
    assert "pixels per frame" in sentence and "was the setting applied?" in sentence
    assert r.answers.right_only_a == r.answers.right_only_b == 0


def test_recorded_tokens_that_grow_are_different_inputs(tmp_path: Path) -> None:
    run_a, run_b = _pixel_runs(tmp_path, 60, tokens=True, same_answers=True)
    r = compare(run_a, run_b, bootstrap=0)
    assert r.same_input is None
    sentence = next(v.sentence for v in r.verdicts if v.key == "same_input")
    assert "visual tokens" in sentence and "different inputs" in sentence


def test_unknown_is_never_the_same(tmp_path: Path) -> None:
    run_a, run_b = _pixel_runs(tmp_path, 10, tokens=False, same_answers=False)
    r = compare(run_a, run_b, bootstrap=0)
    tokens = next(f for f in r.provenance if f.field == "visual tokens")
    assert (tokens.a, tokens.b, tokens.status) == (None, None, "unknown")
    assert r.same_input is None  # 10 items: too few for identical answers to decide


def _repeat_rows(side: str, outcomes: dict[str, tuple[int, int]]) -> list[dict[str, Any]]:
    rows = []
    for item, pair in outcomes.items():
        for rep, y in enumerate(pair):
            ans = "A" if y else ("B" if side == "a" else "C")
            rows.append(_row(item, f"v{item}", float(y), repeat=rep, answer=ans, raw_text=ans))
    return rows


def test_repeats_against_rerun_noise(tmp_path: Path) -> None:
    a = _repeat_rows("a", {"1": (1, 1), "2": (1, 0), "3": (0, 0), "4": (1, 1)})
    b = _repeat_rows("b", {"1": (1, 1), "2": (0, 0), "3": (0, 1), "4": (1, 1)})
    r = compare(_write(tmp_path / "a", a), _write(tmp_path / "b", b), bootstrap=100)
    assert r.counts.matched == 8 and r.counts.matched_items == 4
    assert (r.answers.right_only_a, r.answers.right_only_b) == (1, 1)  # item 2 r0; item 3 r1
    noise = r.repeats
    assert noise is not None and noise.items == 4 and noise.repeats_a == 2
    assert noise.noise_a is not None and noise.noise_a.value == pytest.approx(1 / 4)  # item 2
    assert noise.noise_b is not None and noise.noise_b.value == pytest.approx(1 / 4)  # item 3
    # P(a run of A and one of B disagree): item 2 .5*1 + 0*.5, item 3 0*.5 + .5*1
    assert noise.between.value == pytest.approx((0.5 + 0.5) / 4)
    gap = r.verdicts[0].sentence
    assert "A's own reruns (2 repeats) on 25.0%" in gap
    assert "no more than a side differs from itself" in gap


def test_repeats_on_one_side_only(tmp_path: Path) -> None:
    """A ran each item three times, B once: B's one run is matched with A's repeat 0 (A's
    other repeats counted as only in A), and A's own rerun noise is set beside the gap."""
    a = []
    for item, ys in {"1": (1, 1, 0), "2": (0, 0, 0), "3": (1, 1, 1)}.items():
        for rep, y in enumerate(ys):
            a.append(_row(item, f"v{item}", float(y), repeat=rep, answer="A" if y else "B"))
    b = [_row(item, f"v{item}", 1.0, answer="A") for item in ("1", "2", "3")]
    r = compare(_write(tmp_path / "a", a), _write(tmp_path / "b", b), bootstrap=0)
    assert (r.counts.matched, r.counts.only_a, r.counts.only_b) == (3, 6, 0)
    noise = r.repeats
    assert noise is not None and (noise.repeats_a, noise.repeats_b, noise.items) == (3, 1, 3)
    # item 1: p = 2/3 over 3 repeats: 2 (2/3)(1/3) 3/2 = 2/3; items 2 and 3 agree with themselves
    assert noise.noise_a is not None and noise.noise_a.value == pytest.approx((2 / 3) / 3)
    assert noise.noise_b is None
    # against B's one right answer: item 1 disagrees 1/3 of the time, item 2 always
    assert noise.between.value == pytest.approx((1 / 3 + 1) / 3)
    gap = r.verdicts[0].sentence
    assert "B has no reruns (1 repeat)" in gap and "more than a side's own reruns differ" in gap


def _one_run(tmp_path: Path) -> Path:
    rows = []
    for label, frames in (("8f", 8), ("16f", 16)):
        for model in ("m", "n"):
            for i in range(4):
                rows.append(
                    _row(
                        f"q{i}",
                        f"v{i}",
                        float((i + frames // 8) % 2),
                        model=model,
                        config_label=label,
                        config_id=f"id{label}",
                        frames=frames,
                        answer="A",
                    )
                )
    return _write(tmp_path / "one", rows)


def test_within_one_run(tmp_path: Path) -> None:
    run = _one_run(tmp_path)
    r = compare(run, configs=["8f", "16f"], models=["m"], bootstrap=0)
    assert (r.a.config, r.b.config, r.a.model) == ("8f", "16f", "m")
    assert r.counts.matched == 4 and (r.answers.right_only_a, r.answers.right_only_b) == (2, 2)
    r = compare(run, models=["m", "n"], configs=["16f"], bootstrap=0)
    assert (r.a.model, r.b.model) == ("m", "n")
    assert r.provenance[0].field == "model" and r.provenance[0].status == "differs"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"configs": ["8f"]}, "exactly one of --series, --model or --config given twice"),
        ({"configs": ["8f", "16f"], "models": ["m", "n"]}, "exactly one"),
        ({"configs": ["8f", "16f", "32f"]}, "--config given 3 times"),
        (
            {"configs": ["8f", "32f"], "models": ["m"]},
            "no configuration '32f' (the run holds: 16f, 8f)",
        ),
        ({"configs": ["8f", "16f"]}, "holds 2 slices: model m, series default, config 8f"),
        ({"models": ["m", "x"], "configs": ["8f"]}, "no model 'x' (the run holds: m, n)"),
        ({"configs": ["8f", "8f"], "models": ["m"]}, "both sides are the same slice (8f)"),
    ],
)
def test_naming_errors(tmp_path: Path, kwargs: dict[str, list[str]], message: str) -> None:
    run = _one_run(tmp_path)
    with pytest.raises(WorkflowError, match=message.replace("(", r"\(").replace(")", r"\)")):
        compare(run, **kwargs)  # type: ignore[arg-type]


def test_two_runs_with_several_slices_need_a_name(tmp_path: Path) -> None:
    run = _one_run(tmp_path)
    with pytest.raises(WorkflowError, match=r"side A .* holds 4 slices.*--model / --config"):
        compare(run, run)
    r = compare(run, run, models=["m"], configs=["8f", "16f"], bootstrap=0)
    assert (r.a.config, r.b.config) == ("8f", "16f")


def test_command_json_and_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_a, run_b = _hand_runs(tmp_path)
    out, page = tmp_path / "c.json", tmp_path / "c.html"
    code = main(
        [
            "compare",
            str(run_a),
            str(run_b),
            "--bootstrap",
            "50",
            "--json",
            str(out),
            "--html",
            str(page),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "right only in A 2, right only in B 1" in printed
    data = json.loads(out.read_text())
    assert data["schema_version"] == COMPARE_SCHEMA_VERSION
    result = CompareResult.model_validate_json(out.read_text())
    assert result.counts.matched == 6
    html = page.read_text()
    assert "<script" not in html and "http://" not in html and "https://" not in html
    assert "script-src" not in html and "default-src &#x27;none&#x27;" in html
    assert "right only in A" in html
    # escaped as the page's template engine escapes (an apostrophe as &#39;)
    assert all(escape(v.sentence) in html for v in result.verdicts)


def test_command_refuses_the_artifact_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_a, run_b = _hand_runs(tmp_path)
    artifact = run_a / "artifact"
    artifact.mkdir()
    (artifact / "MANIFEST.json").write_text("{}")
    code = main(["compare", str(run_a), str(run_b), "--html", str(artifact / "c.html")])
    assert code == 2
    assert "inside the artifact" in capsys.readouterr().err
    assert not (artifact / "c.html").exists()


def test_result_is_frozen(tmp_path: Path) -> None:
    run_a, run_b = _hand_runs(tmp_path)
    r = compare(run_a, run_b, bootstrap=0)
    with pytest.raises(ValueError):
        r.counts.matched = 3  # type: ignore[misc]
    assert CompareResult.model_validate_json(r.to_json()) == r


def test_two_series_of_one_run(tmp_path: Path) -> None:
    rows = []
    for series, ys in (("linspace", (1, 0, 1, 1)), ("centre", (1, 1, 0, 0))):
        for i, y in enumerate(ys):
            rows.append(
                _row(f"q{i}", f"v{i}", float(y), series=series, config_id=f"{series}16", answer="A")
            )
    run = _write(tmp_path / "series", rows)
    r = compare(run, series=["linspace", "centre"], bootstrap=0)
    assert (r.a.series, r.b.series) == ("linspace", "centre")
    assert (r.answers.right_only_a, r.answers.right_only_b, r.answers.both_right) == (2, 1, 1)


def test_a_bootstrap_p_at_its_floor_says_what_the_draws_can_resolve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """B scores 0.5 higher on every one of 20 videos: no resample is as extreme as 0, so the p is
    1 / 201 with 200 draws, which the draws cannot tell from anything smaller: the verdict, the
    console and the page say '< 0.005' (1 / 200), never '0.00498'."""

    def rows(score: float) -> list[dict[str, Any]]:
        return [
            _row(f"q{i}", f"v{i}", None, task_kind="open_qa", score=score, answer=f"t{i}")
            for i in range(20)
        ]

    a = _write(tmp_path / "a", rows(0.25))
    b = _write(tmp_path / "b", rows(0.75))
    r = compare(a, b, bootstrap=200)
    assert r.answers.bootstrap_p == pytest.approx(1 / 201)
    assert "paired video bootstrap p < 0.005 on 20 matched pairs" in r.verdicts[0].sentence
    page = tmp_path / "page.html"
    assert main(["compare", str(a), str(b), "--bootstrap", "200", "--html", str(page)]) == 0
    assert ", bootstrap p <0.005\n" in capsys.readouterr().out
    assert "paired video bootstrap p</td><td>&lt;0.005</td>" in page.read_text("utf-8")


def test_scored_answers(tmp_path: Path) -> None:
    def rows(scores: list[float]) -> list[dict[str, Any]]:
        out = []
        for i, s in enumerate(scores):
            row = _row(f"q{i}", f"v{i}", None, task_kind="open_qa", score=s, answer=f"t{i}")
            out.append(row)
        return out

    a = _write(tmp_path / "a", rows([1.0, 0.5, 0.0, 0.25]))
    b = _write(tmp_path / "b", rows([1.0, 0.75, 0.5, 0.0]))
    r = compare(a, b, bootstrap=200)
    assert r.answers.kind == "continuous" and r.answers.right_only_a is None
    assert r.answers.accuracy_a.value == pytest.approx(1.75 / 4)
    assert r.answers.difference.value == pytest.approx((0.25 + 0.5 - 0.25) / 4)
    assert r.answers.clustered_p is None and r.answers.bootstrap_p is not None
    assert "paired video bootstrap p = " in r.verdicts[0].sentence
    untested = compare(a, b, bootstrap=0)
    assert "The gap is not tested" in untested.verdicts[0].sentence
    (video_gap,) = [v for v in r.top_videos if v.value == "v2"]
    assert (video_gap.right_only_a, video_gap.right_only_b) == (0, 1)  # higher score in B


@pytest.mark.chromium
def test_page_renders_in_chromium(tmp_path: Path) -> None:
    """The page as a browser reads it: every verdict in the rendered DOM, nothing fetched."""
    import shutil
    import subprocess

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.skip("headless Chromium not found (apt-get install chromium)")
    run_a, run_b = _hand_runs(tmp_path)
    page = tmp_path / "c.html"
    assert main(["compare", str(run_a), str(run_b), "--bootstrap", "0", "--html", str(page)]) == 0
    dom = subprocess.run(
        [binary, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    result = compare(run_a, run_b, bootstrap=0)
    for verdict in result.verdicts:
        assert html_escape(verdict.sentence, quote=False) in dom
    assert "What differs in the set-up" in dom and "<script" not in dom


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    outcomes=st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 1), st.integers(0, 3), st.booleans()),
        min_size=1,
        max_size=30,
    )
)
def test_counts_add_up_and_swap(
    tmp_path_factory: pytest.TempPathFactory, outcomes: list[tuple[int, int, int, bool]]
) -> None:
    """The 2x2 table adds up to the matched pairs, the difference is the flips' balance, and
    swapping the sides swaps the flips, negates the difference and keeps the clustered p."""
    base = tmp_path_factory.mktemp("swap")
    rows_a, rows_b = [], []
    for i, (ya, yb, video, in_b) in enumerate(outcomes):
        rows_a.append(_row(f"q{i}", f"v{video}", float(ya), answer="A" if ya else "B"))
        if in_b:
            rows_b.append(_row(f"q{i}", f"v{video}", float(yb), answer="A" if yb else "C"))
    if not rows_b:
        return
    a, b = _write(base / "a", rows_a), _write(base / "b", rows_b)
    ab, ba = compare(a, b, bootstrap=0), compare(b, a, bootstrap=0)
    n = ab.counts.matched
    assert n == sum(in_b for *_, in_b in outcomes) and ab.counts.only_a == len(outcomes) - n
    x = ab.answers
    assert x.both_right is not None and x.both_wrong is not None
    assert x.right_only_a is not None and x.right_only_b is not None
    assert x.both_right + x.both_wrong + x.right_only_a + x.right_only_b == n
    assert x.difference.value == pytest.approx((x.right_only_b - x.right_only_a) / n)
    assert (ba.answers.right_only_a, ba.answers.right_only_b) == (x.right_only_b, x.right_only_a)
    assert ba.answers.difference.value == pytest.approx(-x.difference.value)
    assert ba.answers.clustered_p == pytest.approx(x.clustered_p)
    assert ab.counts.identical_answers == x.both_right  # wrong answers differ: B vs C


def test_two_real_sweeps(tmp_path: Path) -> None:
    """Two sweeps of one model (the test suite's deterministic pixel backend on real H.264
    videos) at 4 and 8 frames with other decoding: the set-up read from run.json and the table."""
    from _support.sweep import pixel_factory, write_benchmark, write_protocol
    from itemscale.collect.protocol import load_protocol
    from itemscale.collect.sweep import run_sweep

    suite = write_benchmark(tmp_path / "suite", 3)
    four = write_protocol(tmp_path / "a.toml", suite, frames=(4,), output=tmp_path / "ra")
    eight = write_protocol(tmp_path / "b.toml", suite, frames=(8,), output=tmp_path / "rb")
    eight.write_text(eight.read_text().replace("max_new_tokens = 8", "max_new_tokens = 16"))
    for protocol in (four, eight):
        run_sweep(load_protocol(protocol), backend_factory=pixel_factory, progress=False)
    r = compare(tmp_path / "ra", tmp_path / "rb", configs=["4f", "8f"], bootstrap=0)
    fields = {f.field: f for f in r.provenance}
    assert [f.field for f in r.provenance if f.status == "differs"] == [
        "configuration",
        "frames (asked)",
        "frames sent (effective)",
        "visual tokens",
        "decoding",
    ]
    assert fields["decoding"].a is not None and '"max_new_tokens": 8' in fields["decoding"].a
    assert (fields["model id"].a, fields["backend"].a, fields["transport"].a) == (
        "pixel-test",
        "hf",
        "in process",
    )
    assert fields["prompt template"].status == fields["answer extractor"].status == "same"
    assert fields["model revision"].status == "unknown"  # not pinned: never "the same"
    assert (fields["dtype"].a, fields["processor settings"].a) == (
        "uint8",
        "none set",
    )  # the store's spec
    assert r.counts.matched == 6 and r.same_input is None  # recorded tokens grow


def test_no_item_in_common(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _write(tmp_path / "a", [_row("i1", "v1", 1, answer="A"), _row("i2", "v2", 0, answer="B")])
    b = _write(tmp_path / "b", [_row("i3", "v3", 1, answer="A")])
    assert main(["compare", str(a), str(b), "--bootstrap", "10"]) == 0
    assert "no clustered test (no matched pairs)" in capsys.readouterr().out
    r = compare(a, b, bootstrap=10)
    assert (r.counts.matched, r.counts.only_a, r.counts.only_b) == (0, 2, 1)
    assert r.answers.difference.value is None and r.same_input is None
    assert (
        r.verdicts[0].sentence == "No item was answered on both sides: there is nothing to compare."
    )


def test_a_swept_and_an_imported_slice_of_one_run(tmp_path: Path) -> None:
    """Each side reads the provenance of the way its own rows came in: the sweep's for the
    swept slice, the import's record for rows imported into the same run folder."""
    from _support.sweep import pixel_factory, write_benchmark, write_protocol
    from itemscale.collect.protocol import load_protocol
    from itemscale.collect.sweep import run_sweep

    suite = write_benchmark(tmp_path / "suite", 3)
    protocol = write_protocol(tmp_path / "p.toml", suite, frames=(4,), output=tmp_path / "run")
    run_sweep(load_protocol(protocol), backend_factory=pixel_factory, progress=False)
    table = tmp_path / "paper.csv"
    lines = ["model,item_id,video_id,config,frames,correct"]
    lines += [f"pixel,v{v}-q{q},v{v},reported,4,1" for v in range(3) for q in range(2)]
    table.write_text("\n".join(lines) + "\n")
    assert main(["import", "table", str(table), "-o", str(tmp_path / "run")]) == 0
    r = compare(tmp_path / "run", configs=["4f", "reported"], bootstrap=0)
    fields = {f.field: f for f in r.provenance}
    assert (fields["source"].a, fields["source"].b) == ("itemscale sweep", "table import")
    assert fields["backend"].a == "hf" and fields["backend"].b is None  # not claimed for B
    assert r.counts.matched == 6


def test_frames_asked_differ_but_frames_sent_do_not(tmp_path: Path) -> None:
    """16 frames asked against 8, but the frames sent never grow (a server that capped them):
    the same input by the recorded frames, even with a few answers apart (sampling noise)."""
    rows_a, rows_b = [], []
    for i in range(12):
        answer_b = "A" if i % 6 else "B"
        rows_a.append(
            _row(f"q{i}", f"v{i}", 1.0, answer="A", effective_frames=8, frames=8, config_label="8f")
        )
        rows_b.append(
            _row(
                f"q{i}",
                f"v{i}",
                float(answer_b == "A"),
                answer=answer_b,
                effective_frames=8,
                frames=16,
                config_id="c32",
                config_label="16f",
            )
        )
    r = compare(_write(tmp_path / "a", rows_a), _write(tmp_path / "b", rows_b), bootstrap=0)
    assert r.same_input is not None and r.same_input.basis == "effective_frames"
    assert (r.same_input.identical, r.same_input.items, r.same_input.recorded) == (10, 12, 12)
    sentence = next(v.sentence for v in r.verdicts if v.key == "same_input")
    assert "frames actually sent do not grow" in sentence
    assert "frames (asked)" in sentence and "was the setting applied?" in sentence


def _mixed(tmp_path: Path) -> tuple[Path, Path]:
    """Four multiple-choice items (right A/B: 1/1, 1/0, 0/1, 0/1) and three open-ended ones
    (scores A 0.5, 0.2, 0.9; B 0.7, 0.2, 0.6), one video per item."""
    a, b = [], []
    for i, (ca, cb) in enumerate([(1, 1), (1, 0), (0, 1), (0, 1)]):
        a.append(_row(f"m{i}", f"v{i}", ca, answer="A" if ca else "B"))
        b.append(_row(f"m{i}", f"v{i}", cb, answer="A" if cb else "B"))
    for i, (sa, sb) in enumerate([(0.5, 0.7), (0.2, 0.2), (0.9, 0.6)]):
        extra = {"task_kind": "open_qa", "raw_text": f"reply {i}"}
        a.append(_row(f"o{i}", f"w{i}", None, score=sa, **extra))
        b.append(_row(f"o{i}", f"w{i}", None, score=sb, **extra))
    return _write(tmp_path / "a", a), _write(tmp_path / "b", b)


def test_a_run_mixing_task_kinds_compares_each_apart(tmp_path: Path) -> None:
    a, b = _mixed(tmp_path)
    r = compare(a, b, bootstrap=0)
    assert set(r.outcomes) == {"mcqa", "open_ended"}
    mc, oe = r.outcomes["mcqa"], r.outcomes["open_ended"]
    assert r.answers == mc and mc.kind == "binary" and oe.kind == "continuous"
    assert (mc.right_only_a, mc.right_only_b) == (1, 2)
    assert mc.accuracy_a.value == pytest.approx(0.5) and mc.accuracy_b.value == pytest.approx(0.75)
    assert oe.accuracy_a.value == pytest.approx(1.6 / 3)
    assert oe.accuracy_b.value == pytest.approx(1.5 / 3)
    assert oe.difference.value == pytest.approx(-0.1 / 3)
    keys = [v.key for v in r.verdicts]
    assert keys[:2] == ["gap", "gap_open_ended"]
    gap = {v.key: v.sentence for v in r.verdicts}
    assert gap["gap"].startswith("Multiple-choice items: ") and "on 4 matched pairs" in gap["gap"]
    assert gap["gap_open_ended"].startswith("Open-ended items: B's mean score")
    assert "on 3 matched pairs" in gap["gap_open_ended"]
    # --task-kind keeps one kind: the open-ended items alone are a plain comparison
    only = compare(a, b, bootstrap=0, task_kind="open_ended")
    assert set(only.outcomes) == {"open_ended"} and only.answers == oe
    assert only.counts.matched == 3 and only.task_kind == "open_ended"
    out = tmp_path / "c.json"
    assert main(["compare", str(a), str(b), "--bootstrap", "0", "--json", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["schema_version"] == 5
    assert set(written["outcomes"]) == {"mcqa", "open_ended"}
    assert written["outcomes"]["open_ended"]["kind"] == "continuous"
    # the page shows each kind apart
    page = tmp_path / "c.html"
    assert main(["compare", str(a), str(b), "--bootstrap", "0", "--html", str(page)]) == 0
    html = page.read_text()
    assert "multiple choice: accuracy of A" in html and "open-ended: mean score of A" in html
    with pytest.raises(WorkflowError, match="no mcqa items"):
        compare(
            _write(tmp_path / "oa", [_row("o", "w", None, task_kind="open_qa", score=1.0)]),
            b,
            task_kind="mcqa",
        )

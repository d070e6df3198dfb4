"""report.html in real headless Chromium, driven over the DevTools protocol.

The browser talks DevTools over a pipe (`--remote-debugging-pipe`: fd 3 in, fd 4 out, messages
separated by NUL), so no websocket client or open port is needed. The page must load with no
console error, exception or CSP report, make no request outside file:/data:, show its figures,
and an untrusted model output holding `<script>` and `<img onerror>` must stay text.

Without Chromium the tests skip, unless ITEMSCALE_REQUIRE_CHROMIUM=1 (CI), where they fail.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from _support.runs import XSS_TEXT, make_irt_run, make_mixed_run, make_run
from itemscale.analysis.audit import contact_sheet, encode_png
from itemscale.report import build_artifact

pytestmark = [pytest.mark.chromium, pytest.mark.slow]

SCREENSHOT_DIR = Path(os.environ.get("ITEMSCALE_SCREENSHOT_DIR", "/tmp"))


def chromium_binary() -> str:
    for name in (os.environ.get("ITEMSCALE_CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return str(shutil.which(name))
    message = "headless Chromium not found (apt-get install chromium)"
    if os.environ.get("ITEMSCALE_REQUIRE_CHROMIUM") == "1":
        pytest.fail(message + "; ITEMSCALE_REQUIRE_CHROMIUM=1 requires it")
    pytest.skip(message)


class DevTools:
    """A minimal DevTools-protocol client over Chromium's debugging pipe."""

    def __init__(self, binary: str, profile: Path) -> None:
        to_chrome_r, self._to_chrome_w = os.pipe()
        self._from_chrome_r, from_chrome_w = os.pipe()
        args = [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self.proc = subprocess.Popen(
            ["bash", "-c", f'exec "$@" 3<&{to_chrome_r} 4>&{from_chrome_w}', "bash", *args],
            pass_fds=(to_chrome_r, from_chrome_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._next_id = 0
        self._replies: dict[int, dict[str, Any]] = {}
        self._cond = threading.Condition()
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buf = b""
        with os.fdopen(self._from_chrome_r, "rb", buffering=0) as fh:
            while chunk := fh.read(65536):
                buf += chunk
                while b"\0" in buf:
                    raw, buf = buf.split(b"\0", 1)
                    msg = json.loads(raw)
                    if "id" in msg:
                        with self._cond:
                            self._replies[msg["id"]] = msg
                            self._cond.notify_all()
                    else:
                        self.events.put(msg)

    def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_chrome_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + 30
        with self._cond:
            while self._next_id not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no DevTools reply to {method}")
                self._cond.wait(left)
            reply = self._replies.pop(self._next_id)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError, TimeoutError):
            self.send("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_chrome_w)


class Page:
    """One loaded page: its DevTools session and every event it produced."""

    def __init__(self, tools: DevTools, url: str) -> None:
        self.tools = tools
        target = tools.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = tools.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Runtime", "Log", "Page", "Network"):
            tools.send(f"{domain}.enable", session=self.session)
        tools.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1300, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
            session=self.session,
        )
        self.events: list[dict[str, Any]] = []
        tools.send("Page.navigate", {"url": url}, session=self.session)
        self._wait_for("Page.loadEventFired")
        deadline = time.monotonic() + 20
        while self.eval("document.body && document.body.dataset.ready") != "1":
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        time.sleep(0.2)
        self._drain()

    def _drain(self) -> None:
        while True:
            try:
                self.events.append(self.tools.events.get_nowait())
            except queue.Empty:
                return

    def _wait_for(self, method: str) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                event = self.tools.events.get(timeout=0.5)
            except queue.Empty:
                continue
            self.events.append(event)
            if event.get("method") == method and event.get("sessionId") == self.session:
                return
        raise TimeoutError(f"no {method}")

    def eval(self, expression: str) -> Any:
        reply = self.tools.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True},
            session=self.session,
        )
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def errors(self) -> list[str]:
        self._drain()
        out = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                out.append(f"exception: {params['exceptionDetails']}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in (
                "error",
                "assert",
                "warning",
            ):
                out.append(f"console.{params['type']}: {params.get('args')}")
            elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
                out.append(f"log {params['entry']['source']}: {params['entry']['text']}")
        return out

    def requests(self) -> list[str]:
        self._drain()
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e.get("method") == "Network.requestWillBeSent"
        ]

    def screenshot_of(self, selector: str, path: Path) -> bytes:
        rect = json.loads(
            self.eval(
                f"JSON.stringify(document.querySelector({json.dumps(selector)})"
                ".getBoundingClientRect().toJSON())"
            )
        )
        clip = {
            "x": rect["x"] + float(self.eval("window.scrollX")),
            "y": rect["y"] + float(self.eval("window.scrollY")),
            "width": rect["width"],
            "height": min(rect["height"], 2000),
            "scale": 1,
        }
        data = base64.b64decode(
            self.tools.send(
                "Page.captureScreenshot",
                {"format": "png", "clip": clip, "captureBeyondViewport": True},
                session=self.session,
            )["data"]
        )
        path.write_bytes(data)
        return data

    def screenshot(self, path: Path) -> bytes:
        height = int(self.eval("document.documentElement.scrollHeight"))
        self.tools.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1300, "height": min(height, 6000), "deviceScaleFactor": 1, "mobile": False},
            session=self.session,
        )
        data = base64.b64decode(
            self.tools.send("Page.captureScreenshot", {"format": "png"}, session=self.session)[
                "data"
            ]
        )
        path.write_bytes(data)
        return data


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevTools]:
    binary = chromium_binary()
    tools = DevTools(binary, tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield tools
    finally:
        tools.close()


def _stored_cascade(run: Path) -> str:
    """A cascade.json as `itemscale cascade` writes it, with hand-set figures (three frontier
    points, one rule whose description carries markup) and settings these responses cannot
    recompute (no visual tokens for `cost="tokens"`): the report shows it as it is."""
    from itemscale.analysis.measures import Estimate
    from itemscale.analysis.policies import (
        CascadeSettings,
        FrontierPoint,
        UnavailableRule,
        cascade_report,
    )
    from itemscale.core.responses import read_run

    df, _ = read_run(run)
    real = cascade_report(df[df["model"] == "tiny<b>model</b>"], CascadeSettings(bootstrap=0))
    block = real.results[0]
    rule = next(r for r in block.policies.values() if not isinstance(r, UnavailableRule))
    rule = rule.model_copy(
        update={
            "description": "stop when confident <img src=x onerror=alert(1)>",
            "accuracy": Estimate(value=0.62, ci=(0.52, 0.72)),
            "mean_cost": Estimate(value=20.0, ci=(18.0, 22.0)),
            "cost_reduction": Estimate(value=0.375, ci=(0.3, 0.45)),
        }
    )
    front = tuple(
        FrontierPoint(target_offset=0.0, accuracy=a, mean_cost=c, cost_reduction=None, pareto=True)
        for a, c in ((0.55, 12.0), (0.6, 18.0), (0.62, 24.0))
    )
    block = block.model_copy(
        update={
            "policies": {"confidence": rule},
            "cascade": rule,
            "frontier": front,
            "threshold_sweep": (),
        }
    )
    tokens = real.settings.model_copy(update={"cost": "tokens"})
    return real.model_copy(update={"results": (block,), "settings": tokens}).to_json()


def _stored_intervention() -> dict[str, Any]:
    """An intervention's result in the layout `itemscale intervene` writes, with markup in the
    model name and in a re-run's answer."""

    def group(planned: int, answered: int, failed: int) -> dict[str, Any]:
        return {
            "n_planned": planned, "n_answered": answered, "n_changed": 3, "n_failed": failed,
            "failed_by_status": {"model_error": failed} if failed else {}, "n_missing": 0,
            "reference_frames_kept": None, "reference_frames_kept_before": None,
            "terminal_frames_changed": None,
        }  # fmt: skip

    return {
        "schema_version": 1, "model": "tiny<b>model</b>", "source_series": "default",
        "policy": "nested", "series": "intervention:nested",
        "description": "keep every frame of the lower budget that was right",
        "configs": {}, "config_series": {}, "terminal_label": "f32", "seed": 0, "n_items": 24,
        "n_regressions": 10, "n_terminal_right": 12,
        "recovered_rate": {"value": 0.3, "ci": [0.2, 0.4]},
        "broken_rate": {"value": 0.05, "ci": [0.0, 0.1]},
        "intervals": {"recovered_rate": "video bootstrap", "broken_rate": "video bootstrap"},
        "net_accuracy_change_estimate": {"value": 0.02, "ci": [-0.01, 0.05]},
        "net_accuracy_change_note": "",
        "regressions": group(10, 10, 0), "controls": group(20, 19, 1),
        "bootstrap": {"n_boot": 30, "seed": 0},
        "items": [
            {
                "item_id": "item00<i>", "video_id": "video0", "group": "regression",
                "reference_label": "f16", "config_id": "x", "before": 0.0,
                "answer_before": "B", "answer_after": XSS_TEXT, "after": 0.0, "status": "ok",
                "reference_frames_kept": None, "reference_frames_kept_before": None,
                "terminal_frames_changed": None,
            }
        ],
    }  # fmt: skip


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import numpy as np

    run = tmp_path_factory.mktemp("html") / "run"
    make_run(run, models=("tiny<b>model</b>", "other model"))
    audit = pd.read_parquet(run / "audit.parquet")
    sheets = run / "audit_sheets"
    sheets.mkdir()
    rng = np.random.default_rng(0)
    for tid in audit["transition_id"].head(3):
        frames = [rng.integers(0, 255, (24, 32, 3), dtype=np.uint8) for _ in range(4)]
        sheet = contact_sheet(
            frames[:2],
            frames,
            status_from=["kept", "dropped"],
            status_to=["kept", "added", "added", "added"],
            evidence_from=[True, False],
            evidence_to=[True, False, False, False],
        )
        (sheets / f"{tid}.png").write_bytes(encode_png(sheet))
    (run / "cascade.json").write_text(_stored_cascade(run), encoding="utf-8")
    # the layout `itemscale intervene` writes to RUN_DIR/intervention/<policy>.json
    (run / "intervention").mkdir()
    (run / "intervention" / "nested.json").write_text(json.dumps(_stored_intervention()))
    (run / "intervention" / "nested.plan.json").write_text(json.dumps({"policy": "nested"}))
    artifact = build_artifact(run, bootstrap=30, seed=0)
    return artifact / "report.html"


def test_report_loads_clean_and_shows_figures(browser: DevTools, report: Path) -> None:
    assert (report.parent / "intervention" / "nested.json").is_file()
    assert (report.parent / "intervention" / "nested.plan.json").is_file()
    page = Page(browser, report.as_uri())
    assert page.eval("document.body.dataset.ready") == "1", page.errors()
    assert page.errors() == []
    assert all(u.startswith(("file:", "data:")) for u in page.requests()), page.requests()
    counts = page.eval(
        "JSON.stringify({curve: document.querySelectorAll('svg.accuracy-curve').length,"
        " band: document.querySelectorAll('svg.accuracy-curve g.ci-band').length,"
        " points: document.querySelectorAll('svg.accuracy-curve g.acc-point').length,"
        " heat: document.querySelectorAll('svg.heatmap').length,"
        " raster: document.querySelectorAll('svg.heatmap g.cells image').length,"
        " flips: document.querySelectorAll('svg.flip-bars g.flip-down').length,"
        " comp: document.querySelectorAll('table.comp').length,"
        " frontier: document.querySelectorAll('svg.frontier g.frontier-point').length,"
        " sheets: document.querySelectorAll('#audit img.sheet').length,"
        " intervention: document.querySelectorAll('table.intervention tr').length,"
        " rows: document.querySelectorAll('#item-table tbody tr').length})"
    )
    got = json.loads(counts)
    # two models, one series each: a curve (3 points + band) and a heat map per model
    assert got["curve"] == 2 and got["band"] == 2 and got["points"] == 6
    assert got["heat"] == 2 and got["raster"] == 2  # one raster image per heat map
    assert got["flips"] == 4  # two adjacent pairs per model
    assert got["comp"] == 2
    assert got["frontier"] == 3 + 1 + 1  # frontier, the policy, the fixed terminal budget
    assert got["sheets"] == 3
    assert got["intervention"] == 4  # header + recovered, broken, net change
    assert got["rows"] == 48  # 24 items x 2 models
    shot = page.screenshot(SCREENSHOT_DIR / "itemscale_report.png")
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 20_000
    table_shot = page.screenshot_of("#items", SCREENSHOT_DIR / "itemscale_report_items.png")
    assert table_shot[:8] == b"\x89PNG\r\n\x1a\n"


def test_untrusted_output_stays_text(browser: DevTools, report: Path) -> None:
    page = Page(browser, report.as_uri())
    assert page.eval("typeof window.__pwned") == "undefined"
    assert page.eval("document.scripts.length") == 2
    assert page.eval("document.querySelectorAll('img[src=\"x\"]').length") == 0
    # the page itself never uses <i>; a `<b>model</b>` in a model name must not become bold
    assert page.eval("document.querySelectorAll('i').length") == 0
    assert (
        page.eval(
            "Array.prototype.filter.call(document.querySelectorAll('b'),"
            " function (b) { return b.textContent === 'model'; }).length"
        )
        == 0
    )
    # the output is shown in the explorer's item panel, as text: open item00 of the model
    page.eval(
        "var b = document.getElementById('item-filter'); b.value = 'item00';"
        " b.dispatchEvent(new Event('input'));"
        " document.querySelector('#item-table tbody tr').click();"
    )
    found = page.eval(
        f"document.querySelector('#item-detail pre.output').textContent === {json.dumps(XSS_TEXT)}"
    )
    assert found is True
    # model and item names with markup are shown as text in the figures and the table
    assert page.eval("document.body.textContent.indexOf('tiny<b>model</b>') >= 0") is True
    assert page.eval("document.body.textContent.indexOf('item00<i>') >= 0") is True
    assert page.errors() == []


def test_explorer_filters_searches_sorts_and_opens_an_item(browser: DevTools, report: Path) -> None:
    page = Page(browser, report.as_uri())
    rows = "document.querySelectorAll('#item-table tbody tr').length"
    page.eval(
        "var f = document.getElementById('model-filter'); f.value = 'other model';"
        " f.dispatchEvent(new Event('change'));"
    )
    assert page.eval(rows) == 24
    # every row carries its trajectory: one coloured cell per budget (3)
    assert page.eval("document.querySelectorAll('#item-table tbody td.traj .tcell').length") == 72
    # filter by pattern: only harmful-only rows stay, and each shows the pattern
    pattern = page.eval(
        "var p = document.getElementById('pattern-filter'); p.value = 'harmful';"
        " p.dispatchEvent(new Event('change'));"
        " Array.prototype.map.call(document.querySelectorAll('#item-table tbody tr'),"
        " function (tr) { return tr.children[4].textContent; }).join(',')"
    )
    assert pattern and set(pattern.split(",")) == {"harmful only"}
    page.eval(
        "var p = document.getElementById('pattern-filter'); p.value = '';"
        " p.dispatchEvent(new Event('change'));"
        " var v = document.getElementById('video-filter'); v.value = 'video1';"
        " v.dispatchEvent(new Event('change'));"
    )
    assert page.eval(rows) == 2  # two items per video
    page.eval(
        "var v = document.getElementById('video-filter'); v.value = '';"
        " v.dispatchEvent(new Event('change'));"
        " var b = document.getElementById('item-filter'); b.value = 'item03';"
        " b.dispatchEvent(new Event('input'));"
    )
    assert page.eval(rows) == 1
    # search reads the question text too
    page.eval(
        "var b = document.getElementById('item-filter'); b.value = 'question 7?';"
        " b.dispatchEvent(new Event('input'));"
    )
    assert page.eval(rows) == 1
    assert page.eval("document.querySelector('#item-table tbody td:nth-child(3)').textContent") == (
        "item07<i>"
    )
    # click opens the item: question, options, gold, the answer at every budget, the audit
    page.eval("document.querySelector('#item-table tbody tr').click()")
    panel = page.eval("document.getElementById('item-detail').textContent")
    assert "question 7?" in panel and "gold" in panel
    assert page.eval("document.querySelectorAll('#item-detail ol.options li').length") == 4
    assert page.eval("document.querySelectorAll('#item-detail table.answers tr').length") == 4
    assert "frame audit" in panel
    page.eval(
        "var b = document.getElementById('item-filter'); b.value = '';"
        " b.dispatchEvent(new Event('input'));"
        " document.querySelectorAll('#item-table th')[2].click();"
        " document.querySelectorAll('#item-table th')[2].click();"
    )
    first = page.eval("document.querySelector('#item-table tbody tr td:nth-child(3)').textContent")
    assert first == "item23<i>"
    assert page.eval("document.querySelectorAll('#item-table th')[2].dataset.sorted") == "desc"
    assert page.errors() == []


def test_mixed_run_report_loads_clean(
    browser: DevTools, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Failures, NOANSWER, open-ended items and no cascade/intervention/audit: still clean."""
    run = tmp_path_factory.mktemp("mixed") / "run"
    make_mixed_run(run)
    report = build_artifact(run, bootstrap=10, seed=0) / "report.html"
    page = Page(browser, report.as_uri())
    assert page.eval("document.body.dataset.ready") == "1"
    assert page.errors() == []
    assert page.eval("document.querySelectorAll('svg.heatmap').length") == 2  # mcqa + open-ended
    assert page.eval("document.querySelectorAll('#item-table tbody tr').length") == 8
    assert page.eval("document.getElementById('audit').textContent.indexOf('not run') >= 0")
    assert page.eval("document.getElementById('cascade').textContent.indexOf('not run') >= 0")


def test_a_frames_by_resolution_grid_reads_at_a_glance(
    browser: DevTools, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """One accuracy curve per resolution and a frames x resolution map, not one line zigzagging
    through 2f@56, 2f@112, 4f@56, ...; heat-map group labels neither overlap nor leave the
    figure; the item table fits the page without horizontal scrolling; a headline opens it."""
    from _support.runs import make_grid_run

    run = tmp_path_factory.mktemp("grid") / "run"
    make_grid_run(run)
    report = build_artifact(run, bootstrap=20, seed=0) / "report.html"
    page = Page(browser, report.as_uri())
    assert page.errors() == []
    got = json.loads(
        page.eval(
            "JSON.stringify({chains: Array.prototype.map.call("
            "document.querySelectorAll('svg.chain-curves g.chain-line > title'),"
            " function (t) { return t.textContent; }),"
            " cells: document.querySelectorAll('svg.budget-grid g.budget-cell').length,"
            " zigzag: document.querySelectorAll('svg.accuracy-curve').length,"
            " headline: document.querySelector('p.headline').textContent})"
        )
    )
    assert got["chains"] == ["frames@56", "frames@112"]
    assert got["cells"] == 6 and got["zigzag"] == 0
    assert got["headline"].startswith("grid model: accuracy goes from ")
    assert "are right at some budget and wrong at a larger one" in got["headline"]
    boxes = json.loads(
        page.eval(
            "JSON.stringify(Array.prototype.map.call("
            "document.querySelectorAll('svg.heatmap g.group-label text'), function (t) {"
            " var b = t.getBoundingClientRect();"
            " var f = t.ownerSVGElement.getBoundingClientRect();"
            " return {text: t.textContent, top: b.top - f.top, bottom: b.bottom - f.top,"
            " left: b.left - f.left, h: f.height}; }))"
        )
    )
    assert any(b["text"].startswith("harmful only (") for b in boxes)
    assert not any(b["text"].startswith("harmful (") for b in boxes)
    for box in boxes:
        assert box["top"] >= 0 and box["bottom"] <= box["h"] and box["left"] >= 0, box
    ordered = sorted(boxes, key=lambda b: b["top"])
    for upper, lower in itertools.pairwise(ordered):
        assert upper["bottom"] <= lower["top"] + 0.5, (upper, lower)
    wide = json.loads(
        page.eval(
            "var w = document.querySelector('.table-wrap');"
            " JSON.stringify({scroll: w.scrollWidth, client: w.clientWidth})"
        )
    )
    assert wide["scroll"] <= wide["client"], wide
    page.screenshot(SCREENSHOT_DIR / "itemscale_report_grid.png")


def test_item_response_section_reads_in_chromium(
    browser: DevTools, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A run large enough for a 2PL fit (3 models x 6 budgets, 80 items): the section loads
    clean, its figure marks every (model, budget) at its ability, its tables list every budget
    and the planted items, and nothing is wider than the window."""
    run = tmp_path_factory.mktemp("irt") / "run"
    make_irt_run(run)
    report = build_artifact(run, bootstrap=10, seed=0) / "report.html"
    page = Page(browser, report.as_uri())
    assert page.eval("document.body.dataset.ready") == "1"
    assert page.errors() == []
    got = json.loads(
        page.eval(
            "var s = document.getElementById('irt'), f = s.querySelector('svg.irt-information'),"
            " r = f.getBoundingClientRect();"
            " JSON.stringify({figures: s.querySelectorAll('svg.figure').length,"
            " marks: f.querySelectorAll('g.irt-budget').length,"
            " tip: f.querySelector('g.irt-budget title').textContent,"
            " axes: Array.prototype.map.call(f.querySelectorAll('text'), function (t)"
            " { return t.textContent; }).join('|'),"
            " budgets: s.querySelectorAll('table.irt-budgets tbody tr').length,"
            " negative: s.querySelectorAll('table.irt-negative tbody tr').length,"
            " width: r.width, right: r.right, client: document.documentElement.clientWidth,"
            " nav: document.querySelector('nav a[href=\"#irt\"]') !== null})"
        )
    )
    assert got["figures"] == 1 and got["marks"] == 18 and got["budgets"] == 18
    assert got["tip"].startswith("model 0 8f: ability ") and "information" in got["tip"]
    assert "ability (2PL latent scale)" in got["axes"] and "test information" in got["axes"]
    assert 3 <= got["negative"] <= 5 and got["nav"]
    assert got["width"] > 300 and got["right"] <= got["client"]
    shot = page.screenshot_of("#irt", SCREENSHOT_DIR / "itemscale_report_irt.png")
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 20_000


def _many_budget_run(run: Path) -> None:
    """Twelve budgets with long labels: the widest flip bars and complementarity table."""
    import numpy as np

    from _support.tables import table
    from itemscale.core.responses import normalise_responses, write_run

    labels = [f"{f}f_{p}k" for f in (8, 16, 32, 64) for p in (76, 151, 302)]
    rng = np.random.default_rng(3)
    matrix = {f"q{i}": [float(rng.random() < 0.5) for _ in labels] for i in range(60)}
    videos = {f"q{i}": f"v{i // 2}" for i in range(60)}
    df = normalise_responses(table(matrix, labels=labels, videos=videos, model="wide model"))
    write_run(run, df, {"protocol": {"name": "wide"}})


@pytest.mark.parametrize("width", [1400, 820])
def test_figures_and_tables_fit_the_window(
    browser: DevTools, tmp_path_factory: pytest.TempPathFactory, width: int
) -> None:
    """At 1400 and 820 px nothing is wider than the page: each figure scales to its column and
    the complementarity table scrolls inside its own box. Screenshots of every figure."""
    run = tmp_path_factory.mktemp(f"wide{width}") / "run"
    _many_budget_run(run)
    report = build_artifact(run, bootstrap=10, seed=0) / "report.html"
    page = Page(browser, report.as_uri())
    browser.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
        session=page.session,
    )
    time.sleep(0.3)
    got = json.loads(
        page.eval(
            "var cw = document.documentElement.clientWidth;"
            " JSON.stringify({page: document.documentElement.scrollWidth, client: cw,"
            " figures: Array.prototype.map.call(document.querySelectorAll('svg.figure'),"
            " function (f, i) { f.id = 'figure' + i; var r = f.getBoundingClientRect();"
            " return {kind: f.getAttribute('class'), right: r.right, width: r.width}; }),"
            " comp: document.querySelector('table.comp').parentElement.getBoundingClientRect()"
            ".right})"
        )
    )
    assert got["page"] <= got["client"], got
    assert len(got["figures"]) >= 3
    for n, fig in enumerate(got["figures"]):
        assert fig["width"] > 200 and fig["right"] <= got["client"], fig
        kind = fig["kind"].split()[-1]
        page.screenshot_of(f"#figure{n}", SCREENSHOT_DIR / f"itemscale_{kind}_{width}.png")
    assert got["comp"] <= got["client"]
    assert page.errors() == []


#: item ids that name members of Object.prototype: a plain `table[id]` finds those members
PROTOTYPE_IDS = ("constructor", "hasOwnProperty", "__proto__", "toString")


def test_explorer_opens_items_named_like_object_members(
    browser: DevTools, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Items called `constructor`, `hasOwnProperty`, `__proto__` and `toString` open in the
    explorer, with their own options where the benchmark gives some and none where it does
    not (the first two are left out of items.jsonl: `data.options[id]` would find
    Object.prototype's function and break the panel); the page reports no error."""
    from itemscale.collect.items import read_items_jsonl, write_items_jsonl
    from itemscale.core.responses import read_run, write_run

    run = tmp_path_factory.mktemp("proto") / "run"
    _, items = make_run(run, n_items=8, with_audit=False)
    renamed = {it.item_id: name for it, name in zip(items, PROTOTYPE_IDS, strict=False)}
    df, provenance = read_run(run)
    df["item_id"] = df["item_id"].map(lambda i: renamed.get(i, i))
    write_run(run, df, provenance)
    kept = [
        it.model_copy(update={"item_id": renamed.get(it.item_id, it.item_id)})
        for it in read_items_jsonl(run / "items.jsonl")
    ]
    without = {"constructor", "hasOwnProperty"}
    write_items_jsonl(run / "items.jsonl", [it for it in kept if it.item_id not in without])
    report = build_artifact(run, bootstrap=10, seed=0) / "report.html"
    page = Page(browser, report.as_uri())
    assert page.eval("document.body.dataset.ready") == "1"
    for name in PROTOTYPE_IDS:
        page.eval(
            "var b = document.getElementById('item-filter');"
            f" b.value = {json.dumps(name.lower())}; b.dispatchEvent(new Event('input'));"
            " Array.prototype.filter.call(document.querySelectorAll('#item-table tbody tr'),"
            f" function (tr) {{ return tr.children[2].textContent === {json.dumps(name)}; }})"
            "[0].click();"
        )
        assert page.eval("document.querySelector('#item-detail h3').textContent") == name
        options = page.eval(
            "Array.prototype.map.call(document.querySelectorAll('#item-detail ol.options li'),"
            " function (li) { return li.textContent; }).join(',')"
        )
        assert options == ("" if name in without else "red,green,blue,grey"), name
        assert "frame audit" in page.eval("document.getElementById('item-detail').textContent")
    assert page.errors() == []


def test_the_explorer_draws_a_partial_order_as_one(
    browser: DevTools, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Qwen2.5-VL-7B's released grid of frames x pixels: item 020-3 is right only at 64f_76k.
    Its pattern, as the harmful rate's, follows the partial order ("harmful only": nothing
    below 64f_76k is comparable to it), so the strip marks the neighbours that are not
    comparable, and the opened item lists the pairs the pattern rests on."""
    from itemscale.cli import main
    from itemscale.workflows import release_dir

    root = tmp_path_factory.mktemp("partial")
    data, model = release_dir(), "Qwen2.5-VL-7B"
    argv = ["import", "table", "--wide", "--id-column", "sample_id", "--model", model]
    argv += ["--answer-key", str(data / "V1_short_answer_key.csv"), "-o", str(root / "run")]
    assert main([*argv, str(data / f"{model}_V1_short_predictions_wide.csv")]) == 0
    report = build_artifact(root / "run", bootstrap=0, seed=0) / "report.html"
    page = Page(browser, report.as_uri())
    assert page.errors() == []
    page.eval(
        "var s = document.getElementById('item-filter'); s.value = '020-3';"
        " s.dispatchEvent(new Event('input'))"
    )
    row = "document.querySelector('#item-table tbody tr')"
    assert page.eval(f"{row}.children[4].textContent") == "harmful only"
    cells = page.eval(
        f"Array.prototype.map.call({row}.querySelectorAll('td.traj span'),"
        " function (s) { return s.classList.contains('tgap') ? '|' : s.title; }).join(' ')"
    )
    assert cells == (
        "16f_151k: wrong 32f_151k: wrong 32f_302k: wrong | 64f_76k: right 64f_151k: wrong "
        "64f_235k: wrong 64f_360k: wrong | 128f_76k: wrong 128f_151k: wrong 256f_151k: wrong"
    )
    page.eval(f"{row}.click()")
    panel = page.eval("document.getElementById('item-detail').textContent")
    assert (
        "right, then wrong at a larger budget (the partial order of frames x pixels: only "
        "comparable budgets): 64f_76k \u2192 64f_151k, 64f_76k \u2192 64f_235k" in panel
    )
    assert "wrong, then right at a larger budget: none" in panel
    assert "output at the largest budget: not recorded" in panel  # a wide table has no text
    page.screenshot_of("#items", SCREENSHOT_DIR / "itemscale_report_partial_order.png")


def test_the_compare_page_keeps_each_word_whole(
    browser: DevTools, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The set-up table of `compare --html` on the release: a status ("unknown", "differs")
    and a field name never break inside a word (it read "unknow/n"); a long digest still wraps
    inside its own cell."""
    from itemscale.cli import main
    from itemscale.workflows import release_dir

    root = tmp_path_factory.mktemp("compare-page")
    data, model = release_dir(), "Qwen2.5-VL-7B"
    argv = ["import", "table", "--wide", "--id-column", "sample_id", "--model", model]
    argv += ["--answer-key", str(data / "V1_short_answer_key.csv"), "-o", str(root / "run")]
    assert main([*argv, str(data / f"{model}_V1_short_predictions_wide.csv")]) == 0
    page_path = root / "compare.html"
    argv = ["compare", str(root / "run"), "--config", "64f_151k", "--config", "64f_235k"]
    assert main([*argv, "--bootstrap", "0", "--html", str(page_path)]) == 0
    page = Page(browser, page_path.as_uri())
    lines = json.loads(
        page.eval(
            "JSON.stringify(Array.prototype.map.call("
            "document.querySelectorAll('#setup tbody tr'), function (tr) {"
            " return Array.prototype.slice.call(tr.children, 0, 2).map(function (td) {"
            "  var r = document.createRange(); r.selectNodeContents(td);"
            "  var words = td.textContent.split(' ').length;"
            "  return [td.textContent, r.getClientRects().length, words]; }); }))"
        )
    )
    statuses = [row[1] for row in lines]
    assert any(text == "unknown" for text, _, _ in statuses)
    for text, boxes, _ in statuses:
        assert boxes == 1, f"status {text!r} broken over {boxes} lines"
    for text, boxes, words in (row[0] for row in lines):
        assert boxes <= words, f"field {text!r} broken inside a word"
    page.screenshot_of("#setup", SCREENSHOT_DIR / "itemscale_compare_setup.png")

"""The report says, beside the curve, which budget step looks like the same input."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from _support.tables import table
from itemscale.cli import main
from itemscale.core.responses import normalise_responses, write_run
from itemscale.report import build_artifact


def test_report_names_the_same_input_step_beside_the_curve(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    matrix, answers = {}, {}
    for i in range(50):
        row = [str(rng.choice(list("ABCD"))) for _ in range(2)]
        row.append(row[1])  # 32f answers exactly as 16f: the same input by the answers
        answers[f"q{i}"] = row
        matrix[f"q{i}"] = [float(a == "A") for a in row]
    videos = {f"q{i}": f"v{i // 2}" for i in range(50)}
    df = normalise_responses(table(matrix, answers=answers, videos=videos))
    run = tmp_path / "run"
    write_run(run, df, {"protocol": {"name": "same input"}, "started_at": "2026-01-01T00:00:00Z"})
    assert main(["cascade", str(run), "--bootstrap", "0"]) == 0  # RUN/cascade.json
    html = (build_artifact(run, bootstrap=0, seed=0) / "report.html").read_text(encoding="utf-8")
    sentence = "32f looks like the same input as 16f: identical answers on 50 of 50 items"
    assert html.count(sentence) == 2  # beside the curve, and in the prescription
    curve_end = html.index("</svg>", html.index("accuracy-curve"))
    assert curve_end < html.index(sentence) < html.index("heatmap", curve_end)
    # the prescription says why its terminal is 16f
    assert "Same input: terminal 16f, not 32f" in html

"""The demo ends with its finding in words, every number read from what it computed (not a
raw JSON blob)."""

from __future__ import annotations

from pathlib import Path

from _support.runs import make_run
from itemscale.cli.cmd_demo import demo_conclusion
from itemscale.measures import analyze_responses


def _intervention(recovered: int, of: int, broken: int, controls: int) -> dict[str, object]:
    return {
        "regressions": {"n_answered": of, "n_changed": recovered},
        "controls": {"n_answered": controls, "n_changed": broken},
        "net_accuracy_change_estimate": {"value": -0.09, "ci": [-0.265, 0.045]},
    }


def test_the_conclusion_says_what_the_numbers_say(tmp_path: Path) -> None:
    df, _ = make_run(tmp_path / "run", models=("m",), with_audit=False)
    measures = analyze_responses(df, n_boot=20, seed=0)
    block = measures["models"]["m"]
    n = block["n_items"]
    harmful = round(block["harmful_rate"]["value"] * n)
    terminal = round(block["terminal_regression_rate"]["value"] * n)
    cascade = {
        "results": [
            {
                "cost": {"sharing": "union"},
                "best_match": None,
            }
        ]
    }
    text = " ".join(
        demo_conclusion(
            measures,
            _intervention(4, 15, 3, 15),
            cascade,
            {"reproduced": 53, "published": 54},
        ).split()
    )
    first, last = block["axis"][0], block["axis"][-1]
    assert text.startswith(
        f"The accuracy curve rises from {100 * block['accuracy'][first]['value']:.1f} at {first}"
        f" to {100 * block['accuracy'][last]['value']:.1f} at {last}"
    )
    assert f"of the {n} items ({harmful}) are right at some budget and wrong at a larger" in text
    assert f"and {terminal} end wrong at the largest budget" in text
    assert "4 of 15 terminal regressions recover and 3 of 15 items that were right break" in text
    assert "most regressions are not sampling accidents" in text  # 4 of 15 is under half
    assert "No stopping policy both matches the terminal budget and saves frames (union" in text
    assert "53 of 54 published numbers are reproduced" in text
    # a saving that matches the terminal is named with its numbers
    cascade["results"][0]["best_match"] = {
        "policy": "learned",
        "cost_reduction": {"value": 0.5},
        "accuracy_change": {"value": 0.0},
    }
    text = " ".join(demo_conclusion(measures, _intervention(9, 15, 1, 15), cascade, {}).split())
    assert "The best stopping policy (learned) saves 50.0% of the terminal's frames" in text
    assert "not sampling accidents" not in text and "published" not in text


def _het(obs: float, add: float, ci: list[float], dec: tuple[float, float, list[float]]) -> dict:
    def s(v: float, c: list[float] | None = None) -> dict[str, object]:
        return {"value": v, "ci": c}

    return {
        "heterogeneity": {
            "observed": s(obs),
            "additive": s(add),
            "difference": s(obs - add, ci),
            "trajectories": {
                "decreasing": {
                    "observed": s(dec[0]),
                    "additive": s(dec[1]),
                    "difference": s(dec[0] - dec[1], dec[2]),
                }
            },
        }
    }


def test_the_headline_sets_the_harmful_rate_beside_the_additive_world() -> None:
    from itemscale.measures import additive_sentence

    fewer = additive_sentence(_het(0.425, 0.665, [-0.3, -0.1], (0.05, 0.02, [0.01, 0.05])))
    assert fewer is not None
    assert "gives 66.5% against the observed 42.5%" in fewer
    assert "fewer flips than chance" in fewer and "no evidence" in fewer
    assert "5.0% against 2.0% additive (more than chance: these are the items to audit)" in fewer
    tie = additive_sentence(_het(0.30, 0.31, [-0.05, 0.03], (0.02, 0.02, [-0.01, 0.01])))
    assert tie is not None and "no more than chance" in tie and "(within chance)" in tie
    more = additive_sentence(_het(0.40, 0.20, [0.1, 0.3], (0.1, 0.02, [0.05, 0.1])))
    assert more is not None and "some items are hurt by a larger budget itself" in more
    assert additive_sentence({"heterogeneity": {"skipped": "needs two budgets"}}) is None
    assert additive_sentence({}) is None


def test_the_demo_conclusion_reconciles_the_harmful_rate(tmp_path: Path) -> None:
    df, _ = make_run(tmp_path / "run", models=("m",), with_audit=False)
    measures = analyze_responses(df, n_boot=20, seed=0)
    block = measures["models"]["m"]
    text = " ".join(demo_conclusion(measures, _intervention(1, 2, 0, 2), None, {}).split())
    add = block["heterogeneity"]["additive"]["value"]
    assert "An additive world with the same margins" in text
    assert f"gives {100 * add:.1f}% against the observed" in text

"""How `analyze` prints the inference measures (paired tests with Holm's adjustment, minimum
detectable effect, the additive-model test, the noise bound, churn between series): one line
per measure, glossed where the term first appears. Kept apart from `cmd_analyze` so each
piece stays one small function."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from ._format import points_text

Gloss = Callable[[str], str]


def p_text(value: float | str | None) -> str:
    """A p-value as printed: 3 significant digits, 'n/a', or 'not estimable'."""
    if isinstance(value, str):  # "not estimable"
        return value
    return "n/a" if value is None else f"{value:.3g}"


def _signed(stat: dict[str, Any] | None) -> str:
    text = points_text(stat)
    if stat and stat.get("value") is not None and stat["value"] >= 0:
        text = "+" + text
    return text


def print_paired_tests(block: dict[str, Any], out: TextIO, indent: str, gloss: Gloss) -> None:
    tests = block.get("paired_tests") or {}
    adjacent = tests.get("adjacent") or {}
    if not adjacent:
        return
    print(
        f"{indent}paired tests (accuracy change, points; clustered McNemar p, Holm over the "
        f"{tests['n_family']} adjacent pairs; exact McNemar and video-bootstrap p beside):"
        f"{gloss('clustered test')}{gloss('Holm')}",
        file=out,
    )
    for family in ("adjacent", "requested"):
        lead = indent + "  "
        if family == "requested" and tests.get("requested"):
            print(f"{lead}requested pairs (Holm over these):", file=out)
            lead += "  "
        for arrow, t in (tests.get(family) or {}).items():
            verdict = {True: "holds", False: "does not hold"}.get(
                t["significant_after_holm"], "not estimable"
            )
            print(
                f"{lead}{arrow}: {_signed(t['difference'])}; clustered p="
                f"{p_text(t['clustered_mcnemar_p'])}, Holm {p_text(t['holm_p'])} ({verdict}); exact "
                f"p={p_text(t['exact_mcnemar_p'])}; bootstrap p={p_text(t['bootstrap_p'])}",
                file=out,
            )


def _figure(value: Any, text: Callable[[Any], str]) -> str:
    if isinstance(value, str):  # "not estimable"
        return value
    return "n/a" if value is None else text(value)


def print_power(block: dict[str, Any], out: TextIO, indent: str, gloss: Gloss) -> None:
    power = block.get("power") or {}
    axes = power.get("axes") or {}
    if not axes:
        return
    target = 100 * power["target"]
    parts = []
    for axis, a in axes.items():
        mde = _figure(a["mde"], lambda v: f"{100 * v:.1f} points")
        need = _figure(a["videos_needed"], lambda v: f"{v:,} videos")
        parts.append(f"{axis} {mde} ({target:.1f} points needs {need})")
    print(
        f"{indent}minimum detectable effect ({100 * power['power']:.0f}% power, "
        f"{100 * power['alpha']:.0f}% two-sided, clustered, {power['n_videos']} videos): "
        + "; ".join(parts)
        + gloss("minimum detectable effect"),
        file=out,
    )


def print_heterogeneity(h: dict[str, Any] | None, out: TextIO, indent: str, gloss: Gloss) -> None:
    if not h:
        return
    if "skipped" in h:
        print(f"{indent}additive model: not tested ({h['skipped']})", file=out)
        return
    print(
        f"{indent}additive model (item + budget, no interaction): harmful "
        f"{points_text(h['observed'])} observed vs {points_text(h['additive'])} additive; "
        f"difference {_signed(h['difference'])}, p={p_text(h['p_value'])} "
        f"({h['n_null']} parametric draws){gloss('additive model')}",
        file=out,
    )
    shares = ", ".join(
        f"{name} {100 * t['observed']['value']:.1f} vs {100 * t['additive']['value']:.1f} "
        f"(p={p_text(t['p_value'])})"
        for name, t in h["trajectories"].items()
    )
    print(f"{indent}  by trajectory, observed vs additive: {shares}", file=out)
    noise = h.get("noise")
    if noise:
        print(
            f"{indent}noise bound (repeats): test-retest noise makes at most "
            f"{points_text(noise['noise_bound'])} harmful; observed minus bound "
            f"{_signed(noise['difference'])}, one-sided p={p_text(noise['p_value'])}"
            f"{gloss('noise bound')}",
            file=out,
        )


def print_inference(block: dict[str, Any], out: TextIO, indent: str, gloss: Gloss) -> None:
    """The lines a binary block adds after its flips."""
    print_paired_tests(block, out, indent, gloss)
    print_power(block, out, indent, gloss)
    print_heterogeneity(block.get("heterogeneity"), out, indent, gloss)


def print_churn(block: dict[str, Any], out: TextIO, gloss: Gloss) -> None:
    """Churn between each pair of series of a model, one line per shared budget."""
    for pair, churn in (block.get("churn") or {}).items():
        print(
            f"  churn {pair} at equal budgets ({churn['n_common_items']} items; answers "
            f"changed, accuracy change, flips down / up, points){gloss('churn')}",
            file=out,
        )
        for budget, b in churn["budgets"].items():
            line = (
                f"    {budget}: answers {points_text(b['answer_change'])}; accuracy "
                f"{_signed(b['accuracy_difference'])}; {points_text(b['flip_down'])} / "
                f"{points_text(b['flip_up'])}"
            )
            floors = [b[k] for k in ("noise_floor_p", "noise_floor_q") if k in b]
            if floors:
                line += "; noise floor " + " / ".join(points_text(f) for f in floors)
            print(line, file=out)
            if b.get("selector"):
                for text in selector_lines(b["selector"]):
                    print(f"      {text}", file=out)


def selector_lines(v: dict[str, Any]) -> list[str]:
    """A selector's series against uniform sampling at one budget, in plain words."""
    headroom = v["n_uniform_wrong_everywhere"]
    lines = [
        f"selector {v['selector_series']} vs {v['uniform_series']}: accuracy "
        f"{points_text(v['accuracy_selector'])} vs {points_text(v['accuracy_uniform'])} "
        f"(change {_signed(v['accuracy_difference'])}, clustered McNemar p "
        f"{p_text(v['clustered_mcnemar_p'])}); fixes {v['n_fixed']}, breaks {v['n_broken']}",
        f"of the {headroom} items uniform gets wrong at every budget it ran, the selector gets "
        f"{v['n_headroom_fixed']} right"
        + (f" ({points_text(v['headroom_share'])}% of that headroom)" if headroom else ""),
    ]
    if v.get("same_input"):
        same = v["same_input"]
        lines.append(
            f"looks like the same input as {v['uniform_series']}: identical answers on "
            f"{same['identical']} of {same['items']} items: was the selection applied?"
        )
    recorded = v.get("n_frames_recorded", 0)
    if recorded and v.get("n_same_frames") == recorded:
        lines.append(f"the selection's frames are uniform's on all {recorded} items")
    elif recorded:
        lines.append(
            f"frames differ from uniform's on {recorded - v['n_same_frames']} of {recorded} items"
        )
    return lines

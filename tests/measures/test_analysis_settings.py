"""`AnalysisSettings` holds every `analyze` option with its check once: each refusal names the
setting from Python and the flag from the command line, and the command, `itemscale.analyze`
and `analyze_responses` give the same result for the same settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

import itemscale
from _support.runs import make_run
from itemscale.analysis.measures import (
    CI_METHODS,
    DEFAULT_BOOTSTRAP,
    DEFAULT_CI,
    DEFAULT_DRAWS,
    DEFAULT_POWER_TARGET,
    AnalysisSettings,
    UnknownConfigError,
    analyze_responses,
)
from itemscale.cli import main

#: (setting, bad value, words of the message, the command's flags for the same value)
REFUSED = [
    ("bootstrap", -1, "resamples must be >= 0 (got -1)", ["--bootstrap", "-1"]),
    ("heterogeneity_draws", -2, "resamples must be >= 0 (got -2)", ["--heterogeneity-draws", "-2"]),
    ("power_target", 0.0, "give points in (0, 100] (got 0.0)", ["--power-target", "0"]),
    ("power_target", 150.0, "give points in (0, 100] (got 150.0)", ["--power-target", "150"]),
    ("configs", ("8f", "8f"), "configuration '8f' is named twice", ["--configs", "8f,8f"]),
    ("test_pairs", (("8f", " "),), "an empty configuration label", None),
    ("by", ("duration", ""), "an empty attribute", None),
    ("eps", float("nan"), "must be a number (got nan)", ["--eps", "nan"]),
    ("ci", "bootstrap", "Input should be 'bca' or 'percentile'", None),
    ("metric", "bleu", "Input should be 'score'", None),
    ("workers", 0, "give at least one worker thread (got 0)", ["--workers", "0"]),
]


def test_the_defaults_are_the_commands() -> None:
    s = AnalysisSettings()
    assert s.bootstrap == DEFAULT_BOOTSTRAP == 1000
    assert s.ci == DEFAULT_CI and set(CI_METHODS) == {"bca", "percentile"}
    assert s.power_target == 100 * DEFAULT_POWER_TARGET == 2.0
    assert s.heterogeneity_draws == DEFAULT_DRAWS
    assert (s.configs, s.axis, s.by, s.test_pairs, s.metric, s.eps) == (
        None,
        None,
        (),
        (),
        "score",
        0.1,
    )


@pytest.mark.parametrize(("setting", "value", "words", "flags"), REFUSED)
def test_each_refusal_names_the_setting(
    setting: str, value: object, words: str, flags: list[str] | None
) -> None:
    with pytest.raises(ValidationError) as caught:
        AnalysisSettings(**{setting: value})  # type: ignore[arg-type]
    (error,) = caught.value.errors()
    assert error["loc"][0] == setting
    assert words in str(error["msg"])


@pytest.mark.parametrize(
    ("setting", "value", "words", "flags"), [r for r in REFUSED if r[3] is not None]
)
def test_the_command_names_the_flag_before_reading_the_run(
    setting: str,
    value: object,
    words: str,
    flags: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The run folder does not exist: the settings are refused first, with the flag's name."""
    assert main(["analyze", str(tmp_path / "nowhere"), *flags]) == 2
    err = capsys.readouterr().err
    assert f"{flags[0]}: " in err and words in err, err
    assert "nowhere" not in err


def test_settings_are_frozen_and_forbid_unknown_options() -> None:
    s = AnalysisSettings(bootstrap=10)
    with pytest.raises(ValidationError):
        s.bootstrap = 20  # type: ignore[misc]
    with pytest.raises(ValidationError, match="boot\n  Extra inputs are not permitted"):
        AnalysisSettings(boot=10)  # type: ignore[call-arg]


def test_n_boot_is_the_retired_name_of_bootstrap() -> None:
    with pytest.deprecated_call(match=r"AnalysisSettings\(n_boot=\.\.\.\) is deprecated"):
        assert AnalysisSettings(n_boot=7) == AnalysisSettings(bootstrap=7)  # type: ignore[call-arg]
    with pytest.raises(ValidationError) as caught, pytest.deprecated_call():
        AnalysisSettings(n_boot=-1)  # type: ignore[call-arg]
    assert caught.value.errors()[0]["loc"] == ("bootstrap",)


def test_labels_are_stripped() -> None:
    s = AnalysisSettings(configs=(" 8f", "16f "), test_pairs=(("8f ", " 16f"),), by=(" d",))
    assert s.configs == ("8f", "16f")
    assert s.test_pairs == (("8f", "16f"),)
    assert s.by == ("d",)


def test_settings_or_keywords_not_both(tmp_path: Path) -> None:
    df, _ = make_run(tmp_path / "run", n_items=6, with_audit=False)
    with pytest.raises(TypeError, match="not both \\(keywords given: seed\\)"):
        analyze_responses(df, AnalysisSettings(bootstrap=0), seed=3).to_json()


def test_the_command_python_and_settings_agree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    df, _ = make_run(run, n_items=12, with_audit=False)
    settings = AnalysisSettings(bootstrap=40, seed=5, ci="percentile", power_target=5.0)
    out = tmp_path / "m.json"
    flags = ["--bootstrap", "40", "--seed", "5", "--ci", "percentile", "--power-target", "5"]
    assert main(["analyze", str(run), *flags, "--json", str(out)]) == 0
    capsys.readouterr()
    from_python = itemscale.analyze(run, settings).to_json()
    from_keywords = itemscale.analyze(
        run, bootstrap=40, seed=5, ci="percentile", power_target=5.0
    ).to_json()
    import json

    from_command = json.loads(out.read_text(encoding="utf-8"))
    assert from_python == from_keywords == from_command
    assert from_python["bootstrap"]["bootstrap"] == 40
    model = next(iter(from_python["models"].values()))
    assert model["power"]["target"] == pytest.approx(0.05)
    assert (
        analyze_responses(df, settings).to_json()
        == analyze_responses(df, bootstrap=40, seed=5, ci="percentile", power_target=5.0).to_json()
    )


def test_a_label_the_run_lacks_is_still_the_runs_error(tmp_path: Path) -> None:
    """What needs the data (a label the run has not) is checked against it, after the
    settings."""
    df, _ = make_run(tmp_path / "run", n_items=6, with_audit=False)
    with pytest.raises(UnknownConfigError, match="unknown configuration label"):
        analyze_responses(df, AnalysisSettings(bootstrap=0, configs=("999f",))).to_json()

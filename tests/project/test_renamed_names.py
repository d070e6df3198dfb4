"""Names retired by issue 27 ("one name per concept", docs/glossary.md) still work for one
release: each resolves to what its new name is, with a DeprecationWarning that names it."""

from __future__ import annotations

import importlib

import pytest

#: (module, retired name, its one name now)
RENAMED_MODULE_NAMES = [
    ("itemscale.responses", "normalize_answer", "normalise_answer"),
    ("itemscale.protocol", "POLICY_NAMES", "SAMPLING_POLICY_NAMES"),
    ("itemscale.protocol", "PolicyName", "SamplingPolicyName"),
    ("itemscale.protocol", "PHASED_POLICIES", "PHASED_SAMPLING_POLICIES"),
    ("itemscale.policies", "POLICY_NAMES", "STOPPING_RULE_NAMES"),
    ("itemscale.policies", "POLICY_DESCRIPTIONS", "STOPPING_RULE_DESCRIPTIONS"),
    ("itemscale.policies", "run_policies", "run_stopping_rules"),
]


@pytest.mark.parametrize(("module", "old", "new"), RENAMED_MODULE_NAMES)
def test_a_retired_module_name_warns_and_is_the_new_one(module: str, old: str, new: str) -> None:
    face = importlib.import_module(module)
    with pytest.deprecated_call(match=rf"{module}\.{old} is deprecated: use {module}\.{new}"):
        value = getattr(face, old)
    assert value is getattr(face, new)
    assert old not in face.__all__ and new in face.__all__


def test_a_retired_keyword_warns_and_means_the_new_one() -> None:
    from itemscale.policies import intervention_configuration
    from itemscale.protocol import Configuration

    terminal = Configuration(frames=8)
    now = intervention_configuration(terminal, intervention="phase-shift")
    with pytest.deprecated_call(
        match=r"intervention_configuration\(policy=\.\.\.\) is deprecated: use "
        r"intervention_configuration\(intervention=\.\.\.\)"
    ):
        before = intervention_configuration(terminal, policy="phase-shift")  # type: ignore[call-arg]
    assert before == now
    with pytest.raises(TypeError, match="got both policy= and intervention="):
        intervention_configuration(terminal, policy="nested", intervention="nested")  # type: ignore[call-arg]


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    face = importlib.import_module("itemscale.responses")
    with pytest.raises(AttributeError, match="has no attribute 'normalise_answers'"):
        face.normalise_answers  # noqa: B018

"""A command's flags -> its library settings object, and the options several commands share.

Each rule about a combination of options lives once, in the settings model; the command shows
its message with the flag names, so a command and a notebook refuse an input with one reason."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from . import CommandError

SettingsT = TypeVar("SettingsT", bound=BaseModel)


def settings_from_flags(
    settings_type: type[SettingsT], flags: Mapping[str, str] | None = None, /, **values: Any
) -> SettingsT:
    """`settings_type(**values)`; a validation error becomes a `CommandError` naming each
    setting's flag (`flags` maps a setting to its flag where it is not `--setting-name`)."""
    names = flags or {}

    def flag(setting: str) -> str:
        return names.get(setting, "--" + setting.replace("_", "-"))

    def as_flags(match: re.Match[str]) -> str:
        setting, value = match[1], match[2]
        return f"{flag(setting)} {value}" if setting in values else match[0]

    try:
        return settings_type(**values)
    except ValidationError as exc:
        lines = []
        for error in exc.errors():
            message = str(error["msg"]).removeprefix("Value error, ")
            message = re.sub(r"\b(\w+)='([^']*)'", as_flags, message)
            loc = [str(part) for part in error["loc"]]
            lines.append(f"{flag(loc[0])}: {message}" if loc else message)
        raise CommandError("; ".join(lines)) from None


def add_bootstrap_arguments(
    parser: Any, resamples: str = "resamples", seed: str | None = "bootstrap seed (default 0)"
) -> None:
    """`--bootstrap B` and (unless `seed`, its help, is None) `--seed`."""
    from ..analysis.measures import DEFAULT_BOOTSTRAP

    parser.add_argument(
        "--bootstrap",
        type=int,
        default=DEFAULT_BOOTSTRAP,
        metavar="B",
        help=f"{resamples} (0: none; default {DEFAULT_BOOTSTRAP})",
    )
    if seed is not None:
        parser.add_argument("--seed", type=int, default=0, help=seed)


def add_rerun_floor_argument(parser: Any) -> None:
    parser.add_argument(
        "--rerun-floor",
        type=float,
        default=None,
        metavar="PERCENT",
        help="the share of answers a rerun of one input moves on this set-up, as you know it "
        "(percent, e.g. 0.3): the same-input verdicts grade answers against it, labelled "
        "'stated' (default: the floor the run's repeats and reruns measure, else none: "
        "identical answers or cannot tell; docs/compare.md, 'Reruns')",
    )

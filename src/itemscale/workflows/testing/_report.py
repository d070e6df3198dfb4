"""The failure of a conformance check: every check that failed, listed, in one AssertionError
(so pytest shows it as a failed assertion, and a plugin's test needs no helper of its own)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class ConformanceError(AssertionError):
    """A plugin fails one or more of itemscale's conformance checks. `failures` lists each, in
    the order checked; the message names the plugin and every failure."""

    def __init__(self, what: str, failures: list[str]) -> None:
        self.what = what
        self.failures: tuple[str, ...] = tuple(failures)
        lines = "\n".join(f"  - {failure}" for failure in failures)
        count = "check" if len(failures) == 1 else "checks"
        super().__init__(f"{what} fails {len(failures)} conformance {count}:\n{lines}")


class Findings:
    """The failures found so far; `done()` raises them all at once, or returns."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.failures: list[str] = []

    def fail(self, message: str) -> None:
        self.failures.append(message)

    def check(self, ok: bool, message: str) -> bool:
        if not ok:
            self.failures.append(message)
        return ok

    def instance_of(self, thing: object, kind: type[T], name: str) -> T:
        """`thing` as a `kind` (`name` is its public name), or this one failure raised at
        once: nothing else can be checked on something of another type."""
        if isinstance(thing, kind):
            return thing
        self.fail(f"is a {type(thing).__name__}, not an {name}")
        raise ConformanceError(self.what, self.failures)

    def attempt(self, doing: str, call: Callable[..., Any], *args: Any) -> tuple[bool, Any]:
        """`call(*args)`, or a failure saying what raised (any exception: a plugin's bug is a
        finding, never a crash of the check)."""
        try:
            return True, call(*args)
        except Exception as exc:  # the finding names the exception
            text = " ".join(str(exc).split())
            self.failures.append(f"{doing} raised {type(exc).__name__}: {text}")
            return False, None

    def done(self) -> None:
        if self.failures:
            raise ConformanceError(self.what, self.failures)

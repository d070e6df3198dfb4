"""How a model decodes: the one type a protocol's `[decoding]` table is read into and every
backend request carries. It lives with the protocol, below the backends, because the protocol
file is where decoding is written down; `itemscale.collect.models` re-exports it.
"""

from __future__ import annotations

from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, field_validator


class DecodingCanonical(TypedDict):
    """`DecodingSettings` as a cell's identity hashes them (`DecodingSettings.canonical`)."""

    max_new_tokens: int
    temperature: float
    top_p: float
    seed: int
    score_options: bool


class DecodingSettings(BaseModel):
    """How the model decodes: the one type a protocol's `[decoding]` table is read into and
    every backend request carries; part of a cell's identity (`canonical()`).

    A backend called directly decodes up to 16 new tokens, a protocol that leaves
    `max_new_tokens` out 64 (`PROTOCOL_MAX_NEW_TOKENS`: a sweep generates open answers too).
    `top_p` None (what older run.json files recorded) reads as 1.0, no cut-off. In a sweep
    `seed` is the repeat's (`Protocol.seeds`). `score_options`: for multiple-choice items, also
    read the next-token distribution over the option letters; at most
    `SCORE_ONLY_MAX_NEW_TOKENS` new tokens, the answer is the most probable letter.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: a whole number (`True` or `"16"` is refused, as every count of a protocol is)
    max_new_tokens: StrictInt = Field(default=16, gt=0, le=65536)
    temperature: float = Field(default=0.0, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    seed: int = 0
    score_options: StrictBool = True

    @field_validator("top_p", mode="before")
    @classmethod
    def _none_is_no_cutoff(cls, value: Any) -> Any:
        return 1.0 if value is None else value

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def canonical(self) -> DecodingCanonical:
        """The settings as the cell identity hashes them (every field, JSON types: what
        `model_dump(mode="json")` gives, field by field)."""
        return {
            "max_new_tokens": self.max_new_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
            "score_options": self.score_options,
        }


class DecodingRecord(TypedDict):
    """A protocol's decoding settings as run.json records them: every one but the seed."""

    max_new_tokens: int
    temperature: float
    top_p: float
    score_options: bool

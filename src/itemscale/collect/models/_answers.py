"""Turning a backend's raw output into the response's answer, option probabilities and status,
shared so a local and a served model answering the same text get the same parsed answer.
Option probabilities are renormalised over the option letters only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from ...core.responses import NOANSWER, Status, TaskKind, extract_choice
from ..items import Item
from ..protocol import DecodingSettings
from ._types import SCORE_ONLY_MAX_NEW_TOKENS, VideoRequest, VideoResponse


def letter_probs_from_logprobs(
    candidates: Iterable[tuple[str, float]], letters: str
) -> dict[str, float] | None:
    """Option probabilities from (token text, log-probability) pairs of one position: tokens
    that are a letter once whitespace is stripped (`"A"`, `" A"`, `"\\nA"`) pool their mass,
    as tokenizers spell one answer several ways. None when no option letter is a candidate."""
    mass = dict.fromkeys(letters, 0.0)
    for token, logprob in candidates:
        letter = token.strip()
        if letter in mass and math.isfinite(logprob):
            mass[letter] += math.exp(logprob)
    total = sum(mass.values())
    if total <= 0.0:
        return None
    return {letter: value / total for letter, value in mass.items()}


def finish_response_fields(
    item: Item,
    raw_text: str,
    option_probs: Mapping[str, float] | None,
    decoding: DecodingSettings,
) -> tuple[str | None, float | None, Status]:
    """(answer, confidence, status) for a completed generation. Multiple choice: the most
    probable letter when at most one token was asked for and the probabilities are known, else
    what the shared extractor reads from the text (NOANSWER, never a guess, when it names no
    option). Open tasks carry no parsed answer."""
    if item.task_kind != TaskKind.MCQA:
        return None, None, Status.OK
    if option_probs is not None and decoding.max_new_tokens <= SCORE_ONLY_MAX_NEW_TOKENS:
        answer = max(option_probs, key=lambda letter: option_probs[letter])
    else:
        answer = extract_choice(raw_text, item.options)
    if answer == NOANSWER:
        return NOANSWER, None, Status.NOANSWER
    confidence = option_probs.get(answer) if option_probs is not None else None
    return answer, confidence, Status.OK


def completed_response(
    request: VideoRequest,
    raw_text: str,
    option_probs: dict[str, float] | None,
    *,
    latency_s: float,
    visual_tokens: int | None,
    pixels: int | None,
    chosen: str | None = None,
) -> VideoResponse:
    """The response to a request whose generation completed, built the same way by every
    backend. `chosen`: the option letter a backend picked without generating (option-likelihood
    scoring); it is the answer, and its probability the confidence."""
    answer: str | None
    confidence: float | None
    if chosen is not None:
        if option_probs is None or chosen not in option_probs:
            raise ValueError(f"chosen option {chosen!r} has no probability")
        answer, confidence, status = chosen, option_probs[chosen], Status.OK
    else:
        answer, confidence, status = finish_response_fields(
            request.item, raw_text, option_probs, request.decoding
        )
    return VideoResponse(
        raw_text=raw_text,
        answer=answer,
        option_probs=option_probs,
        confidence=confidence,
        visual_tokens=visual_tokens,
        latency_s=latency_s,
        status=status,
        error=None,
        pixels=pixels,
        effective_frames=None if request.frames is None else int(request.frames.array.shape[0]),
        scoring_rule=(
            ("likelihood" if chosen is not None else "letter")
            if request.item.task_kind == TaskKind.MCQA
            else None
        ),
    )

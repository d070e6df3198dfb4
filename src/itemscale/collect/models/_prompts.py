"""Prompt templates: how an item becomes chat messages, the same for every backend.

The template version is part of a cell's identity, so changing any wording here must bump
`PROMPT_TEMPLATE_VERSION`. Each backend inserts its own video (or image) parts at the start of
the first user message.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from ...core.responses import TaskKind
from ..items import Item

PROMPT_TEMPLATE_VERSION = "itemscale-prompt-1"

MCQA_INSTRUCTION = "Answer with the option's letter from the given choices directly."
OPEN_QA_INSTRUCTION = "Answer the question with a short phrase."
SUMMARY_INSTRUCTION = "List the events of the video in order."


class ChatMessage(TypedDict):
    role: Literal["system", "user", "assistant"]
    text: str


def format_options(item: Item) -> str:
    return "\n".join(
        f"{letter}. {text}" for letter, text in zip(item.option_letters, item.options, strict=True)
    )


def current_turn_text(item: Item) -> str:
    """The text of the user turn the model must answer now."""
    if item.task_kind == TaskKind.MCQA:
        return f"{item.question}\n{format_options(item)}\n{MCQA_INSTRUCTION}"
    if item.task_kind == TaskKind.SUMMARY:
        return f"{item.question}\n{SUMMARY_INSTRUCTION}" if item.question else SUMMARY_INSTRUCTION
    if item.task_kind == TaskKind.OPEN_QA:
        return f"{item.question}\n{OPEN_QA_INSTRUCTION}"
    return item.question  # dialogue: the current user turn, history given before it


def cloze_turn_text(item: Item) -> str:
    """The current turn of a multiple-choice item asked as an open question (option-likelihood
    scoring): the options are not listed, as in lm-evaluation-harness, so the score is the
    model's belief in each answer, not its ability to map an answer to a letter."""
    return f"{item.question}\n{OPEN_QA_INSTRUCTION}"


def build_messages(item: Item, *, cloze: bool = False) -> list[ChatMessage]:
    """Chat messages for `item`: the fixed dialogue history (if any), then the current turn;
    the first is always a user message, so backends can attach the video to it."""
    messages: list[ChatMessage] = [
        ChatMessage(role=turn.role, text=turn.text) for turn in item.history
    ]
    if messages and messages[0]["role"] != "user":
        raise ValueError(f"item {item.item_id}: dialogue history must start with a user turn")
    text = cloze_turn_text(item) if cloze else current_turn_text(item)
    messages.append(ChatMessage(role="user", text=text))
    return messages

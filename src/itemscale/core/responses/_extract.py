"""The one multiple-choice answer extractor, shared by importers and model backends.

Extraction decides accuracy, so it must never guess: an output that names no option, names two
different options, refuses, or is an error message becomes `NOANSWER`, which the measures count
as a wrong answer and report separately. Common extractors (lmms-eval's `extract_mcq_answer`
among them) fall back to "the first letter of the text", which turns "I don't know" into "I",
an empty output into "A" (the empty string is a substring of every option) and "A man is
walking" into "A". `EXTRACTOR_VERSION` goes into the cell identity, so changing any rule below
means bumping it.

The rules, in order:

1. Empty, or an error/failure message at the start -> NOANSWER.
2. `<think>...</think>` is dropped; an `<answer>...</answer>` tag (else a `\\boxed{...}`), when
   present, is all we read (the last one).
3. Markdown emphasis (`**B**`, `` `B` ``) is removed.
4. Strong letter evidence: the whole output is a letter (`B`, `b`, `B.`, `(B)`, `[B]`); else a
   conclusion (`The answer is B`, `Answer: b`, `The correct choice is (D)`), which outranks
   options mentioned on the way; else a leading letter with an option marker (`B. Candles`,
   `B) Candles`, `(B) Candles`, `B: Candles`), an option mention (`Option C`) and parenthesised
   capitals anywhere (`... so (C).`). One distinct letter -> it; two -> NOANSWER.
5. The whole output equals one option's text (so "None of the above" is an answer when it is an
   option).
6. A refusal ("I don't know", "cannot determine", "none of the above", ...) -> NOANSWER.
7. Weak letter evidence: a standalone capital letter in prose (`I think B is right`), ignoring the
   article "A" and the pronoun "I" before a lower-case word. One distinct letter -> it.
8. Option text without the letter: exactly one option's text appears in the output (options that
   are part of a longer matched option do not count) -> that option.
9. Otherwise NOANSWER.

A letter outside the options (`E` with four options) is never accepted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from ._schema import NOANSWER

EXTRACTOR_VERSION: Final[str] = "2"

_ALL_LETTERS: Final[str] = "ABCDEFGHIJ"

_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.IGNORECASE | re.DOTALL)
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_EMPHASIS = re.compile(r"[*`]+|(?<!\w)_+|_+(?!\w)")
_ERROR_START = re.compile(
    r"^\s*[\[(]?\s*(?:error|exception|traceback|failed|failure|fail|timeout|timed out|"
    r"request failed|cuda out of memory|internal server error)\b",
    re.IGNORECASE,
)
_REFUSAL = re.compile(
    r"\b(?:i\s+(?:do\s*n[o']?t|don't|dont|cannot|can't|can\s*not|am\s+not\s+(?:sure|able))|"
    r"not\s+(?:sure|possible\s+to|enough\s+information)|unable\s+to|cannot\s+(?:be\s+)?determin|"
    r"can't\s+(?:be\s+)?determin|impossible\s+to|no\s+(?:correct\s+)?answer|"
    r"none\s+of\s+(?:the|these)|insufficient\s+information|unanswerable|unknown)",
    re.IGNORECASE,
)
# A letter token: a capital not followed by a word character or an apostrophe ("I'm").
_CAP = r"([A-J])(?![\w'’])"
# Lower-case letters only count when nothing but punctuation follows ("answer: b.").
_LOW = r"([a-j])(?=\s*(?:[.,;:)\]!]|$))"
_WHOLE = re.compile(r"^\s*[(\[]?\s*([A-Ja-j])\s*[)\]]?\s*[.:,;!]?\s*$")
_LEADING = re.compile(r"^\s*(?:\(\s*([A-Ja-j])\s*\)|\[\s*([A-Ja-j])\s*\]|([A-J])\s*[.:)\]])")
_PHRASE_TAIL = (
    r"(?i:\s+(?:is|would\s+be|should\s+be|will\s+be|must\s+be))?"
    r"\s*(?:[:=\-]\s*)?(?i:(?:is|would\s+be|should\s+be)\s+)?(?i:option\s+|choice\s+)?"
    rf"[(\[]?\s*(?:{_CAP}|{_LOW})"
)
# A conclusion ("The answer is C", "Final answer: c", "The correct option is D") outranks
# options merely mentioned on the way ("Option A shows apples, option C berries").
_CONCLUSION = re.compile(
    r"\b(?i:answer|(?:correct|best|right|final)\s+(?:option|choice))" + _PHRASE_TAIL
)
_MENTION = re.compile(r"\b(?i:option|choice)" + _PHRASE_TAIL)
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_PAREN = re.compile(r"\(\s*([A-J])\s*\)")
_STANDALONE = re.compile(rf"(?<![\w'’\-/]){_CAP}")
# "A" before a lower-case word is the article ("A man is ..."), "I" the pronoun ("I think"),
# except before the few words that only follow a letter ("A or D", "A is correct").
_ARTICLE_FOLLOWS = re.compile(
    r"\s+(?!(?:or|and|nor|is|was|seems|looks|appears|would|should|must|might|fits)\b)[a-z]"
)
_LOWER_WORD_FOLLOWS = re.compile(r"\s+[a-z]")
_OPTION_PREFIX = re.compile(r"^\s*[(\[]?\s*[A-Ja-j]\s*[)\].:]\s+")
_NON_WORD = re.compile(r"[^\w\s]")
_SPACES = re.compile(r"\s+")


def _pronoun_or_article(letter: str, text: str, end: int) -> bool:
    if letter == "I":
        return _LOWER_WORD_FOLLOWS.match(text, end) is not None
    return _ARTICLE_FOLLOWS.match(text, end) is not None


def _phrase_letters(pattern: re.Pattern[str], text: str) -> list[str]:
    letters: list[str] = []
    for m in pattern.finditer(text):
        cap, low = m.group(1), m.group(2)
        if cap is not None:
            # "The answer is A man ..." reads the article, not an option.
            if cap in "AI" and _pronoun_or_article(cap, text, m.end()):
                continue
            letters.append(cap)
        elif low is not None:
            letters.append(low.upper())
    return letters


def _strong_letters(text: str) -> set[str]:
    whole = _WHOLE.match(text)
    if whole:
        return {whole.group(1).upper()}
    concluded = set(_phrase_letters(_CONCLUSION, text))
    if concluded:
        return concluded
    found: set[str] = set()
    lead = _LEADING.match(text)
    if lead:
        found.add(next(g for g in lead.groups() if g is not None).upper())
    found.update(_phrase_letters(_MENTION, text))
    found.update(m.group(1) for m in _PAREN.finditer(text))
    return found


def _weak_letters(text: str) -> set[str]:
    found: set[str] = set()
    for m in _STANDALONE.finditer(text):
        letter = m.group(1)
        if letter in "AI" and _pronoun_or_article(letter, text, m.end()):
            continue
        found.add(letter)
    return found


def _norm(text: str) -> str:
    return _SPACES.sub(" ", _NON_WORD.sub(" ", text.lower())).strip()


def _option_texts(options: Sequence[str]) -> list[str]:
    return [_norm(_OPTION_PREFIX.sub("", str(opt), count=1)) for opt in options]


def _by_option_text(text: str, options: Sequence[str], *, whole_only: bool) -> str | None:
    if not options:
        return None
    texts = _option_texts(options)
    said = _norm(text)
    if not said:
        return None
    exact = [i for i, t in enumerate(texts) if t and t == said]
    if len(exact) == 1:
        return _ALL_LETTERS[exact[0]]
    if whole_only:
        return None
    padded = f" {said} "
    hits = [i for i, t in enumerate(texts) if t and f" {t} " in padded]
    # An option that is part of a longer matched option ("apples" in "apples and candles")
    # is explained by the longer one.
    hits = [i for i in hits if not any(j != i and f" {texts[i]} " in f" {texts[j]} " for j in hits)]
    if len(hits) == 1:
        return _ALL_LETTERS[hits[0]]
    return None


def extract_choice(text: str | None, options: Sequence[str]) -> str:
    """Return the option letter the output names, or `NOANSWER`.

    `options` are the option texts in letter order (an "A. " prefix is ignored). With no options
    any letter A-J is accepted and option-text matching is off; importers that cannot recover
    the options use this.
    """
    if len(options) > len(_ALL_LETTERS):
        raise ValueError(f"at most {len(_ALL_LETTERS)} options are supported, got {len(options)}")
    valid = _ALL_LETTERS[: len(options)] if options else _ALL_LETTERS
    if text is None:
        return NOANSWER
    body = _THINK.sub(" ", str(text))
    tags = _ANSWER_TAG.findall(body) or _BOXED.findall(body)
    if tags:
        body = tags[-1]
    body = _EMPHASIS.sub("", body).strip()
    if not body or _ERROR_START.match(body):
        return NOANSWER

    strong = _strong_letters(body)
    if strong:
        return strong.pop() if len(strong) == 1 and strong <= set(valid) else NOANSWER

    exact = _by_option_text(body, options, whole_only=True)
    if exact is not None:
        return exact
    if _REFUSAL.search(body):
        return NOANSWER

    weak = _weak_letters(body)
    if weak:
        return weak.pop() if len(weak) == 1 and weak <= set(valid) else NOANSWER

    by_text = _by_option_text(body, options, whole_only=False)
    return by_text if by_text is not None else NOANSWER

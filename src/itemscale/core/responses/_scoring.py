"""Scores for open answers against reference texts: token F1, ROUGE-L and exact match.

Token F1 and exact match follow the SQuAD script's normalisation, and ROUGE-L is Google's
`rouge-score` (its tokeniser, no stemming), because that is what open-ended video QA papers
report. Every score is the maximum over the accepted references. `score_open_answer` is the one
place that decides an open answer's scores and its `score`, for the sweep and every importer.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ._schema import ResponseRow

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = frozenset(string.punctuation)


def normalise_answer(text: str) -> str:
    """SQuAD normalisation: lower case, no punctuation, no articles, single spaces."""
    lowered = text.lower()
    no_punct = "".join(ch for ch in lowered if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", no_punct).split())


def _check(references: Sequence[str]) -> None:
    if isinstance(references, str):
        raise TypeError("references must be a sequence of strings, not one string")
    if len(references) == 0:
        raise ValueError("at least one reference is needed to score an answer")


def _f1(prediction_tokens: list[str], reference_tokens: list[str]) -> float:
    if not prediction_tokens or not reference_tokens:
        # SQuAD: an empty answer matches only an empty reference.
        return float(prediction_tokens == reference_tokens)
    common = Counter(prediction_tokens) & Counter(reference_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(prediction_tokens)
    recall = overlap / len(reference_tokens)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, references: Sequence[str]) -> float:
    """F1 of the multiset token overlap after SQuAD normalisation, max over references."""
    _check(references)
    pred = normalise_answer(prediction).split()
    return max(_f1(pred, normalise_answer(ref).split()) for ref in references)


def exact_match(prediction: str, references: Sequence[str]) -> float:
    """1.0 when the normalised prediction equals some normalised reference, else 0.0."""
    _check(references)
    pred = normalise_answer(prediction)
    return float(any(pred == normalise_answer(ref) for ref in references))


@lru_cache(maxsize=1)
def _rouge_scorer() -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)


def rouge_l(prediction: str, references: Sequence[str]) -> float:
    """ROUGE-L F-measure (longest common subsequence), max over references."""
    _check(references)
    scorer = _rouge_scorer()
    return max(float(scorer.score(ref, prediction)["rougeL"].fmeasure) for ref in references)


@dataclass(frozen=True)
class OpenAnswerScores:
    """An open answer's overlap scores against its references, each the maximum over them."""

    token_f1: float
    rouge_l: float
    exact_match: float

    @property
    def score(self) -> float:
        """An open answer's `score`: token F1, the number open-ended video QA papers report."""
        return self.token_f1

    def columns(self) -> dict[str, float]:
        """The response table's columns these scores fill: `score` and one per score."""
        return {
            "score": self.score,
            "token_f1": self.token_f1,
            "rouge_l": self.rouge_l,
            "exact_match": self.exact_match,
        }

    def row_columns(self) -> ResponseRow:
        """`columns()` typed as the part of a response row they fill (importers build rows)."""
        return ResponseRow(
            score=self.score,
            token_f1=self.token_f1,
            rouge_l=self.rouge_l,
            exact_match=self.exact_match,
        )


def score_open_answer(prediction: str, references: Sequence[str]) -> OpenAnswerScores:
    """Token F1, ROUGE-L and exact match of `prediction`, each its maximum over `references`."""
    return OpenAnswerScores(
        token_f1=token_f1(prediction, references),
        rouge_l=rouge_l(prediction, references),
        exact_match=exact_match(prediction, references),
    )

"""Open-answer scores against hand-computed values."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from itemscale.core.responses import (
    OpenAnswerScores,
    exact_match,
    normalise_answer,
    rouge_l,
    score_open_answer,
    token_f1,
)


def test_normalisation_drops_case_punctuation_and_articles() -> None:
    assert normalise_answer("The  Cat, sat on A mat!") == "cat sat on mat"
    assert normalise_answer("An apple") == "apple"
    # "a" inside a word is not an article
    assert normalise_answer("Banana anthem") == "banana anthem"


def test_token_f1_hand_computed() -> None:
    # pred tokens: cat sat on mat (4); ref: cat lay on mat (4); overlap cat,on,mat = 3
    # P = 3/4, R = 3/4, F1 = 0.75
    assert token_f1("the cat sat on the mat", ["the cat lay on a mat"]) == pytest.approx(0.75)
    # pred: red red ball (3); ref: red ball (2); multiset overlap red,ball = 2
    # P = 2/3, R = 1, F1 = 2*(2/3)/(5/3) = 0.8
    assert token_f1("red red ball", ["red ball"]) == pytest.approx(0.8)


def test_token_f1_takes_max_over_references() -> None:
    # ref 1: no overlap -> 0; ref 2: "dog" vs "a dog running": pred dog(1), ref dog running(2)
    # P=1, R=1/2, F1 = 2/3
    assert token_f1("a dog", ["cat", "a dog running"]) == pytest.approx(2 / 3)


def test_token_f1_empty_cases() -> None:
    assert token_f1("", ["something"]) == 0.0
    assert token_f1("the", ["a"]) == 1.0  # both normalise to nothing
    assert token_f1("cat", ["dog"]) == 0.0


def test_exact_match() -> None:
    assert exact_match("The Eiffel Tower.", ["eiffel tower"]) == 1.0
    assert exact_match("Eiffel", ["eiffel tower", "tower"]) == 0.0
    assert exact_match("tower", ["eiffel tower", "Tower!"]) == 1.0


def test_rouge_l_hand_computed() -> None:
    # rouge-score tokens: pred "the cat sat on the mat" (6), ref "the cat lay on a mat" (6)
    # LCS = the cat on mat (4): P = R = 4/6, F = 2/3
    assert rouge_l("the cat sat on the mat", ["the cat lay on a mat"]) == pytest.approx(2 / 3)
    # pred "w x y z" vs ref "w y": LCS 2, P = 2/4, R = 2/2, F = 2*0.5*1/1.5 = 2/3
    assert rouge_l("w x y z", ["w y"]) == pytest.approx(2 / 3)
    assert rouge_l("w x y z", ["q", "w x y z"]) == pytest.approx(1.0)


def test_references_must_be_a_nonempty_sequence() -> None:
    with pytest.raises(ValueError, match="at least one reference"):
        token_f1("x", [])
    with pytest.raises(TypeError, match="not one string"):
        rouge_l("x", "x")


def test_score_open_answer_takes_each_score_at_its_own_best_reference() -> None:
    # pred "red ball blue box" (4 tokens)
    # ref 1 "box blue ball red": the same multiset, so token F1 = 1; reversed order, so the
    #   longest common subsequence is 1 token: ROUGE-L P = R = 1/4, F = 1/4
    # ref 2 "red ball": token overlap 2, P = 2/4, R = 2/2, F1 = 2/3; LCS "red ball" = 2,
    #   ROUGE-L P = 2/4, R = 2/2, F = 2/3
    # so token F1 = 1 (ref 1), ROUGE-L = 2/3 (ref 2), no exact match; score is token F1
    scores = score_open_answer("red ball blue box", ["box blue ball red", "red ball"])
    assert scores == OpenAnswerScores(
        token_f1=pytest.approx(1.0), rouge_l=pytest.approx(2 / 3), exact_match=0.0
    )
    assert scores.columns() == {
        "score": pytest.approx(1.0),
        "token_f1": pytest.approx(1.0),
        "rouge_l": pytest.approx(2 / 3),
        "exact_match": 0.0,
    }
    # SQuAD normalisation drops "The" and the full stop: token F1 and exact match are 1; ROUGE-L
    # keeps the article: tokens "the red ball" vs "red ball", LCS 2, P = 2/3, R = 1, F = 0.8
    assert score_open_answer("The red ball.", ["blue", "red ball"]).columns() == {
        "score": 1.0,
        "token_f1": 1.0,
        "rouge_l": pytest.approx(0.8),
        "exact_match": 1.0,
    }
    with pytest.raises(ValueError, match="at least one reference"):
        score_open_answer("x", [])


words = st.lists(st.sampled_from(["red", "ball", "dog", "cat", "the", "runs"]), max_size=8)


@given(words, words)
def test_scores_are_fractions_and_identity_is_one(a: list[str], b: list[str]) -> None:
    pa, pb = " ".join(a), " ".join(b)
    for fn in (token_f1, rouge_l, exact_match):
        v = fn(pa, [pb])
        assert 0.0 <= v <= 1.0
    if normalise_answer(pa):
        assert token_f1(pa, [pa]) == 1.0
        assert exact_match(pa, [pa]) == 1.0
    # token F1 is symmetric in prediction and reference
    assert token_f1(pa, [pb]) == pytest.approx(token_f1(pb, [pa]))

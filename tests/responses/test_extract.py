"""The multiple-choice extractor against outputs models really write.

The rows marked `lmms` are outputs that lmms-eval's `extract_mcq_answer` (first-letter fallback,
"prediction in choice" substring test, leading-article match) or its Video-MME parser (first
capital A-D anywhere) reads as a wrong letter; here they give NOANSWER or the option named.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from itemscale.core.responses import EXTRACTOR_VERSION, NOANSWER, extract_choice

XMAS = ("Apples.", "Candles.", "Berries.", "The three kinds are of the same number.")
SOCKS = ("A. 1.", "B. 4.", "C. 2.", "D. 3.")
ACTIONS = (
    "A man is walking a dog",
    "A woman is riding a bike",
    "Two children are playing football",
    "None of the above",
)
FRUIT = ("Apples", "Apples and candles", "Candles", "Berries")

CASES: list[tuple[str | None, tuple[str, ...], str]] = [
    # plain letters in the usual shapes
    ("B", XMAS, "B"),
    ("B.", XMAS, "B"),
    ("b", XMAS, "B"),
    ("(B)", XMAS, "B"),
    ("[C]", XMAS, "C"),
    (" D \n", XMAS, "D"),
    ("B) Candles", XMAS, "B"),
    ("B. Candles.", XMAS, "B"),
    ("(B) Candles", XMAS, "B"),
    ("C: Berries", XMAS, "C"),
    ("The answer is B", XMAS, "B"),
    ("The answer is B.", XMAS, "B"),
    ("The best answer is (D).", XMAS, "D"),
    ("Answer: b", XMAS, "B"),
    ("answer: c.", XMAS, "C"),
    ("**B**", XMAS, "B"),
    ("The answer is **C**.", XMAS, "C"),
    ("`A`", XMAS, "A"),
    ("Option C", XMAS, "C"),
    ("The correct option is D.", XMAS, "D"),
    ("The correct choice would be (A) Apples.", XMAS, "A"),
    ("<answer>C</answer>", XMAS, "C"),
    (
        "<think>Maybe A, or B... the count of candles is larger.</think><answer>B</answer>",
        XMAS,
        "B",
    ),
    ("<think>A or D? I count them.</think>\nD.", XMAS, "D"),
    ("I think B is right.", XMAS, "B"),
    ("Option A shows apples and option C shows berries. Therefore, the answer is C.", XMAS, "C"),
    ("Final Answer: (B) Candles", XMAS, "B"),
    ("The correct option is D, not A.", XMAS, "D"),
    ("Counting the decorations... \\boxed{B}", XMAS, "B"),
    ("$\\boxed{C}$", XMAS, "C"),
    ("The answer is A, or maybe the answer is B.", XMAS, NOANSWER),
    ("After looking at the tree, it is C.", XMAS, "C"),
    ("A", ACTIONS, "A"),
    ("A.", ACTIONS, "A"),
    # option text without the letter
    ("Candles", XMAS, "B"),
    ("berries", XMAS, "C"),
    ("There are more candles than anything else.", XMAS, "B"),
    ("4", SOCKS, "B"),
    ("3.", SOCKS, "D"),
    ("Apples and candles", FRUIT, "B"),
    ("None of the above", ACTIONS, "D"),
    ("A woman is riding a bike.", ACTIONS, "B"),
    # no answer: refusals, errors, empties, conflicts  (lmms: extract_mcq_answer gives a letter)
    ("", XMAS, NOANSWER),  # lmms: "" is in every choice -> "A"
    ("   ", XMAS, NOANSWER),
    (None, XMAS, NOANSWER),
    ("I don't know.", XMAS, NOANSWER),  # lmms: "I"
    ("I'm not sure.", XMAS, NOANSWER),
    ("None of the above", XMAS, NOANSWER),  # lmms: "N"
    ("None of the options are correct.", XMAS, NOANSWER),
    ("It cannot be determined from the video.", XMAS, NOANSWER),
    ("Error: CUDA out of memory", XMAS, NOANSWER),  # lmms: "E" (first character)
    ("ERROR: request failed with status 500", XMAS, NOANSWER),
    ("Failed to obtain answer via API.", XMAS, NOANSWER),
    ("Traceback (most recent call last):", XMAS, NOANSWER),
    ("B or C", XMAS, NOANSWER),  # lmms: "B"
    ("Either A or D.", XMAS, NOANSWER),
    ("B. Although (C) is also possible.", XMAS, NOANSWER),  # lmms: "B"
    ("A man is walking a dog in the park.", XMAS, NOANSWER),  # lmms: "A" (the article)
    ("A man is walking a dog", ACTIONS, "A"),  # the same words, when they are option A's text
    ("The answer is a man walking a dog.", XMAS, NOANSWER),
    ("E", XMAS, NOANSWER),  # lmms accepts A-E whatever the option count
    ("The answer is E.", XMAS, NOANSWER),
    ("I", XMAS, NOANSWER),
    ("The video shows candles and berries on the tree.", XMAS, NOANSWER),  # two option texts
    ("Apples", FRUIT, "A"),
    # lmms-eval's Video-MME parser takes the first capital A-D anywhere: "C" of "Christmas",
    # "D" of "Doing"
    ("Christmas trees here carry mostly candles.", XMAS, "B"),
    ("Doing the count, apples.", XMAS, "A"),
    ("The tree is green.", XMAS, NOANSWER),
    ("Hmm", XMAS, NOANSWER),
]


@pytest.mark.parametrize(("text", "options", "expected"), CASES)
def test_extract_choice_table(text: str | None, options: tuple[str, ...], expected: str) -> None:
    assert extract_choice(text, options) == expected


def test_without_options_any_letter_is_accepted_but_not_text() -> None:
    assert extract_choice("The answer is H.", ()) == "H"
    assert extract_choice("Candles", ()) == NOANSWER


def test_too_many_options_is_an_error() -> None:
    with pytest.raises(ValueError, match="at most 10"):
        extract_choice("A", [str(i) for i in range(11)])


def test_version_is_a_nonempty_string() -> None:
    assert isinstance(EXTRACTOR_VERSION, str) and EXTRACTOR_VERSION


@given(st.text(max_size=80), st.integers(min_value=2, max_value=10))
def test_result_is_noanswer_or_a_valid_letter(text: str, n: int) -> None:
    options = [f"option text {i}" for i in range(n)]
    got = extract_choice(text, options)
    assert got == NOANSWER or got in "ABCDEFGHIJ"[:n]


@given(st.sampled_from("ABCD"), st.sampled_from(["{}", "{}.", "({})", "Answer: {}", "**{}**"]))
def test_every_plain_form_round_trips(letter: str, form: str) -> None:
    assert extract_choice(form.format(letter), XMAS) == letter


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A is correct.", "A"),
        ("Either A or C", NOANSWER),
        ("I think A.", "A"),
        ("I would say B.", "B"),
    ],
)
def test_article_and_pronoun_rules(text: str, expected: str) -> None:
    assert extract_choice(text, XMAS) == expected

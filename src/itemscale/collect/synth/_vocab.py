"""The suite's closed visual and verbal vocabulary: few enough names for a tiny model trained
on CPU to learn, colours that survive yuv420p chroma subsampling, and bitmap glyphs rather than
a system font, so every machine renders the same pixels.
"""

from __future__ import annotations

from typing import Final

#: Colour name -> RGB. Names are the words questions and answers use.
COLOURS: Final[dict[str, tuple[int, int, int]]] = {
    "red": (225, 30, 30),
    "green": (30, 190, 50),
    "blue": (40, 80, 235),
    "yellow": (240, 220, 30),
    "purple": (165, 50, 215),
    "orange": (250, 140, 20),
    "cyan": (20, 205, 225),
}

SHAPES: Final[tuple[str, ...]] = ("circle", "square", "triangle", "diamond")

#: Plain dark backgrounds: every colour above stands out against each of them.
BACKGROUNDS: Final[tuple[tuple[int, int, int], ...]] = ((30, 30, 30), (55, 55, 60), (20, 30, 50))

SIGN_PAPER: Final[tuple[int, int, int]] = (245, 245, 245)
SIGN_INK: Final[tuple[int, int, int]] = (10, 10, 10)

#: Words the sign may show (lower case in answers, upper case on the sign).
SIGN_WORDS: Final[tuple[str, ...]] = ("cat", "dog", "sun", "box", "car", "hat", "bus", "pen")

#: Counts as words: answers and options use these, never digits, so counts and sign numbers
#: do not share tokens.
COUNT_WORDS: Final[tuple[str, ...]] = ("zero", "one", "two", "three", "four", "five", "six")

#: Groups of four digits that a low-resolution view confuses with each other. A sign-number
#: question's options differ only in one digit position, all four from one group, so no option
#: is the "centre" of the others and text alone cannot single out the answer.
DIGIT_CONFUSIONS: Final[tuple[str, ...]] = ("0689", "1479", "2357", "3568")

#: 5x7 bitmap glyphs ('#' = ink), one string of 7 rows of 5 columns each.
GLYPHS: Final[dict[str, tuple[str, ...]]] = {
    "0": (".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."),
    "1": ("..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."),
    "2": (".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"),
    "3": ("####.", "....#", "....#", ".###.", "....#", "....#", "####."),
    "4": ("...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."),
    "5": ("#####", "#....", "####.", "....#", "....#", "#...#", ".###."),
    "6": ("..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."),
    "7": ("#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."),
    "8": (".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."),
    "9": (".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."),
    "A": (".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"),
    "B": ("####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."),
    "C": (".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."),
    "D": ("####.", "#...#", "#...#", "#...#", "#...#", "#...#", "####."),
    "E": ("#####", "#....", "#....", "####.", "#....", "#....", "#####"),
    "G": (".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"),
    "H": ("#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"),
    "N": ("#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#", "#...#"),
    "O": (".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."),
    "P": ("####.", "#...#", "#...#", "####.", "#....", "#....", "#...."),
    "R": ("####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"),
    "S": (".####", "#....", "#....", ".###.", "....#", "....#", "####."),
    "T": ("#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."),
    "U": ("#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."),
    "X": ("#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"),
}
GLYPH_WIDTH: Final[int] = 5
GLYPH_HEIGHT: Final[int] = 7


def describe(colour: str, shape: str) -> str:
    """How questions and answers name a shape: "red circle"."""
    return f"{colour} {shape}"


def count_word(count: int) -> str:
    return COUNT_WORDS[count]

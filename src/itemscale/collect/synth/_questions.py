"""Questions about a planned scene, in every task kind.

Each storyline stresses one budget axis (docs/synthetic-suite.md). Wrong options are plausible
on purpose (shapes that are on screen, digits a blurred view confuses, the look-alikes' colour),
and the correct option's position is handed in by the caller, which balances positions across
the suite so a text-only model learns nothing from them.
"""

from __future__ import annotations

import itertools
from typing import Final, Literal

import numpy as np

from ...core.responses import TaskKind
from ..items import OPTION_LETTERS, DialogueTurn, EvidenceSpan, Item
from ._scene import MAX_COUNT, SceneEvent, VideoScene
from ._vocab import COLOURS, SHAPES, count_word, describe

QuestionKind = Literal["brief_event", "small_detail", "counting", "ordering", "distractor"]

QUESTION_KINDS: Final[tuple[QuestionKind, ...]] = (
    "brief_event",
    "small_detail",
    "counting",
    "ordering",
    "distractor",
)

#: The budget axis each question kind stresses (stored as the `budget_axis` attribute).
BUDGET_AXIS: Final[dict[str, str]] = {
    "brief_event": "frame_rate",
    "small_detail": "resolution",
    "counting": "coverage",
    "ordering": "coverage",
    "distractor": "distractor",
    "summary": "coverage",
}

N_OPTIONS: Final[int] = 4

SUMMARY_QUESTION: Final[str] = "What happens in the video?"
#: "At the top": the look-alikes at the bottom flash briefly too.
BRIEF_QUESTION: Final[str] = "Which shape flashes briefly at the top?"


def _combo(event: SceneEvent) -> str:
    assert event.colour is not None and event.shape is not None
    return describe(event.colour, event.shape)


def _arrange(
    rng: np.random.Generator, correct: str, wrong: list[str], position: int
) -> tuple[tuple[str, ...], str]:
    """Four options with the correct one at `position`, the wrong ones in random order."""
    if len(set(wrong)) < N_OPTIONS - 1 or correct in wrong:
        raise AssertionError(f"not enough distinct wrong options for {correct!r}: {wrong}")
    chosen = [wrong[int(i)] for i in rng.permutation(len(wrong))[: N_OPTIONS - 1]]
    chosen.insert(position, correct)
    return tuple(chosen), OPTION_LETTERS[position]


def _distinct(values: list[str], exclude: set[str]) -> list[str]:
    out: list[str] = []
    for value in values:
        if value not in exclude and value not in out:
            out.append(value)
    return out


class _Storylines:
    """The scene's storylines, named the way questions refer to them."""

    def __init__(self, scene: VideoScene) -> None:
        self.brief = scene.by_role("brief")[0]
        self.sign = scene.by_role("sign")[0]
        self.counts = scene.by_role("count")
        self.turns = scene.by_role("turn")
        self.stay = scene.by_role("stay")[0]
        self.lookalikes = scene.by_role("lookalike")
        self.actor_combos = [describe(a.colour, a.shape) for a in scene.actors]
        self.scene_combos = {
            describe(e.colour, e.shape) for e in scene.events if e.colour and e.shape
        } | set(self.actor_combos)
        self.fps = scene.fps

    def spans(self, events: list[SceneEvent]) -> tuple[EvidenceSpan, ...]:
        return tuple(e.span(self.fps) for e in sorted(events, key=lambda e: e.start_frame))


def _mcqa(
    rng: np.random.Generator, s: _Storylines, kind: QuestionKind, position: int
) -> tuple[str, tuple[str, ...], str, tuple[EvidenceSpan, ...]]:
    if kind == "brief_event":
        correct = _combo(s.brief)
        # The drifting shapes are on screen all along: what a model that missed the flash says.
        others = [describe(c, sh) for c in COLOURS for sh in SHAPES]
        others = _distinct([others[int(i)] for i in rng.permutation(len(others))], s.scene_combos)
        options, answer = _arrange(rng, correct, [*s.actor_combos, others[0]], position)
        return BRIEF_QUESTION, options, answer, s.spans([s.brief])
    if kind == "small_detail":
        assert s.sign.text is not None
        wrong = list(s.sign.alternatives)
        options, answer = _arrange(rng, s.sign.text, wrong, position)
        return "What does the sign say?", options, answer, s.spans([s.sign])
    if kind == "counting":
        k = len(s.counts)
        wrong = [count_word(n) for n in range(1, MAX_COUNT + 1) if n != k]
        options, answer = _arrange(rng, count_word(k), wrong, position)
        question = f"How many times does the {_combo(s.counts[0])} appear?"
        return question, options, answer, s.spans(s.counts)
    if kind == "ordering":
        names = [_combo(e) for e in s.turns]
        orders = [", ".join(p) for p in itertools.permutations(names)]
        options, answer = _arrange(rng, orders[0], orders[1:], position)
        return "In what order do the three shapes take turns?", options, answer, s.spans(s.turns)
    assert s.stay.colour is not None and s.stay.shape is not None
    assert s.lookalikes[0].colour is not None
    others = [c for c in COLOURS if c not in (s.stay.colour, s.lookalikes[0].colour)]
    others = [others[int(i)] for i in rng.permutation(len(others))]
    # The look-alikes' colour is always an option: it is the distractor being tested.
    options, answer = _arrange(rng, s.stay.colour, [s.lookalikes[0].colour, *others[:2]], position)
    question = f"What colour is the {s.stay.shape} that stays for a long time?"
    return question, options, answer, s.spans([s.stay])


def _open(
    rng: np.random.Generator, s: _Storylines, kind: QuestionKind
) -> tuple[str, str, tuple[EvidenceSpan, ...]]:
    if kind == "brief_event":
        return BRIEF_QUESTION, _combo(s.brief), s.spans([s.brief])
    if kind == "small_detail":
        assert s.sign.text is not None
        return "What does the sign say?", s.sign.text, s.spans([s.sign])
    if kind == "counting":
        question = f"How many times does the {_combo(s.counts[0])} appear?"
        return question, count_word(len(s.counts)), s.spans(s.counts)
    if kind == "ordering":
        anchor = int(rng.integers(0, 2))
        question = f"Which shape takes its turn after the {_combo(s.turns[anchor])}?"
        return question, _combo(s.turns[anchor + 1]), s.spans(s.turns[anchor : anchor + 2])
    assert s.stay.colour is not None
    question = f"What colour is the {s.stay.shape} that stays for a long time?"
    return question, s.stay.colour, s.spans([s.stay])


def _dialogue(
    s: _Storylines, kind: QuestionKind
) -> tuple[tuple[DialogueTurn, ...], str, str, tuple[EvidenceSpan, ...]]:
    """An earlier exchange that names the subject, and a current turn that refers back to it;
    the history never contains the answer."""

    def history(question: str, reply: str) -> tuple[DialogueTurn, ...]:
        return (
            DialogueTurn(role="user", text=question),
            DialogueTurn(role="assistant", text=reply),
        )

    if kind == "brief_event":
        h = history("Does a shape flash briefly at the top?", f"Yes, a {s.brief.shape}.")
        assert s.brief.colour is not None
        return h, "What colour is it?", s.brief.colour, s.spans([s.brief])
    if kind == "small_detail":
        assert s.sign.text is not None
        h = history("Is there a sign?", "Yes, a white sign.")
        return h, "What does it say?", s.sign.text, s.spans([s.sign])
    if kind == "counting":
        h = history(f"Is there a {_combo(s.counts[0])}?", "Yes.")
        return h, "How many times does it appear?", count_word(len(s.counts)), s.spans(s.counts)
    if kind == "ordering":
        h = history("Which shape takes the first turn?", f"The {_combo(s.turns[0])}.")
        return h, "Which shape comes after it?", _combo(s.turns[1]), s.spans(s.turns[:2])
    assert s.stay.colour is not None
    h = history("Which shape stays for a long time?", f"A {s.stay.shape}.")
    return h, "What colour is it?", s.stay.colour, s.spans([s.stay])


def _summary(s: _Storylines) -> tuple[str, tuple[EvidenceSpan, ...]]:
    """The events in order of onset; repeats are told once, at their first appearance."""
    assert s.sign.text is not None
    entries: list[tuple[int, str]] = [
        (s.brief.start_frame, f"{_combo(s.brief)} flashes"),
        (s.sign.start_frame, f"sign says {s.sign.text}"),
        (
            s.counts[0].start_frame,
            f"{_combo(s.counts[0])} appears {count_word(len(s.counts))} "
            + ("time" if len(s.counts) == 1 else "times"),
        ),
        *((e.start_frame, f"{_combo(e)} takes a turn") for e in s.turns),
        (s.stay.start_frame, f"{_combo(s.stay)} stays"),
    ]
    entries.sort(key=lambda entry: entry[0])
    text = ", then ".join(phrase for _, phrase in entries)
    spans = s.spans([s.brief, s.sign, *s.counts, *s.turns, s.stay])
    return text, spans


def build_items(
    rng: np.random.Generator,
    scene: VideoScene,
    *,
    video_path: str,
    split: str,
    answer_positions: dict[QuestionKind, int],
    dialogue_kind: QuestionKind,
) -> list[Item]:
    """All items about one video: an MCQA and an open question per question kind, one summary
    and one fixed-history dialogue turn."""
    s = _Storylines(scene)
    common = {
        "video_id": scene.video_id,
        "video_path": video_path,
        "duration_s": scene.duration_s,
        "split": split,
    }

    def attrs(kind: str) -> dict[str, str]:
        return {"question_kind": kind, "budget_axis": BUDGET_AXIS[kind], "split": split}

    items: list[Item] = []
    for kind in QUESTION_KINDS:
        question, options, answer, spans = _mcqa(rng, s, kind, answer_positions[kind])
        items.append(
            Item(
                item_id=f"{scene.video_id}-{kind}-mcqa",
                task_kind=TaskKind.MCQA,
                question=question,
                options=options,
                answer=answer,
                evidence=spans,
                attributes=attrs(kind),
                **common,
            )
        )
    for kind in QUESTION_KINDS:
        question, reference, spans = _open(rng, s, kind)
        items.append(
            Item(
                item_id=f"{scene.video_id}-{kind}-open",
                task_kind=TaskKind.OPEN_QA,
                question=question,
                references=(reference,),
                evidence=spans,
                attributes=attrs(kind),
                **common,
            )
        )
    reference, spans = _summary(s)
    items.append(
        Item(
            item_id=f"{scene.video_id}-summary",
            task_kind=TaskKind.SUMMARY,
            question=SUMMARY_QUESTION,
            references=(reference,),
            evidence=spans,
            attributes=attrs("summary"),
            **common,
        )
    )
    history, question, reference, spans = _dialogue(s, dialogue_kind)
    items.append(
        Item(
            item_id=f"{scene.video_id}-{dialogue_kind}-dialogue",
            task_kind=TaskKind.DIALOGUE,
            question=question,
            references=(reference,),
            history=history,
            evidence=spans,
            attributes=attrs(dialogue_kind),
            **common,
        )
    )
    return items

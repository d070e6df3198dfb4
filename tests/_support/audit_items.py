"""The multiple-choice item both audit test modules build their hand-made tables around."""

from __future__ import annotations

from collections.abc import Sequence

from itemscale.collect.items import EvidenceSpan, Item


def item(item_id: str, spans: Sequence[tuple[float, float]] = ()) -> Item:
    """An MCQA item answered "A", with evidence at `spans` (seconds)."""
    return Item(
        item_id=item_id,
        video_id=f"v_{item_id}",
        question="q?",
        options=("a", "b", "c", "d"),
        answer="A",
        evidence=tuple(EvidenceSpan(start=s, end=e) for s, e in spans),
    )

"""The session picker's entries: one per listed session (its row drawn once), and the filter's ranking of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.widgets.option_list import Option

from tui.app.screens.session_rows import RowLayout, SessionMetaLike, match_title, order_by_lineage, session_row

if TYPE_CHECKING:
    from collections.abc import Container, Sequence

    from textual.content import Content

__all__ = ["EXACT_BONUS", "PickerEntry", "listed_entries", "ranked_entries"]


@dataclass(frozen=True)
class PickerEntry:
    """A listed session: its depth in the lineage tree, the text the filter's words are looked for in, its row."""

    meta: SessionMetaLike
    depth: int
    haystack: str
    row: Content
    option: Option


EXACT_BONUS = 1_000.0
"""Entries containing every word of the filter (title, id or model) rank above fuzzy-only title matches."""


def listed_entries(sessions: Sequence[SessionMetaLike], *, current: str | None, now: float,
                   layout: RowLayout) -> list[PickerEntry]:
    """``sessions`` (newest first) as a lineage tree, each with its row in ``layout``."""
    return [
        PickerEntry(
            meta=meta,
            depth=depth,
            haystack=f"{meta.title} {meta.id} {meta.model or ''}".casefold(),
            row=(row := session_row(meta, depth, current=meta.id == current, now=now, layout=layout)),
            option=Option(row, id=meta.id),
        )
        for meta, depth in order_by_lineage(sessions)
    ]


def _matches(haystack: str, terms: list[str]) -> bool:
    return all(term in haystack for term in terms)


def ranked_entries(entries: Sequence[PickerEntry], query: str, terms: list[str], *, content_hits: Container[str],
                   rows: dict[str, Content], current: str | None, now: float,
                   layout: RowLayout) -> list[PickerEntry]:
    """The entries the filter matches, best first: every word found in the title, id or model, then
    a fuzzy match of the title (Textual's :class:`~textual.fuzzy.FuzzySearch`, the matched characters
    highlighted in ``rows``), then a match in the contents only (``content_hits``: their ids); ties keep the
    list's order."""
    query = query.strip()
    scored: list[tuple[float, int, PickerEntry]] = []
    for order, entry in enumerate(entries):
        title = entry.meta.title.strip()
        fuzzy, matched = match_title(query, title) if title else (0.0, ())
        exact = _matches(entry.haystack, terms)
        if not (fuzzy or exact or entry.meta.id in content_hits):
            continue
        if fuzzy:
            rows[entry.meta.id] = session_row(entry.meta, entry.depth, current=entry.meta.id == current, now=now,
                                              matched=matched, layout=layout)
        scored.append((-(EXACT_BONUS if exact else 0.0) - fuzzy, order, entry))
    scored.sort(key=lambda item: item[:2])
    return [entry for _, _, entry in scored]

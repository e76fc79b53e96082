"""Session rows for the picker: the metadata it reads, lineage ordering, and one line per session."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from textual.content import Content
from textual.fuzzy import FuzzySearch

from tui.app.formatting import human_age, human_tokens, short_id
from tui.text.cost_text import PRICE_UNKNOWN, totals_label

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from tui.store.cost_totals import CostTotals

__all__ = ["SessionMetaLike", "SessionStoreLike", "header_row", "order_by_lineage", "session_row"]


# -- the slice of the store this screen uses (typed structurally: the store may be absent) --


class ParentRefLike(Protocol):
    @property
    def session(self) -> str: ...

    @property
    def index(self) -> int | None: ...


class UsageSnapshotLike(Protocol):
    @property
    def tokens(self) -> int: ...

    @property
    def window(self) -> int: ...


class SessionMetaLike(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def updated(self) -> float: ...

    @property
    def message_count(self) -> int: ...

    @property
    def model(self) -> str | None: ...

    @property
    def parent(self) -> ParentRefLike | None: ...

    @property
    def last_usage(self) -> UsageSnapshotLike | None: ...

    @property
    def cost(self) -> CostTotals | None: ...


class SessionStoreLike(Protocol):
    def list_sessions(self) -> Sequence[SessionMetaLike]: ...

    def rename(self, session_id: str, title: str) -> None: ...

    def delete(self, session_id: str) -> None: ...


# -- ordering -----------------------------------------------------------------------


def order_by_lineage(sessions: Sequence[SessionMetaLike]) -> list[tuple[SessionMetaLike, int]]:
    """Sessions with every fork right under its parent, as ``(meta, depth)``.

    ``sessions`` come newest first; a tree (and each branch within it) is
    placed by its most recently updated member. A fork whose parent is gone
    becomes a top-level entry. Linear in the number of sessions.
    """
    by_id = {meta.id: meta for meta in sessions}
    placed: set[str] = set()
    roots: list[SessionMetaLike] = []
    children: dict[str, list[SessionMetaLike]] = defaultdict(list)
    for meta in sessions:
        node = meta
        while node.id not in placed:
            placed.add(node.id)
            parent = by_id.get(node.parent.session) if node.parent is not None else None
            if parent is None or parent.id == node.id:
                roots.append(node)
                break
            children[parent.id].append(node)
            if parent.id in placed:
                break
            node = parent

    ordered: list[tuple[SessionMetaLike, int]] = []
    visited: set[str] = set()

    def walk(top: Iterable[SessionMetaLike]) -> None:
        stack = [(meta, 0) for meta in reversed(list(top))]
        while stack:
            meta, depth = stack.pop()
            if meta.id in visited:
                continue
            visited.add(meta.id)
            ordered.append((meta, depth))
            stack.extend((child, depth + 1) for child in reversed(children.get(meta.id, ())))

    walk(roots)
    if len(visited) < len(sessions):  # a parent cycle (corrupt metadata): show them anyway
        walk(meta for meta in sessions if meta.id not in visited)
    return ordered


# -- rows ---------------------------------------------------------------------------

AGE_WIDTH = 10
MESSAGES_WIDTH = 5
TOKENS_WIDTH = 7
COST_WIDTH = 13
MODEL_WIDTH = 18
MAX_INDENT = 6


@dataclass(frozen=True)
class RowLayout:
    """Which figure columns a row shows: in a narrow picker the title gets the room (the model goes first,
    then the cost, then the tokens; the filter still matches the model and the id)."""

    tokens: bool = True
    cost: bool = True
    model: bool = True


WIDE = RowLayout()


def layout_for(width: int) -> RowLayout:
    """The richest layout that leaves the title at least a third of ``width`` cells."""
    for layout in (WIDE, RowLayout(model=False), RowLayout(cost=False, model=False),
                   RowLayout(tokens=False, cost=False, model=False)):
        if width - _fixed_width(layout) >= width // 3:
            return layout
    return RowLayout(tokens=False, cost=False, model=False)


def _fixed_width(layout: RowLayout) -> int:
    return (2 + AGE_WIDTH + 2 + MESSAGES_WIDTH + 2 + (TOKENS_WIDTH + 2 if layout.tokens else 0)
            + (COST_WIDTH + 2 if layout.cost else 0) + (MODEL_WIDTH + 2 if layout.model else 0))


def _model_label(model: str | None) -> str:
    """``"anthropic:claude-sonnet-4-5"`` → ``"claude-sonnet-4-5"`` (the filter still sees the full name)."""
    if not model:
        return "–"
    return model.split(":", 1)[1] if ":" in model else model


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _tokens_style(usage: UsageSnapshotLike | None) -> str:
    if usage is None or not usage.window:
        return "$text-muted"
    fraction = usage.tokens / usage.window
    if fraction >= 0.90:
        return "$text-error"
    if fraction >= 0.85:
        return "$text-warning"
    return ""


def _cost_cell(cost: CostTotals | None) -> tuple[str, str]:
    label = totals_label(cost)
    if label == PRICE_UNKNOWN:
        return (f"{label:>{COST_WIDTH}}  ", "$text-warning")
    return (f"{_fit(label, COST_WIDTH):>{COST_WIDTH}}  ", "$text-muted" if cost is None else "")


_FUZZY = FuzzySearch()
"""Textual's fuzzy search (the command palette's), case-insensitive, with its own cache. Not
``Matcher.highlight``: that parses the title as markup, and a title is hostile text."""


def match_title(query: str, title: str) -> tuple[float, Sequence[int]]:
    """How well ``title`` fuzzily matches ``query`` (0: not at all) and the offsets of the matched characters."""
    return _FUZZY.match(query, title)


def _highlighted(title: str, offsets: Sequence[int]) -> Content:
    content = Content(title)
    for offset in offsets:
        if offset < len(title) and not title[offset].isspace():
            content = content.stylize("bold underline", offset, offset + 1)
    return content


def _title_cell(title: str | Content, current: bool) -> Content:
    if not title:
        return Content.styled("(untitled)", "$text-muted italic")
    if isinstance(title, Content):
        return title.stylize_before("bold") if current else title
    return Content.styled(title, "bold" if current else "")


def header_row(layout: RowLayout = WIDE) -> Content:
    """The column captions above the list (same layout as :func:`session_row`)."""
    text = (
        f"  {'updated':>{AGE_WIDTH}}  {'msgs':>{MESSAGES_WIDTH}}  "
        + (f"{'tokens':>{TOKENS_WIDTH}}  " if layout.tokens else "")
        + (f"{'cost':>{COST_WIDTH}}  " if layout.cost else "")
        + (f"{'model':<{MODEL_WIDTH}}  " if layout.model else "")
        + "title"
    )
    return Content.styled(text, "$text-muted bold")


def session_row(meta: SessionMetaLike, depth: int, *, current: bool, now: float,
                matched: Sequence[int] = (), layout: RowLayout = WIDE) -> Content:
    """One line: marker, age, messages, tokens, cost, model (those ``layout`` shows), then the (indented) title
    and short id; ``matched``: offsets in the title the picker's filter matched (highlighted)."""
    usage = meta.last_usage
    indent = "  " * (min(depth, MAX_INDENT) - 1) + "↳ " if depth else ""
    title: str | Content = meta.title.strip()
    if title and matched:
        title = _highlighted(str(title), matched)
    return Content.assemble(
        ("● " if current else "  ", "$text-accent bold"),
        (f"{human_age(meta.updated, now):>{AGE_WIDTH}}  ", "$text-muted"),
        f"{meta.message_count:>{MESSAGES_WIDTH}}  ",
        (f"{human_tokens(usage.tokens if usage else None):>{TOKENS_WIDTH}}  " if layout.tokens else "",
         _tokens_style(usage)),
        _cost_cell(meta.cost) if layout.cost else "",
        (f"{_fit(_model_label(meta.model), MODEL_WIDTH):<{MODEL_WIDTH}}  " if layout.model else "", "$text-secondary"),
        (indent, "$text-muted"),
        _title_cell(title, current),
        (f"  {short_id(meta.id)}", "$text-muted"),
        ("  (current)", "$text-accent") if current else "",
    )

"""A streamed answer's list drawn as ONE widget that grows item by item, looking as Textual's Markdown draws it.

Textual's ``Markdown`` mounts about five widgets per list item (the item, a row, its bullet, a column, the
paragraph), so a 2,500-item list is ~12,500 widgets and every frame's layout and memory grow with it.
A :class:`SettledList` holds the same list as data (bullets and inline :class:`~textual.content.Content`,
built from markdown-it tokens as ``Markdown`` builds them) and renders each item to strips once: adding
items costs O(new items), its layout is one widget of known height, and only a width or style change
renders it all again. Lists whose items hold anything but paragraphs and nested lists (code fences,
quotes, tables, headings) are left to ``Markdown`` (:func:`simple_lists` returns ``None`` for them).
Selection and copy work as in Textual's ``Log``; model text is never parsed as markup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from rich.segment import Segment
from textual.content import Content, Span
from textual.style import Style
from textual.visual import Visual

from tui.app.widgets.settled_lines import SettledLines

if TYPE_CHECKING:
    from markdown_it.token import Token

__all__ = ["ListBlock", "SettledList", "list_runs", "may_hold_list", "simple_lists"]

BULLETS = ("• ", "▪ ", "‣ ", "⭑ ", "◦ ")
"""Unordered bullets by nesting depth, as Textual's ``Markdown.BULLETS``."""


@dataclass
class ListItem:
    """One item: its marker as written (the number of an ordered item) and its blocks in order."""

    number: str
    blocks: list[Content | ListBlock] = field(default_factory=list)


@dataclass
class ListBlock:
    """A bullet or ordered list; ``depth`` counts the unordered items around it (it picks the bullet)."""

    ordered: bool
    depth: int
    items: list[ListItem] = field(default_factory=list)

    @property
    def start(self) -> int:
        """The first number of an ordered list (as ``Markdown`` numbers it: from its first item on)."""
        try:
            return int(self.items[0].number) if self.items else 1
        except ValueError:
            return 1

    def symbol(self, index: int, width: int) -> str:
        """The bullet of item ``index`` (an ordered list's numbers right-aligned to ``width`` cells)."""
        if self.ordered:
            return f"{self.start + index}. ".rjust(width)
        return BULLETS[self.depth % len(BULLETS)]

    def symbol_width(self) -> int:
        """Cells taken by the widest bullet."""
        if not self.ordered:
            return len(BULLETS[0])
        return len(f"{self.start + len(self.items) - 1}. ") + 1


def inline_content(token: Token) -> Content:
    """An inline token as ``Markdown`` shows it: plain text with ``.em``/``.strong``/``.s``/``.code_inline``
    spans and links as click actions (never parsed as markup)."""
    texts: list[str] = []
    spans: list[Span] = []
    open_styles: list[tuple[Style | str, int]] = []
    position = 0

    def add(text: str) -> None:
        nonlocal position
        texts.append(text)
        position += len(text)

    def close() -> None:
        if open_styles:
            style, start = open_styles.pop()
            spans.append(Span(start, position, style))

    for child in token.children or ():
        kind = child.type
        if kind == "text":
            add(re.sub(r"\s+", " ", child.content))
        elif kind == "hardbreak":
            add("\n")
        elif kind == "softbreak":
            add(" ")
        elif kind == "code_inline":
            open_styles.append((".code_inline", position))
            add(child.content)
            close()
        elif kind in ("em_open", "strong_open", "s_open"):
            open_styles.append(("." + kind.removesuffix("_open"), position))
        elif kind in ("link_open", "image"):
            attribute = "href" if kind == "link_open" else "src"
            open_styles.append((Style.from_meta({"@click": f"link({child.attrs.get(attribute, '')!r})"}), position))
            if kind == "image":
                add("🖼  ")
                alt = child.attrs.get("alt", "")
                if alt:
                    add(f"({alt})")
                for grandchild in child.children or ():
                    add(grandchild.content)
                close()
        elif kind.endswith("_close"):
            close()
    return Content("".join(texts), spans=spans)


def simple_lists(tokens: list[Token]) -> list[ListBlock] | None:
    """The top-level lists ``tokens`` consist of, or ``None`` when they hold anything else (a paragraph
    outside a list, a heading, a code fence, a quote, a table...)."""
    lists: list[ListBlock] = []
    stack: list[ListBlock | ListItem] = []
    for token in tokens:
        kind = token.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            parent = stack[-1] if stack else None
            if isinstance(parent, ListBlock):
                return None
            depth = sum(1 for node in stack if isinstance(node, ListItem) and not node.number)
            block = ListBlock(ordered=kind == "ordered_list_open", depth=depth)
            if parent is None:
                lists.append(block)
            else:
                parent.blocks.append(block)
            stack.append(block)
        elif kind == "list_item_open":
            parent = stack[-1] if stack else None
            if not isinstance(parent, ListBlock):
                return None
            item = ListItem(token.info if parent.ordered else "")
            parent.items.append(item)
            stack.append(item)
        elif kind in ("bullet_list_close", "ordered_list_close", "list_item_close"):
            stack.pop()
        elif kind in ("paragraph_open", "paragraph_close"):
            if not stack or not isinstance(stack[-1], ListItem):
                return None
        elif kind == "inline":
            parent = stack[-1] if stack else None
            if not isinstance(parent, ListItem):
                return None
            parent.blocks.append(inline_content(token))
        else:
            return None
    return lists or None


_SOURCE_LINE = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+\Z")
"""A source line as markdown-it counts them (``str.splitlines`` also breaks at ``\x85``, ``\u2028``...)."""

_LIST_ITEM_LINE = re.compile(r"^ {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)", re.MULTILINE)


def may_hold_list(text: str) -> bool:
    """``text`` has a line that starts a top-level list item (else it needs no list parsing)."""
    return _LIST_ITEM_LINE.search(text) is not None


def _top_level_blocks(tokens: list[Token]) -> list[tuple[int, list[Token]]]:
    """Each top-level block's first source line and tokens."""
    blocks: list[tuple[int, list[Token]]] = []
    depth = 0
    for token in tokens:
        if depth == 0:
            blocks.append(((token.map or (0, 0))[0], []))
        blocks[-1][1].append(token)
        depth += token.nesting
    return blocks


def list_runs(text: str, tokens: list[Token]) -> list[tuple[str, list[ListBlock] | None]]:
    """``text`` (parsed to ``tokens``) cut into runs of consecutive top-level blocks: ``(source, lists)`` for
    a run of plain lists (:func:`simple_lists`), ``(source, None)`` for a run of anything else. Joined, the
    sources are ``text``."""
    runs: list[tuple[int, list[ListBlock] | None]] = []
    for first_line, block in _top_level_blocks(tokens):
        lists = simple_lists(block)
        if runs and (lists is None) == (runs[-1][1] is None):
            if lists is not None:
                runs[-1][1].extend(lists)  # type: ignore[union-attr]
            continue
        runs.append((0 if not runs else first_line, lists))
    lines = _SOURCE_LINE.findall(text)
    bounds = [start for start, _ in runs] + [len(lines)]
    return [("".join(lines[bounds[n]:bounds[n + 1]]), lists) for n, (_, lists) in enumerate(runs)] or [(text, None)]


class SettledList(SettledLines):
    """A top-level list of a streamed answer: items are added as they settle; each is rendered once."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {*SettledLines.COMPONENT_CLASSES, "settled-list--bullet"}

    DEFAULT_CSS = """
    SettledList {
        height: auto; width: 1fr; margin: 0 0 1 0; color: $foreground;
        & > .settled-list--bullet { color: $text-primary; }
        &:light > .settled-list--bullet { color: $text-secondary; }
        &:dark > .code_inline { background: $warning 10%; color: $text-warning 95%; }
        &:light > .code_inline { background: $error 5%; color: $text-error 95%; }
        &:ansi > .code_inline { background: ansi_default !important; }
        & > .em { text-style: italic; }
        & > .strong { text-style: bold; }
        & > .s { text-style: strike; }
    }
    """

    def __init__(self, block: ListBlock) -> None:
        super().__init__(classes="settled-list")
        self.block = ListBlock(block.ordered, block.depth)
        self._rendered_items = 0
        self._symbol_width = 0
        self.extend(block)

    @property
    def ordered(self) -> bool:
        """A numbered list."""
        return self.block.ordered

    @property
    def item_count(self) -> int:
        """Items in the list so far."""
        return len(self.block.items)

    def extend(self, more: ListBlock) -> None:
        """Add the items of ``more`` (further items of this list); draws only them."""
        self.block.items.extend(more.items)
        if self._rendered_at >= 0 and self.block.symbol_width() == self._symbol_width:
            self._render_new_items(self._rendered_at)
        else:
            self._rendered_at = -1
        self.refresh(layout=True)

    def list_continues(self) -> None:
        """The next settled block is a further item of this list (drawn by another widget): no gap between."""
        self.styles.margin = (self.styles.margin.top, 0, 0, 0)

    # -- rendering ------------------------------------------------------------------------------

    def _render_lines(self, width: int) -> None:
        self._rendered_items = 0
        self._render_new_items(width)

    def _render_new_items(self, width: int) -> None:
        self._rendered_at = width
        self._symbol_width = self.block.symbol_width()
        block = self.block
        for index in range(self._rendered_items, len(block.items)):
            for segments in self._item_lines(block, index, width):
                self._add_line(segments)
        self._rendered_items = len(block.items)

    def _item_lines(self, block: ListBlock, index: int, width: int) -> list[tuple[Segment, ...]]:
        """One item: its bullet left of the first line, its blocks stacked right of the bullet."""
        symbol_width = block.symbol_width()
        inner = max(1, width - symbol_width)
        body: list[tuple[Segment, ...]] = []
        for part in block.items[index].blocks:
            if isinstance(part, ListBlock):
                for number in range(len(part.items)):
                    body.extend(self._item_lines(part, number, inner))
            else:
                strips = Visual.to_strips(self, part, inner, None, self.visual_style, apply_selection=False)
                body.extend(tuple(strip if strip.cell_length <= inner else strip.crop(0, inner)) for strip in strips)
        bullet_style = self.get_visual_style("settled-list--bullet").rich_style
        first = Segment(block.symbol(index, symbol_width), bullet_style)
        blank = Segment(" " * symbol_width, bullet_style)
        return [(first if number == 0 else blank, *line) for number, line in enumerate(body or [()])]


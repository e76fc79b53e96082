"""Where a streamed Markdown answer's top-level blocks close, found line by line (no Textual, no parser).

A streamed answer is shown as *settled* blocks — parsed as Markdown once, when they close — and one
*open* block that is still growing (the paragraph, list item or code fence being written). The
splitter decides, from complete lines only, when a block has closed:

- a fenced code block closes at its closing fence (blank lines inside it never close it);
- a paragraph, quote or table closes at a blank line followed by text that does not continue it;
- an ATX heading, a setext underline or a thematic break closes at once;
- a list item closes when the next item of the same list starts, so a long list settles item by item
  (:attr:`ClosedBlocks.continues_list` says the first closed block continues the previous list).

Each :meth:`MarkdownSplitter.feed` costs O(new text): only the new complete lines are classified.
Joined, the closed blocks and the open text are exactly the text received.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["ClosedBlocks", "MarkdownSplitter", "OpenKind", "is_fence_line"]

OpenKind = Literal["text", "code"]

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_LIST_MARKER = re.compile(r"^( {0,3})([-+*]|\d{1,9}[.)])(?:[ \t]|$)")
_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_THEMATIC_BREAK = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")


@dataclass
class ClosedBlocks:
    """Text of the blocks that closed during one :meth:`MarkdownSplitter.feed` (possibly empty)."""

    text: str = ""
    continues_list: bool = False
    """The first closed block is a further item of the list the previous closed block ended with."""


@dataclass
class _Fence:
    char: str
    length: int
    owns_block: bool
    """The fence opened the block (at top level), rather than sitting inside a list item."""


def _is_blank(line: str) -> bool:
    return not line.strip()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _marker_kind(line: str) -> str | None:
    """A top-level list item's marker kind (``-``, ``*``, ``+``, ``.`` or ``)``); items of one list share it."""
    match = _LIST_MARKER.match(line)
    if match is None or _indent(line) >= 2:
        return None
    return match.group(2)[-1]


def is_fence_line(line: str) -> bool:
    """``line`` is a bare code fence (three or more backticks or tildes, nothing after them)."""
    match = _FENCE.match(line.rstrip("\n"))
    return match is not None and not match.group(3).strip()


def _fence_opener(line: str) -> _Fence | None:
    match = _FENCE.match(line.rstrip("\n"))
    if match is None:
        return None
    marker, info = match.group(2), match.group(3)
    if marker[0] == "`" and "`" in info:
        return None
    return _Fence(marker[0], len(marker), owns_block=True)


def _closes(fence: _Fence, line: str) -> bool:
    stripped = line.rstrip("\n")
    match = _FENCE.match(stripped)
    if match is None:
        return False
    marker, rest = match.group(2), match.group(3)
    return marker[0] == fence.char and len(marker) >= fence.length and not rest.strip()


@dataclass
class MarkdownSplitter:
    """Feeds on streamed text; returns the blocks that closed; keeps the open block's text."""

    _partial: str = ""
    _block: list[str] = field(default_factory=list)
    _kind: Literal["", "text", "list", "fence"] = ""
    _fence: _Fence | None = None
    _blank_pending: bool = False
    _list_open: bool = False
    """The last closed block ended with a list item that the next item may continue."""
    _marker: str | None = None
    """The marker kind of the list being written (or last closed)."""
    _starts_with_item_continuation: bool = False
    """The open block is a further item of the list the last closed block ended with."""

    opened: int = 0
    """How many blocks have been opened (a change means the open block is a new one)."""

    @property
    def open_continues_list(self) -> bool:
        """The open block is a further item of the list the last closed block ended with."""
        return self._kind == "list" and self._starts_with_item_continuation

    @property
    def open_text(self) -> str:
        """The open block as received so far (its complete lines and the line being written)."""
        return "".join(self._block) + self._partial

    @property
    def open_kind(self) -> OpenKind:
        """``code`` while the open block is a top-level fenced code block."""
        return "code" if self._kind == "fence" else "text"

    @property
    def open_code_lines(self) -> tuple[str, str]:
        """For an open code fence: (the opening fence line, the code after it)."""
        if self._kind != "fence" or not self._block:
            return "", ""
        return self._block[0], "".join(self._block[1:]) + self._partial

    def feed(self, text: str) -> ClosedBlocks:
        """Take the next piece of the answer; returns the text of the blocks it closed."""
        closed = ClosedBlocks()
        pieces: list[str] = []
        data = self._partial + text
        start = 0
        while True:
            end = data.find("\n", start)
            if end < 0:
                break
            self._take_line(data[start:end + 1], pieces, closed)
            start = end + 1
        self._partial = data[start:]
        closed.text = "".join(pieces)
        return closed

    def finish(self) -> str:
        """The end of the answer: the open block's text (it closes now)."""
        rest = self.open_text
        self._block.clear()
        self._partial = ""
        self._kind = ""
        self._fence = None
        self._blank_pending = False
        return rest

    # -- line classification --------------------------------------------------------------

    def _close(self, pieces: list[str], closed: ClosedBlocks, *, list_continues: bool = False) -> None:
        if self._block:
            if not pieces and self._list_open and self._kind == "list" and self._starts_with_item_continuation:
                closed.continues_list = True
            pieces.append("".join(self._block))
        self._list_open = list_continues
        self._block = []
        self._kind = ""
        self._fence = None
        self._blank_pending = False

    def _start(self, line: str, kind: Literal["text", "list", "fence"], *, continues_list: bool = False) -> None:
        self._block = [line]
        self._kind = kind
        self.opened += 1
        self._starts_with_item_continuation = continues_list

    def _take_line(self, line: str, pieces: list[str], closed: ClosedBlocks) -> None:
        fence = self._fence
        if fence is not None:
            self._block.append(line)
            if _closes(fence, line):
                if fence.owns_block:
                    self._close(pieces, closed)
                else:
                    self._fence = None
            return
        if _is_blank(line):
            if self._block:
                self._blank_pending = True
                self._block.append(line)
            else:
                pieces.append(line)  # between blocks: settles with the next closed block
            return
        opener = _fence_opener(line)
        if opener is not None:
            if self._kind == "list" and _indent(line) >= 2:
                opener.owns_block = False
                self._fence = opener
                self._block.append(line)
                return
            self._close(pieces, closed)
            self._start(line, "fence")
            self._fence = opener
            return
        marker = _marker_kind(line)
        is_item = marker is not None
        if self._kind == "list":
            if is_item and marker == self._marker:  # the next item: the previous one is complete
                self._close(pieces, closed, list_continues=True)
                self._start(line, "list", continues_list=True)
                return
            if not is_item and (not self._blank_pending or _indent(line) >= 2):
                self._block.append(line)
                self._blank_pending = False
                return
            self._close(pieces, closed)
        elif self._kind == "text":
            if self._blank_pending:
                self._close(pieces, closed)
            elif _SETEXT_UNDERLINE.match(line) and len(self._block) >= 1:
                self._block.append(line)
                self._close(pieces, closed)
                return
            elif is_item or _ATX_HEADING.match(line) or _THEMATIC_BREAK.match(line):
                self._close(pieces, closed)
            else:
                self._block.append(line)
                return
        # a new block starts with this line
        if _ATX_HEADING.match(line) or _THEMATIC_BREAK.match(line):
            self._start(line, "text")
            self._close(pieces, closed)
        elif is_item:
            self._start(line, "list", continues_list=self._list_open and marker == self._marker)
            self._marker = marker
        else:
            self._start(line, "text")

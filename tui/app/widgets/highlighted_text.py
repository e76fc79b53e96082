"""Syntax highlighting for read-only text without tree-sitter: Pygments tokens as TextArea highlights.

Textual's TextArea highlights through tree-sitter grammars (``textual[syntax]``), which
are optional. Pygments ships with Rich, so it is always here; this maps its tokens to
the highlight names TextArea themes style.
"""

from __future__ import annotations

from collections import defaultdict

from pygments.lexers import get_lexer_by_name
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, _TokenType
from pygments.util import ClassNotFound
from textual.widgets import TextArea

MAX_HIGHLIGHT_CHARS = 500_000
"""Larger texts stay plain (lexing them would hold up the screen)."""

Highlight = tuple[int, int | None, str]

_NAMES: tuple[tuple[_TokenType, str], ...] = (
    (Name.Tag, "json.label"),
    (Keyword.Constant, "boolean"),
    (Keyword, "keyword"),
    (String, "string"),
    (Number, "number"),
    (Comment, "comment"),
    (Name.Function, "function"),
    (Name.Class, "type"),
    (Name.Builtin, "function.builtin"),
    (Name.Decorator, "function"),
    (Operator, "operator"),
    (Punctuation, "punctuation.bracket"),
)


def _highlight_name(token: _TokenType) -> str | None:
    for kind, name in _NAMES:
        if token in kind:
            return name
    return None


def highlight_ranges(text: str, language: str) -> dict[int, list[Highlight]]:
    """Per line, ``(start byte, end byte, highlight name)`` for ``text`` lexed as ``language``."""
    try:
        lexer = get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return {}
    highlights: dict[int, list[Highlight]] = defaultdict(list)
    row, column = 0, 0
    for token, value in lexer.get_tokens(text):
        name = _highlight_name(token)
        pieces = value.split("\n")
        for number, piece in enumerate(pieces):
            width = len(piece.encode("utf-8"))
            if name and width:
                highlights[row].append((column, column + width, name))
            column += width
            if number < len(pieces) - 1:
                row, column = row + 1, 0
    return highlights


class HighlightedTextArea(TextArea):
    """A TextArea that falls back to Pygments highlighting when no tree-sitter grammar is installed."""

    pygments_language: str | None = None
    """Set by :meth:`highlight_with_pygments`; a class default because TextArea builds highlights in __init__."""

    def highlight_with_pygments(self, language: str | None) -> None:
        """Use Pygments for ``language`` (``None`` for plain text) and redraw."""
        self.pygments_language = language
        self._build_highlight_map()
        self.refresh()

    def _build_highlight_map(self) -> None:
        # Overrides TextArea's tree-sitter pass; the attributes below are the ones it fills.
        if self.language is not None or not self.pygments_language:
            super()._build_highlight_map()
            return
        self._line_cache.clear()
        self._highlights.clear()
        if len(self.text) <= MAX_HIGHLIGHT_CHARS:
            self._highlights.update(highlight_ranges(self.text, self.pygments_language or ""))

"""Showing files in the UI: a path as the user would write it, and which languages can be highlighted.

Kept apart from the evicted-output viewer so the memory editor can use it without loading the viewer
(and its highlighters) before the first frame.
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.widgets import TextArea


def display_path(path: Path) -> str:
    """``path`` relative to the working directory when inside it, else with ``~`` for the home directory."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        pass
    home = str(Path.home())
    text = str(path)
    if home not in ("", "/") and text.startswith(home + "/"):
        return "~" + text[len(home) :]
    return text


def supported_language(text_area: TextArea, language: str | None) -> str | None:
    """``language`` when this environment can highlight it, else ``None`` (plain text).

    Highlighting needs the optional ``tree-sitter`` package and its grammar
    (``tree-sitter-<language>``, both in ``textual[syntax]``); a TextArea given
    a language whose grammar is missing would raise, so check first.
    """
    if language is None or language not in text_area.available_languages:
        return None
    try:
        grammar_found = find_spec("tree_sitter") is not None and find_spec(f"tree_sitter_{language}") is not None
    except (ImportError, ValueError):
        grammar_found = False
    return language if grammar_found else None


LANGUAGE_BY_EXTENSION: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".md": "markdown", ".markdown": "markdown", ".json": "json",
    ".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".html": "html", ".htm": "html", ".css": "css",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript", ".rs": "rust",
    ".go": "go", ".java": "java", ".sql": "sql", ".xml": "xml", ".sh": "bash", ".bash": "bash",
}
"""File extensions → the TextArea languages (tree-sitter grammars) they are written in."""


def language_for_path(path: str | None) -> str | None:
    """The language of a file by its extension (``src/app.py`` → ``python``), or ``None`` — never a guess from
    the content."""
    if not path:
        return None
    return LANGUAGE_BY_EXTENSION.get(Path(path).suffix.lower())

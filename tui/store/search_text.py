"""What the search finds in a message, how a query is read, and the snippet shown for a hit.

Shared by the index (``search_index``) and the linear scan it falls back to
(``search_scan``), so both find the same things and show the same snippets.
No Textual here.
"""

from __future__ import annotations

import json
import os
import shlex
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from tui.message_text import prompt_text
from tui.metadata_keys import EVICTED_PATH_KEY
from tui.nofollow import open_file
from tui.redaction import redact
from tui.terminal_text import CONTROL_CHARACTERS, encodable

MAX_DOC_CHARS = 2_000_000
"""A saved output larger than this is indexed up to here (read_file still reads all of it)."""
HIGHLIGHT_START = "\x02"
HIGHLIGHT_END = "\x03"
SNIPPET_CHARS = 160


@dataclass(frozen=True)
class Doc:
    """One searchable piece of a message: a prompt, an answer, a tool call or result, a summary, a saved output."""

    role: str
    text: str
    tool: str | None = None
    path: str | None = None
    """For a saved output: the file it was read from."""


def clean(text: str) -> str:
    """Text as indexed and shown: control characters (the ones :mod:`tui.terminal_text` keeps off the
    terminal — terminal escapes among them — and our highlight marks) become spaces, so they neither join
    words in the index nor show as pictures in snippets; lone surrogates are replaced; known secrets are
    redacted (the index must not find a key a provider echoed)."""
    return encodable(CONTROL_CHARACTERS.sub(" ", redact(text)))


def _call_text(part: ToolCallPart) -> str:
    """``write_file(path=a.py, content=<the text as written>)``: string arguments unescaped, so a search for
    a line of written code finds it as it reads."""
    arguments = ", ".join(f"{key}={value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"
                          for key, value in part.args_as_dict().items())
    return f"{part.tool_name}({arguments})"


def read_saved_output(path_text: str, saved_dir: Path | None) -> str | None:
    """The text of an evicted output, only if ``path_text`` names a file inside ``saved_dir``.

    The path comes from messages.json (hostile input): anything outside the saved-outputs
    directory, or unreadable, is ignored.
    """
    if saved_dir is None:
        return None
    try:
        path = Path(os.path.abspath(path_text))  # lexical: a link is refused below, never resolved
        if path.parent != Path(os.path.abspath(saved_dir)):
            return None
        with os.fdopen(open_file(path, os.O_RDONLY), "rb") as handle:  # deep-tui's own regular file only
            data = handle.read(MAX_DOC_CHARS)
    except (OSError, ValueError, RuntimeError):
        return None
    return data.decode("utf-8", errors="replace")


def message_docs(message: ModelMessage, saved_dir: Path | None) -> Iterator[Doc]:
    """Every searchable piece of ``message``; a saved output is read from ``saved_dir``."""
    if isinstance(message, ModelRequest):
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                yield Doc("user", clean(prompt_text(part.content)))
            elif isinstance(part, ToolReturnPart):
                yield Doc("tool", clean(part.model_response_str()), tool=part.tool_name)
                metadata = part.metadata if isinstance(part.metadata, dict) else {}
                saved = metadata.get(EVICTED_PATH_KEY)
                if isinstance(saved, str):
                    text = read_saved_output(saved, saved_dir)
                    if text is not None:
                        yield Doc("saved output", clean(text), tool=part.tool_name, path=saved)
            elif isinstance(part, RetryPromptPart):
                yield Doc("tool", clean(part.model_response()), tool=part.tool_name)
            elif isinstance(part, CompactionPart) and part.content:
                yield Doc("summary", clean(part.content))
    elif isinstance(message, ModelResponse):
        for part in message.parts:
            if isinstance(part, TextPart) and part.content:
                yield Doc("assistant", clean(part.content))
            elif isinstance(part, ToolCallPart):
                yield Doc("tool call", clean(_call_text(part)), tool=part.tool_name)
            elif isinstance(part, ThinkingPart) and part.content:
                yield Doc("thinking", clean(part.content))


def message_text(message: ModelMessage, saved_dir: Path | None = None) -> str:
    """The whole message as labelled text (for ``read_conversation_message``); saved outputs are not inlined."""
    blocks: list[str] = []
    for doc in message_docs(message, None):
        label = doc.role if doc.tool is None else f"{doc.role} {doc.tool}"
        blocks.append(f"[{label}]\n{doc.text}")
    if isinstance(message, ModelRequest):
        for part in message.parts:
            metadata = part.metadata if isinstance(part, ToolReturnPart) and isinstance(part.metadata, dict) else {}
            saved = metadata.get(EVICTED_PATH_KEY)
            if isinstance(saved, str):
                blocks.append(f"[saved output] the whole output is in {saved} (read it with read_file)")
    return "\n\n".join(blocks)


# -- queries -------------------------------------------------------------------------------


def fold(text: str) -> str:
    """Case-insensitive, accent-sensitive comparison form: what SQLite's trigram tokenizer folds too."""
    return unicodedata.normalize("NFC", text).lower()


def query_terms(query: str) -> list[str]:
    """Words of ``query``; ``"quoted phrases"`` stay together. Every term must occur (AND)."""
    try:
        words = shlex.split(query, posix=True)
    except ValueError:  # an unbalanced quote: take the words as typed
        words = query.replace('"', " ").split()
    terms = [" ".join(word.split()) for word in words]
    return [term for term in terms if term]


def matches(text_folded: str, terms_folded: list[str]) -> bool:
    return all(term in text_folded for term in terms_folded)


def make_snippet(text: str, terms: list[str], width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``text`` on one line around the first term found, every term
    occurrence in it wrapped in :data:`HIGHLIGHT_START` … :data:`HIGHLIGHT_END`."""
    folded = fold(text)
    folded_terms = [fold(term) for term in terms if term]
    positions = [folded.find(term) for term in folded_terms]
    found = [position for position in positions if position >= 0]
    if len(folded) != len(text):  # folding changed lengths (rare): positions are approximate
        found = [min(position, len(text)) for position in found]
    first = min(found) if found else 0
    start = max(0, first - width // 3)
    stop = min(len(text), start + width)
    window = " ".join(text[start:stop].split())
    prefix = "…" if start > 0 else ""
    suffix = "…" if stop < len(text) else ""
    return prefix + highlight(window, folded_terms) + suffix


def make_excerpt(text: str, terms: list[str], *, context_lines: int = 5, max_chars: int = 1_500) -> str:
    """The first line holding a term (one holding all of them, if any) with ``context_lines`` lines each
    side, verbatim (no marks: values stay copyable), capped at ``max_chars``."""
    lines = text.splitlines() or [text]
    folded_terms = [fold(term) for term in terms if term]
    folded_lines = [fold(line) for line in lines]
    number = next((n for n, line in enumerate(folded_lines) if all(term in line for term in folded_terms)), None)
    if number is None:
        number = next((n for n, line in enumerate(folded_lines) if any(term in line for term in folded_terms)), 0)
    start, stop = max(0, number - context_lines), min(len(lines), number + context_lines + 1)
    excerpt = "\n".join(lines[start:stop])
    if len(excerpt) > max_chars:
        focus = excerpt.find(lines[number][:80]) if lines[number] else 0
        begin = max(0, min(focus - max_chars // 3, len(excerpt) - max_chars))
        excerpt = ("…" if begin else "") + excerpt[begin:begin + max_chars] + "…"
    return excerpt


def highlight(text: str, folded_terms: list[str]) -> str:
    """Wrap each occurrence of a term in the highlight marks (longest terms first, no overlaps)."""
    folded = fold(text)
    if len(folded) != len(text) or not folded_terms:
        return text
    marks = [False] * len(text)
    for term in sorted(set(folded_terms), key=len, reverse=True):
        start = folded.find(term)
        while start >= 0 and term:
            for position in range(start, start + len(term)):
                marks[position] = True
            start = folded.find(term, start + len(term))
    out: list[str] = []
    inside = False
    for character, marked in zip(text, marks, strict=True):
        if marked and not inside:
            out.append(HIGHLIGHT_START)
            inside = True
        elif not marked and inside:
            out.append(HIGHLIGHT_END)
            inside = False
        out.append(character)
    if inside:
        out.append(HIGHLIGHT_END)
    return "".join(out)


def plain_snippet(snippet: str, start: str = "«", end: str = "»") -> str:
    """A snippet with its highlight marks as visible characters (for the agent and the CLI)."""
    return snippet.replace(HIGHLIGHT_START, start).replace(HIGHLIGHT_END, end)

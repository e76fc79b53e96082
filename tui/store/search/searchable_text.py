"""What the search finds in a message: prompts, answers, tool calls and results, summaries, saved outputs.

Shared by the index (``search_index``) and the linear scan it falls back to
(``search_scan``), so both find the same things and show the same snippets.
No Textual here.
"""

from __future__ import annotations

import json
import os
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

from tui.base.metadata_keys import EVICTED_PATH_KEY
from tui.base.nofollow import open_file
from tui.store.search.terms import clean
from tui.text.message_text import prompt_text

MAX_DOC_CHARS = 2_000_000
"""A saved output larger than this is indexed up to here (read_file still reads all of it)."""


@dataclass(frozen=True)
class Doc:
    """One searchable piece of a message: a prompt, an answer, a tool call or result, a summary, a saved output."""

    role: str
    text: str
    tool: str | None = None
    path: str | None = None
    """For a saved output: its file, relative to the data directory (``large_tool_results/…``)."""


def _call_text(part: ToolCallPart) -> str:
    """``write_file(path=a.py, content=<the text as written>)``: string arguments unescaped, so a search for
    a line of written code finds it as it reads."""
    arguments = ", ".join(f"{key}={value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"
                          for key, value in part.args_as_dict().items())
    return f"{part.tool_name}({arguments})"


SAVED_DIR_NAME = "large_tool_results"
"""The saved-outputs folder's name inside the data directory (``DataDir.large_results_dir``)."""


def saved_output_name(path_text: str) -> str | None:
    """Where a saved output sits relative to the data directory (``large_tool_results/…``), from the path
    messages.json recorded (absolute where the project was then): the index keeps this, so saved outputs
    stay findable after the project folder moves. ``None`` for a path outside any saved-outputs folder."""
    parts = Path(path_text).parts
    if SAVED_DIR_NAME not in parts:
        return None
    inner = parts[len(parts) - 1 - parts[::-1].index(SAVED_DIR_NAME) + 1:]
    if not inner or any(part in ("", ".", "..") for part in inner):
        return None
    return "/".join((SAVED_DIR_NAME, *inner))


def read_saved_output(path_text: str, saved_dir: Path | None) -> str | None:
    """The text of an evicted output, only if ``path_text`` names a file inside ``saved_dir`` — by the
    recorded path, or by its place under ``large_tool_results/`` when the data directory has moved.

    The path comes from messages.json (hostile input): anything outside the saved-outputs
    directory, or unreadable, is ignored.
    """
    if saved_dir is None:
        return None
    name = saved_output_name(path_text)
    if name is None:
        return None
    try:
        # Lexical, never resolved: a link in place of the directory or the file is refused by the open below.
        path = Path(os.path.abspath(saved_dir.parent / name))
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
                        yield Doc("saved output", clean(text), tool=part.tool_name, path=saved_output_name(saved))
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

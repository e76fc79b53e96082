"""A recorded session read into plain entries — prompts, answers, tool calls with their results, summaries —
with every string redacted (known secrets) and defused (control characters made visible), ready to render."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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

from tui.base.metadata_keys import EVICTED_PATH_KEY, SAVED_CHARS_KEY, summary_info
from tui.base.nofollow import read_bytes
from tui.base.redaction import known_secrets, redact
from tui.store.meta import SessionMeta
from tui.text.terminal_text import visible

logger = logging.getLogger(__name__)

EXPORT_VERSION = 1
"""``version`` of the JSON export; bumped when a field changes meaning or goes away."""

TODOS_FILE = "todos.json"
"""The session's todo list, when it has one: a list of ``{"content", "status"}``."""

MAX_TODOS_BYTES = 1 << 20


def clean(text: str, secrets: frozenset[str] | None = None) -> str:
    """A string from the session as it may be shared: secrets redacted, control characters visible
    (``secrets``: :func:`known_secrets`, looked up once for a whole document)."""
    return visible(redact(text, secrets))


@dataclass
class ExportEntry:
    """One thing that happened, in order: ``kind`` is ``prompt``, ``answer``, ``thinking``, ``tool_call``,
    ``summary`` or ``note``."""

    kind: str
    index: int
    """The message's number in messages.json."""
    text: str = ""
    tool_name: str = ""
    call_id: str = ""
    args: str = ""
    result: str | None = None
    saved_path: str | None = None
    saved_chars: int | None = None
    is_error: bool = False
    replaced: int | None = None
    strategy: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if value is not None and value != "" and value is not False}


@dataclass
class SessionDocument:
    meta: SessionMeta
    entries: list[ExportEntry] = field(default_factory=list)
    todos: list[dict[str, str]] = field(default_factory=list)
    warning: str | None = None


def read_document(meta: SessionMeta, messages: Sequence[ModelMessage], directory: Path,
                  warning: str | None = None) -> SessionDocument:
    """The session's entries in order; each tool call carries its result (matched by call id)."""
    secrets = known_secrets()

    def clean(text: str) -> str:
        return visible(redact(text, secrets))

    document = SessionDocument(meta=meta, todos=_todos(directory / TODOS_FILE), warning=warning)
    calls: dict[str, ExportEntry] = {}
    entries = document.entries
    for index, message in enumerate(messages):
        if isinstance(message, ModelRequest):
            info = summary_info(message)
            for part in message.parts:
                if isinstance(part, CompactionPart) and info is not None:
                    entries.append(ExportEntry("summary", index, text=clean(str(part.content or "")),
                                               replaced=_int(info.get("replaced")),
                                               strategy=str(info.get("strategy", "summary"))))
                elif isinstance(part, UserPromptPart):
                    entries.append(ExportEntry("prompt", index, text=clean(_prompt_text(part))))
                elif isinstance(part, ToolReturnPart):
                    _attach_result(entries, calls, index, part.tool_call_id, part.tool_name,
                                   part.model_response_str(), part.metadata, clean, is_error=False)
                elif isinstance(part, RetryPromptPart) and part.tool_name:
                    _attach_result(entries, calls, index, part.tool_call_id, part.tool_name,
                                   part.model_response(), None, clean, is_error=True)
        elif isinstance(message, ModelResponse):
            for rpart in message.parts:
                if isinstance(rpart, TextPart) and rpart.content.strip():
                    entries.append(ExportEntry("answer", index, text=clean(rpart.content)))
                elif isinstance(rpart, ThinkingPart) and rpart.content.strip():
                    entries.append(ExportEntry("thinking", index, text=clean(rpart.content)))
                elif isinstance(rpart, ToolCallPart):
                    entry = ExportEntry("tool_call", index, tool_name=clean(rpart.tool_name),
                                        call_id=clean(rpart.tool_call_id), args=clean(rpart.args_as_json_str()))
                    calls[rpart.tool_call_id] = entry
                    entries.append(entry)
    return document


def _attach_result(entries: list[ExportEntry], calls: dict[str, ExportEntry], index: int, call_id: str,
                   tool_name: str, content: str, metadata: object, clean: Callable[[str], str], *,
                   is_error: bool) -> None:
    entry = calls.get(call_id)
    if entry is None:  # a result without its call (the call was summarized away): shown on its own
        entry = ExportEntry("tool_call", index, tool_name=clean(tool_name), call_id=clean(call_id))
        entries.append(entry)
    entry.result = clean(content)
    entry.is_error = is_error
    if isinstance(metadata, dict):
        path = metadata.get(EVICTED_PATH_KEY)
        entry.saved_path = clean(path) if isinstance(path, str) else None
        entry.saved_chars = _int(metadata.get(SAVED_CHARS_KEY))


def _prompt_text(part: UserPromptPart) -> str:
    if isinstance(part.content, str):
        return part.content
    pieces = []
    for item in part.content:
        if isinstance(item, str):
            pieces.append(item)
        else:
            pieces.append(f"[{getattr(item, 'kind', 'attachment')}]")
    return "\n".join(pieces)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _todos(path: Path) -> list[dict[str, str]]:
    """The todo list, if the session has a readable one (a bad file is logged and left out, never fatal)."""
    try:
        if path.lstat().st_size > MAX_TODOS_BYTES:
            logger.warning("todo list %s not exported: larger than %d bytes", path, MAX_TODOS_BYTES)
            return []
        data = read_bytes(path)
    except FileNotFoundError:
        return []
    except OSError as error:  # a link planted in its place, unreadable
        logger.warning("todo list %s not exported: %s", path, error)
        return []
    try:
        raw = json.loads(data)
    except ValueError as error:
        logger.warning("todo list %s not exported: %s", path, error)
        return []
    items = raw.get("todos") if isinstance(raw, dict) else raw
    if not isinstance(items, list):
        return []
    todos = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("content"), str):
            status = item.get("status")
            todos.append({"content": clean(item["content"]),
                          "status": clean(status) if isinstance(status, str) else "pending"})
    return todos

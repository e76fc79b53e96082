"""A recorded session read into plain entries — prompts, answers, tool calls with their results, summaries —
with every string redacted (known secrets) and defused (control characters made visible), ready to render."""

from __future__ import annotations

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
from tui.base.redaction import known_secrets, redact
from tui.store.meta import SessionMeta
from tui.store.task_state import TaskStateFile
from tui.text.attachment_text import without_image_content
from tui.text.terminal_text import visible

logger = logging.getLogger(__name__)

EXPORT_VERSION = 1
"""``version`` of the JSON export; bumped when a field changes meaning or goes away."""


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
    keep: list[str] = field(default_factory=list)
    """The user's standing instructions (``/keep``)."""
    warning: str | None = None


def read_document(meta: SessionMeta, messages: Sequence[ModelMessage], directory: Path,
                  warning: str | None = None) -> SessionDocument:
    """The session's entries in order; each tool call carries its result (matched by call id)."""
    secrets = known_secrets()

    def clean(text: str) -> str:
        return visible(redact(text, secrets))

    todos, keep, task_warnings = _task_state(directory)
    warning = "; ".join(part for part in (warning, *task_warnings) if part) or None
    document = SessionDocument(meta=meta, todos=todos, keep=keep, warning=warning)
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
    for item in without_image_content(part.content):  # an attached image: its attachment item says what it was
        if isinstance(item, str):
            pieces.append(item)
        else:
            pieces.append(f"[{getattr(item, 'kind', 'attachment')}]")
    return "\n".join(pieces)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _task_state(directory: Path) -> tuple[list[dict[str, str]], list[str], list[str]]:
    """The session's todo list and standing instructions (todos.json, read-only: an unreadable or linked file
    is left alone, and said in the returned warnings)."""
    state_file = TaskStateFile.of(directory, read_only=True)
    state = state_file.state
    todos = [{"content": clean(item.content), "status": item.status} for item in state.todos]
    return todos, [clean(line.text) for line in state.keep], state_file.warnings

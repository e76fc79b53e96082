"""What a session left on disk, read back the way a user (or pydantic-ai) would: messages.json through
``ModelMessagesTypeAdapter``, saved outputs as files."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

SUMMARY_KEY = "deep_tui_summary"


def load_history(data_root: Path, session_id: str) -> list[ModelMessage]:
    """The whole of a session's messages.json (raises if pydantic-ai cannot read it)."""
    return list(ModelMessagesTypeAdapter.validate_json((data_root / "sessions" / session_id / "messages.json")
                                                       .read_bytes()))


def marker_info(message: ModelMessage) -> dict[str, Any] | None:
    """A summary's or fallback marker's metadata (``strategy``, ``kept_from``), else ``None``."""
    if isinstance(message, ModelRequest):
        for part in message.parts:
            if isinstance(part, CompactionPart) and isinstance(part.metadata, dict):
                info = part.metadata.get(SUMMARY_KEY)
                if isinstance(info, dict):
                    return info
    return None


def marker_text(message: ModelMessage) -> str:
    assert isinstance(message, ModelRequest)
    return "".join(p.content or "" for p in message.parts if isinstance(p, CompactionPart))


def response_key(message: ModelResponse) -> tuple[Any, ...]:
    """What identifies a model response: its tool calls (id, name, arguments) and text."""
    key: list[Any] = []
    for part in message.parts:
        if isinstance(part, ToolCallPart):
            key.append((part.tool_call_id, part.tool_name, repr(sorted(part.args_as_dict().items()))))
        elif isinstance(part, TextPart):
            key.append(("text", part.content))
    return tuple(key)


def is_subsequence(wanted: Sequence[Any], have: Sequence[Any]) -> int:
    """How many of ``wanted`` are found in order in ``have`` (``len(wanted)``: all)."""
    found = 0
    for item in have:
        if found < len(wanted) and item == wanted[found]:
            found += 1
    return found


@dataclass(frozen=True)
class SummarySpan:
    """A recorded summary and the original messages it replaced."""

    text: str
    strategy: str
    span: list[ModelMessage]


def summary_spans(history: Sequence[ModelMessage]) -> list[SummarySpan]:
    """Each marker with the span it replaced: the non-marker messages from the previous marker's
    ``kept_from`` up to its own ``kept_from`` (how the working context is rebuilt on resume)."""
    spans: list[SummarySpan] = []
    start = 0
    for index, message in enumerate(history):
        info = marker_info(message)
        if info is None:
            continue
        kept_from = info.get("kept_from")
        end = kept_from if isinstance(kept_from, int) and 0 <= kept_from <= index else index
        span = [m for m in history[start:end] if marker_info(m) is None]
        spans.append(SummarySpan(marker_text(message), str(info.get("strategy")), span))
        start = end
    return spans


def user_prompts(history: Sequence[ModelMessage]) -> list[str]:
    return [p.content for m in history if isinstance(m, ModelRequest) for p in m.parts
            if isinstance(p, UserPromptPart) and isinstance(p.content, str)]


def tool_returns(history: Sequence[ModelMessage]) -> dict[str, ToolReturnPart]:
    """Each call id's first recorded return (the original: recording precedes every rewrite)."""
    returns: dict[str, ToolReturnPart] = {}
    for message in history:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    returns.setdefault(part.tool_call_id, part)
    return returns

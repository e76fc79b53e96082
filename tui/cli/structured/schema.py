"""The JSON objects of ``--output-format json | stream-json`` (version :data:`SCHEMA_VERSION`).

Every object has ``type``; the ``result`` object also ``version``. Strings pass through the redactor (a
known secret never reaches stdout), and :func:`dumps` escapes every control and non-ASCII character, so a
terminal showing the stream shows no escape sequence from the model or a file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tui.agent.hooks.hook_events import HookNotice
from tui.agent.models.provider_events import ProviderRetrying
from tui.agent.turn_events import (
    McpServersStarting,
    PromptAttached,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutputDelta,
    ToolOutputEnded,
    TurnEvent,
    TurnFailed,
    TurnFinished,
)
from tui.base.errors import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK
from tui.base.redaction import redact
from tui.chain.event_text import describe_event
from tui.chain.events import (
    ChainEvent,
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    EvictedEvent,
    UsageEvent,
)

SCHEMA_VERSION = 1
"""Bumped when a field changes meaning or goes away (new fields and new event types do not bump it)."""

EXIT_REFUSED = 3
"""A turn of ``--output-format json | stream-json`` ended, but a tool call in it was refused (a write,
a command or an MCP call ``run`` may not make): the answer may lack what the refused call would have done."""

EXIT_REASONS = {"success": EXIT_OK, "error": EXIT_FAILURE, "refused": EXIT_REFUSED, "interrupted": EXIT_INTERRUPTED}
"""``exit_reason`` of a ``result`` object → the exit status it gives (a signal other than SIGINT: 128 + N)."""


def dumps(obj: dict[str, Any]) -> str:
    """One line of JSON, ASCII only (control characters escaped)."""
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":"))


def _args(args_json: str) -> object:
    """A tool call's arguments as JSON when they parse, else the (redacted) text the model sent."""
    try:
        return json.loads(args_json)
    except ValueError:
        return args_json


def turn_event(event: TurnEvent) -> dict[str, Any] | None:
    """The stream-json line of one turn event (``None``: the event has no line; the result says it)."""
    if isinstance(event, TextDelta):
        return {"type": "text", "text": event.text}
    if isinstance(event, ThinkingDelta):
        return {"type": "thinking", "text": event.text}
    if isinstance(event, ToolCallStarted):
        return {"type": "tool_call", "id": event.call_id, "name": event.tool_name, "args": _args(event.args_json)}
    if isinstance(event, ToolOutputDelta):
        return {"type": "tool_output", "id": event.call_id, "text": event.text}
    if isinstance(event, ToolOutputEnded):
        return {"type": "tool_output_end", "id": event.call_id, "status": event.status}
    if isinstance(event, ToolCallFinished):
        if event.denied:
            return {"type": "tool_refused", "id": event.call_id, "name": event.tool_name, "reason": event.preview}
        return {"type": "tool_result", "id": event.call_id, "name": event.tool_name, "preview": event.preview,
                "size_chars": event.size_chars, "saved_path": event.evicted_path, "saved_chars": event.saved_chars,
                "is_error": event.is_error}
    if isinstance(event, PromptAttached):
        return {"type": "attached", "files": [{"line": line, "attached": line not in event.refused}
                                              for line in event.lines]}
    if isinstance(event, McpServersStarting):
        return {"type": "mcp_starting", "servers": list(event.names)}
    return None  # TurnFinished, TurnFailed: in the result


def chain_event(event: ChainEvent) -> dict[str, Any] | None:
    """The stream-json line of a chain event (compaction, eviction, usage, provider retry, a hook's notice)."""
    if isinstance(event, EvictedEvent):
        return {"type": "eviction", "tool": event.tool_name, "id": event.tool_call_id, "saved_path": event.path,
                "tokens": event.tokens, "size_bytes": event.size_bytes, "error": _opt(event.error),
                "text": redact(describe_event(event))}
    if isinstance(event, CompactionStarted):
        return {"type": "compaction", "phase": "started", "trigger": event.trigger, "tokens": event.tokens,
                "text": redact(describe_event(event))}
    if isinstance(event, CompactionFinished):
        return {"type": "compaction", "phase": "finished", "strategy": event.strategy, "trigger": event.trigger,
                "tokens_before": event.tokens_before, "tokens_after": event.tokens_after,
                "messages_replaced": event.messages_replaced, "files_created": list(event.files_created),
                "retention_score": event.retention_score, "cost_usd": event.cost_usd,
                "text": redact(describe_event(event))}
    if isinstance(event, CompactionFailed):
        return {"type": "compaction", "phase": "failed", "strategy": event.strategy, "trigger": event.trigger,
                "reason": redact(event.reason), "tokens": event.tokens, "text": redact(describe_event(event))}
    if isinstance(event, UsageEvent):
        return {"type": "usage", "context_tokens": event.tokens, "window": event.window, "final": event.final}
    if isinstance(event, HookNotice):
        return {"type": "hook", "event": event.hook_event, "level": event.level, "text": redact(event.message)}
    if isinstance(event, ProviderRetrying):
        return {"type": "retry", "provider": redact(event.provider), "reason": redact(event.reason),
                "retry": event.retry, "retries": event.retries, "delay_s": round(event.delay, 3)}
    return None


def _opt(text: str | None) -> str | None:
    return None if text is None else redact(text)


@dataclass
class TurnRecord:
    """What one turn did, gathered from its events, for its ``result`` object."""

    prompt: str
    answer_parts: list[str] = field(default_factory=list)
    final_output: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    error: str | None = None
    cancelled: bool = False
    interrupted_by: str | None = None
    tool_calls: int = 0
    refused: list[dict[str, str]] = field(default_factory=list)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    evictions: list[dict[str, Any]] = field(default_factory=list)

    def on_turn_event(self, event: TurnEvent) -> None:
        if isinstance(event, TextDelta):
            self.answer_parts.append(event.text)
        elif isinstance(event, ToolCallStarted):
            self.tool_calls += 1
        elif isinstance(event, ToolCallFinished) and event.denied:
            self.refused.append({"id": event.call_id, "name": event.tool_name, "reason": event.preview})
        elif isinstance(event, TurnFinished):
            self.final_output = event.output
            self.input_tokens, self.output_tokens = event.input_tokens, event.output_tokens
        elif isinstance(event, TurnFailed):
            self.error = event.message
            self.cancelled = event.cancelled

    def on_chain_event(self, line: dict[str, Any]) -> None:
        if line["type"] == "eviction":
            self.evictions.append(line)
        elif line["type"] == "compaction" and line["phase"] != "started":
            self.compactions.append(line)

    @property
    def exit_reason(self) -> str:
        if self.interrupted_by is not None or self.cancelled:
            return "interrupted"
        if self.error is not None:
            return "error"
        return "refused" if self.refused else "success"

    def result(self, *, session_id: str, model: str, cost_usd: float | None, context_tokens: int | None,
               window: int | None, exit_code: int) -> dict[str, Any]:
        answer = "".join(self.answer_parts) or self.final_output
        return {
            "type": "result", "version": SCHEMA_VERSION, "session_id": session_id, "model": model,
            "prompt": self.prompt, "answer": answer, "exit_reason": self.exit_reason, "exit_code": exit_code,
            "error": self.error, "signal": self.interrupted_by,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                      "context_tokens": context_tokens, "window": window},
            "cost_usd": cost_usd, "tool_calls": self.tool_calls, "refused": self.refused,
            "compactions": self.compactions, "evictions": self.evictions,
        }

"""What one agent turn streams to its caller (the app or ``deep-tui run``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TextDelta:
    """A piece of the assistant's answer; append it, never re-render the message."""

    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    call_id: str
    tool_name: str
    args_json: str


@dataclass(frozen=True)
class ToolCallFinished:
    call_id: str
    tool_name: str
    preview: str
    """What the model sees of the result (already evicted/capped)."""
    size_chars: int
    evicted_path: str | None = None
    """Where the whole output was saved when it was evicted."""
    saved_chars: int | None = None
    """How many characters the saved output holds (``preview`` is only part of it)."""
    is_error: bool = False
    denied: bool = False
    """The call was not run: the user (or the write policy) refused it; ``preview`` says why."""


@dataclass(frozen=True)
class TurnFinished:
    output: str
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True)
class TurnFailed:
    """The turn stopped; ``cancelled`` is True when the user asked for it (Esc)."""

    message: str
    cancelled: bool = False


TurnEvent = TextDelta | ThinkingDelta | ToolCallStarted | ToolCallFinished | TurnFinished | TurnFailed

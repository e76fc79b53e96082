"""Which working-context messages are already in messages.json, and at which index."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic_ai.messages import ModelMessage, ModelRequest


class Recorder(Protocol):
    """Where messages are appended (the session's messages.json)."""

    def append_messages(self, messages: Sequence[ModelMessage]) -> int:
        """Append in order; return the index of the first one."""
        ...


class RecordingLedger:
    """Appends each new message exactly once, before anything can change it (O(new messages))."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self._indices: dict[int, tuple[ModelMessage, int]] = {}
        self._request_parts: dict[int, tuple[object, int]] = {}
        """The parts of recorded requests: pydantic-ai merges two requests in a row (a ``!command`` or a rewind's
        note, then another) into a new object holding the same parts, which is no new message."""

    def index_of(self, message: ModelMessage) -> int | None:
        hit = self._indices.get(id(message))
        return hit[1] if hit is not None and hit[0] is message else None

    def remember(self, message: ModelMessage, index: int) -> None:
        self._indices[id(message)] = (message, index)
        if isinstance(message, ModelRequest):
            for part in message.parts:
                self._request_parts[id(part)] = (part, index)

    def _merged_index(self, message: ModelMessage) -> int | None:
        """The index of the last recorded request ``message`` merges (all its parts recorded), else ``None``."""
        if not isinstance(message, ModelRequest) or not message.parts:
            return None
        indices = []
        for part in message.parts:
            hit = self._request_parts.get(id(part))
            if hit is None or hit[0] is not part:
                return None
            indices.append(hit[1])
        return max(indices)

    def mark_recorded(self, messages: Sequence[ModelMessage], indices: Sequence[int]) -> None:
        for message, index in zip(messages, indices, strict=True):
            self.remember(message, index)

    def record_new(self, messages: Sequence[ModelMessage]) -> int:
        """Append the messages after the newest recorded one; returns how many were appended."""
        new: list[ModelMessage] = []
        for message in reversed(messages):
            if self.index_of(message) is not None:
                break
            merged = self._merged_index(message)
            if merged is not None:
                self.remember(message, merged)
                break
            new.append(message)
        if not new:
            return 0
        new.reverse()
        first = self.recorder.append_messages(new)
        for offset, message in enumerate(new):
            self.remember(message, first + offset)
        return len(new)

    def record_one(self, message: ModelMessage) -> int:
        index = self.recorder.append_messages([message])
        self.remember(message, index)
        return index

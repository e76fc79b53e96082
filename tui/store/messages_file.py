"""``messages.json``: the full history, one message per line, appended in place.

The file is a JSON array pydantic-ai's ``ModelMessagesTypeAdapter`` reads::

    [
    {...message 0...},
    {...message 1...}
    ]

An append overwrites only the closing bracket, so its cost does not depend on
the size of the history. A crash mid-append leaves a torn tail; the reader
loads everything before it and says how much it dropped, and the next append
moves the torn bytes aside (``messages.json.torn-<time>``) before repairing.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai.messages import CompactionPart, ModelMessage, ModelMessagesTypeAdapter, ModelRequest
from pydantic_core import ValidationError

from tui.store.errors import CorruptSessionError
from tui.wording import plural

SUMMARY_METADATA_KEY = "deep_tui_summary"
_SUMMARY_MARK = f'"{SUMMARY_METADATA_KEY}"'.encode()
_EMPTY = b"[\n]\n"


@dataclass(frozen=True)
class LoadResult:
    """Messages read from disk, plus a warning when a torn tail was skipped."""

    messages: list[ModelMessage]
    warning: str | None = None
    dropped_bytes: int = 0


def encode_message(message: ModelMessage) -> bytes:
    """One message as a single JSON line (no trailing comma)."""
    return ModelMessagesTypeAdapter.dump_json([message])[1:-1]


def summary_metadata(message: ModelMessage) -> dict[str, Any] | None:
    """The ``deep_tui_summary`` metadata of a recorded summary message, else ``None``."""
    if not isinstance(message, ModelRequest):
        return None
    for part in message.parts:
        if isinstance(part, CompactionPart) and isinstance(part.metadata, dict):
            info = part.metadata.get(SUMMARY_METADATA_KEY)
            if isinstance(info, dict):
                return info
    return None


@dataclass
class _Layout:
    """Where each complete message line sits in the file."""

    spans: list[tuple[int, int]]
    """(start, end) byte offsets of each message's JSON (end excludes any comma)."""
    write_at: int
    """Offset right after the last complete message (or after ``[``)."""
    file_size: int
    torn_bytes: int
    closed: bool


class MessagesFile:
    """Reads and appends one session's ``messages.json``."""

    def __init__(self, path: Path, *, durable: bool = False) -> None:
        self.path = path
        self.durable = durable
        self._layout: _Layout | None = None

    # -- scanning ---------------------------------------------------------------

    def _read_bytes(self) -> bytes:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return b""
        except OSError as error:
            raise CorruptSessionError(f"cannot read {self.path}: {error.strerror or error}") from None

    def _scan(self) -> _Layout:
        if self._layout is not None:
            return self._layout
        data = self._read_bytes()
        if not data.strip():
            self._layout = _Layout([], 0, len(data), 0, closed=False)
            return self._layout
        if data.rstrip() == b"[":  # torn while the file was being created
            self._layout = _Layout([], 1, len(data), len(data) - 1, closed=False)
            return self._layout
        if not data.startswith(b"[\n"):
            self._convert_foreign(data)
            data = self._read_bytes()
        self._layout = self._layout_of(data)
        return self._layout

    def _layout_of(self, data: bytes) -> _Layout:
        spans: list[tuple[int, int]] = []
        position = 2  # after "[\n"
        write_at = 1
        closed = False
        size = len(data)
        while position < size:
            newline = data.find(b"\n", position)
            line_end = size if newline == -1 else newline
            line = data[position:line_end]
            if line == b"]":
                closed = True
                break
            if not line.startswith(b"{"):
                self._convert_foreign(data)
                return self._layout_of(self._read_bytes())
            body_end = line_end - 1 if line.endswith(b",") else line_end
            body = data[position:body_end]
            if not body.endswith(b"}"):
                break  # torn: the line was never finished
            spans.append((position, body_end))
            write_at = body_end
            if newline == -1:
                break
            position = newline + 1
        if not closed and spans:
            start, end = spans[-1]
            try:
                json.loads(data[start:end])
            except ValueError:
                spans.pop()
                write_at = spans[-1][1] if spans else 1
        torn = 0 if closed else size - write_at
        return _Layout(spans, write_at, size, torn, closed)

    def _convert_foreign(self, data: bytes) -> None:
        """Rewrite a valid array in another layout to ours, keeping the original as ``.orig``."""
        try:
            messages = ModelMessagesTypeAdapter.validate_json(data)
        except ValidationError as error:
            raise CorruptSessionError(
                f"{self.path} is not a readable message history ({error.error_count()} errors); left untouched"
            ) from None
        backup = self.path.with_name(self.path.name + ".orig")
        if not backup.exists():
            shutil.copy2(self.path, backup)
        body = b",\n".join(encode_message(message) for message in messages)
        content = b"[\n" + body + b"\n]\n" if messages else _EMPTY
        temporary = self.path.with_name(self.path.name + ".converting")
        temporary.write_bytes(content)
        os.replace(temporary, self.path)

    # -- reading ------------------------------------------------------------------

    def count(self) -> int:
        """Number of complete messages (no JSON parsing of message bodies)."""
        return len(self._scan().spans)

    def _parse(self, data: bytes, spans: Sequence[tuple[int, int]]) -> list[ModelMessage]:
        if not spans:
            return []
        body = b",".join(data[start:end] for start, end in spans)
        try:
            return list(ModelMessagesTypeAdapter.validate_json(b"[" + body + b"]"))
        except ValidationError as error:
            raise CorruptSessionError(
                f"{self.path} holds a message pydantic-ai cannot read ({error.error_count()} errors)"
            ) from None

    def _read_spans(self, spans: Sequence[tuple[int, int]]) -> list[ModelMessage]:
        if not spans:
            return []
        with self.path.open("rb") as handle:
            handle.seek(spans[0][0])
            chunk = handle.read(spans[-1][1] - spans[0][0])
        base = spans[0][0]
        return self._parse(chunk, [(start - base, end - base) for start, end in spans])

    def load(self) -> LoadResult:
        """Every complete message; a torn tail is skipped and reported."""
        layout = self._scan()
        messages = self._read_spans(layout.spans)
        warning = None
        if layout.torn_bytes:
            warning = (
                f"{self.path} ended in an unfinished write; loaded {plural(len(messages), 'message')} and set aside "
                f"{layout.torn_bytes} trailing bytes"
            )
        return LoadResult(messages, warning, layout.torn_bytes)

    def torn_tail_warning(self) -> str | None:
        """The warning ``load`` would give for a torn tail, without parsing any message."""
        layout = self._scan()
        if not layout.torn_bytes:
            return None
        return (f"{self.path} ended in an unfinished write; {len(layout.spans)} complete messages are kept and "
                f"{layout.torn_bytes} trailing bytes will be set aside on the next write")

    def load_range(self, start: int, stop: int) -> list[ModelMessage]:
        """Messages ``[start:stop]``, parsing only those lines."""
        spans = self._scan().spans[start:stop]
        return self._read_spans(spans)

    def load_tail(self, count: int) -> list[ModelMessage]:
        total = self.count()
        return self.load_range(max(0, total - count), total)

    def _is_summary_at(self, index: int, raw: bytes) -> bool:
        if _SUMMARY_MARK not in raw or b'"compaction"' not in raw:
            return False
        [message] = self._parse(raw, [(0, len(raw))])
        return summary_metadata(message) is not None

    def _raw_line(self, handle: Any, span: tuple[int, int]) -> bytes:
        handle.seek(span[0])
        return handle.read(span[1] - span[0])

    def last_summary_index(self) -> int | None:
        """Index of the newest recorded summary, scanning from the end."""
        spans = self._scan().spans
        if not spans:
            return None
        with self.path.open("rb") as handle:
            for index in range(len(spans) - 1, -1, -1):
                if self._is_summary_at(index, self._raw_line(handle, spans[index])):
                    return index
        return None

    def load_working_context_indexed(self) -> tuple[list[ModelMessage], list[int]]:
        """The context to resume from and each message's index in this file.

        Without a summary: every message. With one: the newest summary, the
        messages it kept verbatim (from its ``kept_from``), then everything
        recorded after it; older summaries in that range are left out.
        """
        spans = self._scan().spans
        summary_index = self.last_summary_index()
        if summary_index is None:
            return self._read_spans(spans), list(range(len(spans)))
        [summary] = self.load_range(summary_index, summary_index + 1)
        info = summary_metadata(summary) or {}
        kept_from = info.get("kept_from")
        if not isinstance(kept_from, int) or not 0 <= kept_from <= summary_index:
            kept_from = summary_index
        indices = [summary_index]
        with self.path.open("rb") as handle:
            for index in [*range(kept_from, summary_index), *range(summary_index + 1, len(spans))]:
                if not self._is_summary_at(index, self._raw_line(handle, spans[index])):
                    indices.append(index)
        messages = [summary, *self._read_spans_at(indices[1:])]
        return messages, indices

    def _read_spans_at(self, indices: Sequence[int]) -> list[ModelMessage]:
        spans = self._scan().spans
        if not indices:
            return []
        with self.path.open("rb") as handle:
            raw = [self._raw_line(handle, spans[index]) for index in indices]
        return self._parse(b",".join(raw), _consecutive_spans(raw))

    def load_working_context(self) -> list[ModelMessage]:
        return self.load_working_context_indexed()[0]

    # -- appending ----------------------------------------------------------------

    def append(self, messages: Sequence[ModelMessage]) -> int:
        """Append ``messages`` in place; returns the index of the first one."""
        layout = self._scan()
        first_index = len(layout.spans)
        if not messages:
            return first_index
        if layout.torn_bytes:
            self._set_aside_torn_tail(layout)
        lines = [encode_message(message) for message in messages]
        if not self.path.exists() or layout.file_size == 0:
            self.path.write_bytes(_EMPTY)
            layout.write_at, layout.file_size = 1, len(_EMPTY)
        prefix = b",\n" if layout.spans else b"\n"
        payload = prefix + b",\n".join(lines) + b"\n]\n"
        with self.path.open("r+b") as handle:
            handle.seek(layout.write_at)
            handle.write(payload)
            handle.truncate()
            if self.durable:
                handle.flush()
                os.fsync(handle.fileno())
        position = layout.write_at + len(prefix)
        for line in lines:
            layout.spans.append((position, position + len(line)))
            position += len(line) + 2
        layout.write_at = layout.spans[-1][1]
        layout.file_size = layout.write_at + 3
        layout.closed = True
        return first_index

    def _set_aside_torn_tail(self, layout: _Layout) -> None:
        data = self._read_bytes()
        torn_copy = self.path.with_name(f"{self.path.name}.torn-{time.strftime('%Y%m%d-%H%M%S')}")
        torn_copy.write_bytes(data[layout.write_at:])
        with self.path.open("r+b") as handle:
            handle.seek(layout.write_at)
            handle.write(b"\n]\n")
            handle.truncate()
        layout.file_size = layout.write_at + 3
        layout.torn_bytes = 0
        layout.closed = True


def _consecutive_spans(chunks: Sequence[bytes]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    position = 0
    for chunk in chunks:
        spans.append((position, position + len(chunk)))
        position += len(chunk) + 1
    return spans


def write_empty(path: Path) -> None:
    """Create an empty history file."""
    path.write_bytes(_EMPTY)

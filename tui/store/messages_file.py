"""``messages.json``: the full history, one message per line, appended in place.

The file is a JSON array pydantic-ai's ``ModelMessagesTypeAdapter`` reads::

    [
    {...message 0...},
    {...message 1...}
    ]

An append overwrites only the closing bracket, so its cost does not depend on the size of the
history. Damage never costs an intact message (see :mod:`tui.store.messages_layout`):

- a torn tail (a crash mid-append) is skipped when reading and, on the next append, its bytes are
  kept in ``messages.json.torn-<time>`` before the bracket is repaired in place;
- damage anywhere else (or a record pydantic-ai cannot read) turns into a placeholder message at
  that index, so later indices do not move; a writer then rewrites the file once (:meth:`repair`),
  keeping the file as it was under ``messages.json.damaged-<time>``.

Kept copies get sub-second names and are never overwritten.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_core import ValidationError

from tui.base.atomic import create_new, link_new, stamp, write_atomic
from tui.base.metadata_keys import SUMMARY_METADATA_KEY, summary_info
from tui.base.nofollow import open_file, read_bytes
from tui.base.redaction import redact_bytes
from tui.store.damage import DamageReport, damage_note
from tui.store.messages_layout import RECORD_START, Layout, scan
from tui.store.store_errors import CorruptSessionError, StorageError
from tui.text.wording import plural

logger = logging.getLogger(__name__)

_SUMMARY_MARK = f'"{SUMMARY_METADATA_KEY}"'.encode()
_EMPTY = b"[\n]\n"


@dataclass(frozen=True)
class LoadResult:
    """Messages read from disk, plus a warning when some bytes could not be read."""

    messages: list[ModelMessage]
    warning: str | None = None
    dropped_bytes: int = 0


def encode_message(message: ModelMessage) -> bytes:
    """One message as a single JSON line (no trailing comma)."""
    return ModelMessagesTypeAdapter.dump_json([message])[1:-1]


class MessagesFile:
    """Reads and appends one session's ``messages.json``."""

    def __init__(self, path: Path, *, durable: bool = False, convert_foreign: bool = True) -> None:
        self.path = path
        self.durable = durable
        self.convert_foreign = convert_foreign
        """False for readers that must never rewrite the file (listing, search): see :func:`read_foreign`."""
        self._layout: Layout | None = None
        self.notices: list[str] = []
        """Damage found after opening (a record pydantic-ai cannot read) and what was done about it."""

    # -- scanning ---------------------------------------------------------------

    def _read_bytes(self) -> bytes:
        try:
            return read_bytes(self.path)
        except FileNotFoundError:
            return b""
        except OSError as error:
            raise StorageError.of("read the session history", error) from None

    def _scan(self) -> Layout:
        if self._layout is not None:
            return self._layout
        data = self._read_bytes()
        layout = scan(data)
        if not layout.clean and self.convert_foreign and _looks_like_an_array(data) and self._convert_foreign(data):
            data = self._read_bytes()
            layout = scan(data)
        if not layout.recognized:
            raise CorruptSessionError(f"{self.path} is not a message history (nothing in it can be read as one); "
                                      "left untouched")
        self._layout = layout
        return layout

    def _convert_foreign(self, data: bytes) -> bool:
        """Rewrite a valid array in another layout (pydantic-deep, an indented dump) to ours, keeping the
        original as ``messages.json.orig``; ``False`` when ``data`` is not one."""
        try:
            messages = ModelMessagesTypeAdapter.validate_json(data)
        except ValidationError:
            return False
        backup = link_new(self.path, self.path.with_name(self.path.name + ".orig"))
        logger.info("converted %s to one message per line; the original is kept as %s", self.path, backup.name)
        write_atomic(self.path, _framed([encode_message(message) for message in messages]))
        return True

    # -- reading ------------------------------------------------------------------

    def count(self) -> int:
        """Number of messages, damaged places included (no parsing of message bodies)."""
        return len(self._scan().spans)

    def load(self) -> LoadResult:
        """Every message (a placeholder where one was damaged); a torn tail is skipped and reported."""
        layout = self._scan()
        messages = self._messages_at(range(len(layout.spans)))
        return LoadResult(messages, self.damage_warning(), layout.torn_bytes)

    def damage_warning(self) -> str | None:
        """What is wrong with the file as it is on disk now, for the user; ``None`` when nothing is."""
        layout = self._scan()
        problems: list[str] = []
        if layout.damaged:
            problems.append(f"{plural(len(layout.damaged), 'damaged place')} ({layout.damaged_bytes()} bytes, at message "
                            f"{_numbers(layout.damaged)}) are shown as notes")
        elif not layout.canonical:
            problems.append("its framing is damaged (no message lost)")
        if layout.torn_bytes:
            problems.append(f"it ends in an unfinished write: the last {layout.torn_bytes} bytes will be kept in "
                            f"{self.path.name}.torn-<time> on the next write")
        if not problems:
            return None
        return f"{self.path}: {plural(layout.intact_count(), 'intact message')} loaded; " + "; ".join(problems)

    def load_range(self, start: int, stop: int) -> list[ModelMessage]:
        """Messages ``[start:stop]``, parsing only those lines."""
        return self._messages_at(range(len(self._scan().spans))[start:stop])

    def load_tail(self, count: int) -> list[ModelMessage]:
        total = self.count()
        return self.load_range(max(0, total - count), total)

    def _raw_lines(self, indices: Sequence[int]) -> list[bytes]:
        spans = self._scan().spans
        if not indices:
            return []
        with self._open_for_reading() as handle:
            if list(indices) == list(range(indices[0], indices[-1] + 1)):  # one read for a contiguous range
                base = spans[indices[0]][0]
                handle.seek(base)
                chunk = handle.read(spans[indices[-1]][1] - base)
                return [chunk[spans[index][0] - base:spans[index][1] - base] for index in indices]
            return [self._raw_line(handle, spans[index]) for index in indices]

    def _open_for_reading(self) -> BinaryIO:
        return os.fdopen(open_file(self.path, os.O_RDONLY), "rb")

    def _raw_line(self, handle: BinaryIO, span: tuple[int, int]) -> bytes:
        handle.seek(span[0])
        return handle.read(span[1] - span[0])

    def _messages_at(self, indices: Sequence[int]) -> list[ModelMessage]:
        layout = self._scan()
        raws = self._raw_lines(indices)
        readable = [(index, raw) for index, raw in zip(indices, raws, strict=True) if index not in layout.damaged]
        parsed = self._validate(readable)
        return [parsed[index] if index in parsed else self._note(index) for index in indices]

    def _validate(self, records: Sequence[tuple[int, bytes]], *, repairing: bool = False) -> dict[int, ModelMessage]:
        """Parse records; one pydantic-ai cannot read is marked damaged (it becomes a placeholder) and, unless
        a repair is under way (its report says it all), reported in :attr:`notices`."""
        if not records:
            return {}
        try:
            messages = ModelMessagesTypeAdapter.validate_json(b"[" + b",".join(raw for _, raw in records) + b"]")
            return {index: message for (index, _), message in zip(records, messages, strict=True)}
        except ValidationError:
            pass
        parsed: dict[int, ModelMessage] = {}
        for index, raw in records:
            try:
                [parsed[index]] = ModelMessagesTypeAdapter.validate_json(b"[" + raw + b"]")
            except ValidationError as error:
                reason = f"unreadable by pydantic-ai: {error.error_count()} schema error(s)"
                if repairing:
                    self._scan().mark_damaged(index, reason)
                else:
                    self._found_unreadable(index, reason)
        return parsed

    def _found_unreadable(self, index: int, reason: str) -> None:
        layout = self._scan()
        layout.mark_damaged(index, reason)
        notice = (f"{self.path}: message {index + 1} is {reason}; it is shown as a note, and the file as it is "
                  f"will be kept as {self.path.name}.damaged-<time> on the next write")
        logger.warning("%s", notice)
        self.notices.append(notice)

    def _note(self, index: int, kept_in: str | None = None) -> ModelMessage:
        layout = self._scan()
        start, end = layout.spans[index]
        return damage_note(index, reason=layout.damaged.get(index, "damaged"), size=end - start, kept_in=kept_in)

    def _is_summary_at(self, index: int, raw: bytes) -> bool:
        if index in self._scan().damaged or _SUMMARY_MARK not in raw or b'"compaction"' not in raw:
            return False
        [message] = self._messages_at([index])
        return summary_info(message) is not None

    def last_summary_index(self) -> int | None:
        """Index of the newest recorded summary, scanning from the end."""
        spans = self._scan().spans
        if not spans:
            return None
        with self._open_for_reading() as handle:
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
            return self._messages_at(range(len(spans))), list(range(len(spans)))
        [summary] = self.load_range(summary_index, summary_index + 1)
        info = summary_info(summary) or {}
        kept_from = info.get("kept_from")
        if not isinstance(kept_from, int) or not 0 <= kept_from <= summary_index:
            kept_from = summary_index
        indices = [summary_index]
        with self._open_for_reading() as handle:
            for index in [*range(kept_from, summary_index), *range(summary_index + 1, len(spans))]:
                if not self._is_summary_at(index, self._raw_line(handle, spans[index])):
                    indices.append(index)
        messages = [summary, *self._messages_at(indices[1:])]
        return messages, indices

    def load_working_context(self) -> list[ModelMessage]:
        return self.load_working_context_indexed()[0]

    # -- repairing ------------------------------------------------------------------

    def repair(self) -> DamageReport | None:
        """Rewrite a damaged file once so it is whole again (a writer's job; indices do not move).

        Every record is checked with pydantic-ai first; damaged places become notes naming where the
        file as it was is kept (``messages.json.damaged-<time>``, a second name for the same bytes, never
        overwritten). ``None`` when there was nothing to repair. Raises ``OSError`` (e.g. a full disk)
        with the file left as it was.
        """
        layout = self._scan()
        if not layout.needs_repair:
            return None
        data = self._read_bytes()
        self._validate([(index, data[start:end]) for index, (start, end) in enumerate(layout.spans)
                        if index not in layout.damaged], repairing=True)
        kept = link_new(self.path, self.path.with_name(f"{self.path.name}.damaged-{stamp()}"))
        lines = [encode_message(self._note(index, kept.name)) if index in layout.damaged else data[start:end]
                 for index, (start, end) in enumerate(layout.spans)]
        try:
            write_atomic(self.path, _framed(lines), durable=True)
        except BaseException:
            kept.unlink(missing_ok=True)  # only a second name of the unchanged file
            raise
        report = DamageReport(path=self.path, intact=layout.intact_count(), damaged=sorted(layout.damaged),
                              damaged_bytes=layout.damaged_bytes(), torn_bytes=layout.torn_bytes, kept_as=kept)
        logger.info("%s", report.describe())
        self._layout = None
        if self.count() != len(lines):  # the rewrite must keep every index where it was
            raise CorruptSessionError(f"{self.path}: the repaired file does not read back; {kept.name} holds "
                                      "the original")
        return report

    # -- appending ----------------------------------------------------------------

    def append(self, messages: Sequence[ModelMessage]) -> int:
        """Append ``messages`` in place; returns the index of the first one."""
        layout = self._scan()
        if not messages:
            return len(layout.spans)
        if layout.needs_repair:
            layout = self._repair_before_append()
        if layout.torn_bytes:
            self._set_aside_torn_tail(layout)
        first_index = len(layout.spans)
        lines = [redact_bytes(encode_message(message)) for message in messages]  # a key never reaches the disk
        if layout.spans:
            offset, prefix = layout.write_at, b",\n"
        else:  # a new file (or one holding only "[" and a torn tail): write it whole
            offset, prefix = 0, b"[\n"
        payload = prefix + b",\n".join(lines) + b"\n]\n"
        descriptor = open_file(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        with os.fdopen(descriptor, "r+b") as handle:
            handle.seek(offset)
            handle.write(payload)
            handle.truncate()
            handle.flush()
            if self.durable:
                os.fsync(handle.fileno())
        position = offset + len(prefix)
        for line in lines:
            layout.spans.append((position, position + len(line)))
            position += len(line) + 2
        layout.write_at = layout.spans[-1][1]
        layout.file_size = layout.write_at + 3
        return first_index

    def _repair_before_append(self) -> Layout:
        try:
            report = self.repair()
        except OSError as error:  # no room for the rewrite: append in place; the reader copes with the damage
            logger.warning("%s: could not rewrite the damaged file (%s); appending in place", self.path, error)
            return self._scan()
        if report is not None:
            self.notices.append(report.describe())
        return self._scan()

    def _set_aside_torn_tail(self, layout: Layout) -> None:
        data = self._read_bytes()
        kept = create_new(self.path.with_name(f"{self.path.name}.torn-{stamp()}"), data[layout.write_at:])
        logger.info("%s: kept %d bytes of an unfinished write in %s", self.path, layout.torn_bytes, kept.name)
        layout.torn_bytes = 0  # the append that follows overwrites them in place


def _framed(lines: Sequence[bytes]) -> bytes:
    return b"[\n" + b",\n".join(lines) + b"\n]\n" if lines else _EMPTY


def _looks_like_an_array(data: bytes) -> bool:
    stripped = data.strip()
    return stripped.startswith(b"[") and stripped.endswith(b"]")


def _numbers(indices: Sequence[int] | dict[int, str]) -> str:
    ordered = sorted(indices)
    shown = ", ".join(f"#{index + 1}" for index in ordered[:5])
    return shown + (f" and {len(ordered) - 5} more" if len(ordered) > 5 else "")


def read_foreign(data: bytes) -> list[ModelMessage] | None:
    """The messages of a history in another layout (a pydantic-deep ``messages.json``: one indented JSON
    array), parsed in memory and never written back; ``None`` when ``data`` is in deep-tui's one-message-a-line
    layout (read it with :class:`MessagesFile`) or is no valid array at all."""
    if data.startswith(_EMPTY[:2] + RECORD_START) or not _looks_like_an_array(data):
        return None
    try:
        return list(ModelMessagesTypeAdapter.validate_json(data))
    except ValidationError:
        return None


def write_empty(path: Path) -> None:
    """Create an empty history file (or empty the one there; a link there is refused)."""
    with os.fdopen(open_file(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb") as handle:
        handle.write(_EMPTY)

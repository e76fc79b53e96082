"""Where each message sits in ``messages.json``'s bytes, and which bytes are damaged.

The file deep-tui writes is framed one message per line::

    [
    {"parts":[...],...,"kind":"request",...},
    {"parts":[...],...,"kind":"response",...}
    ]

:func:`scan` reads any bytes (a clean file, a torn tail, a file damaged anywhere) into a
:class:`Layout` without ever raising. Each line that is a whole JSON object shaped like a message
is a record. Lines that are not are *damaged*; inside a run of damaged lines, every message whose
bytes are still whole (garbage glued before or after it, a newline lost) is recovered. What remains
of a damaged run between two records becomes one *damaged index* when it is long enough to have held
a message: a placeholder keeps the place of what was lost there, so later messages keep their index. Damaged bytes after the last
record are the *tail* (a torn write when a crash interrupted an append).

Scanning checks each line's JSON (not the full pydantic-ai schema, which :mod:`messages_file` checks
when messages are parsed): about 8 ms per MB; a file exactly as deep-tui writes it (the usual case) is split
in one pass and only each record's JSON checked, about twice as fast (the same layout: anything that differs
in the least is scanned line by line).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pydantic_core import from_json

RECORD_START = b'{"parts":['
"""How every message line deep-tui writes begins (pydantic-ai dumps ``parts`` first)."""

SMALLEST_MESSAGE = 100
"""Fewer damaged bytes than this, glued to a recovered record, cannot have held a whole message (the
smallest pydantic-ai writes is 138 bytes): they are stray bytes, kept aside without taking an index."""

_FRAMING = b" \t\r\n,[]"
_HEADER = b"[\n"
_SEPARATOR = b",\n"
_FOOTER = b"\n]\n"


@dataclass
class Layout:
    """The messages of one file: byte spans, damaged indices, and what follows the last message."""

    spans: list[tuple[int, int]] = field(default_factory=list)
    """Per message index, its bytes ``(start, end)`` (no comma); for a damaged index, the damaged bytes."""
    damaged: dict[int, str] = field(default_factory=dict)
    """Damaged indices and why each could not be read."""
    write_at: int = 0
    """Where the next append writes: right after the last record (or after ``[``)."""
    file_size: int = 0
    torn_bytes: int = 0
    """Bytes after the last record that are more than the closing bracket (set aside on the next append)."""
    canonical: bool = True
    """The framing up to ``write_at`` is exactly deep-tui's (else the file needs rewriting to be readable
    by pydantic-ai as one JSON array)."""
    recognized: bool = True
    """False when nothing in the bytes looks like a message history (no ``[`` to start, no message)."""

    @property
    def needs_repair(self) -> bool:
        """Damage a rewrite must fix (a torn tail alone is set aside in place, without a rewrite)."""
        return bool(self.damaged) or not self.canonical

    @property
    def clean(self) -> bool:
        """Exactly what deep-tui writes: nothing to repair, nothing to set aside."""
        return not self.needs_repair and not self.torn_bytes

    def intact_count(self) -> int:
        return len(self.spans) - len(self.damaged)

    def damaged_bytes(self) -> int:
        return sum(self.spans[index][1] - self.spans[index][0] for index in self.damaged)

    def mark_damaged(self, index: int, reason: str) -> None:
        """A record found unreadable later (by the pydantic-ai schema): it becomes a placeholder too."""
        self.damaged.setdefault(index, reason)


def message_shape_problem(raw: bytes) -> str | None:
    """Why ``raw`` is not one whole message object (JSON and shape only), or ``None`` when it is."""
    try:
        value = from_json(raw, cache_strings=False)
    except ValueError as error:
        return f"not JSON: {_first_line(str(error))}"
    if not isinstance(value, dict):
        return "not a JSON object"
    if value.get("kind") not in ("request", "response") or not isinstance(value.get("parts"), list):
        return "not a message (no kind/parts)"
    return None


def scan(data: bytes) -> Layout:
    """The layout of ``data`` (see the module docstring); never raises."""
    return _clean_layout(data) or _scan_lines(data)


def _clean_layout(data: bytes) -> Layout | None:
    """The layout of bytes framed exactly as deep-tui writes them, every record a whole message; ``None``
    when anything differs (then :func:`_scan_lines` finds the same layout for these bytes, only slower)."""
    if len(data) <= len(_HEADER) + len(_FOOTER) or not (data.startswith(_HEADER) and data.endswith(_FOOTER)):
        return None
    records = data[len(_HEADER):-len(_FOOTER)].split(_SEPARATOR)
    if data.count(b"\n", len(_HEADER), len(data) - len(_FOOTER)) != len(records) - 1:
        return None  # a newline that is not between two records: the lines are not the records
    spans: list[tuple[int, int]] = []
    position = len(_HEADER)
    for record in records:
        if not (record.startswith(b"{") and record.endswith(b"}")) or message_shape_problem(record) is not None:
            return None
        end = position + len(record)
        spans.append((position, end))
        position = end + len(_SEPARATOR)
    return Layout(spans=spans, write_at=spans[-1][1], file_size=len(data))


def _scan_lines(data: bytes) -> Layout:
    """:func:`scan` line by line: any bytes at all."""
    size = len(data)
    if not data.strip(b" \t\r\n"):
        return Layout(file_size=size, torn_bytes=0, write_at=0)
    pieces = _line_pieces(data)
    pieces = _recover_in_damaged_runs(data, pieces)
    layout = Layout(file_size=size)
    layout.recognized = data.lstrip().startswith(b"[") or any(piece.reason is None for piece in pieces)
    last_record = max((number for number, piece in enumerate(pieces) if piece.reason is None), default=-1)
    pending: _Piece | None = None  # damaged bytes waiting for the next record to become one damaged index
    for piece in pieces[: last_record + 1]:
        if piece.reason is None:
            if pending is not None:
                layout.damaged[len(layout.spans)] = pending.reason or "damaged"
                layout.spans.append((pending.start, pending.end))
                pending = None
            layout.spans.append((piece.start, piece.end))
            continue
        if not _meaningful(data, piece):
            continue
        pending = piece if pending is None else _Piece(pending.start, piece.end, pending.reason)
    layout.write_at = layout.spans[-1][1] if layout.spans else min(1, size) if data.startswith(b"[") else 0
    tail = data[layout.write_at:]
    layout.torn_bytes = len(tail) if tail.strip(_FRAMING) else 0
    layout.canonical = _is_canonical(data, layout)
    return layout


@dataclass(frozen=True)
class _Piece:
    start: int
    end: int
    reason: str | None
    """``None`` for a record; else why these bytes are damaged."""
    whole_lines: bool = False
    """Damaged lines with no record recovered among them: they held one message (or were put there)."""


def _line_pieces(data: bytes) -> list[_Piece]:
    """Every non-blank line as a record or a damaged piece (the header and closing bracket are framing)."""
    pieces: list[_Piece] = []
    size = len(data)
    position = 0
    while position < size:
        newline = data.find(b"\n", position)
        line_end = size if newline == -1 else newline
        body_end = line_end
        while body_end > position and data[body_end - 1] in b"\r ":
            body_end -= 1
        if body_end > position and data[body_end - 1] == ord(","):
            body_end -= 1
        body = data[position:body_end]
        if body and body not in (b"[", b"]"):
            problem = "not a whole message" if not (body.startswith(b"{") and body.endswith(b"}")) else \
                message_shape_problem(body)
            pieces.append(_Piece(position, body_end if problem is None else line_end, problem))
        elif body:
            pieces.append(_Piece(position, line_end, "framing"))
        position = line_end + 1
    return pieces


def _recover_in_damaged_runs(data: bytes, pieces: list[_Piece]) -> list[_Piece]:
    """Split each run of damaged lines into the whole messages inside it and what is really damaged."""
    result: list[_Piece] = []
    run: list[_Piece] = []
    for piece in [*pieces, None]:
        if piece is not None and piece.reason is not None:
            run.append(piece)
            continue
        if run:
            result.extend(_recover(data, run[0].start, run[-1].end))
            run = []
        if piece is not None:
            result.append(piece)
    return result


def _recover(data: bytes, start: int, end: int) -> list[_Piece]:
    """Messages whose bytes are whole inside ``data[start:end]``, and the damaged pieces between them."""
    region = data[start:end]
    if RECORD_START not in region:
        return [_Piece(start, end, _reason_of(region), whole_lines=True)]
    text = region.decode("latin-1")  # one character per byte, so offsets stay byte offsets
    decoder = json.JSONDecoder()
    found: list[_Piece] = []
    cursor = 0
    while (candidate := region.find(RECORD_START, cursor)) != -1:
        try:
            _, stop = decoder.raw_decode(text, candidate)
        except ValueError:
            cursor = candidate + 1
            continue
        if message_shape_problem(region[candidate:stop]) is None:
            found.append(_Piece(start + candidate, start + stop, None))
            cursor = stop
        else:
            cursor = candidate + 1
    if not found:
        return [_Piece(start, end, _reason_of(region), whole_lines=True)]
    pieces: list[_Piece] = []
    position = start
    for record in found:
        if record.start > position:
            pieces.append(_Piece(position, record.start, _reason_of(data[position:record.start])))
        pieces.append(record)
        position = record.end
    if position < end:
        pieces.append(_Piece(position, end, _reason_of(data[position:end])))
    return pieces


def _reason_of(raw: bytes) -> str:
    body = raw.strip(_FRAMING)
    if body.startswith(b"{") and body.endswith(b"}"):
        return message_shape_problem(body) or "damaged framing"
    return "not a whole message"


def _meaningful(data: bytes, piece: _Piece) -> bool:
    """Damaged bytes that may have held a message (so a placeholder keeps its index): lines of their own
    with more than framing in them, or, next to recovered records, enough bytes for a whole message."""
    content = len(data[piece.start:piece.end].strip(_FRAMING))
    return content >= SMALLEST_MESSAGE or (piece.whole_lines and content > 0)


def _is_canonical(data: bytes, layout: Layout) -> bool:
    if layout.damaged:
        return False
    if not layout.spans:
        return True
    if layout.spans[0][0] != len(_HEADER) or not data.startswith(_HEADER):
        return False
    return all(data[end:next_start] == _SEPARATOR
               for (_, end), (next_start, _) in zip(layout.spans, layout.spans[1:], strict=False))


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "unknown"

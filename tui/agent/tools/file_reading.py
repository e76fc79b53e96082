"""read_file and ls, streamed: memory stays a small multiple of what is returned, whatever the file or directory.

A file is read in blocks; lines before ``offset`` are counted, not kept; a line is kept up to
:data:`LINE_CHAR_LIMIT` characters however long it is (the rest is paged by character: ``char_offset``
reads one line from that character on); a page holds at most :data:`READ_CHAR_LIMIT` characters (a saved
output's fewer when the session says so: a small window); the lines after the page are only
counted (up to :data:`COUNT_BYTE_LIMIT`). A saved output is never refused as binary: its control bytes
(a NUL in a command's output) are shown as ``\x00`` escapes. A directory is read entry by entry, at most
:data:`LS_SCAN_LIMIT` kept. Both run in a worker thread and check the tool call's deadline between blocks.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from tui.agent.tools.deadline import ToolDeadline
from tui.agent.tools.failures import refuse, reported_as_tool_error
from tui.agent.tools.path_policy import PathPolicy

READ_CHAR_LIMIT = 50_000
"""Characters of file text one read_file returns, at most."""
LINE_CHAR_LIMIT = 2_000
"""Characters of one line read_file returns, at most (the rest is counted and said)."""
BLOCK_BYTES = 256 * 1024
COUNT_BYTE_LIMIT = 1024 * 1024 * 1024
"""Bytes read past the page to count the file's lines, at most (a bigger file gets "more than N lines")."""
BINARY_SNIFF_BYTES = 4096
LIST_LIMIT = 500
"""Entries ls shows."""
LS_SCAN_LIMIT = 5_000
"""Entries ls reads and sorts; beyond them it only counts (up to :data:`LS_COUNT_LIMIT`)."""
LS_COUNT_LIMIT = 100_000

_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
"""What a saved output shows escaped: C0 controls but tab and newline (a line never holds a newline), and DEL."""


def escape_controls(text: str) -> str:
    """``text`` with each control character as a ``\\xNN`` escape (NUL → ``\\x00``): binary-like bytes shown
    safely, the text around them as it is."""
    return _CONTROLS.sub(lambda match: f"\\x{ord(match.group(0)):02x}", text)


def _characters(data: bytes) -> int:
    """UTF-8 characters in ``data`` (continuation bytes do not start one)."""
    return len(data) - sum(data.count(byte) for byte in _CONTINUATION_BYTES)


class _BlockReader:
    """Lines of an open file, read :data:`BLOCK_BYTES` at a time."""

    def __init__(self, descriptor: int, deadline: ToolDeadline, first: bytes) -> None:
        self.descriptor, self.deadline = descriptor, deadline
        self.buffer, self.position = first, 0
        self.read_bytes = len(first)
        self.last_byte = first[-1:]

    def _more(self) -> bool:
        """Read the next block after what is left unread; False at the end of the file."""
        self.deadline.check()
        block = os.read(self.descriptor, BLOCK_BYTES)
        if not block:
            return False
        self.read_bytes += len(block)
        self.last_byte = block[-1:]
        self.buffer = self.buffer[self.position:] + block
        self.position = 0
        return True

    def skip(self, count: int) -> int:
        """Pass over ``count`` lines; returns how many there were (fewer at the end of the file)."""
        skipped = 0
        while skipped < count:
            newlines = self.buffer.count(b"\n", self.position)
            if skipped + newlines < count:
                skipped += newlines
                partial = self.position < len(self.buffer) and not self.buffer.endswith(b"\n")
                self.position = len(self.buffer)
                if not self._more():
                    return skipped + (1 if partial and skipped < count else 0)  # a last line without newline
                continue
            while skipped < count:
                self.position = self.buffer.index(b"\n", self.position) + 1
                skipped += 1
        return skipped

    def line(self, byte_cap: int) -> tuple[bytes, int] | None:
        """The next line's first ``byte_cap`` bytes and its length in characters (a CRLF line's ``\\r`` not
        counted); ``None`` at the end."""
        while True:
            newline = self.buffer.find(b"\n", self.position)
            if newline >= 0:
                line = self.buffer[self.position:newline]
                self.position = newline + 1
                counted = line.removesuffix(b"\r")
                return line[:byte_cap], (_characters(counted) if len(counted) > byte_cap // 4 else len(counted))
            if len(self.buffer) - self.position > byte_cap:
                return self._long_line(byte_cap)
            if not self._more():
                if self.position >= len(self.buffer):
                    return None
                line = self.buffer[self.position:]
                self.position = len(self.buffer)
                return line[:byte_cap], _characters(line)

    def _long_line(self, byte_cap: int) -> tuple[bytes, int]:
        """A line longer than ``byte_cap``: its start is kept, the rest only counted."""
        head = self.buffer[self.position:self.position + byte_cap]
        characters = _characters(self.buffer[self.position:])
        self.position = len(self.buffer)
        last = self.buffer[-1:]
        while self._more():
            newline = self.buffer.find(b"\n")
            if newline >= 0:
                characters += _characters(self.buffer[:newline])
                self.position = newline + 1
                before_newline = self.buffer[newline - 1:newline] if newline else last
                return head, characters - (before_newline == b"\r")
            characters += _characters(self.buffer)
            self.position = len(self.buffer)
            last = self.buffer[-1:]
        return head, characters

    def line_part(self, start: int, count: int) -> tuple[str, int] | None:
        """Characters ``start .. start+count`` of the next line (decoded) and the line's length in characters
        (a CRLF line's ``\\r`` not counted); ``None`` at the end of the file. The line is read a block at a time,
        whatever its length."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        kept: list[str] = []
        seen = 0
        found = False
        last = ""
        while True:
            newline = self.buffer.find(b"\n", self.position)
            end = newline if newline >= 0 else len(self.buffer)
            found = found or end > self.position or newline >= 0
            text = decoder.decode(self.buffer[self.position:end], final=newline >= 0)
            self.position = end + 1 if newline >= 0 else end
            ended = newline >= 0
            if not ended and not self._more():
                text += decoder.decode(b"", final=True)
                ended = True  # the end of the file ends the line
            low, high = max(0, start - seen), max(0, start + count - seen)
            if low < len(text) and high > low:
                kept.append(text[low:high])
            seen += len(text)
            last = text[-1:] or last
            if ended:
                break
        if not found:
            return None
        part = "".join(kept)
        if last == "\r":
            seen -= 1
            part = part[:max(0, seen - start)]
        return part, seen

    def count_rest(self, byte_limit: int) -> int | None:
        """Lines left after the current position, or ``None`` when counting would read past ``byte_limit``."""
        lines = self.buffer.count(b"\n", self.position)
        partial = self.position < len(self.buffer)
        self.position = len(self.buffer)
        while True:
            if self.read_bytes > byte_limit:
                return None
            self.deadline.check()
            block = os.read(self.descriptor, BLOCK_BYTES)
            if not block:
                break
            self.read_bytes += len(block)
            lines += block.count(b"\n")
            partial = True
            self.last_byte = block[-1:]
        return lines + (1 if partial and self.last_byte != b"\n" else 0)


@dataclass(frozen=True)
class ReadRequest:
    target: Path
    shown_as: str
    offset: int
    limit: int
    char_offset: int = 0
    """Characters into line ``offset + 1`` to start from (the rest of a long line); 0: whole lines."""
    saved_output: bool = False
    """A saved output (deep-tui wrote it): never refused as binary, its control bytes escaped."""
    char_limit: int = READ_CHAR_LIMIT
    """Characters one page shows at most (a saved output's page in a small window's session is smaller: a page the
    chain would save to disk again, behind a pointer to a copy of itself, would never be read)."""


def read_page(request: ReadRequest, deadline: ToolDeadline) -> str:
    """Lines ``offset+1 .. offset+limit`` of a text file numbered like ``cat -n``, capped per line and in total,
    with a footer saying where the page is and how to go on."""
    shown_as = request.shown_as
    with reported_as_tool_error(f"reading {shown_as}"):
        descriptor = os.open(request.target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
        try:
            info = os.fstat(descriptor)
            if stat.S_ISDIR(info.st_mode):
                raise refuse(f"{shown_as} is a directory; use ls to list it")
            if not stat.S_ISREG(info.st_mode):
                raise refuse(f"{shown_as} is not a regular file (a FIFO, socket or device); it cannot be read")
            first = os.read(descriptor, BLOCK_BYTES)
            if b"\x00" in first[:BINARY_SNIFF_BYTES] and not request.saved_output:
                raise refuse(f"{shown_as} is a binary file ({info.st_size:,} bytes); it cannot be shown as text")
            reader = _BlockReader(descriptor, deadline, first)
            if request.char_offset:
                return _line_page(reader, request)
            return _page(reader, request, info.st_size)
        finally:
            os.close(descriptor)


def _page(reader: _BlockReader, request: ReadRequest, size: int) -> str:
    offset, limit, shown_as = request.offset, request.limit, request.shown_as
    before = reader.skip(offset)
    shown: list[str] = []
    used = 0
    while len(shown) < limit:
        line = reader.line(LINE_CHAR_LIMIT * 4)
        if line is None:
            break
        head, characters = line
        text = head.decode("utf-8", errors="replace").removesuffix("\r")
        if characters > LINE_CHAR_LIMIT or len(text) > LINE_CHAR_LIMIT:
            line = offset + len(shown)
            text = (f"{_shown(text[:LINE_CHAR_LIMIT], request)}… [line cut: {characters:,} characters; read on with "
                    f"read_file(path={shown_as!r}, offset={line}, char_offset={LINE_CHAR_LIMIT})]")
        else:
            text = _shown(text, request)
        numbered = f"{offset + len(shown) + 1:>6}\t{text}"
        if used + len(numbered) > request.char_limit and shown:
            rest = reader.count_rest(COUNT_BYTE_LIMIT)  # this line opens the next page
            return _footer(shown, shown_as, offset, None if rest is None else offset + len(shown) + 1 + rest, size)
        shown.append(numbered)
        used += len(numbered) + 1
    if not shown:  # nothing at or after the offset: ``before`` is every line of the file
        if before == 0:
            return "[empty file]"
        raise refuse(f"offset {offset} is past the end: {shown_as} has {before} lines")
    rest = reader.count_rest(COUNT_BYTE_LIMIT)
    total = None if rest is None else offset + len(shown) + rest
    return _footer(shown, shown_as, offset, total, size)


def _fitting(text: str, limit: int) -> str:
    """The start of ``text`` whose escaped form (:func:`escape_controls`) is at most ``limit`` characters."""
    shown = 0
    for index, char in enumerate(text):
        shown += 4 if _CONTROLS.match(char) else 1
        if shown > limit:
            return text[:index]
    return text


def _shown(text: str, request: ReadRequest) -> str:
    return escape_controls(text) if request.saved_output else text


def _line_page(reader: _BlockReader, request: ReadRequest) -> str:
    """Line ``offset + 1`` from character ``char_offset`` on, up to ``char_limit`` characters as shown (escapes
    included), with a footer saying which characters these are and how to go on."""
    offset, start, shown_as = request.offset, request.char_offset, request.shown_as
    before = reader.skip(offset)
    part = reader.line_part(start, request.char_limit)
    if part is None:
        raise refuse(f"offset {offset} is past the end: {shown_as} has {before} lines")
    text, length = part
    text = _fitting(text, request.char_limit) if request.saved_output else text
    if start >= length:
        raise refuse(f"char_offset {start:,} is past the end of line {offset + 1}, which has {length:,} characters")
    end = start + len(text)
    footer = f"[line {offset + 1}, characters {start + 1:,}-{end:,} of {length:,}]"
    if end < length:
        footer += f" — continue with read_file(path={shown_as!r}, offset={offset}, char_offset={end})"
    else:
        footer += f" — the next line: read_file(path={shown_as!r}, offset={offset + 1})"
    return f"{offset + 1:>6}\t{_shown(text, request)}\n{footer}"


def _footer(shown: list[str], shown_as: str, offset: int, total: int | None, size: int) -> str:
    last = offset + len(shown)
    if total is None:
        footer = f"[lines {offset + 1}-{last} of a {size:,}-byte file: too long to count its lines]"
    else:
        footer = f"[lines {offset + 1}-{last} of {total}]"
    if total is None or last < total:
        footer += f" — continue with read_file(path={shown_as!r}, offset={last})"
    return "\n".join([*shown, footer])


def list_directory(policy: PathPolicy, target: Path, shown_as: str, deadline: ToolDeadline) -> str:
    """``ls``: sub-directories end with '/', files show their size; data-dir entries are left out, links out
    of the working directory are named without their target. Reads at most :data:`LS_SCAN_LIMIT` entries."""
    rows: list[tuple[bool, str, str]] = []
    more = 0
    with reported_as_tool_error(f"listing {shown_as}"):
        if not stat.S_ISDIR(os.stat(target).st_mode):  # a missing path: "no such file or directory"
            raise refuse(f"{shown_as} is not a directory")
        with os.scandir(target) as scan:
            for entry in scan:
                if len(rows) >= LS_SCAN_LIMIT:
                    more += 1
                    if more % 1024 == 0:
                        deadline.check()
                    if more >= LS_COUNT_LIMIT:
                        break
                    continue
                if len(rows) % 256 == 0:
                    deadline.check()
                row = _listing_row(policy, entry)
                if row is not None:
                    rows.append(row)
    rows.sort()
    lines = [row for _, _, row in rows[:LIST_LIMIT]]
    if not lines:
        return "(empty directory)"
    hidden = len(rows) - len(lines)
    if more >= LS_COUNT_LIMIT:
        lines.append(f"… and more than {hidden + more:,} more entries: the listing stopped after reading "
                     f"{LS_SCAN_LIMIT + LS_COUNT_LIMIT:,}; use glob with a pattern to find particular files")
    elif more:
        lines.append(f"… and {hidden + more:,} more entries (only the first {LS_SCAN_LIMIT:,} read were sorted); "
                     "use glob with a pattern to find particular files")
    elif hidden:
        lines.append(f"… and {hidden:,} more")
    return "\n".join(lines)


def _listing_row(policy: PathPolicy, entry: os.DirEntry[str]) -> tuple[bool, str, str] | None:
    """``(is a file, name, row)`` for sorting directories first; None for an entry in deep-tui's data directory."""
    try:
        is_link = entry.is_symlink()
        real = Path(os.path.realpath(entry.path)) if is_link else Path(entry.path)  # ``target`` is resolved
        if policy.in_data_dir(real):
            return None
        if is_link and not policy.allows(real):
            return True, entry.name, f"{entry.name}  (link to a path outside the working directory)"
        if entry.is_dir():
            return False, entry.name, f"{entry.name}/"
        size = entry.stat().st_size
    except OSError:
        return True, entry.name, f"{entry.name}  ?"
    return True, entry.name, f"{entry.name}  {size}"

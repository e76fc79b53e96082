"""grep's engine: RE2 (linear time in the text, whatever the pattern), streamed, bounded and stoppable.

A file is read in blocks of :data:`BLOCK_BYTES`; each block's complete lines are searched in one RE2 call
(multi-line mode) and every candidate is confirmed on its own line, so a search costs one pass over the
bytes, and never more than :data:`MAX_SCAN_BYTES` in one call. A line longer than :data:`LONG_LINE_BYTES`
is searched in its first part only, and the result says so.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field

import re2

from tui.agent.tools.deadline import ToolDeadline
from tui.agent.tools.failures import refuse
from tui.agent.tools.file_search import FoundFile

BLOCK_BYTES = 256 * 1024
"""Bytes read and searched at a time (also how often the deadline is checked)."""
LONG_LINE_BYTES = 4 * 1024 * 1024
MAX_SCAN_BYTES = 256 * 1024 * 1024
"""Bytes one grep reads across all files, at most."""
MAX_HITS = 200
HIT_LINE_CHARS = 300
PATTERN_CHARS = 2_000
BINARY_SNIFF_BYTES = 8192

_UNSUPPORTED = (
    (re.compile(r"\(\?<?[=!]"), "look-around assertions ((?=…), (?!…), (?<=…), (?<!…))"),
    (re.compile(r"\\[1-9]|\\k<|\(\?P="), "backreferences (\\1, \\k<name>, (?P=name))"),
    (re.compile(r"\(\?>|[*+?}][+]"), "atomic groups and possessive quantifiers"),
)
_NEEDS_LINE_MODE = re.compile(r"\\A|\\z|\(\?[a-zA-Z]*-[a-zA-Z]*m")
"""Patterns whose meaning changes when a whole block is searched at once: they are tried line by line."""


@dataclass(frozen=True)
class SearchPattern:
    line: re2._Regexp
    """Matches one line (without its newline), as the user wrote it."""
    block: re2._Regexp | None
    """The same in multi-line mode, to find candidate lines in a block at once; ``None``: line by line."""


def compile_pattern(pattern: str) -> SearchPattern:
    """The pattern for RE2, or a tool error saying what is wrong and what to write instead."""
    if len(pattern) > PATTERN_CHARS:
        raise refuse(f"the pattern is {len(pattern):,} characters long; at most {PATTERN_CHARS:,} are accepted")
    options = re2.Options()
    options.log_errors = False  # RE2 would print to the terminal, under the app's screen
    options.never_capture = True
    encoded = pattern.encode("utf-8", "surrogatepass")
    try:
        line = re2.compile(encoded, options)
        block = None if _NEEDS_LINE_MODE.search(pattern) else re2.compile(b"(?m)" + encoded, options)
    except re2.error as error:
        raise refuse(_invalid(pattern, error)) from None
    return SearchPattern(line, block)


def _invalid(pattern: str, error: re2.error) -> str:
    reason = error.args[0] if error.args else str(error)
    reason = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
    for construct, words in _UNSUPPORTED:
        if construct.search(pattern):
            return (f"grep's regular expressions (RE2, linear time) do not support {words}, used in {pattern!r} "
                    f"({reason}). Search for a simpler pattern that finds a superset (e.g. the literal part) and "
                    "read the matching lines, or run two searches")
    if "\\Z" in pattern:
        return f"invalid regular expression {pattern!r}: write \\z for the end of the text (RE2 has no \\Z)"
    return f"invalid regular expression {pattern!r}: {reason}"


@dataclass
class SearchBudget:
    """What one grep may still do, and what it ran into."""

    hits: list[str] = field(default_factory=list)
    scanned_bytes: int = 0
    stopped: str = ""
    long_lines: list[str] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return bool(self.stopped)


def search_files(files: Iterable[tuple[FoundFile, str]], pattern: SearchPattern, deadline: ToolDeadline,
                 budget: SearchBudget) -> None:
    """Search each ``(file, shown_as)`` until the hits, the bytes or the time run out (``budget.stopped``)."""
    for file, shown_as in files:
        _search_file(file.path, shown_as, pattern, deadline, budget)
        if budget.done:
            return


def _search_file(path: str, shown_as: str, pattern: SearchPattern, deadline: ToolDeadline,
                 budget: SearchBudget) -> None:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return  # unreadable or gone: not searched
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return  # a FIFO or device behind a link: never read
        _FileScan(descriptor, shown_as, pattern, deadline, budget).run()
    except OSError:
        return
    finally:
        os.close(descriptor)


class _FileScan:
    def __init__(self, descriptor: int, shown_as: str, pattern: SearchPattern, deadline: ToolDeadline,
                 budget: SearchBudget) -> None:
        self.descriptor, self.shown_as, self.pattern = descriptor, shown_as, pattern
        self.deadline, self.budget = deadline, budget
        self.next_line = 1
        """Number of the first line of the text being searched."""

    def run(self) -> None:
        carry = b""
        skipping_long_line = False
        first = True
        while not self.budget.done:
            self.deadline.raise_if_cancelled()
            if self.deadline.expired:
                self.budget.stopped = (f"stopped at the time limit of {self.deadline.seconds:g} s ([tools] timeout); "
                                       "give a narrower path or pattern")
                return
            if self.budget.scanned_bytes >= MAX_SCAN_BYTES:
                self.budget.stopped = (f"stopped after reading {MAX_SCAN_BYTES // (1024 * 1024)} MB (the limit of one "
                                       "search); give a narrower path or pattern")
                return
            block = os.read(self.descriptor, BLOCK_BYTES)
            if first and b"\x00" in block[:BINARY_SNIFF_BYTES]:
                return  # binary: grep skips it
            first = False
            if not block:
                if carry and not skipping_long_line:
                    self._search(carry)
                return
            self.budget.scanned_bytes += len(block)
            if skipping_long_line:
                newline = block.find(b"\n")
                if newline < 0:
                    continue
                block, skipping_long_line = block[newline + 1:], False
                self.next_line += 1
            text = carry + block if carry else block
            cut = text.rfind(b"\n") + 1
            if cut == 0 and len(text) > LONG_LINE_BYTES:
                self.budget.long_lines.append(f"{self.shown_as}:{self.next_line}")
                self._search(text)  # its first part only
                carry, skipping_long_line = b"", True
            else:
                if cut:
                    self._search(text[:cut])
                carry = text[cut:]

    def _search(self, text: bytes) -> None:
        """Every matching line of ``text`` (whole lines; the last may lack its newline) becomes a hit."""
        block = self.pattern.block
        if block is None:
            self._search_line_by_line(text)
            return
        position = 0
        counted_to, line_number = 0, self.next_line
        while position < len(text) and not self.budget.done:
            found = block.search(text, position)
            if found is None:
                break
            start = text.rfind(b"\n", 0, found.start()) + 1
            end = text.find(b"\n", found.start())
            end = len(text) if end < 0 else end
            line_number += text.count(b"\n", counted_to, start)
            counted_to = start
            if self.pattern.line.search(text[start:end]) is not None:  # a candidate may span lines: confirm
                self._hit(line_number, text[start:end])
            position = end + 1
        self.next_line += text.count(b"\n")

    def _search_line_by_line(self, text: bytes) -> None:
        lines = text.split(b"\n")
        if text.endswith(b"\n"):
            lines.pop()
        for offset, line in enumerate(lines):
            if self.budget.done:
                return
            if self.pattern.line.search(line) is not None:
                self._hit(self.next_line + offset, line)
        self.next_line += text.count(b"\n")

    def _hit(self, line_number: int, line: bytes) -> None:
        shown = line[: HIT_LINE_CHARS * 4].decode("utf-8", "replace").rstrip()[:HIT_LINE_CHARS]
        self.budget.hits.append(f"{self.shown_as}:{line_number}: {shown}")
        if len(self.budget.hits) >= MAX_HITS:
            self.budget.stopped = f"stopped after {MAX_HITS} matches; narrow the search"

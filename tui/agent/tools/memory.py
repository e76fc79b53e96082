"""The agent's long-term memory: ``<data>/<agent>/MEMORY.md``, its tools, and its place in the instructions.

Every change is a locked read-modify-write ending in an atomic replace, so concurrent writers (two
deep-tui processes, the agent and the editor) never lose each other's facts and a reader never sees
half a file. What goes into the instructions is capped in lines *and* characters, so a huge MEMORY.md
cannot fill the context window; the model is told what was cut and how to read the rest.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic_ai import FunctionToolset

from tui.agent.tools import schemas as tool_schemas
from tui.agent.tools.failures import refuse, reported_as_tool_error
from tui.agent.tools.kinds import WRITES_MEMORY_METADATA
from tui.base.atomic import write_atomic
from tui.base.nofollow import make_dirs, open_file, read_text
from tui.text.terminal_text import visible

INJECTED_LINES = 200
"""At most this many lines of MEMORY.md go into the instructions of every run."""
INJECTED_CHARS = 16_000
"""…and at most this many characters (about 4,000 tokens), however long the lines are."""
READ_PAGE_LINES = 400
"""``read_memory`` returns this many lines at a time."""
READ_PAGE_CHARS = 40_000
"""…and at most this many characters per call."""
EDITOR_MAX_BYTES = 1_000_000
"""Past this size an editor should open MEMORY.md read-only (see :meth:`MemoryFile.too_large_to_edit`)."""
_WHOLE_READ_BYTES = 2_000_000


@dataclass(frozen=True)
class MemoryExcerpt:
    """Part of MEMORY.md and what was left out of it."""

    text: str
    first_line: int
    """1-based number of the first line shown."""
    lines_shown: int
    total_lines: int | None
    """``None`` when the file is too large to count its lines cheaply."""
    total_bytes: int
    cut_in_line: bool
    """The character limit cut the last line shown."""

    @property
    def complete(self) -> bool:
        return not self.cut_in_line and self.first_line == 1 and self.total_lines == self.lines_shown


@dataclass(frozen=True)
class MemoryFile:
    """Reads and changes MEMORY.md; every change is locked and atomic."""

    path: Path

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(f".{self.path.name}.lock")

    def read(self) -> str:
        """The whole file ("" when it does not exist); ``OSError``/``UnicodeError`` name the file's path."""
        try:
            return read_text(self.path)  # a planted link (e.g. to a credentials file) is refused, not read
        except FileNotFoundError:
            return ""

    def size(self) -> int:
        """Bytes on disk (0 when the file does not exist)."""
        try:
            return os.lstat(self.path).st_size
        except FileNotFoundError:
            return 0

    def version(self) -> tuple[int, int, int] | None:
        """What changes whenever the file does (inode, size, modification time); None when it does not exist."""
        try:
            info = os.lstat(self.path)
        except OSError:  # missing or unreadable: nothing to compare, the read says what is wrong
            return None
        return info.st_ino, info.st_size, info.st_mtime_ns

    def too_large_to_edit(self, limit: int = EDITOR_MAX_BYTES) -> bool:
        """True when an editor should open the file read-only (typing in a huge buffer stalls the UI)."""
        return self.size() > limit

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold MEMORY.md's lock (``.MEMORY.md.lock``, an advisory ``flock``) for a read-modify-write."""
        make_dirs(self.path.parent)
        descriptor = open_file(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)  # closing releases the lock

    def update(self, change: Callable[[str], str]) -> str:
        """Replace the text with ``change(current text)``, read and written under the lock; returns it."""
        with self.locked():
            text = change(self.read())
            write_atomic(self.path, text, durable=True)
            return text

    def write(self, text: str) -> None:
        """Replace the whole file (the editor's save)."""
        self.update(lambda _current: text)

    def append(self, text: str) -> None:
        """Add ``text`` as its own paragraph at the end."""

        def appended(current: str) -> str:
            separator = "" if not current or current.endswith("\n\n") else ("\n" if current.endswith("\n") else "\n\n")
            return current + separator + text.rstrip("\n") + "\n"

        self.update(appended)

    def replace(self, old: str, new: str) -> None:
        """Replace the one occurrence of ``old``; ``ValueError`` says how many there were otherwise."""

        def replaced(current: str) -> str:
            matches = current.count(old) if old else 0
            if matches != 1:
                raise ValueError(f"old_text must match exactly once in MEMORY.md; it matches {matches} times")
            return current.replace(old, new, 1)

        self.update(replaced)

    def excerpt(self, first_line: int = 1, max_lines: int = INJECTED_LINES,
                max_chars: int = INJECTED_CHARS) -> MemoryExcerpt:
        """Lines from ``first_line`` on, at most ``max_lines`` of them and ``max_chars`` characters.

        A large file is read only as far as the excerpt needs (its lines are then not counted)."""
        total_bytes = self.size()
        shown: list[str] = []
        budget, cut, total = max_chars, False, 0
        try:
            handle = open(open_file(self.path, os.O_RDONLY), encoding="utf-8")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return MemoryExcerpt("", first_line, 0, 0, 0, False)
        with handle:
            for total, line in enumerate(handle, 1):
                if total < first_line:
                    continue
                if len(shown) < max_lines and not cut:
                    line = line.rstrip("\n")
                    cut = len(line) > budget
                    shown.append(line[:budget])
                    budget -= len(line) + 1
                elif total_bytes > _WHOLE_READ_BYTES:  # the excerpt is complete: do not read on to count
                    return MemoryExcerpt("\n".join(shown), first_line, len(shown), None, total_bytes, cut)
        return MemoryExcerpt("\n".join(shown), first_line, len(shown), total, total_bytes, cut)

    def head(self, max_lines: int = INJECTED_LINES) -> tuple[str, int]:
        """The first ``max_lines`` lines and how many lines were left out (characters capped too)."""
        excerpt = self.excerpt(1, max_lines)
        left = (excerpt.total_lines - excerpt.lines_shown) if excerpt.total_lines is not None else 0
        return excerpt.text, left


def _what_was_cut(excerpt: MemoryExcerpt) -> str:
    if excerpt.total_lines is None:
        whole = f"{excerpt.total_bytes:,} bytes"
    else:
        lines = "1 line" if excerpt.total_lines == 1 else f"{excerpt.total_lines:,} lines"
        whole = f"{lines}, {excerpt.total_bytes:,} bytes"
    last = excerpt.first_line + excerpt.lines_shown - 1
    part = f"line {last} cut short" if excerpt.cut_in_line else f"lines {excerpt.first_line}–{last}"
    return f"MEMORY.md holds {whole}; shown: {part}"


def memory_instructions(memory: MemoryFile) -> Callable[[], str]:
    """An instructions function giving MEMORY.md as it is at each request (capped: see :data:`INJECTED_CHARS`);
    the file is read again only when :meth:`MemoryFile.version` changed (a stat per request, not a read)."""
    read_at: tuple[int, int, int] | None = None
    text = ""

    def instructions() -> str:
        nonlocal read_at, text
        version = memory.version()
        if version is None or version != read_at:
            read_at, text = version, _instructions_text(memory)
        return text

    return instructions


def _instructions_text(memory: MemoryFile) -> str:
    """The memory section of the instructions, read from the file now."""
    try:
        excerpt = memory.excerpt()
    except (OSError, UnicodeError) as error:
        return (f"## Your memory (MEMORY.md)\n(MEMORY.md at {memory.path} could not be read: {error}; "
                "tell the user)")
    if not excerpt.text.strip() and excerpt.complete:
        return (
            "## Your memory (MEMORY.md)\n(empty — use write_memory to keep facts, preferences and decisions "
            "that should survive across sessions)"
        )
    if excerpt.complete:
        note = ""
    elif excerpt.total_lines is not None and not excerpt.cut_in_line:
        note = f"\n({excerpt.total_lines - excerpt.lines_shown} more lines — use read_memory to see them)"
    else:
        note = f"\n({_what_was_cut(excerpt)} — it was cut to fit; use read_memory(start_line=…) to read on)"
    return f"## Your memory (MEMORY.md, {memory.path})\n{excerpt.text}{note}"


def memory_toolset(memory: MemoryFile) -> FunctionToolset[None]:
    """read_memory, write_memory (append) and update_memory (exact single match)."""
    toolset: FunctionToolset[None] = FunctionToolset()

    @tool_schemas.tool_plain(toolset)
    def read_memory(start_line: int = 1) -> str:
        """Read MEMORY.md from ``start_line`` (1-based), up to 400 lines at a time."""
        if start_line < 1:
            raise refuse("start_line must be 1 or more")
        with reported_as_tool_error("reading MEMORY.md"):
            excerpt = memory.excerpt(start_line, READ_PAGE_LINES, READ_PAGE_CHARS)
        if excerpt.complete:
            return excerpt.text or "(MEMORY.md is empty)"
        if not excerpt.lines_shown:
            return f"(MEMORY.md has no line {start_line}: it holds {excerpt.total_lines} lines)"
        last = excerpt.first_line + excerpt.lines_shown - 1
        if excerpt.cut_in_line:
            hint = (f"line {last} is longer than {READ_PAGE_CHARS:,} characters and was cut (the user can split "
                    f"it in MEMORY.md); read_memory(start_line={last + 1}) reads on")
        elif excerpt.total_lines is None or last < excerpt.total_lines:
            hint = f"read_memory(start_line={last + 1}) reads on"
        else:
            hint = "that is the end"
        return f"{excerpt.text}\n({_what_was_cut(excerpt)}; {hint})"

    @tool_schemas.tool_plain(toolset, metadata=WRITES_MEMORY_METADATA)  # the Memory panel follows its changes
    def write_memory(content: str) -> str:
        """Append ``content`` to MEMORY.md (facts, preferences, decisions worth keeping)."""
        if not content.strip():
            raise refuse("content is empty")
        content = visible(content)  # the Memory panel shows the file as it is: no escape codes get in
        with reported_as_tool_error("writing MEMORY.md"):
            memory.append(content)
        return f"added {len(content)} characters to MEMORY.md"

    @tool_schemas.tool_plain(toolset, metadata=WRITES_MEMORY_METADATA)
    def update_memory(old_text: str, new_text: str) -> str:
        """Replace ``old_text`` (must occur exactly once) with ``new_text`` in MEMORY.md."""
        try:
            with reported_as_tool_error("updating MEMORY.md"):
                memory.replace(old_text, visible(new_text))
        except ValueError as error:
            raise refuse(str(error)) from None
        return "MEMORY.md updated"

    return toolset

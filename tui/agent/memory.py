"""The agent's long-term memory: ``<data>/<agent>/MEMORY.md``, its tools, and its place in the instructions."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic_ai import FunctionToolset

from tui.agent.tool_errors import refuse, reported_as_tool_error

INJECTED_LINES = 200


@dataclass(frozen=True)
class MemoryFile:
    """Reads and changes MEMORY.md; every write is atomic so an editor never sees half a file."""

    path: Path

    def read(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""

    def write(self, text: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(prefix=".MEMORY-", suffix=".md", dir=self.path.parent)
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def append(self, text: str) -> None:
        """Add ``text`` as its own paragraph at the end."""
        current = self.read()
        separator = "" if not current or current.endswith("\n\n") else ("\n" if current.endswith("\n") else "\n\n")
        self.write(current + separator + text.rstrip("\n") + "\n")

    def replace(self, old: str, new: str) -> None:
        """Replace the one occurrence of ``old``; ``ValueError`` says how many there were otherwise."""
        current = self.read()
        matches = current.count(old) if old else 0
        if matches != 1:
            raise ValueError(f"old_text must match exactly once in MEMORY.md; it matches {matches} times")
        self.write(current.replace(old, new, 1))

    def head(self, max_lines: int = INJECTED_LINES) -> tuple[str, int]:
        """The first ``max_lines`` lines and how many lines were left out."""
        lines = self.read().splitlines()
        return "\n".join(lines[:max_lines]), max(0, len(lines) - max_lines)


def memory_instructions(memory: MemoryFile) -> Callable[[], str]:
    """An instructions function re-reading MEMORY.md on every run (its first 200 lines)."""

    def instructions() -> str:
        try:
            text, more = memory.head()
        except (OSError, UnicodeError) as error:
            return f"## Your memory (MEMORY.md)\n(could not be read: {error}; tell the user)"
        if not text.strip():
            return (
                "## Your memory (MEMORY.md)\n(empty — use write_memory to keep facts, preferences and decisions "
                "that should survive across sessions)"
            )
        note = f"\n({more} more lines — use read_memory to see them)" if more else ""
        return f"## Your memory (MEMORY.md, {memory.path})\n{text}{note}"

    return instructions


def memory_toolset(memory: MemoryFile) -> FunctionToolset[None]:
    """read_memory, write_memory (append) and update_memory (exact single match)."""
    toolset: FunctionToolset[None] = FunctionToolset()

    @toolset.tool_plain
    def read_memory() -> str:
        """Read the whole MEMORY.md."""
        with reported_as_tool_error("reading MEMORY.md"):
            return memory.read() or "(MEMORY.md is empty)"

    @toolset.tool_plain
    def write_memory(content: str) -> str:
        """Append ``content`` to MEMORY.md (facts, preferences, decisions worth keeping)."""
        if not content.strip():
            raise refuse("content is empty")
        with reported_as_tool_error("writing MEMORY.md"):
            memory.append(content)
        return f"added {len(content)} characters to MEMORY.md"

    @toolset.tool_plain
    def update_memory(old_text: str, new_text: str) -> str:
        """Replace ``old_text`` (must occur exactly once) with ``new_text`` in MEMORY.md."""
        try:
            with reported_as_tool_error("updating MEMORY.md"):
                memory.replace(old_text, new_text)
        except ValueError as error:
            raise refuse(str(error)) from None
        return "MEMORY.md updated"

    return toolset

"""Walking a directory tree for glob and grep: inside the path policy, linear-time, bounded, stoppable.

The walk reads directories with ``os.scandir`` in a worker thread (see :func:`tui.agent.tools.deadline.
run_blocking`), never holds more than one directory's names, looks at no more than :data:`MAX_WALK_ENTRIES`
entries and yields no more than :data:`MAX_VISITED_FILES` files, and checks the call's deadline every few
hundred entries. Glob patterns become RE2 expressions (linear time: no pattern can make matching hang).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import re2

from tui.agent.tools.deadline import ToolDeadline
from tui.agent.tools.failures import refuse
from tui.agent.tools.path_policy import PathPolicy

SKIPPED_DIRS = frozenset({".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache"})
MAX_VISITED_FILES = 20_000
"""Files one glob or grep looks at, at most."""
MAX_WALK_ENTRIES = 100_000
"""Directory entries (files, directories, links) one walk reads, at most: a directory of a million
entries costs a bounded time and memory."""
CHECK_EVERY = 256
"""Entries between two checks of the deadline."""
GLOB_PATTERN_CHARS = 1_000


@dataclass(frozen=True)
class FoundFile:
    path: str
    """Absolute path of the file (as listed under the resolved base, not resolved itself)."""
    relative: str
    """POSIX path relative to the walk's base, what glob patterns match against."""


@dataclass
class WalkStats:
    entries: int = 0
    files: int = 0
    stopped: str = ""
    """Why the walk ended early (a bound or the time limit), as a sentence; empty when it saw everything."""

    def note(self) -> str:
        """The line a tool result ends with when the walk was cut short."""
        return f"\n… {self.stopped}" if self.stopped else ""


def _regex_options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # RE2 would print to the terminal, under the app's screen
    options.never_capture = True
    return options


GLOB_OPTIONS = _regex_options()


def glob_matcher(pattern: str) -> Callable[[str], bool]:
    """A linear-time test of a relative POSIX path against a glob: ``**`` spans directories, ``*`` and ``?``
    stay within one, ``[a-z]``/``[!a-z]`` classes, ``{a,b}`` alternatives. A malformed pattern is a tool error."""
    if len(pattern) > GLOB_PATTERN_CHARS:
        raise refuse(f"the glob pattern is {len(pattern):,} characters long; at most {GLOB_PATTERN_CHARS:,} are "
                     "accepted")
    translated, _ = _translate(pattern, 0, in_braces=False)
    try:
        compiled = re2.compile(translated, GLOB_OPTIONS)
    except re2.error as error:
        raise refuse(f"invalid glob pattern {pattern!r}: {_re2_reason(error)}") from None
    return lambda path: compiled.fullmatch(path) is not None


def _literal(char: str) -> str:
    return char if char.isascii() and (char.isalnum() or char == "_") else f"\\x{{{ord(char):x}}}"


def _translate(pattern: str, index: int, *, in_braces: bool) -> tuple[str, int]:
    """RE2 syntax for ``pattern[index:]`` up to the end (or, inside braces, the next ``,`` or ``}``)."""
    out: list[str] = []
    while index < len(pattern):
        char = pattern[index]
        if in_braces and char in ",}":
            break
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif char == "*":
            out.append("[^/]*")
            index += 1
        elif char == "?":
            out.append("[^/]")
            index += 1
        elif char == "[" and (end := _class_end(pattern, index)) is not None:
            out.append(_char_class(pattern, index + 1, end))
            index = end + 1
        elif char == "{" and "}" in pattern[index + 1:]:
            alternatives: list[str] = []
            index += 1
            while True:
                alternative, index = _translate(pattern, index, in_braces=True)
                alternatives.append(alternative)
                if index >= len(pattern):
                    raise refuse(f"invalid glob pattern {pattern!r}: a '{{' has no matching '}}'")
                index += 1
                if pattern[index - 1] == "}":
                    break
            out.append("(?:" + "|".join(alternatives) + ")")
        else:
            out.append(_literal(char))
            index += 1
    return "".join(out), index


def _class_end(pattern: str, start: int) -> int | None:
    """Index of the ``]`` closing the class opened at ``start`` (a ``]`` first in the class is literal)."""
    index = start + 1
    if index < len(pattern) and pattern[index] in "!^":
        index += 1
    if index < len(pattern) and pattern[index] == "]":
        index += 1
    end = pattern.find("]", index)
    return None if end < 0 else end


def _char_class(pattern: str, start: int, end: int) -> str:
    body = pattern[start:end]
    negated = body[:1] in ("!", "^")
    if negated:
        body = body[1:]
    items: list[str] = []
    index = 0
    while index < len(body):
        low = body[index]
        if index + 2 < len(body) and body[index + 1] == "-":
            high = body[index + 2]
            if low > high:
                raise refuse(f"invalid glob pattern {pattern!r}: bad character range {low}-{high} (a range goes "
                             f"from the lower character to the higher, e.g. [{high}-{low}])")
            items.append(f"\\x{{{ord(low):x}}}-\\x{{{ord(high):x}}}")
            index += 3
        else:
            items.append(f"\\x{{{ord(low):x}}}")
            index += 1
    if negated:
        return "[^/" + "".join(items) + "]"
    return "[" + "".join(items) + "]" if items else "[^\\x{0}-\\x{10ffff}]"


def _re2_reason(error: re2.error) -> str:
    reason = error.args[0] if error.args else str(error)
    return reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)


def walk_files(policy: PathPolicy, base: Path, deadline: ToolDeadline, stats: WalkStats) -> Iterator[FoundFile]:
    """Every file under ``base`` (resolved, allowed by ``policy``), breadth-first, sorted per directory.

    Skips tool and VCS directories, deep-tui's data and config directories, links whose target leaves the allowed roots,
    directories already seen (link loops) and special files; stops at the bounds or the deadline, saying why
    in ``stats.stopped``. Raises :class:`~tui.agent.tools.deadline.ToolStopped` when cancelled.
    """
    own_roots = [str(root) for root in policy.own_roots]
    seen: set[str] = {str(base)}
    pending: deque[tuple[str, str, str]] = deque([(str(base), str(base), "")])  # (as listed, real, relative)
    while pending:
        directory, real_directory, prefix = pending.popleft()
        entries = _read_dir(directory, deadline, stats)
        if entries is None:
            return
        for name, is_dir, is_link in sorted(entries):
            path = os.path.join(directory, name)
            real = os.path.realpath(path) if is_link else os.path.join(real_directory, name)
            if any(real == root or real.startswith(root + os.sep) for root in own_roots):
                continue
            if is_link and not policy.allows(Path(real)):
                continue
            relative = prefix + name
            if is_dir:
                if name not in SKIPPED_DIRS and real not in seen:
                    seen.add(real)
                    pending.append((path, real, relative + "/"))
                continue
            stats.files += 1
            if stats.files > MAX_VISITED_FILES:
                stats.files -= 1
                stats.stopped = stats.stopped or (f"stopped after looking at {MAX_VISITED_FILES:,} files (the limit "
                                                  "of one search); give a narrower path or pattern")
                return
            yield FoundFile(path, relative)
        if stats.stopped:
            return


def _read_dir(directory: str, deadline: ToolDeadline,
              stats: WalkStats) -> list[tuple[str, bool, bool]] | None:
    """``(name, is_dir, is_link)`` of each entry; ``None`` when a bound or the deadline ends the walk (with
    ``stats.stopped`` set, possibly after returning the entries read so far)."""
    entries: list[tuple[str, bool, bool]] = []
    try:
        scan = os.scandir(directory)
    except OSError:
        return entries  # an unreadable directory is not an error for a search; it is simply not searched
    with scan:
        for entry in scan:
            stats.entries += 1
            if stats.entries % CHECK_EVERY == 0 and _time_is_up(deadline, stats):
                return None
            if stats.entries > MAX_WALK_ENTRIES:
                stats.stopped = (f"stopped after reading {MAX_WALK_ENTRIES:,} directory entries (the limit of one "
                                 "search); give a narrower path")
                break
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir()
                if not is_dir and not is_link and not entry.is_file():
                    continue  # a FIFO, socket or device: never opened
            except OSError:
                continue
            entries.append((entry.name, is_dir, is_link))
    return entries


def _time_is_up(deadline: ToolDeadline, stats: WalkStats) -> bool:
    deadline.raise_if_cancelled()
    if deadline.expired:
        stats.stopped = f"stopped at the time limit of {deadline.seconds:g} s ([tools] timeout); give a narrower path"
        return True
    return False


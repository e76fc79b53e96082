"""Walking a directory tree through the workspace for glob and grep, inside the path policy."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from pydantic_ai.workspaces import Workspace

from tui.agent.path_policy import PathPolicy

SKIPPED_DIRS = frozenset({".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache"})
MAX_VISITED_FILES = 20_000


@dataclass(frozen=True)
class FoundFile:
    path: Path
    """Absolute path of the file (as listed, not resolved)."""
    relative: str
    """POSIX path relative to the walk's base, what glob patterns match against."""
    size: int | None


@dataclass
class WalkStats:
    visited: int = 0
    truncated: bool = False


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regular expression for a glob pattern: ``**`` spans directories, ``*``/``?`` stay within one."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
            continue
        if pattern.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and "]" in pattern[index + 1:]:
            end = pattern.index("]", index + 1)
            body = pattern[index + 1:end]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
            index = end + 1
            continue
        else:
            out.append(re.escape(char))
        index += 1
    return re.compile("".join(out) + r"\Z")


async def walk_files(workspace: Workspace, policy: PathPolicy, base: Path, stats: WalkStats) -> AsyncIterator[FoundFile]:
    """Every regular-looking file under ``base``, sorted per directory.

    Skips tool and VCS directories, entries whose real path leaves the allowed roots (symlinks out),
    directories already seen (symlink loops), and stops after ``MAX_VISITED_FILES``.
    """
    seen: set[Path] = set()
    pending: list[tuple[Path, str]] = [(base, "")]
    while pending:
        directory, prefix = pending.pop(0)
        real = directory.resolve()
        if real in seen:
            continue
        seen.add(real)
        try:
            entries = await workspace.list_dir(str(directory))
        except OSError:
            continue  # an unreadable directory is not an error for a search; it is simply not searched
        for entry in entries:
            entry_path = Path(entry.path)
            if not policy.allows(entry_path.resolve()):
                continue
            relative = f"{prefix}{entry.name}"
            if entry.is_dir:
                if entry.name not in SKIPPED_DIRS:
                    pending.append((entry_path, relative + "/"))
                continue
            stats.visited += 1
            if stats.visited > MAX_VISITED_FILES:
                stats.truncated = True
                return
            yield FoundFile(entry_path, relative, entry.size)

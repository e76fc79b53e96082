"""The workdir's files for ``@`` completion: what git tracks or would track (``.gitignore`` respected), else a
bounded walk that skips hidden and ignored directories and deep-tui's data dir. Bounded in count and time, so a
huge tree costs at most :data:`MAX_FILES` names and :data:`TIME_BUDGET` seconds (the app builds it in a worker).
"""

from __future__ import annotations

import logging
import os
import subprocess
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

MAX_FILES = 50_000
TIME_BUDGET = 3.0
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "venv", "target", "dist", "build"})
"""Skipped by the walk (hidden directories, the data dir and these); git's own rules apply in a repository."""


@dataclass(frozen=True)
class FileListing:
    """Workdir-relative POSIX paths, and how they were found."""

    paths: tuple[str, ...]
    source: str
    """``git`` or ``walk``."""
    truncated: bool = False
    """The count or time bound was reached: some files are not listed."""


def list_files(workdir: Path, data_root: Path | None = None, *, max_files: int = MAX_FILES,
               time_budget: float = TIME_BUDGET) -> FileListing:
    """The files ``@`` completes over (see the module docstring)."""
    skip_prefix = _data_prefix(workdir, data_root)
    listed = _git_files(workdir, max_files, time_budget)
    if listed is not None:
        paths, truncated = listed
        kept = tuple(path for path in paths if not (skip_prefix and (path + "/").startswith(skip_prefix)))
        return FileListing(kept, "git", truncated)
    return _walk(workdir, skip_prefix, max_files, time.monotonic() + time_budget)


def _data_prefix(workdir: Path, data_root: Path | None) -> str | None:
    """``.deep-tui/`` when the data dir is inside the workdir (its files are never offered)."""
    if data_root is None:
        return None
    try:
        return data_root.resolve().relative_to(workdir.resolve()).as_posix() + "/"
    except ValueError:
        return None


def _git_files(workdir: Path, max_files: int, time_budget: float) -> tuple[list[str], bool] | None:
    """``git ls-files`` (tracked, and untracked but not ignored) as relative paths; None outside a repository or
    without git."""
    if not any(os.path.lexists(directory / ".git") for directory in (workdir, *workdir.parents)):
        return None
    try:
        completed = subprocess.run(
            ["git", "-c", "core.quotepath=off", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=workdir, capture_output=True, timeout=time_budget, check=False, stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        logger.info("git ls-files failed in %s (%s); walking the tree instead", workdir, error)
        return None
    if completed.returncode != 0:
        logger.info("git ls-files failed in %s: %s", workdir, completed.stderr[:200])
        return None
    names = [name.decode("utf-8", errors="replace") for name in completed.stdout.split(b"\0") if name]
    unique = list(dict.fromkeys(names))  # a file with merge conflicts is listed once per stage
    return unique[:max_files], len(unique) > max_files


def _walk(workdir: Path, skip_prefix: str | None, max_files: int, deadline: float) -> FileListing:
    """Breadth first (shallow files first), never following a link to a directory."""
    found: list[str] = []
    queue: deque[tuple[str, str]] = deque([(str(workdir), "")])
    while queue:
        if time.monotonic() > deadline:
            return FileListing(tuple(found), "walk", True)
        directory, prefix = queue.popleft()
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            relative = prefix + entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if entry.name.startswith(".") or entry.name in SKIPPED_DIRS:
                    continue
                if skip_prefix and relative + "/" == skip_prefix:
                    continue
                queue.append((entry.path, relative + "/"))
            elif not entry.name.startswith("."):
                found.append(relative)
                if len(found) >= max_files:
                    return FileListing(tuple(found), "walk", True)
    return FileListing(tuple(found), "walk")


def match_files(paths: Sequence[str], query: str, limit: int = 30) -> list[str]:
    """The paths that match ``query`` (its characters in order, case-insensitive), best first: the most
    contiguous match first (``mod_39_4`` in one piece before ``mod``…``_39_``…``4``), then a match in the file name
    before one across the directories (a name that starts with it first), then shorter paths."""
    needle = query.lower()
    if not needle:
        return sorted(paths, key=lambda path: (path.count("/"), len(path), path))[:limit]
    scored: list[tuple[int, int, int, str]] = []
    for path in paths:
        lowered = path.lower()
        if not _in_order(needle, lowered):
            continue
        name = lowered.rsplit("/", 1)[-1]
        if needle in name:
            place, pieces = (0 if name.startswith(needle) else 1), 1
        elif needle in lowered:
            place, pieces = 2, 1
        elif in_name := _pieces(needle, name):
            place, pieces = 1, in_name
        else:
            place, pieces = 2, _pieces(needle, lowered)
        scored.append((pieces, place, len(path), path))
    scored.sort()
    return [path for _, _, _, path in scored[:limit]]


def _pieces(needle: str, text: str) -> int:
    """In how few contiguous pieces ``needle`` occurs in ``text`` in order (0: it does not). Greedy: each piece is
    the longest next part of the needle whose first place further on leaves the rest still in order after it."""
    if not _in_order(needle, text):
        return 0
    pieces, position, start = 0, 0, 0
    while start < len(needle):
        end = start + 1
        found = text.find(needle[start:end], position)
        while end < len(needle):
            longer = text.find(needle[start:end + 1], position)
            if longer < 0 or not _in_order(needle[end + 1:], text[longer + end + 1 - start:]):
                break
            end, found = end + 1, longer
        position = found + end - start
        pieces, start = pieces + 1, end
    return pieces


def _in_order(needle: str, text: str) -> bool:
    position = 0
    for char in needle:
        position = text.find(char, position) + 1
        if position == 0:
            return False
    return True

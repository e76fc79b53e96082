"""Taking a snapshot: the working directory's files, as git's index sees them, written as one tree.

Only what changed since the last snapshot of this working directory is read: ``git ls-files`` lists the
modified, deleted and new (not ignored) paths from the index's stat data, each is checked with ``lstat``
(never followed), and ``git update-index`` takes the regular files up to the size cap and the symbolic links
(as links). Oversized files, FIFOs, sockets, devices and nested repositories are left out; so is everything
``.gitignore`` ignores and the data directory. Paths are fed in chunks, so a first snapshot cut short by its
deadline keeps the progress it made for the next one.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from tui.agent.rewind.shadow_repo import Deadline, ShadowRepo

MAX_FILE_BYTES = 10 * 1024 * 1024
"""Files larger than this are not snapshotted (and so never restored or removed by a rewind)."""

_CHUNK = 2_000
"""Paths per ``update-index`` call (each call saves the index: progress survives a deadline)."""


@dataclass(frozen=True)
class SnapshotResult:
    """A tree written for the working directory, and what was left out of it."""

    tree: str
    skipped_large: tuple[str, ...] = ()
    """Files over the size cap (not in the snapshot)."""


def take_snapshot(repo: ShadowRepo, deadline: Deadline, *, max_file_bytes: int = MAX_FILE_BYTES) -> SnapshotResult:
    """Bring ``repo``'s index up to date with its working directory and write it as a tree."""
    repo.ensure(deadline)
    with repo.locked(deadline):
        listed = repo.git(["ls-files", "-z", "--modified", "--deleted", "--others", "--exclude-standard"], deadline)
        paths = list(dict.fromkeys(path for path in listed.split(b"\0") if path))
        update: list[bytes] = []
        remove: list[bytes] = []
        large: list[str] = []
        ignore_rules_changed = False
        directories: dict[bytes, bool] = {b"": True}
        root = os.fsencode(repo.workdir)
        for raw in paths:
            if raw.endswith(b"/"):
                continue  # a nested repository (git lists its directory): not snapshotted
            if os.path.basename(raw) == b".gitignore":
                ignore_rules_changed = True
            if not _real_directory(root, os.path.dirname(raw), directories):
                remove.append(raw)  # its directory is gone, or is a link now: never looked at through it
                continue
            try:
                info = os.lstat(os.path.join(root, raw))
            except FileNotFoundError:
                update.append(raw)  # deleted: --remove takes it out of the index
                continue
            except OSError:
                remove.append(raw)
                continue
            if stat.S_ISLNK(info.st_mode):
                update.append(raw)
            elif stat.S_ISREG(info.st_mode):
                if info.st_size > max_file_bytes:
                    large.append(os.fsdecode(raw))
                    remove.append(raw)
                else:
                    update.append(raw)
            else:
                remove.append(raw)  # a FIFO, socket, device or directory in place of a file
        if remove:
            _force_remove(repo, remove, deadline)
        for start in range(0, len(update), _CHUNK):
            chunk = update[start:start + _CHUNK]
            repo.git(["update-index", "--add", "--remove", "--replace", "-z", "--stdin"], deadline,
                     stdin=b"\0".join(chunk) + b"\0")
        if ignore_rules_changed:  # files now ignored leave the snapshot
            ignored = repo.git(["ls-files", "-z", "--cached", "--ignored", "--exclude-standard"], deadline)
            _force_remove(repo, [path for path in ignored.split(b"\0") if path], deadline)
        tree = repo.git(["write-tree"], deadline).decode().strip()
    return SnapshotResult(tree, tuple(large))


def _real_directory(root: bytes, relative: bytes, known: dict[bytes, bool]) -> bool:
    """Whether ``relative`` and each directory above it are real directories (no link on the way)."""
    if relative in known:
        return known[relative]
    real = _real_directory(root, os.path.dirname(relative), known)
    if real:
        try:
            real = stat.S_ISDIR(os.lstat(os.path.join(root, relative)).st_mode)
        except OSError:
            real = False
    known[relative] = real
    return real


def _force_remove(repo: ShadowRepo, paths: list[bytes], deadline: Deadline) -> None:
    if paths:
        repo.git(["update-index", "--force-remove", "-z", "--stdin"], deadline, stdin=b"\0".join(paths) + b"\0")


def workdir_path(workdir: Path, relative: str) -> Path:
    """``relative`` (a path from a snapshot) under ``workdir``; refuses one that would leave it."""
    parts = relative.split("/")
    if not relative or relative.startswith("/") or any(part in ("", ".", "..") for part in parts) or "\0" in relative:
        raise ValueError(f"refusing the path {relative!r} from a restore point (it would leave the working directory)")
    if parts[0] == ".git" or ".git" in parts:
        raise ValueError(f"refusing the path {relative!r} from a restore point (deep-tui never writes a .git)")
    return workdir.joinpath(*parts)

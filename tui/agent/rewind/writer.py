"""Writing a restore: files, links and deletions inside the working directory, never through a link.

Every directory on the way to a path is opened with ``O_NOFOLLOW`` from ``/`` (:func:`tui.base.nofollow.open_dir`),
so a directory the agent replaced by a link to elsewhere is refused, not written through; a file is written to a
new temporary name beside it and renamed over the old one (a link in its place is replaced, never followed); a
link from the snapshot is made as a link. Deletions come first (a file where a directory must go, and the
reverse), then the writes, then the directories the deletions emptied are removed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from tui.agent.rewind.shadow_repo import TreeChange, TreeEntry
from tui.agent.rewind.snapshot import workdir_path
from tui.base.nofollow import LinkRefusedError, open_dir

LINK_MODE = "120000"
EXECUTABLE_MODE = "100755"


def apply_changes(workdir: Path, changes: Sequence[TreeChange], blobs: Mapping[str, bytes]) -> list[str]:
    """Make each path of ``changes`` as its ``after`` side says (absent: deleted). Returns one line per path that
    could not be restored (the others are done)."""
    failures: list[str] = []
    emptied: set[Path] = set()
    for change in changes:
        if change.after is None or (change.before is not None and _kind(change.before) != _kind(change.after)):
            try:
                _remove(workdir, change.path)
                emptied.add(workdir_path(workdir, change.path).parent)
            except (OSError, ValueError) as error:
                failures.append(f"{change.path}: {_reason(error)}")
    for change in changes:
        if change.after is None:
            continue
        try:
            _write(workdir, change.path, change.after, blobs[change.after.blob])
        except (OSError, ValueError, KeyError) as error:
            failures.append(f"{change.path}: {_reason(error)}")
    _remove_empty_dirs(workdir, emptied)
    return failures


def _kind(entry: TreeEntry) -> str:
    return "link" if entry.mode == LINK_MODE else "file"


@contextlib.contextmanager
def _parent(workdir: Path, relative: str, *, create: bool) -> Iterator[tuple[int, str]]:
    target = workdir_path(workdir, relative)
    descriptor = open_dir(target.parent, create=create)
    try:
        yield descriptor, target.name
    finally:
        os.close(descriptor)


def _remove(workdir: Path, relative: str) -> None:
    try:
        with _parent(workdir, relative, create=False) as (directory, name):
            try:
                info = os.stat(name, dir_fd=directory, follow_symlinks=False)
            except FileNotFoundError:
                return
            if stat.S_ISDIR(info.st_mode):
                os.rmdir(name, dir_fd=directory)  # only an empty one: untracked files inside are never removed
            else:
                os.unlink(name, dir_fd=directory)
    except FileNotFoundError:
        return  # its directory is gone already


def _write(workdir: Path, relative: str, entry: TreeEntry, content: bytes) -> None:
    with _parent(workdir, relative, create=True) as (directory, name):
        temporary = f".{name[:64]}.deep-tui-{secrets.token_hex(4)}"
        try:
            existing = os.stat(name, dir_fd=directory, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            try:  # emptied by the deletions above (a file had become a directory)
                os.rmdir(name, dir_fd=directory)
            except OSError:
                raise IsADirectoryError(errno.EISDIR,
                                        "a directory is there now, with files the snapshot does not hold") from None
            existing = None
        if entry.mode == LINK_MODE:
            os.symlink(os.fsdecode(content), temporary, dir_fd=directory)
        else:
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                                 0o600, dir_fd=directory)
            try:
                view = memoryview(content)
                while view:
                    written = os.write(descriptor, view)
                    view = view[written:]
                os.fchmod(descriptor, _mode(entry, existing))
            except BaseException:
                os.close(descriptor)
                os.unlink(temporary, dir_fd=directory)
                raise
            os.close(descriptor)
        try:
            os.rename(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=directory)
            raise


def _mode(entry: TreeEntry, existing: os.stat_result | None) -> int:
    """The file's permissions: what it had (a regular file there now) or the umask's default, with the
    executable bits as the snapshot says."""
    if existing is not None and stat.S_ISREG(existing.st_mode):
        base = stat.S_IMODE(existing.st_mode) & 0o777
    else:
        base = 0o666 & ~_umask()
    if entry.mode == EXECUTABLE_MODE:
        return base | ((base & 0o444) >> 2)
    return base & ~0o111


def _umask() -> int:
    """The process's umask, read without changing it (``os.umask`` would change it for every thread)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        return 0o022
    return 0o022


def _remove_empty_dirs(workdir: Path, directories: set[Path]) -> None:
    for directory in sorted(directories, key=lambda path: len(path.parts), reverse=True):
        current = directory
        while current != workdir and workdir in current.parents:
            try:
                with _parent(workdir, current.relative_to(workdir).as_posix(), create=False) as (parent, name):
                    os.rmdir(name, dir_fd=parent)
            except (OSError, ValueError):
                break  # not empty (or not there): it stays
            current = current.parent


def _reason(error: BaseException) -> str:
    if isinstance(error, LinkRefusedError):
        return str(error)
    if isinstance(error, OSError):
        return error.strerror or str(error)
    if isinstance(error, KeyError):
        return "its content is missing from the restore point"
    return str(error)

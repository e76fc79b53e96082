"""Writing files so a reader or a crash never sees half of one, and never overwriting a kept copy.

Ground level: imports only :mod:`tui.base.nofollow` (the store, the agent and the app all use it).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import time
from pathlib import Path

from tui.base.nofollow import LinkRefusedError, open_dir, open_file, read_bytes

logger = logging.getLogger(__name__)


def write_atomic(path: Path, data: bytes | str, *, durable: bool = False) -> None:
    """Replace ``path``'s content all at once: a temporary file in the same directory, then a rename.

    Parent directories are created and an existing file keeps its permission bits. ``durable`` also
    flushes the bytes to the disk before the rename (for files written rarely; a crash right after a
    non-durable write may leave the previous content, never a mix). On any error (a full disk, a
    read-only directory) the temporary file is removed and ``path`` is left as it was.

    No link is followed (:mod:`tui.base.nofollow`): the directory is opened link-free and the temporary file
    and the rename are relative to it; ``path`` itself being a link is refused (``LinkRefusedError``)
    rather than replaced, and a planted temporary name is never opened (``O_EXCL | O_NOFOLLOW``).
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    temporary = f".{path.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp"
    directory = open_dir(path.parent, create=True)
    try:
        kept_mode = _regular_file_mode(path, directory)
        # O_EXCL with 0o666: a new file gets the user's umask, like any file the user creates.
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666,
                             dir_fd=directory)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(payload)
                if kept_mode is not None:
                    os.fchmod(handle.fileno(), kept_mode)
                if durable:
                    handle.flush()
                    os.fsync(handle.fileno())
            os.replace(temporary, path.name, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary, dir_fd=directory)
            raise
        if durable:
            _sync_directory(directory, path.parent)
    finally:
        os.close(directory)


def _regular_file_mode(path: Path, directory: int) -> int | None:
    """The permission bits of the file being replaced (``None`` when there is none); a link is refused."""
    try:
        info = os.lstat(path.name, dir_fd=directory)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise LinkRefusedError(path)
    return info.st_mode & 0o7777


def _sync_directory(descriptor: int, directory: Path) -> None:
    """Make a rename in ``directory`` durable (best effort: some file systems refuse to sync a directory)."""
    try:
        os.fsync(descriptor)
    except OSError as error:  # the rename succeeded; only its durability across a power loss is not guaranteed
        logger.debug("cannot sync directory %s: %s", directory, error)


def stamp() -> str:
    """A sub-second time stamp for names of kept copies: ``20250102-150405-123456``."""
    now = time.time()
    return time.strftime("%Y%m%d-%H%M%S", time.localtime(now)) + f"-{int(now % 1 * 1_000_000):06d}"


def unused_name(path: Path) -> Path:
    """``path``, or ``path.1``, ``path.2``… — the first name that does not exist yet."""
    candidate, number = path, 0
    while candidate.exists() or candidate.is_symlink():
        number += 1
        candidate = path.with_name(f"{path.name}.{number}")
    return candidate


def create_new(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` or, when that name is taken, to ``path.1``, ``path.2``…; never replaces a file.

    The name is claimed with ``O_EXCL``, so two writers racing for it each get their own. Returns the
    name used. No link is followed on the way (a planted name is taken, not opened).
    """
    number = 0
    while True:
        candidate = path if number == 0 else path.with_name(f"{path.name}.{number}")
        try:
            descriptor = open_file(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            number += 1
            continue
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
        except BaseException:
            candidate.unlink(missing_ok=True)
            raise
        return candidate


def link_new(source: Path, path: Path) -> Path:
    """Give ``source``'s bytes a second, new name (``path`` or ``path.1``…) without copying them when the
    file system allows a hard link, else by copying; never replaces a file. Returns the name used.

    ``source`` must be a regular file (a link is refused, never given a second name)."""
    number = 0
    while True:
        candidate = path if number == 0 else path.with_name(f"{path.name}.{number}")
        try:
            _link_beside(source, candidate)
        except FileExistsError:
            number += 1
            continue
        except LinkRefusedError:
            raise
        except OSError:  # no hard links here (some network and FUSE file systems)
            return create_new(candidate, read_bytes(source))
        return candidate


def _link_beside(source: Path, target: Path) -> None:
    """Hard-link ``source`` as ``target`` (same directory), both named relative to a link-free directory."""
    directory = open_dir(source.parent)
    try:
        if stat.S_ISLNK(os.lstat(source.name, dir_fd=directory).st_mode):
            raise LinkRefusedError(source)
        if target.parent != source.parent:
            raise ValueError(f"{target} is not beside {source}")
        os.link(source.name, target.name, src_dir_fd=directory, dst_dir_fd=directory, follow_symlinks=False)
    finally:
        os.close(directory)

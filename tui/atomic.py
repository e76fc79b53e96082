"""Writing files so a reader or a crash never sees half of one, and never overwriting a kept copy.

Ground level: no import from the rest of deep-tui (the store, the agent and the app all use it).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from pathlib import Path

logger = logging.getLogger(__name__)


def write_atomic(path: Path, data: bytes | str, *, durable: bool = False) -> None:
    """Replace ``path``'s content all at once: a temporary file in the same directory, then ``os.replace``.

    Parent directories are created and an existing file keeps its permission bits. ``durable`` also
    flushes the bytes to the disk before the rename (for files written rarely; a crash right after a
    non-durable write may leave the previous content, never a mix). On any error (a full disk, a
    read-only directory) the temporary file is removed and ``path`` is left as it was.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    temporary = path.with_name(f".{path.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")
    # O_EXCL with 0o666: a new file gets the user's umask, like any file the user creates.
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileNotFoundError:  # the directory is missing (rare: checked only when the open fails)
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(payload)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        with contextlib.suppress(FileNotFoundError):  # a new file keeps the default mode
            os.chmod(temporary, path.stat().st_mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    if durable:
        _sync_directory(path.parent)


def _sync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (best effort: some file systems refuse to sync a directory)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError as error:
        logger.debug("cannot open %s to sync it: %s", directory, error)
        return
    try:
        os.fsync(descriptor)
    except OSError as error:  # the rename succeeded; only its durability across a power loss is not guaranteed
        logger.debug("cannot sync directory %s: %s", directory, error)
    finally:
        os.close(descriptor)


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
    name used.
    """
    number = 0
    while True:
        candidate = path if number == 0 else path.with_name(f"{path.name}.{number}")
        try:
            descriptor = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
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
    file system allows a hard link, else by copying; never replaces a file. Returns the name used."""
    number = 0
    while True:
        candidate = path if number == 0 else path.with_name(f"{path.name}.{number}")
        try:
            os.link(source, candidate)
        except FileExistsError:
            number += 1
            continue
        except OSError:  # no hard links here (some network and FUSE file systems)
            return create_new(candidate, source.read_bytes())
        return candidate

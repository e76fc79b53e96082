"""Opening deep-tui's own files without following a link it did not make.

A project's ``.deep-tui/`` can come from a cloned repository, and git stores symlinks: a planted
``sessions/<id>/lock -> ~/.bashrc`` or ``main/MEMORY.md -> ~/.aws/credentials`` must be neither
written nor read. Every file deep-tui keeps under its data directory is opened here:

- the path is walked from ``/`` one directory at a time, each opened relative to the previous one with
  ``O_DIRECTORY | O_NOFOLLOW``, so a directory that is (or is swapped for) a link mid-way cannot
  redirect the open; the file itself is opened with ``O_NOFOLLOW`` relative to its directory;
- a file must be a regular file (a FIFO would block the open, a device is never deep-tui's).

Data directory paths are built from a resolved root (``DataDir.resolve``), so any link met on the way
is one planted inside the data directory. A refusal is a :class:`LinkRefusedError` (an ``OSError``,
so existing handlers of I/O errors see it) whose text is one line naming the link.

Bottom of the layers: imports nothing from deep-tui.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator

__all__ = [
    "GITIGNORE_TEXT",
    "LinkRefusedError",
    "check_no_links",
    "make_data_root",
    "make_dirs",
    "open_dir",
    "open_file",
    "read_bytes",
    "read_text",
]

GITIGNORE_TEXT = "# Created by deep-tui: sessions hold file contents and command output; never commit them.\n*\n"
"""What a data directory deep-tui creates holds in its ``.gitignore`` (as ``python -m venv`` does)."""

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class LinkRefusedError(OSError):
    """A path under the data directory is a symbolic link (or not a regular file) and was not followed."""

    def __init__(self, path: str | os.PathLike[str], what: str = "a symbolic link") -> None:
        message = (f"{os.fspath(path)} is {what}; deep-tui opens nothing in its data directory through a link "
                   "it did not make (remove it)")
        super().__init__(errno.ELOOP, message, os.fspath(path))

    def __str__(self) -> str:
        return str(self.strerror)


def _components(path: str | os.PathLike[str]) -> tuple[str, list[str]]:
    """``path`` made absolute (lexically: ``..`` is removed, nothing is resolved) and split into names."""
    absolute = os.path.abspath(os.fspath(path))
    names = [name for name in absolute.split(os.sep) if name]
    return absolute, names


def _refuse_if_link(name: str, directory: int, shown: str, error: OSError) -> None:
    """Turn an open that failed on a link (``ELOOP``, or ``ENOTDIR`` for a directory) into a refusal."""
    if error.errno not in (errno.ELOOP, errno.ENOTDIR):
        return
    try:
        info = os.lstat(name, dir_fd=directory)
    except OSError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise LinkRefusedError(shown) from None


def _walk(names: list[str], *, create: bool, on_create: str | None = None) -> int:
    """A descriptor of the directory ``/names[0]/…/names[-1]``, every step opened without following a link.

    ``create`` makes missing directories (mode 0o777 less the umask); when the one named ``on_create`` is
    made, a ``.gitignore`` holding ``*`` is written into it."""
    descriptor = os.open("/", _DIRECTORY_FLAGS)
    walked = ""
    try:
        for name in names:
            walked = f"{walked}/{name}"
            try:
                child = os.open(name, _DIRECTORY_FLAGS, dir_fd=descriptor)
            except FileNotFoundError:
                if not create:
                    raise FileNotFoundError(errno.ENOENT, "No such file or directory", walked) from None
                try:
                    os.mkdir(name, 0o777, dir_fd=descriptor)
                except FileExistsError:
                    pass  # made by another process meanwhile: opened (and checked) below
                else:
                    if walked == on_create:
                        _write_gitignore(name, descriptor)
                child = os.open(name, _DIRECTORY_FLAGS, dir_fd=descriptor)
            except OSError as error:
                _refuse_if_link(name, descriptor, walked, error)
                raise
            os.close(descriptor)
            descriptor = child
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def _write_gitignore(directory_name: str, parent: int) -> None:
    inner = os.open(directory_name, _DIRECTORY_FLAGS, dir_fd=parent)
    try:
        with contextlib.suppress(FileExistsError):
            handle = os.open(".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                             0o666, dir_fd=inner)
            try:
                os.write(handle, GITIGNORE_TEXT.encode())
            finally:
                os.close(handle)
    finally:
        os.close(inner)


def open_dir(path: str | os.PathLike[str], *, create: bool = False) -> int:
    """A descriptor (``O_DIRECTORY``) of ``path``, no link followed on the way; the caller closes it.

    ``create`` makes missing directories. Raises :class:`LinkRefusedError` for a link, ``FileNotFoundError``
    for a missing directory (without ``create``)."""
    _, names = _components(path)
    return _walk(names, create=create)


@contextlib.contextmanager
def _directory_of(path: str | os.PathLike[str], *, create: bool) -> Iterator[tuple[int, str, str]]:
    absolute, names = _components(path)
    if not names:
        raise IsADirectoryError(errno.EISDIR, "Is a directory", absolute)
    descriptor = _walk(names[:-1], create=create)
    try:
        yield descriptor, names[-1], absolute
    finally:
        os.close(descriptor)


def open_file(path: str | os.PathLike[str], flags: int, mode: int = 0o666, *, make_parents: bool = False) -> int:
    """``os.open(path, flags, mode)`` that follows no link on the way and opens only a regular file.

    ``make_parents`` creates missing directories first. Raises :class:`LinkRefusedError` for a link (or a
    FIFO, device or socket where a file belongs) and the usual ``OSError`` otherwise."""
    with _directory_of(path, create=make_parents) as (directory, name, absolute):
        try:
            descriptor = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode, dir_fd=directory)
        except OSError as error:
            _refuse_if_link(name, directory, absolute, error)
            if error.filename is None:
                error.filename = absolute
            raise
    try:
        kind = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(kind):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", absolute)
        if not stat.S_ISREG(kind):
            raise LinkRefusedError(absolute, "not a regular file")
        os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The whole file, opened by :func:`open_file`."""
    with os.fdopen(open_file(path, os.O_RDONLY), "rb") as handle:
        return handle.read()


def read_at_most(descriptor: int, count: int) -> bytes:
    """Up to ``count`` bytes from an open ``descriptor``, read in 1 MiB pieces (never more, however the file
    grows meanwhile)."""
    chunks: list[bytes] = []
    remaining = count
    while remaining > 0:
        chunk = os.read(descriptor, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_text(path: str | os.PathLike[str], *, errors: str = "strict") -> str:
    """The whole file as UTF-8 text, opened by :func:`open_file`."""
    return read_bytes(path).decode("utf-8", errors=errors)


def make_dirs(path: str | os.PathLike[str]) -> None:
    """``mkdir -p`` that follows no link: an existing link on the way is refused, not created through."""
    os.close(open_dir(path, create=True))


def make_data_root(root: str | os.PathLike[str]) -> None:
    """Create the data directory if it is missing, with a ``.gitignore`` holding ``*`` in it; an existing
    directory (and its own ``.gitignore``) is left as it is. A link in its place is refused."""
    absolute, names = _components(root)
    os.close(_walk(names, create=True, on_create=absolute))


def check_no_links(path: str | os.PathLike[str]) -> None:
    """Refuse ``path`` when it, or a directory on the way to it, is a link (for files opened by name by
    other code, e.g. SQLite); a missing tail is fine. ``LinkRefusedError`` names the link."""
    _, names = _components(path)
    walked = ""
    for name in names:
        walked = f"{walked}/{name}"
        try:
            info = os.lstat(walked)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(info.st_mode):
            raise LinkRefusedError(walked)

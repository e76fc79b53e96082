"""Where definition files are looked for, and how they are read.

For a kind of definition (``agents``, ``skills``, ``commands``) the folders are, in order of precedence
lowest first: the user's ``~/.config/deep-tui/<kind>/``, then — only when the project is trusted — the project's
``.claude/<kind>/`` and ``.deep-tui/<kind>/`` (a later folder's definition replaces an earlier one of the same
name). A project's files are hostile: below the project root nothing is followed through a symbolic link (the
folders, the files, a skill's sub-folders), only regular files are read, each capped, and a folder yields a
bounded number of entries. The user's own folder may be reached through links (dotfile managers use them), but
its entries are read the same way.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tui.base.paths import user_config_dir
from tui.trust.project_files import MAX_DEFINITION_BYTES as MAX_DEFINITION_BYTES  # the trust prompt's walk: the same
from tui.trust.project_files import PROJECT_FOLDERS as PROJECT_FOLDERS  # folders and caps as the loaders'

Origin = Literal["user", "project"]

MAX_ENTRIES = 200
"""At most this many entries of one folder are looked at (a warning says when more were there)."""

_NO_FOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class DefinitionFolder:
    """One folder definitions of a kind may be in."""

    path: Path
    origin: Origin
    root: Path
    """Where the no-link walk starts (the project root; the folder itself for the user's)."""

    @property
    def label(self) -> str:
        """``user`` or ``project`` as the user reads it next to a definition."""
        return self.origin


@dataclass(frozen=True)
class DefinitionFile:
    """A definition file's text (UTF-8, undecodable bytes replaced) and where it came from."""

    name: str
    """The file's name in its folder (``reviewer.md``; for a skill, its folder's name)."""
    path: Path
    origin: Origin
    text: str


class DefinitionReadError(OSError):
    """A folder or file that is not read (a link, not a regular file, too large); the message says which."""


def definition_folders(kind: str, *, project_root: Path | None, user_dir: Path | None = None) -> list[DefinitionFolder]:
    """The folders of ``kind`` (``agents``, ``skills``, ``commands``), lowest precedence first. ``project_root``:
    the trusted project's root, or ``None`` when the project is not trusted (its folders are then not looked at)."""
    user = user_dir if user_dir is not None else user_config_dir()
    folders = [DefinitionFolder(user / kind, "user", user / kind)]
    if project_root is not None:
        folders.extend(DefinitionFolder(project_root / folder / kind, "project", project_root)
                       for folder in PROJECT_FOLDERS)
    return folders


@contextmanager
def open_folder(folder: DefinitionFolder) -> Iterator[int | None]:
    """A directory descriptor for ``folder`` (``None`` when it does not exist), walked from its root without
    following a link. Raises :class:`DefinitionReadError` when a component is a link or not a directory."""
    try:
        fd = os.open(folder.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        yield None
        return
    except OSError as error:
        raise DefinitionReadError(f"{folder.root}: cannot open it ({error.strerror})") from None
    try:
        relative = folder.path.relative_to(folder.root).parts
        for name in relative:
            parent, fd = fd, -1  # _descend closes the parent, whatever happens
            fd = _descend(parent, name, folder.root)
            if fd < 0:
                yield None
                return
        yield fd
    finally:
        if fd >= 0:
            os.close(fd)


def _descend(parent: int, name: str, shown: Path) -> int:
    """Open ``name`` in ``parent`` as a directory, never through a link; closes ``parent``; -1 when absent."""
    try:
        return os.open(name, _NO_FOLLOW | os.O_DIRECTORY, dir_fd=parent)
    except FileNotFoundError:
        return -1
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(parent, name):
            raise DefinitionReadError(f"{name} under {shown} is a symbolic link (not followed)") from None
        if error.errno == errno.ENOTDIR:
            return -1
        raise DefinitionReadError(f"{name} under {shown}: {error.strerror}") from None
    finally:
        os.close(parent)


def _is_link(parent: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def list_entries(folder_fd: int) -> tuple[list[tuple[str, bool]], bool]:
    """The folder's entries as ``(name, is_directory)`` (links are neither: left out), sorted by name, at most
    :data:`MAX_ENTRIES`; and whether some were left out for that bound."""
    found: list[tuple[str, bool]] = []
    more = False
    with os.scandir(folder_fd) as entries:
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if len(found) >= MAX_ENTRIES:
                more = True
                break
            if entry.is_symlink():
                found.append((entry.name, False))  # read_entry refuses it with a message
            else:
                found.append((entry.name, entry.is_dir(follow_symlinks=False)))
    return sorted(found), more


def read_entry(folder_fd: int, name: str, shown: Path, *, limit: int = MAX_DEFINITION_BYTES) -> str:
    """The text of regular file ``name`` in ``folder_fd``, never through a link, never blocking on a FIFO, at
    most ``limit`` bytes. Raises :class:`DefinitionReadError` (or ``FileNotFoundError``)."""
    try:
        fd = os.open(name, _NO_FOLLOW | os.O_NONBLOCK, dir_fd=folder_fd)
    except FileNotFoundError:
        raise
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise DefinitionReadError(f"{shown}: a symbolic link (not followed)") from None
        raise DefinitionReadError(f"{shown}: cannot read it ({error.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise DefinitionReadError(f"{shown}: not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise DefinitionReadError(f"{shown}: larger than {limit:,} bytes")
    return data.decode("utf-8", errors="replace")


def read_markdown_files(folder: DefinitionFolder, warnings: list[str]) -> list[DefinitionFile]:
    """Every ``*.md`` file directly in ``folder`` (none when it does not exist); a file or folder that cannot
    be read adds one line to ``warnings`` and is skipped."""
    files: list[DefinitionFile] = []
    try:
        with open_folder(folder) as fd:
            if fd is None:
                return files
            entries, more = list_entries(fd)
            if more:
                warnings.append(f"{folder.path}: only the first {MAX_ENTRIES} entries were read")
            for name, is_dir in entries:
                if is_dir or not name.endswith(".md"):
                    continue
                try:
                    text = read_entry(fd, name, folder.path / name)
                except FileNotFoundError:
                    continue
                except DefinitionReadError as error:
                    warnings.append(f"skipped {error}")
                    continue
                files.append(DefinitionFile(name, folder.path / name, folder.origin, text))
    except DefinitionReadError as error:
        warnings.append(f"skipped {error}")
    except OSError as error:
        warnings.append(f"skipped {folder.path}: {error.strerror or error}")
    return files

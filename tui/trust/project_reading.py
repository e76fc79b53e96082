"""A project's config files read as a cloned repository may ship them: ``.deep-tui/config.toml`` and ``.mcp.json``
without following a link, regular files only, never blocking, capped; its definitions scanned. A problem is one
:class:`UnusableProject` naming the file at fault."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from tui.base.config_layers import MAX_CONFIG_BYTES
from tui.base.mcp_config import PROJECT_FILE_LIMIT, PROJECT_FILE_NAME
from tui.base.paths import DEFAULT_DATA_DIR_NAME, USER_CONFIG_NAME
from tui.trust.project_files import ProjectExtensions, TooMuchToReview, scan_project_extensions

__all__ = ["UnusableProject", "read_extensions", "read_without_links"]


def read_extensions(root: Path) -> ProjectExtensions:
    try:
        return scan_project_extensions(root)
    except TooMuchToReview as problem:
        raise UnusableProject(str(problem), root) from None
    except OSError as error:
        raise UnusableProject(f"cannot read its agents, skills and commands: {error.strerror or error}", root) from None


class UnusableProject(Exception):
    def __init__(self, message: str, path: Path | None = None) -> None:
        super().__init__(message)
        self.path = path
        """The file at fault, when it is not ``config.toml``."""


_NO_FOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


def read_without_links(root: Path) -> tuple[bytes | None, bytes | None]:
    """``(config.toml, .mcp.json)``, each ``None`` when absent."""
    try:
        root_fd = os.open(root, _NO_FOLLOW | os.O_DIRECTORY)
    except OSError as error:
        raise UnusableProject(f"cannot open the project directory: {error.strerror}") from None
    try:
        return _read_toml(root, root_fd), _read_mcp_json(root, root_fd)
    finally:
        os.close(root_fd)


def _read_toml(root: Path, root_fd: int) -> bytes | None:
    try:
        dir_fd = os.open(DEFAULT_DATA_DIR_NAME, _NO_FOLLOW | os.O_DIRECTORY, dir_fd=root_fd)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(root / DEFAULT_DATA_DIR_NAME):
            raise UnusableProject(f"{DEFAULT_DATA_DIR_NAME} is a symbolic link (not followed)") from None
        if error.errno == errno.ENOTDIR:
            return None  # a file named .deep-tui: no project config (the data directory check says more)
        raise UnusableProject(f"cannot open {DEFAULT_DATA_DIR_NAME}: {error.strerror}") from None
    try:
        return _read_file(dir_fd, USER_CONFIG_NAME, MAX_CONFIG_BYTES, None)
    finally:
        os.close(dir_fd)


def _read_mcp_json(root: Path, root_fd: int) -> bytes | None:
    return _read_file(root_fd, PROJECT_FILE_NAME, PROJECT_FILE_LIMIT, root / PROJECT_FILE_NAME)


def _read_file(dir_fd: int, name: str, limit: int, path: Path | None) -> bytes | None:
    """``name`` in ``dir_fd`` (``None`` when absent), never through a link, never blocking, at most ``limit``."""
    try:
        file_fd = os.open(name, _NO_FOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UnusableProject("it is a symbolic link (not followed)", path) from None
        raise UnusableProject(f"cannot read it: {error.strerror}", path) from None
    if not stat.S_ISREG(os.fstat(file_fd).st_mode):  # before fdopen, which refuses a directory
        os.close(file_fd)
        raise UnusableProject("it is not a regular file", path)
    with os.fdopen(file_fd, "rb") as handle:
        raw = handle.read(limit + 1)
    if len(raw) > limit:
        raise UnusableProject(f"it is larger than {limit:,} bytes", path)
    return raw



"""The subagents, skills and custom commands a project ships (``.claude/`` and ``.deep-tui/``, each with
``agents/``, ``skills/`` and ``commands/``): found and fingerprinted for the trust prompt.

They are the project's as much as its ``config.toml`` is: inert until the project is trusted, listed in the
trust prompt, and covered by the trust's digest, so a changed command, a new skill or a skill's changed file asks
again. The walk never follows a link (a planted ``.claude -> ~/.claude`` is noted, not read), reads regular
files only, each up to the size the loaders read (a larger file is refused by them, so only its size counts), and
is bounded: a project holding more than :data:`MAX_WALKED_ENTRIES` entries or :data:`MAX_HASHED_BYTES` bytes in
those folders cannot be reviewed, and so cannot be trusted.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from tui.text.terminal_text import visible

PROJECT_FOLDERS = (".claude", ".deep-tui")
"""The project's folders holding definitions, lowest precedence first."""
EXTENSION_KINDS = ("agents", "skills", "commands")
"""The kinds of definition, each a folder under every one of :data:`PROJECT_FOLDERS`."""
KIND_LABELS = {"agents": "subagent", "skills": "skill", "commands": "command"}
"""How the trust prompt names one definition of each kind."""
MAX_DEFINITION_BYTES = 256 * 1024
"""A definition file (or skill resource) larger than this is never read by the loaders."""
MAX_WALKED_ENTRIES = 5_000
MAX_HASHED_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 10
SHOWN_NAME_LIMIT = 60

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class TooMuchToReview(Exception):
    """The project's definition folders are larger than the walk's bounds."""


@dataclass(frozen=True)
class ProjectExtension:
    """One subagent, skill or command a project ships."""

    kind: str
    """``agents``, ``skills`` or ``commands``."""
    name: str
    """As shown: the file's name without ``.md`` (a skill: its folder's), one line, escaped, cut."""
    where: str
    """Its path below the project root, as shown (``.claude/commands/deploy.md``)."""
    digest: str
    """The SHA-256 of what it is made of (a skill: every file in its folder)."""
    key: str
    """How a trust record keeps it: its raw path, ASCII-escaped (two names shown alike stay apart)."""

    @property
    def label(self) -> str:
        return KIND_LABELS[self.kind]


@dataclass(frozen=True)
class ProjectExtensions:
    """What :func:`scan_project_extensions` found: the definitions, the notes on what was not read (links), the
    folders that hold them, and the fingerprint of all of it (``None`` when the project ships none)."""

    items: tuple[ProjectExtension, ...] = ()
    notes: tuple[str, ...] = ()
    folders: tuple[Path, ...] = ()
    fingerprint: str | None = None

    def __bool__(self) -> bool:
        return bool(self.items)


NO_EXTENSIONS = ProjectExtensions()


def shown_name(name: str) -> str:
    """A file or folder name from the project as one line of plain text, cut."""
    text = visible(name).replace("\n", "␊").replace("\r", "␍").replace("\t", "␉")
    return text if len(text) <= SHOWN_NAME_LIMIT else text[: SHOWN_NAME_LIMIT - 1] + "…"


class _Walk:
    """The bounded walk: the fingerprint lines, what is listed, the notes."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.notes: list[str] = []
        self.entries = 0
        self.hashed = 0

    def count(self) -> None:
        self.entries += 1
        if self.entries > MAX_WALKED_ENTRIES:
            raise TooMuchToReview(f"its agents, skills and commands folders hold more than {MAX_WALKED_ENTRIES:,} "
                                  "entries: too many to review")

    def file_line(self, parent: int, name: str, relative: str) -> str:
        """The fingerprint line of entry ``name`` (a file's bytes hashed; a link, a folder or another kind of
        entry by its kind alone)."""
        import hashlib  # here, not for the first frame: most projects have nothing to digest

        self.count()
        where = json.dumps(relative)
        try:
            first = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except OSError as error:
            return f"unreadable {where} {error.errno}"
        if stat.S_ISLNK(first.st_mode):
            self.notes.append(f"{shown_name(relative)} is a symbolic link (not followed)")
            return f"link {where}"
        if not stat.S_ISREG(first.st_mode):  # never opened: a device or a FIFO is not a definition
            return f"other {where} {stat.S_IFMT(first.st_mode)}"
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=parent)
        except OSError as error:  # replaced since the stat (a link now: ELOOP)
            return f"unreadable {where} {error.errno}"
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return f"other {where} {stat.S_IFMT(info.st_mode)}"
            if info.st_size > MAX_DEFINITION_BYTES:
                return f"large {where} {info.st_size}"
            data = os.read(fd, MAX_DEFINITION_BYTES + 1)
        finally:
            os.close(fd)
        self.hashed += len(data)
        if self.hashed > MAX_HASHED_BYTES:
            raise TooMuchToReview(f"its agents, skills and commands folders hold more than "
                                  f"{MAX_HASHED_BYTES // (1024 * 1024)} MB: too much to review")
        return f"file {where} {hashlib.sha256(data).hexdigest()}"

    def tree_lines(self, fd: int, relative: str, depth: int) -> list[str]:
        """Every entry below directory ``fd`` (sorted), folders walked into without following a link."""
        lines: list[str] = []
        for name, is_dir in _entries(fd):
            path = f"{relative}/{name}"
            if not is_dir:
                lines.append(self.file_line(fd, name, path))
                continue
            self.count()
            if depth >= MAX_DEPTH:
                lines.append(f"deep {json.dumps(path)}")
                continue
            child = _open_dir(fd, name)
            if child is None:
                lines.append(f"gone {json.dumps(path)}")
                continue
            try:
                lines.append(f"dir {json.dumps(path)}")
                lines += self.tree_lines(child, path, depth + 1)
            finally:
                os.close(child)
        return lines


def _entries(fd: int) -> list[tuple[str, bool]]:
    """A directory's entries as ``(name, is a directory, not a link)``, sorted; past :data:`MAX_WALKED_ENTRIES`
    in one directory the walk stops (a folder of a million files is not listed whole first)."""
    found: list[tuple[str, bool]] = []
    with os.scandir(fd) as scan:
        for entry in scan:
            if len(found) >= MAX_WALKED_ENTRIES:
                raise TooMuchToReview(f"a folder among its agents, skills and commands holds more than "
                                      f"{MAX_WALKED_ENTRIES:,} entries: too many to review")
            found.append((entry.name, entry.is_dir(follow_symlinks=False)))
    return sorted(found)


def _open_dir(parent: int, name: str) -> int | None:
    """``name`` in ``parent`` as a directory, never through a link; ``None`` when it is absent or not a directory
    (a link raises ``OSError`` with ``ELOOP``/``ENOTDIR``, which the caller tells apart)."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        if _is_link(parent, name):
            raise OSError(errno.ELOOP, "a symbolic link") from None
        return None


def _is_link(parent: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def scan_project_extensions(root: Path) -> ProjectExtensions:
    """The definitions under ``root`` (a project's real path). Raises :class:`TooMuchToReview` past the bounds,
    ``OSError`` when the root cannot be opened."""
    import hashlib  # here, not for the first frame: most projects have nothing to digest

    walk = _Walk()
    items: list[ProjectExtension] = []
    folders: list[Path] = []
    root_fd = os.open(root, _DIR_FLAGS)
    try:
        for folder in PROJECT_FOLDERS:
            folder_fd = _descend(walk, root_fd, folder, folder)
            if folder_fd is None:
                continue
            try:
                for kind in EXTENSION_KINDS:
                    relative = f"{folder}/{kind}"
                    kind_fd = _descend(walk, folder_fd, kind, relative)
                    if kind_fd is None:
                        continue
                    try:
                        found = _kind_items(walk, kind_fd, kind, relative)
                    finally:
                        os.close(kind_fd)
                    if found:
                        folders.append(root / folder / kind)
                        items += found
            finally:
                os.close(folder_fd)
    finally:
        os.close(root_fd)
    if not items:
        return ProjectExtensions(notes=tuple(walk.notes))
    fingerprint = hashlib.sha256("\n".join(walk.lines).encode("utf-8", "surrogateescape")).hexdigest()
    return ProjectExtensions(tuple(items), tuple(walk.notes), tuple(folders), fingerprint)


def _descend(walk: _Walk, parent: int, name: str, relative: str) -> int | None:
    try:
        return _open_dir(parent, name)
    except OSError as error:
        if error.errno == errno.ELOOP:
            walk.notes.append(f"{shown_name(relative)} is a symbolic link (not followed)")
            walk.lines.append(f"link {json.dumps(relative)}")
            return None
        walk.lines.append(f"unreadable {json.dumps(relative)} {error.errno}")
        return None


def _kind_items(walk: _Walk, fd: int, kind: str, relative: str) -> list[ProjectExtension]:
    """The definitions in one ``<folder>/<kind>`` directory, their lines added to the walk's: a command or a
    subagent is a ``*.md`` file, a skill a folder holding a ``SKILL.md`` file (and whatever is beside it)."""
    import hashlib  # here, not for the first frame: most projects have nothing to digest

    items: list[ProjectExtension] = []
    walk.lines.append(f"kind {json.dumps(relative)}")
    for name, is_dir in _entries(fd):
        path = f"{relative}/{name}"
        if not is_dir:
            own = [walk.file_line(fd, name, path)]
        else:
            walk.count()
            child = _open_dir(fd, name)
            if child is None:
                own = [f"gone {json.dumps(path)}"]
            else:
                try:
                    own = [f"dir {json.dumps(path)}", *walk.tree_lines(child, path, 2)]
                finally:
                    os.close(child)
        walk.lines += own
        if name.startswith("."):
            continue  # the loaders skip hidden entries; their bytes still count
        if kind == "skills":
            skill_file = f"file {json.dumps(path + '/SKILL.md')} "
            if not (is_dir and any(line.startswith(skill_file) for line in own)):
                continue
            shown = name
        else:
            if is_dir or not name.endswith(".md") or not own[0].startswith("file "):
                continue
            shown = name.removesuffix(".md")
        digest = hashlib.sha256("\n".join(own).encode("utf-8", "surrogateescape")).hexdigest()
        items.append(ProjectExtension(kind, shown_name(shown), shown_name(path), digest, json.dumps(path)[1:-1]))
    return items


EXTENSION_KEY_PREFIX = "file:"
"""How a definition is kept in a trust record's ``settings`` (``file:<path>`` → its digest)."""


@dataclass(frozen=True)
class ExtensionEntry:
    """One definition as the trust prompt lists it."""

    label: str
    """``subagent``, ``skill`` or ``command``."""
    name: str
    where: str
    since_trust: bool = False
    """New or different since the user trusted the project (only for a changed project)."""


def describe_extensions(extensions: ProjectExtensions, trusted: dict[str, str] | None) -> list[ExtensionEntry]:
    """The definitions in the prompt's order (subagents, skills, commands; by path), marked where they differ from
    those of the earlier trust (``trusted``: its record's ``settings``)."""
    order = {kind: number for number, kind in enumerate(EXTENSION_KINDS)}
    entries = []
    for item in sorted(extensions.items, key=lambda item: (order[item.kind], item.where)):
        since = trusted is not None and trusted.get(EXTENSION_KEY_PREFIX + item.key) != item.digest
        entries.append(ExtensionEntry(item.label, item.name, item.where, since))
    return entries


def recorded_extensions(extensions: ProjectExtensions) -> dict[str, str]:
    """What a trust record keeps of the definitions: each one's digest by its path."""
    return {EXTENSION_KEY_PREFIX + item.key: item.digest for item in extensions.items}

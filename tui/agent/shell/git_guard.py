"""Keeping a command from planting a git repository that runs code later, outside the sandbox.

Git runs what a repository's config and hooks name (``core.fsmonitor``, ``core.hooksPath``, ``core.pager``,
``.git/hooks/*``…) whenever the user runs ``git status`` there. A command may write the working directory, so
it could make or replace a ``.git`` — in the working directory or in any subdirectory — whose config names a
script of its own. Three measures (tested in ``tests/agent/test_sandbox_escapes.py``):

1. Before the command starts, every ``.git`` under the working directory (directory, ``gitdir:`` file, or a
   link into the working directory) is found (:func:`scan_git_entries`) and bound read-only over itself — its
   config, hooks, index and everything else — and so is a ``gitdir:`` file's target inside the working
   directory. A mount point cannot be moved, replaced or removed, so ``mv .git .git-orig`` fails too.
2. When the working directory has no ``.git``, an empty read-only directory is put there for the time of the
   command (:class:`Placeholders`): nothing can be created in its place. Git skips a ``.git`` that is not a
   repository, so a parent repository works as before, inside and outside the sandbox.
3. After the command (and everything it started) has ended, the scan runs again: a ``.git`` that was not there
   before — ``git init`` or ``git clone`` in a subdirectory, or a planted one — is renamed to
   ``.git.blocked-by-deep-tui`` (:func:`block_new_entries`), and the model and the user are told where it is.

A bare repository (a directory holding ``HEAD``, ``objects/`` and ``refs/``: git takes it for one when run in
it, and its config may name a work tree and an fsmonitor) counts as a ``.git`` entry: kept read-only when it
was there before, its ``HEAD`` renamed aside when the command made it.
"""

from __future__ import annotations

import itertools
import logging
import os
import stat
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from tui.agent.shell.dir_watch import DirectoryWatch

logger = logging.getLogger(__name__)

GIT = ".git"
BLOCKED_SUFFIX = ".blocked-by-deep-tui"
SCAN_ENTRY_LIMIT = 400_000
"""Directory entries one scan looks at, at most (a larger tree is scanned in part, and the note says so)."""
GITFILE_MAX_BYTES = 4096
BARE_HEAD = "HEAD"
BARE_DIRECTORIES = frozenset({"objects", "refs"})
"""With a ``HEAD`` file, what makes git take a directory for a repository (bare: no ``.git`` in the name)."""
CONFIG_MAX_BYTES = 256 * 1024


@dataclass
class GitEntries:
    """The ``.git`` entries under a working directory: path → (device, inode) of the entry itself."""

    found: dict[str, tuple[int, int]] = field(default_factory=dict)
    complete: bool = True
    """``False`` when the scan stopped at :data:`SCAN_ENTRY_LIMIT`."""


@dataclass
class _Listing:
    identity: tuple[int, int, int, int]
    """(device, inode, ctime, mtime) of the directory when listed: an entry added, removed or renamed in it
    changes its ctime, which no program can set back."""
    subdirectories: list[str]
    gits: dict[str, tuple[int, int]]
    bare: bool = False
    """It holds ``HEAD``, ``objects/`` and ``refs/``: git takes it for a (bare) repository when run in it."""
    generation: int = 0
    """The scan that last went through it."""
    epoch: int = 0
    """The :class:`~tui.agent.shell.dir_watch.DirectoryWatch` epoch whose watch was on the directory before it was
    listed or checked (0: none): while that epoch lasts and no event names it, the listing stands unchecked."""


@dataclass
class ScanCache:
    """What each directory held when last listed, so a scan of an unchanged tree costs one ``lstat`` per
    directory rather than a listing. A directory changed less than :data:`RACY_SECONDS` before it was listed is
    listed again next time (a change within the same clock tick would not show in its ctime)."""

    listings: dict[str, _Listing] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held for a whole scan (two commands of a session may start or end at once)."""
    watch: DirectoryWatch | None = None
    """The directories' inotify watches (:mod:`tui.agent.shell.dir_watch`): a directory no event names since it
    was listed is not even ``lstat``-ed. Made by the first scan; ``None`` where inotify is not to be had."""
    watching: bool = True
    """Whether to use inotify at all (the first scan makes the watch)."""

    def directory_watch(self) -> DirectoryWatch | None:
        if self.watch is None and self.watching:
            self.watching = False  # one attempt per cache
            self.watch = DirectoryWatch.create()
        return self.watch if self.watch is not None and self.watch.usable else None


RACY_SECONDS = 2.0


def scan_git_entries(workdir: Path, skip: Collection[str] = (), limit: int = SCAN_ENTRY_LIMIT,
                     cache: ScanCache | None = None) -> GitEntries:
    """Every entry named ``.git`` under ``workdir`` (``workdir/.git`` included), and every bare repository
    below it (by its directory's path); no link is followed and no ``.git`` or ``skip`` directory is entered.
    ``cache`` (kept between scans) spares listing what did not change."""
    if cache is None:
        return _scan(workdir, set(skip), limit, {}, None)
    with cache.lock:
        return _scan(workdir, set(skip), limit, cache.listings, cache.directory_watch())


def _scan(workdir: Path, skipped: set[str], limit: int, listings: dict[str, _Listing],
          watch: DirectoryWatch | None) -> GitEntries:
    entries = GitEntries()
    found = entries.found
    root = str(workdir)
    pending = [root]
    seen = visited = 0
    generation = _next_generation()
    changed = watch.changes() if watch is not None else None
    epoch = watch.epoch if watch is not None and changed is not None else -1  # -1: no listing is taken unchecked
    dirty = changed if changed is not None else set()
    lstat, get, pop, extend = os.lstat, listings.get, pending.pop, pending.extend
    while pending:
        directory = pop()
        if directory in skipped:
            continue
        listing = get(directory)
        if listing is None or listing.epoch != epoch or directory in dirty:
            # A watch first (before the lstat and the listing: no change falls between them unseen).
            watched = watch is not None and watch.watch(directory)
            try:
                info = lstat(directory)
            except OSError:
                continue
            identity = (info.st_dev, info.st_ino, info.st_ctime_ns, info.st_mtime_ns)
            if listing is None or listing.identity != identity:
                if not stat.S_ISDIR(info.st_mode):  # a link or a file now: never followed
                    continue
                listing = _list(directory, identity)
                if listing is None:
                    continue
                seen += len(listing.subdirectories) + len(listing.gits)
                if time.time_ns() - info.st_ctime_ns > RACY_SECONDS * 1e9:
                    listings[directory] = listing
                else:
                    listings.pop(directory, None)
            listing.epoch = watch.epoch if watched and watch is not None else 0
        listing.generation = generation
        visited += 1
        if seen + visited > limit:
            entries.complete = False
            return entries
        if listing.gits:
            found.update(listing.gits)
        if listing.bare and directory != root:  # a bare repository below the workdir (the workdir stays writable)
            found[directory] = (listing.identity[0], listing.identity[1])
        extend(listing.subdirectories)
    if len(listings) > 2 * visited + 1000:  # directories gone since: forget them now and then
        for gone in [path for path, listing in listings.items() if listing.generation != generation]:
            del listings[gone]
    return entries


_generations = itertools.count(1)


def _next_generation() -> int:
    return next(_generations)


def _list(directory: str, identity: tuple[int, int, int, int]) -> _Listing | None:
    listing = _Listing(identity, [], {})
    repository_marks = 0
    try:
        with os.scandir(directory) as found:
            for entry in found:
                if entry.name == GIT:
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    listing.gits[entry.path] = (info.st_dev, info.st_ino)
                elif entry.is_dir(follow_symlinks=False):
                    listing.subdirectories.append(entry.path)
                    repository_marks += entry.name in BARE_DIRECTORIES
                elif entry.name == BARE_HEAD and entry.is_file(follow_symlinks=False):
                    repository_marks += 1
    except OSError as error:  # unreadable or vanished: nothing in it can be listed by us either
        logger.debug("git scan: cannot list %s: %s", directory, error)
        return None
    listing.bare = repository_marks == 1 + len(BARE_DIRECTORIES)
    return listing


def read_only_targets(entry: str, workdir: Path) -> list[str]:
    """What to bind read-only for the ``.git`` entry at ``entry``: itself, and where it points inside
    ``workdir`` (a ``gitdir:`` file's git directory, a link's target). A link whose target is ``workdir``
    or one of its parents is left to the after-run check (binding it would make the working directory
    read-only)."""
    root = os.path.realpath(workdir)
    targets: list[str] = []
    try:
        info = os.lstat(entry)
    except OSError:
        return targets
    if stat.S_ISLNK(info.st_mode):
        target = os.path.realpath(entry)
        if _strictly_inside(target, root) and os.path.exists(target):
            targets.append(target)
        return targets
    targets.append(entry)
    git_dir: str | None = entry
    if stat.S_ISREG(info.st_mode):
        git_dir = _gitdir_of(entry)
        if git_dir is not None and _strictly_inside(git_dir, root) and os.path.isdir(git_dir) \
                and not _is_under_git_dir(git_dir, root):
            targets.append(git_dir)
    hooks = _hooks_path(git_dir, os.path.dirname(entry)) if git_dir is not None else None
    if hooks is not None and _strictly_inside(hooks, root) and os.path.exists(hooks) \
            and not _is_under_git_dir(hooks, root):
        targets.append(hooks)  # husky's .husky/_, a .githooks directory: hooks git runs, kept in the tree
    return targets


def _hooks_path(git_dir: str, worktree: str) -> str | None:
    """The ``core.hooksPath`` the repository's own config names (resolved; relative to the working tree, as
    git takes it), or ``None``. A plain reading of ``config``: ``include`` files are not followed."""
    text = _read_head(os.path.join(git_dir, "config"), CONFIG_MAX_BYTES)
    section = ""
    found: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("[") and "]" in stripped:
            section = stripped[1:stripped.index("]")].strip().lower()
            stripped = stripped[stripped.index("]") + 1:].strip()
        key, equals, value = stripped.partition("=")
        if equals and section == "core" and key.strip().lower() == "hookspath":
            found = value.split("#")[0].split(";")[0].strip().strip('"')
    if not found:
        return None
    return os.path.realpath(os.path.join(worktree, os.path.expanduser(found)))


def _read_head(path: str, limit: int) -> str:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return ""
        return os.read(descriptor, limit).decode("utf-8", errors="replace")
    except OSError:
        return ""
    finally:
        os.close(descriptor)


def _gitdir_of(gitfile: str) -> str | None:
    """The git directory a ``.git`` file names (``gitdir: PATH``), resolved; ``None`` if it names none."""
    try:
        descriptor = os.open(gitfile, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        head = os.read(descriptor, GITFILE_MAX_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(descriptor)
    first = head.splitlines()[0] if head else ""
    if not first.startswith("gitdir:"):
        return None
    named = first[len("gitdir:"):].strip()
    if not named:
        return None
    return os.path.realpath(os.path.join(os.path.dirname(gitfile), named))


def _strictly_inside(path: str, root: str) -> bool:
    return path != root and path.startswith(root.rstrip("/") + "/")


def _is_under_git_dir(path: str, root: str) -> bool:
    relative = os.path.relpath(path, root)
    return GIT in relative.split(os.sep)


def block_new_entries(before: GitEntries, after: GitEntries, workdir: Path,
                      placeholders: Placeholders | None = None) -> list[str]:
    """Rename every ``.git`` in ``after`` that was not in ``before`` (same path, same inode) out of git's way
    (a placeholder of ours is not one); one line per entry, for the model and the user."""
    notes: list[str] = []
    for path, identity in sorted(after.found.items()):
        if before.found.get(path) == identity or (placeholders is not None and placeholders.made(path, identity)):
            continue
        shown = os.path.relpath(path, workdir)
        if os.path.basename(path) != GIT:  # a bare repository: its HEAD moved aside, git no longer takes it for one
            path = os.path.join(path, BARE_HEAD)
            shown = os.path.join(shown, BARE_HEAD)
        target = _free_name(path + BLOCKED_SUFFIX)
        try:
            os.rename(path, target)
        except OSError as error:
            logger.warning("cannot move the planted %s aside: %s", path, error)
            notes.append(f"[deep-tui: the command made {shown}, which git outside the sandbox would read; it could "
                         f"not be moved aside ({error.strerror}): do not run git there before you have checked it]")
            continue
        logger.warning("a command made %s; renamed to %s", path, target)
        notes.append(f"[deep-tui: the command made {shown}; it was renamed to {os.path.relpath(target, workdir)}, "
                     "since a repository's config and hooks can run code when git is used there outside the "
                     "sandbox. Check it, then rename it back yourself if you want it]")
    if not after.complete:
        notes.append(f"[deep-tui: the working directory has more than {SCAN_ENTRY_LIMIT:,} entries, so it was not "
                     "checked entirely for a .git the command may have made (a repository's config can run code "
                     "when git is used there): check with `find . -name .git` before running git in a "
                     "subdirectory]")
    return notes


def _free_name(base: str) -> str:
    candidate, number = base, 1
    while os.path.lexists(candidate):
        number += 1
        candidate = f"{base}-{number}"
    return candidate


class Placeholders:
    """Empty directories put where a ``.git`` is missing, for as long as a command runs there (several
    commands may run at once in one working directory: the last one to end removes it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users: dict[str, tuple[int, tuple[int, int]]] = {}

    def acquire(self, path: str) -> bool:
        """Make the empty directory ``path`` if nothing is there (or count one more user of ours); whether a
        placeholder is now in place."""
        with self._lock:
            if path in self._users:
                count, identity = self._users[path]
                self._users[path] = (count + 1, identity)
                return True
            try:
                os.mkdir(path, 0o755)
                info = os.lstat(path)
            except OSError as error:
                logger.debug("no placeholder at %s: %s", path, error)
                return False
            self._users[path] = (1, (info.st_dev, info.st_ino))
            return True

    def made(self, path: str, identity: tuple[int, int]) -> bool:
        """Whether the entry ``identity`` at ``path`` is a placeholder made here (and still in use)."""
        with self._lock:
            return path in self._users and self._users[path][1] == identity

    def release(self, path: str) -> None:
        """One command at ``path`` ended: the last one removes the placeholder, if it is still the empty
        directory made here."""
        with self._lock:
            count, identity = self._users.get(path, (0, (0, 0)))
            if count > 1:
                self._users[path] = (count - 1, identity)
                return
            self._users.pop(path, None)
            try:
                info = os.lstat(path)
                if (info.st_dev, info.st_ino) == identity and stat.S_ISDIR(info.st_mode):
                    os.rmdir(path)
            except OSError as error:
                logger.warning("cannot remove the placeholder %s: %s", path, error)


PLACEHOLDERS = Placeholders()
"""The process's placeholders (one table: two sessions may share a working directory)."""

"""All sessions of a data directory: create, open, resolve prefixes, list, fork, rename, delete."""

from __future__ import annotations

import logging
import os
import re
import secrets
import shutil
import time
from pathlib import Path

from tui.paths import DataDir
from tui.store.errors import (
    AmbiguousSessionError,
    CorruptSessionError,
    SessionLockedError,
    UnknownSessionError,
)
from tui.store.handle import SessionHandle
from tui.store.lock import SessionLock, is_locked
from tui.store.messages_file import MessagesFile, write_empty
from tui.store.meta import UNTITLED, ParentRef, SessionMeta, read_meta, title_from

logger = logging.getLogger(__name__)

_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class SessionStore:
    """Sessions under ``<data>/sessions/<id>/``."""

    def __init__(self, data_dir: DataDir) -> None:
        self.data_dir = data_dir
        self.root = data_dir.sessions_dir

    # -- lookup -------------------------------------------------------------------

    def _ids(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return [entry.name for entry in os.scandir(self.root) if entry.is_dir() and _SAFE_ID.match(entry.name)]

    def resolve(self, prefix: str) -> str:
        """The session id that is ``prefix`` or uniquely starts with it."""
        if not prefix or not _SAFE_ID.match(prefix):
            raise UnknownSessionError(f"no session matches {prefix!r}")
        ids = self._ids()
        if prefix in ids:
            return prefix
        matches = sorted(session_id for session_id in ids if session_id.startswith(prefix))
        if not matches:
            raise UnknownSessionError(f"no session matches {prefix!r} in {self.root}")
        if len(matches) > 1:
            shown = ", ".join(matches[:5]) + (" …" if len(matches) > 5 else "")
            raise AmbiguousSessionError(f"{prefix!r} is ambiguous: it matches {shown}")
        return matches[0]

    def meta(self, session_id: str) -> SessionMeta:
        """Read session.json; a corrupt one is kept as ``.corrupt`` and rebuilt from the history."""
        directory = self.root / session_id
        path = directory / "session.json"
        if path.exists():
            try:
                return read_meta(path, session_id)
            except (ValueError, TypeError, KeyError, OSError) as error:
                corrupt = _free_name(path.with_name("session.json.corrupt"))
                logger.warning("%s is unreadable (%s); kept as %s and rebuilt", path, error, corrupt.name)
                os.replace(path, corrupt)
        return self._derive_meta(directory, session_id)

    def _derive_meta(self, directory: Path, session_id: str) -> SessionMeta:
        """Metadata for a directory holding only messages.json (e.g. from pydantic-deep), cached once."""
        history = directory / "messages.json"
        if not history.exists():
            raise UnknownSessionError(f"session {session_id} has neither session.json nor messages.json")
        messages_file = MessagesFile(history)
        count = messages_file.count()
        stat = history.stat()
        meta = SessionMeta(
            id=session_id,
            title=title_from(messages_file.load_range(0, min(count, 4))) or UNTITLED,
            created=stat.st_mtime,
            updated=stat.st_mtime,
            message_count=count,
        )
        meta.write(directory / "session.json")
        return meta

    def list_sessions(self) -> list[SessionMeta]:
        """Every session, newest first, from session.json files only (derived once when missing)."""
        sessions: list[SessionMeta] = []
        for session_id in self._ids():
            try:
                meta = self.meta(session_id)
                if self._discard_if_abandoned(meta):
                    continue
                sessions.append(meta)
            except UnknownSessionError as error:  # being created or deleted right now
                logger.debug("skipping session %s: %s", session_id, error)
            except CorruptSessionError as error:
                logger.warning("skipping session %s: %s", session_id, error)
        sessions.sort(key=lambda meta: meta.updated, reverse=True)
        return sessions

    def _discard_if_abandoned(self, meta: SessionMeta) -> bool:
        """Remove a session a killed deep-tui left empty (untitled, no message, no parent, no lock held):
        it holds nothing, and it must not become the newest session that ``--continue`` picks."""
        directory = self.root / meta.id
        history = directory / "messages.json"
        if meta.message_count or meta.parent is not None or meta.title != UNTITLED or is_locked(directory):
            return False
        if history.exists() and history.stat().st_size > 2:  # more than "[]": keep, let open() recount
            return False
        logger.info("removing empty abandoned session %s", meta.id)
        shutil.rmtree(directory, onerror=_vanished_is_fine)
        return not directory.exists()

    def newest(self) -> str | None:
        sessions = self.list_sessions()
        return sessions[0].id if sessions else None

    # -- opening -------------------------------------------------------------------

    def _new_id(self) -> str:
        while True:
            session_id = secrets.token_hex(6)
            if not (self.root / session_id).exists():
                return session_id

    def create(self, model: str | None = None, *, parent: ParentRef | None = None,
               title: str = UNTITLED) -> SessionHandle:
        """A new, empty session, opened and locked."""
        session_id = self._new_id()
        directory = self.root / session_id
        directory.mkdir(parents=True)
        lock = SessionLock(directory, session_id)
        lock.acquire()
        meta = SessionMeta(id=session_id, model=model, parent=parent, title=title)
        meta.write(directory / "session.json")
        return SessionHandle(directory, meta, lock=lock)

    def open(self, session_id: str, *, read_only: bool = False) -> SessionHandle:
        """An existing session; refused with :class:`SessionLockedError` if another writer has it."""
        directory = self.root / session_id
        if not directory.is_dir():
            raise UnknownSessionError(f"no session {session_id!r} in {self.root}")
        lock = None
        if not read_only:
            lock = SessionLock(directory, session_id)
            lock.acquire()
        try:
            meta = self.meta(session_id)
            handle = SessionHandle(directory, meta, lock=lock)
            actual = handle.messages.count()
            if actual != meta.message_count and not read_only:
                meta.message_count = actual
                meta.write(handle.meta_path)
            return handle
        except BaseException:
            if lock is not None:
                lock.release(remove_if_created=True)
            raise

    # -- changing ------------------------------------------------------------------

    def rename(self, session_id: str, title: str) -> None:
        """Rename a closed session (an open one is renamed through its handle, which owns session.json)."""
        if is_locked(self.root / session_id):
            raise SessionLockedError(f"session {session_id} is open in a deep-tui; rename it there or close it first")
        meta = self.meta(session_id)
        meta.title = " ".join(title.split()) or UNTITLED
        meta.updated = time.time()
        meta.write(self.root / session_id / "session.json")

    def delete(self, session_id: str) -> None:
        directory = self.root / session_id
        if not directory.is_dir():
            raise UnknownSessionError(f"no session {session_id!r} in {self.root}")
        if is_locked(directory):
            raise SessionLockedError(f"session {session_id} is open in a deep-tui; close it before deleting")
        shutil.rmtree(directory, onerror=_vanished_is_fine)

    def fork(self, session_id: str, upto: int | None = None, model: str | None = None) -> SessionHandle:
        """A new session starting with the parent's messages ``[0:upto]`` (all by default)."""
        parent_meta = self.meta(session_id)
        source = MessagesFile(self.root / session_id / "messages.json")
        total = source.count()
        count = total if upto is None else max(0, min(upto, total))
        title = f"{parent_meta.title} (fork)"
        handle = self.create(model=model or parent_meta.model, parent=ParentRef(session_id, count), title=title)
        try:
            if count:
                handle.messages.append(source.load_range(0, count))
            else:
                write_empty(handle.messages.path)
            handle.meta.message_count = count
            handle.meta.last_usage = parent_meta.last_usage
            handle.meta.write(handle.meta_path)
        except BaseException:
            handle.close()
            shutil.rmtree(handle.directory, ignore_errors=True)
            raise
        return handle


def _free_name(path: Path) -> Path:
    """``path``, or ``path.1``, ``path.2``… — the first that does not exist, so no kept copy is overwritten."""
    candidate, number = path, 0
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}.{number}")
    return candidate


def _vanished_is_fine(function: object, path: str, error: tuple[type[BaseException], BaseException, object]) -> None:
    """rmtree error handler: a file another deleter removed first is not an error; anything else is."""
    if not isinstance(error[1], FileNotFoundError):
        raise error[1]

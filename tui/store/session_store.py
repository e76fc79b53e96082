"""All sessions of a data directory: create, open, resolve prefixes, list, fork, rename, delete."""

from __future__ import annotations

import logging
import os
import secrets
import shutil
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from tui.base.atomic import unused_name
from tui.base.nofollow import make_data_root, open_dir
from tui.base.paths import DataDir
from tui.store.abandoned_sessions import discard_if_untouched
from tui.store.checkpoints_file import CHECKPOINTS_FILE_NAME, copy_for_fork, task_state_before
from tui.store.handle import SessionHandle
from tui.store.lock import SessionLock, is_locked
from tui.store.messages_file import MessagesFile, read_foreign, write_empty
from tui.store.meta import UNTITLED, ParentRef, SessionMeta, read_meta, title_from
from tui.store.session_checks import check_history, missing_messages_warning, refuse_planted_links
from tui.store.session_ids import list_session_ids, resolve_prefix
from tui.store.store_errors import (
    SessionLockedError,
    StorageError,
    StoreError,
    UnknownSessionError,
)
from tui.store.task_state import TaskStateFile, calls_in, todos_from_calls
from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

logger = logging.getLogger(__name__)

class SessionStore:
    """Sessions under ``<data>/sessions/<id>/``."""

    def __init__(self, data_dir: DataDir) -> None:
        self.data_dir = data_dir
        self.root = data_dir.sessions_dir

    # -- lookup -------------------------------------------------------------------

    def _ids(self) -> list[str]:
        return list_session_ids(self.root)

    def resolve(self, prefix: str) -> str:
        """The session id that is ``prefix`` or uniquely starts with it."""
        return resolve_prefix(self._ids(), prefix, self.root)

    def meta(self, session_id: str) -> SessionMeta:
        """Read session.json; a corrupt one is kept as ``.corrupt`` and rebuilt from the history."""
        directory = self.root / session_id
        path = directory / "session.json"
        try:
            return read_meta(path, session_id)
        except FileNotFoundError:
            pass
        except (ValueError, TypeError, KeyError) as error:
            corrupt = unused_name(path.with_name("session.json.corrupt"))
            logger.warning("%s is unreadable (%s); kept as %s and rebuilt", path, error, corrupt.name)
            try:
                os.replace(path, corrupt)
            except OSError as move_error:
                raise StorageError.of(f"set aside the unreadable {path.name} of session {session_id}",
                                      move_error) from None
        except OSError as error:
            raise StorageError.of(f"read session {session_id}", error) from None
        return self._derive_meta(directory, session_id)

    def _derive_meta(self, directory: Path, session_id: str) -> SessionMeta:
        """Metadata for a directory holding only messages.json (e.g. from pydantic-deep), cached once."""
        history = directory / "messages.json"
        try:
            stat = history.stat()  # before reading: "updated" is when the history was last written, never now
            data = history.read_bytes()
        except FileNotFoundError:
            raise UnknownSessionError(f"session {session_id} has neither session.json nor messages.json") from None
        foreign = read_foreign(data)  # a pydantic-deep history is read in place: only opening it converts it
        if foreign is not None:
            count, first = len(foreign), foreign[:4]
        else:
            messages_file = MessagesFile(history, convert_foreign=False)
            count = messages_file.count()
            first = messages_file.load_range(0, min(count, 4))
        meta = SessionMeta(
            id=session_id,
            title=title_from(first) or UNTITLED,
            created=stat.st_mtime,
            updated=stat.st_mtime,
            message_count=count,
        )
        try:
            meta.write(directory / "session.json")
        except OSError as error:  # only a cache of what messages.json says: derived again next time
            logger.warning("could not write %s: %s", directory / "session.json", error)
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
            except (StoreError, OSError) as error:
                logger.warning("skipping session %s: %s", session_id, error)
        sessions.sort(key=lambda meta: meta.updated, reverse=True)
        return sessions

    def _discard_if_abandoned(self, meta: SessionMeta) -> bool:
        """Clear a session a killed deep-tui left untouched, so ``--continue`` never picks an empty one."""
        if meta.message_count or meta.parent is not None or meta.title != UNTITLED or meta.compressions \
                or meta.last_usage is not None:
            return False
        return self.discard_if_untouched(meta.id)

    def discard_if_untouched(self, session_id: str) -> bool:
        """Remove a session only while its directory holds nothing but an untouched empty new session
        (:func:`~tui.store.abandoned_sessions.discard_if_untouched`); True when it was removed."""
        return discard_if_untouched(self.root / session_id, session_id)

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
        try:
            self._make_session_dir(session_id)
        except OSError as error:
            raise StorageError.of(f"create a session in {self.root}", error) from None
        lock = SessionLock(directory, session_id)
        meta = SessionMeta(id=session_id, model=model, parent=parent, title=title)
        try:
            lock.acquire()
            meta.write(directory / "session.json")
        except (OSError, StoreError) as error:
            lock.release()
            shutil.rmtree(directory, ignore_errors=True)  # ours, created just now, holding nothing
            if isinstance(error, OSError):
                raise StorageError.of(f"create a session in {self.root}", error) from None
            raise
        return SessionHandle(directory, meta, lock=lock)

    def _make_session_dir(self, session_id: str) -> None:
        """``sessions/<id>/``, made relative to a link-free ``sessions/`` (a data directory made here gets its
        ``.gitignore``); a link on the way is refused."""
        make_data_root(self.data_dir.root)
        sessions = open_dir(self.root, create=True)
        try:
            os.mkdir(session_id, 0o777, dir_fd=sessions)
        finally:
            os.close(sessions)

    def open(self, session_id: str, *, read_only: bool = False) -> SessionHandle:
        """An existing session; refused with :class:`SessionLockedError` if another writer has it.

        Damage in messages.json is repaired (when writable) and reported in ``handle.warnings``, as is a
        history shorter than session.json says it was."""
        directory = self.root / session_id
        if not directory.is_dir():
            raise UnknownSessionError(f"no session {session_id!r} in {self.root}")
        lock = None
        if not read_only:
            lock = SessionLock(directory, session_id)
            lock.acquire()
        try:
            refuse_planted_links(directory)
            meta = self.meta(session_id)
            handle = SessionHandle(directory, meta, lock=lock)
            recorded = meta.message_count
            check_history(handle, repair=not read_only)
            actual = handle.messages.count()
            if actual < recorded:
                handle.warnings.append(missing_messages_warning(handle, recorded, actual))
            if actual != meta.message_count and not read_only:
                meta.message_count = actual
                try:
                    meta.write(handle.meta_path)
                except OSError as error:  # a cache of the count: recounted on the next open
                    logger.warning("could not update %s: %s", handle.meta_path, error)
            return handle
        except BaseException:
            if lock is not None:
                lock.release(remove_if_created=True)
            raise

    # -- changing ------------------------------------------------------------------

    def rename(self, session_id: str, title: str) -> None:
        """Rename a closed session (an open one is renamed through its handle, which owns session.json).
        "updated" is kept: a rename is not use, so ``--continue`` still opens the session last used."""
        if is_locked(self.root / session_id):
            raise SessionLockedError(f"session {session_id} is open in a deep-tui; rename it there or close it first")
        meta = self.meta(session_id)
        meta.title = " ".join(visible(title).split()) or UNTITLED
        try:
            meta.write(self.root / session_id / "session.json")
        except OSError as error:
            raise StorageError.of(f"rename session {session_id}", error) from None

    def delete(self, session_id: str) -> None:
        directory = self.root / session_id
        if not directory.is_dir():
            raise UnknownSessionError(f"no session {session_id!r} in {self.root}")
        if is_locked(directory):
            raise SessionLockedError(f"session {session_id} is open in a deep-tui; close it before deleting")
        try:
            shutil.rmtree(directory, onerror=_vanished_is_fine)
        except OSError as error:
            raise StorageError.of(f"delete session {session_id}", error) from None

    def fork(self, session_id: str, upto: int | None = None, model: str | None = None) -> SessionHandle:
        """A new session starting with the parent's messages ``[0:upto]`` (all by default)."""
        parent_meta = self.meta(session_id)
        source = MessagesFile(self.root / session_id / "messages.json")
        total = source.count()
        count = total if upto is None else max(0, min(upto, total))
        title = self._fork_title(session_id, parent_meta.title)
        handle = self.create(model=model or parent_meta.model, parent=ParentRef(session_id, count), title=title)
        try:
            copied = source.load_range(0, count) if count else []
            if copied:
                handle.messages.append(copied)
            else:
                write_empty(handle.messages.path)
            self._fork_task_state(session_id, handle, copied, whole=count == total)
            handle.meta.message_count = count
            # the compaction controls the user set for the parent (/context) hold in its forks too
            handle.meta.compaction_threshold = parent_meta.compaction_threshold
            handle.meta.auto_compact = parent_meta.auto_compact
            # The parent's last figure describes the fork only when it holds all of the parent's messages;
            # a partial fork is counted from its own messages when it opens.
            handle.meta.last_usage = parent_meta.last_usage if count == total else None
            handle.meta.restore_points = copy_for_fork(self.root / session_id / CHECKPOINTS_FILE_NAME,
                                                       handle.directory / CHECKPOINTS_FILE_NAME, count)
            handle.meta.write(handle.meta_path)
        except BaseException as error:
            handle.close()
            shutil.rmtree(handle.directory, ignore_errors=True)  # the fork, made just now
            if isinstance(error, OSError):
                raise StorageError.of(f"fork session {session_id}", error) from None
            raise
        return handle

    def _fork_task_state(self, parent: str, handle: SessionHandle, copied: list[ModelMessage], *, whole: bool) -> None:
        """The fork's todos.json: the task state as it was at the fork point. A fork just before a prompt that has
        a restore point (a conversation rewind) gets the todo list and /keep lines recorded with that point;
        otherwise the parent's /keep lines, and its current todo list for a whole fork, else the last list written
        in the copied messages."""
        recorded = None if whole else task_state_before(self.root / parent / CHECKPOINTS_FILE_NAME, len(copied) + 1)
        parent_file = TaskStateFile.of(self.root / parent, read_only=True)
        state = parent_file.state if recorded is None else recorded
        if recorded is None and (not whole or not parent_file.exists()):
            state = replace(state, todos=todos_from_calls(calls_in(copied)) or ())
        if not state.empty:
            TaskStateFile.of(handle.directory).save(state)

    def _fork_title(self, parent: str, parent_title: str) -> str:
        """``explain the project (fork)`` for a session's first fork, ``(fork 2)``, ``(fork 3)`` … for the next ones
        (numbered past the titles its forks have now, so two forks never share one)."""
        taken: set[str] = set()
        for session_id in self._ids():
            try:
                meta = self.meta(session_id)
            except (StoreError, OSError) as error:  # being created or deleted right now, or unreadable
                logger.debug("fork title: skipping session %s: %s", session_id, error)
                continue
            if meta.parent is not None and meta.parent.session == parent:
                taken.add(meta.title)
        title, number = f"{parent_title} (fork)", 1
        while title in taken:
            number += 1
            title = f"{parent_title} (fork {number})"
        return title


def _vanished_is_fine(function: object, path: str, error: tuple[type[BaseException], BaseException, object]) -> None:
    """rmtree error handler: a file another deleter removed first is not an error; anything else is."""
    if not isinstance(error[1], FileNotFoundError):
        raise error[1]

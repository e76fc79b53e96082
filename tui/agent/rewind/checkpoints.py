"""A session's restore points as its prompts run: one snapshot before the first change of each prompt.

:class:`PromptCheckpoints` is told when a prompt (or a ``!command``) starts (:meth:`begin`) and ends
(:meth:`end`); :meth:`before_change` is awaited before every call that may change the working directory (a
file write or edit, a shell command, an MCP tool call) and takes the snapshot the first time in a prompt.
Concurrent calls of one response wait for that one snapshot. A snapshot is bounded in time: past its
deadline git is killed, the user is told once, and the session's later prompts get no restore point rather
than a stalled turn. Nothing here ever stops a tool from running.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path

from tui.agent.rewind.shadow_repo import Deadline, ShadowRepo, ShadowRepoError, SnapshotTimedOut
from tui.agent.rewind.snapshot import MAX_FILE_BYTES, SnapshotResult, take_snapshot
from tui.store import SessionHandle
from tui.store.checkpoints_file import CheckpointKind, CheckpointRecord
from tui.store.task_state import TaskState

logger = logging.getLogger(__name__)

SNAPSHOT_TIMEOUT = 5.0
"""Seconds a snapshot may take before the prompt goes on without a restore point."""


class PromptCheckpoints:
    """The restore points of one open session."""

    def __init__(self, handle: SessionHandle, data_root: Path, workdir: Path, *, warn: Callable[[str], None],
                 timeout: float = SNAPSHOT_TIMEOUT, max_file_bytes: int = MAX_FILE_BYTES,
                 enabled: bool = True) -> None:
        """``warn`` tells the user something once (the session's warnings)."""
        self.handle = handle
        self.repo = ShadowRepo(data_root, workdir)
        self.timeout = timeout
        self.max_file_bytes = max_file_bytes
        self._warn = warn
        self._off_reason: str | None = None if enabled else "off"
        self._message: int | None = None
        self._kind: CheckpointKind = "prompt"
        self._detail = ""
        self._task: TaskState | None = None
        self._attempted = False
        self._taken: CheckpointRecord | None = None
        self._lock: asyncio.Lock | None = None
        self._said_large: set[str] = set()
        self.last_point: CheckpointRecord | None = None
        """The restore point of the last prompt that ended (``None``: it changed nothing, or had none)."""
        self._ending: asyncio.Future[None] | None = None
        """The background snapshot after a change (:meth:`after_change`)."""
        self._again = False
        self._latest: str | None = None
        """The tree the last background snapshot wrote (the prompt's end, unless another change follows)."""

    @property
    def active(self) -> bool:
        """Whether snapshots are being taken in this session."""
        return self._off_reason is None and not self.handle.read_only

    def begin(self, message: int, kind: CheckpointKind = "prompt", detail: str = "") -> None:
        """A prompt (recorded as message number ``message``) starts; its first change will be snapshotted. The
        session's task state as it is now (before the prompt's ``write_todos``) goes with its restore point."""
        self._message, self._kind, self._detail = message, kind, detail
        self._task = self.handle.task_state.state
        self._attempted = False
        self._taken = None

    async def before_change(self) -> None:
        """Called before each call that may change files: snapshot the working directory the first time."""
        if self._message is None or self._attempted or not self.active:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._attempted:
                return
            self._attempted = True
            await self.settle()
            result = await asyncio.to_thread(self.snapshot_now)
            if result is None or self._message is None:
                return
            record = CheckpointRecord(message=self._message, tree=result.tree, workdir=str(self.repo.workdir),
                                      kind=self._kind, time=time.time(), detail=self._detail, task=self._task)
            try:
                await asyncio.to_thread(self._keep, record)
            except (OSError, ShadowRepoError) as error:
                logger.warning("could not record the restore point of message %d: %s", record.message, error)
                return
            self._taken = record

    def _keep(self, record: CheckpointRecord) -> None:
        self.repo.keep(f"{self.handle.id}/{record.message}", record.tree, Deadline(self.timeout))
        self.handle.checkpoints.add(record)
        self.handle.record_restore_point()

    def after_change(self) -> None:
        """A changing call finished: snapshot the tree in the background (while the model reads the result), so
        the prompt's end has its tree at once. One runs at a time; a call finishing meanwhile runs it again."""
        if self._taken is None or not self.active:
            return
        if self._ending is not None and not self._ending.done():
            self._again = True
            return
        self._again = False
        self._latest = None
        self._ending = asyncio.ensure_future(self._snapshot_after())

    async def _snapshot_after(self) -> None:
        while True:
            result = await asyncio.to_thread(self.snapshot_now)
            self._latest = result.tree if result is not None else None
            if not self._again:
                return
            self._again = False

    async def settle(self) -> None:
        """Wait for a background snapshot (before the next snapshot, the prompt's end, a rewind's plan, the close)."""
        ending, self._ending = self._ending, None
        if ending is not None:
            await ending

    async def end(self) -> CheckpointRecord | None:
        """The prompt ended: record the tree it left with its restore point (the snapshot made after its last
        change, else one now), for conflicts to be found against it. Returns the prompt's restore point."""
        taken = self._taken
        self.last_point = taken
        if taken is None or not self.active:
            self._taken = self._message = None
            return taken
        await self.settle()
        after, self._latest = self._latest, None
        self._taken = self._message = None
        if after is None:
            result = await asyncio.to_thread(self.snapshot_now)
            after = result.tree if result is not None else None
        if after is not None:
            try:
                await asyncio.to_thread(self._finish, taken, after)
            except (OSError, ShadowRepoError) as error:
                logger.warning("could not record the end of message %d: %s", taken.message, error)
        return taken

    def _finish(self, record: CheckpointRecord, after: str) -> None:
        self.repo.keep(f"{self.handle.id}/{record.message}-after", after, Deadline(self.timeout))
        self.handle.checkpoints.finish(record.message, after)

    def snapshot_now(self) -> SnapshotResult | None:
        """A snapshot of the working directory now (blocking: run it in a thread), or ``None`` with the reason
        said to the user once."""
        if not self.active:
            return None
        reason = self.repo.unavailable()
        if reason is not None:
            self._turn_off(reason)
            return None
        started = time.monotonic()
        try:
            result = take_snapshot(self.repo, Deadline(self.timeout), max_file_bytes=self.max_file_bytes)
        except SnapshotTimedOut as error:
            self._turn_off(f"the working directory is too big to snapshot in {self.timeout:g} s ({error}): "
                           "prompts in this session have no restore point for /rewind")
            return None
        except (OSError, ShadowRepoError) as error:
            self._turn_off(f"no restore points for /rewind in this session: the snapshot failed ({error})")
            return None
        logger.debug("snapshot %s in %.0f ms", result.tree, (time.monotonic() - started) * 1000)
        new_large = [path for path in result.skipped_large if path not in self._said_large]
        if new_large:
            self._said_large.update(new_large)
            shown = ", ".join(new_large[:3]) + (f" and {len(new_large) - 3} more" if len(new_large) > 3 else "")
            self._warn(f"not in restore points (over {self.max_file_bytes // (1024 * 1024)} MB): {shown}")
        return result

    def _turn_off(self, reason: str) -> None:
        if self._off_reason is None:
            self._off_reason = reason
            logger.warning("%s", reason)
            self._warn(reason)

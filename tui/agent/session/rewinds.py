"""The rewind part of :class:`~tui.agent.session.runtime.SessionRuntime`: its restore points listed, a restore
planned (with its conflicts and diff), the files restored (``/rewind``; ``deep-tui rewind`` works on a closed
session with the same functions)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence

from pydantic_ai.messages import ModelMessage, ModelRequest

from tui.agent.rewind.checkpoints import PromptCheckpoints
from tui.agent.rewind.restore import ConflictChoice, RestorePlan, Rewinder, RewindError, RewindPoint
from tui.agent.rewind.session_rewind import apply_plan, record_restore
from tui.chain.events import ChainEvent, FilesRestored
from tui.chain.manager import ContextManager
from tui.store import SessionHandle


class SessionRewinds:
    """What :class:`~tui.agent.session.runtime.SessionRuntime` sets up for this part."""

    handle: SessionHandle
    checkpoints: PromptCheckpoints
    manager: ContextManager
    messages: list[ModelMessage]
    _busy: bool
    _on_chain_event: Callable[[ChainEvent], None]
    _seal: Callable[[str], None]
    """Closes what a stopped turn left open (:class:`~tui.agent.session.turns.SessionTurns`)."""

    def _rewinder(self) -> Rewinder:
        return Rewinder(self.checkpoints.repo, max_file_bytes=self.checkpoints.max_file_bytes)

    def restore_point_messages(self) -> frozenset[int]:
        """The message numbers that have a restore point (the chat marks those prompts); one small file read."""
        return frozenset(record.message for record in self.handle.checkpoints.read())

    async def rewind_points(self) -> list[RewindPoint]:
        """The session's restore points, newest first, each with the files its prompt changed."""
        await self.checkpoints.settle()
        records = self.handle.checkpoints.read()
        return await asyncio.to_thread(self._rewinder().points, records)

    async def plan_rewind(self, message: int) -> RestorePlan:
        """What restoring the files to before ``message`` would change now, and its conflicts. Raises
        :class:`~tui.agent.rewind.restore.RewindError`."""
        if self._busy:
            raise RewindError("a turn is running; rewind when it has finished")
        await self.checkpoints.settle()
        records = self.handle.checkpoints.read()
        return await asyncio.to_thread(self._rewinder().plan, records, message)

    async def rewind_preview(self, plan: RestorePlan, paths: Sequence[str] = ()) -> str:
        """The diff from the files now to what ``plan`` makes them (of ``paths``, all when empty)."""
        return await asyncio.to_thread(self._rewinder().preview, plan, paths)

    async def rewind_files(self, plan: RestorePlan, choices: Mapping[str, ConflictChoice] | None = None, *,
                           force: bool = False, source_session: str | None = None) -> FilesRestored:
        """Restore ``plan``'s files here (``choices``: keep mine / take the snapshot per conflicting file). The
        rewind is recorded in this session: a note in its history, its own restore point (the undo), the event.
        ``source_session``: the session ``plan`` came from when this one is the fork a rewind just made."""
        if self._busy:
            raise RewindError("a turn is running; rewind when it has finished")
        if self.handle.read_only:
            raise RewindError("this session is open read-only")
        self._busy = True
        try:
            self._seal("the previous turn stopped before an answer came")
            outcome = await asyncio.to_thread(apply_plan, self._rewinder(), plan, self.handle, choices=choices,
                                              force=force, source_session=source_session)
            record_restore(outcome, self.handle, record=self._record_note, emit=self._on_chain_event)
        finally:
            self._busy = False
            self.handle.flush_meta()
        return outcome.event

    def _record_note(self, request: ModelRequest) -> None:
        self.messages.append(request)
        self.manager.record_pending(self.messages)

"""``/compact`` for an open :class:`~tui.agent.session.runtime.SessionRuntime`: run now, asked for the next request,
or planned (what a summary would replace and keep) before it runs."""

from __future__ import annotations

from pydantic_ai.messages import ModelMessage

from tui.chain.events import CompactionFailed, CompactionFinished, UsageEvent
from tui.chain.manager import ContextManager
from tui.chain.summary_plan import SummaryPlan
from tui.store import SessionHandle


class SessionCompaction:
    """The ``/compact`` part of :class:`~tui.agent.session.runtime.SessionRuntime` (which sets up everything named
    here)."""

    handle: SessionHandle
    manager: ContextManager
    messages: list[ModelMessage]
    last_usage: UsageEvent | None
    _busy: bool
    _last_compaction: CompactionFinished | CompactionFailed | None
    """The newest compaction event as recorded (with its cost), for :meth:`compact` to return."""

    async def compact(self, focus: str | None = None) -> CompactionFinished | CompactionFailed:
        """Run tiers 2-3 now on the working context (the /compact command)."""
        if self._busy:
            return CompactionFailed(strategy="summary", trigger="manual", reason="a turn is running",
                                    tokens=self.last_usage.tokens if self.last_usage else 0, focus=focus)
        self._busy = True
        self._last_compaction = None
        try:
            outcome = await self.manager.compact(self.messages, focus=focus)
            self.messages = list(outcome.messages)
            return self._as_recorded(outcome.event)
        finally:
            self._busy = False
            self.handle.flush_meta()

    def _as_recorded(self, event: CompactionFinished | CompactionFailed) -> CompactionFinished | CompactionFailed:
        """``event`` as it went to events.jsonl and the subscribers: priced (what the summarizer cost, what it
        saves per later request) when it was a summary."""
        recorded = self._last_compaction
        if recorded is not None and type(recorded) is type(event) and recorded.timestamp == event.timestamp:
            return recorded
        return event

    def request_compact(self, focus: str | None = None) -> None:
        self.manager.request_compact(focus)

    def compaction_plan(self) -> SummaryPlan:
        """What ``/compact`` would summarize and keep verbatim, before it runs."""
        return self.manager.plan_compaction(self.messages)

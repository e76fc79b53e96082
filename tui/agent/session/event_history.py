"""A session's chain events, on the runtime's side (the app's side is ``tui/app/chat/main_screen.py``):
those events.jsonl held when the session opened, then every new one, each recorded (events.jsonl; usage and
compactions in session.json) and handed to the subscribers."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from tui.agent.runtime_api import EvictedOutput, InheritedEvent
from tui.agent.session.inherited_events import inherited_events
from tui.chain.events import ChainEvent, CompactionFinished, EvictedEvent, UsageEvent, event_from_record
from tui.store import SessionHandle

logger = logging.getLogger(__name__)

Listener = Callable[[ChainEvent], None]


class EventHistory:
    """The event history of one open session and its subscribers."""

    def __init__(self, handle: SessionHandle, sessions_dir: Path | None = None) -> None:
        """``sessions_dir``: where a fork's ancestors are, to list what it inherited (none without it)."""
        self._handle = handle
        self._listeners: list[Listener] = []
        self._write_failed = False
        self._events = [event for event in map(event_from_record, handle.events.read()) if event is not None]
        """events.jsonl as it was when the session opened, then every event since: read once, here."""
        self.inherited: list[InheritedEvent] = inherited_events(handle, sessions_dir) if sessions_dir else []
        """A fork's ancestors' events from before the fork point (read once, here)."""

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every later event (chain and provider events); returns the unsubscribe."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def add(self, event: ChainEvent) -> None:
        """Record ``event`` (unless the session is read-only), keep it, and tell the subscribers."""
        if not self._handle.read_only:
            self._record(event)
        self._events.append(event)
        self.notify(event)

    def notify(self, event: ChainEvent) -> None:
        """Tell the subscribers without recording (a provider's wait or retry)."""
        for listener in list(self._listeners):
            listener(event)

    def past(self) -> list[ChainEvent]:
        return list(self._events)

    def evicted_outputs(self) -> list[EvictedOutput]:
        """Every output saved to disk, from the events alone (no file system call: the panel refreshes on the UI
        thread); a file deleted since is still listed and says so when opened. A fork's inherited ones too."""
        own = [(event, "") for event in self._events]
        inherited = [(item.event, item.session) for item in self.inherited]
        return [EvictedOutput(Path(event.path), event.tool_name, event.size_bytes, event.tokens, event.timestamp,
                              tool_call_id=event.tool_call_id, args=event.args, inherited_from=session)
                for event, session in inherited + own if isinstance(event, EvictedEvent) and not event.error]

    def _record(self, event: ChainEvent) -> None:
        """events.jsonl and session.json are a log and a summary: a failed write (a full disk) is logged once
        and never stops the turn (messages.json, the history itself, reports its own failures)."""
        handle = self._handle
        try:
            handle.events.append(event.to_record())
            if isinstance(event, UsageEvent):
                handle.record_usage(event.tokens, event.window, event.window_source)
            elif isinstance(event, CompactionFinished):
                handle.record_compression()
        except OSError as error:
            if not self._write_failed:
                logger.warning("could not record a chain event in %s: %s", handle.events.path, error)
            self._write_failed = True
        else:
            self._write_failed = False

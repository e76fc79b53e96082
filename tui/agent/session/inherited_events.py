"""What a fork inherited from the sessions it was forked from: their chain events up to the fork point.

A fork copies its parent's messages ``[0:index]`` but starts an empty events.jsonl, so its log and its evicted
outputs browser had nothing to show although its tool blocks open the saved outputs they point to. The events
stay in the ancestor's own events.jsonl (one source of truth); they are read from there when the fork opens:

- an eviction whose saved file the fork's own messages point to (its result was copied into the fork);
- a summary recorded at an index the fork inherited;
- any other event (usage, a failed compaction, a memory change) from before the first message the fork did not
  inherit (its time in the ancestor's messages.json; the fork's creation when it took every message).

A fork of a fork inherits through each ancestor in turn (never more messages than each link took). Every
ancestor's files are opened as the store opens them (no link followed); one that cannot be read adds nothing
and is logged.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from tui.agent.runtime_api import InheritedEvent
from tui.base.nofollow import read_text
from tui.chain.events import ChainEvent, CompactionFinished, EvictedEvent, event_from_record
from tui.store import SessionHandle
from tui.store.events_file import EventLog
from tui.store.meta import read_meta
from tui.store.session_ids import SESSION_ID_PATTERN
from tui.store.store_errors import StoreError

logger = logging.getLogger(__name__)

MAX_ANCESTORS = 16
"""Forks of forks followed at most this far up (a loop in hand-edited session.json files ends there too)."""


def inherited_events(handle: SessionHandle, sessions_dir: Path) -> list[InheritedEvent]:
    """The events ``handle``'s session inherited from its ancestors, oldest ancestor first, each in its order."""
    parent = handle.meta.parent
    if parent is None:
        return []
    own_text = _text(handle.messages.path)
    inherited: list[list[InheritedEvent]] = []
    seen = {handle.id}
    upto = parent.index
    child_created = handle.meta.created
    while parent is not None and len(seen) <= MAX_ANCESTORS:
        session = parent.session
        if not SESSION_ID_PATTERN.match(session) or session in seen:
            break
        seen.add(session)
        directory = sessions_dir / session
        upto = parent.index if upto is None else upto if parent.index is None else min(upto, parent.index)
        cut = _cut_time(directory, upto, child_created)
        inherited.append([InheritedEvent(event, session) for event in _events(directory)
                          if _inherited(event, upto, cut, own_text)])
        try:
            meta = read_meta(directory / "session.json", session)
        except (OSError, ValueError) as error:
            logger.info("the events of %s's ancestors are not shown: %s", session, error)
            break
        parent, child_created = meta.parent, meta.created
    return [item for events in reversed(inherited) for item in events]


def _inherited(event: ChainEvent, upto: int | None, cut: float, own_text: str) -> bool:
    if isinstance(event, EvictedEvent):
        return bool(event.path) and json.dumps(event.path, ensure_ascii=False)[1:-1] in own_text
    if isinstance(event, CompactionFinished) and event.summary_index is not None:
        return upto is None or event.summary_index < upto
    return event.timestamp < cut


def _events(directory: Path) -> list[ChainEvent]:
    try:
        records = EventLog(directory / "events.jsonl").read()
    except OSError as error:
        logger.info("an ancestor's events are not shown: %s", error)
        return []
    return [event for event in map(event_from_record, records) if event is not None]


def _cut_time(directory: Path, upto: int | None, child_created: float) -> float:
    """When the ancestor recorded the first message the fork did not take (the child's creation otherwise)."""
    if upto is None:
        return child_created
    from tui.store.messages_file import MessagesFile

    try:
        history = MessagesFile(directory / "messages.json")
        if upto >= history.count():
            return child_created
        [message] = history.load_range(upto, upto + 1)
    except (OSError, ValueError, StoreError) as error:
        logger.info("an ancestor's fork point has no time (%s); its events up to the fork are shown", error)
        return child_created
    stamp = getattr(message, "timestamp", None)
    return stamp.timestamp() if stamp is not None else child_created


def _text(path: Path) -> str:
    try:
        return read_text(path, errors="replace")
    except OSError as error:
        logger.info("cannot read %s for the outputs it inherited: %s", path, error)
        return ""

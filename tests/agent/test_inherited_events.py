"""A fork's inherited events come from its ancestors' own files, and a hand-edited parent reference (a path, a
loop) leads nowhere: nothing outside the sessions directory is read, and the walk ends."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from tui.agent.session.inherited_events import inherited_events
from tui.base.paths import DataDir
from tui.chain.events import UsageEvent
from tui.store.session_store import SessionStore


def _store(tmp_path: Path) -> tuple[SessionStore, DataDir]:
    data = DataDir(tmp_path / "data")
    return SessionStore(data), data


def _session(store: SessionStore, text: str) -> str:
    handle = store.create(model="offline")
    handle.append_messages([ModelRequest(parts=[UserPromptPart(text)]), ModelResponse(parts=[TextPart("ok")])])
    handle.events.append(UsageEvent(timestamp=1.0, tokens=123, window=1000, window_source="flag").to_record())
    handle.close()
    return handle.id


def _set_parent(data: DataDir, session_id: str, parent: str, index: int | None = 2) -> None:
    path = data.session_dir(session_id) / "session.json"
    meta = json.loads(path.read_text())
    meta["parent"] = {"session": parent, "index": index}
    path.write_text(json.dumps(meta))


def test_a_fork_inherits_its_parents_events_before_the_fork_point(tmp_path: Path) -> None:
    store, data = _store(tmp_path)
    parent = _session(store, "the parent")
    fork = store.fork(parent)
    try:
        [item] = inherited_events(fork, data.sessions_dir)
        assert item.session == parent and isinstance(item.event, UsageEvent) and item.event.tokens == 123
    finally:
        fork.close()


def test_a_parent_reference_that_is_a_path_or_a_loop_reads_nothing_outside(tmp_path: Path) -> None:
    store, data = _store(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "events.jsonl").write_text(json.dumps(UsageEvent(timestamp=1.0, tokens=999, window=1000,
                                                                window_source="flag").to_record()) + "\n")
    first = _session(store, "first")
    second = _session(store, "second")
    _set_parent(data, first, "../../outside")
    handle = store.open(first, read_only=True)
    try:
        assert inherited_events(handle, data.sessions_dir) == [], "a path is not a session id"
    finally:
        handle.close()
    _set_parent(data, first, second)
    _set_parent(data, second, first)  # a loop (hand-edited)
    handle = store.open(first, read_only=True)
    try:
        inherited = inherited_events(handle, data.sessions_dir)
    finally:
        handle.close()
    assert [item.session for item in inherited] == [second], "each ancestor once; the loop ends"
    assert all(item.event.tokens == 123 for item in inherited if isinstance(item.event, UsageEvent))

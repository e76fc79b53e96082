"""Forks of one session are told apart by their titles: ``(fork)``, then ``(fork 2)``, ``(fork 3)`` …"""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from tui.base.paths import DataDir
from tui.store.session_store import SessionStore


def test_each_fork_of_a_session_gets_its_own_title(tmp_path: Path) -> None:
    store = SessionStore(DataDir(tmp_path / "data"))
    parent = store.create(model="offline", title="explain the project")
    parent.append_messages([ModelRequest(parts=[UserPromptPart("explain the project")]),
                            ModelResponse(parts=[TextPart("it is a TUI")])])
    parent.close()
    titles = []
    for _ in range(3):
        fork = store.fork(parent.id, upto=2)
        titles.append(fork.meta.title)
        fork.close()
    assert titles == ["explain the project (fork)", "explain the project (fork 2)", "explain the project (fork 3)"]

    other = store.create(model="offline", title="explain the project")  # another session of the same title
    other.close()
    first_of_other = store.fork(other.id)
    assert first_of_other.meta.title == "explain the project (fork)", "numbered per parent"
    first_of_other.close()
    on_disk = {meta.title for meta in store.list_sessions() if meta.parent and meta.parent.session == parent.id}
    assert on_disk == set(titles)

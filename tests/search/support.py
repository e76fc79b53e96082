"""Sessions on disk for the search tests: real stores, real messages.json files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from tui.base.paths import DataDir
from tui.store.search.searcher import HistorySearch
from tui.store.session_store import SessionStore


def exchange(prompt: str, answer: str) -> list[ModelMessage]:
    return [ModelRequest(parts=[UserPromptPart(prompt)]), ModelResponse(parts=[TextPart(answer)])]


def tool_round(tool: str, args: dict[str, object], output: str, call_id: str, *,
               metadata: dict[str, object] | None = None) -> list[ModelMessage]:
    return [ModelResponse(parts=[ToolCallPart(tool, args, call_id)]),
            ModelRequest(parts=[ToolReturnPart(tool, output, call_id, metadata=metadata)])]


def make_session(data: DataDir, messages: Sequence[ModelMessage], *, search: HistorySearch | None = None,
                 title: str | None = None) -> str:
    """A closed session holding ``messages``; recorded through ``search`` as the runtime does, if given."""
    store = SessionStore(data)
    handle = store.create(model="offline")
    first = handle.append_messages(list(messages))
    if title:
        handle.rename(title)
    if search is not None:
        search.record(handle.id, first, list(messages), title=handle.meta.title, parent=handle.meta.parent)
    handle.close()
    return handle.id


def fork_session(data: DataDir, parent: str, upto: int, more: Sequence[ModelMessage] = ()) -> str:
    handle = SessionStore(data).fork(parent, upto=upto)
    if more:
        handle.append_messages(list(more))
    handle.close()
    return handle.id


def data_dir(tmp_path: Path) -> DataDir:
    return DataDir(tmp_path / "data")

"""A fork's row in ``deep-tui sessions`` and in the picker shows its tokens (a whole fork's inherited from its
parent, a fork at an earlier message counted from its own messages), not ``–``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.app.app_support import make_factory
from tui.agent.session.factory import SessionRequest
from tui.app.formatting import human_tokens
from tui.app.screens.session_rows import session_row
from tui.cli.session_commands import _list


async def _parent_with_usage(tmp_path: Path):  # type: ignore[no-untyped-def]
    factory = make_factory(tmp_path)
    runtime = factory.open_request_sync(SessionRequest())
    for prompt in ("ls", "read notes.txt"):
        async for _ in runtime.run_turn(prompt):
            pass
    parent_id = runtime.info.session_id
    parent_tokens = runtime.handle.meta.last_usage.tokens
    await runtime.aclose()
    return factory, parent_id, parent_tokens


async def test_forks_list_their_tokens_in_sessions_and_the_picker(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    factory, parent_id, parent_tokens = await _parent_with_usage(tmp_path)
    whole = await factory.fork_session(parent_id)
    whole_id = whole.info.session_id
    await whole.aclose()
    partial = await factory.fork_session(parent_id, upto=2)  # the first prompt and its answer
    partial_id = partial.info.session_id
    await partial.aclose()

    capsys.readouterr()
    assert _list(factory.store, as_json=True) == 0
    rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows[whole_id]["tokens"] == parent_tokens, "a whole fork holds what its parent held"
    assert isinstance(rows[partial_id]["tokens"], int) and 0 < rows[partial_id]["tokens"] < parent_tokens

    assert _list(factory.store, as_json=False) == 0
    table = capsys.readouterr().out.splitlines()
    for session_id in (whole_id, partial_id):
        [line] = [line for line in table if line.startswith(session_id)]
        assert str(rows[session_id]["tokens"]) in line.split()

    metas = {meta.id: meta for meta in factory.store.list_sessions()}
    for session_id in (whole_id, partial_id):
        cells = str(session_row(metas[session_id], 1, current=False, now=metas[session_id].updated)).split()
        assert cells[3] == human_tokens(rows[session_id]["tokens"]), cells  # ● / age (2 words) / msgs / tokens

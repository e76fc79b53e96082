"""Issue 22.11: one message numbering everywhere — "message 1" is a session's first message in ``deep-tui search``
(text and ``--json``), the picker's hit line, and the agent's history tools (which read back what they name)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.search.support import exchange, make_session
from tests.search.test_agent_history import run_tools
from tests.search.test_search_cli import run
from tui.app.screens.session_search import snippet_line
from tui.base.paths import DataDir
from tui.store.search.searcher import HistorySearch
from tui.text.wording import message_index, message_number


def test_the_same_message_has_the_same_number_in_the_shell_the_picker_and_the_agents_tools(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = DataDir(tmp_path / "data")
    session = make_session(data, [*exchange("hello", "hi"), *exchange("where is the cobalt key?", "in vault/cobalt")])
    wanted = 3  # the second prompt: the session's third message

    code, out, _ = run(capsys, "search", "--data-dir", str(data.root), "cobalt key")
    assert code == 0 and f"{session}  message {wanted} " in out
    code, out, _ = run(capsys, "search", "--data-dir", str(data.root), "--json", "cobalt key")
    assert code == 0 and json.loads(out)[0]["message"] == wanted

    hit = HistorySearch(data).search("cobalt key", session_id=session).hits[0]
    assert f"message {wanted} · user" in str(snippet_line(hit, 0))

    other = make_session(data, exchange("unrelated", "ok"))
    found, read = run_tools(tmp_path, other, [
        ("search_conversation_history", {"query": "cobalt key", "scope": "all"}),
        ("read_conversation_message", {"message": wanted, "session": session[:8]}),
    ])
    assert f"[1] message {wanted} · user" in found
    [suggested] = re.findall(r"read_conversation_message\(message=(\d+)", found)
    assert int(suggested) == wanted
    assert read.startswith(f"message {wanted} of session {session[:8]}") and "where is the cobalt key?" in read


def test_the_first_and_last_numbers_and_the_ones_outside() -> None:
    assert message_number(0) == 1 and message_index(1) == 0


def test_reading_message_zero_or_past_the_end_is_refused_with_the_range(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    session = make_session(data, exchange("hello", "hi"))
    first, zero, past = run_tools(tmp_path, session, [
        ("read_conversation_message", {"message": 1}),
        ("read_conversation_message", {"message": 0}),
        ("read_conversation_message", {"message": 3}),
    ])
    assert first.startswith(f"message 1 of session {session[:8]}") and "hello" in first
    assert zero == f'{{"error":"session {session[:8]} has 2 messages (1 to 2); there is no message 0"}}'
    assert past == f'{{"error":"session {session[:8]} has 2 messages (1 to 2); there is no message 3"}}'

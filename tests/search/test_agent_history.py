"""The agent's recovery path: search the recorded history (this session or all), then read a message exactly."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.search.support import exchange, fork_session, make_session, tool_round
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.agent.session.toolsets import build_agent_parts
from tui.agent.tools.memory import MemoryFile
from tui.agent.turn_events import ToolCallFinished, TurnFinished
from tui.base.config import ContextSettings, Settings
from tui.base.paths import DataDir
from tui.chain.summary_message import make_summary_message, summary_info
from tui.store.search.database import read_rows
from tui.store.search.searcher import HistorySearch


class CallThenAnswer:
    """Calls the given tools one after the other, then answers with every tool result it got."""

    def __init__(self, calls: list[tuple[str, dict[str, object]]]) -> None:
        self.calls = calls

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        results = [part.model_response_str() if isinstance(part, ToolReturnPart) else "REFUSED: " + part.model_response()
                   for message in messages for part in message.parts
                   if isinstance(part, (ToolReturnPart, RetryPromptPart))]
        if len(results) < len(self.calls):
            tool, args = self.calls[len(results)]
            return ModelResponse(parts=[ToolCallPart(tool, args, f"call-{len(results)}")])
        return ModelResponse(parts=[TextPart("\n=====\n".join(results))])


def run_tools(tmp_path: Path, session_id: str, calls: list[tuple[str, dict[str, object]]]) -> list[str]:
    data = DataDir(tmp_path / "data")
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    parts = build_agent_parts(workdir=work, data_dir=data, memory=MemoryFile(data.memory_file()),
                              search=HistorySearch(data), session_id=session_id)
    agent = Agent(FunctionModel(CallThenAnswer(calls)), toolsets=parts.toolsets, capabilities=parts.capabilities)
    return agent.run_sync("go").output.split("\n=====\n")


def test_search_then_read_back_the_exact_message_a_summary_replaced(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    exact = "Use exactly: pg_dump --format=custom --jobs=4 -f /backups/prod-2025-11-20.dump"
    session = make_session(data, [
        *exchange("how do we back up prod?", exact),
        *exchange("and restore?", "pg_restore with the same --jobs"),
        make_summary_message("## Session intent\nBackups were discussed.", strategy="summary", kept_from=4,
                             replaced=4),
    ])
    found, read = run_tools(tmp_path, session, [
        ("search_conversation_history", {"query": "pg_dump", "scope": "session"}),
        ("read_conversation_message", {"message": 2}),
    ])
    assert found.startswith("1 hit for 'pg_dump' in this session's whole history")
    assert "[1] message 2 · assistant · this session" in found and exact in found  # numbered from 1, as everywhere
    assert "read_conversation_message(message=2)" in found
    assert read.startswith(f"message 2 of session {session[:8]}") and exact in read


def test_every_session_is_searched_with_scope_all_and_forks_are_named(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    other = make_session(data, exchange("the staging cluster is called heron", "noted"), title="Cluster names")
    fork = fork_session(data, other, 2, exchange("fork talk", "ok"))
    current = make_session(data, exchange("something unrelated", "ok"))
    in_session, everywhere, read = run_tools(tmp_path, current, [
        ("search_conversation_history", {"query": "heron"}),
        ("search_conversation_history", {"query": "heron", "scope": "all"}),
        ("read_conversation_message", {"message": 1, "session": other[:6]}),
    ])
    assert in_session == "no matches for 'heron' in this session's whole history"
    assert f'[1] message 1 · user · session {other[:8]} "Cluster names"' in everywhere
    assert f"(also in fork {fork[:8]}, copied with the parent's history)" in everywhere
    assert 'read_conversation_message(message=1, session="' + other[:8] + '")' in everywhere
    assert "the staging cluster is called heron" in read
    [from_fork] = run_tools(tmp_path, fork, [("search_conversation_history", {"query": "heron"})])
    assert f"message 1 · user · this session (copied from its parent {other[:8]})" in from_fork


def test_bad_requests_are_answered_not_raised(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    session = make_session(data, exchange("hello", "hi"))
    short, empty, missing, unknown = run_tools(tmp_path, session, [
        ("search_conversation_history", {"query": "ab"}),
        ("search_conversation_history", {"query": "  "}),
        ("read_conversation_message", {"message": 7}),
        ("read_conversation_message", {"message": 1, "session": "ffffff"}),
    ])
    assert short == '{"error":"a search needs a word of at least 3 characters (or a Chinese, Japanese or Korean word)"}'  # a failed tool result
    assert empty == '{"error":"the query is empty"}'
    assert missing == f'{{"error":"session {session[:8]} has 2 messages (1 to 2); there is no message 7"}}'
    assert unknown.startswith('{"error":"no session matches \'ffffff\'')


def test_long_messages_are_read_in_pages(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    body = "".join(f"row {number:04d}\n" for number in range(2_000))
    session = make_session(data, tool_round("read_file", {"path": "big.txt"}, body, "call-1"))
    first, second = run_tools(tmp_path, session, [
        ("read_conversation_message", {"message": 2, "limit": 5_000}),
        ("read_conversation_message", {"message": 2, "offset": 5_000, "limit": 5_000}),
    ])
    assert "showing 0-5,000; continue with offset=5000" in first and "row 0000" in first
    assert "showing 5,000-10,000" in second and "row 0600" in second and "row 0000" not in second


async def test_a_live_session_is_indexed_as_it_records_and_recall_finds_summarized_and_saved_text(
        tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for number in range(6):
        (work / f"f{number}.txt").write_text("".join(f"file {number} row {r} marker{number}x\n" for r in range(150)))
    settings = Settings(context=ContextSettings(window=6_000, large_result_tokens=400, compaction_threshold=0.5,
                                                summarize_threshold=0.6, protect_recent_tokens=300,
                                                keep_recent_fraction=0.1, min_savings_tokens=50))
    factory = RuntimeFactory.create(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                                    model_flag="offline")
    runtime = await factory.open_request(SessionRequest())
    try:
        for number in range(6):
            events = [event async for event in runtime.run_turn(f"read f{number}.txt")]
            assert isinstance(events[-1], TurnFinished)
        assert summary_info(runtime.messages[0]) is not None  # the early turns are summarized away
        assert factory.search.wait_for_records(timeout=10)  # indexed by the writer thread as the turns recorded
        rows = read_rows(factory.search.index.connection())
        assert rows[runtime.info.session_id].indexed == runtime.history_count()  # recorded and indexed live
        events = [event async for event in runtime.run_turn("recall row 149 marker0x")]
        [result] = [event for event in events if isinstance(event, ToolCallFinished)]
        assert result.tool_name == "search_conversation_history" and not result.is_error
        assert "hits for 'row 149 marker0x' in this session's whole history" in result.preview
        assert "[1] message 3 · saved output (read_file) · this session" in result.preview
        assert "recall row 149" not in result.preview  # the prompt that asked is not a hit
        assert "file 0 row 149 marker0x" in result.preview
    finally:
        await runtime.aclose()


def test_a_hit_shows_five_lines_of_context_each_side(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    body = "\n".join(f"line {n}" if n != 10 else "line 10 NEEDLE" for n in range(1, 21))
    session = make_session(data, tool_round("read_file", {"path": "f.txt"}, body, "call-1"))
    [found] = run_tools(tmp_path, session, [("search_conversation_history", {"query": "needle"})])
    shown = [line for line in found.splitlines() if line.startswith("line ")]
    assert shown == [f"line {n}" if n != 10 else "line 10 NEEDLE" for n in range(5, 16)]


def test_a_locked_index_still_answers_the_agent_by_a_scan_and_says_so(tmp_path: Path) -> None:
    import sqlite3

    data = DataDir(tmp_path / "data")
    session = make_session(data, exchange("we agreed on the sapphire release name", "ok"))
    builder = HistorySearch(data)
    builder.refresh()
    builder.index.close()
    holder = sqlite3.connect(data.root / "index.sqlite", isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")  # another deep-tui holds the index
    try:
        [found] = run_tools(tmp_path, session, [("search_conversation_history",
                                                 {"query": "sapphire", "scope": "all"})])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert found.startswith("(note: ") and "locked by another deep-tui" in found, found
    assert "we agreed on the sapphire release name" in found, "the turn still gets its hits"

"""The offline stand-in: each command calls the real tool, replies stream, anything else is honest."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, PartDeltaEvent, TextPartDelta, ToolCallPart, UserPromptPart

from tui.agent.models.offline import build_offline_model, parse_command
from tui.agent.session.toolsets import build_agent_parts
from tui.agent.tools.memory import MemoryFile
from tui.base.paths import DataDir
from tui.store.search.searcher import HistorySearch
from tui.store.session_store import SessionStore
from tui.text.attachment_text import attachment_item


@pytest.fixture
def agent_env(tmp_path: Path) -> tuple[Agent[None, str], Path, MemoryFile]:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("alpha\nbeta gamma\n")
    data = DataDir(tmp_path / "data")
    memory = MemoryFile(data.memory_file())
    handle = SessionStore(data).create(model="offline")  # a recorded session for "recall" to search
    handle.append_messages([ModelRequest(parts=[UserPromptPart("we chose PostgreSQL 16 last week")])])
    handle.close()
    parts = build_agent_parts(workdir=work, data_dir=data, memory=memory, search=HistorySearch(data),
                              session_id=handle.id, writes="always")  # approval: test_write_approval.py
    return Agent(build_offline_model(), toolsets=parts.toolsets, capabilities=parts.capabilities), work, memory


def tool_calls(result: object) -> list[ToolCallPart]:
    return [p for m in result.all_messages() for p in m.parts if isinstance(p, ToolCallPart)]  # type: ignore[attr-defined]


def test_read_ls_grep_call_the_real_tools(agent_env: tuple[Agent[None, str], Path, MemoryFile]) -> None:
    agent, _, _ = agent_env
    read = agent.run_sync("read notes.txt")
    assert [c.tool_name for c in tool_calls(read)] == ["read_file"] and "beta gamma" in read.output
    listing = agent.run_sync("ls")
    assert tool_calls(listing)[0].args_as_dict() == {"path": "."} and "notes.txt" in listing.output
    found = agent.run_sync("grep gam+a notes.txt")
    assert tool_calls(found)[0].args_as_dict() == {"pattern": "gam+a", "path": "notes.txt"}
    assert "notes.txt:2: beta gamma" in found.output


def test_a_prompt_with_an_attached_file_reads_as_what_was_typed(
        agent_env: tuple[Agent[None, str], Path, MemoryFile]) -> None:
    """``read @notes.txt`` with the file attached: the command is the typed text, the ``@`` is not in the path."""
    agent, _, _ = agent_env
    attached = attachment_item("notes.txt", 17, "text", "alpha\nbeta gamma")
    read = agent.run_sync(["read @notes.txt", attached])
    assert [c.args_as_dict() for c in tool_calls(read)] == [{"path": "notes.txt"}]
    assert "beta gamma" in read.output
    unknown = agent.run_sync("what is the capital of France?")
    assert "not an LLM" in unknown.output and "no LLM is configured" not in unknown.output


def test_write_remember_recall(agent_env: tuple[Agent[None, str], Path, MemoryFile]) -> None:
    agent, work, memory = agent_env
    agent.run_sync("write out/plan.md\n# Plan\nstep one")
    assert (work / "out/plan.md").read_text() == "# Plan\nstep one\n"
    agent.run_sync("remember deploys happen on Tuesdays")
    assert "deploys happen on Tuesdays" in memory.read()
    recalled = agent.run_sync("recall postgresql")
    assert tool_calls(recalled)[0].tool_name == "search_conversation_history"
    assert "PostgreSQL 16" in recalled.output


def test_refusal_is_reported(agent_env: tuple[Agent[None, str], Path, MemoryFile]) -> None:
    agent, _, _ = agent_env
    reply = agent.run_sync("read ../../etc/passwd").output
    assert "outside the working directory" in reply and "root:" not in reply


def test_unknown_prompt_gets_an_honest_offline_reply(agent_env: tuple[Agent[None, str], Path, MemoryFile]) -> None:
    agent, _, _ = agent_env
    reply = agent.run_sync("please refactor the parser").output
    assert "offline" in reply and "holds 1 message " in reply and "help" in reply
    assert "read PATH" in agent.run_sync("help").output


async def test_replies_stream_in_several_deltas(agent_env: tuple[Agent[None, str], Path, MemoryFile]) -> None:
    agent, _, _ = agent_env
    deltas: list[str] = []
    async with agent.run_stream_events("read notes.txt") as stream:
        async for event in stream:
            if isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                deltas.append(event.delta.content_delta)
    assert len(deltas) >= 2 and "beta gamma" in "".join(deltas)


def test_parse_command_is_deterministic() -> None:
    assert parse_command("write a.txt inline body") is not None
    assert parse_command("write a.txt inline body").args == {"path": "a.txt", "content": "inline body\n"}  # type: ignore[union-attr]
    assert parse_command("tell me a joke") is None
    assert parse_command("grep 'two words' src").args == {"pattern": "two words", "path": "src"}  # type: ignore[union-attr]

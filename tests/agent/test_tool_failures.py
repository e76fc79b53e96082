"""Refusals and I/O failures are answers the model sees, never crashes or aborted turns."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tui.agent.session.toolsets import build_agent_parts
from tui.agent.tools.file_tools import LINE_CHAR_LIMIT
from tui.agent.tools.memory import MemoryFile
from tui.base.paths import DataDir


class ScriptedCalls:
    """Makes each scripted tool call in turn (one per response), then answers with every result."""

    def __init__(self, calls: list[tuple[str, dict[str, object]]]) -> None:
        self.calls = calls

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        made = sum(1 for message in messages if isinstance(message, ModelResponse))
        if made < len(self.calls):
            tool, args = self.calls[made]
            return ModelResponse(parts=[ToolCallPart(tool, args, f"call-{made}")])
        return ModelResponse(parts=[TextPart("finished")])


@pytest.fixture
def work(tmp_path: Path) -> Path:
    directory = tmp_path / "work"
    directory.mkdir()
    return directory


def run_calls(work: Path, calls: list[tuple[str, dict[str, object]]]) -> list[ToolReturnPart]:
    data = DataDir(work.parent / "data")
    parts = build_agent_parts(workdir=work, data_dir=data, memory=MemoryFile(data.memory_file()), writes="always")
    agent = Agent(FunctionModel(ScriptedCalls(calls)), toolsets=parts.toolsets, capabilities=parts.capabilities)
    result = agent.run_sync("go")
    assert result.output == "finished"
    return [part for message in result.all_messages() for part in message.parts if isinstance(part, ToolReturnPart)]


def test_every_tool_refuses_paths_outside_and_the_turn_still_finishes(work: Path) -> None:
    outside = str(work.parent / "outside")
    returns = run_calls(work, [
        ("read_file", {"path": "/etc/passwd"}),
        ("write_file", {"path": "../escape.txt", "content": "x"}),
        ("edit_file", {"path": "../escape.txt", "old_text": "a", "new_text": "b"}),
        ("ls", {"path": outside}),
        ("glob", {"pattern": "*", "path": outside}),
        ("grep", {"pattern": "root", "path": "/etc"}),
        ("glob", {"pattern": "../*"}),
    ])
    assert len(returns) == 7
    assert all(part.outcome == "failed" for part in returns), [part.outcome for part in returns]
    assert all("outside the working directory" in str(part.content) for part in returns[:6])
    assert "must be relative" in str(returns[6].content)
    assert not (work.parent / "escape.txt").exists()


def test_os_errors_become_tool_errors(work: Path) -> None:
    (work / "ok.txt").write_text("plain\n")
    (work / "latin1.txt").write_bytes(b"caf\xe9\n")
    returns = run_calls(work, [
        ("write_file", {"path": "ok.txt/child", "content": "hello"}),
        ("edit_file", {"path": "latin1.txt", "old_text": "caf", "new_text": "tea"}),
        ("read_file", {"path": "missing.txt"}),
        ("write_file", {"path": ".", "content": "x"}),
    ])
    assert [part.outcome for part in returns] == ["failed"] * 4
    assert "writing ok.txt/child failed" in str(returns[0].content)
    assert "not valid UTF-8" in str(returns[1].content)
    assert "No such file" in str(returns[2].content)
    assert "is a directory" in str(returns[3].content)
    assert (work / "latin1.txt").read_bytes() == b"caf\xe9\n"


def test_search_never_follows_symlinks_out_of_the_workdir(work: Path) -> None:
    secret_dir = work.parent / "secrets"
    secret_dir.mkdir()
    (secret_dir / "key.txt").write_text("TOKEN=hunter2\n")
    os.symlink(secret_dir, work / "linked_dir")
    os.symlink(secret_dir / "key.txt", work / "linked_file.txt")
    os.symlink(work, work / "loop")  # a loop back into the tree must not hang the walk
    (work / "mine.txt").write_text("TOKEN=mine\n")
    grep, glob = run_calls(work, [("grep", {"pattern": "TOKEN"}), ("glob", {"pattern": "**/*.txt"})])
    assert "hunter2" not in str(grep.content) and "mine.txt:1: TOKEN=mine" in str(grep.content)
    assert "key.txt" not in str(glob.content) and "linked_file" not in str(glob.content)


def test_grep_skips_a_fifo_instead_of_hanging(work: Path) -> None:
    os.mkfifo(work / "pipe")
    (work / "text.txt").write_text("needle\n")
    (grep,) = run_calls(work, [("grep", {"pattern": "needle"})])
    assert str(grep.content).strip() == "text.txt:1: needle"


def test_read_file_caps_one_enormous_line(work: Path) -> None:
    (work / "minified.js").write_text("x" * 3_000_000 + "\nsecond line\n")
    (read,) = run_calls(work, [("read_file", {"path": "minified.js"})])
    text = str(read.content)
    assert len(text) < LINE_CHAR_LIMIT + 500
    assert "line cut: 3,000,000 characters" in text and "second line" in text


def test_memory_that_is_a_directory_is_reported_not_raised(work: Path) -> None:
    data = DataDir(work.parent / "data")
    data.memory_file().mkdir(parents=True)
    parts = build_agent_parts(workdir=work, data_dir=data, memory=MemoryFile(data.memory_file()), writes="always")
    calls = [("read_memory", {}), ("write_memory", {"content": "fact"})]
    agent = Agent(FunctionModel(ScriptedCalls(calls)), toolsets=parts.toolsets, capabilities=parts.capabilities)
    returns = [p for m in agent.run_sync("go").all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]
    assert [p.outcome for p in returns] == ["failed", "failed"]
    assert "reading MEMORY.md failed" in str(returns[0].content)

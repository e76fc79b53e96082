"""The agent's tools through a real Agent run (FunctionModel drives the calls)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tui.agent.session.toolsets import build_agent_parts
from tui.agent.tools.memory import MemoryFile, memory_instructions
from tui.base.paths import DataDir
from tui.store.search.searcher import HistorySearch


class ToolDriver:
    """Makes one tool call, then ends the run with the tool's answer as the output."""

    def __init__(self, tool: str, args: dict[str, object]) -> None:
        self.tool, self.args = tool, args
        self.instructions: list[str | None] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.instructions.append(info.instructions)
        last = messages[-1]
        for part in last.parts:
            if isinstance(part, ToolReturnPart):
                return ModelResponse(parts=[TextPart(part.model_response_str())])
            if isinstance(part, RetryPromptPart):
                return ModelResponse(parts=[TextPart("REFUSED: " + part.model_response())])
        return ModelResponse(parts=[ToolCallPart(self.tool, self.args, "call-1")])


@pytest.fixture
def env(tmp_path: Path) -> tuple[Path, DataDir, MemoryFile]:
    work = tmp_path / "work"
    work.mkdir()
    data = DataDir(tmp_path / "data")
    return work, data, MemoryFile(data.memory_file())


def call(env: tuple[Path, DataDir, MemoryFile], tool: str, **args: object) -> str:
    work, data, memory = env
    parts = build_agent_parts(workdir=work, data_dir=data, memory=memory, search=HistorySearch(data),
                              session_id="000000000000", writes="always")  # approval: test_write_approval.py
    driver = ToolDriver(tool, args)
    agent = Agent(FunctionModel(driver), toolsets=parts.toolsets, capabilities=parts.capabilities, instructions=[memory_instructions(memory)])
    return agent.run_sync("go").output


def test_read_file_pages_with_offset_and_limit(env: tuple[Path, DataDir, MemoryFile]) -> None:
    work = env[0]
    (work / "big.txt").write_text("".join(f"row {n}\n" for n in range(1, 101)))
    page = call(env, "read_file", path="big.txt", offset=10, limit=5)
    assert "    11\trow 11" in page and "    15\trow 15" in page and "row 16" not in page
    assert "lines 11-15 of 100" in page and "offset=15" in page


def test_read_file_reads_saved_outputs_in_the_data_dir(env: tuple[Path, DataDir, MemoryFile]) -> None:
    saved = env[1].large_results_dir / "call-x.txt"
    saved.parent.mkdir(parents=True)
    saved.write_text("evicted content\n")
    assert "evicted content" in call(env, "read_file", path=str(saved))


@pytest.mark.parametrize("hostile", ["../outside.txt", "/etc/passwd", "a\x00b", "link/secret.txt"])
def test_paths_outside_are_refused(env: tuple[Path, DataDir, MemoryFile], hostile: str) -> None:
    work = env[0]
    outside = work.parent / "outside.txt"
    outside.write_text("secret")
    (work.parent / "elsewhere").mkdir()
    (work.parent / "elsewhere" / "secret.txt").write_text("secret")
    os.symlink(work.parent / "elsewhere", work / "link")
    reply = call(env, "read_file", path=hostile)
    assert "secret" not in reply.replace("secret.txt", "")
    assert "outside" in reply or "NUL" in reply


def test_write_and_edit_file(env: tuple[Path, DataDir, MemoryFile]) -> None:
    work = env[0]
    assert "wrote 12 bytes" in call(env, "write_file", path="sub/new.txt", content="one two two\n")
    assert (work / "sub/new.txt").read_text() == "one two two\n"
    assert "matches 2 times" in call(env, "edit_file", path="sub/new.txt", old_text="two", new_text="2")
    assert "matches 0 times" in call(env, "edit_file", path="sub/new.txt", old_text="zzz", new_text="2")
    assert "edited" in call(env, "edit_file", path="sub/new.txt", old_text="one", new_text="1")
    assert (work / "sub/new.txt").read_text() == "1 two two\n"


@pytest.mark.parametrize("path", [".git/hooks/pre-commit", ".git/config", "sub/.git/config", ".git",
                                  "hooks-link/post-checkout"])
def test_no_file_tool_writes_in_a_git_directory(env: tuple[Path, DataDir, MemoryFile], path: str) -> None:
    work = env[0]
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n")
    (work / "sub").mkdir()
    os.symlink(work / ".git" / "hooks", work / "hooks-link")
    reply = call(env, "write_file", path=path, content="[core]\n\tfsmonitor = ./evil.sh\n")
    assert "is in a .git" in reply
    assert "is in a .git" in call(env, "edit_file", path=".git/config", old_text="[core]", new_text="[x]")
    assert (work / ".git" / "config").read_text() == "[core]\n" and not (work / "sub" / ".git").exists()
    assert list((work / ".git" / "hooks").iterdir()) == []


def test_ls_glob_grep(env: tuple[Path, DataDir, MemoryFile]) -> None:
    work = env[0]
    (work / "pkg").mkdir()
    (work / "pkg" / "mod.py").write_text("def alpha():\n    return 1\n")
    (work / "notes.md").write_text("alpha notes\n")
    (work / "blob.bin").write_bytes(b"\x00alpha")
    listing = call(env, "ls", path=".")
    assert listing.splitlines()[0] == "pkg/" and "notes.md  12" in listing
    assert call(env, "glob", pattern="**/*.py").strip() == "pkg/mod.py"
    hits = call(env, "grep", pattern="alph[a]")
    assert "pkg/mod.py:1: def alpha():" in hits and "notes.md:1: alpha notes" in hits and "blob.bin" not in hits
    assert "invalid regular expression" in call(env, "grep", pattern="(")


def test_memory_tools_and_injection(env: tuple[Path, DataDir, MemoryFile]) -> None:
    memory = env[2]
    assert "added" in call(env, "write_memory", content="The user prefers tabs.")
    assert "prefers tabs" in memory.read()
    assert "updated" in call(env, "update_memory", old_text="tabs", new_text="spaces")
    assert "matches 0 times" in call(env, "update_memory", old_text="tabs", new_text="x")
    assert "prefers spaces" in call(env, "read_memory")
    memory.write("".join(f"fact {n}\n" for n in range(1, 202)))
    work, data, _ = env
    parts = build_agent_parts(workdir=work, data_dir=data, memory=memory, search=HistorySearch(data),
                              session_id="000000000000")
    driver = ToolDriver("read_memory", {})
    agent = Agent(FunctionModel(driver), toolsets=parts.toolsets, capabilities=parts.capabilities, instructions=[memory_instructions(memory)])
    agent.run_sync("go")
    injected = driver.instructions[0] or ""
    assert "fact 200" in injected and "fact 201" not in injected and "1 more lines" in injected
    memory.write("fresh fact\n")
    agent.run_sync("again")
    assert "fresh fact" in (driver.instructions[-1] or "")

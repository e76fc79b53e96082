"""Issue 20.4: a tool call has a wall-clock cap, and a cancelled turn stops its tool within a second.

The slow tool is a real grep over a real 64 GB sparse log (its bytes bound lifted: the default bound would
stop it after 256 MB), in a worker thread that can only stop by itself.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import pytest
from pydantic_ai import Agent, FunctionToolset
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tui.agent.session.toolsets import build_agent_parts
from tui.agent.tools import text_search
from tui.agent.tools.deadline import ToolDeadline, blocking_work_inline, current_deadline, run_blocking
from tui.agent.tools.memory import MemoryFile
from tui.agent.tools.time_limit import ToolTimeLimit
from tui.base.config import ConfigError, settings_from_mapping
from tui.base.paths import DataDir

TOOL_THREAD = "deep-tui tool"


def tool_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == TOOL_THREAD]


def make_slow_grep_target(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree of small files and one 64 GB sparse log whose text lines come first: grep reads it for minutes."""
    monkeypatch.setattr(text_search, "MAX_SCAN_BYTES", 1 << 50)
    for n in range(200):
        (work / f"src{n:03d}.py").write_text(f"value = {n}\n")
    with (work / "huge.log").open("wb") as log:
        log.write(b"header needle\n" * 50 + b"header\n" * 2_000)  # no NUL in the first 8 KB: text
        log.truncate(64 * 1024**3)


def grep_agent(work: Path, tool_timeout: float | None) -> Agent[None, str]:
    data = DataDir(work.parent / "data")
    parts = build_agent_parts(workdir=work, data_dir=data, memory=MemoryFile(data.memory_file()),
                              tool_timeout=tool_timeout)

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(part, ToolReturnPart) for message in messages for part in message.parts):
            return ModelResponse(parts=[TextPart("finished")])
        return ModelResponse(parts=[ToolCallPart("grep", {"pattern": "needle"}, "call-grep")])

    return Agent(FunctionModel(model), toolsets=parts.toolsets, capabilities=parts.capabilities)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    directory = tmp_path / "work"
    directory.mkdir()
    return directory


async def wait_for(condition: object, what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def test_cancelling_the_run_stops_a_grep_thread_within_a_second(work: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    make_slow_grep_target(work, monkeypatch)
    before = len(tool_threads())
    run = asyncio.create_task(grep_agent(work, tool_timeout=None).run("go"))
    await wait_for(lambda: len(tool_threads()) > before, "the grep thread to start")
    await asyncio.sleep(0.3)  # well into the sparse part
    assert not run.done()
    cancelled_at = time.monotonic()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    await wait_for(lambda: len(tool_threads()) == before, "the grep thread to stop", timeout=5)
    elapsed = time.monotonic() - cancelled_at
    assert elapsed < 1.0, f"the grep thread ran on for {elapsed:.2f} s after the cancel"


def test_the_time_limit_stops_a_grep_with_what_it_found_and_the_turn_goes_on(
        work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_slow_grep_target(work, monkeypatch)
    started = time.monotonic()
    result = grep_agent(work, tool_timeout=1.0).run_sync("go")
    elapsed = time.monotonic() - started
    assert elapsed < 6, f"{elapsed:.1f} s"
    [grep] = [p for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]
    assert grep.outcome == "success"
    lines = str(grep.content).splitlines()
    assert lines[:50] == [f"huge.log:{n}: header needle" for n in range(1, 51)]
    assert lines[50] == "… lines over 4 MB were searched in their first 4 MB only: huge.log:2051"  # the zeros
    assert lines[51] == "… stopped at the time limit of 1 s ([tools] timeout); give a narrower path or pattern"
    assert result.output == "finished"


def test_an_async_tool_that_never_returns_is_stopped_at_the_cap() -> None:
    """What the execute and MCP tools rely on: async work that does not check the deadline is cancelled."""
    slow: FunctionToolset[None] = FunctionToolset()
    seen: list[ToolDeadline] = []

    @slow.tool_plain
    async def wait_forever() -> str:
        """Never answers."""
        seen.append(current_deadline())
        await asyncio.sleep(3600)
        return "unreachable"

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(part, ToolReturnPart) for message in messages for part in message.parts):
            return ModelResponse(parts=[TextPart("finished")])
        return ModelResponse(parts=[ToolCallPart("wait_forever", {}, "call-1")])

    agent = Agent(FunctionModel(model), toolsets=[slow], capabilities=[ToolTimeLimit(1.0)])
    started = time.monotonic()
    result = agent.run_sync("go")
    assert time.monotonic() - started < 5
    [answer] = [p for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]
    assert answer.outcome == "failed"
    assert "wait_forever stopped after 1 s, the time limit of one tool call ([tools] timeout)" in str(answer.content)
    assert result.output == "finished"
    assert seen[0].seconds == 1.0 and seen[0].cancelled


async def test_run_blocking_hands_back_results_and_errors() -> None:
    assert await run_blocking(lambda deadline: deadline.remaining()) is None
    assert await run_blocking(lambda deadline: threading.current_thread().name) == TOOL_THREAD
    with pytest.raises(ValueError, match="bad"):
        await run_blocking(lambda deadline: int("bad"))
    with blocking_work_inline():  # the fuzz farm's mode: no thread per call
        assert await run_blocking(lambda deadline: threading.current_thread().name) == "MainThread"


def test_the_cap_is_a_tools_setting() -> None:
    assert settings_from_mapping({"tools": {"timeout": 30}}).tools.timeout == 30.0
    assert settings_from_mapping({}).tools.timeout == 120.0
    for bad in (0, -5, "soon", 10**9):
        with pytest.raises(ConfigError, match=r"tools\.timeout"):
            settings_from_mapping({"tools": {"timeout": bad}})


def test_a_sparse_file_is_what_the_slow_tests_think_it_is(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_slow_grep_target(work, monkeypatch)
    info = os.stat(work / "huge.log")
    assert info.st_size == 64 * 1024**3 and info.st_blocks * 512 < 10 * 1024 * 1024  # sparse: no disk used

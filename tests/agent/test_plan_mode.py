"""Plan mode and the session's modes (issue 30, point 4), through the loopback OpenAI-chat server with scripted
tool calls: in plan mode every tool that changes something is refused before it runs with a tool error the model
reads (write_file, edit_file, execute, MEMORY.md changes, an MCP tool not marked read-only, the prompt's
!command); reads, searches and the todo tools still run. Auto-accept writes runs writes without asking."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import models
from pydantic_ai.tools import ToolDefinition

from tests.agent.test_mcp_servers import make_factory, run_turn
from tests.support.mcp_server import server_config
from tests.support.openai_server import ChatServerState, openai_chat_server
from tests.support.scripted_model import ScriptedModel
from tui.agent.approval.plan_mode import ModeGuard
from tui.agent.approval.writes import WriteDecision, WriteRequest
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.agent.tasks.modes import next_mode
from tui.agent.turn_events import ToolCallFinished, TurnFinished
from tui.base.config import ConfigError, Settings, ToolSettings, settings_from_mapping
from tui.base.config_layers import ConfigLayer, without_user_only_keys
from tui.base.metadata_keys import MCP_SERVER_KEY
from tui.base.paths import DataDir
from tui.cli.main import main


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.txt").write_text("alpha\nbeta\n")
    return folder


@pytest.fixture
def server() -> Iterator[tuple[str, ChatServerState]]:
    with openai_chat_server(ChatServerState(reply="here is the plan")) as served, \
            models.override_allow_model_requests(True):
        yield served


def factory_for(tmp_path: Path, work: Path, base_url: str, **tools: Any) -> RuntimeFactory:
    settings = Settings(base_url=base_url, tools=ToolSettings(**tools))
    return RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                          choice=choose_model("openai-chat:loopback", None))


def system_text(request: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "system")


class Approver:
    def __init__(self) -> None:
        self.asked: list[WriteRequest] = []

    async def __call__(self, request: WriteRequest) -> WriteDecision:
        self.asked.append(request)
        return WriteDecision.once()


MUTATING = [("write_file", {"path": "new.txt", "content": "x"}),
            ("edit_file", {"path": "notes.txt", "old_text": "alpha", "new_text": "omega"}),
            ("execute", {"command": "touch ran.txt"}),
            ("write_memory", {"content": "a fact"})]
READING = [("read_file", {"path": "notes.txt"}), ("grep", {"pattern": "alpha"}),
           ("write_todos", {"todos": [{"content": "change notes.txt", "status": "pending"}]}), ("read_todos", {})]


async def test_plan_mode_refuses_every_mutating_tool_and_lets_reads_and_todos_run(
        tmp_path: Path, work: Path, server: tuple[str, ChatServerState]) -> None:
    url, state = server
    runtime = await factory_for(tmp_path, work, url, mode="plan").open_request(SessionRequest())
    approver = Approver()
    runtime.set_write_approver(approver)
    runtime.set_command_approver(None)
    for number, (name, args) in enumerate(MUTATING + READING):
        state.tool_calls.append((f"c{number}", name, json.dumps(args)))
    events = [event async for event in runtime.run_turn("plan the change")]
    assert isinstance(events[-1], TurnFinished)
    finished = {e.tool_name: e for e in events if isinstance(e, ToolCallFinished)}
    for name, _args in MUTATING:
        assert finished[name].is_error and not finished[name].denied
    for name, _args in READING:
        assert not finished[name].is_error, finished[name].preview
    assert approver.asked == []  # nobody is asked about a call plan mode refuses
    assert not (work / "new.txt").exists() and not (work / "ran.txt").exists()
    assert (work / "notes.txt").read_text() == "alpha\nbeta\n"
    assert not runtime.memory_path.exists() or "a fact" not in runtime.memory_path.read_text()
    tools = {m["tool_call_id"]: m["content"] for m in state.requests[-1]["messages"] if m["role"] == "tool"}
    assert "plan mode: write_file was not run" in tools["c0"]
    assert "Plan mode (set by the user)" in system_text(state.requests[-1])
    assert runtime.modes.refused == len(MUTATING)
    assert [item.content for item in runtime.task_state().todos] == ["change notes.txt"]
    refused = await runtime.run_user_command("touch bang.txt", on_output=_ignore)
    assert not refused.ran and "plan mode" in refused.status and not (work / "bang.txt").exists()
    await runtime.aclose()


async def _ignore(_text: str) -> None:
    return None


async def test_leaving_plan_mode_lets_the_same_call_run(
        tmp_path: Path, work: Path, server: tuple[str, ChatServerState]) -> None:
    url, state = server
    runtime = await factory_for(tmp_path, work, url, mode="plan", writes="always").open_request(SessionRequest())
    state.tool_calls.append(("c1", "write_file", json.dumps({"path": "new.txt", "content": "x"})))
    [_ async for _ in runtime.run_turn("plan")]
    assert not (work / "new.txt").exists()
    assert runtime.set_mode(next_mode(runtime.mode)) == "default"
    state.tool_calls.append(("c2", "write_file", json.dumps({"path": "new.txt", "content": "x"})))
    [_ async for _ in runtime.run_turn("go ahead")]
    assert (work / "new.txt").read_text() == "x"
    assert "Plan mode" not in system_text(state.requests[-1])
    await runtime.aclose()


async def test_auto_accept_writes_runs_writes_without_asking_but_commands_still_ask(
        tmp_path: Path, work: Path, server: tuple[str, ChatServerState]) -> None:
    url, state = server
    runtime = await factory_for(tmp_path, work, url).open_request(SessionRequest())
    runtime.set_mode("accept-writes")
    approver = Approver()
    runtime.set_write_approver(approver)
    runtime.set_command_approver(None)
    state.tool_calls.append(("c1", "write_file", json.dumps({"path": "new.txt", "content": "x"})))
    state.tool_calls.append(("c2", "execute", json.dumps({"command": "touch ran.txt"})))
    events = [event async for event in runtime.run_turn("go")]
    assert (work / "new.txt").read_text() == "x" and approver.asked == []
    finished = {e.tool_name: e for e in events if isinstance(e, ToolCallFinished)}
    assert finished["execute"].denied and not (work / "ran.txt").exists()  # nobody to ask: refused
    await runtime.aclose()


async def test_plan_mode_refuses_an_mcp_tool_its_server_did_not_mark_read_only(tmp_path: Path) -> None:
    model = ScriptedModel(("echo", {"text": "hello"}))
    factory = make_factory(tmp_path, model, server_config(), mcp="always")
    factory.settings = Settings(tools=ToolSettings(mcp="always", mode="plan"), mcp=factory.settings.mcp)
    assert factory.mcp is not None
    factory.mcp.start()
    try:
        events = await run_turn(factory)
    finally:
        await factory.mcp.aclose()
    [echo] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert echo.is_error and "plan mode: echo was not run" in echo.preview


def test_a_read_only_mcp_tool_runs_in_plan_mode() -> None:
    guard = ModeGuard("plan")
    marked = ToolDefinition(name="lookup", metadata={MCP_SERVER_KEY: "docs", "annotations": {"readOnlyHint": True}})
    unmarked = ToolDefinition(name="create", metadata={MCP_SERVER_KEY: "docs", "annotations": None})
    assert guard.refusal(marked) is None
    assert guard.refusal(unmarked) is not None
    assert ModeGuard("default").refusal(unmarked) is None


def test_run_with_mode_plan_refuses_changes_and_says_so(
        work: Path, server: tuple[str, ChatServerState], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    url, state = server
    monkeypatch.chdir(work)
    monkeypatch.delenv("DEEP_TUI_HOME", raising=False)
    state.tool_calls.append(("c1", "write_file", json.dumps({"path": "new.txt", "content": "x"})))
    state.tool_calls.append(("c2", "execute", json.dumps({"command": "touch ran.txt"})))
    status = main(["run", "--mode", "plan", "--allow-writes", "--allow-commands", "--model", "openai-chat:loopback",
                   "--base-url", url, "plan it"])
    err = capsys.readouterr().err
    assert status == 0
    assert not (work / "new.txt").exists() and not (work / "ran.txt").exists()
    assert "deep-tui: mode plan: nothing is changed" in err
    assert "plan mode: 2 changes refused" in err


def test_run_keep_adds_a_line_without_a_model_request(
        work: Path, server: tuple[str, ChatServerState], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    url, state = server
    monkeypatch.chdir(work)
    monkeypatch.delenv("DEEP_TUI_HOME", raising=False)
    common = ["--model", "openai-chat:loopback", "--base-url", url]
    assert main(["run", *common, "hello"]) == 0
    requests = len(state.requests)
    capsys.readouterr()
    assert main(["run", "--continue", *common, "/keep", "never touch migrations/"]) == 0
    assert main(["run", "-c", *common, "/keep answer in English"]) == 0
    out, err = capsys.readouterr()
    assert len(state.requests) == requests  # no model request
    assert "kept in session" in err
    assert out.splitlines()[-2:] == ["1. never touch migrations/", "2. answer in English"]
    assert main(["run", "-c", *common, "next"]) == 0
    assert "- never touch migrations/\n- answer in English" in system_text(state.requests[-1])
    with pytest.raises(SystemExit):
        main(["run", *common, "/keep alone needs a session"])


def test_the_mode_comes_from_the_users_config_never_from_a_project() -> None:
    assert settings_from_mapping({"tools": {"mode": "plan"}}).tools.mode == "plan"
    with pytest.raises(ConfigError, match=r"tools\.mode must be one of default, accept-writes, plan"):
        settings_from_mapping({"tools": {"mode": "yolo"}})
    project = without_user_only_keys(ConfigLayer("project", {"tools": {"mode": "accept-writes", "writes": "ask"}}))
    assert project.data == {"tools": {"writes": "ask"}}


async def test_the_runtime_is_what_the_app_needs_for_the_task_state(
        tmp_path: Path, work: Path, server: tuple[str, ChatServerState]) -> None:
    from tui.agent.runtime_api import TaskStateAPI

    url, _state = server
    runtime = await factory_for(tmp_path, work, url).open_request(SessionRequest())
    api: TaskStateAPI = runtime
    asked: list[tuple[int, int]] = []

    async def consent(tokens: int, limit: int) -> bool:
        asked.append((tokens, limit))
        return False

    api.set_summary_consent(consent)
    assert runtime.manager.ask_before_summary is consent
    api.set_compaction(auto=False)
    assert runtime.context_breakdown().auto_compact is False
    await runtime.aclose()

"""MCP servers (issue 21.4) through a real session: the test server (tests/support/mcp_server.py) started by
pydantic-ai's MCP client, a FunctionModel scripting the tool calls, the chain evicting large outputs, the
write gate asking (or refusing in ``run``), and servers that fail to start, never answer, or die mid-session.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic_ai import ToolDenied

from tests.support.mcp_server import big_text, server_config
from tests.support.scripted_model import ScriptedModel
from tui.agent.approval.mcp_calls import McpApprovals, McpRoute
from tui.agent.approval.writes import WriteDecision, WriteRequest
from tui.agent.mcp.status import McpNotice
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.agent.turn_events import ToolCallFinished, TurnEvent, TurnFinished
from tui.base.config import ContextSettings, Settings, ToolSettings
from tui.base.mcp_config import McpServerConfig, McpSettings
from tui.base.paths import DataDir
from tui.cli.headless import _run
from tui.trust.project import read_project_config


def make_factory(tmp_path: Path, model: ScriptedModel, *servers: McpServerConfig, mcp: str = "ask",
                 large_result_tokens: int = 20_000, project_servers: tuple[McpServerConfig, ...] = ()) -> RuntimeFactory:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    settings = Settings(context=ContextSettings(large_result_tokens=large_result_tokens),
                        tools=ToolSettings(mcp=mcp), mcp=McpSettings(tuple(servers)))
    return RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                          choice=choose_model("offline", None), chat_model=model.model,
                          project_servers=project_servers)


async def wait_for(condition: Callable[[], object], what: str, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.02)


async def run_turn(factory: RuntimeFactory, prompt: str = "go") -> list[TurnEvent]:
    runtime = await factory.open_request(SessionRequest())
    try:
        return [event async for event in runtime.run_turn(prompt)]
    finally:
        await runtime.aclose()


async def test_tools_are_offered_prefixed_on_a_clash_and_a_large_output_is_evicted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-not-for-servers")
    model = ScriptedModel(("echo", {"text": "hello [b]x[/b]"}), ("tests_read_file", {"path": "a.txt"}),
                          ("big", {"size": 200_000}), ("environment", {}))
    factory = make_factory(tmp_path, model, server_config(env={"GIVEN": "${OPENAI_API_KEY:-none}x"}), mcp="always",
                           large_result_tokens=1_000)
    assert factory.mcp is not None
    factory.mcp.start()
    try:
        events = await run_turn(factory)
    finally:
        await factory.mcp.aclose()
    assert isinstance(events[-1], TurnFinished), events[-1]
    offered = model.offered[0]
    assert {"echo", "tests_read_file", "big", "nap", "crash", "environment", "read_file"} <= offered
    assert "tests_echo" not in offered  # prefixed only where the name clashes

    assert model.returned("echo").content == "hello [b]x[/b]"
    assert model.returned("tests_read_file").content == "mcp read_file of a.txt"  # the server's, not deep-tui's
    variables = set(str(model.returned("environment").content).split("\n"))
    assert "OPENAI_API_KEY" not in variables and {"PATH", "GIVEN", "PY"} <= variables  # minimal env + config's

    evicted = model.returned("big")
    saved = Path(evicted.metadata["deep_tui_evicted_path"])  # type: ignore[index]
    assert saved.read_text(encoding="utf-8") == big_text(200_000)  # byte for byte
    assert "was saved to" in str(evicted.content) and len(str(evicted.content)) < 20_000
    assert [view.status for view in factory.mcp.views()] == ["stopped"]


async def test_run_refuses_an_asking_server_and_says_how_to_allow_it(tmp_path: Path) -> None:
    model = ScriptedModel(("asker_echo", {"text": "no"}), ("trusted_echo", {"text": "yes"}))
    factory = make_factory(tmp_path, model, server_config("asker"), server_config("trusted", approval="always"))
    out, err = io.StringIO(), io.StringIO()
    status = await _run(factory, SessionRequest(), "go", out, err)
    assert status == 0
    refused = model.returned("asker_echo")
    assert refused.outcome == "denied"
    assert '[mcp.servers.asker] approval = "always"' in str(refused.content)
    assert model.returned("trusted_echo").content == "yes"  # the per-server override wins over [tools] mcp
    lines = [line for line in err.getvalue().splitlines() if "MCP tool call refused" in line]
    assert len(lines) == 1 and '[tools] mcp = "always"' in lines[0]
    assert factory.mcp is not None and [v.status for v in factory.mcp.views()] == ["stopped", "stopped"]


async def test_the_approver_sees_server_tool_and_arguments_and_its_answer_holds(tmp_path: Path) -> None:
    model = ScriptedModel(("echo", {"text": "<script>\x1b[31m"}), ("nap", {"seconds": 0}))
    factory = make_factory(tmp_path, model, server_config())
    asked: list[WriteRequest] = []

    async def approver(request: WriteRequest) -> WriteDecision:
        asked.append(request)
        return WriteDecision.once() if request.path == "echo" else WriteDecision.deny("not now")

    assert factory.mcp is not None
    factory.mcp.start()
    runtime = await factory.open_request(SessionRequest())
    runtime.set_write_approver(approver)
    try:
        events = [event async for event in runtime.run_turn("go")]
    finally:
        await runtime.aclose()
        await factory.mcp.aclose()
    assert isinstance(events[-1], TurnFinished)
    assert [(r.action, r.server, r.path) for r in asked] == [("call", "tests", "echo"), ("call", "tests", "nap")]
    assert json.loads(asked[0].body) == {"text": "<script>\x1b[31m"}
    assert asked[0].summary == "call echo on MCP server tests"
    assert "allowing for this session allows every tool of tests" in asked[0].note
    assert model.returned("echo").content == "<script>\x1b[31m"
    denied = model.returned("nap")
    assert denied.outcome == "denied" and str(denied.content).endswith("The user's reason: not now")
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert {e.tool_name: e.denied for e in finished} == {"echo": False, "nap": True}


async def test_never_and_always_and_allow_for_the_session_decide_without_asking() -> None:
    routes = {"a_echo": McpRoute("a", "echo"), "b_echo": McpRoute("b", "echo"), "c_echo": McpRoute("c", "echo")}
    approvals = McpApprovals(default="ask", per_server={"b": "never", "c": "always"}, route=routes.get)
    asked: list[WriteRequest] = []

    async def approver(request: WriteRequest) -> WriteDecision:
        asked.append(request)
        return WriteDecision.session()

    off = await approvals.answer("1", "b_echo", {}, approver)
    assert isinstance(off, ToolDenied) and "are turned off" in off.message and asked == []
    assert await approvals.answer("2", "c_echo", {}, approver) is True and asked == []
    assert await approvals.answer("3", "a_echo", {"x": 1}, approver) is True and len(asked) == 1
    assert await approvals.answer("4", "a_echo", {}, approver) is True and len(asked) == 1  # "a" allowed for the session
    assert not approvals.needs_approval("a") and approvals.needs_approval("b")
    assert await approvals.answer("5", "read_file", {}, approver) is None  # not an MCP tool: the write gate's
    headless = await McpApprovals(route=routes.get).answer("6", "a_echo", {}, None)
    assert isinstance(headless, ToolDenied) and '[mcp.servers.a] approval = "always"' in headless.message


async def test_a_server_that_fails_to_start_or_never_answers_is_a_notice_and_the_turn_goes_on(tmp_path: Path) -> None:
    model = ScriptedModel()
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "broken": {"command": "sh", "args": ["-c", 'exec "$PY" -m tests.support.mcp_server --exit'],
                   "env": {"PY": sys.executable, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}}}}))
    project = read_project_config(tmp_path / "work")  # a trusted project's .mcp.json, as the launch hands it over
    assert project is not None and project.error is None
    factory = make_factory(tmp_path, model, server_config("silent", "--hang", timeout=1.0),
                           project_servers=project.servers)
    assert factory.mcp is not None
    factory.mcp.load_stretch = lambda: 1.0  # an idle machine's budget, whatever the load here
    out, err = io.StringIO(), io.StringIO()
    assert await _run(factory, SessionRequest(), "go", out, err) == 0
    assert out.getvalue().startswith("done")
    notices = [line for line in err.getvalue().splitlines() if "MCP server" in line and "starting" not in line]
    assert len(notices) == 2, notices
    assert any("MCP server broken failed to start: " in line and "(this server refuses to start)" in line
               for line in notices)
    assert any("MCP server silent failed to start: no answer to the MCP handshake within 1 s" in line
               for line in notices)
    assert model.offered[0] and not any(name in model.offered[0] for name in ("echo", "nap", "big"))
    assert factory.mcp is not None
    views = {view.name: view for view in factory.mcp.views()}
    assert views["broken"].status == views["silent"].status == "failed"
    assert views["broken"].source == ".mcp.json"


async def test_a_server_that_dies_mid_session_loses_its_tools_with_one_notice(tmp_path: Path) -> None:
    pid_file = tmp_path / "killed.pid"
    model = ScriptedModel(("crash", {}),)  # no longer a clash once "killed" is gone
    factory = make_factory(tmp_path, model, server_config("crasher"),
                           server_config("killed", env={"MCP_TEST_PID_FILE": str(pid_file)}), mcp="always")
    mcp = factory.mcp
    assert mcp is not None
    mcp.health_interval = 0.1
    notices: list[McpNotice] = []
    mcp.listen(notices.append)
    mcp.start()
    try:
        await mcp.wait_started()
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
        await wait_for(lambda: mcp.views()[1].status == "failed", "the killed server to be noticed")
        assert mcp.views()[1].tools == () and mcp.route("killed_echo") is None
        assert mcp.route("echo") == McpRoute("crasher", "echo")  # no clash left: the survivor's own name
        events = await run_turn(factory)  # the crash tool takes its server down in the middle of the call
    finally:
        await mcp.aclose()
    assert isinstance(events[-1], TurnFinished)
    crashed = model.returned("crash")
    assert crashed.outcome == "failed" and "MCP server crasher stopped during the call" in str(crashed.content)
    assert [view.status for view in mcp.views()] == ["failed", "failed"]
    assert [n.message.split(":")[0] for n in notices] == ["MCP server killed stopped", "MCP server crasher stopped"]
    assert mcp.views()[0].reason.startswith("stopped: ")
    assert all(n.message.endswith("its tools are not available") for n in notices)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_streamable_http_server_gets_its_headers_with_variables_expanded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "tests.support.mcp_server", "--http", str(port)],
                               cwd=Path(__file__).resolve().parents[2], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        await wait_for(lambda: _accepts(port), "the HTTP server to listen", timeout=20)
        monkeypatch.setenv("MCP_TEST_TOKEN", "t0ken")
        model = ScriptedModel(("header", {"name": "X-Test"}),)
        web = McpServerConfig("web", "http", url=f"http://127.0.0.1:{port}/mcp",
                              headers={"X-Test": "Bearer ${MCP_TEST_TOKEN}"}, source="config.toml")
        factory = make_factory(tmp_path, model, web, mcp="always")
        assert factory.mcp is not None
        factory.mcp.start()
        try:
            events = await run_turn(factory)
        finally:
            await factory.mcp.aclose()
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert isinstance(events[-1], TurnFinished)
    assert model.returned("header").content == "Bearer t0ken"
    assert [(v.transport, v.target) for v in factory.mcp.views()] == [("http", f"http://127.0.0.1:{port}/mcp")]


def _accepts(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


async def test_a_call_cancelled_mid_way_leaves_the_server_running_for_the_next(tmp_path: Path) -> None:
    model = ScriptedModel(("nap", {"seconds": 60}),)
    factory = make_factory(tmp_path, model, server_config(), mcp="always")
    mcp = factory.mcp
    assert mcp is not None
    mcp.start()
    runtime = await factory.open_request(SessionRequest())
    try:
        started = asyncio.Event()

        async def consume() -> None:
            async for event in runtime.run_turn("sleep"):
                if type(event).__name__ == "ToolCallStarted":
                    started.set()

        turn = asyncio.create_task(consume())
        await asyncio.wait_for(started.wait(), 30)
        await asyncio.sleep(0.3)  # the call is with the server now
        turn.cancel()  # what Esc does to the running turn
        with pytest.raises(asyncio.CancelledError):
            await turn
        model.calls = [("echo", {"text": "still here"})]
        events = [event async for event in runtime.run_turn("again")]
    finally:
        await runtime.aclose()
        await mcp.aclose()
    assert isinstance(events[-1], TurnFinished)
    assert model.returned("echo").content == "still here"
    assert [view.status for view in mcp.views()] == ["stopped"]  # ready until deep-tui closed it

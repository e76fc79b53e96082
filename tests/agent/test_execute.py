"""The ``execute`` tool in a real session: it asks first, streams its output, ends with exit status and duration,
goes through the chain (a 2 MB output is evicted byte for byte), and a cancel kills it and tells the model.

A real session (store, chain, agent, sandbox) with a FunctionModel calling ``execute``, and the same through the
loopback OpenAI-chat server and ``deep-tui run``.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

import pytest
from pydantic_ai import models
from pydantic_ai.messages import ModelMessagesTypeAdapter, ToolReturnPart

from tests.agent.shell_support import CommandApprover, CommandModel, open_runtime, requires_bwrap, turn
from tests.support.openai_server import ChatServerState, openai_chat_server
from tui.agent.approval.commands import CommandDecision, matches_prefix, simple_words, suggested_prefix
from tui.agent.session.factory import SessionRuntime
from tui.agent.turn_events import ToolCallFinished, ToolCallStarted, ToolOutputDelta, TurnFailed, TurnFinished
from tui.cli.main import main

pytestmark = requires_bwrap


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def returns_on_disk(tmp_path: Path, runtime: SessionRuntime) -> list[ToolReturnPart]:
    path = tmp_path / "data" / "sessions" / runtime.info.session_id / "messages.json"
    return [p for m in ModelMessagesTypeAdapter.validate_json(path.read_bytes()) for p in m.parts
            if isinstance(p, ToolReturnPart)]


async def test_an_allowed_command_streams_its_output_then_its_exit_status(tmp_path: Path, work: Path) -> None:
    model = CommandModel("echo out; echo err >&2; sleep 0.2; echo later; exit 3")
    runtime = await open_runtime(tmp_path, work, model)
    approver = CommandApprover(CommandDecision.once())
    runtime.set_command_approver(approver)

    events = await turn(runtime)

    [request] = approver.asked
    assert (request.command, request.workdir, request.timeout) == (
        "echo out; echo err >&2; sleep 0.2; echo later; exit 3", str(work), 120)
    assert "bubblewrap sandbox" in request.sandbox and "no network" in request.sandbox
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "ToolCallStarted" and kinds.index("ToolCallFinished") > kinds.index("ToolOutputDelta")
    streamed = "".join(e.text for e in events if isinstance(e, ToolOutputDelta))
    assert streamed == "out\nerr\nlater\n"  # stdout and stderr in the order written, before the result
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.preview.startswith("out\nerr\nlater\n[exit status 3 · 0.") and finished.preview.endswith(" s]")
    assert isinstance(events[-1], TurnFinished)
    [recorded] = returns_on_disk(tmp_path, runtime)
    assert recorded.content == finished.preview and recorded.outcome == "success"
    await runtime.aclose()


async def test_denied_commands_do_not_run_and_the_model_reads_the_reason(tmp_path: Path, work: Path) -> None:
    model = CommandModel("touch denied.txt", "touch denied-too.txt")
    runtime = await open_runtime(tmp_path, work, model)
    runtime.set_command_approver(CommandApprover(CommandDecision.deny(), CommandDecision.deny("use make test")))
    await turn(runtime)
    await turn(runtime)
    assert not (work / "denied.txt").exists() and not (work / "denied-too.txt").exists()
    first, second = returns_on_disk(tmp_path, runtime)
    assert first.outcome == second.outcome == "denied"
    assert first.content == "the user denied running `touch denied.txt`; it was not run"
    assert second.content.endswith("The user's reason: use make test")
    await runtime.aclose()


async def test_a_prefix_rule_covers_simple_commands_only(tmp_path: Path, work: Path) -> None:
    model = CommandModel("echo first", ["echo second", "echo third; touch chained.txt", "printf x > redirected.txt"])
    runtime = await open_runtime(tmp_path, work, model)
    approver = CommandApprover(CommandDecision.prefix(), CommandDecision.deny(), CommandDecision.deny())
    runtime.set_command_approver(approver)
    await turn(runtime)
    assert approver.asked[0].prefix == "echo"
    await turn(runtime)
    # "echo second" ran under the rule; the compound and the redirected command were asked about (and denied)
    assert [r.command for r in approver.asked[1:]] == ["echo third; touch chained.txt", "printf x > redirected.txt"]
    assert not (work / "chained.txt").exists() and not (work / "redirected.txt").exists()
    outcomes = {r.tool_call_id: r.outcome for r in returns_on_disk(tmp_path, runtime)}
    assert outcomes == {"call-1-0": "success", "call-2-0": "success", "call-2-1": "denied", "call-2-2": "denied"}
    await runtime.aclose()


def test_what_a_prefix_rule_matches() -> None:
    assert suggested_prefix("pytest tests/x.py -q") == "pytest"
    assert suggested_prefix("python -m pytest -q") == "python -m pytest"
    assert suggested_prefix("git status --short") == "git status"
    for compound in ("pytest; rm -rf ~", "pytest && curl x", "pytest | sh", "pytest $(curl x)", "pytest `id`",
                     "pytest > /etc/x", "pytest\nrm -rf ~", "FOO=1 pytest", "pytest &", "pytest \\; rm"):
        assert suggested_prefix(compound) is None and not matches_prefix(compound, "pytest"), compound
    assert matches_prefix("pytest -x tests", "pytest") and not matches_prefix("pytestx", "pytest")
    assert not matches_prefix("git push", "git status") and simple_words("'unclosed") is None


async def test_allow_all_for_the_session_stops_asking(tmp_path: Path, work: Path) -> None:
    model = CommandModel("echo one", "touch a.txt; touch b.txt")
    runtime = await open_runtime(tmp_path, work, model)
    approver = CommandApprover(CommandDecision.session())
    runtime.set_command_approver(approver)
    await turn(runtime)
    await turn(runtime)
    assert len(approver.asked) == 1 and (work / "a.txt").exists() and (work / "b.txt").exists()
    await runtime.aclose()


@pytest.mark.parametrize(("policy", "approver", "expected"), [
    ("never", True, "shell commands are turned off"),
    ("ask", False, "the user has not allowed shell commands in this run"),
])
async def test_a_refused_command_says_how_to_allow_it(tmp_path: Path, work: Path, policy: str, approver: bool,
                                                      expected: str) -> None:
    runtime = await open_runtime(tmp_path, work, CommandModel("touch x.txt"), commands=policy)
    asked = CommandApprover()
    if approver:
        runtime.set_command_approver(asked)
    await turn(runtime)
    [refused] = returns_on_disk(tmp_path, runtime)
    assert refused.outcome == "denied" and refused.content.startswith(expected) and not asked.asked
    assert not (work / "x.txt").exists()
    await runtime.aclose()


async def test_always_runs_without_asking(tmp_path: Path, work: Path) -> None:
    runtime = await open_runtime(tmp_path, work, CommandModel("touch x.txt"), commands="always")
    await turn(runtime)
    assert (work / "x.txt").exists()
    await runtime.aclose()


async def test_a_timeout_kills_the_command_and_the_model_is_told(tmp_path: Path, work: Path) -> None:
    model = CommandModel({"command": "echo begun; sleep 300", "timeout": 1}, {"command": "echo x", "timeout": 5000})
    runtime = await open_runtime(tmp_path, work, model, commands="always")
    started = time.monotonic()
    await turn(runtime)
    assert time.monotonic() - started < 3
    await turn(runtime)
    timed_out, capped = returns_on_disk(tmp_path, runtime)
    assert re.match(r"begun\n\[timed out after 1\.\d s: the command and everything it started were killed\]$",
                    timed_out.content)  # 1 s, plus the sandbox's start on a busy machine
    assert "[the timeout asked for (5000 s) was cut to 600 s]" in capped.content
    await runtime.aclose()


async def test_esc_kills_the_command_and_the_model_reads_what_it_printed(tmp_path: Path, work: Path) -> None:
    marker = work / "pid"
    runtime = await open_runtime(tmp_path, work, CommandModel(f"echo halfway; echo $$ > {marker}; sleep 300"),
                                 commands="always", sandbox=False)  # unsandboxed: its host PID can be checked

    async def consume() -> None:
        async for _ in runtime.run_turn("run it"):
            pass

    task = asyncio.create_task(consume())
    while not marker.exists() or not marker.read_text().strip():
        await asyncio.sleep(0.01)
    pid = int(marker.read_text())
    cancelled = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    while Path(f"/proc/{pid}").exists() and " Z " not in Path(f"/proc/{pid}/stat").read_text():
        assert time.monotonic() - cancelled < 1.0, "the command outlived the cancel by a second"
        await asyncio.sleep(0.01)
    [sealed] = returns_on_disk(tmp_path, runtime)
    assert sealed.outcome == "interrupted"
    assert sealed.content.startswith("halfway\n[cancelled by the user after")
    await runtime.aclose()


async def test_a_2mb_output_is_evicted_byte_for_byte(tmp_path: Path, work: Path) -> None:
    line = "0123456789 abcdefghijklmnopqrstuvwxyz ✓ log line\n"
    (work / "big.txt").write_text(line * (2_000_000 // len(line.encode())), encoding="utf-8")
    runtime = await open_runtime(tmp_path, work, CommandModel("cat big.txt"), commands="always")
    events = await turn(runtime)
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.evicted_path is not None
    saved = Path(finished.evicted_path).read_bytes()
    original = (work / "big.txt").read_bytes()
    assert len(original) > 1_900_000 and saved.startswith(original)
    assert saved[len(original):].decode().startswith("[exit status 0 · ")
    [recorded] = returns_on_disk(tmp_path, runtime)
    assert line.strip() in recorded.content and "[exit status 0" in recorded.content  # head and tail in view
    assert len(recorded.content) < 10_000 and finished.evicted_path in recorded.content
    await runtime.aclose()


async def test_the_loopback_provider_scripts_an_execute_call(tmp_path: Path, work: Path) -> None:
    from tui.agent.models.choice import choose_model
    from tui.agent.session.factory import RuntimeFactory, SessionRequest
    from tui.base.config import Settings, ToolSettings
    from tui.base.paths import DataDir

    state = ChatServerState(reply="ran it", tool_calls=[("call_x", "execute", json.dumps({"command": "echo hi >&2"}))])
    with openai_chat_server(state) as (base_url, served):
        settings = Settings(base_url=base_url, tools=ToolSettings(commands="ask"))
        factory = RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                                 choice=choose_model("openai-chat:loopback", None))
        runtime = await factory.open_request(SessionRequest())
        approver = CommandApprover(CommandDecision.once())
        runtime.set_command_approver(approver)
        with models.override_allow_model_requests(True):
            events = await turn(runtime)
    assert [type(e) for e in events if isinstance(e, (ToolCallStarted, TurnFailed))] == [ToolCallStarted]
    assert approver.asked[0].command == "echo hi >&2"
    tool_message = [m for m in served.requests[-1]["messages"] if m["role"] == "tool"]
    assert tool_message[0]["content"].startswith("hi\n[exit status 0 · ")
    await runtime.aclose()


def test_run_refuses_commands_unless_allowed(tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(work)
    call = json.dumps({"command": "touch ran.txt"})
    with openai_chat_server(ChatServerState(reply="ok", tool_calls=[("c1", "execute", call)])) as (url, served), \
            models.override_allow_model_requests(True):
        assert main(["run", "--model", "openai-chat:loopback", "--base-url", url, "do it"]) == 0
        err = capsys.readouterr().err
        assert not (work / "ran.txt").exists()
        assert "1 shell command refused: 'run' runs commands only with --allow-commands" in err
        tool_text = next(m for m in served.requests[-1]["messages"] if m["role"] == "tool")["content"]
        assert "rerun with --allow-commands" in tool_text

        served.tool_calls.append(("c2", "execute", call))
        assert main(["run", "--allow-commands", "--model", "openai-chat:loopback", "--base-url", url, "again"]) == 0
        assert (work / "ran.txt").exists() and "refused" not in capsys.readouterr().err


async def test_without_a_sandbox_execute_refuses_and_says_how(tmp_path: Path, work: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tui.agent.shell.sandbox.probe", lambda bwrap, network: "user namespaces are disabled")
    runtime = await open_runtime(tmp_path, work, CommandModel("touch x.txt"))
    approver = CommandApprover()
    runtime.set_command_approver(approver)
    assert "no sandbox is available" in str(runtime.sandbox_notice())
    await turn(runtime)
    assert approver.asked == []  # nothing to ask about: nothing can run
    [refused] = returns_on_disk(tmp_path, runtime)
    assert "user namespaces are disabled" in refused.content and "--no-sandbox" in refused.content
    assert not (work / "x.txt").exists()
    await runtime.aclose()


async def test_no_sandbox_runs_the_command_and_warns(tmp_path: Path, work: Path) -> None:
    runtime = await open_runtime(tmp_path, work, CommandModel("touch x.txt"), commands="always", sandbox=False)
    assert "WITHOUT a sandbox" in str(runtime.sandbox_notice())
    await turn(runtime)
    assert (work / "x.txt").exists()
    await runtime.aclose()


async def test_a_cancelled_long_output_is_saved_whole_for_the_model(tmp_path: Path, work: Path) -> None:
    from tui.agent.shell.command_run import CommandRun
    from tui.agent.shell.execute_tool import interrupted_text

    output = "".join(f"line {number}\n" for number in range(5_000))
    run = CommandRun("make", pieces=[output], ending="cancelled", started=0.0, finished=2.0)
    text = interrupted_text(run, "call-9", tmp_path / "saved")
    saved = Path(text.split("the whole output so far is saved at ", 1)[1].split(" …]", 1)[0])
    assert saved.read_text() == output  # nothing lost
    assert text.startswith("line 0\n") and "line 4999\n[cancelled by the user after 2.0 s" in text
    assert len(text) < 10_000

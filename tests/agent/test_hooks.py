"""``[[hooks.pre_tool]]`` / ``[[hooks.post_tool]]`` through the loopback OpenAI-chat server: a pre_tool hook that
exits 2 denies the call (its stderr is what the model reads), a post_tool hook gets the event as JSON on stdin,
and a hook that hangs or floods is a notice — the turn still ends."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import models

from tests.agent.shell_support import requires_bwrap
from tests.agent.subagent_support import Script, is_subagent, task_call, tool_results
from tests.support.openai_server import ChatServerState, Fault, Reply, openai_chat_server
from tui.agent.hooks.hook_events import HookNotice
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.agent.turn_events import TurnFailed, TurnFinished
from tui.base.config import ConfigError, ProviderSettings, Settings, ToolSettings, settings_from_mapping
from tui.base.config_layers import parse_config, settings_from_layers
from tui.base.hooks_config import HookSettings, HookSpec
from tui.base.paths import DataDir
from tui.chain.events import ChainEvent
from tui.trust.project import read_project_config

pytestmark = requires_bwrap


async def _turn(tmp_path: Path, hooks: HookSettings, calls: list[tuple[str, str, str]],
                state: ChatServerState | None = None) -> tuple[list[dict[str, Any]], list[str], Path]:
    """One turn; the server's requests, the hook notices (each seen before the turn's last event) and the workdir."""
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    state = state or ChatServerState(reply="done", tool_calls=calls)
    with openai_chat_server(state) as (base_url, served):
        settings = Settings(base_url=base_url, tools=ToolSettings(writes="always"), hooks=hooks,
                            provider=ProviderSettings(retries=0))
        factory = RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                                 choice=choose_model("openai-chat:loopback", None))
        runtime = await factory.open_request(SessionRequest())
        notices: list[str] = []
        ended = False

        def on_event(event: ChainEvent) -> None:
            if isinstance(event, HookNotice):
                assert not ended, "a hook notice came after the turn had ended"
                notices.append(event.describe())

        runtime.subscribe(on_event)
        with models.override_allow_model_requests(True):
            async for event in runtime.run_turn("go"):
                ended = isinstance(event, (TurnFinished, TurnFailed))
        assert runtime.info.warnings == []  # told while the turn ran, not kept for after it
        await runtime.aclose()
    return served.requests, notices, work


def _tool_results(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def _write(name: str) -> tuple[str, str, str]:
    return ("c1", "write_file", json.dumps({"path": name, "content": "hello"}))


async def test_a_pre_tool_hook_that_exits_2_denies_with_its_stderr(tmp_path: Path) -> None:
    hooks = HookSettings(pre_tool=(HookSpec("echo 'no writes on Fridays' >&2; exit 2", matcher="write_*"),
                                   HookSpec("exit 0", matcher="read_file")))
    requests, _, work = await _turn(tmp_path, hooks, [_write("a.txt")])
    [result] = _tool_results(requests[-1])
    assert "denied by a pre_tool hook" in result and "no writes on Fridays" in result
    assert not (work / "a.txt").exists()


async def test_a_post_tool_hook_reads_the_event_as_json(tmp_path: Path) -> None:
    hooks = HookSettings(post_tool=(HookSpec("cat > event.json"),))
    _, notices, work = await _turn(tmp_path, hooks, [_write("b.txt")])
    assert (work / "b.txt").read_text() == "hello"
    event = json.loads((work / "event.json").read_text())
    assert event["event"] == "post_tool" and event["tool_name"] == "write_file"
    assert event["arguments"]["path"] == "b.txt" and notices == []


async def test_a_hanging_or_flooding_or_failing_hook_is_a_notice_not_a_stuck_turn(tmp_path: Path) -> None:
    hooks = HookSettings(pre_tool=(HookSpec("sleep 600", timeout=0.5),
                                   HookSpec("head -c 3000000 /dev/zero | tr '\\0' x"),
                                   HookSpec("echo broken >&2; exit 7")))
    requests, notices, work = await _turn(tmp_path, hooks, [_write("c.txt")])
    assert (work / "c.txt").read_text() == "hello"  # only exit 2 denies
    joined = "\n".join(notices)
    assert joined.startswith("hook (pre_tool): ")
    assert "did not finish in 0.5 s" in joined
    assert "more than 16,000 characters to stdout" in joined
    assert "exit status 7" in joined and "broken" in joined
    assert requests[-1]["messages"][-1]["role"] == "tool"


def test_hooks_config_is_validated() -> None:
    settings = settings_from_mapping({"hooks": {"pre_tool": [{"command": "x", "matcher": "execute", "timeout": 3}]}},
                                     source="config.toml")
    assert settings.hooks.pre_tool == (HookSpec("x", "execute", 3.0),)
    for bad in ({"pre_tools": []}, {"pre_tool": [{"command": ""}]}, {"stop": [{"command": "x", "timeout": 0}]},
                {"post_tool": [{"command": "x", "when": "always"}]}):
        with pytest.raises(ConfigError, match=r"config\.toml"):
            settings_from_mapping({"hooks": bad}, source="config.toml")


async def test_a_stop_hook_sees_how_the_turn_ended(tmp_path: Path) -> None:
    hooks = HookSettings(stop=(HookSpec("cat > stop.json"), HookSpec("touch failed-only", matcher="failed")))
    _, notices, work = await _turn(tmp_path, hooks, [])
    event = json.loads((work / "stop.json").read_text())
    assert event["event"] == "stop" and event["reason"] == "finished" and event["output"].strip() == "done"
    assert event["output_chars"] == len(event["output"]) and notices == []
    assert not (work / "failed-only").exists()  # its matcher takes failed turns only

    failing = ChatServerState(reply="done", faults=[Fault(status=400)])
    _, _, work = await _turn(tmp_path / "failing", hooks, [], failing)
    event = json.loads((work / "stop.json").read_text())
    assert event["reason"] == "failed" and "400" in event["error"] and "output" not in event
    assert (work / "failed-only").exists()


async def test_a_hanging_stop_hook_is_stopped_and_the_turn_still_ends(tmp_path: Path) -> None:
    hooks = HookSettings(stop=(HookSpec("sleep 600", timeout=0.5), HookSpec("echo after > after.txt")))
    _, notices, work = await _turn(tmp_path, hooks, [])  # _turn: every notice before the turn's last event
    assert notices == ["hook (stop): hook 'sleep 600' did not finish in 0.5 s: stopped"]
    assert (work / "after.txt").read_text() == "after\n"  # the next hook still ran


async def test_a_cancelled_turn_runs_its_stop_hooks_before_the_session_closes(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    state = ChatServerState(reply="done", faults=[Fault(hang=True)])
    hooks = HookSettings(stop=(HookSpec("cat > stop.json"),))
    with openai_chat_server(state) as (base_url, _):
        settings = Settings(base_url=base_url, hooks=hooks, provider=ProviderSettings(retries=0))
        factory = RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                                 choice=choose_model("openai-chat:loopback", None))
        runtime = await factory.open_request(SessionRequest())
        with models.override_allow_model_requests(True):
            async def drive() -> None:
                async for _ in runtime.run_turn("go"):
                    pass

            turn = asyncio.create_task(drive())
            while not state.requests and not turn.done():  # the request is out (and hangs)
                await asyncio.sleep(0.01)
            turn.cancel()
            with pytest.raises(asyncio.CancelledError):
                await turn
        await runtime.aclose()  # waits for the stop hooks the cancelled turn left running
    event = json.loads((work / "stop.json").read_text())
    assert event["reason"] == "cancelled" and "error" not in event


async def test_only_the_users_own_config_runs_a_hook_unsandboxed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    project = tmp_path / "project"
    (project / ".deep-tui").mkdir(parents=True)
    (project / ".deep-tui" / "config.toml").write_text(
        f'[[hooks.stop]]\ncommand = "echo project > {outside}/project.txt"\nsandbox = false\n')
    user = parse_config(f'[[hooks.stop]]\ncommand = "echo user > {outside}/user.txt"\nsandbox = false\n'.encode(),
                        "config.toml")
    config = read_project_config(project)
    assert config is not None and config.layer is not None and config.error is None
    hooks = settings_from_layers([user, config.layer]).hooks
    assert [(spec.command.split()[1], spec.sandbox) for spec in hooks.stop] == [("user", False), ("project", True)]
    _, notices, _ = await _turn(tmp_path, hooks, [])
    assert (outside / "user.txt").read_text() == "user\n"  # the user's hook ran outside the sandbox
    assert not (outside / "project.txt").exists()  # the project's ran inside it: it cannot write there
    assert len(notices) == 1 and "project.txt" in notices[0] and "failed (exit status" in notices[0]


async def test_a_subagents_tool_calls_meet_the_same_pre_tool_hooks(tmp_path: Path) -> None:
    """Handing a write to a subagent is no way round a hook that denies it; the hook is told whose call it is."""
    hooks = HookSettings(pre_tool=(HookSpec("cat > pre.json; echo 'no writes here' >&2; exit 2", matcher="write_*"),))

    def subagent(payload: dict[str, Any]) -> Reply:
        if tool_results(payload):
            return Reply(text="SUB: " + tool_results(payload)[0])
        return Reply(tool_calls=(_write("sub.txt"),))

    script = Script(parent=[Reply(tool_calls=(task_call("t1", "write it", "write sub.txt"),)), Reply(text="ok")],
                    subagent=subagent)
    state = ChatServerState(responder=script)
    requests, notices, work = await _turn(tmp_path, hooks, [], state)
    assert not (work / "sub.txt").exists() and notices == []
    event = json.loads((work / "pre.json").read_text())
    assert event["tool_name"] == "write_file" and event["subagent"] == "subagent 1 (general-purpose): write it"
    [answer] = tool_results([r for r in requests if not is_subagent(r)][-1])
    assert "denied by a pre_tool hook" in answer and "no writes here" in answer

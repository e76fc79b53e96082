"""``[[hooks.pre_tool]]`` / ``[[hooks.post_tool]]`` through the loopback OpenAI-chat server: a pre_tool hook that
exits 2 denies the call (its stderr is what the model reads), a post_tool hook gets the event as JSON on stdin,
and a hook that hangs or floods is a notice — the turn still ends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import models

from tests.agent.shell_support import requires_bwrap
from tests.support.openai_server import ChatServerState, openai_chat_server
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.base.config import ConfigError, Settings, ToolSettings, settings_from_mapping
from tui.base.hooks_config import HookSettings, HookSpec
from tui.base.paths import DataDir

pytestmark = requires_bwrap


async def _turn(tmp_path: Path, hooks: HookSettings,
                calls: list[tuple[str, str, str]]) -> tuple[list[dict[str, Any]], list[str], Path]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    with openai_chat_server(ChatServerState(reply="done", tool_calls=calls)) as (base_url, served):
        settings = Settings(base_url=base_url, tools=ToolSettings(writes="always"), hooks=hooks)
        factory = RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                                 choice=choose_model("openai-chat:loopback", None))
        runtime = await factory.open_request(SessionRequest())
        with models.override_allow_model_requests(True):
            async for _ in runtime.run_turn("go"):
                pass
        warnings = list(runtime.info.warnings)
        await runtime.aclose()
    return served.requests, warnings, work


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
    _, warnings, work = await _turn(tmp_path, hooks, [_write("b.txt")])
    assert (work / "b.txt").read_text() == "hello"
    event = json.loads((work / "event.json").read_text())
    assert event["event"] == "post_tool" and event["tool_name"] == "write_file"
    assert event["arguments"]["path"] == "b.txt" and warnings == []


async def test_a_hanging_or_flooding_or_failing_hook_is_a_notice_not_a_stuck_turn(tmp_path: Path) -> None:
    hooks = HookSettings(pre_tool=(HookSpec("sleep 600", timeout=0.5),
                                   HookSpec("head -c 3000000 /dev/zero | tr '\\0' x"),
                                   HookSpec("echo broken >&2; exit 7")))
    requests, warnings, work = await _turn(tmp_path, hooks, [_write("c.txt")])
    assert (work / "c.txt").read_text() == "hello"  # only exit 2 denies
    joined = "\n".join(warnings)
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

"""``deep-tui run`` with subagents, in a subprocess against the loopback server: stderr says when a subagent starts
and how it ended; a project's subagent definitions are offered only once the project is trusted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.agent.subagent_support import Script, is_subagent, task_call
from tests.support.openai_server import ChatServerState, Reply, openai_chat_server


def _run(project: Path, config_home: Path, base_url: str, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "DEEP_TUI_MODEL"}
    env["DEEP_TUI_CONFIG_HOME"] = str(config_home)
    env.pop("DEEP_TUI_HOME", None)
    return subprocess.run([sys.executable, "-m", "tui.cli", *argv, "--base-url", base_url] if argv[0] == "run" else
                          [sys.executable, "-m", "tui.cli", *argv],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120)


def _task_description(payload: dict[str, Any]) -> str:
    return next(tool["function"]["description"] for tool in payload["tools"] if tool["function"]["name"] == "task")


def test_run_reports_subagents_and_reads_a_projects_definitions_only_once_trusted(tmp_path: Path) -> None:
    project, config_home = tmp_path / "project", tmp_path / "config"
    (project / ".deep-tui").mkdir(parents=True)
    (project / ".deep-tui" / "config.toml").write_text("[tools]\ntimeout = 60\n")
    (project / ".claude" / "agents").mkdir(parents=True)
    (project / ".claude" / "agents" / "spy.md").write_text("---\nname: spy\ndescription: the project's spy\n---\n")
    script = Script(parent=[Reply(tool_calls=(task_call("call_1", "count the files", "count them"),)),
                            Reply(text="There are 3.")],
                    subagent=lambda payload: Reply(text="3 files"))
    with openai_chat_server(ChatServerState(responder=script)) as (base_url, state):
        untrusted = _run(project, config_home, base_url, "run", "--model", "openai-chat:loopback", "count")
        assert untrusted.returncode == 0, untrusted.stderr
        assert "There are 3." in untrusted.stdout
        assert "subagent 1 (general-purpose) started: count the files" in untrusted.stderr
        assert "subagent 1 (general-purpose) finished: count the files" in untrusted.stderr
        assert "spy" not in _task_description(state.requests[0])
        assert [is_subagent(payload) for payload in state.requests] == [False, True, False]
        trusted = _run(project, config_home, base_url, "trust", str(project), "--yes")
        assert trusted.returncode == 0, trusted.stderr
        state.requests.clear()
        again = _run(project, config_home, base_url, "run", "--model", "openai-chat:loopback", "count")
        assert again.returncode == 0, again.stderr
        assert "- spy: the project's spy" in _task_description(state.requests[0])
    sessions = sorted((project / ".deep-tui" / "sessions").iterdir())
    histories = [session / "subagents" / "1" / "messages.json" for session in sessions]
    assert len(histories) == 2 and all(json.loads(path.read_text())[0]["kind"] == "request" for path in histories)
    found = _run(project, config_home, base_url, "search", "--session", sessions[0].name, "--limit", "20", "3 files")
    assert found.returncode == 0, found.stderr
    assert f"{sessions[0].name}/subagents/1  message 2" in found.stdout  # the subagent's own answer

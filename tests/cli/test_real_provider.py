"""The real provider path: ``deep-tui run --model openai:...`` against a loopback chat-completions server.

Runs the installed command in a subprocess (the test session itself forbids
model requests), with the server's base URL taken from config.toml.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pydantic_ai.messages import ModelMessagesTypeAdapter

from tests.support.openai_server import ChatServerState, openai_chat_server


def test_run_streams_from_an_openai_compatible_server(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    state = ChatServerState(reply="The loopback model says hi.")
    with openai_chat_server(state) as (base_url, server):
        (data / "config.toml").write_text(f'base_url = "{base_url}"\n', encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "DEEP_TUI_MODEL"}
        completed = subprocess.run(
            [sys.executable, "-m", "tui.cli", "run", "--data-dir", str(data), "--model", "openai:gpt-4.1",
             "say", "hi"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
        )
    assert completed.returncode == 0, completed.stderr
    assert "The loopback model says hi." in completed.stdout
    assert "offline" not in completed.stderr
    [request] = [r for r in server.requests if r.get("stream")]
    assert request["model"] == "gpt-4.1"
    assert any("say hi" in str(m.get("content")) for m in request["messages"])
    assert any(t["function"]["name"] == "read_file" for t in request.get("tools", []))
    [session] = list((data / "sessions").iterdir())
    messages = ModelMessagesTypeAdapter.validate_json((session / "messages.json").read_bytes())
    assert messages[-1].kind == "response"
    assert messages[-1].usage.input_tokens == 1234


def test_sessions_json_names_the_model_a_continued_session_switched_to(tmp_path: Path) -> None:
    """Issue 29: `run --continue --model M` talks to M, and `sessions --json` says M, not the first model."""
    data = tmp_path / "data"
    data.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "DEEP_TUI_MODEL"}

    def deep_tui(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tui.cli", *args], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=120)

    first = deep_tui("run", "--data-dir", str(data), "--model", "offline", "hello")
    assert first.returncode == 0, first.stderr
    with openai_chat_server(ChatServerState(reply="switched")) as (base_url, _):
        (data / "config.toml").write_text(f'base_url = "{base_url}"\n', encoding="utf-8")
        second = deep_tui("run", "--data-dir", str(data), "--continue", "--model", "openai:gpt-4.1", "again")
    assert second.returncode == 0, second.stderr
    assert "switched" in second.stdout
    listed = deep_tui("sessions", "--data-dir", str(data), "--json")
    assert listed.returncode == 0, listed.stderr
    [session] = json.loads(listed.stdout)
    assert session["model"] == "openai:gpt-4.1"

"""``deep-tui run`` against a provider that hangs: it ends within the configured timeout and retries, with
one error line and exit status 1 (the installed command in a subprocess, as a user runs it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, UserPromptPart

from tests.support.openai_server import ChatServerState, Fault, fail_with, openai_chat_server

CONFIG = """\
base_url = "{base_url}"

[provider]
read_timeout = 0.5
retries = 1
backoff_initial = 0.05
"""


def run(tmp_path: Path, data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "DEEP_TUI_MODEL"}
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", "run", "--data-dir", str(data), "--model", "openai-chat:loopback", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )


def test_run_on_a_silent_server_ends_with_one_line_and_exit_1(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    with openai_chat_server(ChatServerState(hang_cap=30)) as (base_url, server):
        fail_with(server, *[Fault(hang=True)] * 5)
        (data / "config.toml").write_text(CONFIG.format(base_url=base_url), encoding="utf-8")
        completed = run(tmp_path, data, "is", "anyone", "there")
    host = base_url.split("/")[2]
    assert completed.returncode == 1, completed.stderr
    errors = [line for line in completed.stderr.splitlines() if line.startswith("deep-tui: error:")]
    assert errors == [f"deep-tui: error: {host} did not answer within 0.5 s (read timeout) after 2 attempts"]
    assert "Traceback" not in completed.stderr
    assert f"deep-tui: {host}: no answer within 0.5 s (read timeout) — retry 1/1 in" in completed.stderr
    assert len(server.request_times) == 2, "one attempt and one retry, no more (the SDK's own retries are off)"
    [session] = list((data / "sessions").iterdir())
    messages = ModelMessagesTypeAdapter.validate_json((session / "messages.json").read_bytes())
    prompts = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, UserPromptPart)]
    assert [p.content for p in prompts] == ["is anyone there"]


def test_the_read_timeout_and_retries_flags_override_the_config(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    with openai_chat_server(ChatServerState(hang_cap=30)) as (base_url, server):
        fail_with(server, *[Fault(hang=True)] * 5)
        (data / "config.toml").write_text(CONFIG.format(base_url=base_url), encoding="utf-8")
        completed = run(tmp_path, data, "--read-timeout", "0.3", "--retries", "0", "hello")
    assert completed.returncode == 1, completed.stderr
    assert "did not answer within 0.3 s (read timeout) after 1 attempt\n" in completed.stderr
    assert len(server.request_times) == 1


def test_a_bad_provider_value_is_one_line_and_exit_2(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text("[provider]\nread_timeout = -1\n", encoding="utf-8")
    completed = run(tmp_path, data, "hi")
    assert completed.returncode == 2
    assert completed.stderr.strip().endswith("provider.read_timeout must be between 0.01 and 86400 seconds (got -1.0)")
    assert len(completed.stderr.strip().splitlines()) == 1

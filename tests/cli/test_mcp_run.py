"""``deep-tui run`` as a process with MCP servers in config.toml: a server that cannot start and a project's
``.mcp.json`` left unread (``--data-dir`` replaces the project's config) are one stderr line each; the turn runs
and exits 0. (An untrusted project's ``.mcp.json``: tests/cli/test_mcp_trust.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.openai_server import ChatServerState, openai_chat_server

ENV = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "DEEP_TUI_MODEL": "offline"}
for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "DEEP_TUI_HOME"):
    ENV.pop(key, None)


def test_run_reports_a_failed_server_and_an_ignored_project_file_and_goes_on(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "config.toml").write_text(
        '[mcp.servers.gone]\ncommand = "deep-tui-test-no-such-server"\ntimeout = 5\n', encoding="utf-8")
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"project": {"command": "touch",
                                                                               "args": ["pwned"]}}}))
    result = subprocess.run([sys.executable, "-m", "tui.cli", "--data-dir", str(tmp_path / "data"), "run", "hello"],
                            cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    mcp_lines = [line for line in result.stderr.splitlines() if "MCP" in line or ".mcp.json" in line]
    mcp_lines = [line for line in mcp_lines if line != "deep-tui: starting MCP servers (gone)…"]  # if still starting
    assert len(mcp_lines) == 2, result.stderr
    assert any(line.startswith("deep-tui: MCP server gone failed to start: ") for line in mcp_lines)
    assert "deep-tui: .mcp.json ignored: with --data-dir the project's config is not read, so its MCP servers were " \
           "not started" in mcp_lines
    assert not (tmp_path / "pwned").exists()  # the project's server was never started
    assert result.stdout.strip()  # the offline model answered


ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07\x9b31m"
"""A terminal title, a clear screen, a clipboard write (OSC 52) and a C1 CSI: what a server's log tries."""


def test_a_servers_log_notifications_reach_run_stderr_and_the_log_made_visible(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    repository = Path(__file__).resolve().parents[2]
    (data / "config.toml").write_text(
        '[tools]\nmcp = "always"\n\n[mcp.servers.attack]\ncommand = "sh"\n'
        'args = ["-c", \'exec "$PY" -m tests.support.mcp_server --attacks\']\n'
        f'env = {{ PY = {json.dumps(sys.executable)}, PYTHONPATH = {json.dumps(str(repository))} }}\n',
        encoding="utf-8")
    calls = [(f"call_{level}", "log", json.dumps({"level": level, "text": f"{level} {ESCAPES} end",
                                                   "logger_name": f"name{ESCAPES}"}))
             for level in ("warning", "error", "info")]
    env = {**ENV, "OPENAI_API_KEY": "sk-test-0123456789"}
    env.pop("DEEP_TUI_MODEL")
    with openai_chat_server(ChatServerState(reply="all logged", tool_calls=calls)) as (url, state):
        result = subprocess.run([sys.executable, "-m", "tui.cli", "--data-dir", str(data), "run", "-m",
                                 "openai-chat:gpt-4o", "--base-url", url, "log it"],
                                cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "all logged" in result.stdout
    said = [line for line in result.stderr.splitlines() if "MCP server attack" in line]
    visible_escapes = "␛]0;pwned␇␛[2J␛]52;c;cHduZWQ=␇\N{REPLACEMENT CHARACTER}31m"
    assert sorted(said) == [f"deep-tui: warning: MCP server attack (name{visible_escapes}) says: {level} "
                            f"{visible_escapes} end" for level in ("error", "warning")], result.stderr  # info: the log only
    for text in (result.stdout, result.stderr, (data / "deep-tui.log").read_text(encoding="utf-8")):
        assert not any(character in text for character in "\x1b\x07\x9b")
    assert f"says: info {visible_escapes} end" in (data / "deep-tui.log").read_text(encoding="utf-8")
    assert len([request for request in state.requests if request.get("tools")]) == 4  # three calls, then the answer


def test_run_says_which_servers_it_waits_for_before_its_first_request(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    ready = tmp_path / "ready"
    repository = Path(__file__).resolve().parents[2]
    (data / "config.toml").write_text(
        '[mcp.servers.slow]\ncommand = "sh"\ntimeout = 60\n'
        f'args = ["-c", \'exec "$PY" -m tests.support.mcp_server --wait-for {ready}\']\n'
        f'env = {{ PY = {json.dumps(sys.executable)}, PYTHONPATH = {json.dumps(str(repository))} }}\n',
        encoding="utf-8")
    process = subprocess.Popen([sys.executable, "-m", "tui.cli", "--data-dir", str(data), "run", "hello"], cwd=tmp_path,
                               env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        seen: list[str] = []
        for line in process.stderr:  # the turn waits for the server: the line comes before any answer
            seen.append(line.rstrip("\n"))
            if "MCP" in line:
                break
        assert seen[-1] == "deep-tui: starting MCP servers (slow)…", seen
        ready.touch()
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 0, err
    assert out.strip() and "failed to start" not in err

"""``deep-tui run`` as a process with MCP servers in config.toml: a server that cannot start and a project's
``.mcp.json`` left unread (``--data-dir`` replaces the project's config) are one stderr line each; the turn runs
and exits 0. (An untrusted project's ``.mcp.json``: tests/cli/test_mcp_trust.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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
    assert len(mcp_lines) == 2, result.stderr
    assert any(line.startswith("deep-tui: MCP server gone failed to start: ") for line in mcp_lines)
    assert "deep-tui: .mcp.json ignored: with --data-dir the project's config is not read, so its MCP servers were " \
           "not started" in mcp_lines
    assert not (tmp_path / "pwned").exists()  # the project's server was never started
    assert result.stdout.strip()  # the offline model answered

"""``deep-tui run`` says each hook's notice on stderr while the turn runs (before the turn's closing lines), from
the hooks of a data directory's config.toml (the user's own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.agent.shell_support import requires_bwrap

pytestmark = requires_bwrap


def test_run_prints_hook_notices_on_stderr_and_the_turn_ends(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(
        '[[hooks.stop]]\ncommand = "sleep 600"\ntimeout = 0.5\n\n'
        '[[hooks.stop]]\ncommand = "echo broken >&2; exit 7"\n\n'
        '[[hooks.stop]]\ncommand = "cat > stop.json"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "DEEP_TUI_MODEL"}
    completed = subprocess.run(
        [sys.executable, "-m", "tui.cli", "run", "--data-dir", str(data), "--model", "offline", "hello"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    lines = completed.stderr.splitlines()
    hanging = lines.index("deep-tui: hook (stop): hook 'sleep 600' did not finish in 0.5 s: stopped")
    failing = lines.index("deep-tui: hook (stop): hook 'echo broken >&2; exit 7' failed (exit status 7): broken")
    closing = next(n for n, line in enumerate(lines) if line.startswith("deep-tui: session "))
    assert hanging < failing < closing
    assert json.loads((tmp_path / "stop.json").read_text())["reason"] == "finished"


def test_stream_json_has_a_hook_line_before_the_result(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text('[[hooks.stop]]\ncommand = "echo broken >&2; exit 7"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "DEEP_TUI_MODEL"}
    completed = subprocess.run(
        [sys.executable, "-m", "tui.cli", "run", "--data-dir", str(data), "--model", "offline",
         "--output-format", "stream-json", "hello"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    lines = [json.loads(line) for line in completed.stdout.splitlines()]
    kinds = [line["type"] for line in lines]
    [hook] = [line for line in lines if line["type"] == "hook"]
    assert hook == {"type": "hook", "event": "stop", "level": "warning",
                    "text": "hook 'echo broken >&2; exit 7' failed (exit status 7): broken"}
    assert kinds.index("hook") < kinds.index("result")
    assert "deep-tui: hook (stop): hook 'echo broken >&2; exit 7' failed (exit status 7): broken" in completed.stderr

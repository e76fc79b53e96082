"""The real provider path: ``deep-tui run --model openai:...`` against a loopback chat-completions server.

Runs the installed command in a subprocess (the test session itself forbids
model requests), with the server's base URL taken from config.toml.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
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


@pytest.mark.parametrize("window", [4_000, 8_000])
def test_thirty_small_attached_files_never_fail_the_turn(tmp_path: Path, window: int) -> None:
    """Issue 29: 30 small @files, each under the per-file limit, in one prompt at a 4k and an 8k window. They are
    budgeted as a whole: the first go inline, the rest become stubs pointing into one saved file (read back
    here through read_file's own pointer), the 21st on are named as not attached; the request fits the window."""
    from tui.agent.tools.deadline import ToolDeadline
    from tui.agent.tools.file_reading import ReadRequest, read_page

    data, work = tmp_path / "data", tmp_path / "work"
    data.mkdir()
    work.mkdir()
    for number in range(30):
        (work / f"mod_{number:02d}.py").write_text("".join(f"VALUE_{number:02d}_{row} = {row}\n" for row in range(30)))
    prompt = "review " + " ".join(f"@mod_{number:02d}.py" for number in range(30))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "DEEP_TUI_MODEL"}
    with openai_chat_server(ChatServerState(reply="reviewed")) as (base_url, server):
        (data / "config.toml").write_text(f'base_url = "{base_url}"\n', encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "tui.cli", "run", "--data-dir", str(data), "--model",
                               "openai:gpt-4.1", "--context-window", str(window), prompt],
                              cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "reviewed" in done.stdout and "ContextOverflow" not in done.stderr
    assert "deep-tui: not attached: mod_29.py (more than 20 files in one prompt)" in done.stderr
    [request] = [r for r in server.requests if r.get("stream")]
    assert len(json.dumps(request)) // 4 < window, "the request fits the window"
    [user] = [m for m in request["messages"] if m["role"] == "user"]
    sent = json.dumps(user["content"])
    inline = [n for n in range(20) if f"VALUE_{n:02d}_29 = 29" in sent]
    stubbed = [n for n in range(20) if n not in inline]
    assert inline == list(range(len(inline))) and stubbed, (inline, stubbed)
    texts = [user["content"]] if isinstance(user["content"], str) else \
        [item["text"] for item in user["content"] if item.get("type") == "text"]
    [bundle] = {match for text in texts for match in re.findall(r"read_file\(path='([^']+)', offset=", text)}
    places = [(int(offset), int(limit)) for text in texts
              for offset, limit in re.findall(r"offset=(\d+), limit=(\d+)\)", text)]
    assert len(places) == len(stubbed)
    for number, (offset, limit) in zip(stubbed, places, strict=True):
        page = read_page(ReadRequest(Path(bundle), bundle, offset, limit, saved_output=True), ToolDeadline(30))
        assert f"VALUE_{number:02d}_0 = 0" in page and f"VALUE_{number:02d}_29 = 29" in page

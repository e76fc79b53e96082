"""The installed ``deep-tui`` in a real terminal (tmux): prompt → reply → picker → fork → compact."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.e2e.tmux_driver import TmuxTerminal, deep_tui_command

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_prompt_reply_picker_fork_compact(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("alpha from the notes file\n")
    (work / "more.txt").write_text("".join(f"note {n}: more detail\n" for n in range(200)))
    data = tmp_path / "data"
    env = {"HOME": str(tmp_path), "TERM": "xterm-256color", "PATH": os.environ.get("PATH", ""),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "LANG": "C.UTF-8"}
    terminal = TmuxTerminal([*deep_tui_command(), "--data-dir", str(data), "--workdir", str(work)], cwd=work, env=env)
    try:
        terminal.wait_for("offline")
        terminal.type("read notes.txt")
        terminal.send("Enter")
        terminal.wait_for("alpha from the notes file")
        terminal.type("read more.txt")  # enough history that a summary shrinks it
        terminal.send("Enter")
        terminal.wait_for("(161 more lines)")
        terminal.send("C-s")
        terminal.wait_for("Sessions")
        terminal.wait_for("read notes.txt")
        terminal.send("C-f")
        terminal.wait_for("fork of")
        terminal.send("C-g")
        terminal.wait_for("Compact the context")
        terminal.type("the notes")
        terminal.send("Enter")
        terminal.wait_for("Compacted ")  # the result line, not the always-visible button
        terminal.send("Escape")
        terminal.wait_gone("Compact the context")  # a key right after a lone Escape would be read as Alt+key
        terminal.send("C-q")
        assert terminal.wait_exit() == 0
    finally:
        ended_by_itself = terminal.close()
    assert ended_by_itself, "deep-tui had to be killed"
    sessions = sorted((data / "sessions").iterdir())
    assert len(sessions) == 2
    metas = [json.loads((s / "session.json").read_text()) for s in sessions]
    forks = [m for m in metas if m.get("parent")]
    assert len(forks) == 1 and forks[0]["message_count"] >= 8
    events = (data / "sessions" / forks[0]["id"] / "events.jsonl").read_text()
    assert '"focus": "the notes"' in events


def test_a_long_code_block_streamed_from_an_openai_server_shows_its_last_line(tmp_path: Path) -> None:
    """300 lines of code, one token per chunk at 4,000 tokens/s from the loopback chat server, through
    ``--model openai-chat:… --base-url``: the last line reaches the real terminal, then the prompt is free."""
    from tests.support.openai_server import ChatServerState, openai_chat_server

    chunks = ["Here it is:\n\n", "```python\n"]
    for line in range(300):
        chunks += [f"value_{line}", " =", " compute", "(", f"{line}", ",", " x", ")\n"]
    chunks += ["final_line_reached", " =", " True", "\n", "```\n"]
    work = tmp_path / "work"
    work.mkdir()
    env = {"HOME": str(tmp_path), "TERM": "xterm-256color", "PATH": os.environ.get("PATH", ""),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "LANG": "C.UTF-8", "OPENAI_API_KEY": "loopback"}
    state = ChatServerState(content_chunks=chunks, chunks_per_second=4_000)
    with openai_chat_server(state) as (base_url, _):
        terminal = TmuxTerminal([*deep_tui_command(), "--data-dir", str(tmp_path / "data"), "--workdir", str(work),
                                 "--model", "openai-chat:loopback", "--base-url", base_url], cwd=work, env=env)
        try:
            terminal.wait_for("loopback")
            terminal.type("write the module")
            terminal.send("Enter")
            screen = terminal.wait_for("final_line_reached = True")
            assert "value_299 = compute(299, x)" in screen
            terminal.send("C-q")
            assert terminal.wait_exit() == 0
        finally:
            ended_by_itself = terminal.close()
    assert ended_by_itself, "deep-tui had to be killed"


@pytest.mark.parametrize("quit_keys", [["C-q"], ["C-d"], ["C-c", "C-c"]])
def test_quitting_after_a_request_to_a_keep_alive_provider_exits_0_silently(tmp_path: Path,
                                                                           quit_keys: list[str]) -> None:
    """A real provider keeps the connection open after answering: quitting then closed it in a second event
    loop, printed a 60-line "Event loop is closed" traceback and exited 1. Now: exit 0, nothing printed."""
    from tests.support.openai_server import ChatServerState, openai_chat_server

    work = tmp_path / "work"
    work.mkdir()
    env = {"HOME": str(tmp_path), "TERM": "xterm-256color", "PATH": os.environ.get("PATH", ""),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "LANG": "C.UTF-8", "OPENAI_API_KEY": "loopback"}
    with openai_chat_server(ChatServerState(reply="Kept alive and well.", keep_alive=True)) as (base_url, state):
        terminal = TmuxTerminal([*deep_tui_command(), "--data-dir", str(tmp_path / "data"), "--workdir", str(work),
                                 "--model", "openai-chat:loopback", "--base-url", base_url], cwd=work, env=env)
        try:
            terminal.wait_for("loopback")
            terminal.type("say hi")
            terminal.send("Enter")
            terminal.wait_for("Kept alive and well.")
            for key in quit_keys:
                terminal.send(key)
            assert terminal.wait_exit() == 0
            after = terminal.screen()
        finally:
            ended_by_itself = terminal.close()
    assert ended_by_itself, "deep-tui had to be killed"
    assert len(state.requests) >= 1
    assert "Traceback" not in after and "Event loop is closed" not in after, after

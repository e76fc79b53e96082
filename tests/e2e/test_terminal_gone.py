"""A terminal that closes mid-answer (a killed tmux window, a closed emulator): deep-tui ends by itself within
seconds, records the partial answer as interrupted and releases the session's lock (it used to block for
ever writing to the dead terminal, holding the lock)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from tests.e2e.tmux_driver import TmuxTerminal, deep_tui_command
from tests.support.openai_server import ChatServerState, openai_chat_server

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

WORDS = [f"word{number} " for number in range(3000)]
EXIT_SECONDS = 5.0
"""How soon the app must be gone once its terminal is."""


@pytest.mark.parametrize("shell_ignores_hangup", [False, True], ids=["sighup", "no-sighup"])
def test_closing_the_terminal_mid_answer_ends_the_app_and_keeps_the_answer(
        tmp_path: Path, shell_ignores_hangup: bool) -> None:
    """``sighup``: the pane's shell dies with the terminal and the kernel sends the app SIGHUP and SIGCONT.
    ``no-sighup``: the shell survives, no signal comes; the app learns it from the writes the tty refuses."""
    work = tmp_path / "work"
    work.mkdir()
    data = tmp_path / "data"
    env = {"HOME": str(tmp_path), "TERM": "xterm-256color", "PATH": os.environ.get("PATH", ""),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "LANG": "C.UTF-8", "OPENAI_API_KEY": "loopback"}
    state = ChatServerState(content_chunks=WORDS, chunks_per_second=60)  # 50 s of answer: still streaming
    with openai_chat_server(state) as (base_url, _):
        terminal = TmuxTerminal([*deep_tui_command(), "--data-dir", str(data), "--workdir", str(work),
                                 "--model", "openai-chat:loopback", "--base-url", base_url],
                                cwd=work, env=env, width=80, height=24, shell_ignores_hangup=shell_ignores_hangup)
        try:
            terminal.wait_for("loopback")
            terminal.type("tell me a long story")
            terminal.send("Enter")
            terminal.wait_for("word20 ")
            terminal.kill_session()
            closed = time.monotonic()
            status = terminal.wait_exit(timeout=EXIT_SECONDS)
            took = time.monotonic() - closed
        finally:
            ended_by_itself = terminal.close()
    assert ended_by_itself, "the app had to be killed: it did not end with its terminal"
    assert status == 129, f"exit status {status}: stopped as for SIGHUP (128 + 1)"
    assert took < EXIT_SECONDS
    [session] = (data / "sessions").iterdir()
    messages = json.loads((session / "messages.json").read_text())
    last = messages[-1]
    assert last["kind"] == "response" and last["state"] == "interrupted", last
    kept = "".join(part["content"] for part in last["parts"] if part["part_kind"] == "text")
    assert kept.startswith("word0 word1 ") and "word20 " in kept and WORDS[-1] not in kept
    with (session / "lock").open("a") as lock:  # released: another deep-tui can open the session now
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)

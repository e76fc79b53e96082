"""The desktop notification seen in a real terminal (issue 33, point 4): deep-tui in a tmux pane that loses the focus
while a turn runs; when the turn ends, the pane's raw output holds the notification, wrapped for tmux's passthrough,
and the bell that follows flags the window.

tmux reports focus changes to the pane only with ``focus-events on`` and a client attached, so the test runs a tmux
server of its own (no config file) and attaches a client to it through ``script`` (a pseudo-terminal). The turn is
held at the loopback OpenAI server until deep-tui has logged (``--debug``) that it lost the focus: no fixed wait
anywhere.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.tmux_driver import PATIENCE, TmuxTerminal, deep_tui_command
from tests.support.openai_server import ChatServerState, openai_chat_server

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None or shutil.which("script") is None,
                                reason="tmux (and util-linux's script, to attach a client) are not installed")


def wait(condition: Any, what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} never happened within {PATIENCE} s")
        time.sleep(0.05)


def focus_reports(log: Path) -> list[str]:
    """``has`` / ``lost``: each focus change deep-tui logged (``--debug``), oldest first."""
    text = log.read_text(errors="replace") if log.exists() else ""
    return re.findall(r"the terminal (has|lost) the focus", text)


def test_a_turn_that_ends_in_an_unfocused_tmux_pane_sends_the_notification(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    config_home = tmp_path / "config"
    config_home.mkdir()
    (config_home / "config.toml").write_text('[ui]\nnotify_after = 0\nnotify_method = "osc9"\n')
    raw = tmp_path / "pane-output.raw"
    log = tmp_path / "data" / "deep-tui.log"
    arrived, release = threading.Event(), threading.Event()

    def held(request: dict[str, Any]) -> None:  # the usual reply, once the pane has lost the focus
        arrived.set()
        release.wait(PATIENCE)
        return None

    state = ChatServerState(reply="the answer is ready", responder=held)
    env = {"HOME": str(tmp_path), "TERM": "xterm-256color", "PATH": os.environ.get("PATH", ""),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "LANG": "C.UTF-8", "OPENAI_API_KEY": "loopback",
           "DEEP_TUI_CONFIG_HOME": str(config_home)}
    with openai_chat_server(state) as (base_url, _):
        terminal = TmuxTerminal([*deep_tui_command(), "--data-dir", str(tmp_path / "data"), "--workdir", str(work),
                                 "--model", "openai-chat:loopback", "--base-url", base_url, "--debug"], cwd=work, env=env,
                                own_server=True)
        client = None
        try:
            terminal.tmux("set-option", "-s", "focus-events", "on")
            pane = f"{terminal.name}:0.0"
            terminal.tmux("pipe-pane", "-O", "-t", pane, f"cat >> {raw}")
            client = subprocess.Popen(  # a client on a pseudo-terminal: tmux gives the pane the focus
                ["script", "-qfec", f"tmux -L {terminal.name} attach -t {terminal.name}", os.devnull],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait(lambda: terminal.tmux("list-clients", "-t", terminal.name).strip(), "the client to attach")
            terminal.wait_for("loopback")
            terminal.type("say something")
            terminal.send("Enter")
            assert arrived.wait(PATIENCE), "the request never reached the server"
            assert focus_reports(log)[-1:] in ([], ["has"])  # the keys just typed gave the app the focus if it lacked it

            # Another window becomes the client's: tmux writes FocusOut (ESC [ O) to deep-tui's pane, and deep-tui
            # says in its log (--debug) that it read it.
            terminal.tmux("new-window", "-d", "-t", terminal.name)
            terminal.tmux("select-window", "-t", f"{terminal.name}:1")
            wait(lambda: focus_reports(log)[-1:] == ["lost"], "deep-tui to lose the focus")
            release.set()

            wait(lambda: raw.exists() and b"\x1bPtmux;" in raw.read_bytes(), "the notification escape")
            output = raw.read_bytes()
            start = output.index(b"\x1bPtmux;")
            notification = output[start:output.index(b"\x1b\\", start) + 2]
            assert notification.startswith(b"\x1bPtmux;\x1b\x1b]9;deep-tui: answer ready after ")
            assert notification.endswith(b": the answer is ready\x07\x1b\\")
            assert output[start + len(notification):].startswith(b"\x07")  # the bell: tmux flags the window
            wait(lambda: terminal.tmux("display-message", "-p", "-t", f"{terminal.name}:0",
                                       "#{window_bell_flag}").strip() == "1", "the window's bell flag")
        finally:
            release.set()
            ended_by_itself = terminal.close()
            if client is not None:
                client.terminate()
                client.wait(PATIENCE)
        assert ended_by_itself, "deep-tui had to be killed"

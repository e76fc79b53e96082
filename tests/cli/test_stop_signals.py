"""Signals keep what was shown (issue 20.7): SIGTERM, SIGHUP and SIGINT in the middle of an answer that
``deep-tui run`` is printing all keep the partial answer in the session, mark it interrupted, release the
session's lock and exit with 128 + the signal's number — a real process, a slow loopback stream."""

from __future__ import annotations

import asyncio
import fcntl
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.openai_server import ChatServerState, openai_chat_server
from tui.cli import headless

ROOT = Path(__file__).resolve().parents[2]
WORDS = [f"word{number}" for number in range(400)]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_a_signal_mid_answer_keeps_the_partial_answer(tmp_path: Path, signum: signal.Signals) -> None:
    data = tmp_path / "data"
    state = ChatServerState(reply=" ".join(WORDS), chunks_per_second=40)
    with openai_chat_server(state) as (base_url, _):
        # Started as from a terminal: a shell runs a background job (a CI script's, say) with SIGINT ignored, and
        # a child inherits that (Python then leaves SIGINT ignored, as it should); a handler is reset at exec.
        ignored = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "tui.cli", "run", "--data-dir", str(data), "-m", "openai-chat:loop",
                 "--base-url", base_url, "tell me a long story"],
                cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        finally:
            signal.signal(signal.SIGINT, ignored)
        assert process.stdout is not None
        shown = b""
        deadline = time.monotonic() + 20
        while b"word8 " not in shown and time.monotonic() < deadline:
            shown += os.read(process.stdout.fileno(), 4096)
        assert b"word8 " in shown, "the answer never started streaming"
        process.send_signal(signum)
        try:
            rest, err = process.communicate(timeout=20)
        finally:
            process.kill()
    printed = (shown + rest).decode()
    assert process.returncode == 128 + signum.value, err.decode()
    assert "word8" in printed and "word399" not in printed, "stopped mid-answer"
    [session] = (data / "sessions").iterdir()
    messages = json.loads((session / "messages.json").read_text())
    last = messages[-1]
    assert last["kind"] == "response" and last["state"] == "interrupted", last
    kept = "".join(part["content"] for part in last["parts"] if part["part_kind"] == "text")
    assert kept.strip() and printed.strip().startswith(kept.strip()), "what was printed is what was kept"
    assert "word8" in kept
    with (session / "lock").open("a") as lock:  # released: another deep-tui could open the session now
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)


async def test_a_signal_as_the_turn_ends_still_says_stopped() -> None:
    """The signal's cancellation lost (taken back by the code it landed in), the turn finishing anyway: the exit
    status still says the signal."""

    async def turn() -> int:
        os.kill(os.getpid(), signal.SIGHUP)
        try:
            await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            asyncio.current_task().uncancel()  # type: ignore[union-attr]
        return 0

    err = io.StringIO()
    assert await headless._stoppable(turn(), err) == 128 + signal.SIGHUP.value
    assert "stopped by SIGHUP" in err.getvalue()

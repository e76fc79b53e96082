"""SIGTERM and SIGHUP in the app (issue 20.7): the running turn is cancelled and recorded as Esc records it —
the partial answer kept, marked interrupted — and the app ends with 128 + the signal's number."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from tests.app.app_support import make_app, make_factory, wait_until
from tui.app.stop_signals import StopSignals


def counted_slow_model(streamed: list[str]) -> FunctionModel:
    """Streams "partial words" for ever-ish (8 s), one word each 20 ms, noting each word sent in ``streamed``."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        for word in ("partial words " * 200).split(" "):
            await asyncio.sleep(0.02)
            streamed.append(word)
            yield word + " "

    def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("whole")])

    return FunctionModel(whole, stream_function=stream, model_name="slow")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
async def test_a_signal_mid_answer_records_it_and_ends_the_app(tmp_path: Path, signum: signal.Signals) -> None:
    streamed: list[str] = []
    factory = make_factory(tmp_path, chat_model=counted_slow_model(streamed))
    app = make_app(factory)
    session_id = app.runtime.info.session_id
    async with app.run_test() as pilot:
        assert signal.getsignal(signum) not in (signal.SIG_DFL, None), "the app handles the signal"
        app.main_screen.run_turn("tell me a long story")
        await wait_until(pilot, lambda: len(streamed) >= 6, "some words to arrive")
        os.kill(os.getpid(), signum)
        await wait_until(pilot, lambda: app.return_code is not None, "the app to end")
    assert app.return_code == 128 + signum.value
    assert signal.getsignal(signum) is signal.SIG_DFL, "the handler goes with the app"
    messages = json.loads((tmp_path / "data" / "sessions" / session_id / "messages.json").read_text())
    last = messages[-1]
    assert last["kind"] == "response" and last["state"] == "interrupted", last
    kept = "".join(part["content"] for part in last["parts"] if part["part_kind"] == "text")
    assert kept.startswith("partial words ") and len(kept) < len("partial words " * 200)


async def test_a_signal_with_no_turn_running_just_ends_the_app(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test() as pilot:
        os.kill(os.getpid(), signal.SIGTERM)
        await wait_until(pilot, lambda: app.return_code is not None, "the app to end")
    assert app.return_code == 128 + signal.SIGTERM.value
    assert isinstance(app.stop_signals, StopSignals) and app.stop_signals.received is signal.SIGTERM


DEADLINE_SCRIPT = """
import signal, sys, time
import tui.app.stop_signals as stop_signals
stop_signals.EXIT_DEADLINE_SECONDS = 0.3

class StuckApp:  # its way out never finishes (as when it blocked writing to a terminal that was gone)
    is_headless = False
    def run_worker(self, work, **options):
        work.close()

handlers = stop_signals.StopSignals(StuckApp())
handlers._received(signal.SIGTERM)
if sys.argv[1] == "disarm":
    handlers.disarm()
time.sleep(3)
"""


@pytest.mark.parametrize("disarmed", [False, True], ids=["stuck", "ended-in-time"])
def test_an_app_stuck_on_its_way_out_is_ended_by_the_deadline(disarmed: bool) -> None:
    """The last resort: a process whose app cannot finish ending after a stop signal ends anyway (with the
    signal's status, the kernel releasing the lock); one that ended in time (``disarm``) is left alone."""
    root = Path(__file__).resolve().parents[2]
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", DEADLINE_SCRIPT, "disarm" if disarmed else "stuck"], cwd=root,
                            env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True, timeout=30)
    took = time.monotonic() - started
    if disarmed:
        assert result.returncode == 0 and took >= 3, result.stderr
    else:
        assert result.returncode == 128 + signal.SIGTERM.value, result.stderr
        assert took < 3, "ended by the deadline, not by the end of the script"

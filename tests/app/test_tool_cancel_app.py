"""Issue 20.4 in the app: Esc during a slow tool (a real grep over a 64 GB sparse log) ends the turn within 1 s."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tui.agent.tools import text_search
from tui.app.widgets.blocks import NoticeBlock, ToolBlock


def grep_model() -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if any(isinstance(part, ToolReturnPart) for part in messages[-1].parts):
            yield "searched"
            return
        yield {0: DeltaToolCall(name="grep", json_args='{"pattern": "needle"}', tool_call_id="call-grep")}

    return FunctionModel(lambda m, i: ModelResponse(parts=[TextPart("searched")]), stream_function=stream,
                         model_name="grepper")


def tool_threads() -> int:
    return sum(1 for thread in threading.enumerate() if thread.name == "deep-tui tool")


async def test_escape_during_a_slow_grep_ends_the_turn_within_a_second(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_search, "MAX_SCAN_BYTES", 1 << 50)  # the default bound would end it after 256 MB
    factory = make_factory(tmp_path, chat_model=grep_model())
    with (factory.workdir / "huge.log").open("wb") as log:
        log.write(b"plain text\n" * 2_000)
        log.truncate(64 * 1024**3)
    app = make_app(factory)
    before = tool_threads()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"find it", "enter")
        await wait_until(pilot, lambda: tool_threads() > before and app.query(ToolBlock), "the grep to be running")
        await pilot.pause(0.3)
        assert app.runtime.busy
        pressed = time.monotonic()
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.runtime.busy, "the turn to end", timeout=5)
        elapsed = time.monotonic() - pressed
        assert elapsed < 1.0, f"the turn ended {elapsed:.2f} s after Esc"
        await wait_until(pilot, lambda: tool_threads() == before, "the grep thread to stop", timeout=1)
        await wait_idle(app, pilot)
        assert any("cancelled" in str(notice.render()) for notice in app.query(NoticeBlock))
        await pilot.press(*"again", "enter")  # the session goes on
        await wait_until(pilot, lambda: tool_threads() > before, "the second grep", timeout=5)
        await pilot.press("escape")
        await wait_idle(app, pilot)
        assert not app.runtime.busy

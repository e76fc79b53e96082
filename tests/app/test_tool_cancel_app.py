"""Issue 20.4 in the app: Esc during a slow tool (a real grep over a 64 GB sparse log, read 16 bytes at a time so it
could not end by itself for hours) ends the turn and the grep: the turn does not wait for the tool's thread, and the
thread sees the cancellation. Nothing here is timed (a loaded machine is only slower); a turn that waited for the
grep would never end, and fail the wait's hang guard."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tui.agent.tools import text_search
from tui.app.widgets.chat_blocks import NoticeBlock, ToolBlock


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


async def test_escape_during_a_grep_that_cannot_end_by_itself_ends_the_turn_and_the_grep(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_search, "MAX_SCAN_BYTES", 1 << 50)  # the default bound would end it after 256 MB
    monkeypatch.setattr(text_search, "BLOCK_BYTES", 16)  # 64 GB in 16-byte reads: hours
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
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.runtime.busy, "the turn to end")
        await wait_until(pilot, lambda: tool_threads() == before, "the grep thread to stop")
        await wait_idle(app, pilot)
        assert any("cancelled" in str(notice.render()) for notice in app.query(NoticeBlock))
        await pilot.press(*"again", "enter")  # the session goes on
        await wait_until(pilot, lambda: tool_threads() > before, "the second grep")
        await pilot.press("escape")
        await wait_idle(app, pilot)
        assert not app.runtime.busy

"""In the app, hostile text shows as pictures and never reaches the terminal raw (issue 8, item 6).

Model output, file contents, tool-call ids/names/arguments, summaries and session titles carry
ESC[2J, OSC 52 (clipboard), OSC 0 (title) and a C1 CSI. The oracle is the exported screen (what
Textual would write to the terminal, minus its own styling): it must hold no ESC and no C1
character, and the pictures (␛) must be there. A lone surrogate in a streamed answer is replaced,
recorded, and the app carries on.
"""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from textual.widgets import Button

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tui.agent.session.factory import SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.screens.evicted_viewer import EvictedViewerScreen
from tui.app.screens.session_picker import SessionPickerScreen
from tui.app.widgets.chat_blocks import CompactionDivider, ToolBlock
from tui.base.config import ContextSettings, Settings
from tui.chain.summary_message import make_summary_message

ESCAPES = "clear \x1b[2J clip \x1b]52;c;aGVsbG8=\x07 title \x1b]0;owned\x07 c1 \x9b2J end"
HOSTILE_ID = "../../x\x1b[2J" + "y" * 300


def screen_is_safe(app: DeepTuiApp) -> str:
    """The exported screen's text, after checking it holds no raw ESC or C1 character."""
    screen = html.unescape(re.sub(r"<[^>]+>", "", app.export_screenshot())).replace("\xa0", " ")
    raw = [char for char in ("\x1b", "\x9b", "\x9d", "\x07") if char in screen]
    assert not raw, f"raw control characters on screen: {raw!r} in {[screen[max(0, screen.find(c) - 80):screen.find(c) + 20] for c in raw]!r}"
    return screen


def hostile_turn_model(file_name: str) -> FunctionModel:
    """First a tool call with a hostile id and name-safe arguments reading ``file_name``; then a hostile answer."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if not any(isinstance(part, ToolReturnPart) for message in messages for part in message.parts):
            yield {0: DeltaToolCall(name="read_file", json_args=f'{{"path": "{file_name}", "limit": 400}}',
                                    tool_call_id=HOSTILE_ID)}
            return
        for piece in ("the file says: ", "clear \x1b[2J", " clip \x1b]52;c;aGVsbG8=\x07",
                      " title \x1b]0;owned\x07", " c1 \x9b2J", " lone \ud800 end"):
            yield piece

    return FunctionModel(stream_function=stream, model_name="hostile")


async def test_a_live_turn_with_escape_codes_shows_pictures_in_chat_tool_block_viewer_and_log(tmp_path: Path) -> None:
    factory = make_factory(tmp_path, chat_model=hostile_turn_model("evil.txt"))
    factory.settings = Settings(context=ContextSettings(large_result_tokens=500))
    (factory.workdir / "evil.txt").write_text(
        "".join(f"row {n} {ESCAPES}\n" for n in range(150)), encoding="utf-8")
    app = make_app(factory)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press(*"read evil.txt", "enter")
        await wait_idle(app, pilot)
        screen = screen_is_safe(app)
        assert "␛[2J" in screen and "lone \N{REPLACEMENT CHARACTER} end" in screen
        tool = app.query_one(ToolBlock)
        assert tool.saved_path is not None, "the output was evicted"
        tool.collapsed = False
        await pilot.pause()
        assert "row 0 clear ␛[2J" in screen_is_safe(app)
        await pilot.click(tool.query_one(".tool-saved", Button))
        await wait_until(pilot, lambda: isinstance(app.screen, EvictedViewerScreen), "the viewer")
        await wait_idle(app, pilot)
        assert "clip ␛]52;c;aGVsbG8=␇" in screen_is_safe(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, EvictedViewerScreen), "the viewer to close")
        await pilot.press("ctrl+l")
        await pilot.pause()
        screen_is_safe(app)
        await pilot.press("ctrl+b")
        await pilot.pause()
        screen_is_safe(app)
        assert app.is_running
    messages = ModelMessagesTypeAdapter.validate_json(
        (factory.data_dir.session_dir(app.runtime.info.session_id) / "messages.json").read_bytes())
    answer = "".join(part.content for part in messages[-1].parts if isinstance(part, TextPart))
    assert "clear \x1b[2J" in answer and "lone \N{REPLACEMENT CHARACTER} end" in answer


def seed_hostile_session(factory) -> str:  # type: ignore[no-untyped-def]
    handle = factory.store.create(model="offline")
    handle.append_messages([
        ModelRequest(parts=[UserPromptPart(f"prompt {ESCAPES}")]),
        ModelResponse(parts=[ToolCallPart("read_file\x1b]0;t\x07", {"path": "a\x1b[2J.txt"}, HOSTILE_ID)]),
        ModelRequest(parts=[ToolReturnPart("read_file\x1b]0;t\x07", f"result {ESCAPES}", HOSTILE_ID)]),
        ModelResponse(parts=[TextPart(f"answer {ESCAPES}")]),
    ])
    handle.append_messages([make_summary_message(f"## Session intent\nsummary {ESCAPES}", strategy="summary",
                                                 kept_from=4, replaced=4, focus="focus \x1b]0;f\x07")])
    handle.append_messages([ModelRequest(parts=[UserPromptPart("after")]), ModelResponse(parts=[TextPart("ok")])])
    handle.close()
    return handle.id


async def test_a_recorded_session_with_escape_codes_opens_safely_everywhere(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    session_id = seed_hostile_session(factory)
    assert "\x1b" not in factory.store.meta(session_id).title
    app = make_app(factory, SessionRequest(resume=session_id))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_idle(app, pilot)
        screen = screen_is_safe(app)
        assert "prompt clear ␛[2J" in screen, "title bar and user block"
        for tool in app.query(ToolBlock):
            tool.collapsed = False
        divider = app.query_one(CompactionDivider)
        divider.collapsed = False
        await pilot.pause()
        assert "summary clear ␛[2J" in screen_is_safe(app) and "focus ␛]0;f␇" in str(divider.title)
        await pilot.click(divider.query_one(".divider-show", Button))
        await wait_until(pilot, lambda: divider.query(".original-line"), "the replaced messages")
        lines = "\n".join(str(line.render()) for line in divider.query(".original-line"))
        assert "result clear ␛[2J" in lines and "answer clear ␛[2J" in lines and "\x1b" not in lines
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPickerScreen), "the picker")
        await wait_idle(app, pilot)
        assert "prompt clear ␛[2J" in screen_is_safe(app)
        await pilot.press("escape")
        await pilot.press("f2")
        await pilot.pause()
        screen_is_safe(app)
        app.notify(f"a toast {ESCAPES}")
        await pilot.pause()
        screen_is_safe(app)


async def test_a_lone_surrogate_in_a_streamed_answer_is_replaced_recorded_and_the_app_carries_on(
        tmp_path: Path) -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for piece in ("partial ", "answer \ud800", " and the rest"):
            await asyncio.sleep(0)
            yield piece

    factory = make_factory(tmp_path, chat_model=FunctionModel(stream_function=stream, model_name="surrogate"))
    app = make_app(factory)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press(*"hello", "enter")
        await wait_idle(app, pilot)
        assert "answer \N{REPLACEMENT CHARACTER} and the rest" in screen_is_safe(app)
        await pilot.press(*"again", "enter")
        await wait_idle(app, pilot)
        assert app.is_running
    messages = ModelMessagesTypeAdapter.validate_json(
        (factory.data_dir.session_dir(app.runtime.info.session_id) / "messages.json").read_bytes())
    answers = ["".join(p.content for p in m.parts if isinstance(p, TextPart)) for m in messages
               if isinstance(m, ModelResponse)]
    assert answers == ["partial answer \N{REPLACEMENT CHARACTER} and the rest"] * 2

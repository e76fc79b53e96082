"""``deep-tui --resume``: the session's last messages are drawn from the raw JSON before the session opens,
replaced by the real transcript once it is, with the view at the bottom and what was typed kept."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic_ai.messages import (
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextContent,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from tests.app.app_support import make_factory, wait_idle, wait_until
from tui.agent.session.request import SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.run import opening_tail
from tui.app.widgets.answer_block import AssistantBlock
from tui.app.widgets.chat_blocks import CompactionDivider, ToolBlock, UserBlock
from tui.app.widgets.chat_view import PAGE_SIZE, ChatView
from tui.app.widgets.history_blocks import blocks_for
from tui.app.widgets.prompt_input import PromptInput
from tui.app.widgets.tail_blocks import tail_blocks
from tui.base.paths import DataDir
from tui.chain.summary_message import make_summary_message
from tui.cli.launch import LaunchContext, open_session
from tui.store.session_tail import read_session_tail

LAST = "LAST-ANSWER-MARK"


def _long_session(tmp_path: Path, turns: int = 60) -> str:
    factory = make_factory(tmp_path)
    handle = factory.store.create(model="offline")
    batch: list[ModelMessage] = []
    for number in range(turns):
        batch += [ModelRequest(parts=[UserPromptPart(f"question {number}")]),
                  ModelResponse(parts=[TextPart(f"answer **{number}**\n\n- one\n- two")])]
    batch[-1] = ModelResponse(parts=[TextPart(f"the end: {LAST}")])
    handle.append_messages(batch)
    handle.close()
    return handle.id


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()  # never leave the opener thread waiting


def _gated_app(tmp_path: Path, session_id: str, gate: threading.Event) -> DeepTuiApp:
    """The app as ``deep-tui --resume ID`` builds it, with an opener that waits for ``gate``."""
    data_dir = DataDir(tmp_path / "data")
    context = LaunchContext(make_factory(tmp_path).settings, data_dir, tmp_path / "work", "offline")
    request = SessionRequest(resume=session_id[:6])

    def opener():  # type: ignore[no-untyped-def]
        assert gate.wait(20), "the test never opened the gate"
        return open_session(context, request)

    return DeepTuiApp.opening(settings=context.settings, memory_path=data_dir.memory_file(),
                              data_root=data_dir.root, opener=opener, tail=opening_tail(data_dir, request))


def _on_screen(app: DeepTuiApp, text: str) -> bool:
    return text in app.export_screenshot().replace("&#160;", " ")


async def test_the_last_messages_show_before_the_session_opens_and_typing_survives(
        tmp_path: Path, gate: threading.Event) -> None:
    session_id = _long_session(tmp_path)
    app = _gated_app(tmp_path, session_id, gate)
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        await wait_until(pilot, lambda: _on_screen(app, LAST), "the last answer on screen")
        assert app.factory is None  # still opening: the opener is held at the gate
        assert chat.max_scroll_y > 0 and chat.scroll_y == chat.max_scroll_y
        assert 0 < len(chat.query(UserBlock)) < PAGE_SIZE // 2  # a screenful, not the whole page
        assert "opening the session" in str(app.query_one("#title-bar").render())
        await pilot.press(*"draft words")

        gate.set()
        await wait_until(pilot, lambda: app.factory is not None, "the session to open")
        await wait_idle(app, pilot)
        assert app.runtime.info.session_id == session_id
        assert app.query_one(PromptInput).text == "draft words"
        assert app.query_one("#load-earlier").display  # the real transcript replaced the tail
        assert len(chat.query(UserBlock)) == PAGE_SIZE // 2
        assert chat.scroll_y == chat.max_scroll_y and _on_screen(app, LAST)


async def test_a_prompt_sent_while_the_tail_shows_is_sent_once_the_session_opens(
        tmp_path: Path, gate: threading.Event) -> None:
    session_id = _long_session(tmp_path)
    app = _gated_app(tmp_path, session_id, gate)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: _on_screen(app, LAST), "the last answer on screen")
        await pilot.press(*"read notes.txt", "enter")
        await pilot.pause()
        assert app.factory is None and len(app.query_one("#queue").children) >= 1  # type: ignore[arg-type]
        gate.set()
        await wait_until(pilot, lambda: app.factory is not None, "the session to open")
        await wait_until(pilot, lambda: app.runtime.history_count() > 120, "the queued prompt's turn")
        await wait_idle(app, pilot)
        assert "beta" in app.query(AssistantBlock).last().received


def _texts(blocks: list[Widget]) -> list[tuple[str, str]]:
    """What each block shows: its kind and its text (title and result for a tool call)."""
    shown: list[tuple[str, str]] = []
    for block in blocks:
        if isinstance(block, AssistantBlock):
            shown.append(("answer", block.received))
        elif isinstance(block, UserBlock):
            shown.append(("you", str(block.render())))
        elif isinstance(block, ToolBlock):
            result = block.query_one(".tool-result", Static).render()
            shown.append(("tool", f"{block.title} | {result} | {block.has_class('-error')} | {block.saved_path}"))
        elif isinstance(block, CompactionDivider):
            shown.append(("divider", f"{block.title} | {block.info.summary} | {block.info.replaced_range}"))
        else:
            shown.append((type(block).__name__, ""))
    return shown


class _Blocks(App[None]):
    """The two renderings side by side, mounted as in the chat."""

    def __init__(self, left: list[Widget], right: list[Widget]) -> None:
        super().__init__()
        self.left, self.right = left, right

    def compose(self) -> ComposeResult:
        yield VerticalScroll(*self.left)
        yield VerticalScroll(*self.right)


@pytest.mark.filterwarnings("ignore:.*RetryPromptPart")  # RetryPromptPart: still in older sessions
async def test_the_tail_is_drawn_as_the_real_transcript_draws_it(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    handle = factory.store.create(model="offline")
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("an early prompt")]),
        make_summary_message("what happened before", strategy="summary", kept_from=3, replaced=2, focus="ids"),
        ModelRequest(parts=[UserPromptPart(["look at", TextContent(content="this"), ImageUrl(url="https://x/cat.png")])]),
        ModelResponse(parts=[TextPart("I will read it."),
                             ToolCallPart("read_file", {"path": "a.txt"}, tool_call_id="c1"),
                             ToolCallPart("ls", '{"path": "."}', tool_call_id="c2"),
                             ToolCallPart("grep", {"pattern": "x"}, tool_call_id="c3"),
                             ToolCallPart("glob", None, tool_call_id="c4")]),
        ModelRequest(parts=[ToolReturnPart("read_file", "line\n" * 30, tool_call_id="c1",
                                           metadata={"deep_tui_evicted_path": "/tmp/saved/c1.txt"}),
                            ToolReturnPart("ls", {"files": ["a.txt", "b.txt"]}, tool_call_id="c2"),
                            RetryPromptPart("no such pattern", tool_name="grep", tool_call_id="c3"),
                            ToolReturnPart("glob", "no match", tool_call_id="c4", outcome="failed")]),
        ModelResponse(parts=[TextPart("# Done\n\n`a.txt` has **30** lines.")]),
    ]
    handle.append_messages(messages)
    handle.close()
    tail = read_session_tail(factory.data_dir, handle.id, PAGE_SIZE)
    recorded = factory.store.open(handle.id, read_only=True).messages.load_range(0, len(messages))
    from_history = blocks_for(recorded, 0, {})
    from_tail = tail_blocks(tail)
    async with _Blocks(from_tail, from_history).run_test(size=(100, 80)) as pilot:
        await pilot.pause()
        assert _texts(from_tail) == _texts(from_history)
        assert "no such pattern" in _texts(from_tail)[6][1] and "a.txt" in _texts(from_tail)[8][1]
    assert [getattr(block, "message_index", None) for block in from_tail] == \
        [getattr(block, "message_index", None) for block in from_history]
    assert len(from_tail) == 9 and all(isinstance(b, (Collapsible, UserBlock, AssistantBlock)) for b in from_tail)


async def test_hostile_bytes_in_the_tail_never_reach_the_terminal(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    handle = factory.store.create(model="offline")
    handle.append_messages([ModelRequest(parts=[UserPromptPart("hi \x1b]52;c;cGF3bmVk\x07 there")]),
                            ModelResponse(parts=[TextPart("clear \x1b[2J screen \x9b31m"),
                                                 ToolCallPart("ls\x1b[31m", {"p": "\x1b[H"}, tool_call_id="c")])])
    handle.close()
    blocks = tail_blocks(read_session_tail(factory.data_dir, handle.id, PAGE_SIZE))
    async with _Blocks(blocks, []).run_test() as pilot:
        await pilot.pause()
        shown = "".join(text for _, text in _texts(blocks))
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
    assert "␛]52;c;cGF3bmVk␇" in shown and "clear ␛[2J screen" in shown

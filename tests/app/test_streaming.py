"""Streamed answers through the real app: the agent never waits for the screen; the result is Markdown."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from rich.style import Style as RichStyle
from textual.widget import Widget

from tests.app.app_support import make_app, make_factory, reply_model, slow_model, wait_idle, wait_until
from tui.app.app import DeepTuiApp
from tui.app.screens.basic_dialogs import ConfirmModal
from tui.app.widgets.answer_block import AnswerSegment, AssistantBlock
from tui.app.widgets.chat_view import ChatView
from tui.app.widgets.growing_text import GrowingText
from tui.app.widgets.live_turn import LiveTurn
from tui.app.widgets.settled_list import ListBlock, SettledList
from tui.app.widgets.settled_prose import SettledProse

ANSWER = """Here is the plan.

## Steps

1. read the file
2. change `tokenize`
3. run the tests
   - with *coverage*
   - and the [docs](https://example.com)
4. four
5. five
6. six
7. seven
8. eight
9. nine
10. ten, a long item that wraps at the width of the chat because it goes on and on and on for a while

- a bullet
- another bullet
  with a second line

```python
def tokenize(text):

    return text.replace("\\r\\n", "\\n").split()
```

A closing paragraph with **bold** and a [link](https://example.com).
"""


def line_model(text: str, delay: float = 0.03) -> FunctionModel:
    """Streams ``text`` line by line, a little slower than frames are drawn."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        for line in text.splitlines(keepends=True):
            await asyncio.sleep(delay)
            yield line

    return FunctionModel(lambda m, i: ModelResponse(parts=[TextPart(text)]), stream_function=stream,
                         model_name="lines")


def _cells(app: DeepTuiApp, widget: Widget) -> list[list[tuple[object, ...]]]:
    """What the screen shows where ``widget`` is, cell by cell: the character and its background and text
    style, and the colour of visible characters."""
    region = widget.region
    assert region.height == widget.outer_size.height, "the whole widget is on screen"
    rows = []
    for strip in app.screen._compositor.render_strips()[region.y:region.bottom]:
        cells: list[tuple[object, ...]] = []
        for segment in strip.crop(region.x, region.right):
            style = segment.style or RichStyle()
            for character in segment.text:
                colour = None if character == " " else style.color
                cells.append((character, colour, style.bgcolor, style.bold, style.italic, style.strike))
        rows.append(cells)
    return rows


async def test_a_streamed_answer_looks_exactly_like_a_full_markdown_render(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, chat_model=line_model(ANSWER)))
    async with app.run_test(size=(100, 70)) as pilot:
        await pilot.press(*"plan", "enter")
        await wait_idle(app, pilot)
        await pilot.pause(0.1)
        streamed = app.query(AssistantBlock).last()
        assert streamed.query(SettledList) and len(streamed.query(AnswerSegment)) > 1, \
            "lists settle into list widgets, the other blocks into Markdown segments"
        assert not streamed.query(GrowingText), "the plain-text tail is gone once the answer is complete"
        assert streamed.source == ANSWER
        shown = _cells(app, streamed)
        await streamed.remove()
        reference = AssistantBlock(ANSWER)  # a recorded answer: rendered by Textual's Markdown all at once
        await app.query_one(ChatView).mount(reference)
        [whole] = reference.query_children(AnswerSegment)
        await wait_until(pilot, whole.ready.is_set, "the reference render")
        await pilot.pause(0.1)
        assert _cells(app, reference) == shown


def _settled_text(answer: AssistantBlock) -> str:
    """The text of an answer's settled blocks (Markdown segments and growing paragraphs), in order."""
    texts = [str(child._markdown) if isinstance(child, AnswerSegment) else child.text
             for child in answer.children if isinstance(child, (AnswerSegment, SettledProse))]
    return "\n\n".join(text.strip() for text in texts)


def _gate_frames(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """Frames wait for the returned event before drawing (a screen that cannot keep up at all)."""
    gate = asyncio.Event()
    original = LiveTurn._draw

    async def gated(self: LiveTurn) -> None:
        await gate.wait()
        await original(self)

    monkeypatch.setattr(LiveTurn, "_draw", gated)
    return gate


async def test_the_agent_finishes_and_records_while_the_screen_is_still_behind(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    long_answer = "".join(f"line {n} of a long answer\n\n" for n in range(400))
    app = make_app(make_factory(tmp_path, chat_model=reply_model(long_answer)))
    gate = _gate_frames(monkeypatch)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"go", "enter")
        # The runtime consumes the whole stream and records the answer although nothing was drawn.
        await wait_until(pilot, lambda: not app.runtime.busy and app.runtime.history_count() == 2, "the run to end")
        [recorded] = [p.content for p in app.runtime.load_history(1, 2)[0].parts]
        assert recorded == long_answer
        assert not app.query(AssistantBlock), "the screen is still behind"
        gate.set()
        await wait_idle(app, pilot)
        answer = app.query(AssistantBlock).last()
        assert answer.received == long_answer
        assert _settled_text(answer).endswith("line 399 of a long answer")


async def test_escape_cancels_mid_stream_and_what_was_received_is_recorded(tmp_path: Path) -> None:
    words = " ".join(f"w{n}" for n in range(400))
    app = make_app(make_factory(tmp_path, chat_model=slow_model(words, delay=0.01)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: app.query(AssistantBlock) and "w30 " in app.query(AssistantBlock).last().received,
                         "part of the answer")
        await pilot.press("escape")
        await wait_idle(app, pilot)
        answer = app.query(AssistantBlock).last()
        received = answer.received
        assert "w399" not in received
        recorded = [p.content for m in app.runtime.load_history(0, app.runtime.history_count()) for p in m.parts
                    if type(p).__name__ == "TextPart"]
        # everything shown is recorded (the run may have taken a delta or two more than it handed out)
        assert recorded and recorded[-1].startswith(received.strip())
        assert _settled_text(answer).endswith(received.strip().split()[-1]), "what was received is on screen"
        assert "cancelled" in " ".join(str(n.render()) for n in app.query(".notice-block"))


async def test_select_copy_and_fork_on_a_streamed_answer(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, chat_model=reply_model(ANSWER)))
    async with app.run_test(size=(100, 60)) as pilot:
        await pilot.press(*"plan", "enter")
        await wait_idle(app, pilot)
        answer = app.query(AssistantBlock).last()
        app.screen._select_all_in_widget(answer)
        await pilot.pause()
        selected = app.screen.get_selected_text() or ""
        assert "Here is the plan." in selected and 'return text.replace' in selected and "closing paragraph" in selected
        await pilot.press("ctrl+c")
        assert app.clipboard == selected
        await pilot.click(answer, offset=(2, 0))  # select the message, as a reader does before forking there
        assert app.focused is answer
        assert answer.message_index == 1
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the fork confirmation")


async def test_the_open_block_can_be_selected_while_it_streams(tmp_path: Path) -> None:
    from tests.app.app_support import gated_model

    model, gate = gated_model("```python\nfirst_line = 1\nsecond_line = 2")
    app = make_app(make_factory(tmp_path, chat_model=model))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: app.query(GrowingText) and "second_line" in app.query(GrowingText).last().text,
                         "the open fence on screen")
        tail = app.query(GrowingText).last()
        assert tail.has_class("-code") and tail.text.startswith("first_line = 1\nsecond_line = 2")
        app.screen._select_all_in_widget(tail)
        await pilot.pause()
        assert "first_line = 1\nsecond_line = 2" in (app.screen.get_selected_text() or "")
        gate.set()
        await wait_idle(app, pilot)


async def test_switching_sessions_while_the_view_catches_up_leaves_the_new_session_clean(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    long_answer = "".join(f"paragraph {n}\n\n" for n in range(200))
    app = make_app(make_factory(tmp_path, chat_model=reply_model(long_answer)))
    gate = _gate_frames(monkeypatch)
    async with app.run_test(size=(100, 30)) as pilot:
        first = app.runtime.info.session_id
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: not app.runtime.busy and app.runtime.history_count() == 2, "the run to end")
        app.action_new_session()  # the runtime is idle: switching is allowed while the view is behind
        await wait_until(pilot, lambda: app.runtime.info.session_id != first
                         and app.query_one(ChatView).runtime is app.runtime, "the new session on screen")
        await pilot.pause(0.1)
        gate.set()
        await wait_idle(app, pilot)
        assert not app.query(AssistantBlock), "the old turn's answer is not drawn into the new session"
        assert not any(worker.group == "turn" and worker.is_running for worker in app.workers)


async def test_far_off_screen_blocks_leave_the_layout_and_come_back_when_scrolled_to(tmp_path: Path) -> None:
    from tui.app.widgets.folding import FoldedSpace

    factory = make_factory(tmp_path, chat_model=line_model(  # headings: Markdown segments, not one growing widget
        "".join(f"## part {n}\n\nparagraph {n}\n\n" for n in range(50)), delay=0.02))
    handle = factory.store.create(model="offline")
    handle.append_messages([message for n in range(10) for message in (
        ModelRequest(parts=[UserPromptPart(f"question {n}")]), ModelResponse(parts=[TextPart(f"answer {n}")]))])
    handle.close()
    from tui.agent.session.factory import SessionRequest

    app = make_app(factory, SessionRequest(resume=handle.id))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"long", "enter")
        chat = app.query_one(ChatView)
        chat_space = chat.query_children(FoldedSpace).first()
        await wait_until(pilot, lambda: chat_space.folded, "the earlier answers, above the view, to fold")
        assert all(not block.display for block in chat_space.folded)
        await wait_idle(app, pilot)
        assert not chat_space.folded, "between turns the whole chat is laid out again"
        answer = app.query(AssistantBlock).last()
        answer_space = answer.query_children(FoldedSpace).first()
        assert answer_space.folded, "the first segments of the long answer stay folded"
        height = chat.virtual_size.height
        chat.scroll_to_widget(answer_space, top=True, animate=False)
        await wait_until(pilot, lambda: not answer_space.folded, "the answer's first items to come back")
        await pilot.pause(0.1)
        assert all(segment.display for segment in answer.query_children(AnswerSegment))
        assert abs(chat.virtual_size.height - height) <= 3, "nothing moved: the blanks had their height"


async def test_a_long_streamed_list_is_one_widget_that_selects_and_copies_as_text(tmp_path: Path) -> None:
    items = "".join(f"- item {n} with *a few* more words\n" for n in range(600))
    app = make_app(make_factory(tmp_path, chat_model=line_model(items + "\nThe end.\n", delay=0.001)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"list", "enter")
        await wait_idle(app, pilot)
        answer = app.query(AssistantBlock).last()
        lists = list(answer.query(SettledList))
        assert sum(settled.item_count for settled in lists) >= 595, "(the first items may settle with Markdown)"
        assert len(answer.query("*")) < 40, "a handful of widgets, not several per item"
        assert answer.query(SettledProse).last().text == "The end."
        last = lists[-1]
        app.screen._select_all_in_widget(last)
        await pilot.pause()
        selected = app.screen.get_selected_text() or ""
        assert selected.splitlines()[-1] == "• item 599 with a few more words"
        await pilot.press("ctrl+c")
        assert app.clipboard == selected


def test_only_plain_lists_leave_markdown_and_the_runs_join_to_the_text() -> None:
    from markdown_it import MarkdownIt

    from tui.app.widgets.settled_list import list_runs, simple_lists

    parser = MarkdownIt("gfm-like")
    fenced = "- a\n\n  ```\n  code\n  ```\n- b\n"
    assert simple_lists(parser.parse(fenced)) is None, "an item holding a code fence is drawn by Markdown"
    text = "Intro\n\n1. one\n2. two\n   - nested *em*\n\n- other marker\n  - deeper\n\n> a quote\n"
    runs = list_runs(text, parser.parse(text))
    assert "".join(source for source, _ in runs) == text
    assert [None if lists is None else [(block.ordered, len(block.items)) for block in lists]
            for _, lists in runs] == [None, [(True, 2), (False, 1)], None]
    odd = "a\u2028b\rc\n\n- x\n"  # lines as markdown-it counts them (\r breaks a line, \u2028 does not)
    assert list_runs(odd, parser.parse(odd))[1][0] == "- x\n"
    [_, (_, [ordered, bullets]), _] = runs
    assert ordered.symbol(1, ordered.symbol_width()) == " 2. "
    in_ordered, in_bullets = ordered.items[1].blocks[1], bullets.items[0].blocks[1]
    assert isinstance(in_ordered, ListBlock) and isinstance(in_bullets, ListBlock)
    assert (in_ordered.symbol(0, 2), in_bullets.symbol(0, 2)) == ("• ", "▪ "), "as Markdown picks bullets by depth"


async def test_the_last_words_are_drawn_before_the_long_block_they_close_is_parsed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long code block whose last line and closing fence come at the end of the answer: the last line is
    painted (plain, in the tail, without the fence) before the whole block is parsed as Markdown, which takes a
    while; then the block is Markdown as usual."""
    code = "".join(f"value_{n} = compute({n})\n" for n in range(300))

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        yield "Here:\n\n```python\n"
        yield code
        await asyncio.sleep(0.4)  # frames draw the open block meanwhile
        paused.set()  # the last words arrive during a pause between frames (a busy CPU's pacing)
        yield "last_line = True\n```\n"

    paused = asyncio.Event()
    frame = LiveTurn._frame

    async def paced_frame(self: LiveTurn) -> None:
        if not paused.is_set():
            await frame(self)

    monkeypatch.setattr(LiveTurn, "_frame", paced_frame)

    model = FunctionModel(lambda m, i: ModelResponse(parts=[TextPart("")]), stream_function=stream,
                          model_name="code")
    painted: list[str] = []
    render_line = GrowingText.render_line

    def recording(self: GrowingText, y: int):  # type: ignore[no-untyped-def]
        strip = render_line(self, y)
        painted.append(strip.text)
        return strip

    monkeypatch.setattr(GrowingText, "render_line", recording)
    painted_at_settle: list[list[str]] = []
    settle = AssistantBlock._settle

    async def recording_settle(self: AssistantBlock, text: str, *, continues_list: bool) -> None:
        if "last_line" in text:
            painted_at_settle.append(list(painted))
        await settle(self, text, continues_list=continues_list)

    monkeypatch.setattr(AssistantBlock, "_settle", recording_settle)
    app = make_app(make_factory(tmp_path, chat_model=model))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"go", "enter")
        await wait_idle(app, pilot)
        await pilot.pause(0.1)
        [before] = painted_at_settle
        assert any("last_line = True" in line for line in before), "painted before the block was parsed"
        assert not any("```" in line for line in before), "the closing fence is not shown as code"
        answer = app.query(AssistantBlock).last()
        assert not answer.query(GrowingText)
        assert "last_line = True" in str(list(answer.query(AnswerSegment))[-1]._markdown)


async def test_each_frame_is_laid_out_and_painted_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A frame's steps (folding blocks above the view, mounting a settled segment, parsing it, growing the tail)
    are drawn inside one batch: the screen is laid out and painted once per frame, not once per step."""
    app = make_app(make_factory(tmp_path, chat_model=line_model("".join(f"paragraph {n}.\n\n" for n in range(60)),
                                                                 delay=0.01)))
    async with app.run_test(size=(80, 24)) as pilot:
        batched: list[bool] = []
        original_draw = LiveTurn._draw

        async def draw(self: LiveTurn) -> None:
            batched.append(app._batch_count > 0)
            await original_draw(self)

        monkeypatch.setattr(LiveTurn, "_draw", draw)
        await pilot.press(*"go", "enter")
        await wait_idle(app, pilot)
        assert len(batched) >= 3 and all(batched[:-1]), batched  # the last: the turn's close, painted as it goes
        assert "paragraph 59." in app.query(AssistantBlock).last().source


PROSE = "".join(f"Paragraph {n} says *something* with `code`, **bold** words and a [link](https://example.com/{n}) "
                f"that go on long enough to wrap at the width of the chat, {'more words ' * (n % 7)}the end.\n\n"
                for n in range(60))


async def test_streamed_prose_is_one_widget_that_looks_exactly_like_markdown(tmp_path: Path) -> None:
    """Paragraphs settle into one growing widget (not one Markdown widget each), drawn cell for cell as Markdown
    draws them, and selectable as text."""
    app = make_app(make_factory(tmp_path, chat_model=line_model(PROSE, delay=0.002)))
    async with app.run_test(size=(100, 400)) as pilot:
        await pilot.press(*"prose", "enter")
        await wait_idle(app, pilot)
        await pilot.pause(0.1)
        streamed = app.query(AssistantBlock).last()
        assert len(streamed.query("*")) < 10, "a handful of widgets, not one per paragraph"
        assert streamed.query(SettledProse) and not streamed.query(AnswerSegment)
        prose = streamed.query(SettledProse).first()
        app.screen._select_all_in_widget(prose)
        await pilot.pause()
        selected = (app.screen.get_selected_text() or "").splitlines()
        assert selected[0].startswith("Paragraph 0 says something with code, bold words and a link")
        assert selected[-1].endswith("the end.") and "Paragraph 59" in " ".join(selected[-3:])
        app.screen.clear_selection()
        await pilot.pause()
        shown = _cells(app, streamed)
        await streamed.remove()
        reference = AssistantBlock(PROSE)
        await app.query_one(ChatView).mount(reference)
        [whole] = reference.query_children(AnswerSegment)
        await wait_until(pilot, whole.ready.is_set, "the reference render")
        await pilot.pause(0.1)
        assert _cells(app, reference) == shown

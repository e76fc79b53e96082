"""An answer or thinking block stopped before the model finished (Esc, quitting mid-turn, a crash) is recorded
``"state": "interrupted"``: reopened, it says so (``⋯ cancelled``) in the first-frame tail and in the full
transcript alike, and a complete answer says nothing of the kind."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ThinkingPart, UserPromptPart
from textual.app import App, ComposeResult
from textual.widget import Widget
from textual.widgets import Static

from tests.app.app_support import make_app, make_factory, slow_model, wait_idle, wait_until
from tests.app.test_snapshots import fixed_ids_and_clock  # noqa: F401  (autouse: fixed ids and clock)
from tui.agent.session.request import SessionRequest
from tui.app.widgets.answer_block import AssistantBlock
from tui.app.widgets.chat_blocks import CUT_SHORT_MARK
from tui.app.widgets.chat_view import ChatView
from tui.app.widgets.history_blocks import blocks_for
from tui.app.widgets.tail_blocks import tail_blocks
from tui.app.widgets.thinking_block import ThinkingBlock
from tui.base.paths import DataDir
from tui.store.session_tail import read_session_tail


class Host(App[None]):
    """Just the given blocks (the tail's, or the history's), as the chat mounts them."""

    def __init__(self, blocks: list[Widget]) -> None:
        super().__init__()
        self.blocks = blocks

    def compose(self) -> ComposeResult:
        yield from self.blocks


def _marks(app_or_widget) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(mark.render()) for mark in app_or_widget.query(".cut-short")]


async def test_an_answer_cut_short_by_escape_is_marked_after_reopening(tmp_path: Path) -> None:
    words = " ".join(f"w{n}" for n in range(400))
    factory = make_factory(tmp_path, chat_model=slow_model(words, delay=0.01))
    app = make_app(factory)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: app.query(AssistantBlock) and "w30 " in app.query(AssistantBlock).last().received,
                         "part of the answer")
        await pilot.press("escape")
        await wait_idle(app, pilot)
        session_id = app.runtime.info.session_id
        await app.runtime.aclose()
    recorded = json.loads((tmp_path / "data" / "sessions" / session_id / "messages.json").read_text())
    assert recorded[-1]["state"] == "interrupted"

    tail = read_session_tail(DataDir(tmp_path / "data"), session_id, 20)
    async with Host(tail_blocks(tail)).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert _marks(pilot.app) == [CUT_SHORT_MARK], "the first-frame tail marks the cut answer"

    reopened = make_app(make_factory(tmp_path), SessionRequest(resume=session_id))
    async with reopened.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: reopened.query(AssistantBlock), "the transcript")
        answer = reopened.query_one(ChatView).query(AssistantBlock).last()
        assert _marks(answer) == [CUT_SHORT_MARK]


def _session_with(tmp_path: Path, *responses: ModelResponse) -> tuple[str, list]:  # type: ignore[type-arg]
    factory = make_factory(tmp_path)
    handle = factory.store.create(model="offline")
    messages = []
    for number, response in enumerate(responses):
        messages += [ModelRequest(parts=[UserPromptPart(f"question {number}")]), response]
    handle.append_messages(messages)
    handle.close()
    return handle.id, messages


async def test_cut_thinking_and_answers_are_marked_in_both_tail_and_history(tmp_path: Path) -> None:
    session_id, messages = _session_with(
        tmp_path,
        ModelResponse(parts=[TextPart("a complete answer")]),
        ModelResponse(parts=[ThinkingPart("I was thinking about")], state="interrupted"),
        ModelResponse(parts=[ThinkingPart("thought through"), TextPart("half an ans")], state="interrupted"),
    )
    tail = read_session_tail(DataDir(tmp_path / "data"), session_id, 20)
    for blocks in (tail_blocks(tail), blocks_for(messages, 0, {})):
        async with Host(blocks).run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            answers = list(pilot.app.query(AssistantBlock))
            thoughts = list(pilot.app.query(ThinkingBlock))
            assert [_marks(answer) for answer in answers] == [[], [CUT_SHORT_MARK]]
            # the first thought was cut (nothing came after it); the second was whole, its answer was cut
            assert [CUT_SHORT_MARK in str(thought.title) for thought in thoughts] == [True, False]


def test_a_cut_answer_reopened_at_80x24(tmp_path: Path, snap_compare) -> None:  # type: ignore[no-untyped-def]
    session_id, _ = _session_with(
        tmp_path,
        ModelResponse(parts=[TextPart("The first answer is complete.")]),
        ModelResponse(parts=[TextPart("The tokenizer now normalizes line endings and then the")], state="interrupted"),
    )
    app = make_app(make_factory(tmp_path), SessionRequest(resume=session_id))

    async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_idle(app, pilot)
        await wait_until(pilot, lambda: len(app.query(AssistantBlock)) == 2 and app.query(Static), "the transcript")

    assert snap_compare(app, terminal_size=(80, 24), run_before=settle)

"""The model's thinking is shown: collapsed and dimmed above its answer, live and when a session is opened."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ThinkingPart
from pydantic_ai.models.function import AgentInfo, DeltaThinkingCalls, DeltaThinkingPart, FunctionModel
from textual.widgets import Static

from tests.app.app_support import make_app, make_factory, wait_idle
from tui.app.widgets.answer_block import AssistantBlock
from tui.app.widgets.chat_view import ChatView
from tui.app.widgets.history_blocks import blocks_for
from tui.app.widgets.thinking_block import ThinkingBlock

THOUGHTS = ["The user wants ", "the parser; ", "check \x1b[2J tokenize first."]


def thinking_model() -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaThinkingCalls]:
        for piece in THOUGHTS:
            yield {0: DeltaThinkingPart(content=piece)}
        yield "Done: the parser is fixed."

    return FunctionModel(lambda m, i: ModelResponse(parts=[ThinkingPart("".join(THOUGHTS)), TextPart("Done")]),
                         stream_function=stream, model_name="thinker")


async def test_streamed_thinking_is_a_collapsed_block_above_the_answer_and_expands_on_click(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, chat_model=thinking_model()))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press(*"fix it", "enter")
        await wait_idle(app, pilot)
        chat = app.query_one(ChatView)
        [thinking] = chat.query(ThinkingBlock)
        answer = chat.query(AssistantBlock).last()
        assert chat.children.index(thinking) < chat.children.index(answer)
        assert thinking.collapsed
        thought = "".join(THOUGHTS).replace("\x1b", "␛")
        assert thinking.text == thought
        assert str(thinking.title) == f"thinking · {len(thought):,} chars"
        await pilot.click(thinking.query_one("CollapsibleTitle"))
        await pilot.pause()
        assert not thinking.collapsed
        shown = str(thinking.query_one(".thinking-text", Static).visual)
        assert "check ␛[2J tokenize first." in shown and "\x1b" not in shown


def test_thinking_in_a_saved_session_is_drawn_as_the_same_block() -> None:
    messages: list[ModelMessage] = [ModelResponse(parts=[ThinkingPart("weigh the options"), TextPart("answer")])]
    blocks = blocks_for(messages, 0, [])
    assert [type(block).__name__ for block in blocks] == ["ThinkingBlock", "AssistantBlock"]
    assert isinstance(blocks[0], ThinkingBlock) and blocks[0].text == "weigh the options"

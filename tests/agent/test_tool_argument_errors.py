"""A call with a wrong argument name gets one clear line naming the expected arguments — what the model reads
and what the chat shows — not pydantic's validation dump."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from textual.widgets import Static

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tui.app.widgets.chat_blocks import ToolBlock


def _wrong_names_then_done(seen: list[str]) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        retries = [part for message in messages if isinstance(message, ModelRequest)
                   for part in message.parts if isinstance(part, ToolReturnPart)]
        if not retries:
            arguments = {"path": "notes.txt", "old_string": "alpha", "new_string": "gamma"}
            yield {0: DeltaToolCall(name="edit_file", json_args=json.dumps(arguments), tool_call_id="e1")}
            return
        seen.append(retries[-1].model_response_str())
        yield "understood"

    return FunctionModel(stream_function=stream)


async def test_a_wrong_argument_name_is_one_line_naming_the_arguments(tmp_path: Path) -> None:
    seen: list[str] = []
    app = make_app(make_factory(tmp_path, chat_model=_wrong_names_then_done(seen), writes="always"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"change alpha", "enter")
        await wait_idle(app, pilot)
        await wait_until(pilot, lambda: app.query(ToolBlock), "the call's block")
        expected = ("Wrong arguments for edit_file: no argument named old_string, new_string; missing old_text, "
                    "new_text. It takes path, old_text, new_text.")
        [said] = seen
        assert said == json.dumps({"error": expected}, separators=(",", ":")), said
        assert "validation error" not in said and "```" not in said and "pydantic" not in said
        block = app.query_one(ToolBlock)
        shown = str(block.query_one(".tool-result", Static).render())
        assert expected in shown and "validation error" not in shown and "\n" not in shown.strip(), shown
        assert block.has_class("-error")
    assert (tmp_path / "work" / "notes.txt").read_text() == "alpha\nbeta\n", "nothing was edited"


def test_the_line_for_a_wrong_type_and_bad_json() -> None:
    from pydantic import TypeAdapter, ValidationError
    from pydantic_ai.tools import ToolDefinition

    from tui.agent.tools.argument_errors import argument_error_line

    tool = ToolDefinition(name="read_file", parameters_json_schema={
        "type": "object", "properties": {"path": {"type": "string"}, "offset": {"type": "integer"}},
        "required": ["path"]})
    try:
        TypeAdapter(dict[str, int]).validate_python({"offset": "ten"})
    except ValidationError as error:
        line = argument_error_line("read_file", tool, error)
    assert line.startswith("Wrong arguments for read_file: offset: Input should be a valid integer")
    assert line.endswith("It takes path, offset (optional).") and "\n" not in line

"""Subagents in the app: a task call is one block (its live activity, then its transcript), its write asks in the
dialog naming it, its cancel button stops only it (the model reads so), and /agents lists the types."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from textual.widgets import Static

from tests.app.app_support import armed_dialog, dialog_answered, make_app, make_factory, wait_idle, wait_until
from tui.app.screens.agents_list import AgentsScreen
from tui.app.screens.write_approval import WriteApprovalScreen
from tui.app.widgets.subagent_block import SubagentBlock

SIZE = (120, 36)
MARK = "You are a subagent of deep-tui's assistant"


def _returns(messages: list[ModelMessage]) -> list[str]:
    return [part.model_response_str() for message in messages if isinstance(message, ModelRequest)
            for part in message.parts if isinstance(part, ToolReturnPart)]


def _call(name: str, args: dict[str, object], call_id: str) -> DeltaToolCalls:
    return {0: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=call_id)}


def delegating_model(subagent_gate: asyncio.Event | None = None) -> FunctionModel:
    """The session's agent hands "read the notes" to a subagent, which writes summary.txt, then answers."""
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        returns = _returns(messages)
        if MARK in (info.instructions or ""):
            if subagent_gate is not None:
                await subagent_gate.wait()
            if not returns:
                yield _call("write_file", {"path": "summary.txt", "content": "alpha beta\n"}, "w1")
            else:
                yield "wrote summary.txt"
            return
        if not returns:
            yield _call("task", {"description": "read the notes", "prompt": "summarize notes.txt into summary.txt"},
                        "t1")
        else:
            yield f"done: {returns[-1][:200]}"

    return FunctionModel(stream_function=stream, model_name="scripted")


async def test_a_subagent_is_one_block_its_write_asks_naming_it_and_its_transcript_opens(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, chat_model=delegating_model()))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"delegate", "enter")
        dialog = await armed_dialog(pilot, WriteApprovalScreen, "the subagent's write dialog")
        asked = str(dialog.query_one("#approval-subagent", Static).render())
        assert asked == "asked by subagent 1 (general-purpose): read the notes"
        await pilot.press("y")
        await dialog_answered(app, pilot, WriteApprovalScreen)
        await wait_idle(app, pilot)
        assert (tmp_path / "work" / "summary.txt").read_text() == "alpha beta\n"
        block = app.screen.query_one(SubagentBlock)
        assert block.activity is not None and block.activity.state == "finished"
        assert "wrote summary.txt" in str(block.query_one(".subagent-activity").render())
        block.scroll_visible()
        await pilot.pause()
        await pilot.click(".subagent-transcript-button")
        await wait_until(pilot, lambda: bool(block.query(".tool-block")), "the subagent's transcript")
        assert "summarize notes.txt" in str(block.query_one(".user-block").render())


async def test_the_cancel_button_stops_only_the_subagent_and_the_model_reads_it(tmp_path: Path) -> None:
    gate = asyncio.Event()  # never set: the subagent's request waits until it is cancelled
    app = make_app(make_factory(tmp_path, chat_model=delegating_model(gate)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"delegate", "enter")
        await wait_until(pilot, lambda: any(block.activity is not None and block.activity.running
                                            for block in app.screen.query(SubagentBlock)), "the subagent to run")
        await pilot.click(".subagent-cancel")
        await wait_idle(app, pilot)
        block = app.screen.query_one(SubagentBlock)
        assert block.activity is not None and block.activity.state == "cancelled"
        assert "The user cancelled subagent 1 (read the notes)" in block.result_preview
        assert not (tmp_path / "work" / "summary.txt").exists()


async def test_slash_agents_lists_the_types(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/agents", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentsScreen), "the agents list")
        assert "general-purpose" in str(app.screen.query_one("#agents-list", Static).render())
        await pilot.click("#agents-close")
        await wait_until(pilot, lambda: not isinstance(app.screen, AgentsScreen), "the list to close")

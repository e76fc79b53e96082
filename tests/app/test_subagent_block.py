"""The chat's block for a subagent: live activity (tool, its own gauge, requests, cost), its transcript from its own
messages.json on demand, and cancel (Esc or the button) reported up to the screen."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from tests.app.app_support import wait_until
from tui.agent.turn_events import SubagentActivity
from tui.app.widgets.subagent_block import SubagentBlock, mini_gauge
from tui.store.messages_file import MessagesFile

STYLES = Path(__file__).resolve().parents[2] / "styles" / "deep_tui.tcss"
SnapCompare = Callable[..., bool]


class BlockApp(App[None]):
    CSS_PATH = STYLES

    def __init__(self, block: SubagentBlock) -> None:
        super().__init__()
        self.block = block
        self.cancelled: list[int] = []

    def compose(self) -> ComposeResult:
        yield self.block

    def on_subagent_block_cancel_requested(self, message: SubagentBlock.CancelRequested) -> None:
        self.cancelled.append(message.number)


def running(history: str = "", **changes: Any) -> SubagentActivity:
    values: dict[str, Any] = dict(call_id="call_1", number=2, name="explore", description="find the config loader",
                                  state="running", tool="grep", tokens=12_400, window=40_000, requests=3,
                                  cost_usd=0.0123, history=history)
    values.update(changes)
    return SubagentActivity(**values)


def write_history(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    MessagesFile(path).append([
        ModelRequest(parts=[UserPromptPart("find where the config is loaded")]),
        ModelResponse(parts=[ToolCallPart("grep", {"pattern": "load_config"}, "c1")]),
        ModelRequest(parts=[ToolReturnPart("grep", "src/config.py:12: def load_config():", "c1")]),
        ModelResponse(parts=[TextPart("The config is loaded in `src/config.py`, line 12.")]),
    ])
    return str(path)


def test_the_gauge_reads_the_subagents_own_window() -> None:
    assert mini_gauge(12_400, 40_000).plain == "▰▰▰▱▱▱▱▱▱▱ 31% 12.4k/40k"
    assert mini_gauge(0, 0).plain == "▱▱▱▱▱▱▱▱▱▱ –"


def test_a_running_subagent_at_80x24(snap_compare: SnapCompare) -> None:
    block = SubagentBlock("call_1", "find the config loader")

    async def run_before(pilot: Pilot[Any]) -> None:
        block.update_activity(running())
        await pilot.pause()

    assert snap_compare(BlockApp(block), terminal_size=(80, 24), run_before=run_before)


def test_a_finished_subagent_with_its_transcript_open_at_60x20(snap_compare: SnapCompare, tmp_path: Path) -> None:
    history = write_history(tmp_path / "subagents" / "2" / "messages.json")
    block = SubagentBlock("call_1", "find the config loader")

    async def run_before(pilot: Pilot[Any]) -> None:
        block.update_activity(running(history, state="finished", tool=None, requests=2,
                                      answer="The config is loaded in src/config.py, line 12."))
        await pilot.pause()  # laid out with the answer's line before the button is clicked
        await pilot.click(".subagent-transcript-button")
        await wait_until(pilot, lambda: bool(block.query(".user-block")))
        await pilot.pause()

    assert snap_compare(BlockApp(block), terminal_size=(60, 20), run_before=run_before)


async def test_esc_and_the_cancel_button_ask_to_cancel_and_the_transcript_toggles(tmp_path: Path) -> None:
    history = write_history(tmp_path / "messages.json")
    block = SubagentBlock("call_1", "\x1b[31mred\x1b[0m description")
    app = BlockApp(block)
    async with app.run_test() as pilot:
        assert "\x1b" not in str(block.query_one(".subagent-title").render())
        block.update_activity(running(history))
        await pilot.pause()
        await pilot.click(".subagent-cancel")
        assert app.cancelled == [2]
        block.focus()
        await pilot.press("escape")
        assert app.cancelled == [2, 2]
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(block.query(".tool-block")))
        assert block.open
        await pilot.click(".subagent-transcript-button")
        assert not block.open
        block.update_activity(running(history, state="cancelled", answer="cancelled by the user"))
        await pilot.pause()
        assert not block.query_one(".subagent-cancel").display and block.has_class("-cancelled")
        await pilot.press("escape")
        assert app.cancelled == [2, 2]  # nothing to cancel any more


async def test_a_task_refused_before_it_started_shows_why() -> None:
    block = SubagentBlock("call_9", "x")
    async with BlockApp(block).run_test() as pilot:
        block.set_result("there is no subagent type 'nobody'; the types are: general-purpose")
        await pilot.pause()
        assert block.has_class("-failed") and "no subagent type" in str(block.query_one(".subagent-activity").render())


def test_the_event_log_and_context_lines_for_subagents() -> None:
    from tui.app.widgets.subagent_rows import subagent_context_lines, subagent_event_row
    from tui.chain.events import SubagentRan

    done = SubagentRan(number=1, name="explore", description="find \x1b[2Jthe loader", outcome="finished", tokens=9_000,
                       peak_tokens=30_000, window=40_000, requests=4, cost_usd=0.0123, compactions=1, answer_chars=812)
    failed = SubagentRan(number=2, name="general-purpose", description="count files", outcome="failed", requests=1,
                         window=40_000, cost_usd=None, reason="provider unreachable")
    row = subagent_event_row(done, ("14:00:00  ", "$text-muted")).plain
    assert row.startswith("14:00:00  ⤷ subagent 1 explore · finished  find ␛[2Jthe loader")
    assert "4 requests · context 9k/40k (peak 30k) · $0.01 · 1 compaction · answer 812 chars" in row
    assert "provider unreachable" in subagent_event_row(failed, ("", "")).plain
    lines = [line.plain for line in subagent_context_lines([done, failed])]
    assert "2 subagents (their context is their own, on their own windows; their cost, price unknown, is in the " \
           "session's):" in lines
    assert any("explore" in line and "peak 30k/40k" in line for line in lines)
    assert subagent_context_lines([]) == []


async def test_the_turns_blocks_follow_their_calls() -> None:
    from tui.app.widgets.subagent_block import SubagentBlocks, task_description

    assert task_description('{"description": "find \\u001b[2J it", "prompt": "x"}') == "find ␛[2J it"
    assert task_description("not json") == "" and task_description("[1]") == ""
    blocks = SubagentBlocks()
    block = blocks.start("call_1", '{"description": "find the loader"}')
    async with BlockApp(block).run_test() as pilot:
        blocks.activity(running())
        blocks.activity(running(call_id="call_other", number=9))  # another call's news: not this block's
        await pilot.pause()
        assert block.number == 2
        assert blocks.finish("call_1", "the answer") and not blocks.finish("call_x", "")
        assert block.result_preview == "the answer"

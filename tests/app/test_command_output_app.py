"""A command printing in ten thousand tiny writes, in the real app: its last lines and exit status in the tool block,
the whole output saved byte for byte (the block opens it), and the exit status shown before the result is ready."""

from __future__ import annotations

import random
from pathlib import Path

from textual.widgets import Static

from tests.agent.shell_support import requires_bwrap
from tests.agent.test_command_output_batches import TINY_WRITES, expected_lines
from tests.app.app_support import make_app, wait_idle, wait_until
from tests.app.test_command_approval import commander
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory
from tui.app.widgets.chat_blocks import ToolBlock
from tui.app.widgets.chat_view import ChatView
from tui.app.widgets.command_output import LINE_CHARS, TAIL_LINES, CommandOutputView
from tui.app.widgets.prompt_input import PromptInput
from tui.base.config import Settings, ToolSettings
from tui.base.paths import DataDir

SIZE = (120, 36)


def factory_for(tmp_path: Path) -> RuntimeFactory:
    work = tmp_path / "work"
    work.mkdir()
    return RuntimeFactory(settings=Settings(tools=ToolSettings(commands="always")), data_dir=DataDir(tmp_path / "data"),
                          workdir=work, choice=choose_model("offline", None), chat_model=commander())


def result_text(block: ToolBlock) -> str:
    return str(block.query_one(".tool-result", Static).render())


@requires_bwrap
async def test_ten_thousand_tiny_writes_end_on_screen_and_are_saved_whole(tmp_path: Path) -> None:
    app = make_app(factory_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        app.query_one(PromptInput).text = TINY_WRITES
        await pilot.press("enter")
        await wait_idle(app, pilot)
        [block] = app.query(ToolBlock)
        assert block.output_view is not None and not block.collapsed
        lines = expected_lines(10_000).splitlines()
        assert block.output_view.shown_text.splitlines() == lines[-TAIL_LINES:]  # the newest lines, in order
        assert block.output_view.lines == 10_000 and "9,988 earlier lines" in str(block.output_view.render())
        assert result_text(block).startswith("[exit status 0 · ")
        assert block.saved_path is not None  # evicted: the whole output on disk, byte for byte
        assert block.saved_path.read_bytes() == (expected_lines(10_000) + result_text(block)).encode("utf-8")
        await pilot.click(block.query_one(".tool-saved"))
        await wait_until(pilot, lambda: len(app.screen_stack) > 1, "the saved output to open")


async def test_the_exit_status_shows_in_the_block_before_the_result(tmp_path: Path) -> None:
    app = make_app(factory_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        chat = app.query_one(ChatView)
        from tui.agent.turn_events import ToolCallStarted

        await chat.add_tool_call(ToolCallStarted("call-1", "execute", '{"command": "make"}'))
        chat.tool_output("call-1", ["building\n", "done\n"])
        await pilot.pause()
        [block] = app.query(ToolBlock)
        assert result_text(block) == "running…"
        chat.tool_output_ended("call-1", "[exit status 2 · 0.3 s]")
        await pilot.pause()
        assert result_text(block) == "[exit status 2 · 0.3 s]" and block.output_view is not None
        assert block.output_view.shown_text == "building\ndone"


def test_pieces_cut_anywhere_show_the_same_newest_lines_as_the_whole_text() -> None:
    rng = random.Random(8)
    for _ in range(400):
        text = "".join(rng.choice(["a", "bb", "\n", "\n\n", "x" * rng.randint(0, 900), "é✓"])
                       for _ in range(rng.randint(0, 60)))
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randint(0, 6))))
        view = CommandOutputView()
        view.feed([text[start:end] for start, end in zip([0, *cuts], [*cuts, len(text)], strict=True)])
        whole = [line[:LINE_CHARS] for line in text.removesuffix("\n").split("\n")] if text else []
        assert view.shown_text == "\n".join(whole[-TAIL_LINES:]), repr(text)
        assert (view.lines, view.chars) == (text.count("\n"), len(text))


def test_a_piece_of_megabytes_shows_its_last_lines() -> None:
    view = CommandOutputView()
    text = "".join(f"line {number}\n" for number in range(1_000_000)) + "half a line"
    view.feed([text])
    assert view.shown_text.splitlines() == [*(f"line {n}" for n in range(1_000_000 - TAIL_LINES + 1, 1_000_000)),
                                            "half a line"]
    assert "999,989 earlier lines" in str(view.render())

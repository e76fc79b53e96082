"""The whole app with a real session: streaming, tools, cancel, commands, gauge, dividers, switching."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.app.app_support import (
    app_on_a_long_session,
    compact_dialog_opened,
    gated_model,
    make_app,
    make_factory,
    read_spec_three_times,
    reply_model,
    slow_model,
    spec_factory,
    wait_idle,
    wait_until,
)
from tui.agent.session.factory import SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.command_palette import DeepTuiCommands
from tui.app.command_registry import COMMANDS
from tui.app.screens.basic_dialogs import ConfirmModal
from tui.app.screens.context_report import ContextScreen
from tui.app.screens.help import HelpScreen
from tui.app.screens.session_picker import SessionPickerScreen
from tui.app.widgets.answer_block import AssistantBlock
from tui.app.widgets.chat_blocks import CompactionDivider, DividerInfo, NoticeBlock, ToolBlock, UserBlock
from tui.app.widgets.chat_view import PAGE_SIZE, ChatView
from tui.app.widgets.event_log import EventLogPanel
from tui.app.widgets.gauge import ContextGauge
from tui.chain.events import CompactionFinished, UsageEvent
from tui.chain.summary_message import make_summary_message


async def test_prompt_streams_a_reply_with_a_collapsed_tool_call(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        assert "offline" in str(app.query_one("#title-bar").render())
        await pilot.press(*"read notes.txt", "enter")
        await wait_idle(app, pilot)
        [tool] = app.query(ToolBlock)
        assert tool.tool_name == "read_file" and tool.collapsed
        answer = app.query(AssistantBlock).last()
        assert "alpha" in answer.received and "beta" in answer.source
        assert app.runtime.history_count() == 4


async def test_a_failing_tool_is_shown_as_an_error_and_the_app_keeps_running(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, writes="always"))  # approval: test_write_approval.py
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"write notes.txt/child hello", "enter")  # notes.txt is a file, not a directory
        await wait_idle(app, pilot)
        assert app.is_running
        [tool] = app.query(ToolBlock)
        assert tool.tool_name == "write_file" and tool.has_class("-error")
        assert app.runtime.history_count() == 4  # prompt, call, failed return, answer: all recorded
        await pilot.press(*"ls", "enter")
        await wait_idle(app, pilot)
        assert "notes.txt" in app.query(AssistantBlock).last().received


async def test_ctrl_j_inserts_a_newline_and_enter_sends_both_lines(tmp_path: Path) -> None:
    from tui.app.widgets.prompt_input import PromptInput

    app = make_app(make_factory(tmp_path, chat_model=reply_model("got it")))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"first line", "ctrl+j", *"second line")
        assert app.query_one(PromptInput).text == "first line\nsecond line"
        assert not app.runtime.busy and app.runtime.history_count() == 0
        await pilot.press("enter")
        await wait_idle(app, pilot)
        assert app.query_one(PromptInput).text == ""
        first = app.runtime.load_history(0, 1)[0]
        assert first.parts[0].content == "first line\nsecond line"  # type: ignore[union-attr]


async def test_markup_in_model_text_and_prompts_is_literal(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, chat_model=reply_model("use [bold] and [/] and [red]x[/red] literally")))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"what is [bold]?", "enter")
        await wait_idle(app, pilot)
        assert "[bold] and [/]" in app.query(AssistantBlock).last().received
        user = app.query(UserBlock).last()
        assert "[bold]?" in str(user.render())


async def test_escape_cancels_a_running_turn_and_keeps_what_was_said(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, chat_model=slow_model()))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: app.query(AssistantBlock) and "slow" in app.query(AssistantBlock).last().received,
                         "the first words of the answer")
        assert app.runtime.busy
        await pilot.press("escape")
        await wait_idle(app, pilot)
        assert not app.runtime.busy
        assert any("cancelled" in str(n.render()) for n in app.query(NoticeBlock))
        assert app.runtime.history_count() >= 1, "the prompt is recorded even though the turn was cancelled"


async def test_the_chat_follows_the_stream_until_the_reader_scrolls_up(tmp_path: Path) -> None:
    words = [f"word{n}" + ("\n\n" if n % 8 == 7 else "") for n in range(240)]
    reader_went_up, bottom_seen = asyncio.Event(), asyncio.Event()
    turns: list[int] = []

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        """Half the answer, then a pause (until the reader has scrolled up on the first turn, until the test has
        seen the view at the bottom on the second), then the rest: the stream is still running while the test
        looks, however slow the machine."""
        turns.append(len(messages))
        for number, word in enumerate(words):
            if number == len(words) // 2:
                await (reader_went_up if len(turns) == 1 else bottom_seen).wait()
            await asyncio.sleep(0.002)
            yield word + " "

    model = FunctionModel(lambda m, i: ModelResponse(parts=[TextPart(" ".join(words))]), stream_function=stream,
                          model_name="paced")
    app = make_app(make_factory(tmp_path, chat_model=model))
    async with app.run_test(size=(100, 24)) as pilot:
        chat = app.query_one(ChatView)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: chat.max_scroll_y > 5, "an answer taller than the view")
        assert app.runtime.busy
        await wait_until(pilot, lambda: chat.scroll_y >= chat.max_scroll_y - 1, "streaming keeps the newest text in view")
        chat.scroll_to(y=0, animate=False)  # the reader goes back up to read
        await pilot.pause()
        grown = chat.max_scroll_y
        reader_went_up.set()
        await wait_until(pilot, lambda: chat.max_scroll_y > grown + 2, "more streamed text")
        assert chat.scroll_y < chat.max_scroll_y - 5, "the stream does not yank the reader down"
        await wait_idle(app, pilot)
        assert chat.scroll_y < chat.max_scroll_y - 5, "the end of the turn leaves the reader where they are"
        await pilot.press(*"again", "enter")  # a new prompt follows the bottom again
        await wait_until(pilot, lambda: app.runtime.busy and chat.scroll_y >= chat.max_scroll_y - 1,
                         "the view back at the bottom")
        bottom_seen.set()
        await wait_idle(app, pilot)


async def test_switching_sessions_mid_stream_is_refused(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, chat_model=slow_model()))
    async with app.run_test(size=(100, 30)) as pilot:
        before = app.runtime.info.session_id
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: app.runtime.busy, "the turn to start")
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: any("A turn is running" in str(n.message) for n in app._notifications),
                         "the refusal")
        assert app.runtime.info.session_id == before
        await pilot.press("escape")
        await wait_idle(app, pilot)


async def test_slash_compact_with_focus_runs_at_once_without_the_dialog(tmp_path: Path) -> None:
    """``/compact FOCUS`` compacts there and then (the dialog is for the bare ``/compact``): the activity line says
    so, the chat gets the divider, a notification the figures, and the log the event."""
    from tui.app.screens.compact_dialog import CompactDialog
    from tui.app.widgets.turn_activity import TurnActivity

    app = make_app(spec_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await read_spec_three_times(app, pilot)
        activity = app.query_one(TurnActivity)
        seen: list[str] = []
        start = activity.start

        def started(doing: str = "") -> None:
            seen.append(doing)
            start(doing)

        activity.start = started  # type: ignore[method-assign]
        await pilot.press(*"/compact keep the notes", "enter")

        def focused_dividers() -> list[CompactionDivider]:
            return [d for d in app.query(CompactionDivider) if "focus: keep the notes" in str(d.title)]

        await wait_until(pilot, focused_dividers, "a divider in the chat for the summary")
        await wait_idle(app, pilot)
        assert not isinstance(app.screen, CompactDialog) and not app.query(CompactDialog)
        [result] = [e for e in app.runtime.past_events() if isinstance(e, CompactionFinished) and e.focus]
        assert result.focus == "keep the notes" and result.strategy == "summary" and result.trigger == "manual"
        assert result.tokens_after < result.tokens_before and result.messages_replaced > 0
        assert f"summarized {result.messages_replaced} messages" in str(focused_dividers()[-1].title)
        assert seen == ["compacting (focus: keep the notes)"]  # the activity line said so while it ran
        await wait_until(pilot, lambda: any(str(n.message).startswith("Compacted summary:")
                                            for n in app._notifications), "the notification with the figures")
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: any(getattr(e, "focus", None) == "keep the notes"
                                            for e in app.query_one(EventLogPanel).visible_events), "the log entry")


async def test_esc_cancels_slash_compact_with_focus_and_leaves_the_history(tmp_path: Path) -> None:
    """The summarizer (an LLM here) is held until Esc: the compaction stops, the chat says the history is
    unchanged, and nothing was recorded as compacted."""
    from tests.app.test_compaction_consent import factory_off

    held = asyncio.Event()

    async def summarize(messages: list, info: AgentInfo) -> ModelResponse:  # type: ignore[type-arg]
        held.set()
        await asyncio.Event().wait()  # never answers: only Esc ends it
        raise AssertionError("unreachable")

    async def chat(messages: list, info: AgentInfo):  # type: ignore[no-untyped-def, type-arg]
        yield "noted."

    class Held:
        def model(self) -> FunctionModel:
            return FunctionModel(summarize, stream_function=chat, model_name="held")

    factory, session_id = factory_off(tmp_path, Held())  # type: ignore[arg-type]  # an LLM summarizer
    app = make_app(factory, SessionRequest(resume=session_id))
    async with app.run_test(size=(120, 36)) as pilot:
        before = app.runtime.history_count()
        await pilot.press(*"/compact keep the IDs", "enter")
        await wait_until(pilot, held.is_set, "the summarizer to be asked")
        await pilot.press("escape")
        await wait_until(pilot, lambda: any("compaction cancelled — the history is unchanged" in str(n.render())
                                            for n in app.query(NoticeBlock)), "the cancellation in the chat")
        await wait_idle(app, pilot)
        assert app.runtime.history_count() == before
        assert not any(isinstance(e, CompactionFinished) for e in app.runtime.past_events())
        assert not app.main_screen.turn_running


async def test_bare_slash_compact_opens_the_dialog(tmp_path: Path) -> None:
    app = make_app(spec_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"/compact", "enter")
        dialog = await compact_dialog_opened(app, pilot)
        assert dialog.result is None and not dialog.has_class("-running")  # it waits for Run


async def test_slash_compact_with_focus_while_a_turn_runs_is_asked_for_the_next_request(tmp_path: Path) -> None:
    model, gate = gated_model()
    app = app_on_a_long_session(tmp_path, model)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: app.runtime.busy, "the turn to start")
        await pilot.press(*"/compact keep the IDs", "enter")
        await wait_until(pilot, lambda: any("runs before its next model request, focused on: keep the IDs"
                                            in str(n.message) for n in app._notifications), "the note")
        gate.set()
        await wait_idle(app, pilot)
        await pilot.press(*"and again", "enter")  # its request at the latest
        await wait_idle(app, pilot)
        assert any(isinstance(e, CompactionFinished) and e.focus == "keep the IDs" for e in app.runtime.past_events())


async def test_compact_while_a_turn_runs_is_scheduled_for_the_next_request(tmp_path: Path) -> None:
    model, gate = gated_model()
    app = app_on_a_long_session(tmp_path, model)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: app.runtime.busy, "the turn to start")
        await pilot.click("#compact-button")
        await compact_dialog_opened(app, pilot)
        await pilot.press(*"keep the IDs", "enter")
        note = app.screen.query_one("#result")
        await wait_until(pilot, lambda: "runs before its next model request" in str(note.render()), "the note")
        await pilot.press("escape")
        gate.set()
        await wait_idle(app, pilot)
        assert not [e for e in app.runtime.past_events() if isinstance(e, CompactionFinished)]
        await pilot.press(*"next", "enter")
        await wait_idle(app, pilot)
        [compaction] = [e for e in app.runtime.past_events() if isinstance(e, CompactionFinished)]
        assert compaction.trigger == "manual" and compaction.focus == "keep the IDs"
        assert compaction.tokens_after < compaction.tokens_before


async def test_context_help_and_palette_come_from_the_registry(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"/context", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen), "/context")
        labels = [row.label for row in app.screen.report.slices]
        assert labels[:2] == ["instructions and memory", "tool definitions"]
        await pilot.press("escape")
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        text = str(app.screen.query_one(".dialog--message").render())
        assert all(f"/{command.name}" in text for command in COMMANDS)
        await pilot.press("escape")
        provider = DeepTuiCommands(app.screen)
        found = [hit.text async for hit in provider.discover()]
        assert found == [f"/{command.name}" for command in COMMANDS]
        footer_keys = {binding.key for binding in app.BINDINGS if hasattr(binding, "key")}
        assert {command.key for command in COMMANDS if command.key} <= footer_keys


async def test_choosing_a_palette_command_runs_it(tmp_path: Path) -> None:
    from textual.command import CommandPalette

    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_idle(app, pilot)
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"context")
        await wait_until(pilot, lambda: palette_choices(app)[:1] == ["/context"], "/context ranked first")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen), "the palette's choice to open /context")


def palette_choices(app) -> list[str]:  # type: ignore[no-untyped-def]
    """The commands the open palette lists, in its order."""
    from textual.command import CommandList

    found = app.screen.query(CommandList)
    return [str(option.prompt).split("\n")[0].strip() for option in found.first().options] if found else []


async def test_the_palette_ranks_a_name_match_above_a_description_match(tmp_path: Path) -> None:
    from textual.command import CommandPalette

    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"context")  # /compact's description says "context" too
        await wait_until(pilot, lambda: len(palette_choices(app)) >= 2, "the matches")
        assert palette_choices(app)[:2] == ["/context", "/compact"]
        for _ in "context":
            await pilot.press("backspace")
        await pilot.press(*"comp")
        await wait_until(pilot, lambda: palette_choices(app)[:1] == ["/compact"], "/compact first for comp")


async def test_markup_in_tool_args_focus_titles_and_commands_never_breaks_the_screen(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"read x[/]y[bold]", "enter")
        await wait_idle(app, pilot)
        [tool] = app.query(ToolBlock)
        assert "x[/]y[bold]" in str(tool.title)
        await pilot.press(*"/nope[/]", "enter")
        await wait_until(pilot, lambda: any("is not a command" in str(n.message) for n in app._notifications),
                         "the unknown-command note")
        app.runtime.rename("main [/] work [bold]")
        app.main_screen.refresh_title()
        app.notify(f"now in {app.runtime.info.title}", markup=False)
        info = DividerInfo(strategy="summary", replaced=3, tokens_before=900, tokens_after=100, retention=0.9,
                           focus="keep [/] the [red]needle", summary="s [/] t", replaced_range=None)
        divider = CompactionDivider(info)
        await app.query_one(ChatView).mount(divider)
        await pilot.pause()
        assert "keep [/] the [red]needle" in str(divider.title)
        assert app.is_running


def _app_reading_a_big_file(tmp_path: Path) -> DeepTuiApp:
    """An app whose agent reads ``big.txt`` when asked ("read big.txt"): a 400-line output, evicted at a 4k window
    (outputs over 1,000 tokens are)."""
    factory = make_factory(tmp_path, window=4_000)
    (factory.workdir / "big.txt").write_text("".join(f"row {n} of a long file\n" for n in range(400)))
    return make_app(factory)


async def test_panel_keys_put_the_keyboard_in_the_panel(tmp_path: Path) -> None:
    from textual.widgets import OptionList, TextArea

    from tui.app.widgets.prompt_input import PromptInput

    app = _app_reading_a_big_file(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"read big.txt", "enter")
        await wait_idle(app, pilot)
        for key, kind, panel in (("ctrl+o", TextArea, "memory-tab"), ("ctrl+l", OptionList, "log-tab"),
                                 ("ctrl+b", OptionList, "evicted-tab")):
            await pilot.press(key)
            await wait_until(pilot, lambda: any(a.id == panel for a in app.focused.ancestors), f"focus in {panel}")  # noqa: B023
            focused = app.focused
            assert isinstance(focused, kind) and not isinstance(focused, PromptInput), (key, focused)
            assert any(ancestor.id == panel for ancestor in focused.ancestors), (key, focused)
        await pilot.press("enter")  # the evicted list's first entry opens in the viewer, by keyboard alone
        await wait_until(pilot, lambda: type(app.screen).__name__ == "EvictedViewerScreen", "the viewer")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.screen_stack[0], "the viewer to close")
        await pilot.press("ctrl+b")  # the same key again closes the panel and gives the prompt back
        await wait_until(pilot, lambda: isinstance(app.focused, PromptInput), "the prompt to have the keyboard")


async def test_an_evicted_output_deleted_from_disk_stays_listed_and_says_so_when_opened(tmp_path: Path) -> None:
    """The evicted list is built from the chain's events alone (no stat per entry on the UI thread): a file
    deleted behind deep-tui's back is still listed, with the size it was saved with, and opening it explains."""
    from textual.widgets import OptionList

    app = _app_reading_a_big_file(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"read big.txt", "enter")
        await wait_idle(app, pilot)
        [saved] = app.runtime.evicted_outputs()
        size = saved.path.stat().st_size
        saved.path.unlink()
        await pilot.press(*"hello", "enter")
        await wait_idle(app, pilot)
        [listed] = app.runtime.evicted_outputs()
        assert listed.path == saved.path and listed.size_bytes == size
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: isinstance(app.focused, OptionList), "the evicted list")
        assert app.query_one("#evicted-list", OptionList).option_count == 1
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("no longer on disk" in str(n.message) for n in app._notifications),
                         "the missing-file notice")
        assert app.screen is app.screen_stack[0]


async def test_gauge_levels_and_assumed_marker(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        gauge = app.query_one(ContextGauge)
        for fraction, level in ((0.30, "-ok"), (0.86, "-warn"), (0.95, "-critical")):
            app.usage = UsageEvent(tokens=int(fraction * 200_000), window=200_000, window_source="default")
            await wait_until(pilot, lambda level=level: gauge.has_class(level), f"the gauge bound to app.usage: {level}")
            assert f"{round(fraction * 100)}%" in str(gauge.render())
        assert "window assumed" in str(gauge.render())
        app.usage = UsageEvent(tokens=1000, window=200_000, window_source="model")
        await wait_until(pilot, lambda: "assumed" not in str(gauge.render()), "the gauge to follow app.usage")
        await pilot.press(*"ls", "enter")
        await wait_idle(app, pilot)
        assert gauge.usage is not None and gauge.usage.window_source == "default", "live usage from the chain"
        assert gauge.usage is app.usage


def seed_session_with_summary(factory, total: int = 30) -> str:  # type: ignore[no-untyped-def]
    handle = factory.store.create(model="offline")
    messages = []
    for number in range(total // 2):
        messages.append(ModelRequest(parts=[UserPromptPart(f"question {number}")]))
        messages.append(ModelResponse(parts=[TextPart(f"answer {number}")]))
    handle.append_messages(messages)
    handle.append_messages([make_summary_message("## Session intent\nthe summary text", strategy="summary",
                                                 kept_from=20, replaced=20)])
    handle.append_messages([ModelRequest(parts=[UserPromptPart("after the summary")])])
    handle.close()
    return handle.id


async def test_divider_expands_and_loads_the_replaced_messages(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    session_id = seed_session_with_summary(factory)
    app = make_app(factory, SessionRequest(resume=session_id))
    async with app.run_test(size=(120, 40)) as pilot:
        divider = app.query_one(CompactionDivider)
        assert "summarized 20 messages" in str(divider.title)
        divider.collapsed = False
        await pilot.pause()
        await pilot.click(".divider-show")
        await wait_until(pilot, lambda: divider.query(".original-line"), "the replaced messages")
        lines = [str(line.render()) for line in divider.query(".original-line")]
        assert len(lines) == 20 and "question 0" in lines[0]
        await pilot.pause()
        originals = divider.query_one(".divider-originals")
        assert originals.outer_size.height == sum(line.outer_size.height for line in divider.query(".original-line")), \
            "the replaced messages take their own height, not a screen of blank space"


async def test_ten_thousand_message_session_opens_at_its_end(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    handle = factory.store.create(model="offline")
    batch = []
    for number in range(5_000):
        batch += [ModelRequest(parts=[UserPromptPart(f"q{number}")]), ModelResponse(parts=[TextPart(f"a{number}")])]
    handle.append_messages(batch)
    handle.close()
    app = make_app(factory, SessionRequest(resume=handle.id))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        chat = app.query_one(ChatView)
        assert app.query(AssistantBlock).last().source == "a4999"
        # + the "load earlier" button and the (empty) space that folds blocks far above the view
        assert len(chat.children) <= PAGE_SIZE + 2 and chat.loaded_from == 10_000 - PAGE_SIZE
        assert await chat.load_earlier() == PAGE_SIZE
        assert len(chat.children) <= 2 * PAGE_SIZE + 2


async def picker_after_a_turn(app, pilot) -> SessionPickerScreen:  # type: ignore[no-untyped-def]
    """One recorded turn (``ls``), then the session picker opened with Ctrl+S."""
    await pilot.press(*"ls", "enter")
    await wait_idle(app, pilot)
    await pilot.press("ctrl+s")
    await wait_until(pilot, lambda: isinstance(app.screen, SessionPickerScreen), "the picker")
    return app.screen


async def test_fork_from_the_picker_records_the_parent(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await picker_after_a_turn(app, pilot)
        parent = app.runtime.info.session_id
        await pilot.press("ctrl+f")  # in the picker: the chosen session is forked, no second question
        await wait_until(pilot, lambda: app.runtime.info.parent == parent, "the fork to open")
        await wait_idle(app, pilot)
        assert app.runtime.info.session_id != parent
        assert app.runtime.history_count() == 4
        assert "fork of" in str(app.query_one("#title-bar").render())
        gauge = app.query_one(ContextGauge).usage
        assert gauge is not None and gauge.tokens > 0, "the fork shows the context it inherited, not a blank gauge"


async def test_picker_filters_renames_and_deletes_with_confirmation(tmp_path: Path) -> None:
    from textual.widgets import OptionList

    from tui.app.screens.basic_dialogs import PromptModal

    factory = make_factory(tmp_path)
    for prompt in ("alpha [bold] notes", "beta deploy plan"):
        handle = factory.store.create(model="offline")
        handle.append_messages([ModelRequest(parts=[UserPromptPart(prompt)]), ModelResponse(parts=[TextPart("ok")])])
        handle.close()
    app = make_app(factory)
    async with app.run_test(size=(120, 36)) as pilot:
        picker = await picker_after_a_turn(app, pilot)
        current = app.runtime.info.session_id
        await pilot.press(*"beta")
        await wait_until(pilot, lambda: [entry.meta.title for entry in picker._shown] == ["beta deploy plan"],
                         "the filter")

        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptModal), "the rename dialog")
        await pilot.press(*"release [/] plan", "enter")  # the old title is pre-selected: typing replaces it

        def titles() -> set[str]:
            return {meta.title for meta in factory.store.list_sessions()}

        await wait_until(pilot, lambda: "release [/] plan" in titles(), "the rename")
        assert "beta deploy plan" not in titles()

        for _ in range(4):
            await pilot.press("backspace")
        await pilot.press(*"alpha")
        await wait_until(pilot, lambda: len(picker._shown) == 1, "the filter")
        await pilot.press("ctrl+d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the delete confirmation")
        await pilot.press("n")  # no: nothing is deleted
        await wait_until(pilot, lambda: app.screen is picker, "back in the picker")
        assert len(factory.store.list_sessions()) == 3
        await pilot.press("ctrl+d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the delete confirmation")
        await pilot.press("y")
        await wait_until(pilot, lambda: titles() == {"release [/] plan", "ls"}, "the delete")

        for _ in range(5):
            await pilot.press("backspace")
        await wait_until(pilot, lambda: len(picker._shown) == 2, "the whole list again")
        [row] = [entry for entry in picker._shown if entry.meta.id == current]
        picker.query_one("#sessions", OptionList).highlighted = picker._shown.index(row)
        await pilot.press("ctrl+r", *"my work", "enter")  # the open session, through its handle
        await wait_until(pilot, lambda: "my work" in titles(), "the rename of the open session")
        await pilot.press("escape")
        await pilot.press(*"ls", "enter")  # the handle writes session.json again: the new title stays
        await wait_idle(app, pilot)
        assert factory.store.meta(current).title == "my work"
        assert "my work" in str(app.query_one("#title-bar").render())


async def test_picker_filter_is_fuzzy_ranked_and_highlighted(tmp_path: Path) -> None:
    from textual.widgets import OptionList

    factory = make_factory(tmp_path)
    for prompt in ("deploy plan", "unrelated chat", "dense employ"):  # the last is the newest: listed first
        handle = factory.store.create(model="offline")
        handle.append_messages([ModelRequest(parts=[UserPromptPart(prompt)]), ModelResponse(parts=[TextPart("ok")])])
        handle.close()
    app = make_app(factory)
    async with app.run_test(size=(120, 36)) as pilot:
        picker = await picker_after_a_turn(app, pilot)

        def shown() -> list[str]:
            return [entry.meta.title for entry in picker._shown]

        await pilot.press(*"deploy")
        # Every word found ranks first, then a fuzzy match of the title (d-e-p-l-o-y in "dense employ").
        await wait_until(pilot, lambda: shown() == ["deploy plan", "dense employ"], "the ranked filter")
        fuzzy_row = picker.query_one(OptionList).get_option_at_index(1).prompt
        marked = "".join(str(fuzzy_row)[span.start:span.end] for span in fuzzy_row.spans
                         if "underline" in str(span.style))
        assert marked == "deploy", "the matched characters are highlighted"
        await pilot.press(*" pln")
        await wait_until(pilot, lambda: shown() == ["deploy plan"], "a fuzzy word narrows it")


async def test_the_picker_opened_again_is_fresh(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        picker = await picker_after_a_turn(app, pilot)
        first_id = app.runtime.info.session_id
        await pilot.press(*"zzz")
        await wait_until(pilot, lambda: picker._shown == [], "the filter")
        await pilot.press("ctrl+n")  # a new session: the picker closes, the app switches
        await wait_until(pilot, lambda: app.runtime.info.session_id != first_id, "the new session")
        await wait_idle(app, pilot)
        await pilot.press(*"read notes.txt", "enter")
        await wait_idle(app, pilot)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.screen is picker, "the same picker, kept between openings")
        assert picker.filter_input.value == "" and picker.current_id == app.runtime.info.session_id
        assert {entry.meta.id for entry in picker._shown} == {first_id, app.runtime.info.session_id}
        await pilot.press("escape")


async def test_the_screen_comes_first_and_the_session_opens_behind_it(tmp_path: Path) -> None:
    from tui.app.app import DeepTuiApp
    from tui.base.paths import DataDir
    from tui.cli.launch import LaunchContext, open_session

    factory = make_factory(tmp_path)
    context = LaunchContext(factory.settings, DataDir(tmp_path / "data"), tmp_path / "work", "offline")
    app = DeepTuiApp.opening(settings=context.settings, memory_path=context.data_dir.memory_file(),
                             data_root=context.data_dir.root,
                             opener=lambda: open_session(context, SessionRequest()))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"read notes.txt", "enter")  # typed while opening: kept, sent once open
        await wait_until(pilot, lambda: app.factory is not None, "the session to open")
        assert app.runtime.info.session_id and "offline" in str(app.query_one("#title-bar").render())
        await wait_idle(app, pilot)
        assert "beta" in app.query(AssistantBlock).last().received
        assert app.runtime.history_count() == 4
        await pilot.press(*"ls", "enter")
        await wait_idle(app, pilot)
        assert "notes.txt" in app.query(AssistantBlock).last().received


async def test_a_session_that_cannot_open_ends_the_app_with_status_2(tmp_path: Path) -> None:
    from tui.app.app import DeepTuiApp
    from tui.base.paths import DataDir
    from tui.cli.launch import LaunchContext, open_session

    factory = make_factory(tmp_path)
    context = LaunchContext(factory.settings, DataDir(tmp_path / "data"), tmp_path / "work", "offline")
    app = DeepTuiApp.opening(settings=context.settings, memory_path=context.data_dir.memory_file(),
                             data_root=context.data_dir.root,
                             opener=lambda: open_session(context, SessionRequest(resume="deadbeef")))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.return_code is not None, "the app to end itself")
    assert app.return_code == 2 and "deadbeef" in (app.startup_error or "")
    assert not (tmp_path / "data" / "sessions").exists() or not any((tmp_path / "data" / "sessions").iterdir())


async def test_copy_uses_osc52_and_a_system_tool_when_present(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import shutil
    import stat

    tools = tmp_path / "bin"
    tools.mkdir()
    sink = tmp_path / "clipboard.txt"
    fake = tools / "xclip"
    fake.write_text(f"#!/bin/sh\n{shutil.which('cat')} > {sink}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(tools))
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        app.copy_to_clipboard("the [bold] selection")
        assert app.clipboard == "the [bold] selection"
        await wait_until(pilot, lambda: sink.exists() and sink.read_text() == "the [bold] selection", "xclip")
        await wait_until(pilot, lambda: any("via terminal and xclip" in str(n.message) for n in app._notifications),
                         "the toast")


async def test_a_hanging_clipboard_tool_does_not_freeze_the_app(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import shutil
    import stat

    tools = tmp_path / "bin"
    tools.mkdir()
    sink, gate = tmp_path / "clipboard.txt", tmp_path / "gate"
    fake = tools / "xclip"  # waits (up to 1.5 s, under the 2 s limit) for the test to open the gate
    fake.write_text(f"#!/bin/sh\nfor i in $(seq 30); do [ -e {gate} ] && break; {shutil.which('sleep')} 0.05; done\n"
                    f"{shutil.which('cat')} > {sink}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(tools))
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        app.copy_to_clipboard("copied while the tool waits")
        # Back on the UI thread while the tool still waits: the gate is not open yet, nothing written.
        assert app.clipboard == "copied while the tool waits" and not sink.exists()
        gate.touch()
        await wait_until(pilot, lambda: sink.exists() and sink.read_text() == "copied while the tool waits", "xclip")
        await wait_until(pilot, lambda: any("via terminal and xclip" in str(n.message) for n in app._notifications),
                         "the toast after the tool finished")


async def test_scrolling_to_the_top_loads_the_previous_page(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    handle = factory.store.create(model="offline")
    batch = []
    for number in range(100):
        batch += [ModelRequest(parts=[UserPromptPart(f"q{number}")]), ModelResponse(parts=[TextPart(f"a{number}")])]
    handle.append_messages(batch)
    handle.close()
    app = make_app(factory, SessionRequest(resume=handle.id))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        chat = app.query_one(ChatView)
        assert chat.loaded_from == 200 - PAGE_SIZE
        chat.scroll_home(animate=False)
        await wait_until(pilot, lambda: chat.loaded_from < 200 - PAGE_SIZE, "the previous page")
        assert chat.loaded_from == 200 - 2 * PAGE_SIZE
        await wait_until(pilot, lambda: chat.scroll_y > 0, "the reader kept where they were, not at the new top")


async def test_events_jsonl_is_read_once_when_the_session_opens(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tui.store.events_file import EventLog

    reads: list[Path] = []
    original = EventLog.read

    def counted(self: EventLog) -> list[dict[str, object]]:
        reads.append(self.path)
        return original(self)

    monkeypatch.setattr(EventLog, "read", counted)
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"read notes.txt", "enter")
        await wait_idle(app, pilot)
        for key in ("ctrl+l", "ctrl+l", "ctrl+e", "ctrl+e"):  # the log and the evicted outputs, shown and hidden
            await pilot.press(key)
        await pilot.press(*"ls", "enter")
        await wait_idle(app, pilot)
        usage = [event for event in app.runtime.past_events() if isinstance(event, UsageEvent)]
        assert len(usage) >= 2, "the events of this run are kept, without reading the file again"
        on_disk = (tmp_path / "data" / "sessions" / app.runtime.info.session_id / "events.jsonl").read_text()
        assert len(on_disk.splitlines()) == len(app.runtime.past_events())
    assert len(reads) == 1

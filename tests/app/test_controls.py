"""Issue 11.1: every clickable control works when clicked (not only its key) — status bar, footer, dialogs,
chat blocks, side panels."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from textual.widgets import Button, Tab
from textual.widgets._footer import FooterKey

from tests.app.app_support import (
    compact_dialog_opened,
    make_app,
    make_factory,
    read_spec_three_times,
    spec_factory,
    wait_idle,
    wait_until,
)
from tui.agent.session.factory import SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.screens.basic_dialogs import ConfirmModal, PromptModal, TextViewerModal
from tui.app.screens.compact_dialog import CompactDialog
from tui.app.screens.context_report import ContextScreen
from tui.app.screens.evicted_viewer import EvictedViewerScreen
from tui.app.screens.help import HelpScreen
from tui.app.screens.session_picker import SessionPickerScreen
from tui.app.widgets.chat_blocks import CompactionDivider, ToolBlock, UserBlock
from tui.app.widgets.chat_view import ChatView
from tui.app.widgets.memory_editor import MemoryEditor
from tui.app.widgets.prompt_input import PromptInput
from tui.chain.events import CompactionFinished
from tui.chain.summary_message import make_summary_message


def summarized_session(factory) -> str:  # type: ignore[no-untyped-def]
    """30 messages, a summary of the first 20, and an answered prompt after it (more than one page)."""
    handle = factory.store.create(model="offline")
    for number in range(15):
        handle.append_messages([ModelRequest(parts=[UserPromptPart(f"question {number}")]),
                                ModelResponse(parts=[TextPart(f"answer {number}")])])
    handle.append_messages([make_summary_message("## Session intent\nthe summary text", strategy="summary",
                                                 kept_from=20, replaced=20)])
    handle.append_messages([ModelRequest(parts=[UserPromptPart("after the summary")]),
                            ModelResponse(parts=[TextPart("noted")])])
    handle.close()
    return handle.id


def on_main_screen(app: DeepTuiApp) -> bool:
    return app.screen is app.screen_stack[0]


def footer_key(app: DeepTuiApp, key: str) -> FooterKey:
    return next(item for item in app.query(FooterKey) if item.key == key)


async def test_the_compact_button_opens_the_dialog_and_its_buttons_run_and_close(tmp_path: Path) -> None:
    app = make_app(spec_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await read_spec_three_times(app, pilot)
        await pilot.click("#compact-button")  # crashed: the Pressed message arrived as the focus text
        dialog = await compact_dialog_opened(app, pilot)
        assert app.is_running
        await pilot.click("#focus")
        await pilot.press(*"the IDs")
        await pilot.click("#run")
        await wait_until(pilot, lambda: dialog.result is not None, "the compaction")
        assert isinstance(dialog.result, CompactionFinished) and dialog.result.focus == "the IDs"
        await pilot.click("#close")
        await wait_until(pilot, lambda: on_main_screen(app), "the dialog to close")
        assert isinstance(app.focused, PromptInput)


async def test_footer_keys_and_dialog_close_buttons_work_by_click(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(140, 36)) as pilot:
        await pilot.press(*"ls", "enter")
        await wait_idle(app, pilot)
        for key, kind in (("f1", HelpScreen), ("f2", ContextScreen)):
            await pilot.click(footer_key(app, key))
            await wait_until(pilot, lambda: isinstance(app.screen, kind), kind.__name__)  # noqa: B023
            await pilot.click(app.screen.query(Button).last())
            await wait_until(pilot, lambda: on_main_screen(app), f"{kind.__name__} to close")
        await pilot.click(footer_key(app, "ctrl+g"))
        await wait_until(pilot, lambda: isinstance(app.screen, CompactDialog), "the compact dialog")
        await pilot.click("#close")
        await wait_until(pilot, lambda: on_main_screen(app), "the compact dialog to close")


async def test_the_picker_buttons_work_by_click(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    app = make_app(factory)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"ls", "enter")
        await wait_idle(app, pilot)
        first = app.runtime.info.session_id

        async def picker() -> SessionPickerScreen:
            await pilot.click(footer_key(app, "ctrl+s"))
            await wait_until(pilot, lambda: isinstance(app.screen, SessionPickerScreen), "the picker")
            await wait_idle(app, pilot)  # the listing read from disk after the first paint
            assert isinstance(app.screen, SessionPickerScreen)
            return app.screen

        def button(screen: SessionPickerScreen, label: str) -> Button:
            return next(b for b in screen.query(Button) if str(b.label).startswith(label))

        screen = await picker()
        await pilot.click(button(screen, "Rename"))
        await wait_until(pilot, lambda: isinstance(app.screen, PromptModal), "the rename dialog")
        await pilot.click("#cancel")
        await wait_until(pilot, lambda: app.screen is screen, "back in the picker")
        await pilot.click(button(screen, "New"))
        await wait_until(pilot, lambda: app.runtime.info.session_id != first, "a new session")
        await wait_idle(app, pilot)
        assert isinstance(app.focused, PromptInput)
        second = app.runtime.info.session_id
        await pilot.press(*"ls", "enter")
        await wait_idle(app, pilot)
        screen = await picker()
        await pilot.press(*first[:8])  # the filter matches ids: only the other (first) session is left
        await wait_until(pilot, lambda: [entry.meta.id for entry in screen._shown] == [first], "the filter")
        await pilot.click(button(screen, "Delete"))
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the delete confirmation")
        await pilot.click("#cancel")
        await wait_until(pilot, lambda: app.screen is screen, "back in the picker")
        await pilot.click(button(screen, "Open"))
        await wait_until(pilot, lambda: app.runtime.info.session_id == first, "the first session again")
        await wait_idle(app, pilot)
        screen = await picker()
        await pilot.click(button(screen, "Fork"))
        await wait_until(pilot, lambda: app.runtime.info.parent == first, "the fork")
        await wait_idle(app, pilot)
        screen = await picker()
        await pilot.click(button(screen, "Close"))
        await wait_until(pilot, lambda: on_main_screen(app), "the picker to close")
        assert {meta.id for meta in factory.store.list_sessions()} >= {first, second}


async def test_chat_blocks_work_by_click(tmp_path: Path) -> None:
    factory = make_factory(tmp_path, window=4_000)  # outputs over 1,000 tokens are evicted
    (factory.workdir / "big.txt").write_text("".join(f"row {n} of a long file\n" for n in range(400)))
    session = summarized_session(factory)
    app = make_app(factory, SessionRequest(resume=session))
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.query_one(ChatView)
        earlier = chat.query_one("#load-earlier", Button)
        assert earlier.display
        chat.scroll_home(animate=False)
        await wait_until(pilot, lambda: chat.loaded_from == 0, "the earlier page")  # scrolling there loads it
        await pilot.press(*"read big.txt", "enter")
        await wait_idle(app, pilot)
        tool = app.query(ToolBlock).last()
        assert tool.saved_path is not None and tool.collapsed
        chat.scroll_to_widget(tool, animate=False)
        await pilot.pause()
        await pilot.click(tool.query_one("CollapsibleTitle"))
        await wait_until(pilot, lambda: not tool.collapsed, "the tool block to expand")
        saved = tool.query_one(".tool-saved", Button)
        await pilot.pause()  # the expanded block laid out, then scrolled to
        chat.scroll_to_widget(saved, animate=False, top=True)
        await pilot.pause()
        await pilot.click(saved)
        await wait_until(pilot, lambda: isinstance(app.screen, EvictedViewerScreen), "the viewer")
        viewer = app.screen
        await wait_idle(app, pilot)  # the file loaded in its worker
        await pilot.click("#viewer-search")
        await pilot.press(*"row 1")
        await pilot.click("#viewer-next")
        await pilot.click("#viewer-prev")
        assert viewer.current_match is not None and len(viewer.matches) > 2
        await pilot.click("#viewer-copy")
        assert app.clipboard == str(tool.saved_path)
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: on_main_screen(app), "the viewer to close")
        divider = app.query_one(CompactionDivider)
        await pilot.pause()
        chat.scroll_to_widget(divider, animate=False, top=True)
        await pilot.pause()
        await pilot.click(divider.query_one("CollapsibleTitle"))
        await wait_until(pilot, lambda: not divider.collapsed, "the divider to expand")
        await pilot.click(divider.query_one(".divider-show", Button))
        await wait_until(pilot, lambda: divider.query(".original-line"), "the replaced messages")
        user = app.query(UserBlock).first()
        await pilot.pause()
        chat.scroll_to_widget(user, animate=False, top=True)
        await pilot.pause()
        await pilot.click(user)  # selects it (e.g. to copy); typing still goes to the prompt
        assert app.focused is user
        await pilot.press(*"typed")
        assert app.query_one(PromptInput).text == "typed" and isinstance(app.focused, PromptInput)


async def test_side_panel_tabs_lists_and_buttons_work_by_click(tmp_path: Path) -> None:
    factory = make_factory(tmp_path, window=4_000)
    (factory.workdir / "big.txt").write_text("".join(f"row {n} of a long file\n" for n in range(400)))
    app = make_app(factory)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press(*"read big.txt", "enter")
        await wait_idle(app, pilot)
        await pilot.click(footer_key(app, "ctrl+o"))
        editor = app.query_one(MemoryEditor)
        await wait_until(pilot, lambda: editor.text_area.has_focus, "the memory editor")
        editor.text_area.insert("- clicked save\n")
        await pilot.click("#memory-save")
        await wait_until(pilot, lambda: editor.path.exists() and "clicked save" in editor.path.read_text(), "the save")
        editor.text_area.insert("- not kept\n")
        await pilot.click("#memory-revert")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the revert confirmation")
        await pilot.click("#confirm")
        await wait_until(pilot, lambda: "not kept" not in editor.text, "the revert")

        tabs = {str(tab.label): tab for tab in app.query(Tab)}
        await pilot.click(tabs["Log"])
        await wait_until(pilot, lambda: app.query_one("#side").active == "log-tab", "the log tab")
        await pilot.pause()
        await pilot.click("#event-list", offset=(4, 0))
        await wait_until(pilot, lambda: isinstance(app.screen, TextViewerModal), "the event's details")
        await pilot.click("#close")
        await wait_until(pilot, lambda: on_main_screen(app), "the details to close")
        await pilot.click(tabs["Evicted"])
        await wait_until(pilot, lambda: app.query_one("#side").active == "evicted-tab", "the evicted tab")
        await pilot.pause()
        await pilot.click("#evicted-list", offset=(4, 0))
        await wait_until(pilot, lambda: isinstance(app.screen, EvictedViewerScreen), "the viewer")
        await pilot.press("escape")
        await wait_until(pilot, lambda: on_main_screen(app), "the viewer to close")
        await pilot.click(tabs["Memory"])
        await wait_until(pilot, lambda: app.query_one("#side").active == "memory-tab", "the memory tab")

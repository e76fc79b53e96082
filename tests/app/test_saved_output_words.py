"""Issue 22.11, the words around a saved (evicted) output, in the real app: the tool block says how much was shown
and how much saved, the viewer's language is the read file's, the log names what was read (the saved file second),
and the log's details are sentences, not a field dump."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, OptionList, Static

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tui.agent.session.factory import SessionRequest
from tui.app.screens.basic_dialogs import TextViewerModal
from tui.app.screens.evicted_viewer import EvictedViewerScreen
from tui.app.widgets.chat_blocks import ToolBlock
from tui.app.widgets.chat_view import ChatView
from tui.app.widgets.event_log import EventLogPanel
from tui.chain.events import EvictedEvent

SOURCE = "".join(f"def function_{n}(value):\n    return value * {n}\n\n" for n in range(300))


def _factory(tmp_path: Path):  # type: ignore[no-untyped-def]
    factory = make_factory(tmp_path, window=4_000)
    (factory.workdir / "big.py").write_text(SOURCE, encoding="utf-8")
    return factory


def _read_block(app) -> ToolBlock:  # type: ignore[no-untyped-def]
    [block] = [block for block in app.query(ToolBlock) if block.tool_name == "read_file"]
    return block


async def test_a_saved_outputs_block_viewer_and_log_say_what_was_read_and_how_much(tmp_path: Path) -> None:
    factory = _factory(tmp_path)
    app = make_app(factory)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"read big.py", "enter")
        await wait_idle(app, pilot)
        [saved] = app.runtime.evicted_outputs()
        whole = len(saved.path.read_text(encoding="utf-8"))
        block = _read_block(app)
        title = str(block.title)
        assert f"of {whole:,} chars shown, all saved to disk" in title, title

        chat = app.query_one(ChatView)
        chat.scroll_to_widget(block, animate=False)
        await pilot.pause()
        await pilot.click(block.query_one("CollapsibleTitle"))
        await wait_until(pilot, lambda: not block.collapsed, "the tool block to expand")
        button = block.query_one(".tool-saved", Button)
        await pilot.pause()
        chat.scroll_to_widget(button, animate=False, top=True)
        await pilot.pause()
        await pilot.click(button)
        await wait_until(pilot, lambda: isinstance(app.screen, EvictedViewerScreen), "the viewer")
        viewer = app.screen
        await wait_until(pilot, lambda: viewer.loaded is not None, "the saved output")
        info = str(viewer.query_one("#viewer-info", Static).render())
        assert info.endswith(" · python"), info
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.screen_stack[0], "the viewer to close")

        await pilot.press("ctrl+l")
        panel = app.query_one(EventLogPanel)
        await wait_until(pilot, lambda: any(isinstance(event, EvictedEvent) for event in panel.visible_events),
                         "the eviction in the log")
        row = next(index for index, event in enumerate(panel.visible_events) if isinstance(event, EvictedEvent))
        option_list = panel.query_one("#event-list", OptionList)
        text = str(option_list.get_option_at_index(row * 2).prompt)  # a separator between rows
        first_line, second_line = text.split("\n")
        assert "evicted read_file big.py" in first_line and saved.path.name not in first_line
        assert f"saved as {saved.path.name}" in second_line
        await pilot.click(option_list, offset=(2, 2 * row + 1))  # rows are two lines; a separator takes none
        await wait_until(pilot, lambda: isinstance(app.screen, TextViewerModal), "the event's details")
        details = str(app.screen.query_one("#viewer-body Static", Static).render())
        assert "From: read_file big.py" in details and f"Saved as: {saved.path}" in details
        assert "Size: " in details and "about" in details and "tool_call_id" not in details
        assert "size_bytes" not in details and "tokens:" not in details


async def test_the_block_says_the_same_after_reopening(tmp_path: Path) -> None:
    factory = _factory(tmp_path)
    app = make_app(factory)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"read big.py", "enter")
        await wait_idle(app, pilot)
        session = app.runtime.info.session_id
        [saved] = app.runtime.evicted_outputs()
        live = str(_read_block(app).title)
    await app.runtime.aclose()  # the session's lock, for the second app
    whole = len(saved.path.read_text(encoding="utf-8"))
    reopened = make_app(factory, SessionRequest(resume=session))
    async with reopened.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: any(block.tool_name == "read_file" for block in reopened.query(ToolBlock)),
                         "the reopened session")
        await wait_until(pilot, lambda: "chars shown" in str(_read_block(reopened).title), "the result")
        title = str(_read_block(reopened).title)
        assert f"of {whole:,} chars shown, all saved to disk" in title and title == live


NUMBERED_PYTHON = "".join(f"{number:>6}\t{line}\n" for number, line in enumerate(SOURCE.splitlines(), 1))
"""read_file's output of a Python file, as saved: Pygments guesses it as some other language entirely."""


async def test_the_viewer_names_the_read_files_language_or_none(tmp_path: Path) -> None:
    from tests.app.test_evicted_browser import BrowserApp, open_first_viewer

    saved = tmp_path / "call_1-abc.txt"
    saved.write_text(NUMBERED_PYTHON, encoding="utf-8")
    app = BrowserApp([])
    async with app.run_test(size=(120, 30)) as pilot:
        for source, label in (("src/big.py", " · python"), (None, "")):
            await app.push_screen(EvictedViewerScreen(saved, source_path=source))
            viewer = await open_first_viewer(app)
            await wait_until(pilot, lambda: viewer.loaded is not None, "the saved output")  # noqa: B023
            info = str(viewer.query_one("#viewer-info", Static).render())
            assert info.endswith(f"{saved.stat().st_size} B{label}") or info.endswith(f"KiB{label}"), info
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is app.screen_stack[0], "the viewer to close")


def test_the_log_row_names_what_was_read_and_the_saved_file_second() -> None:
    from datetime import UTC

    from tui.app.widgets.event_log import event_row

    event = EvictedEvent(timestamp=0, tool_name="grep", tool_call_id="call_1795", path="/d/call_1795-abc.txt",
                         tokens=7_600, size_bytes=30_720, args='{"pattern": "TODO", "path": "src"}')
    first, second = str(event_row(event, now=0, tz=UTC)).split("\n")
    assert "evicted grep 'TODO' in src" in first and "call_1795" not in first
    assert second.strip() == "saved as call_1795-abc.txt"


def test_event_details_are_labelled_sentences_not_a_field_dump() -> None:
    from datetime import UTC

    from tui.app.widgets.event_details import event_details
    from tui.chain.events import CompactionFailed, CompactionFinished

    finished = CompactionFinished(timestamp=0, strategy="summary", trigger="auto", tokens_before=170_000,
                                  tokens_after=40_000, messages_replaced=42, retention_score=0.92,
                                  missing_identifiers=("src/app.py",), summary_index=57, priced=True,
                                  cost_usd=0.0042, cost_requests=2, saves_usd_per_request=0.29)
    text = str(event_details(finished, UTC))
    assert text.startswith("Compaction at 1970-01-01 00:00:00")
    for sentence in ("What happened: Old turns summarized, automatically, as the context passed its threshold.",
                     "Context: 170k → 40k tokens (130k freed)", "Replaced: 42 messages",
                     "Retention: 92% of the identifiers", "Not in the summary (1):\n    src/app.py",
                     "The summary: message 58 of the session",
                     "Cost: $0.0042 for 2 summarizer requests; each later request costs about $0.29 less"):
        assert sentence in text, sentence
    for field_name in ("priced", "cost_usd", "tokens_before", "summary_index", "True", "None", "strategy:"):
        assert field_name not in text, field_name
    failed = str(event_details(CompactionFailed(timestamp=0, strategy="summary", trigger="manual", tokens=120_000,
                                                reason="summarizer timed out"), UTC))
    assert "the history is exactly as it was" in failed and "Why: summarizer timed out" in failed
    assert failed.split("\n")[1] == ("What happened: A summary of old turns was tried on request (/compact or Ctrl+G) "
                                      "and failed; the history is exactly as it was.")
    assert "Cost: not recorded" in failed and "priced:" not in failed

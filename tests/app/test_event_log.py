"""EventLogPanel: newest first, totals, failure reasons, literal text, bounded list."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import OptionList, Static

from tui.app.screens.basic_dialogs import TextViewerModal
from tui.app.widgets.event_log import MAX_VISIBLE_EVENTS, EventLogPanel, compact_timestamp, event_row
from tui.chain.events import (
    ChainEvent,
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    EvictedEvent,
    UsageEvent,
)

STYLES = Path(__file__).resolve().parents[2] / "styles" / "panels.tcss"
BASE = datetime(2026, 3, 4, 14, 0, 0, tzinfo=UTC).timestamp()


class LogApp(App[None]):
    CSS_PATH = STYLES

    def __init__(self, events: list[ChainEvent]) -> None:
        super().__init__()
        self.events = events

    def compose(self) -> ComposeResult:
        yield EventLogPanel(self.events, now=lambda: BASE + 3600, tz=UTC)


def sample_events() -> list[ChainEvent]:
    return [
        UsageEvent(timestamp=BASE, tokens=1000, window=200_000, window_source="model"),
        EvictedEvent(timestamp=BASE + 10, tool_name="read_file", tool_call_id="c1", path="/x/large_tool_results/c1.txt", tokens=48_200, size_bytes=190_000),
        CompactionStarted(timestamp=BASE + 20, trigger="auto", tokens=170_000),
        CompactionFinished(
            timestamp=BASE + 30,
            strategy="summary",
            trigger="auto",
            tokens_before=170_000,
            tokens_after=40_000,
            messages_replaced=42,
            retention_score=0.92,
            missing_identifiers=("src/app.py", "ERR_42"),
            focus="[bold]auth[/bold] flow",
            files_created=("a.md",),
        ),
        CompactionFailed(timestamp=BASE + 40, strategy="summary", trigger="manual", reason="summarizer [red]timed out[/red]", tokens=120_000),
        CompactionFinished(timestamp=BASE + 50, strategy="pointer", trigger="auto", tokens_before=150_000, tokens_after=140_000, messages_replaced=5),
    ]


def option_texts(app: App[None]) -> list[str]:
    option_list = app.query_one("#event-list", OptionList)
    return [str(option.prompt) for option in option_list.options]


async def test_shows_logged_events_newest_first_without_usage() -> None:
    app = LogApp(sample_events())
    async with app.run_test(size=(90, 30)):
        texts = option_texts(app)
        assert len(texts) == 4  # usage and compaction-started are not listed
        assert "pointer" in texts[0]
        assert "failed" in texts[1]
        assert "summary" in texts[2] and "170k → 40k" in texts[2] and "(−130k)" in texts[2]
        assert "evicted read_file" in texts[3] and "c1.txt" in texts[3]
        assert "14:00:50" in texts[0]


async def test_compaction_details_are_shown() -> None:
    app = LogApp(sample_events())
    async with app.run_test(size=(90, 30)):
        summary_row = option_texts(app)[2]
        assert "retention 92%" in summary_row
        assert "2 missing" in summary_row
        assert "1 file" in summary_row
        assert "42 msgs" in summary_row


async def test_totals_line_counts_everything() -> None:
    app = LogApp(sample_events())
    async with app.run_test(size=(90, 30)):
        totals = str(app.query_one("#event-totals", Static).render())
        assert "2 compactions" in totals
        assert "1 failed" in totals
        assert "saved 140k (summary 130k · pointer 10k)" in totals
        assert "1 eviction (48.2k tokens)" in totals


async def test_failure_reason_and_markup_are_literal() -> None:
    app = LogApp(sample_events())
    async with app.run_test(size=(90, 30)):
        texts = option_texts(app)
        assert "reason: summarizer [red]timed out[/red]" in texts[1]
        assert "[bold]auth[/bold] flow" in texts[2]


async def test_add_event_goes_on_top_and_keeps_highlight() -> None:
    app = LogApp(sample_events())
    async with app.run_test(size=(90, 30)) as pilot:
        panel = app.query_one(EventLogPanel)
        option_list = app.query_one("#event-list", OptionList)
        option_list.focus()
        option_list.highlighted = 2
        highlighted_id = option_list.highlighted_option.id
        panel.add_event(UsageEvent(timestamp=BASE + 55, tokens=1, window=10, window_source="model"))
        assert panel.logged_count == 4
        panel.add_event(CompactionFinished(timestamp=BASE + 60, strategy="mask", trigger="manual", tokens_before=100, tokens_after=50, messages_replaced=1))
        await pilot.pause()
        texts = option_texts(app)
        assert "mask" in texts[0]
        assert option_list.highlighted_option.id == highlighted_id
        assert "3 compactions" in str(app.query_one("#event-totals", Static).render())


async def test_enter_opens_the_full_record() -> None:
    app = LogApp(sample_events())
    async with app.run_test(size=(90, 30)) as pilot:
        option_list = app.query_one("#event-list", OptionList)
        option_list.focus()
        option_list.highlighted = 2
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, TextViewerModal)
        body = str(app.screen.query_one("#viewer-body Static", Static).render())
        assert "src/app.py" in body and "ERR_42" in body


async def test_list_is_bounded_but_totals_count_all() -> None:
    many = [
        EvictedEvent(timestamp=BASE + i, tool_name="grep", tool_call_id=f"c{i}", path=f"/x/c{i}", tokens=100, size_bytes=400)
        for i in range(MAX_VISIBLE_EVENTS + 25)
    ]
    app = LogApp(many)
    async with app.run_test(size=(90, 30)):
        texts = option_texts(app)
        assert len(texts) == MAX_VISIBLE_EVENTS + 1
        assert "25 older events not shown" in texts[-1]
        assert f"{MAX_VISIBLE_EVENTS + 24}" in texts[0]
        assert f"{MAX_VISIBLE_EVENTS + 25} evictions" in str(app.query_one("#event-totals", Static).render())


async def test_empty_log_says_so() -> None:
    app = LogApp([])
    async with app.run_test(size=(90, 30)):
        assert app.query_one("#event-empty").display
        assert not app.query_one("#event-list").display


def test_eviction_failure_row_shows_error() -> None:
    row = event_row(
        EvictedEvent(timestamp=BASE, tool_name="bash", tool_call_id="c", path="/p", tokens=1, size_bytes=1, error="disk full"),
        now=BASE,
        tz=UTC,
    )
    assert row is not None and "write failed: disk full" in row.plain


def test_compact_timestamp_adds_the_date_on_other_days() -> None:
    assert compact_timestamp(BASE, now=BASE + 60, tz=UTC) == "14:00:00"
    assert compact_timestamp(BASE, now=BASE + 86_400, tz=UTC) == "03-04 14:00"

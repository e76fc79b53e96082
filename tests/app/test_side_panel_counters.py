"""The side panel's counters read whole at 80 and 60 columns: the log's totals break between items (never a
stray number, never a count cut from its unit), an evicted output's row keeps its time on its line, the memory
status is not cut."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.content import Content
from textual.widgets import OptionList, Static

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tui.app.widgets.event_log import EventTotals
from tui.app.widgets.memory_editor import MemoryEditor
from tui.chain.events import CompactionFailed, EvictedEvent


def _lines(content: object) -> list[str]:
    return str(content).split("\n")


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_counters_read_whole_in_the_side_panel(tmp_path: Path, size: tuple[int, int]) -> None:
    factory = make_factory(tmp_path, window=4_000)  # outputs over 1,000 tokens are saved
    (factory.workdir / "big.txt").write_text("".join(f"row {n} of a long file\n" for n in range(400)))
    app = make_app(factory)
    async with app.run_test(size=size) as pilot:
        await pilot.press(*"read big.txt", "enter")
        await wait_idle(app, pilot)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: app.query("#event-totals"), "the log")
        await pilot.pause()
        totals = app.query_one("#event-totals", Static)
        shown = _lines(totals.render())
        assert shown[0].startswith("0 compactions"), shown
        assert any(line.endswith(" tokens)") and "1 eviction (" in line for line in shown), \
            "the eviction's count and its tokens on one line"
        width = totals.content_region.width
        assert all(cell_len(line) <= width for line in shown), (shown, width)
        assert totals.content_region.height == len(shown), "no line wraps on its own"

        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: app.query("#evicted-list"), "the evicted list")
        await pilot.pause()
        header = str(app.query_one("#evicted-header", Static).render())
        assert header.split() == ["tool", "size", "tokens", "saved"], header
        option_list = app.query_one("#evicted-list", OptionList)
        first_line = _lines(option_list.get_option_at_index(0).prompt)[0]
        assert first_line.startswith("read_file ") and first_line.rstrip()[-8:].count(":") == 2, first_line
        padding = option_list.get_component_styles("option-list--option").padding.width
        assert cell_len(first_line) <= option_list.scrollable_content_region.width - padding, first_line

        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: app.query(MemoryEditor), "the memory editor")
        await pilot.pause()
        status = app.query_one("#memory-status", Static)
        text = " ".join(_lines(status.render()))
        assert text == "○ new file · will be created on save"
        assert status.content_region.height >= len(_lines(status.render()))
        assert "…" not in str(status.render())


def test_totals_break_between_items_and_say_no_stray_number() -> None:
    totals = EventTotals()
    assert str(totals.render(36)) == "0 compactions · 0 evictions"
    totals.add(CompactionFailed(strategy="summary", trigger="auto", reason="timed out", tokens=120_000))
    totals.add(EvictedEvent(tool_name="read_file", tool_call_id="c1", path="/x", tokens=6_500, size_bytes=1))
    lines = _lines(totals.render(36))
    assert lines == ["0 compactions · 1 failed", "1 eviction (6.5k tokens)"], lines
    assert isinstance(totals.render(None), Content) and "\n" not in str(totals.render(None))

"""EvictedBrowser and EvictedViewerScreen: listing, opening, search, copy path, missing and huge files."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Input, OptionList, Static, TextArea

from tui.agent.runtime_api import EvictedOutput
from tui.app.formatting import human_size
from tui.app.screens.evicted_viewer import (
    EvictedViewerScreen,
    display_path,
    find_matches,
    load_capped,
    output_language,
)
from tui.app.widgets.evicted_browser import EvictedBrowser

STYLES = Path(__file__).resolve().parents[2] / "styles" / "panels.tcss"
BASE = datetime(2026, 3, 4, 14, 0, 0, tzinfo=UTC).timestamp()


class BrowserApp(App[None]):
    CSS_PATH = STYLES

    def __init__(self, outputs: list[EvictedOutput]) -> None:
        super().__init__()
        self.outputs = outputs

    def compose(self) -> ComposeResult:
        yield EvictedBrowser(self.outputs, now=lambda: BASE + 600, tz=UTC)


def make_outputs(directory: Path) -> list[EvictedOutput]:
    directory.mkdir(parents=True, exist_ok=True)
    log = directory / "call_1.txt"
    log.write_text("\n".join(f"line {i}: ERROR disk" if i % 7 == 0 else f"line {i}: ok" for i in range(200)), encoding="utf-8")
    data = directory / "call_2.txt"
    data.write_text(json.dumps({"items": [{"id": i, "name": f"n{i}"} for i in range(50)]}, indent=2), encoding="utf-8")
    return [
        EvictedOutput(path=log, tool_name="bash", size_bytes=log.stat().st_size, tokens=1_500, timestamp=BASE + 10),
        EvictedOutput(path=data, tool_name="[bold]fetch[/bold]", size_bytes=data.stat().st_size, tokens=24_000, timestamp=BASE + 20),
    ]


def list_rows(app: App[None]) -> list[str]:
    option_list = app.query_one("#evicted-list", OptionList)
    return [str(option.prompt) for option in option_list.options]


def make_size(app: App[None], index: int) -> int:
    return app.query_one(EvictedBrowser).outputs[index].size_bytes


async def open_first_viewer(app: App[None]) -> EvictedViewerScreen:
    await app.workers.wait_for_complete()
    assert isinstance(app.screen, EvictedViewerScreen)
    return app.screen


async def test_lists_outputs_newest_first_with_literal_tool_names(tmp_path: Path) -> None:
    app = BrowserApp(make_outputs(tmp_path))
    async with app.run_test(size=(80, 24)):
        rows = list_rows(app)
        assert len(rows) == 2
        assert rows[0].split() == ["[bold]fetch[/bold]", *human_size(make_size(app, 0)).split(), "24k", "14:00:20"]
        assert rows[1].startswith("bash ")
        assert "2 outputs" in str(app.query_one("#evicted-summary", Static).render())


async def test_set_outputs_replaces_and_empty_state(tmp_path: Path) -> None:
    outputs = make_outputs(tmp_path)
    app = BrowserApp([])
    async with app.run_test(size=(80, 24)) as pilot:
        browser = app.query_one(EvictedBrowser)
        assert app.query_one("#evicted-empty").display
        browser.set_outputs(outputs[:1])
        await pilot.pause()
        assert [row.split()[0] for row in list_rows(app)] == ["bash"]
        assert not app.query_one("#evicted-empty").display


async def test_enter_opens_viewer_with_json_content(tmp_path: Path) -> None:
    app = BrowserApp(make_outputs(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        app.query_one("#evicted-list", OptionList).focus()
        await pilot.press("enter")
        await pilot.pause()
        viewer = await open_first_viewer(app)
        await pilot.pause()
        text_area = viewer.query_one("#viewer-text", TextArea)
        assert json.loads(text_area.text)["items"][3]["name"] == "n3"
        assert text_area.read_only
        assert text_area.language == "json"  # TextArea's own tree-sitter highlighting (textual[syntax])
        await pilot.press("slash", *"n3")
        await pilot.press("escape")  # leaves the search box, keeps the viewer
        await pilot.pause()
        assert isinstance(app.screen, EvictedViewerScreen) and text_area.has_focus
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, EvictedViewerScreen)


async def test_click_opens_viewer(tmp_path: Path) -> None:
    app = BrowserApp(make_outputs(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.click("#evicted-list", offset=(3, 1))  # second row: bash
        await pilot.pause()
        viewer = await open_first_viewer(app)
        assert viewer.path.name == "call_1.txt"


async def test_search_counts_and_steps_through_matches(tmp_path: Path) -> None:
    outputs = make_outputs(tmp_path)
    app = BrowserApp(outputs)
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.query_one(EvictedBrowser).open_path(outputs[0].path)
        await pilot.pause()
        viewer = await open_first_viewer(app)
        await pilot.pause()
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await pilot.press(*"error")
        await pilot.pause()
        matches = viewer.query_one("#viewer-matches", Static)
        expected = len([i for i in range(200) if i % 7 == 0])
        assert str(matches.render()) == f"1/{expected}"
        text_area = viewer.query_one("#viewer-text", TextArea)
        assert text_area.selected_text == "ERROR"
        assert text_area.selection.start == (0, 8)
        await pilot.press("enter")
        await pilot.pause()
        assert str(matches.render()) == f"2/{expected}"
        assert text_area.selection.start == (7, 8)
        text_area.focus()
        await pilot.press("N", "N")
        await pilot.pause()
        assert str(matches.render()) == f"{expected}/{expected}"
        await pilot.press("n")
        await pilot.pause()
        assert text_area.selection.start == (0, 8)
        viewer.query_one("#viewer-search", Input).value = "no such thing"
        await pilot.pause()
        assert str(matches.render()) == "no matches"


async def test_letter_keys_type_into_the_search_box(tmp_path: Path) -> None:
    outputs = make_outputs(tmp_path)
    app = BrowserApp(outputs)
    async with app.run_test(size=(100, 30)) as pilot:
        app.query_one(EvictedBrowser).open_path(outputs[0].path)
        await pilot.pause()
        viewer = await open_first_viewer(app)
        await pilot.press("slash", *"cnq N")
        await pilot.pause()
        assert viewer.query_one("#viewer-search", Input).value == "cnq N"
        assert app.screen is viewer
        assert app.clipboard == ""


async def test_copy_path(tmp_path: Path) -> None:
    outputs = make_outputs(tmp_path)
    app = BrowserApp(outputs)
    async with app.run_test(size=(100, 30)) as pilot:
        app.query_one(EvictedBrowser).open_path(outputs[0].path)
        await pilot.pause()
        await open_first_viewer(app)
        await pilot.click("#viewer-copy")
        await pilot.pause()
        assert app.clipboard == str(outputs[0].path)
        toasts = [str(n.message) for n in app._notifications]
        assert len(toasts) == 1 and "copied the path" in toasts[0] and str(outputs[0].path) in toasts[0], toasts


async def test_missing_file_is_reported_not_opened(tmp_path: Path) -> None:
    outputs = make_outputs(tmp_path)
    outputs[0].path.unlink()
    app = BrowserApp(outputs)
    async with app.run_test(size=(100, 30)) as pilot:
        assert not app.query_one(EvictedBrowser).open_path(outputs[0].path)
        await pilot.pause()
        assert not isinstance(app.screen, EvictedViewerScreen)
        assert any("no longer on disk" in n.message for n in app._notifications)


async def test_viewer_of_a_vanished_file_shows_a_notice(tmp_path: Path) -> None:
    app = BrowserApp([])
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(EvictedViewerScreen(tmp_path / "gone.txt"))
        await pilot.pause()
        viewer = await open_first_viewer(app)
        await pilot.pause()
        notice = viewer.query_one("#viewer-missing", Static)
        assert notice.display
        assert "File not found" in str(notice.render())
        assert not viewer.query_one("#viewer-text").display


def test_load_capped_truncates_large_files(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * 5000)
    loaded = load_capped(path, cap=1000)
    assert loaded.truncated and loaded.total_bytes == 5000 and len(loaded.text) == 1000


async def test_viewer_says_when_it_shows_only_the_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tui.app.screens.evicted_viewer as viewer_module

    monkeypatch.setattr(viewer_module, "MAX_VIEW_BYTES", 1024)
    monkeypatch.setattr(viewer_module.load_capped, "__defaults__", (1024,))
    path = tmp_path / "big.txt"
    path.write_text("row\n" * 2000, encoding="utf-8")
    app = BrowserApp([])
    async with app.run_test(size=(120, 30)) as pilot:
        app.push_screen(EvictedViewerScreen(path))
        await pilot.pause()
        viewer = await open_first_viewer(app)
        await pilot.pause()
        info = str(viewer.query_one("#viewer-info", Static).render())
        assert "showing the first 1 KiB" in info
        assert len(viewer.query_one("#viewer-text", TextArea).text) == 1024


def test_the_language_is_the_read_files_never_a_guess(tmp_path: Path) -> None:
    """Issue 22.11: by the extension of the file the tool read, JSON for structured output, else none."""
    saved = tmp_path / "call_1-abc.txt"
    assert output_language(saved, "src/app.py") == "python"
    assert output_language(saved, "notes/README.MD") == "markdown"
    assert output_language(saved, "Makefile") is None
    assert output_language(saved) is None  # a grep listing: plain text, not a Pygments guess
    assert output_language(tmp_path / "call_2-def.json") == "json"
    assert output_language(saved, None, '{"a": [1, 2]}') == "json"  # JSON text: parsed, not guessed
    assert output_language(saved, None, '{"a": [1, 2', truncated=True) is None
    assert output_language(saved, None, "{not json") is None


def test_find_matches_is_case_insensitive_per_line() -> None:
    matches = find_matches("Foo foo\nbar FOO", "foo")
    assert [(m.row, m.start, m.end) for m in matches] == [(0, 0, 3), (0, 4, 7), (1, 4, 7)]
    assert find_matches("aaaa", "a", limit=2) == find_matches("aa", "a")
    assert find_matches("abc", "") == []


def test_display_path_is_relative_inside_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert display_path(tmp_path / "a" / "b.txt") == "a/b.txt"


async def test_each_row_says_which_call_and_file_the_output_came_from(tmp_path: Path) -> None:
    saved = tmp_path / "call_9.txt"
    saved.write_text("x", encoding="utf-8")
    outputs = [
        EvictedOutput(path=saved, tool_name="read_file", size_bytes=1, tokens=5_000, timestamp=BASE,
                      tool_call_id="call_9", args='{"path": "src/parser.py", "offset": 0}'),
        EvictedOutput(path=saved, tool_name="grep", size_bytes=1, tokens=6_000, timestamp=BASE + 1,
                      tool_call_id="call_10", args='{"pattern": "[/]TODO"}'),
    ]
    app = BrowserApp(outputs)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        rows = list_rows(app)
        assert "pattern=[/]TODO · call call_10" in rows[0]  # newest first; markup stays literal
        assert "path=src/parser.py, offset=0 · call call_9" in rows[1]


async def test_the_viewer_shows_one_column_of_line_numbers(tmp_path: Path) -> None:
    numbered = tmp_path / "read.txt"  # read_file's own output: numbers, a tab, the line
    numbered.write_text("".join(f"{n:>6}\tline {n}\n" for n in range(1, 40)) + "[lines 1-39 of 39]", encoding="utf-8")
    plain = tmp_path / "plain.txt"
    plain.write_text("".join(f"entry {n}\n" for n in range(40)), encoding="utf-8")
    app = BrowserApp([])
    async with app.run_test(size=(100, 30)) as pilot:
        for path, gutter in ((numbered, False), (plain, True)):
            await app.push_screen(EvictedViewerScreen(path))
            viewer = await open_first_viewer(app)
            await pilot.pause()
            text_area = viewer.query_one("#viewer-text", TextArea)
            assert text_area.show_line_numbers is gutter, path.name
            await pilot.press("escape")
            await pilot.pause()

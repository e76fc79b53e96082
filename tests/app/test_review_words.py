"""Words a tester found wrong: /mcp with no server names the config file and the table to add; F1's descriptions
wrap under themselves at 60 columns; the title bar never cuts "writes auto"; an offline session's cost reads
"free (offline)", not $0.00 (``deep-tui sessions --json`` unchanged)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.cells import cell_len

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tui.agent.runtime_api import RuntimeInfo
from tui.app.screens.context_report import ContextScreen
from tui.app.screens.help import HelpScreen
from tui.app.screens.mcp_servers import McpServersScreen
from tui.app.widgets.title_bar import title_parts
from tui.base.paths import user_config_file
from tui.cli.main import main
from tui.store.cost_totals import CostTotals
from tui.text.cost_text import FREE_OFFLINE, totals_details, totals_label


async def test_mcp_without_servers_names_the_config_file_and_the_table(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEP_TUI_CONFIG_HOME", str(tmp_path / "user-config"))
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"/mcp", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, McpServersScreen), "/mcp")
        text = str(app.screen.query_one("#mcp-servers").render())
    assert str(user_config_file()) == str(tmp_path / "user-config" / "config.toml")
    assert str(tmp_path / "user-config" / "config.toml") in text
    assert "[mcp.servers.files]" in text and 'command = "npx"' in text and "url = " in text
    assert "docs/configuration.md" not in text


async def test_help_descriptions_wrap_under_themselves_at_60_columns(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        await pilot.pause()
        help_text = app.screen.query_one(".dialog--message")
        lines = str(help_text.render()).split("\n")
        width = help_text.content_region.width
    assert 40 < width < 60
    rows = lines[1:-1]  # between the heading and the closing note (plain paragraphs, wrapped as paragraphs)
    assert all(cell_len(line) <= width for line in rows), "laid out for its width: no row wraps on its own"
    copy = next(number for number, line in enumerate(lines) if line.startswith("ctrl+c"))
    indent = len("pgup pgdn  ")
    assert lines[copy + 1].startswith(" " * indent) and lines[copy + 1].strip(), lines[copy:copy + 3]
    described = [line for line in lines if line.strip() and not line.startswith(" ")]
    assert all(not line.startswith(word) for line in described for word in ("quit", "pbcopy", "there", "file;"))


def test_the_title_bar_keeps_writes_auto_whole_or_drops_it() -> None:
    info = RuntimeInfo(session_id="0123456789ab", title="explain the project layout please",
                       model_name="anthropic:claude-sonnet-5-5", offline=False)
    for width in range(40, 110):
        text = str(title_parts(info, width, ("writes",)))
        tail = text.rstrip()
        assert "writes" not in tail or tail.endswith(("writes auto", "writes auto-allowed")), (width, text)
    assert str(title_parts(info, 58, ("writes",))).rstrip().endswith("claude-sonnet-5-5")
    assert str(title_parts(info, 80, ("writes",))).rstrip().endswith("writes auto")


def test_the_title_bar_shows_a_mode_other_than_the_default_at_every_width() -> None:
    info = RuntimeInfo(session_id="0123456789ab", title="explain the project layout please",
                       model_name="anthropic:claude-sonnet-5-5", offline=False)
    assert "⏸" not in str(title_parts(info, 120)) and "⏵" not in str(title_parts(info, 120))
    assert str(title_parts(info, 120, mode="plan")).rstrip().endswith("⏸ plan mode")
    accepting = str(title_parts(info, 160, ("writes", "commands"), mode="accept-writes"))
    assert accepting.rstrip().endswith("commands auto-allowed  ⏵⏵ auto-accept writes")  # writes said once
    for width in range(60, 120):
        for mode, shown in (("plan", ("⏸ plan", "⏸ plan mode")), ("accept-writes", ("⏵⏵ writes", "⏵⏵ auto-accept writes"))):
            text = str(title_parts(info, width, ("commands",), mode=mode))
            assert text.rstrip().endswith(shown) and cell_len(text) <= width, (width, mode, text)


def test_cost_words_for_an_offline_session() -> None:
    nothing = CostTotals()
    assert totals_label(nothing, offline=True) == FREE_OFFLINE == "free (offline)"
    assert totals_label(None, offline=True) == FREE_OFFLINE
    assert totals_label(nothing) == "$0.00", "a real model's session before its first request"
    spent = CostTotals(input_usd=1.0, output_usd=0.23, requests=3)
    assert totals_label(spent, offline=True) == "$1.23", "spent on a real model before a switch: shown"
    assert totals_details(nothing, offline=True).startswith("free (offline)")


async def test_context_and_the_sessions_list_say_free_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    factory = make_factory(tmp_path)
    app = make_app(factory)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press(*"help", "enter")
        await wait_idle(app, pilot)
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen), "/context")
        text = str(app.screen.query_one("#breakdown").render())
        assert "cost  session free (offline)" in text and "$0.00" not in text, text
        await app.runtime.aclose()
    assert main(["sessions", "--data-dir", str(tmp_path / "data")]) == 0
    listing = capsys.readouterr().out
    assert "free (offline)" in listing and "$0.00" not in listing, listing
    assert main(["sessions", "--json", "--data-dir", str(tmp_path / "data")]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["model"] == "offline" and row["cost"]["label"] == "$0.00", "--json is as it was"


def test_help_at_60x20_snapshot(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    async def scroll_to_the_keys(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, HelpScreen), "the help")
        await pilot.press("pagedown")
        await pilot.pause(0.2)

    assert snap_compare(make_app(make_factory(tmp_path)), terminal_size=(60, 20), run_before=scroll_to_the_keys)


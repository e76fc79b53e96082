"""The footer keeps every binding whole at 80 columns (the palette key moves out of it, not a cut label)."""

from __future__ import annotations

import re
from pathlib import Path

from textual.widgets import Footer

from tests.app.app_support import make_app, make_factory, wait_until


async def test_at_80_columns_the_footer_drops_the_palette_key_instead_of_cutting_a_binding(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        footer = app.query_one(Footer)
        await wait_until(pilot, lambda: not footer.show_command_palette)
        await pilot.pause()
        screen = re.sub(r"<[^>]+>", "", app.export_screenshot()).replace("&#160;", " ")
        footer_line = screen.splitlines()[-1] if screen else ""
        assert "^b evicted" in screen and "^p palette" not in screen, footer_line
        await pilot.resize_terminal(120, 30)
        await wait_until(pilot, lambda: footer.show_command_palette)


async def test_a_burst_of_binding_changes_rebuilds_the_footer_once_and_shows_the_last(tmp_path: Path,
                                                                                    monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Binding changes that show nothing new rebuild no key; a burst that does (a chat message focused: ^f
    fork here) rebuilds them once, as the bindings are after the last change; the next change shown (the
    prompt focused again) rebuilds again."""
    from tui.app.widgets.chat_footer import ChatFooter

    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"hello", "enter")
        await wait_until(pilot, lambda: app.main_screen.query("UserBlock"), "the message")
        await wait_until(pilot, lambda: not app.main_screen.turn_running, "the turn's end")
        footer = app.main_screen.query_one(ChatFooter)
        await wait_until(pilot, lambda: footer.keys_shown() == footer._shown, "the footer settled")
        rebuilds: list[str] = []
        rebuild = ChatFooter.recompose

        async def counted(self: ChatFooter) -> None:
            rebuilds.append("rebuilt")
            await rebuild(self)

        monkeypatch.setattr(ChatFooter, "recompose", counted)

        def keys() -> list[str]:
            return [key.description for key in footer.query("FooterKey")]

        for _ in range(3):
            app.main_screen.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert rebuilds == [], "nothing new to show"
        assert "fork here" not in keys()
        app.main_screen.query("UserBlock").first().focus()
        for _ in range(3):
            app.main_screen.refresh_bindings()
        await wait_until(pilot, lambda: "fork here" in keys(), "^f fork here in the footer")
        await pilot.pause()
        assert rebuilds == ["rebuilt"]
        app.main_screen.prompt.focus()
        await wait_until(pilot, lambda: "fork here" not in keys(), "the prompt's keys again")
        assert rebuilds == ["rebuilt", "rebuilt"]

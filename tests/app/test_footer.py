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

"""The compact dialog says what it will summarize and keep before it runs (issue 11, item 2)."""

from __future__ import annotations

from pathlib import Path

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tui.app.screens.compact_dialog import CompactDialog


async def test_the_compact_dialog_explains_what_it_will_keep(tmp_path: Path) -> None:
    factory = make_factory(tmp_path, window=50_000)
    (factory.workdir / "spec.txt").write_text("".join(f"requirement {n}: keep ID-{n:04d}\n" for n in range(200)))
    app = make_app(factory)
    async with app.run_test(size=(120, 36)) as pilot:
        for _ in range(4):
            await pilot.press(*"read spec.txt", "enter")
            await wait_idle(app, pilot)
        await pilot.click("#compact-button")
        await wait_until(pilot, lambda: isinstance(app.screen, CompactDialog), "the compact dialog")
        plan = str(app.screen.query_one("#plan").render())
        assert "Will summarize" in plan and "verbatim" in plan and "Nothing is deleted" in plan, plan
        await pilot.press("escape")

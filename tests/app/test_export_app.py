"""``/export`` in the app (issue 33.2): the session to a file, the path shown; a bad target is one error line."""

from __future__ import annotations

from pathlib import Path

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until


def notices(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(notification.message) for notification in app._notifications]


async def test_slash_export_writes_the_session_and_shows_the_path(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"read notes.txt", "enter")
        await wait_idle(app, pilot)
        target = tmp_path / "shared" / "session.md"
        await pilot.press(*f"/export {target}", "enter")
        await wait_until(pilot, lambda: any("Exported this session to" in n for n in notices(app)), "the export")
        text = target.read_text(encoding="utf-8")
        assert "## You · message 0" in text and "**Tool call** `read_file`" in text and "alpha" in text
        assert any(str(target) in n for n in notices(app))

        await pilot.press(*"/export", "enter")  # no name: <data-dir>/exports/<id>-<time>.md
        await wait_until(pilot, lambda: sum("Exported this session to" in n for n in notices(app)) == 2,
                         "the second export")
        [written] = list((tmp_path / "data" / "exports").iterdir())
        assert written.name.startswith(app.runtime.info.session_id) and written.suffix == ".md"

        (tmp_path / "elsewhere.json").write_text("{}", encoding="utf-8")
        link = tmp_path / "link.json"
        link.symlink_to(tmp_path / "elsewhere.json")
        await pilot.press(*f"/export {link}", "enter")
        await wait_until(pilot, lambda: any("Export failed" in n for n in notices(app)), "the refusal")
        assert (tmp_path / "elsewhere.json").read_text(encoding="utf-8") == "{}", "no link followed"


async def test_slash_export_asks_before_replacing_a_file(tmp_path: Path) -> None:
    """``/export notes.md`` onto a file that exists (a project file, say): asked first; No leaves it as it was,
    Replace (clicked) writes the export."""
    from tui.app.screens.basic_dialogs import ConfirmModal

    app = make_app(make_factory(tmp_path))
    target = tmp_path / "notes.md"
    target.write_text("my own notes\n", encoding="utf-8")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"read notes.txt", "enter")
        await wait_idle(app, pilot)
        await pilot.press(*f"/export {target}", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the question")
        assert str(target) in str(app.screen.query_one(".dialog--message").render())
        await pilot.click("#cancel")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmModal), "declined")
        await wait_until(pilot, lambda: any("Not exported" in n for n in notices(app)), "the line saying so")
        assert target.read_text(encoding="utf-8") == "my own notes\n"

        await pilot.press(*f"/export {target}", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the question again")
        await pilot.click("#confirm")
        await wait_until(pilot, lambda: any("Exported this session to" in n for n in notices(app)), "the export")
        assert "## You · message 0" in target.read_text(encoding="utf-8")

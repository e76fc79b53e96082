"""The compact dialog's preview stays true while it is open: after a run it says what a next run would do, and a
turn that ends meanwhile (the dialog opened while it ran) is counted in."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from tests.app.app_support import gated_model, make_app, make_factory, wait_idle, wait_until
from tui.agent.runtime import SessionRequest
from tui.app.screens.compact_dialog import CompactDialog
from tui.app.shell import DeepTuiApp
from tui.chain.events import CompactionFinished


def _plan(app: DeepTuiApp) -> str:
    return str(app.screen.query_one("#plan").render())


async def test_the_preview_is_refreshed_after_a_run(tmp_path: Path) -> None:
    factory = make_factory(tmp_path, window=8_000)  # three reads fill most of it; a summary must shrink it
    (factory.workdir / "spec.txt").write_text("".join(
        f"requirement {n}: the parser accepts input form {n} and keeps ID-{n:04d}\n" for n in range(80)))
    app = make_app(factory)
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(3):
            await pilot.press(*"read spec.txt", "enter")
            await wait_idle(app, pilot)
        await pilot.click("#compact-button")
        await wait_until(pilot, lambda: isinstance(app.screen, CompactDialog), "the compact dialog")
        dialog = app.screen
        assert isinstance(dialog, CompactDialog)
        before = _plan(app)
        assert "Will summarize" in before and "earlier summary" not in before
        await pilot.click("#run")
        await wait_until(pilot, lambda: dialog.result is not None, "the compaction", timeout=20)
        assert isinstance(dialog.result, CompactionFinished), dialog.result
        await wait_until(pilot, lambda: _plan(app) != before, "the preview to follow the new history")
        after = _plan(app)
        assert after == str(dialog.query_one("#plan").render())
        assert "earlier summary" in after or "Nothing to summarize yet" in after, after


async def test_a_turn_that_ends_while_the_dialog_is_open_is_counted_in(tmp_path: Path) -> None:
    model, gate = gated_model("a long answer " * 50)
    factory = make_factory(tmp_path, chat_model=model)
    handle = factory.store.create(model="gated")
    batch = []
    for number in range(12):
        batch += [ModelRequest(parts=[UserPromptPart(f"question {number}: keep ID-{number:04d} " * 40)]),
                  ModelResponse(parts=[TextPart(f"answer {number} " * 60)])]
    handle.append_messages(batch)
    handle.close()
    app = make_app(factory, SessionRequest(resume=handle.id))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: app.runtime.busy, "the turn to start")
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: isinstance(app.screen, CompactDialog), "the compact dialog")
        before = _plan(app)
        gate.set()
        await wait_until(pilot, lambda: not app.runtime.busy, "the turn to end")
        await wait_until(pilot, lambda: _plan(app) != before, "the preview to count the turn", timeout=5)
        assert _plan(app) == str(app.screen.query_one("#plan").render())
        await pilot.press("escape")
        await wait_idle(app, pilot)

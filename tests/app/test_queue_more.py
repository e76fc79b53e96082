"""Issue 29, smaller defects: a queue of more prompts than it shows says how many more wait."""

from __future__ import annotations

from pathlib import Path

from tests.app.app_support import gated_model, make_app, make_factory, wait_idle, wait_until
from tui.app.widgets.prompt_queue import SHOWN_ROWS, PromptQueue, QueuedPrompt


async def test_the_queue_shows_its_oldest_rows_and_counts_the_rest(tmp_path: Path) -> None:
    model, gate = gated_model()
    app = make_app(make_factory(tmp_path, chat_model=model))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"first", "enter")
        await wait_until(pilot, lambda: app.runtime.busy, "the first turn")
        for number in range(8):
            await pilot.press(*f"queued {number}", "enter")
        queue = app.query_one(PromptQueue)
        await wait_until(pilot, lambda: len(queue) == 8, "eight queued prompts")
        await pilot.pause()
        shown = [row.text for row in queue.query(QueuedPrompt) if row.display]
        assert shown == [f"queued {number}" for number in range(SHOWN_ROWS)]
        more = str(queue.query_one(".queued-more").render())
        assert more.startswith("+3 more queued"), more
        assert queue.query_one(".queued-more").region.height == 1, "on screen, not cut off"
        gate.set()
        await wait_idle(app, pilot)


def test_choosing_the_model_in_use_says_unchanged_not_was() -> None:
    """Issue 29: re-choosing ``offline`` said "Model: offline (was offline)"."""
    from tui.agent.runtime_api import ModelSwitch
    from tui.app.chat.model_switching import describe_switch

    same = describe_switch(ModelSwitch("offline", "offline", 200_000, "assumed", False))
    assert same.startswith("Model: offline (unchanged) — ") and "was" not in same
    other = describe_switch(ModelSwitch("offline", "openai:gpt-5", 400_000, "genai-prices", False))
    assert other.startswith("Model: openai:gpt-5 (was offline) — ")

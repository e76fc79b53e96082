"""Keys and pastes as a terminal delivers them: a Ctrl+J typed among letters keeps its place; a long paste is
sent whole but shown collapsed in the chat (expandable by key or click)."""

from __future__ import annotations

from pathlib import Path

from textual import events

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tests.app.test_snapshots import fixed_ids_and_clock  # noqa: F401  (autouse: fixed ids and clock)
from tui.agent.session.factory import SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.widgets.chat_blocks import UserBlock
from tui.app.widgets.chat_view import ChatView
from tui.app.widgets.prompt_input import PromptInput


def send_keys(app: DeepTuiApp, keys: list[tuple[str, str | None]]) -> None:
    """All of ``keys`` queued before the app handles the first (as a terminal delivers a fast burst)."""
    assert app._driver is not None
    for key, char in keys:
        event = events.Key(key, char)
        event.set_sender(app)
        app._driver.send_message(event)


def letters(text: str) -> list[tuple[str, str | None]]:
    return [("space", " ") if char == " " else (char, char) for char in text]


async def test_ctrl_j_in_a_burst_lands_where_it_was_typed(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        prompt = app.query_one(PromptInput)
        send_keys(app, [*letters("first line"), ("ctrl+j", "\n"), *letters("second line"), ("ctrl+j", "\n"),
                        *letters("third")])
        await wait_until(pilot, lambda: prompt.text.endswith("third") or prompt.text.endswith("\n"), "the burst")
        await pilot.pause(0.2)
        assert prompt.text == "first line\nsecond line\nthird"
        await pilot.press("ctrl+j", *"fourth")  # one key at a time too
        assert prompt.text == "first line\nsecond line\nthird\nfourth"
        await wait_idle(app, pilot)


PASTED = "".join(f"log line {n}: worker {n % 7} finished\n" for n in range(60)).rstrip("\n")


async def _sent_a_long_paste(app: DeepTuiApp, pilot) -> UserBlock:  # type: ignore[no-untyped-def]
    prompt = app.query_one(PromptInput)
    await pilot.press(*"look at this:")
    await prompt._on_paste(events.Paste("\n" + PASTED))  # what a terminal's bracketed paste delivers
    assert prompt.text == "look at this:\n" + PASTED
    await pilot.press("enter")
    await wait_idle(app, pilot)
    block = app.query(UserBlock).last()
    await wait_until(pilot, lambda: block.region.height > 0, "the prompt's block")
    return block


async def test_a_long_paste_is_sent_whole_and_shown_collapsed(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    app = make_app(factory)
    async with app.run_test(size=(80, 24)) as pilot:
        block = await _sent_a_long_paste(app, pilot)
        [recorded] = [part.content for message in app.runtime.load_history(0, app.runtime.history_count())
                      for part in message.parts if type(part).__name__ == "UserPromptPart"]
        assert recorded == "look at this:\n" + PASTED, "sent and recorded whole"
        shown = str(block.render())
        assert "log line 1:" in shown and "log line 5:" not in shown
        assert "61 lines — 58 more" in shown and block.region.height == 4
        await pilot.click(block, offset=(4, block.region.height - 1))  # the "more" line
        await wait_until(pilot, lambda: "log line 59:" in str(block.render()), "the whole paste")
        assert block.region.height >= 62 or block.size.height >= 62
        app.query_one(ChatView).scroll_to_widget(block, animate=False, top=False)
        await pilot.pause()
        block.focus()
        await pilot.press("enter")  # the same by key: folded again
        await wait_until(pilot, lambda: "log line 59:" not in str(block.render()), "the paste folded")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "log line 59:" in str(block.render()), "the paste shown again")
        session_id = app.runtime.info.session_id
        await app.runtime.aclose()
    again = make_app(factory, SessionRequest(resume=session_id))
    async with again.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: again.query(UserBlock), "the reopened transcript")
        assert "58 more" in str(again.query(UserBlock).last().render()), "collapsed when reopened too"


def test_a_long_paste_at_80x24(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(make_factory(tmp_path))

    async def paste(pilot) -> None:  # type: ignore[no-untyped-def]
        await _sent_a_long_paste(app, pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=paste)


async def test_an_enter_in_a_burst_sends_what_was_typed_before_it_and_only_that(tmp_path: Path) -> None:
    """Issue 29 §15: under load the Enter between two prompts typed while a turn runs was handled after the letters
    behind it, and the two queued prompts merged ("queued prompt 4queued prompt 5"). A burst as a terminal delivers
    it: every key queued before the app handles the first."""
    from tests.app.app_support import gated_model
    from tui.app.widgets.prompt_queue import PromptQueue

    model, gate = gated_model()
    app = make_app(make_factory(tmp_path, chat_model=model))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"first", "enter")
        await wait_until(pilot, lambda: app.runtime.busy, "the first turn")
        burst: list[tuple[str, str | None]] = []
        for number in range(2, 7):
            burst += [*letters(f"queued prompt {number}"), ("enter", "\r")]
        send_keys(app, burst)
        queue = app.query_one(PromptQueue)
        await wait_until(pilot, lambda: len(queue) == 5 or "6" in app.query_one(PromptInput).text
                         or any("prompt 6" in text for text in queue.texts), "the burst")
        assert queue.texts == [f"queued prompt {number}" for number in range(2, 7)]
        assert app.query_one(PromptInput).text == ""
        gate.set()
        await wait_idle(app, pilot)

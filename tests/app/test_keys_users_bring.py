"""Keys users bring from terminals and other agents: Ctrl+C, Ctrl+D, Esc."""

from __future__ import annotations

from pathlib import Path

from tests.app.app_support import gated_model, make_app, make_factory, wait_idle, wait_until
from tui.app.widgets.prompt_input import PromptInput


async def test_ctrl_c_cancels_a_running_turn(tmp_path: Path) -> None:
    model, _gate = gated_model("partial")
    app = make_app(make_factory(tmp_path, chat_model=model))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"hello", "enter")
        await wait_until(pilot, lambda: app.runtime.busy, "the turn")
        await pilot.press("ctrl+c")
        await wait_idle(app, pilot)
        assert not app.runtime.busy and app.is_running  # cancelled, not quit


async def test_ctrl_c_with_a_selection_copies_and_leaves_the_turn_running(tmp_path: Path) -> None:
    model, gate = gated_model("partial")
    app = make_app(make_factory(tmp_path, chat_model=model))
    copied: list[str] = []
    app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"hello", "enter")
        await wait_until(pilot, lambda: app.runtime.busy, "the turn")
        await pilot.press(*"queued words")
        prompt = app.query_one(PromptInput)
        prompt.select_all()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert copied == ["queued words"]
        assert app.runtime.busy
        gate.set()
        await wait_idle(app, pilot)


async def test_ctrl_c_twice_when_idle_quits_once_only_says_how(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    said: list[str] = []
    notify = app.notify
    app.notify = lambda message, **options: (said.append(message), notify(message, **options))[1]  # type: ignore[method-assign, func-returns-value]
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        assert any("Ctrl+C again to quit" in message for message in said)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running


async def test_ctrl_c_on_typed_text_clears_it_as_a_shell_does_and_up_brings_it_back(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"a half-typed thought", "ctrl+c")
        await pilot.pause()
        prompt = app.query_one(PromptInput)
        assert app.is_running and prompt.text == ""
        assert any("Prompt cleared" in str(n.message) for n in app._notifications)
        await pilot.press("up")
        await pilot.pause()
        assert prompt.text == "a half-typed thought"
        await pilot.press("ctrl+c", "ctrl+c")  # cleared again, then the empty prompt's first press only warns
        await pilot.pause()
        assert app.is_running and prompt.text == ""


async def test_ctrl_d_quits_only_from_an_empty_prompt(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"abc", "home", "ctrl+d")
        await pilot.pause()
        assert app.is_running and app.query_one(PromptInput).text == "bc"
        await pilot.press("ctrl+a", "ctrl+k", "end", "backspace", "backspace")
        await pilot.pause()
        assert app.query_one(PromptInput).text == ""
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert not app.is_running


async def test_esc_that_closes_the_completion_list_does_not_cancel_the_turn(tmp_path: Path) -> None:
    model, gate = gated_model("partial")
    app = make_app(make_factory(tmp_path, chat_model=model))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"hello", "enter")
        await wait_until(pilot, lambda: app.runtime.busy, "the turn")
        await pilot.press("/", "h")
        prompt = app.query_one(PromptInput)
        await wait_until(pilot, lambda: prompt.suggestions is not None and prompt.suggestions.shown, "the list")
        await pilot.press("escape")
        await pilot.pause()
        assert not prompt.suggestions.shown  # type: ignore[union-attr]
        assert app.runtime.busy  # the turn goes on
        gate.set()
        await wait_idle(app, pilot)

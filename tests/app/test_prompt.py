"""Issue 13: typed text is never lost — selection, queue, unknown commands, focus, history, completion, scrolling."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from textual import events

from tests.app.app_support import gated_model, make_app, make_factory, reply_model, wait_idle, wait_until
from tests.app.test_app import palette_choices
from tui.agent.session.factory import SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.command_registry import COMMANDS
from tui.app.screens.basic_dialogs import ConfirmModal
from tui.app.screens.context_report import ContextScreen
from tui.app.widgets.answer_block import AssistantBlock
from tui.app.widgets.chat_blocks import ToolBlock, UserBlock
from tui.app.widgets.chat_view import ChatView
from tui.app.widgets.prompt_input import CommandSuggestions, PromptInput
from tui.app.widgets.prompt_queue import PromptQueue
from tui.store.prompt_history import HISTORY_FILE_NAME


def burst(app: DeepTuiApp, text: str, *, enter: bool = True) -> None:
    """Deliver keys the way a terminal does for fast typing (tmux send-keys, a quick typist): all of them
    queued before the app has handled the first."""
    assert app._driver is not None
    keys = [("space", " ") if char == " " else (char, char) for char in text]
    if enter:
        keys.append(("enter", "\r"))
    for key, char in keys:
        event = events.Key(key, char)
        event.set_sender(app)
        app._driver.send_message(event)


def prompt_of(app: DeepTuiApp) -> PromptInput:
    return app.query_one(PromptInput)


def user_prompts(app: DeepTuiApp) -> list[str]:
    """The user prompts recorded in the session, oldest first."""
    found = []
    for message in app.runtime.load_history(0, app.runtime.history_count()):
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                found.append(str(part.content))
    return found


async def two_turns(app: DeepTuiApp, pilot) -> None:  # type: ignore[no-untyped-def]
    for prompt in ("ls", "read notes.txt"):
        await pilot.press(*prompt, "enter")
        await wait_idle(app, pilot)


# -- 13.1 typing on a selected message never forks --------------------------------------------------


async def test_typing_while_a_message_is_selected_goes_to_the_prompt(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await two_turns(app, pilot)
        session = app.runtime.info.session_id
        app.query(AssistantBlock).first().focus()  # clicked, e.g. to copy it
        await pilot.pause()
        burst(app, "fix the bug")
        await wait_until(pilot, lambda: "fix the bug" in user_prompts(app), "the typed prompt to be sent")
        await wait_idle(app, pilot)
        assert app.runtime.info.session_id == session and app.runtime.info.parent is None, "nothing forked"
        assert user_prompts(app) == ["ls", "read notes.txt", "fix the bug"], "not a letter lost"
        assert isinstance(app.focused, PromptInput)
        for block in (app.query(UserBlock).first(), app.query(ToolBlock).first()):  # any selected block
            block.focus() if not isinstance(block, ToolBlock) else block.query_one("CollapsibleTitle").focus()
            await pilot.press("f", "o", "o")
            assert prompt_of(app).text == "foo" and isinstance(app.focused, PromptInput)
            prompt_of(app).clear()


async def test_fork_at_a_message_asks_first_naming_it_then_forks_and_returns_the_keyboard(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await two_turns(app, pilot)
        parent = app.runtime.info.session_id
        first_answer = app.query(AssistantBlock).first()
        assert first_answer.message_index == 3
        first_answer.focus()
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the confirmation")
        question = str(app.screen.query_one(".dialog--message").render())
        assert "message 4 of 8" in question and "notes.txt" in question, question  # the answer to `ls`
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.focused, PromptInput), "the prompt after saying no")
        assert app.runtime.info.session_id == parent
        first_answer.focus()
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the confirmation")
        await pilot.click("#confirm")
        await wait_until(pilot, lambda: app.runtime.info.parent == parent, "the fork")
        await wait_idle(app, pilot)
        assert app.runtime.history_count() == 4, "the fork keeps the first turn only"
        assert isinstance(app.focused, PromptInput), "after the switch the keyboard is back in the prompt"
        await pilot.press(*"next")
        assert prompt_of(app).text == "next"


async def test_after_a_session_switch_the_keyboard_is_in_the_prompt(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await two_turns(app, pilot)
        first = app.runtime.info.session_id
        app.query(AssistantBlock).last().focus()  # the selected message goes away with the switch
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: app.runtime.info.session_id != first, "the new session")
        await wait_idle(app, pilot)
        assert isinstance(app.focused, PromptInput)
        await pilot.press(*"keys land")
        assert prompt_of(app).text == "keys land"


async def test_the_palette_offers_fork_at_the_selected_message(tmp_path: Path) -> None:
    from textual.command import CommandPalette

    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await two_turns(app, pilot)
        app.query(UserBlock).last().focus()
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"fork at")
        await wait_until(pilot, lambda: palette_choices(app)[:1] == ["Fork at the selected message"], "the choice")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the confirmation")
        assert "read notes.txt" in str(app.screen.query_one(".dialog--message").render())
        await pilot.press("escape")


# -- 13.2 a prompt sent during a turn is queued ------------------------------------------------------


async def test_a_prompt_sent_while_a_turn_streams_is_queued_then_sent(tmp_path: Path) -> None:
    model, gate = gated_model()
    app = make_app(make_factory(tmp_path, chat_model=model))
    async with app.run_test(size=(120, 36)) as pilot:
        queue = app.query_one(PromptQueue)
        await pilot.press(*"first", "enter")
        await wait_until(pilot, lambda: app.runtime.busy, "the first turn")
        await pilot.press(*"second", "enter")
        assert queue.texts == ["second"] and prompt_of(app).text == ""
        await pilot.pause()
        assert queue.display and "queued" in str(queue.query_one(".queued-label").render())
        assert "second" in str(queue.query_one(".queued-text").render())
        assert app.screen.active_bindings["escape"].binding.description == "cancel", "esc cancel shows while it runs"
        gate.set()
        await wait_until(pilot, lambda: user_prompts(app) == ["first", "second"], "the queued prompt to be sent")
        await wait_idle(app, pilot)
        assert len(queue) == 0 and not queue.display
        assert app.runtime.history_count() == 4
        assert "escape" not in app.screen.active_bindings, "and not when nothing runs"


async def test_queued_prompts_can_be_cancelled_and_edited(tmp_path: Path) -> None:
    model, gate = gated_model()
    app = make_app(make_factory(tmp_path, chat_model=model))
    async with app.run_test(size=(120, 36)) as pilot:
        queue = app.query_one(PromptQueue)
        await pilot.press(*"first", "enter")
        await wait_until(pilot, lambda: app.runtime.busy, "the first turn")
        for text in ("two", "three", "four"):
            await pilot.press(*text, "enter")
        assert queue.texts == ["two", "three", "four"]
        await pilot.pause()
        await pilot.click(".queued-cancel")  # the first row: "two"
        assert queue.texts == ["three", "four"]
        await pilot.click(".queued-edit")  # "three" goes back into the prompt
        await wait_until(pilot, lambda: prompt_of(app).text == "three", "the edited prompt in the editor")
        assert queue.texts == ["four"] and isinstance(app.focused, PromptInput)
        prompt_of(app).clear()
        await pilot.press("up")  # an empty prompt: Up takes the newest queued prompt back
        assert prompt_of(app).text == "four" and queue.texts == []
        await pilot.press(*" more", "enter")  # still streaming: queued again, edited
        assert queue.texts == ["four more"]
        gate.set()
        await wait_until(pilot, lambda: user_prompts(app) == ["first", "four more"], "the edited prompt sent")
        await wait_idle(app, pilot)


async def test_cancelling_a_turn_puts_the_queued_prompts_back_in_the_prompt(tmp_path: Path) -> None:
    model, _gate = gated_model()
    app = make_app(make_factory(tmp_path, chat_model=model))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"first", "enter")
        await wait_until(pilot, lambda: app.runtime.busy, "the first turn")
        await pilot.press(*"then this", "enter")
        await pilot.press("escape")
        await wait_until(pilot, lambda: prompt_of(app).text == "then this", "the queued text back in the prompt")
        await wait_idle(app, pilot)
        assert user_prompts(app) == ["first"], "a cancelled turn does not send the queue"
        assert len(app.query_one(PromptQueue)) == 0


async def test_a_burst_of_keys_then_enter_sends_all_of_them(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, chat_model=reply_model("ok")))
    async with app.run_test(size=(100, 30)) as pilot:
        burst(app, "read notes now")
        await wait_until(pilot, lambda: user_prompts(app) == ["read notes now"], "the whole prompt to be sent")
        await wait_idle(app, pilot)


# -- 13.3 unknown commands ---------------------------------------------------------------------------


async def test_an_unknown_command_keeps_the_text_and_names_the_closest(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, chat_model=reply_model("ok")))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"/contxt please", "enter")
        await wait_until(pilot, lambda: app._notifications, "a note")
        [note] = [str(n.message) for n in app._notifications]
        assert "/contxt is not a command" in note and "did you mean /context" in note and "/compact" in note
        assert prompt_of(app).text == "/contxt please", "the input is kept, to be corrected"
        assert app.runtime.history_count() == 0
        prompt_of(app).clear()
        await pilot.press(*"//etc/hosts is a path", "enter")  # a message that starts with a slash
        await wait_until(pilot, lambda: user_prompts(app) == ["/etc/hosts is a path"], "the escaped message")


# -- 13.5 history and completion -----------------------------------------------------------------------


async def test_up_and_down_walk_the_prompt_history_which_is_kept_per_session(tmp_path: Path) -> None:
    factory = make_factory(tmp_path, chat_model=reply_model("ok"))
    app = make_app(factory)
    async with app.run_test(size=(100, 30)) as pilot:
        for text in ("alpha", "beta", "/context"):
            await pilot.press(*text, "enter")
            await wait_idle(app, pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen), "/context")
        await pilot.press("escape")
        prompt = prompt_of(app)
        await pilot.press(*"draft")
        await pilot.press("up")
        assert prompt.text == "/context"
        await pilot.press("up", "up")
        assert prompt.text == "alpha"
        await pilot.press("up")
        assert prompt.text == "alpha", "the oldest entry stays"
        await pilot.press("down")
        assert prompt.text == "beta"
        await pilot.press("down", "down")
        assert prompt.text == "draft", "past the newest entry: what was being typed"
        prompt.clear()
        await pilot.press(*"line one", "ctrl+j", *"line two", "up")
        assert prompt.text == "line one\nline two" and prompt.cursor_location[0] == 0, "Up moves within a 2-line prompt"
        prompt.clear()
        session = app.runtime.info.session_id
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: app.runtime.info.session_id != session, "a new session")
        await pilot.press("up")
        assert prompt.text == "", "a new session has its own (empty) history"
    saved = factory.data_dir.session_dir(session) / HISTORY_FILE_NAME
    assert [json.loads(line) for line in saved.read_text().splitlines()] == ["alpha", "beta", "/context"]
    again = make_app(factory, SessionRequest(resume=session))
    async with again.run_test(size=(100, 30)) as pilot:
        await pilot.press("up")
        assert prompt_of(again).text == "/context", "the history outlives the app"
        await pilot.press("ctrl+f")  # a fork starts with its parent's history (the whole session: confirmed by key)
        await wait_until(pilot, lambda: isinstance(again.screen, ConfirmModal), "the fork confirmation")
        await pilot.press("y")
        await wait_until(pilot, lambda: again.runtime.info.parent == session, "the fork")
        await pilot.press("up", "up")
        assert prompt_of(again).text == "beta"


async def test_slash_completes_commands_from_the_registry(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        suggestions = app.query_one(CommandSuggestions)
        await pilot.press("slash")
        await pilot.pause()
        assert suggestions.display and len(suggestions.commands) == len(COMMANDS)
        await pilot.press(*"co")
        await pilot.pause()
        assert [command.name for command in suggestions.commands][:2] == ["compact", "context"]
        await pilot.press(*"nt")
        await pilot.pause()
        assert [command.name for command in suggestions.commands] == ["context"]
        await pilot.press("tab")
        assert prompt_of(app).text == "/context" and not suggestions.display
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen), "/context")
        await pilot.press("escape")
        await pilot.press(*"/he")
        await pilot.press("escape")  # closes the list, keeps the text
        assert prompt_of(app).text == "/he" and not suggestions.display
        prompt_of(app).clear()
        await pilot.press(*"/ses", "down", "up", "enter")  # Enter takes the highlighted command
        await wait_until(pilot, lambda: type(app.screen).__name__ == "SessionPickerScreen", "/sessions")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.screen_stack[0], "the picker to close")
        await pilot.press(*"/hel")
        await pilot.click("#suggestions", offset=(3, 0))  # a click on a completion runs it
        await wait_until(pilot, lambda: type(app.screen).__name__ == "HelpScreen", "/help by click")


# -- 13.6 scrolling ------------------------------------------------------------------------------------


def long_session(factory, turns: int = 30) -> str:  # type: ignore[no-untyped-def]
    handle = factory.store.create(model="offline")
    messages = []
    for number in range(turns):
        messages += [ModelRequest(parts=[UserPromptPart(f"question {number}")]),
                     ModelResponse(parts=[TextPart(f"answer {number}\n\nsecond paragraph")])]
    result = "\n".join(f"{n:>6}\tline {n} of the file" for n in range(1, 61))
    messages += [ModelRequest(parts=[UserPromptPart("read the long file")]),
                 ModelResponse(parts=[ToolCallPart("read_file", {"path": "long.txt"}, "call-long")]),
                 ModelRequest(parts=[ToolReturnPart("read_file", result, "call-long")]),
                 ModelResponse(parts=[TextPart("That is the file.")])]
    handle.append_messages(messages)
    handle.close()
    return handle.id


async def test_page_keys_and_home_end_scroll_the_chat_from_the_prompt(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    app = make_app(factory, SessionRequest(resume=long_session(factory)))
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        await wait_until(pilot, lambda: chat.max_scroll_y > 20 and chat.scroll_y == chat.max_scroll_y, "the end")
        assert isinstance(app.focused, PromptInput)
        bottom, first_loaded = chat.scroll_y, chat.loaded_from
        await pilot.press("pageup")
        assert chat.scroll_y < bottom
        await pilot.press("pagedown")
        assert chat.scroll_y == bottom
        await pilot.press("home")
        await wait_until(pilot, lambda: chat.loaded_from < first_loaded, "the top (where the earlier page loads)")
        await pilot.press("end")
        await wait_until(pilot, lambda: chat.scroll_y == chat.max_scroll_y, "the bottom again")
        await pilot.press(*"abc", "home")  # with text, Home is the start of the line
        assert prompt_of(app).cursor_location == (0, 0) and chat.scroll_y == chat.max_scroll_y
        assert isinstance(app.focused, PromptInput)


async def test_the_wheel_over_an_expanded_tool_result_scrolls_the_chat(tmp_path: Path) -> None:
    factory = make_factory(tmp_path)
    app = make_app(factory, SessionRequest(resume=long_session(factory)))
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        tool = app.query(ToolBlock).last()
        tool.collapsed = False
        await wait_until(pilot, lambda: tool.query_one(".tool-result").size.height >= 60, "the expanded result")
        nested = [widget for widget in chat.query("*") if widget.max_scroll_y > 0]
        assert nested == [], f"scroll boxes inside the chat take the wheel from it: {nested}"
        result = tool.query_one(".tool-result")
        chat.scroll_to_widget(result, animate=False, top=True)
        await pilot.pause()
        before = chat.scroll_y
        region = result.region
        x, y = region.x + 5, region.y + 3
        assert app.get_widget_at(x, y)[0] is result, "the pointer is over the tool result"
        wheel = events.MouseScrollUp(None, x, y, 0, -1, 0, False, False, False, screen_x=x, screen_y=y)
        wheel.set_sender(app)
        app._driver.send_message(wheel)  # type: ignore[union-attr]
        await wait_until(pilot, lambda: chat.scroll_y < before, "the chat to scroll")
        assert result.scroll_y == 0


# -- small: the first start -------------------------------------------------------------------------


async def test_an_empty_session_shows_a_welcome_until_the_first_prompt(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, chat_model=reply_model("hello")))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        welcome = str(app.query_one("#welcome").render())
        for needed in ("context gauge", "85%", "F1", "Ctrl+P", "--model", "DEEP_TUI_MODEL", "config.toml",
                       "ANTHROPIC_API_KEY"):
            assert needed in welcome, needed
        await pilot.press(*"/help", "enter")  # a command is not the first prompt
        await wait_until(pilot, lambda: app.screen is not app.screen_stack[0], "the help screen")
        await pilot.press("escape")
        assert app.query("#welcome")
        await pilot.press(*"hi", "enter")
        await wait_until(pilot, lambda: not app.query("#welcome"), "the welcome to go")
        await wait_idle(app, pilot)
        await pilot.press("ctrl+n")
        session = app.runtime.info.session_id
        await wait_until(pilot, lambda: app.runtime.history_count() == 0, "a new, empty session")
        await wait_idle(app, pilot)
        assert not app.query("#welcome"), "once dismissed, it stays away for this run"
        assert session


async def test_every_answer_of_a_turn_can_be_forked_at_not_only_the_last(tmp_path: Path) -> None:
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

    def answered(messages: list[ModelMessage]) -> bool:
        return any(isinstance(part, ToolReturnPart) for part in messages[-1].parts)

    async def stream(messages: list[ModelMessage], info: AgentInfo):  # type: ignore[no-untyped-def]
        if answered(messages):
            yield "It says alpha."
            return
        yield "Let me look first."  # text closed by the tool call that follows
        yield {0: DeltaToolCall(name="read_file", json_args='{"path": "notes.txt"}', tool_call_id="c1")}

    def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if answered(messages):
            return ModelResponse(parts=[TextPart("It says alpha.")])
        return ModelResponse(parts=[TextPart("Let me look first."),
                                    ToolCallPart("read_file", {"path": "notes.txt"}, tool_call_id="c1")])

    model = FunctionModel(whole, stream_function=stream, model_name="scripted")
    app = make_app(make_factory(tmp_path, chat_model=model))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"what is in notes", "enter")
        await wait_idle(app, pilot)
        first, last = app.query(AssistantBlock)
        assert "Let me look" in first.received and "alpha" in last.received
        assert (first.message_index, last.message_index) == (1, 3)
        first.focus()
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the fork confirmation")
        assert "message 2 of 4" in str(app.screen.query_one(".dialog--message").render())
        await pilot.press("n")

"""Issue 30 in the app: the Todo panel (Ctrl+T, /todos), the line above the gauge, Shift+Tab cycling the mode,
/keep with and without text, plan mode refusing a write, and the plan-done offer — a real session with a
scripted model."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tui.agent.runtime_api import TaskStateAPI
from tui.app.screens.basic_dialogs import ChoiceModal
from tui.app.screens.keep_lines import KeepLinesModal
from tui.app.screens.plan_offer import GO_AHEAD
from tui.app.widgets.prompt_input import PromptInput
from tui.app.widgets.task_line import TaskLine
from tui.app.widgets.title_bar import TitleBar
from tui.app.widgets.todo_panel import TodoPanel

SnapCompare = Callable[..., bool]
TODOS = [{"content": "Read notes.txt", "status": "completed"},
         {"content": "Change alpha to omega", "status": "in_progress", "active_form": "Changing alpha to omega"},
         {"content": "Run the tests", "status": "pending"}]


def planning_model() -> FunctionModel:
    """First prompt: write_todos and write_file in one response, then a plan in words; later prompts: 'done'."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        prompts = sum(1 for m in messages if isinstance(m, ModelRequest)
                      and any(isinstance(p, UserPromptPart) for p in m.parts))
        last = messages[-1]
        returned = isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts)
        if prompts == 1 and not returned:
            yield {0: DeltaToolCall(name="write_todos", json_args=json.dumps({"todos": TODOS}), tool_call_id="t1"),
                   1: DeltaToolCall(name="write_file", json_args=json.dumps({"path": "notes.txt", "content": "x"}),
                                    tool_call_id="w1")}
            return
        yield "Plan: 1. change alpha 2. run the tests" if prompts == 1 else "done"

    return FunctionModel(stream_function=stream, model_name="planner")


def plan_app(tmp_path: Path):  # type: ignore[no-untyped-def]
    factory = make_factory(tmp_path, chat_model=planning_model())
    factory.settings = factory.settings.with_overrides(mode="plan")
    return make_app(factory)


async def submit(pilot, app, text: str) -> None:  # type: ignore[no-untyped-def]
    prompt = app.query_one(PromptInput)
    prompt.load_text(text)
    prompt.focus()
    await pilot.press("enter")


async def test_plan_mode_in_the_app_refuses_the_write_shows_the_list_and_offers_to_start(tmp_path: Path) -> None:
    app = plan_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        line = app.query_one(TaskLine)
        await wait_until(pilot, lambda: "plan mode" in str(line.render()), "the mode on the task line")
        assert "⏸ plan mode" in str(app.query_one(TitleBar).render())  # --mode plan: in the title bar from the start
        await submit(pilot, app, "make a plan")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceModal), "the plan offer")
        assert (tmp_path / "work" / "notes.txt").read_text() == "alpha\nbeta\n"  # refused in plan mode
        assert "▸ Changing alpha to omega · 2/3" in str(line.render())
        await pilot.click("#choice-start")
        await wait_until(pilot, lambda: not isinstance(app.screen, ChoiceModal), "the offer closed")
        runtime = app.main_screen.state.runtime
        assert isinstance(runtime, TaskStateAPI) and runtime.mode == "default"
        assert "⏸" not in str(app.query_one(TitleBar).render())  # left plan mode: the title bar says so at once
        await wait_idle(app, pilot)
        assert any(GO_AHEAD in str(block.render()) for block in app.main_screen.chat.children) or \
            runtime.history_count() > 4  # the go-ahead was sent as a turn


async def test_shift_tab_cycles_the_mode_and_keep_adds_lists_and_deletes(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        runtime = app.main_screen.state.runtime
        assert isinstance(runtime, TaskStateAPI)
        await wait_until(pilot, lambda: app.query_one(PromptInput).has_focus, "the prompt")
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: runtime.mode == "accept-writes", "auto-accept writes")
        title = app.query_one(TitleBar)
        assert "auto-accept writes" in str(app.query_one(TaskLine).render())
        assert "⏵⏵ auto-accept writes" in str(title.render())  # the title bar says it too
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: runtime.mode == "plan", "plan mode")
        assert "⏸ plan mode" in str(title.render())
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: runtime.mode == "default", "back to default")
        assert app.query_one(TaskLine).has_class("-empty")
        assert "⏸" not in str(title.render()) and "⏵" not in str(title.render())
        await submit(pilot, app, "/keep never touch migrations/")
        await wait_until(pilot, lambda: len(runtime.task_state().keep) == 1, "the kept line")
        await submit(pilot, app, "/keep")
        await wait_until(pilot, lambda: isinstance(app.screen, KeepLinesModal), "the /keep list")
        await pilot.click("#delete-0")
        await wait_until(pilot, lambda: not runtime.task_state().keep, "deleted")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, KeepLinesModal), "closed")
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: bool(app.query(TodoPanel)) and app.query_one(TodoPanel).is_on_screen,
                         "the Todos panel")


@pytest.mark.parametrize("size", [pytest.param((80, 24), id="80x24"), pytest.param((60, 20), id="60x20")])
def test_the_todos_panel_in_the_app(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tui.store.session_store.secrets.token_hex", lambda n: "0000000000ab")
    app = make_app(make_factory(tmp_path))
    runtime = app.main_screen.state.runtime
    assert isinstance(runtime, TaskStateAPI)
    from tui.store.task_state import todo_list

    runtime.tasks.write_todos(todo_list(TODOS))  # type: ignore[attr-defined]
    runtime.add_keep("never touch migrations/")

    async def open_panel(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_until(pilot, lambda: app.query(TodoPanel), "the panels")
        app.main_screen.dismiss_welcome()  # it names this run's temporary config directory
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: app.query_one(TodoPanel).is_on_screen, "the panel open")
        app.main_screen.tasks.show()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=open_panel)


async def test_typing_after_opening_the_todos_panel_goes_to_the_prompt(tmp_path: Path) -> None:
    """/todos (or Ctrl+T) puts the keyboard in the panel, which takes no text: what is typed next goes to the
    prompt, in order, instead of vanishing (the panel stays open)."""
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        runtime = app.main_screen.state.runtime
        assert isinstance(runtime, TaskStateAPI)
        prompt = app.query_one(PromptInput)
        await wait_until(pilot, lambda: prompt.has_focus, "the prompt")
        await pilot.press(*"/todos", "escape", "enter")
        await wait_until(pilot, lambda: bool(app.query(TodoPanel)) and app.query_one(TodoPanel).is_on_screen
                         and app.focused is not None and app.focused is not prompt, "the Todos panel, focused")
        await pilot.press(*"/keep never touch x.py", "enter")
        await wait_until(pilot, lambda: [line.text for line in runtime.task_state().keep] == ["never touch x.py"],
                         "the kept line, typed in the panel")
        assert app.query_one(TodoPanel).is_on_screen
        await pilot.press("ctrl+l")  # the Log panel: the same
        await wait_until(pilot, lambda: app.focused is not prompt, "the Log panel, focused")
        await pilot.press(*"abc")
        await wait_until(pilot, lambda: prompt.text == "abc", "the letters in the prompt")

"""The task-state widgets (issue 30), before they are wired into the app: the Todo panel, the line above the
gauge, the /keep list with delete, the plan-done offer — each clicked, and at 80x24 and 60x20."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Button, Static

from tests.app.app_support import wait_until
from tui.agent.tasks.board import TaskBoard
from tui.agent.tasks.events import TaskStateChanged
from tui.app.screens.keep_lines import KeepLinesModal
from tui.app.screens.plan_offer import EDIT, START, plan_offer
from tui.app.widgets.task_line import TaskLine
from tui.app.widgets.todo_panel import TodoPanel
from tui.store.task_state import TaskState, TaskStateFile, todo_list

SnapCompare = Callable[..., bool]
SEVEN = [{"content": step, "status": "completed" if n < 2 else ("in_progress" if n == 2 else "pending"),
          "active_form": f"{step.split()[0]}ing {' '.join(step.split()[1:])}".replace("Runing", "Running")}
         for n, step in enumerate(("Read the module layout", "Find the failing parser test", "Run the tests",
                                   "Fix the tokenizer's escape handling", "Update the changelog",
                                   "Write the summary [bold]for[/bold] the user \x1b[31m", "Clean up out/"))]
SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((60, 20), id="60x20")]


def board(tmp_path: Path) -> TaskBoard:
    heard: list[Any] = []
    tasks = TaskBoard(TaskStateFile.of(tmp_path), notify=heard.append)
    tasks.write_todos(todo_list(SEVEN))
    tasks.add_keep("never touch migrations/")
    tasks.add_keep("answer in English, in at most five lines, and never run the deploy script")
    return tasks


class TaskApp(App[None]):
    """The panel filling the screen and the task line under it, as the app will place them."""

    def __init__(self, tasks: TaskBoard, mode: str = "plan") -> None:
        super().__init__()
        self.tasks = tasks
        self.mode = mode

    def compose(self) -> ComposeResult:
        yield TodoPanel(self.tasks.state, id="todos")
        yield TaskLine(id="task-line")
        yield Static("context ░░░░░░░░░░  1%  2k / 200k", id="gauge")

    def on_mount(self) -> None:
        self.query_one(TodoPanel).show(self.tasks.state)
        self.query_one(TaskLine).show(self.tasks.changed_event(), mode=self.mode)

    def on_todo_panel_keep_delete_requested(self, message: TodoPanel.KeepDeleteRequested) -> None:
        self.query_one(TodoPanel).show(self.tasks.remove_keep(message.index))


@pytest.mark.parametrize("size", SIZES)
def test_the_todo_panel_and_the_task_line(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]) -> None:
    assert snap_compare(TaskApp(board(tmp_path)), terminal_size=size)


async def test_the_panel_deletes_a_kept_line_by_its_button_and_shows_model_text_literally(tmp_path: Path) -> None:
    tasks = board(tmp_path)
    app = TaskApp(tasks, mode="default")
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(TodoPanel)
        assert panel.border_title == "Todos · 2/7"
        texts = [str(widget.render()) for widget in panel.query(Static)]
        assert any("[bold]for[/bold]" in text for text in texts)  # not markup
        assert not any("\x1b" in text for text in texts)
        await pilot.click("#keep-delete-0")
        await wait_until(pilot, lambda: len(tasks.state.keep) == 1, "the line deleted")
        await wait_until(pilot, lambda: not app.query("#keep-delete-1"), "the panel redrawn")
        assert TaskStateFile.of(tmp_path).state.keep[0].text.startswith("answer in English")
        line = app.query_one(TaskLine)
        assert str(line.render()) == "▸ Running the tests · 3/7"
        line.show(mode="plan")
        assert str(line.render()).startswith("⏸ plan mode · ▸ Running the tests")
        line.show(TaskStateChanged(), mode="default")
        assert line.has_class("-empty")


class KeepApp(App[None]):
    def __init__(self, tasks: TaskBoard) -> None:
        super().__init__()
        self.tasks = tasks

    def compose(self) -> ComposeResult:
        yield Static("chat")

    def on_mount(self) -> None:
        self.push_screen(KeepLinesModal(self.tasks.state.keep, self.tasks.remove_keep))


@pytest.mark.parametrize("size", SIZES)
def test_the_keep_list(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]) -> None:
    assert snap_compare(KeepApp(board(tmp_path)), terminal_size=size)


async def test_the_keep_list_deletes_by_click_and_by_key_and_closes(tmp_path: Path) -> None:
    tasks = board(tmp_path)
    app = KeepApp(tasks)
    async with app.run_test(size=(60, 20)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, KeepLinesModal), "the dialog")
        await pilot.click("#delete-1")
        await wait_until(pilot, lambda: len(tasks.state.keep) == 1, "the second line deleted")
        await wait_until(pilot, lambda: not app.screen.query("#delete-1"), "the list redrawn")
        app.screen.query_one("#delete-0", Button).focus()
        await pilot.press("d")
        await wait_until(pilot, lambda: not tasks.state.keep, "the first line deleted")
        await pilot.click("#close")
        await wait_until(pilot, lambda: not isinstance(app.screen, KeepLinesModal), "closed")


class OfferApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.answers: list[str | None] = []

    def compose(self) -> ComposeResult:
        yield Static("chat")

    def on_mount(self) -> None:
        self.push_screen(plan_offer(7), self.answers.append)


@pytest.mark.parametrize("size", SIZES)
def test_the_plan_offer(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    assert snap_compare(OfferApp(), terminal_size=size)


@pytest.mark.parametrize(("control", "answer"), [("#choice-start", START), ("#choice-edit", EDIT)])
async def test_the_plan_offer_answers_by_click(control: str, answer: str) -> None:
    app = OfferApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: bool(app.screen.query(control)), "the offer")
        await pilot.click(control)
        await wait_until(pilot, lambda: app.answers == [answer], "the answer")


async def test_the_plan_offer_keep_planning_by_key() -> None:
    app = OfferApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: bool(app.screen.query("#choice-keep")), "the offer")
        await pilot.press("k")
        await wait_until(pilot, lambda: app.answers == ["keep"], "the answer")


def test_an_empty_state_says_how_to_fill_it() -> None:
    assert TaskState().empty

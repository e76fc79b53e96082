"""Custom slash commands and skills in the app: ``/NAME args`` sends the file's text with its arguments; the
commands are in the ``/`` completion, the palette and F1, marked as the user's or the project's; a clash with a
built-in never replaces it (and is said); ``/skills`` lists what is offered and what was skipped."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from textual.command import CommandPalette

from tests.agent.extension_support import user_commands, user_skills, write_command, write_skill
from tests.app.app_support import OPENED, wait_idle, wait_until
from tests.app.test_app import palette_choices
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.command_registry import find, use_custom_commands
from tui.app.screens.basic_dialogs import TextViewerModal
from tui.app.screens.help import help_text
from tui.app.widgets.suggestions import CommandSuggestions
from tui.base.config import Settings
from tui.base.paths import DataDir


@pytest.fixture(autouse=True)
def no_custom_commands_after() -> Iterator[None]:
    yield
    use_custom_commands([])  # the registry is the process's: the next test starts with the built-ins only


def _app(tmp_path: Path, prompts: list[str], *, trusted: bool) -> DeepTuiApp:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)

    def record(messages: list[ModelMessage]) -> None:
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        prompts.extend(str(part.content) for part in last.parts if isinstance(part, UserPromptPart))

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        record(messages)
        return ModelResponse(parts=[TextPart("ok")])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        record(messages)
        yield "ok"

    factory = RuntimeFactory(settings=Settings(), data_dir=DataDir(tmp_path / "data"), workdir=project,
                             choice=choose_model("test", None), chat_model=FunctionModel(answer, stream_function=stream),
                             trusted_project=project if trusted else None)
    runtime = factory.open_request_sync(SessionRequest())
    app = DeepTuiApp(factory=factory, runtime=runtime, store=factory.store, settings=factory.settings)
    OPENED.append(app)
    return app


def _files(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_command(user_commands(), "review", "---\ndescription: Review a file\n---\nReview $1 then $2 ($ARGUMENTS).")
    write_command(user_commands(), "compact", "NOT THE BUILT-IN")
    write_command(project / ".claude" / "commands", "ship", "---\ndescription: Ship it\n---\nShip version $1.")
    write_skill(user_skills(), "pdf", "Fill PDF forms", "BODY")
    write_skill(project / ".deep-tui" / "skills", "lint", "Project lint rules", "LINT")


async def test_a_custom_command_sends_its_text_and_a_clash_keeps_the_built_in(tmp_path: Path) -> None:
    _files(tmp_path)
    prompts: list[str] = []
    app = _app(tmp_path, prompts, trusted=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_idle(app, pilot)
        await pilot.press(*"/review a.py b.py", "enter")
        await wait_idle(app, pilot)
        await wait_until(pilot, lambda: prompts == ["Review a.py then b.py (a.py b.py)."], "the expanded prompt")
        await pilot.press(*"/ship 2.0", "enter")
        await wait_idle(app, pilot)
        await wait_until(pilot, lambda: prompts[-1:] == ["Ship version 2.0."], "the project's command")
        compact = find("compact")
        assert compact is not None and compact.custom is None
        assert any("/compact" in str(n.message) and "built-in" in str(n.message) for n in app._notifications)


async def test_completion_palette_and_help_mark_whose_a_command_is(tmp_path: Path) -> None:
    _files(tmp_path)
    prompts: list[str] = []
    app = _app(tmp_path, prompts, trusted=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_idle(app, pilot)
        await pilot.press(*"/rev")
        suggestions = app.screen.query_one(CommandSuggestions)
        await wait_until(pilot, lambda: [item.value for item in suggestions.items][:1] == ["review"], "completion")
        assert "Review a file (user)" in str(suggestions.items[0].label)
        for _ in "/rev":
            await pilot.press("backspace")
        text = str(help_text(120))
        assert "/review [arguments]" in text and "Review a file (user)" in text and "Ship it (project)" in text
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"ship")
        await wait_until(pilot, lambda: palette_choices(app)[:1] == ["/ship"], "/ship first")
        await pilot.press("enter")
        await wait_idle(app, pilot)
        await wait_until(pilot, lambda: prompts == ["Ship version ."], "the palette's command sent")


async def test_an_untrusted_projects_commands_and_skills_are_inert(tmp_path: Path) -> None:
    _files(tmp_path)
    app = _app(tmp_path, [], trusted=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_idle(app, pilot)
        assert find("ship") is None and find("review") is not None
        await pilot.press(*"/skills", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TextViewerModal), "the /skills list")
        shown = str(app.screen._body)  # type: ignore[attr-defined]
        assert "pdf  [user]  Fill PDF forms" in shown and "lint" not in shown
        assert "/review  [user]  Review a file" in shown and "/ship" not in shown
        await pilot.click("#viewer-body")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, TextViewerModal), "the list closed")

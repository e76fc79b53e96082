"""Issue 21.3/21.5/21.6 in the app: ``@`` completes files (keys and clicks) and attaches them, ``/model`` switches
the model (by name, completion or chooser) with the title bar, gauge and one notice following, and AGENTS.md shows
in /context."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from tests.app.app_support import make_app, make_factory, wait_idle, wait_until
from tui.app.app import DeepTuiApp
from tui.app.screens.context_report import ContextScreen, breakdown_lines
from tui.app.screens.model_chooser import ModelChooser
from tui.app.widgets.chat_blocks import UserBlock
from tui.app.widgets.chat_view import ChatView
from tui.app.widgets.prompt_input import CommandSuggestions, PromptInput
from tui.app.widgets.title_bar import TitleBar

SIZE = (80, 24)


@pytest.fixture(autouse=True)
def fixed_ids(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DEEP_TUI_CONFIG_HOME", str(tmp_path / "config"))  # the welcome names it: relative here
    counter = itertools.count(1)
    monkeypatch.setattr("tui.store.session_store.secrets.token_hex", lambda n: f"{next(counter):012x}")


def _workdir_files(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True, exist_ok=True)
    (work / "src" / "app.py").write_text("def main():\n    return 42\n")
    (work / "src" / "util.py").write_text("HELPER = 1\n")
    (work / "docs").mkdir(exist_ok=True)
    (work / "docs" / "guide.md").write_text("# Guide\n")
    (work / "node_modules" / "pkg").mkdir(parents=True, exist_ok=True)
    (work / "node_modules" / "pkg" / "app.js").write_text("ignored\n")


def capturing_model(seen: list[list[ModelMessage]]) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        seen.append(messages)
        yield "read it"

    return FunctionModel(stream_function=stream, model_name="capture")


def suggestion_values(app: DeepTuiApp) -> list[str]:
    return [item.value for item in app.query_one(CommandSuggestions).items]


def prompt(app: DeepTuiApp) -> PromptInput:
    return app.query_one(PromptInput)


# -- @path --------------------------------------------------------------------------------------------


async def test_at_completes_files_with_tab_and_sends_them_attached(tmp_path: Path) -> None:
    _workdir_files(tmp_path)
    seen: list[list[ModelMessage]] = []
    app = make_app(make_factory(tmp_path, chat_model=capturing_model(seen)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"explain @ap")
        await wait_until(pilot, lambda: "src/app.py" in suggestion_values(app), "the file list")
        assert suggestion_values(app)[0] == "src/app.py"
        assert not any("node_modules" in value for value in suggestion_values(app)), "ignored dirs are not offered"
        await pilot.press("tab")
        assert prompt(app).text == "explain @src/app.py "
        assert not app.query_one(CommandSuggestions).shown
        await pilot.press(*"please", "enter")
        await wait_idle(app, pilot)
        sent = seen[-1][-1]
        assert isinstance(sent, ModelRequest)
        part = next(p for p in sent.parts if isinstance(p, UserPromptPart))
        assert "return 42" in str(part.content), "the model got the file's content"
        chat_text = " ".join(str(block.render()) for block in app.query_one(ChatView).query("NoticeBlock"))
        assert "attached: src/app.py (26 bytes)" in chat_text
        user_text = " ".join(str(block.render()) for block in app.query(UserBlock))
        assert "return 42" not in user_text, "the chat shows the name, not the content"


async def test_clicking_a_file_entry_puts_it_in_the_prompt_and_enter_takes_the_highlighted(tmp_path: Path) -> None:
    _workdir_files(tmp_path)
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"see @util")
        await wait_until(pilot, lambda: suggestion_values(app) == ["src/util.py"], "the file list")
        await pilot.click("#suggestions", offset=(3, 0))
        assert prompt(app).text == "see @src/util.py "
        await pilot.press(*"and @gui")
        await wait_until(pilot, lambda: suggestion_values(app) == ["docs/guide.md"], "the second list")
        await pilot.press("enter")  # with a file listed, Enter completes it (nothing is sent)
        assert prompt(app).text == "see @src/util.py and @docs/guide.md "
        assert app.runtime.history_count() == 0
        await pilot.press(*"@zzzz")
        await pilot.pause()
        assert not app.query_one(CommandSuggestions).shown, "nothing matches: no list"
        await pilot.press("escape")


def test_snapshot_file_completion(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _workdir_files(tmp_path)
    app = make_app(make_factory(tmp_path))

    async def type_at(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press(*"look at @")
        await wait_until(pilot, lambda: len(suggestion_values(app)) >= 3, "the file list")

    assert snap_compare(app, terminal_size=SIZE, run_before=type_at)


# -- /model -------------------------------------------------------------------------------------------


async def test_model_name_switches_title_gauge_and_says_where_the_window_came_from(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-sent")
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(100, 24)) as pilot:
        assert "offline" in str(app.query_one(TitleBar).render())
        await pilot.press(*"/model openai:gpt-4o", "enter")
        await wait_until(pilot, lambda: any("Model:" in n.message for n in app._notifications), "the switch")
        title = str(app.query_one(TitleBar).render())
        assert "openai:gpt-4o" in title and "offline" not in title
        assert app.usage is not None and app.usage.window == 128_000, "the gauge changed at once"
        notices = [n.message for n in app._notifications]
        assert any("openai:gpt-4o (was offline)" in n and "128k" in n for n in notices), notices
        meta = json.loads((app.runtime.handle.messages.path.parent / "session.json").read_text())  # type: ignore[attr-defined]
        assert meta["model"] == "openai:gpt-4o"


async def test_an_unknown_model_or_missing_key_is_one_notice_and_the_model_stays(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/model anthropic:claude-sonnet-5-5", "enter")
        await wait_until(pilot, lambda: app._notifications, "the notice")
        await pilot.pause()
        notices = [n.message for n in app._notifications]
        assert len(notices) == 1 and "ANTHROPIC_API_KEY is not set" in notices[0]
        assert app.runtime.info.model_name == "offline"
        app.clear_notifications()
        await pilot.press(*"/model nosuch:thing", "enter")
        await wait_until(pilot, lambda: app._notifications, "the notice")
        assert "Unknown provider" in next(iter(app._notifications)).message and app.runtime.info.model_name == "offline"


async def test_model_completion_after_the_command_with_keys_and_a_click(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-never-sent")
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/model", "tab")  # "/mode" alone is a command of its own now (the session's mode)
        assert prompt(app).text == "/model "
        await pilot.pause()
        values = suggestion_values(app)
        assert values[:2] == ["offline", "anthropic:claude-sonnet-5-5"], values
        await pilot.press(*"sonnet-5")
        await pilot.pause()
        assert suggestion_values(app)[0] == "anthropic:claude-sonnet-5-5"
        await pilot.press("tab")
        assert prompt(app).text == "/model anthropic:claude-sonnet-5-5"
        prompt(app).clear()
        await pilot.press(*"/model offl")
        await pilot.pause()
        assert suggestion_values(app) == ["offline"]
        await pilot.click("#suggestions", offset=(3, 0))  # a click runs "/model offline"
        await wait_until(pilot, lambda: any("Model: offline" in n.message for n in app._notifications), "switch")


async def test_model_without_a_name_opens_the_chooser_filter_and_click(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-sent")
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/model", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelChooser), "the chooser")
        chooser = app.screen
        assert isinstance(chooser, ModelChooser)
        names = [entry.name for entry in chooser.shown]
        assert names[:2] == ["offline", "openai:gpt-5.6-sol"] and "openai:gpt-4o" in names
        assert not any(name.startswith("anthropic:") for name in names), "no key, not offered"
        await pilot.press("escape")
        assert not isinstance(app.screen, ModelChooser) and app.runtime.info.model_name == "offline"

        await pilot.press(*"/model", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelChooser), "the chooser again")
        await pilot.press(*"gpt-4o-mini")
        await pilot.pause()
        chooser = app.screen
        assert isinstance(chooser, ModelChooser) and chooser.shown[0].name == "openai:gpt-4o-mini"
        await pilot.click("#models", offset=(3, 0))
        await wait_until(pilot, lambda: "openai:gpt-4o-mini" in str(app.query_one(TitleBar).render()), "the title")
        assert app.runtime.info.model_name == "openai:gpt-4o-mini"

        await pilot.press(*"/model", "enter")  # the model just used is offered as in use
        await wait_until(pilot, lambda: isinstance(app.screen, ModelChooser), "the chooser a third time")
        chooser = app.screen
        assert isinstance(chooser, ModelChooser) and chooser.shown[0].note == "in use"
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: app.runtime.info.model_name == "offline", "keys choose too")


def test_snapshot_model_completion(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(make_factory(tmp_path)), terminal_size=SIZE, press=[*"/model "])


@pytest.mark.parametrize("size", [SIZE, (60, 20)], ids=["80x24", "60x20"])
def test_snapshot_model_chooser(snap_compare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                size: tuple[int, int]) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-never-sent")
    assert snap_compare(make_app(make_factory(tmp_path)), terminal_size=size, press=[*"/model", "enter"])


# -- AGENTS.md in /context ------------------------------------------------------------------------------


async def test_context_shows_project_instructions_with_their_path(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "AGENTS.md").write_text("Run `make test` before answering.\n" * 20)
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen), "/context")
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        text = str(breakdown_lines(screen.report))
        assert "project instructions" in text and str(tmp_path / "work" / "AGENTS.md") in text


async def test_hostile_and_spaced_file_names_are_shown_defused_and_inserted_quoted(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "evil\x1b]52;c;aGk=\x07name.txt").write_text("x\n")
    (work / "my notes.md").write_text("notes\n")
    app = make_app(make_factory(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"@evil")
        await wait_until(pilot, lambda: suggestion_values(app), "the file list")
        option = app.query_one(CommandSuggestions).get_option_at_index(0)
        shown = str(option.prompt)
        assert "\x1b" not in shown and "\x07" not in shown and "␛" in shown
        prompt(app).clear()
        await pilot.press(*"@my no")
        await pilot.pause()
        assert not app.query_one(CommandSuggestions).shown, "a space ends an unquoted mention"
        prompt(app).clear()
        await pilot.press(*'@"my no')
        await wait_until(pilot, lambda: suggestion_values(app) == ["my notes.md"], "the quoted mention's list")
        await pilot.press("tab")
        assert prompt(app).text == '@"my notes.md" '


def test_the_first_frame_still_loads_no_pydantic_ai() -> None:
    """/model, @ completion and the attachment labels add nothing pydantic-ai to what the first frame imports."""
    code = ("import sys\n"
            "import tui.app.app, tui.app.run, tui.app.widgets.tail_blocks\n"
            "loaded = sorted(name for name in sys.modules if name.split('.')[0] == 'pydantic_ai')\n"
            "assert not loaded, loaded\n")
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr

"""What the first frame leaves for just after it: the chat's helpers (and what they import), the lines hidden at
start, the prompt queue, the Compact button, the footer's keys (as Textual's own footer's come one refresh after the
first frame)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button

from tests.app.app_support import make_factory, wait_until
from tui.agent.session.request import SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.chat.chat_helpers import HELPERS
from tui.app.chat.main_screen import MainScreen
from tui.app.widgets.prompt_input import CommandSuggestions, PromptInput
from tui.app.widgets.prompt_queue import PromptQueue
from tui.app.widgets.provider_status import ProviderStatus
from tui.app.widgets.status_row import StatusRow
from tui.app.widgets.task_line import TaskLine
from tui.app.widgets.turn_activity import TurnActivity
from tui.base.paths import DataDir
from tui.cli.launch import LaunchContext, open_session

ROOT = Path(__file__).resolve().parents[2]
DEFERRED = (TurnActivity, ProviderStatus, TaskLine, PromptQueue, CommandSuggestions, Button)


def test_the_chat_helpers_are_not_imported_for_the_first_frame() -> None:
    """The path ``deep-tui`` takes to its first frame imports none of the helpers' modules, nor what only they
    need (the approval dialogs, the export, the side panels' widgets)."""
    code = (
        "import sys\n"
        "import tui.cli.main, tui.cli.launch, tui.app.run, tui.app.app\n"
        "deferred = [f'tui.app.chat.{name}' for name in ('prompt_flow', 'turn_runner', 'session_actions',\n"
        "            'model_switching', 'file_completion', 'chat_dialogs', 'rewinding', 'chain_events',\n"
        "            'session_display', 'session_switcher', 'task_controls')]\n"
        "deferred += ['tui.app.screens.approval_dialog', 'tui.app.widgets.live_turn', 'tui.chain.event_text']\n"
        "deferred += [f'tui.app.widgets.{name}' for name in ('turn_activity', 'provider_status', 'task_line',\n"
        "             'prompt_queue')]\n"
        "deferred += ['tui.trust.project', 'tui.trust.store']  # only where a project config is read\n"
        "loaded = [name for name in deferred if name in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


async def test_hidden_lines_and_helpers_come_just_after_the_first_frame(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """At the first frame the hidden lines, the queue and the Compact button are not in the screen, no helper is
    built and the footer has no keys yet; right after, all are, in the layout's order, the status row is fitted
    the same before and after the button, and a ``/he`` typed before the first frame gets its suggestions."""
    seen: dict[str, Any] = {}
    shown = MainScreen.first_frame_shown

    def first_frame_shown(screen: MainScreen) -> None:
        seen["lines"] = [kind.__name__ for kind in DEFERRED if screen.query(kind)]
        seen["gauge"] = screen.query_one("#gauge").form
        seen["helpers"] = [name for name in HELPERS if name in vars(screen)]
        seen["footer keys"] = len(screen.query("FooterKey"))
        screen.query_one(PromptInput).insert("/he")  # typed ahead
        shown(screen)

    monkeypatch.setattr(MainScreen, "first_frame_shown", first_frame_shown)
    data_dir = DataDir(tmp_path / "data")
    context = LaunchContext(make_factory(tmp_path).settings, data_dir, tmp_path / "work", "offline")
    app = DeepTuiApp.opening(settings=context.settings, memory_path=data_dir.memory_file(), data_root=data_dir.root,
                             opener=lambda: open_session(context, SessionRequest()))  # as `deep-tui` starts
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: "lines" in seen, "the first frame")
        assert seen == {"lines": [], "gauge": 30, "helpers": [], "footer keys": 0}
        screen = app.main_screen
        await wait_until(pilot, lambda: app.factory is not None, "the session open")
        assert all(name in vars(screen) for name in HELPERS)
        await wait_until(pilot, lambda: any(key.description == "help" for key in screen.query("FooterKey")),
                         "the footer's keys, just after the first frame")
        button = screen.query_one(StatusRow).query_one("#compact-button", Button)
        assert button.display and str(button.label) == "Compact ^g"
        assert screen.query_one("#gauge").form == seen["gauge"]  # the row kept its fit when the button came
        order = [child.id for child in screen.children]
        assert order.index("turn-activity") < order.index("provider-status") < order.index("task-line") \
            < order.index("status") < order.index("queue") < order.index("suggestions") < order.index("prompt")
        suggestions = screen.query_one(CommandSuggestions)
        await wait_until(pilot, lambda: suggestions.has_class("-shown")
                         and any("/help" in str(suggestions.get_option_at_index(index).prompt)
                                 for index in range(suggestions.option_count)), "the suggestions for /he")


async def test_quitting_before_the_first_frame_is_a_clean_exit(tmp_path: Path) -> None:
    """Ctrl+Q typed ahead of the first frame: the app ends at once, with no traceback (what waited for the first
    frame is then not built)."""
    data_dir = DataDir(tmp_path / "data")
    context = LaunchContext(make_factory(tmp_path).settings, data_dir, tmp_path / "work", "offline")

    class QuitAtOnce(DeepTuiApp):
        def on_mount(self) -> None:  # runs after DeepTuiApp.on_mount (Textual calls each class's handler)
            self.call_after_refresh(self.exit)

    app = QuitAtOnce.opening(settings=context.settings, memory_path=data_dir.memory_file(), data_root=data_dir.root,
                             opener=lambda: open_session(context, SessionRequest()))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: not app.is_running, "the app to end")
    assert app.return_code in (0, None)
    assert not app.main_screen.query(TurnActivity)

"""The app's trust prompt (issue 20.1): an untrusted project config is asked about before the session opens,
and the answer — given by key or by click — decides the settings that session opens with.

The app is built as ``deep-tui`` builds it (``resolve_context`` in a cloned project, the real
:class:`~tui.cli.launch.ProjectTrustGate` and ``open_session``); the project's server is the loopback one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import models
from textual.pilot import Pilot
from textual.widgets import Button, Static

from tests.app.app_support import OPENED, armed_dialog, wait_idle, wait_until
from tests.support.openai_server import ChatServerState, openai_chat_server
from tui.agent.session.request import SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.screens.project_trust import ProjectTrustScreen
from tui.base.config import Settings
from tui.base.config_layers import parse_config
from tui.base.paths import DataDir, trust_store_file, user_config_file
from tui.cli.launch import LaunchContext, ProjectTrustGate, open_session, resolve_context
from tui.cli.main import build_parser
from tui.trust.project import ProjectConfig, TrustState, pending_project
from tui.trust.store import TrustRecord, TrustStore

SIZE = (100, 30)
KEY = "sk-test-user-secret-0123456789"
SnapCompare = Callable[..., bool]


@pytest.fixture
def servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, ChatServerState, ChatServerState]]:
    """A cloned project, as the working directory, whose config points at a loopback "attacker" server; the
    user's own config points at another loopback server (the user's). Yields ``(clone, user's, project's)``."""
    with openai_chat_server(ChatServerState(reply="from the user's server")) as (user_url, user_state), \
            openai_chat_server(ChatServerState(reply="from the project's server")) as (url, state):
        clone = tmp_path / "clone"
        (clone / ".deep-tui").mkdir(parents=True)
        (clone / ".deep-tui" / "config.toml").write_text(
            f'model = "openai-chat:gpt-4.1"\nbase_url = "{url}"\n[tools]\nwrites = "always"\n', encoding="utf-8")
        user_config_file().parent.mkdir(parents=True)
        user_config_file().write_text(f'model = "openai-chat:gpt-4.1"\nbase_url = "{user_url}"\n', encoding="utf-8")
        monkeypatch.chdir(clone)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # only the loopback servers are reachable
        yield clone, user_state, state


def launched_app(*argv: str) -> DeepTuiApp:
    """The app as ``deep-tui ARGV`` starts it in the current directory."""
    context = resolve_context(build_parser().parse_args(list(argv)))
    assert context.pending_project is not None
    gate = ProjectTrustGate(context)
    request = SessionRequest()
    app = DeepTuiApp.opening(settings=context.settings, memory_path=context.data_dir.memory_file("main"),
                             data_root=context.data_dir.root, opener=lambda: open_session(gate.context, request),
                             trust=gate)
    OPENED.append(app)
    return app


async def the_prompt(pilot: Pilot[Any]) -> ProjectTrustScreen:
    return await armed_dialog(pilot, ProjectTrustScreen, "the trust prompt")


async def answer(pilot: Pilot[Any], how: str, what: str) -> None:
    await (pilot.click(what) if how == "click" else pilot.press(what))
    app = pilot.app
    assert isinstance(app, DeepTuiApp)
    await wait_until(pilot, lambda: app.factory is not None, "the session to open")


async def send(pilot: Pilot[Any], prompt: str) -> None:
    await pilot.press(*prompt, "enter")
    await wait_idle(pilot.app, pilot)


NOT_NOW = [("key", "n"), ("key", "escape"), ("click", "#trust-not-now")]
TRUST = [("key", "t"), ("click", "#trust-trust")]
ONCE = [("key", "o"), ("click", "#trust-once")]


@pytest.mark.parametrize(("how", "what"), NOT_NOW)
async def test_not_now_opens_the_session_without_the_project_config(servers, how: str, what: str) -> None:  # type: ignore[no-untyped-def]
    _, users, projects = servers
    app = launched_app()
    async with app.run_test(size=SIZE) as pilot:
        await the_prompt(pilot)
        await answer(pilot, how, what)
        assert app.factory is not None and app.factory.settings.tools.writes == "ask"
        await send(pilot, "hello")
        assert projects.authorizations == [], "the project's server never hears from the app"
        assert users.authorizations == [f"Bearer {KEY}"]
    assert not trust_store_file().exists()


@pytest.mark.parametrize(("how", "what"), TRUST)
async def test_trust_applies_the_project_config_and_remembers_it(servers, how: str, what: str) -> None:  # type: ignore[no-untyped-def]
    clone, users, projects = servers
    app = launched_app()
    async with app.run_test(size=SIZE) as pilot:
        await the_prompt(pilot)
        await answer(pilot, how, what)
        assert app.factory is not None and app.factory.settings.tools.writes == "always"
        assert app.settings.base_url == app.factory.settings.base_url and app.settings.base_url
        await send(pilot, "hello")
        assert projects.authorizations == [f"Bearer {KEY}"] and users.authorizations == []
    record = TrustStore(trust_store_file()).lookup(clone)
    assert record is not None and record.settings["tools.writes"] == '"always"'
    assert resolve_context(build_parser().parse_args([])).pending_project is None  # not asked again


@pytest.mark.parametrize(("how", "what"), ONCE)
async def test_just_this_once_applies_it_without_remembering(servers, how: str, what: str) -> None:  # type: ignore[no-untyped-def]
    app = launched_app()
    async with app.run_test(size=SIZE) as pilot:
        await the_prompt(pilot)
        await answer(pilot, how, what)
        assert app.factory is not None and app.factory.settings.tools.writes == "always"
    assert not trust_store_file().exists()
    assert resolve_context(build_parser().parse_args([])).pending_project is not None  # asked again next time


async def test_flags_still_win_after_trust(servers) -> None:  # type: ignore[no-untyped-def]
    app = launched_app("--deny-writes")
    async with app.run_test(size=SIZE) as pilot:
        await the_prompt(pilot)
        await answer(pilot, "key", "t")
        assert app.factory is not None and app.factory.settings.tools.writes == "never"


async def test_a_stray_key_before_the_prompt_is_armed_does_nothing(servers, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    # A delay long enough that a loaded machine cannot arm the prompt between the check and the key.
    monkeypatch.setattr("tui.app.screens.approval_dialog.ARMING_DELAY", 3.0)
    app = launched_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ProjectTrustScreen), "the trust prompt")
        screen = app.screen
        assert isinstance(screen, ProjectTrustScreen) and not screen.armed
        await pilot.press("t")  # typed as the app appeared
        assert app.screen is screen and app.factory is None
        await wait_until(pilot, lambda: screen.armed, "the prompt to arm")
        await answer(pilot, "key", "escape")
    assert not trust_store_file().exists()


async def test_hostile_values_are_shown_as_plain_escaped_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clone = tmp_path / "clone"
    (clone / ".deep-tui").mkdir(parents=True)
    (clone / ".deep-tui" / "config.toml").write_text(
        'base_url = "http://x\\u001b]0;pwned\\u0007[bold red]big[/] \\u009b2J' + "A" * 400 + '"\n', encoding="utf-8")
    monkeypatch.chdir(clone)
    app = launched_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await the_prompt(pilot)
        shown = str(screen.query_one("#trust-dangerous", Static).render())  # base_url: first, always in view
        assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
        assert '"http://x\\u001b]0;pwned\\u0007[bold red]big[/] \N{REPLACEMENT CHARACTER}2J' in shown
        assert shown.endswith("…  (sends your requests and API key there)") and len(shown) < 300
        await answer(pilot, "click", "#trust-not-now")


async def test_a_config_that_cannot_be_used_can_only_be_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clone = tmp_path / "clone"
    (clone / ".deep-tui").mkdir(parents=True)
    (tmp_path / "outside.toml").write_text('base_url = "http://127.0.0.1:9/v1"\n', encoding="utf-8")
    (clone / ".deep-tui" / "config.toml").symlink_to(tmp_path / "outside.toml")
    monkeypatch.chdir(clone)
    app = launched_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await the_prompt(pilot)
        assert [button.id for button in screen.query(Button)] == ["trust-not-now"]
        assert "symbolic link" in str(screen.query_one("#trust-error", Static).render())
        await pilot.press("t")
        await pilot.press("o")
        assert app.screen is screen
        await answer(pilot, "key", "n")
        assert app.factory is not None and app.factory.settings.base_url is None


# -- snapshots: a fixed project path, so the picture does not depend on the test's tmp dir ---------------------

def fixed_pending(*, changed: bool) -> ProjectTrustGate:
    text = (b'model = "openai-chat:gpt-4.1"\nbase_url = "http://203.0.113.7/v1\\u001b]0;t\\u0007"\n'
            b'[context]\nwindow = 64000\n[tools]\nwrites = "always"\n')
    root = Path("/home/me/src/shop")
    config = ProjectConfig(root, root / ".deep-tui" / "config.toml", "sha256:00",
                           parse_config(text, "/home/me/src/shop/.deep-tui/config.toml"))
    earlier = TrustRecord(str(root), "sha256:ff", "2026-11-02T08:15:00Z",
                          {"model": '"openai-chat:gpt-4.1"', "context.window": "64000"}) if changed else None
    pending = pending_project(config, TrustState.CHANGED if changed else TrustState.UNTRUSTED, earlier, [])
    context = LaunchContext(Settings(), DataDir(root / ".deep-tui"), root, None, project_trusted=False,
                            pending_project=pending)
    return ProjectTrustGate(context)


def snapshot_app(tmp_path: Path, gate: ProjectTrustGate) -> DeepTuiApp:
    def never_opened() -> Any:
        raise AssertionError("a snapshot answers nothing, so no session opens")

    return DeepTuiApp.opening(settings=Settings(), memory_path=tmp_path / "main" / "MEMORY.md", data_root=tmp_path,
                              opener=never_opened, trust=gate)


async def prompt_shown(pilot: Pilot[Any]) -> None:
    await the_prompt(pilot)
    await pilot.pause()


def test_trust_prompt_snapshot_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(snapshot_app(tmp_path, fixed_pending(changed=True)), terminal_size=(80, 24),
                        run_before=prompt_shown)


def test_trust_prompt_snapshot_60x20(snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(snapshot_app(tmp_path, fixed_pending(changed=False)), terminal_size=(60, 20),
                        run_before=prompt_shown)


def test_unusable_config_prompt_snapshot_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    root = Path("/home/me/src/shop")
    config = ProjectConfig(root, root / ".deep-tui" / "config.toml", "unusable:link", None,
                           "/home/me/src/shop/.deep-tui/config.toml: it is a symbolic link (not followed)")
    pending = pending_project(config, TrustState.UNTRUSTED, None, [])
    gate = ProjectTrustGate(LaunchContext(Settings(), DataDir(root / ".deep-tui"), root, None, project_trusted=False,
                                          pending_project=pending))
    assert snap_compare(snapshot_app(tmp_path, gate), terminal_size=(80, 24), run_before=prompt_shown)

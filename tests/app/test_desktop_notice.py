"""Desktop notifications through the terminal (issue 33, point 4): the escape written, the policy, the app's use.

The pure parts (the payload, the policy, the terminal's kind) are tested directly; the app is run headless with
its driver's ``write`` recorded, blurred as a terminal's FocusOut report blurs it, and a turn or an approval
dialog that ends or opens meanwhile.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from textual import events

from tests.app.app_support import (
    armed_dialog,
    dialog_answered,
    make_app,
    make_factory,
    reply_model,
    wait_idle,
    wait_until,
)
from tui.app.app import DeepTuiApp
from tui.app.desktop_notice import (
    MAX_NOTICE_CHARS,
    DesktopNotifier,
    escape_sequence,
    notice_text,
    should_notify,
    terminal_kind,
)
from tui.app.screens.write_approval import WriteApprovalScreen
from tui.base.config import ConfigError, Settings, settings_from_mapping
from tui.base.config_layers import ConfigLayer, settings_from_layers, without_user_only_keys
from tui.base.redaction import register_secret
from tui.base.ui_config import UiSettings

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eevil\x1bP+q\x1b\\ line one\nline\ttwo\r\n"


# -- the payload ------------------------------------------------------------------------------------------------


def test_the_notice_text_holds_no_control_character_and_is_capped() -> None:
    text = notice_text(HOSTILE * 40)
    assert len(text) <= MAX_NOTICE_CHARS and text.endswith("…")
    assert all(ch.isprintable() for ch in text)
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text and "\n" not in text
    assert notice_text("a\n\n b\tc") == "a b c"
    assert notice_text(HOSTILE).startswith("␛]0;pwned␇␛[2J")


def test_known_secrets_never_reach_the_notification() -> None:
    register_secret("sk-notify-secret-123456")
    assert "sk-notify-secret-123456" not in notice_text("failed: key sk-notify-secret-123456 refused")


@pytest.mark.parametrize(("method", "expected"), [
    ("osc9", "\x1b]9;deep-tui: answer ready\x07"),
    ("osc777", "\x1b]777;notify;deep-tui;answer ready\x07"),
    ("bell", "\x07"),
])
def test_each_method_writes_its_escape(method: str, expected: str) -> None:
    assert escape_sequence("deep-tui", "answer ready", method=method, environ={}) == expected


def test_a_hostile_body_cannot_end_the_escape_or_start_another() -> None:
    for method in ("osc9", "osc777"):
        sequence = escape_sequence("deep-tui", HOSTILE, method=method, environ={})
        assert sequence.count("\x1b") == 1 and sequence.count("\x07") == 1 and sequence.endswith("\x07")
    osc777 = escape_sequence("a;b", "c;d", method="osc777", environ={})
    assert osc777 == "\x1b]777;notify;a,b;c,d\x07"  # its fields are split at ';'


def test_inside_tmux_the_escape_is_wrapped_for_passthrough_and_a_bell_follows() -> None:
    sequence = escape_sequence("deep-tui", "done", method="osc9", environ={"TMUX": "/tmp/tmux-1/default,1,0"})
    assert sequence == "\x1bPtmux;\x1b\x1b]9;deep-tui: done\x07\x1b\\\x07"
    assert escape_sequence("deep-tui", "done", method="bell", environ={"TMUX": "x"}) == "\x07"


@pytest.mark.parametrize(("environ", "kind"), [
    ({"TERM_PROGRAM": "iTerm.app"}, "osc9"),
    ({"TERM_PROGRAM": "tmux", "ITERM_SESSION_ID": "w0t0p0"}, "osc9"),  # iTerm2 around tmux
    ({"TERM": "xterm-kitty"}, "osc9"),
    ({"TERM_PROGRAM": "WezTerm"}, "osc9"),
    ({"TERM": "foot"}, "osc777"),
    ({"TERM": "rxvt-unicode-256color"}, "osc777"),
    ({"TERM": "xterm-256color", "VTE_VERSION": "7600"}, "osc777"),
    ({"TERM": "xterm-256color"}, "unknown"),
    ({"TERM": "linux"}, "unknown"),
])
def test_the_terminal_kind_comes_from_its_environment(environ: dict[str, str], kind: str) -> None:
    assert terminal_kind(environ) == kind


def test_auto_gives_an_unknown_terminal_only_the_bell() -> None:
    """The Linux console prints an OSC it does not know as text: a terminal not known gets the bell."""
    assert escape_sequence("deep-tui", "done", method="auto", environ={"TERM": "linux"}) == "\x07"
    assert escape_sequence("deep-tui", "done", method="auto", environ={"TERM": "foot"}).startswith("\x1b]777;")


# -- the policy -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("policy", "focused", "expected"), [
    ("unfocused", False, True), ("unfocused", True, False),
    ("always", True, True), ("always", False, True),
    ("never", False, False), ("never", True, False),
])
def test_the_policy(policy: str, focused: bool, expected: bool) -> None:
    assert should_notify(policy, focused=focused) is expected


def notifier(settings: UiSettings, *, focused: bool, written: list[str]) -> DesktopNotifier:
    return DesktopNotifier(settings=lambda: settings, focused=lambda: focused, write=written.append,
                           environ={"TERM": "xterm-kitty"})


def test_a_short_turn_is_no_notification_a_long_one_is() -> None:
    written: list[str] = []
    notice = notifier(UiSettings(notify_after=20), focused=False, written=written)
    assert not notice.turn_ended(19.9, "answer ready")
    assert written == []
    assert notice.turn_ended(20.0, "answer ready")
    assert written == ["\x1b]9;deep-tui: answer ready\x07"]


def test_an_approval_notifies_whatever_the_time_and_never_when_focused() -> None:
    written: list[str] = []
    assert not notifier(UiSettings(), focused=True, written=written).approval_waiting("run ls")
    assert notifier(UiSettings(), focused=False, written=written).approval_waiting("run ls")
    assert written == ["\x1b]9;deep-tui: waiting for your approval: run ls\x07"]
    assert not notifier(UiSettings(notify="never"), focused=False, written=written).approval_waiting("run ls")


def test_a_terminal_that_refuses_the_write_is_no_crash() -> None:
    def refuse(text: str) -> None:
        raise OSError(5, "Input/output error")

    notice = DesktopNotifier(settings=UiSettings, focused=lambda: False, write=refuse, environ={})
    assert not notice.approval_waiting("run ls")


# -- the config -------------------------------------------------------------------------------------------------


def test_the_ui_table_is_read_and_checked() -> None:
    settings = settings_from_mapping({"ui": {"notify": "always", "notify_after": 5, "notify_method": "osc777"}})
    assert settings.ui == UiSettings(notify="always", notify_after=5.0, notify_method="osc777")
    assert Settings().ui == UiSettings(notify="unfocused", notify_after=20.0, notify_method="auto")
    for table, words in [({"notify": "sometimes"}, "ui.notify must be one of always, unfocused, never"),
                         ({"notify_after": -1}, "ui.notify_after must be between 0 and 86400"),
                         ({"notify_after": "soon"}, "ui.notify_after must be a number"),
                         ({"notify_method": "osc99"}, "ui.notify_method must be one of"),
                         ({"sound": True}, "unknown key ui.sound")]:
        with pytest.raises(ConfigError, match=words):
            settings_from_mapping({"ui": table}, source="config.toml")


def test_a_projects_config_never_sets_the_ui_table() -> None:
    user = ConfigLayer("user", {"ui": {"notify": "never"}})
    project = without_user_only_keys(ConfigLayer("project", {"ui": {"notify": "always", "notify_method": "osc9"},
                                                             "theme": "nord"}))
    assert "ui" not in project.data and project.data["theme"] == "nord"
    settings = settings_from_layers([user, project])
    assert settings.ui.notify == "never" and settings.theme == "nord"


# -- the app ----------------------------------------------------------------------------------------------------


def app_with(tmp_path: Path, ui: UiSettings, answer: str = "all done") -> DeepTuiApp:
    factory = make_factory(tmp_path, chat_model=reply_model(answer))
    factory.settings = dataclasses.replace(factory.settings, ui=ui)
    return make_app(factory)


def record_writes(app: DeepTuiApp, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the app writes to its terminal from now on (the headless driver's ``write``)."""
    written: list[str] = []
    assert app._driver is not None
    monkeypatch.setattr(app._driver, "write", written.append)
    return written


async def blurred(app: DeepTuiApp, pilot) -> None:  # type: ignore[no-untyped-def]
    """The terminal reported FocusOut (``ESC [ O``): Textual's parser posts AppBlur."""
    app.post_message(events.AppBlur())
    await wait_until(pilot, lambda: not app.app_focus, "the app to lose the focus")


def notices(written: list[str]) -> list[str]:
    return [text for text in written if text.startswith(("\x1b]9;", "\x1b]777;", "\x1bPtmux;")) or text == "\x07"]


async def test_a_long_turn_that_ends_while_unfocused_writes_the_notification(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TMUX", raising=False)
    app = app_with(tmp_path, UiSettings(notify_after=0, notify_method="osc9"), answer="\x1b]0;pwned\x07 fixed it\nmore")
    async with app.run_test() as pilot:
        written = record_writes(app, monkeypatch)
        await blurred(app, pilot)
        app.main_screen.prompts.send("fix the bug")  # no key pressed: a key would give the app its focus back
        await wait_until(pilot, lambda: app.runtime.busy or notices(written), "the turn to start")
        await wait_idle(app, pilot)
        [notice] = notices(written)
        assert notice.startswith("\x1b]9;deep-tui: answer ready after ")
        assert notice.endswith(": ␛]0;pwned␇ fixed it\x07")  # the answer's first line, its escape made visible
        assert notice.count("\x1b") == 1


@pytest.mark.parametrize(("ui", "focused"), [
    (UiSettings(notify_after=0, notify_method="osc9"), True),  # "unfocused", and the terminal has the focus
    (UiSettings(notify_after=0, notify="never", notify_method="osc9"), False),
    (UiSettings(notify_method="osc9"), False),  # a turn shorter than 20 s
])
async def test_no_notification_when_focused_turned_off_or_short(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ui: UiSettings, focused: bool) -> None:
    app = app_with(tmp_path, ui)
    async with app.run_test() as pilot:
        written = record_writes(app, monkeypatch)
        if not focused:
            await blurred(app, pilot)
        await pilot.press(*"fix it", "enter") if focused else app.main_screen.prompts.send("fix it")
        await wait_until(pilot, lambda: app.runtime.busy or app.main_screen.turns.finished, "the turn to start")
        await wait_idle(app, pilot)
        assert app.main_screen.turns.finished
        assert notices(written) == []


async def test_always_notifies_with_the_focus_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TMUX", raising=False)
    app = app_with(tmp_path, UiSettings(notify="always", notify_after=0, notify_method="osc777"))
    async with app.run_test() as pilot:
        written = record_writes(app, monkeypatch)
        await pilot.press(*"fix it", "enter")
        await wait_until(pilot, lambda: notices(written), "the notification")
        await wait_idle(app, pilot)
        assert app.app_focus
        [notice] = notices(written)
        assert notice.startswith("\x1b]777;notify;deep-tui;answer ready after ") and notice.endswith(": all done\x07")


async def test_an_approval_that_waits_while_unfocused_notifies_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The offline model's ``write PATH TEXT``: the write dialog opens while the terminal has no focus. The
    threshold does not apply (an approval is worth telling however soon it comes)."""
    monkeypatch.delenv("TMUX", raising=False)
    factory = make_factory(tmp_path)
    factory.settings = dataclasses.replace(factory.settings, ui=UiSettings(notify_method="osc9"))
    app = make_app(factory)
    async with app.run_test(size=(120, 36)) as pilot:
        written = record_writes(app, monkeypatch)
        await blurred(app, pilot)
        app.main_screen.prompts.send("write new.txt hello")
        await armed_dialog(pilot, WriteApprovalScreen, "the approval dialog")
        assert notices(written) == ["\x1b]9;deep-tui: waiting for your approval: create new.txt (1 line)\x07"]
        await pilot.click("#deny")
        await dialog_answered(app, pilot, WriteApprovalScreen)
        assert len(notices(written)) == 1  # the turn itself was short: nothing more


async def test_the_question_before_a_summary_notifies_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Automatic compaction off and a request over the window: the pre-flight's question waits for the user as an
    approval does."""
    from tests.app.test_compaction_consent import Scripted, factory_off
    from tui.agent.session.request import SessionRequest
    from tui.app.screens.summary_consent import SummaryConsentScreen

    monkeypatch.delenv("TMUX", raising=False)
    factory, session_id = factory_off(tmp_path, Scripted())
    factory.settings = dataclasses.replace(factory.settings, ui=UiSettings(notify_method="osc9"))
    app = make_app(factory, SessionRequest(resume=session_id))
    async with app.run_test(size=(120, 36)) as pilot:
        written = record_writes(app, monkeypatch)
        await blurred(app, pilot)
        app.main_screen.prompts.send("one more question")
        await armed_dialog(pilot, SummaryConsentScreen, "the question before a summary")
        assert notices(written) == ["\x1b]9;deep-tui: waiting for your approval: may a summary of old turns run? The "
                                    "next request does not fit the window\x07"]
        app.screen.dismiss(False)
        await wait_idle(app, pilot)

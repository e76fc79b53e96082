"""Issue 22.11: ``--model offline`` is the user's choice, not "no LLM configured" (title bar, welcome, run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.app_support import make_app, make_factory, wait_until
from tui.agent.models.choice import choose_model
from tui.agent.runtime_api import RuntimeInfo
from tui.agent.session.factory import RuntimeFactory
from tui.app.widgets.title_bar import title_parts
from tui.cli.main import main


def test_the_title_says_the_offline_model_was_chosen_or_that_none_is_set() -> None:
    chosen = RuntimeInfo(session_id="0123456789ab", title="t", model_name="offline", offline=True, offline_chosen=True)
    assert "offline model, as you chose (type help)" in str(title_parts(chosen, 120))
    assert "no LLM configured" not in str(title_parts(chosen, 120))
    unset = RuntimeInfo(session_id="0123456789ab", title="t", model_name="offline", offline=True)
    assert "no LLM configured" in str(title_parts(unset, 120))


@pytest.mark.parametrize(("flag", "env", "chosen"), [("offline", {}, True), (None, {"DEEP_TUI_MODEL": "offline"}, True),
                                                     (None, {}, False)])
def test_offline_chosen_follows_where_the_choice_came_from(flag: str | None, env: dict[str, str], chosen: bool) -> None:
    assert choose_model(flag, None, env).offline_chosen is chosen


async def test_the_app_with_model_offline_says_it_was_chosen(tmp_path: Path) -> None:
    base = make_factory(tmp_path)
    factory = RuntimeFactory(settings=base.settings, data_dir=base.data_dir, workdir=base.workdir,
                             choice=choose_model("offline", None, {}))
    app = make_app(factory)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.query("#welcome"), "the welcome")
        title = str(app.query_one("#title-bar").render())
        welcome = str(app.query_one("#welcome").render())
        assert "offline model, as you chose" in title and "no LLM configured" not in title
        assert "You chose the offline model: a local stand-in, not an LLM." in welcome
        assert "No model is set" not in welcome and "(no LLM) (type" not in welcome
        assert "Type help to see what it can do. For an LLM, type /model" in " ".join(welcome.split())


async def test_the_welcome_with_a_real_model_names_slash_model(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-sent")
    base = make_factory(tmp_path)
    factory = RuntimeFactory(settings=base.settings, data_dir=base.data_dir, workdir=base.workdir,
                             choice=choose_model("openai:gpt-4o", None, {}))
    app = make_app(factory)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.query("#welcome"), "the welcome")
        welcome = " ".join(str(app.query_one("#welcome").render()).split())
        assert "Model: openai:gpt-4o (change it now with /model; for every session with --model" in welcome


def test_run_with_model_offline_says_it_was_chosen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    for variable in ("DEEP_TUI_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    assert main(["run", "--model", "offline", "--data-dir", str(tmp_path / "data"), "help"]) == 0
    err = capsys.readouterr().err
    assert "the offline model, as you chose" in err and "no LLM configured" not in err
    assert main(["run", "--data-dir", str(tmp_path / "data"), "help"]) == 0
    assert "no LLM configured" in capsys.readouterr().err

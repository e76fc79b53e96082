"""Exit statuses are kept (0 done, 1 the turn failed, 2 a usage or data problem) and the sessions actions
take their options before or after the action (issue 8, item 11)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui.cli.main import main


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path / "data"


def status(*argv: str) -> int:
    try:
        return main(list(argv))
    except SystemExit as exit_info:  # argparse's usage errors
        return int(exit_info.code or 0)


def only_session(data: Path) -> str:
    [session] = [p.name for p in (data / "sessions").iterdir()]
    return session


def test_zero_one_and_two(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert status("run", "--data-dir", str(data), "help") == 0
    session = only_session(data)
    capsys.readouterr()

    # a turn that fails: the prompt alone is larger than the window
    assert status("run", "--data-dir", str(data), "--context-window", "1000", "--resume", session, "x " * 6000) == 1
    assert "deep-tui: error: ContextOverflowError" in capsys.readouterr().err

    assert status("run", "--data-dir", str(data), "--no-such-flag", "hi") == 2
    assert status("run", "--data-dir", str(data), "--resume", "feedface", "hi") == 2
    (data / "sessions" / session / "messages.json").write_text("not a history at all")
    capsys.readouterr()
    assert status("run", "--data-dir", str(data), "--resume", session, "hi") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a message history" in err


def test_a_declined_delete_is_one(data: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert status("run", "--data-dir", str(data), "help") == 0
    session = only_session(data)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert status("sessions", "delete", session, "--data-dir", str(data)) == 1
    assert "not deleted" in capsys.readouterr().out and (data / "sessions" / session).is_dir()


def test_sessions_actions_take_their_options_after_the_action(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert status("run", "--data-dir", str(data), "help") == 0
    session = only_session(data)
    assert status("sessions", "rename", session[:6], "new", "name", "--data-dir", str(data)) == 0
    capsys.readouterr()
    assert status("sessions", "--json", "--data-dir", str(data)) == 0
    assert json.loads(capsys.readouterr().out)[0]["title"] == "new name"
    assert status("sessions", "delete", session, "--yes", "--data-dir", str(data)) == 0
    assert f"deleted {session}" in capsys.readouterr().out
    assert not (data / "sessions" / session).exists()
    assert status("sessions", "--data-dir", str(data), "delete", session, "--yes") == 2, "gone: unknown id"

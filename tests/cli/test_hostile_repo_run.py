"""``deep-tui run`` in a cloned repository whose ``.deep-tui/`` holds planted symlinks (issue 20.2).

Each case runs ``deep-tui run`` (``tui.cli.main``, in this process for speed; the lock case also as
``python -m tui.cli`` in a subprocess) against the loopback chat server: the user's files outside the
project come out byte-for-byte unchanged, their text reaches no request and no file deep-tui wrote,
and the refusal is one stderr line naming the link.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic_ai import models

from tests.support.hostile_repo import SESSION_ID, SESSION_LINKS, HostileRepo, build_hostile_repo, build_linked_data_dir
from tests.support.openai_server import ChatServerState, openai_chat_server
from tui.cli.main import main


def _arguments(base_url: str, extra: tuple[str, ...]) -> list[str]:
    return ["run", *extra, "--model", "openai-chat:gpt-4.1", "--base-url", base_url, "hello"]


def _run_process(repo: HostileRepo, base_url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """``python -m tui.cli run …`` in the project, as a user would type it."""
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and k not in ("DEEP_TUI_MODEL", "DEEP_TUI_HOME")}
    return subprocess.run([sys.executable, "-m", "tui.cli", *_arguments(base_url, extra)],
                          cwd=repo.project, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """``deep-tui run`` through :func:`tui.cli.main` in this process, in the project directory (loopback
    requests allowed for its duration)."""
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)
    monkeypatch.delenv("DEEP_TUI_HOME", raising=False)
    monkeypatch.delenv("DEEP_TUI_MODEL", raising=False)

    def run(repo: HostileRepo, base_url: str, *extra: str) -> subprocess.CompletedProcess[str]:
        monkeypatch.chdir(repo.project)
        capsys.readouterr()
        status = main(_arguments(base_url, extra))
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["deep-tui", "run"], status, out, err)

    return run


def _assert_nothing_leaked(repo: HostileRepo, completed: subprocess.CompletedProcess[str],
                           state: ChatServerState) -> None:
    assert repo.changed_outside() == [], completed.stderr
    requests = [json.dumps(request) for request in state.requests]
    assert repo.leaked_into(requests) == []
    written = [path.read_text(encoding="utf-8", errors="replace") for path in repo.files_written_inside()]
    assert repo.leaked_into(written) == []
    assert repo.leaked_into([completed.stdout, completed.stderr]) == []


def _lines_naming(text: str, path: Path) -> list[str]:
    return [line for line in text.splitlines() if str(path) in line]


def _assert_session_link_refused(repo: HostileRepo, link: str, completed: subprocess.CompletedProcess[str],
                                 server: ChatServerState) -> None:
    _assert_nothing_leaked(repo, completed, server)
    assert completed.returncode == 2, completed.stderr
    assert server.requests == []  # refused before any request
    [line] = _lines_naming(completed.stderr, repo.links[link])
    assert "symbolic link" in line
    assert repo.links[link].is_symlink()  # the link itself is left for the user to inspect


@pytest.mark.parametrize("link", SESSION_LINKS)
def test_a_planted_session_file_link_is_refused_and_nothing_outside_is_touched(tmp_path: Path, link: str,
                                                                              run_cli) -> None:  # type: ignore[no-untyped-def]
    repo = build_hostile_repo(tmp_path, session_link=link)
    with openai_chat_server(ChatServerState(reply="should not be asked")) as (base_url, server):
        completed = run_cli(repo, base_url, "--continue")
    _assert_session_link_refused(repo, link, completed, server)


def test_the_deep_tui_command_refuses_a_lock_linked_to_bashrc(tmp_path: Path) -> None:
    """The headline case as a user runs it: ``deep-tui run --continue`` in a separate process."""
    repo = build_hostile_repo(tmp_path, session_link="lock")
    with openai_chat_server(ChatServerState(reply="should not be asked")) as (base_url, server):
        completed = _run_process(repo, base_url, "--continue")
    _assert_session_link_refused(repo, "lock", completed, server)


def test_root_links_are_refused_with_one_line_each_and_the_turn_still_runs(tmp_path: Path,
                                                                         run_cli) -> None:  # type: ignore[no-untyped-def]
    """MEMORY.md → a credentials file, large_tool_results → the home holding .ssh/id_rsa, index.sqlite, the log
    and the calibration → outside files: the turn runs; read_file of the planted id_rsa is refused; nothing
    outside is read or written."""
    repo = build_hostile_repo(tmp_path, root_links=True)
    id_rsa = repo.data / "large_tool_results" / ".ssh" / "id_rsa"
    flat_id_rsa = repo.data / "large_tool_results" / "notes.db"
    state = ChatServerState(reply="done", tool_calls=[
        ("call_1", "read_file", json.dumps({"path": str(flat_id_rsa)})),
        ("call_2", "read_file", json.dumps({"path": str(id_rsa)})),
    ])
    with openai_chat_server(state) as (base_url, server):
        completed = run_cli(repo, base_url, "--continue")
    assert completed.returncode == 0, completed.stderr
    _assert_nothing_leaked(repo, completed, server)
    for name in ("MEMORY.md", "large_tool_results", "index.sqlite", "deep-tui.log", "token_calibration.json"):
        assert _lines_naming(completed.stderr, repo.links[name]), f"no line names the {name} link"
    for name in ("MEMORY.md", "large_tool_results", "deep-tui.log", "token_calibration.json"):
        warnings = [line for line in _lines_naming(completed.stderr, repo.links[name]) if "warning" in line]
        assert len(warnings) == 1, completed.stderr
    requests = [json.dumps(request) for request in server.requests]
    assert any("symbolic link" in text and "large_tool_results" in text for text in requests[1:])
    assert "could not be read" in requests[0]  # the memory section says MEMORY.md was refused, not what it holds
    [session] = [p for p in (repo.data / "sessions").iterdir() if p.name == SESSION_ID]
    assert (session / "messages.json").stat().st_size > 10  # the turn was recorded in the planted (clean) session


def test_a_linked_config_toml_is_refused(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    repo = build_hostile_repo(tmp_path, config_link=True)
    with openai_chat_server(ChatServerState()) as (base_url, server):
        completed = run_cli(repo, base_url, "--data-dir", str(repo.data), "--continue")
    _assert_nothing_leaked(repo, completed, server)
    assert completed.returncode == 2
    [line] = _lines_naming(completed.stderr, repo.links["config.toml"])
    assert "symbolic link" in line
    assert server.requests == []


def test_a_default_data_dir_that_is_a_link_is_refused(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    repo = build_linked_data_dir(tmp_path)
    with openai_chat_server(ChatServerState()) as (base_url, server):
        completed = run_cli(repo, base_url)
    _assert_nothing_leaked(repo, completed, server)
    assert completed.returncode == 2
    [line] = _lines_naming(completed.stderr, repo.data)
    assert "symbolic link" in line and "--data-dir" in line
    assert server.requests == []
    assert sorted(p.name for p in (repo.home / "elsewhere").iterdir()) == ["keep.txt"]


def test_a_data_dir_named_by_the_user_may_be_a_link(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """--data-dir is the user's own choice: a link there is followed (resolved once), and the new data
    directory gets its .gitignore."""
    target = tmp_path / "real-data"
    link = tmp_path / "data-link"
    os.symlink(target, link)
    repo = HostileRepo(project=tmp_path / "project", data=link, home=tmp_path / "home")
    repo.project.mkdir()
    repo.home.mkdir()
    with openai_chat_server(ChatServerState(reply="fine")) as (base_url, _server):
        completed = run_cli(repo, base_url, "--data-dir", str(link))
    assert completed.returncode == 0, completed.stderr
    assert "fine" in completed.stdout
    assert (target / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    assert list((target / "sessions").iterdir())


def test_run_writes_a_gitignore_into_the_data_dir_it_creates_and_keeps_an_existing_one(
        tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    fresh = HostileRepo(project=tmp_path / "fresh", data=tmp_path / "fresh" / ".deep-tui", home=tmp_path / "h1")
    kept = HostileRepo(project=tmp_path / "kept", data=tmp_path / "kept" / ".deep-tui", home=tmp_path / "h2")
    fresh.project.mkdir()
    kept.data.mkdir(parents=True)
    (kept.data / ".gitignore").write_text("sessions/\n", encoding="utf-8")
    with openai_chat_server(ChatServerState(reply="ok")) as (base_url, _server):
        first = run_cli(fresh, base_url)
        second = run_cli(kept, base_url)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    ignore = (fresh.data / ".gitignore").read_text(encoding="utf-8")
    assert ignore.splitlines()[-1] == "*"
    assert (kept.data / ".gitignore").read_text(encoding="utf-8") == "sessions/\n"
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=fresh.project,
                            capture_output=True, text=True, check=False,
                            env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}) if _git_init(fresh.project) else None
    if status is not None:
        assert ".deep-tui" not in status.stdout


def _git_init(directory: Path) -> bool:
    """Make ``directory`` a git repository (False when git is not installed: the check is skipped)."""
    try:
        subprocess.run(["git", "init", "-q"], cwd=directory, check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return False
    return True

"""The command line end to end, in process, with the offline model (no network)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter

from tui import __version__
from tui.cli.main import main


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("alpha line\nbeta line\n", encoding="utf-8")
    monkeypatch.chdir(work)
    return work


def data_dir(workdir: Path) -> Path:
    return workdir / ".deep-tui"


def session_ids(workdir: Path) -> list[str]:
    sessions = data_dir(workdir) / "sessions"
    return sorted(p.name for p in sessions.iterdir()) if sessions.exists() else []


def run_ok(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out, err


def run_fail(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        code = main(list(argv))
        raise SystemExit(code)
    _, err = capsys.readouterr()
    assert exit_info.value.code == 2, err
    return err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert __version__ in capsys.readouterr().out


def test_help_lists_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for word in ("--continue", "--resume", "--fork", "--model", "--context-window", "run", "sessions"):
        assert word in out


def test_run_prints_answer_and_records_it(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, err = run_ok(capsys, "run", "read", "notes.txt")
    assert "alpha line" in out
    assert "offline" in err
    [session] = session_ids(workdir)
    raw = (data_dir(workdir) / "sessions" / session / "messages.json").read_bytes()
    messages = ModelMessagesTypeAdapter.validate_json(raw)
    assert len(messages) >= 4  # prompt, tool call, tool return, answer
    meta = json.loads((data_dir(workdir) / "sessions" / session / "session.json").read_text())
    assert meta["title"].startswith("read notes.txt")
    assert meta["message_count"] == len(messages)


def test_continue_and_resume_prefix_reuse_the_session(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_ok(capsys, "run", "hello")
    [session] = session_ids(workdir)
    run_ok(capsys, "run", "--continue", "hello again")
    run_ok(capsys, "run", "--resume", session[:4], "third")
    assert session_ids(workdir) == [session]
    raw = (data_dir(workdir) / "sessions" / session / "messages.json").read_bytes()
    prompts = [part.content for m in ModelMessagesTypeAdapter.validate_json(raw) for part in m.parts
               if part.part_kind == "user-prompt"]
    assert prompts == ["hello", "hello again", "third"]


def test_fork_copies_into_a_new_session(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_ok(capsys, "run", "hello")
    [parent] = session_ids(workdir)
    run_ok(capsys, "run", "--resume", parent, "--fork", "in the fork")
    ids = session_ids(workdir)
    assert len(ids) == 2
    [child] = [i for i in ids if i != parent]
    meta = json.loads((data_dir(workdir) / "sessions" / child / "session.json").read_text())
    assert meta["parent"]["session"] == parent
    parent_count = json.loads((data_dir(workdir) / "sessions" / parent / "session.json").read_text())["message_count"]
    assert meta["message_count"] > parent_count


def test_sessions_list_json_rename_delete(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_ok(capsys, "run", "first session")
    [session] = session_ids(workdir)
    out, _ = run_ok(capsys, "sessions", "--json")
    [row] = json.loads(out)
    assert row["id"] == session and row["title"] == "first session" and row["messages"] >= 2
    assert set(row) >= {"id", "title", "updated", "messages", "tokens", "parent"}
    run_ok(capsys, "sessions", "rename", session[:5], "Renamed", "title")
    out, _ = run_ok(capsys, "sessions")
    assert "Renamed title" in out
    run_ok(capsys, "sessions", "delete", session, "--yes")
    assert session_ids(workdir) == []


def test_unknown_id_is_exit_2_and_creates_nothing(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = run_fail(capsys, "run", "--resume", "deadbeef", "hi")
    assert "deadbeef" in err and err.count("\n") == 1
    assert not data_dir(workdir).exists()


def test_ambiguous_prefix_is_exit_2(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sessions = data_dir(workdir) / "sessions"
    for _ in range(2):
        run_ok(capsys, "run", "x")
    # Rename the two real sessions so they share a prefix.
    for old, new in zip(session_ids(workdir), ("abc111111111", "abc222222222"), strict=True):
        (sessions / old).rename(sessions / new)
        meta_path = sessions / new / "session.json"
        meta = json.loads(meta_path.read_text())
        meta["id"] = new
        meta_path.write_text(json.dumps(meta))
    err = run_fail(capsys, "run", "--resume", "abc", "hi")
    assert "abc" in err and "ambiguous" in err.lower()


def test_continue_with_no_sessions_is_exit_2(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = run_fail(capsys, "run", "--continue", "hi")
    assert "no session" in err


def test_unreadable_config_is_exit_2(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = workdir / "bad.toml"
    bad.write_text("[context]\nsummarize_threshold = 7\n", encoding="utf-8")
    err = run_fail(capsys, "run", "--config", str(bad), "hi")
    assert "context.summarize_threshold" in err
    assert not data_dir(workdir).exists()


def test_unknown_model_is_exit_2(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = run_fail(capsys, "run", "--model", "nosuch:model", "hi")
    assert "nosuch:model" in err
    assert not data_dir(workdir).exists()


def test_missing_key_is_exit_2(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = run_fail(capsys, "run", "--model", "anthropic:claude-sonnet-5-5", "hi")
    assert "ANTHROPIC_API_KEY" in err


def test_fork_without_session_is_a_usage_error(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--fork", "hi"])
    assert exit_info.value.code == 2


def test_locked_session_is_exit_2(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tui.base.paths import DataDir
    from tui.store import SessionStore

    run_ok(capsys, "run", "hello")
    [session] = session_ids(workdir)
    holder = SessionStore(DataDir(data_dir(workdir))).open(session)
    try:
        err = run_fail(capsys, "run", "--resume", session, "again")
        assert session in err
    finally:
        holder.close()


def test_delete_refuses_without_yes_when_not_interactive(workdir: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    run_ok(capsys, "run", "hello")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    err = run_fail(capsys, "sessions", "delete", session_ids(workdir)[0])
    assert "--yes" in err
    assert len(session_ids(workdir)) == 1


def test_run_refuses_writes_unless_allowed(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, err = run_ok(capsys, "run", "write", "plan.md", "step one")
    assert not (workdir / "plan.md").exists()
    assert "the user has not allowed file writes in this run" in out  # the offline model repeats what it read
    assert "deep-tui: refused write_file: the user has not allowed file writes" in err
    assert "1 file write refused" in err and "--allow-writes" in err

    out, err = run_ok(capsys, "run", "--allow-writes", "write", "plan.md", "step one")
    assert (workdir / "plan.md").read_text() == "step one\n"
    assert "refused" not in err

    run_ok(capsys, "--deny-writes", "run", "write", "plan.md", "step two")
    assert (workdir / "plan.md").read_text() == "step one\n"


def test_config_can_allow_writes_for_run_and_a_flag_overrides_it(workdir: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    data_dir(workdir).mkdir()
    (data_dir(workdir) / "config.toml").write_text('[tools]\nwrites = "always"\n')
    _, err = run_ok(capsys, "run", "write", "plan.md", "from config")  # the project's config: not trusted yet
    assert not (workdir / "plan.md").exists() and "ignoring the project config" in err
    run_ok(capsys, "trust", "--yes")
    run_ok(capsys, "run", "write", "plan.md", "from config")
    assert (workdir / "plan.md").read_text() == "from config\n"
    _, err = run_ok(capsys, "run", "--deny-writes", "write", "plan.md", "denied")
    assert (workdir / "plan.md").read_text() == "from config\n" and "refused write_file" in err


def test_writes_flags_are_in_help_and_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    assert "--allow-writes" in out and "--deny-writes" in out
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--allow-writes", "--deny-writes", "hi"])
    assert exit_info.value.code == 2


def test_continue_opens_the_last_used_session_not_the_last_renamed(workdir: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 22.9: ``sessions rename`` of an older session does not make ``--continue`` open it."""
    run_ok(capsys, "run", "older session")
    [older] = session_ids(workdir)
    run_ok(capsys, "run", "last used session")
    [last] = [session for session in session_ids(workdir) if session != older]
    run_ok(capsys, "sessions", "rename", older[:6], "Older, renamed")
    run_ok(capsys, "run", "--continue", "one more")
    assert session_ids(workdir) == sorted([older, last])
    history = (data_dir(workdir) / "sessions" / last / "messages.json").read_text()
    assert "one more" in history
    assert "one more" not in (data_dir(workdir) / "sessions" / older / "messages.json").read_text()

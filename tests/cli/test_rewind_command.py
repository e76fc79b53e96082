"""``deep-tui rewind`` on a session a loopback-provider run changed: the list of restore points, --dry-run (the
diff, nothing written), a conflict (exit 2, one line, nothing written), --force, the default (files + fork),
--code and its undo, --conversation (a fork only); ``sessions --json`` counts them; a deleted session's
snapshots go with it and ``sessions prune`` removes what deleted sessions left."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.agent.rewind_support import edit, open_session, prompt, tree_state, write
from tests.support.openai_server import ChatServerState, openai_chat_server
from tui.cli.main import main
from tui.store.task_state import TaskStateFile


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha\n")
    (folder / "notes.md").write_text("one\ntwo\n")
    return folder


async def changed_session(tmp_path: Path, work: Path) -> str:
    """A session whose second prompt (message 5) changed a.txt and notes.md and created b.txt."""
    with openai_chat_server(ChatServerState(reply="done")) as (url, served):
        runtime = await open_session(url, tmp_path / "data", work)
        await prompt(runtime, served, "first", write("first.txt", "1\n"))
        await prompt(runtime, served, "second", write("a.txt", "ALPHA\n"), write("b.txt", "bee\n"),
                     edit("notes.md", "two", "TWO"))
        session_id = runtime.handle.id
        await runtime.aclose()
    return session_id


def rewind(tmp_path: Path, work: Path, *args: str) -> int:
    return main(["rewind", "--data-dir", str(tmp_path / "data"), "--workdir", str(work), *args])


async def test_list_then_dry_run_changes_nothing(tmp_path: Path, work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session_id = await changed_session(tmp_path, work)
    assert rewind(tmp_path, work, "--session", session_id) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0].startswith("message 5 ") and "+1 −1 a.txt" in listed[0] and "+1 −0 b.txt (new)" in listed[0]
    assert "'second':" in listed[0] and "'first':" in listed[1]
    assert listed[1].startswith("message 1 ") and "first.txt (new)" in listed[1]
    state = tree_state(work)
    assert rewind(tmp_path, work, "5", "--dry-run") == 0
    out = capsys.readouterr().out
    assert "-ALPHA\n+alpha" in out and "+1 −0 b.txt" not in out and "+0 −1 b.txt (deleted)" in out
    assert tree_state(work) == state


async def test_a_conflict_exits_2_with_one_line_and_writes_nothing_unless_forced(
        tmp_path: Path, work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session_id = await changed_session(tmp_path, work)
    (work / "a.txt").write_text("mine\n")
    state = tree_state(work)
    assert rewind(tmp_path, work, "--session", session_id, "5", "--code") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "1 file changed outside deep-tui" in err and "a.txt" in err
    assert tree_state(work) == state
    assert rewind(tmp_path, work, "--session", session_id, "5", "--code", "--force") == 0
    assert (work / "a.txt").read_text() == "alpha\n" and not (work / "b.txt").exists()


async def test_code_and_its_undo_and_the_count_in_sessions_json(tmp_path: Path, work: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    session_id = await changed_session(tmp_path, work)
    after_prompts = tree_state(work)
    assert rewind(tmp_path, work, "5", "--code") == 0
    out = capsys.readouterr().out
    assert (work / "a.txt").read_text() == "alpha\n" and (work / "notes.md").read_text() == "one\ntwo\n"
    assert (work / "first.txt").exists() and not (work / "b.txt").exists()
    undo = out.strip().splitlines()[-1]
    assert undo.startswith(f"undo: deep-tui rewind --session {session_id} ")
    number = undo.split()[-2]
    assert rewind(tmp_path, work, "--session", session_id, number, "--code") == 0
    assert tree_state(work) == after_prompts
    capsys.readouterr()
    assert main(["sessions", "--json", "--data-dir", str(tmp_path / "data")]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["restores"] == 2 and row["restore_points"] == 4  # two prompts, two rewinds


async def test_the_default_restores_the_files_and_forks_the_conversation(
        tmp_path: Path, work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session_id = await changed_session(tmp_path, work)
    original = (tmp_path / "data" / "sessions" / session_id / "messages.json").read_bytes()
    assert rewind(tmp_path, work, "5") == 0
    out = capsys.readouterr().out
    assert not (work / "b.txt").exists()
    fork_id = out.split("deep-tui --resume ")[1].split()[0]
    assert (tmp_path / "data" / "sessions" / session_id / "messages.json").read_bytes() == original
    assert main(["sessions", "--json", "--data-dir", str(tmp_path / "data")]) == 0
    rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows[fork_id]["parent"] == session_id and rows[fork_id]["messages"] == 5  # 4 kept + the note
    assert rows[fork_id]["restores"] == 1 and rows[session_id]["restores"] == 0


async def test_conversation_only_forks_and_leaves_the_files(tmp_path: Path, work: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    await changed_session(tmp_path, work)
    state = tree_state(work)
    assert rewind(tmp_path, work, "5", "--conversation") == 0
    assert "forked session" in capsys.readouterr().out and tree_state(work) == state


async def test_bad_numbers_say_which_messages_have_a_restore_point(tmp_path: Path, work: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    await changed_session(tmp_path, work)
    assert rewind(tmp_path, work, "3", "--code") == 2
    assert "message 3 has no restore point; these messages have one: 1, 5" in capsys.readouterr().err
    assert rewind(tmp_path, work, "99") == 2
    assert "there is no message 99" in capsys.readouterr().err


async def test_delete_and_prune_remove_the_snapshots(tmp_path: Path, work: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    session_id = await changed_session(tmp_path, work)
    git_dir = tmp_path / "data" / "checkpoints" / "repo.git"

    def refs() -> str:
        return subprocess.run(["git", "--git-dir", str(git_dir), "for-each-ref"], capture_output=True, text=True,
                              check=True).stdout

    assert session_id in refs()
    assert main(["sessions", "delete", session_id, "--yes", "--data-dir", str(tmp_path / "data")]) == 0
    assert session_id not in refs()
    assert main(["sessions", "prune", "--data-dir", str(tmp_path / "data")]) == 0
    assert "removed the restore points of 0 deleted sessions" in capsys.readouterr().out


def test_run_says_how_to_take_its_changes_back(tmp_path: Path, work: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic_ai import models

    monkeypatch.chdir(work)
    state = ChatServerState(reply="ok", tool_calls=[("c1", "write_file", '{"path": "a.txt", "content": "ALPHA\\n"}')])
    with openai_chat_server(state) as (url, _served), models.override_allow_model_requests(True):
        assert main(["run", "--allow-writes", "--data-dir", str(tmp_path / "data"), "--model",
                     "openai-chat:loopback", "--base-url", url, "change a.txt"]) == 0
    err = capsys.readouterr().err
    line = next(line for line in err.splitlines() if "deep-tui rewind --session" in line)
    assert (work / "a.txt").read_text() == "ALPHA\n" and line.endswith(" 1 --code takes its changes back")
    assert rewind(tmp_path, work, "1", "--code") == 0 and (work / "a.txt").read_text() == "alpha\n"


async def test_a_conversation_rewind_keeps_the_keep_lines_of_that_point(
        tmp_path: Path, work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with openai_chat_server(ChatServerState(reply="done")) as (url, served):
        runtime = await open_session(url, tmp_path / "data", work)
        await prompt(runtime, served, "first", write("first.txt", "1\n"))
        runtime.add_keep("before the second prompt")
        await prompt(runtime, served, "second", write("a.txt", "ALPHA\n"))
        runtime.add_keep("after it")
        session_id = runtime.handle.id
        await runtime.aclose()
    assert rewind(tmp_path, work, "5", "--conversation") == 0
    fork_id = capsys.readouterr().out.split("deep-tui --resume ")[1].split()[0].rstrip(")")
    fork = TaskStateFile.of(tmp_path / "data" / "sessions" / fork_id).state
    assert [line.text for line in fork.keep] == ["before the second prompt"]
    parent = TaskStateFile.of(tmp_path / "data" / "sessions" / session_id).state
    assert [line.text for line in parent.keep] == ["before the second prompt", "after it"]

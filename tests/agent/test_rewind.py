"""Rewind through a real session on the loopback OpenAI-chat server: a snapshot before each prompt's first change,
restores byte for byte (binary files, modes, deleted, new and renamed files, links), ignored and oversized files
left alone, conflicts reported before anything is written, a restore undone, the project's .git untouched."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest

from tests.agent.rewind_support import (
    digest_tree,
    edit,
    execute,
    git_init,
    open_session,
    prompt,
    tree_state,
    write,
)
from tests.agent.shell_support import requires_bwrap
from tests.support.openai_server import ChatServerState, openai_chat_server
from tui.agent.rewind.restore import RewindError
from tui.agent.turn_events import TurnFinished
from tui.base.metadata_keys import REWIND_KEY
from tui.chain.events import FilesRestored


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha\n")
    (folder / "sub").mkdir()
    (folder / "sub" / "deep.txt").write_text("one\ntwo\nthree\n")
    return folder


def history(tmp_path: Path, session_id: str) -> list[object]:
    path = tmp_path / "data" / "sessions" / session_id / "messages.json"
    return list(ModelMessagesTypeAdapter.validate_json(path.read_bytes()))


async def test_a_prompt_that_changes_nothing_has_no_restore_point_and_one_that_does_has_one(
        tmp_path: Path, work: Path) -> None:
    with openai_chat_server(ChatServerState(reply="done")) as (url, served):
        runtime = await open_session(url, tmp_path / "data", work)
        await prompt(runtime, served, "just talk")
        assert runtime.handle.checkpoints.read() == []
        events = await prompt(runtime, served, "change it", write("a.txt", "ALPHA\n"), edit("sub/deep.txt", "two", "2"))
        assert isinstance(events[-1], TurnFinished)
        await runtime.checkpoints.settle()  # the prompt's end snapshot runs after the turn, off its path
        [point] = runtime.handle.checkpoints.read()
        assert point.message == 3 and point.after is not None  # message 3 is the second prompt
        [listed] = await runtime.rewind_points()
        assert [item.label() for item in listed.files] == ["+1 −1 a.txt", "+1 −1 sub/deep.txt"]
        assert runtime.handle.meta.restore_points == 1
        await runtime.aclose()


async def test_a_restore_puts_the_files_back_and_is_undone_by_its_own_number(tmp_path: Path, work: Path) -> None:
    before = tree_state(work)
    with openai_chat_server(ChatServerState(reply="done")) as (url, served):
        runtime = await open_session(url, tmp_path / "data", work)
        await prompt(runtime, served, "change", write("a.txt", "ALPHA\n"), write("sub/new.txt", "new\n"),
                     edit("sub/deep.txt", "two", "2"))
        after_prompt = tree_state(work)
        plan = await runtime.plan_rewind(1)
        assert plan.conflicts == () and {change.path for change in plan.changes} == {"a.txt", "sub/new.txt",
                                                                                        "sub/deep.txt"}
        preview = await runtime.rewind_preview(plan)
        assert "-ALPHA\n+alpha" in preview and "deleted file mode" in preview
        seen: list[object] = []
        runtime.subscribe(seen.append)
        event = await runtime.rewind_files(plan)
        assert tree_state(work) == before
        assert event.count == 3 and event.undo is not None and seen == [event]
        recorded = history(tmp_path, runtime.handle.id)
        note = recorded[event.undo - 1]
        assert isinstance(note, ModelRequest) and REWIND_KEY in (note.metadata or {})
        assert any(record.get("kind") == "files_restored" for record in runtime.handle.events.read())

        undo_plan = await runtime.plan_rewind(event.undo)
        await runtime.rewind_files(undo_plan)
        assert tree_state(work) == after_prompt
        assert runtime.handle.meta.restores == 2

        await prompt(runtime, served, "one more", write("c.txt", "c\n"))  # the note goes with this prompt once
        numbers = [record.message for record in runtime.handle.checkpoints.read()]
        assert numbers == sorted(numbers) and len(history(tmp_path, runtime.handle.id)) == numbers[-1] + 3
        await runtime.aclose()


async def test_a_file_changed_outside_is_a_conflict_and_nothing_is_written(tmp_path: Path, work: Path) -> None:
    with openai_chat_server(ChatServerState(reply="done")) as (url, served):
        runtime = await open_session(url, tmp_path / "data", work)
        await prompt(runtime, served, "change", write("a.txt", "ALPHA\n"), write("b.txt", "bee\n"))
        (work / "a.txt").write_text("my own edit\n")  # the user, in their editor, after the prompt
        plan = await runtime.plan_rewind(1)
        assert plan.conflicts == ("a.txt",)
        state = tree_state(work)
        with pytest.raises(RewindError, match=r"1 file changed outside deep-tui .*a\.txt.*nothing was written"):
            await runtime.rewind_files(plan)
        assert tree_state(work) == state and runtime.handle.meta.restores == 0

        event = await runtime.rewind_files(plan, {"a.txt": "mine"})
        assert (work / "a.txt").read_text() == "my own edit\n" and not (work / "b.txt").exists()
        assert event.kept == ("a.txt",)
        await runtime.aclose()


async def test_a_change_between_prompts_is_a_conflict_too(tmp_path: Path, work: Path) -> None:
    with openai_chat_server(ChatServerState(reply="done")) as (url, served):
        runtime = await open_session(url, tmp_path / "data", work)
        await prompt(runtime, served, "first", write("a.txt", "ALPHA\n"))
        (work / "sub" / "deep.txt").write_text("the user's\n")  # between the prompts
        await prompt(runtime, served, "second", write("b.txt", "bee\n"))
        plan = await runtime.plan_rewind(1)
        assert plan.conflicts == ("sub/deep.txt",)
        await runtime.rewind_files(plan, {"sub/deep.txt": "snapshot"})
        assert (work / "sub" / "deep.txt").read_text() == "one\ntwo\nthree\n"
        assert (work / "a.txt").read_text() == "alpha\n" and not (work / "b.txt").exists()
        await runtime.aclose()


@requires_bwrap
async def test_byte_for_byte_with_binary_files_modes_renames_links_and_what_is_left_alone(
        tmp_path: Path, work: Path) -> None:
    (work / "bin.dat").write_bytes(bytes(range(256)) * 8 + b"\r\n\x00end")
    (work / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (work / "run.sh").chmod(0o755)
    (work / "gone.txt").write_text("bye\n")
    (work / "old_name.txt").write_text("moving\n")
    os.symlink("a.txt", work / "link")
    (work / ".gitignore").write_text("ignored.log\n")
    (work / ".gitattributes").write_text("* text eol=crlf\n")  # must not convert anything
    (work / "ignored.log").write_text("keep me\n")
    (work / "big.bin").write_bytes(b"x" * 5000)
    git_init(work)
    git_before = digest_tree(work / ".git")
    before = tree_state(work)
    with openai_chat_server(ChatServerState(reply="done")) as (url, served):
        runtime = await open_session(url, tmp_path / "data", work)
        runtime.checkpoints.max_file_bytes = 4096  # big.bin is over the cap
        await prompt(runtime, served, "change everything", write("a.txt", "ALPHA\n"),
                     execute("rm gone.txt && mv old_name.txt renamed.txt && chmod -x run.sh"
                             " && printf '\\000\\001\\002' > bin.dat && echo new > created.txt"
                             " && mkdir -p newdir && echo x > newdir/f && ln -sfn /etc/passwd link"
                             " && echo changed >> ignored.log && echo more >> big.bin"))
        assert (work / "renamed.txt").exists() and os.readlink(work / "link") == "/etc/passwd"
        ignored_now, big_now = (work / "ignored.log").read_bytes(), (work / "big.bin").read_bytes()
        assert any("big.bin" in warning for warning in runtime.info.warnings)
        event = await runtime.rewind_files(await runtime.plan_rewind(1))
        assert isinstance(event, FilesRestored) and not event.failed
        expected = dict(before)
        expected["ignored.log"] = ("file", ignored_now, False)  # ignored: left as it is
        expected["big.bin"] = ("file", big_now, False)  # over the size cap: left as it is
        assert tree_state(work) == expected
        assert digest_tree(work / ".git") == git_before
        await runtime.aclose()


@requires_bwrap
async def test_a_bang_command_gets_a_restore_point_of_its_own(tmp_path: Path, work: Path) -> None:
    before = tree_state(work)
    with openai_chat_server(ChatServerState(reply="done")) as (url, _served):
        runtime = await open_session(url, tmp_path / "data", work)

        async def ignore(_text: str) -> None:
            return None

        result = await runtime.run_user_command("echo made > made.txt && rm a.txt", ignore)
        assert result.ran and (work / "made.txt").exists()
        [point] = runtime.handle.checkpoints.read()
        assert (point.message, point.kind, point.after is not None) == (1, "command", True)
        [listed] = await runtime.rewind_points()
        assert {item.label() for item in listed.files} == {"+1 −0 made.txt (new)", "+0 −1 a.txt (deleted)"}
        await runtime.rewind_files(await runtime.plan_rewind(1))
        assert tree_state(work) == before
        await runtime.aclose()


def test_what_takes_a_snapshot_first() -> None:
    from pydantic_ai.tools import ToolDefinition

    from tui.agent.rewind.capability import may_change_files
    from tui.agent.tools.kinds import RUNS_COMMANDS_METADATA, WRITES_FILES_METADATA
    from tui.base.metadata_keys import MCP_SERVER_KEY

    def tool(metadata: dict[str, object] | None) -> ToolDefinition:
        return ToolDefinition(name="t", metadata=metadata)

    assert may_change_files(tool(WRITES_FILES_METADATA)) and may_change_files(tool(RUNS_COMMANDS_METADATA))
    assert may_change_files(tool({MCP_SERVER_KEY: "github"}))  # deep-tui cannot know what an MCP tool does
    assert not may_change_files(tool(None)) and not may_change_files(tool({"other": True}))


async def test_rewind_off_in_the_config_takes_no_snapshot(tmp_path: Path, work: Path) -> None:
    from tui.agent.models.choice import choose_model
    from tui.agent.session.factory import RuntimeFactory, SessionRequest
    from tui.base.config import RewindSettings, Settings, ToolSettings
    from tui.base.paths import DataDir

    with openai_chat_server(ChatServerState(reply="done")) as (url, served):
        settings = Settings(base_url=url, tools=ToolSettings(writes="always"), rewind=RewindSettings(enabled=False))
        factory = RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                                 choice=choose_model("openai-chat:loopback", None))
        runtime = await factory.open_request(SessionRequest())
        await prompt(runtime, served, "change", write("a.txt", "ALPHA\n"))
        assert runtime.handle.checkpoints.read() == [] and not (tmp_path / "data" / "checkpoints").exists()
        await runtime.aclose()


async def test_the_messages_with_a_restore_point(tmp_path: Path, work: Path) -> None:
    with openai_chat_server(ChatServerState(reply="done")) as (url, served):
        runtime = await open_session(url, tmp_path / "data", work)
        await prompt(runtime, served, "talk")
        await prompt(runtime, served, "change", write("a.txt", "ALPHA\n"))
        assert runtime.restore_point_messages() == frozenset({3})
        await runtime.aclose()


async def test_a_file_that_became_a_directory_and_the_reverse(tmp_path: Path, work: Path) -> None:
    (work / "x").write_text("a file\n")
    before = tree_state(work)
    with openai_chat_server(ChatServerState(reply="done")) as (url, served):
        runtime = await open_session(url, tmp_path / "data", work)
        await prompt(runtime, served, "change", write("a.txt", "ALPHA\n"))
        (work / "x").unlink()
        (work / "x").mkdir()
        (work / "x" / "y").write_text("inside\n")
        shutil.rmtree(work / "sub")
        (work / "sub").write_text("now a file\n")
        event = await runtime.rewind_files(await runtime.plan_rewind(1), force=True)
        assert not event.failed and tree_state(work) == before
        await runtime.aclose()


async def test_a_file_name_that_is_not_utf8_is_restored_and_recorded(tmp_path: Path, work: Path) -> None:
    odd = os.fsdecode(b"caf\xe9.txt")  # Latin-1 bytes: not UTF-8
    with openai_chat_server(ChatServerState(reply="done")) as (url, served):
        runtime = await open_session(url, tmp_path / "data", work)
        await prompt(runtime, served, "change", write("a.txt", "ALPHA\n"))
        (work / odd).write_text("made outside\n")  # a new file since the restore point, made outside deep-tui
        plan = await runtime.plan_rewind(1)
        assert plan.conflicts == (odd,)
        event = await runtime.rewind_files(plan, {odd: "snapshot"})  # the snapshot has no such file: removed
        assert not (work / odd).exists() and (work / "a.txt").read_text() == "alpha\n"
        assert "caf\N{REPLACEMENT CHARACTER}.txt" in event.files
        assert any(record.get("kind") == "files_restored" for record in runtime.handle.events.read())
        await runtime.aclose()

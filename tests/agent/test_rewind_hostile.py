"""Rewind in a hostile tree: links out of the tree, a FIFO, a directory swapped for a link to elsewhere, 100,000
files. Nothing outside the working directory is read through a link or written, and no snapshot hangs a turn: past
its deadline the prompt goes on without a restore point and the user is told once."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.agent.rewind_support import open_session, prompt, tree_state, write
from tests.support.openai_server import ChatServerState, openai_chat_server
from tui.agent.turn_events import TurnFinished


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("outside secret\n")
    (folder / "deep.txt").write_text("outside deep\n")
    return folder


def snapshot_paths(data: Path, tree: str) -> dict[str, str]:
    """path → git mode of every entry of a snapshot."""
    git_dir = data / "checkpoints" / "repo.git"
    out = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", tree], capture_output=True,
                         check=True).stdout
    entries = {}
    for record in out.split(b"\0"):
        if record:
            header, path = record.split(b"\t", 1)
            entries[path.decode()] = header.split(b" ")[0].decode()
    return entries


async def test_links_out_and_fifos_are_neither_followed_nor_opened(tmp_path: Path, outside: Path) -> None:
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "sub" / "deep.txt").write_text("inside deep\n")
    (work / "a.txt").write_text("alpha\n")
    os.symlink(outside, work / "out")
    os.symlink(outside / "secret.txt", work / "secret-link")
    os.mkfifo(work / "fifo")
    outside_before = tree_state(outside)
    with openai_chat_server(ChatServerState(reply="done")) as (url, served):
        runtime = await open_session(url, tmp_path / "data", work)
        events = await prompt(runtime, served, "change", write("a.txt", "ALPHA\n"))
        assert isinstance(events[-1], TurnFinished)
        [point] = runtime.handle.checkpoints.read()
        entries = snapshot_paths(tmp_path / "data", point.tree)
        assert entries == {"a.txt": "100644", "sub/deep.txt": "100644", "out": "120000", "secret-link": "120000"}

        shutil.rmtree(work / "sub")  # outside deep-tui, a directory becomes a link to elsewhere
        os.symlink(outside, work / "sub")
        plan = await runtime.plan_rewind(1)
        assert "sub" in plan.conflicts
        event = await runtime.rewind_files(plan, force=True)
        assert not event.failed
        assert (work / "sub").is_dir() and not (work / "sub").is_symlink()
        assert (work / "sub" / "deep.txt").read_text() == "inside deep\n"
        assert (work / "a.txt").read_text() == "alpha\n" and os.readlink(work / "out") == str(outside)
        assert (work / "fifo").exists() and tree_state(outside) == outside_before
        await runtime.aclose()


async def test_a_snapshot_past_its_deadline_is_said_once_and_the_turns_go_on(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with openai_chat_server(ChatServerState(reply="done")) as (url, served):
        runtime = await open_session(url, tmp_path / "data", work)
        runtime.checkpoints.timeout = 1e-9  # every git call is past its deadline
        first = await prompt(runtime, served, "one", write("a.txt", "a\n"))
        second = await prompt(runtime, served, "two", write("b.txt", "b\n"))
        assert isinstance(first[-1], TurnFinished) and isinstance(second[-1], TurnFinished)
        assert (work / "a.txt").exists() and (work / "b.txt").exists()
        said = [warning for warning in runtime.info.warnings if "too big to snapshot" in warning]
        assert len(said) == 1 and "no restore point" in said[0]
        assert runtime.handle.checkpoints.read() == []
        await runtime.aclose()


async def test_a_hundred_thousand_files_neither_hang_nor_escape(tmp_path: Path, outside: Path) -> None:
    work = tmp_path / "work"
    for group in range(100):
        folder = work / f"g{group:03d}"
        folder.mkdir(parents=True)
        for index in range(1000):
            descriptor = os.open(folder / f"f{index}", os.O_WRONLY | os.O_CREAT, 0o644)
            os.close(descriptor)
    os.symlink(outside, work / "out")
    os.mkfifo(work / "fifo")
    outside_before = tree_state(outside)
    with openai_chat_server(ChatServerState(reply="done")) as (url, served):
        runtime = await open_session(url, tmp_path / "data", work)
        events = await prompt(runtime, served, "change", write("a.txt", "a\n"))
        assert isinstance(events[-1], TurnFinished) and (work / "a.txt").read_text() == "a\n"
        points = runtime.handle.checkpoints.read()
        said = [warning for warning in runtime.info.warnings if "too big to snapshot" in warning]
        assert (len(points), len(said)) in ((1, 0), (0, 1))  # a restore point, or one line saying why not
        if points:
            await runtime.rewind_files(await runtime.plan_rewind(1))
            assert not (work / "a.txt").exists()
        assert tree_state(outside) == outside_before and (work / "fifo").exists()
        await runtime.aclose()


async def test_the_data_directory_inside_the_workdir_is_never_snapshotted(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("alpha\n")
    data = work / ".deep-tui"
    with openai_chat_server(ChatServerState(reply="done")) as (url, served):
        runtime = await open_session(url, data, work)
        (data / ".gitignore").unlink()  # even without the data directory's own .gitignore
        await prompt(runtime, served, "change", write("a.txt", "ALPHA\n"))
        [point] = runtime.handle.checkpoints.read()
        assert snapshot_paths(data, point.tree) == {"a.txt": "100644"}
        await runtime.aclose()

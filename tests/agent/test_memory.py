"""MEMORY.md: concurrent writers lose nothing (issue 8, item 8); a huge or broken MEMORY.md cannot break
sessions — what is injected is capped and says so, and errors it causes name it (item 10)."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from pathlib import Path

import pytest

from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.agent.tools.memory import INJECTED_CHARS, INJECTED_LINES, MemoryFile, memory_instructions, memory_toolset
from tui.agent.turn_events import TurnFailed, TurnFinished
from tui.base.config import ContextSettings, Settings
from tui.base.paths import DataDir

WRITERS = 12


def _remember_in_a_new_session(data_root: str, work: str, number: int, start: object) -> None:
    """One ``deep-tui run "remember …"``: a real offline-model turn calling the write_memory tool."""
    start.wait()  # type: ignore[attr-defined]
    factory = RuntimeFactory(settings=Settings(), data_dir=DataDir(Path(data_root)), workdir=Path(work),
                             choice=choose_model("offline", None))

    async def turn() -> None:
        runtime = await factory.open_request(SessionRequest())
        events = [event async for event in runtime.run_turn(f"remember fact number {number}")]
        await runtime.aclose()
        assert isinstance(events[-1], TurnFinished), events[-1]

    asyncio.run(turn())


def test_twelve_concurrent_remember_runs_keep_twelve_facts(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")  # the children share the imports: no second start-up
    start = context.Barrier(WRITERS)
    children = [context.Process(target=_remember_in_a_new_session,
                                args=(str(tmp_path / "data"), str(tmp_path), number, start))
                for number in range(WRITERS)]
    for child in children:
        child.start()
    for child in children:
        child.join(60)
    assert [child.exitcode for child in children] == [0] * WRITERS
    text = MemoryFile(DataDir(tmp_path / "data").memory_file()).read()
    assert sorted(line for line in text.splitlines() if line) == sorted(
        f"fact number {number}" for number in range(WRITERS))


def _append_many(path: str, writer: int, rounds: int, start: object) -> None:
    start.wait()  # type: ignore[attr-defined]
    memory = MemoryFile(Path(path))
    for round_number in range(rounds):
        memory.append(f"writer {writer} fact {round_number}")


@pytest.mark.parametrize("kind", ["processes", "threads"])
def test_hammering_appends_from_processes_and_threads_loses_nothing(tmp_path: Path, kind: str) -> None:
    path = str(tmp_path / "main" / "MEMORY.md")
    rounds = 25
    if kind == "processes":
        context = multiprocessing.get_context("fork")
        start = context.Barrier(WRITERS)
        workers = [context.Process(target=_append_many, args=(path, w, rounds, start)) for w in range(WRITERS)]
    else:
        start = threading.Barrier(WRITERS)
        workers = [threading.Thread(target=_append_many, args=(path, w, rounds, start)) for w in range(WRITERS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    lines = [line for line in Path(path).read_text().splitlines() if line]
    assert len(lines) == WRITERS * rounds and len(set(lines)) == WRITERS * rounds
    assert not list(Path(path).parent.glob(".MEMORY.md.*.tmp")), "no temporary file left behind"


def test_a_ten_megabyte_one_line_memory_is_cut_and_says_how_to_read_on(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path / "MEMORY.md")
    memory.path.write_text("x" * 10_000_000, encoding="utf-8")
    injected = memory_instructions(memory)()
    assert len(injected) < INJECTED_CHARS + 400
    assert "MEMORY.md holds 1 line, 10,000,000 bytes; shown: line 1 cut short" in injected
    assert "read_memory(start_line=" in injected and str(memory.path) in injected
    assert memory.too_large_to_edit()

    read_memory = memory_toolset(memory).tools["read_memory"].function
    page = read_memory()
    assert len(page) < 41_000 and "line 1 is longer than 40,000 characters and was cut" in page


def test_many_lines_are_capped_by_lines_and_by_characters(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path / "MEMORY.md")
    memory.write("".join(f"fact {n}\n" for n in range(1, 1001)))
    injected = memory_instructions(memory)()
    assert f"fact {INJECTED_LINES}\n" in injected + "\n" and f"fact {INJECTED_LINES + 1}\n" not in injected
    assert "800 more lines — use read_memory to see them" in injected

    memory.write("".join(f"{n:04d} " + "y" * 195 + "\n" for n in range(1, 301)))  # 200 chars a line
    injected = memory_instructions(memory)()
    assert len(injected) < INJECTED_CHARS + 400 and "0079 " in injected and "0081 " not in injected
    assert "MEMORY.md holds 300 lines" in injected and "shown: line 80 cut short" in injected

    read_memory = memory_toolset(memory).tools["read_memory"].function
    second = read_memory(start_line=201)
    assert second.startswith("0201 ") and "0300 " in second and "that is the end" in second
    assert "has no line 400" in read_memory(start_line=400)


def test_an_unreadable_memory_is_named_in_every_message(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path / "MEMORY.md")
    memory.path.write_bytes(b"fine\n\xff\xfe broken utf-8\n")
    injected = memory_instructions(memory)()
    assert f"MEMORY.md at {memory.path} could not be read" in injected
    from pydantic_ai import ToolFailed

    with pytest.raises(ToolFailed, match=r"reading MEMORY\.md failed: the file is not valid UTF-8"):
        memory_toolset(memory).tools["read_memory"].function()


async def test_a_window_overflow_caused_by_memory_names_memory(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    MemoryFile(data.memory_file()).write("z" * 10_000_000)
    factory = RuntimeFactory(settings=Settings(context=ContextSettings(window=4_000)), data_dir=data,
                             workdir=tmp_path, choice=choose_model("offline", None))
    runtime = await factory.open_request(SessionRequest())
    events = [event async for event in runtime.run_turn("help")]
    failure = events[-1]
    assert isinstance(failure, TurnFailed) and "ContextOverflowError" in failure.message
    assert f"MEMORY.md ({data.memory_file()}) puts about" in failure.message and "shorten it" in failure.message
    await runtime.aclose()


def test_update_reads_and_writes_under_the_lock(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path / "main" / "MEMORY.md")
    memory.write("one\n")
    seen: list[str] = []

    def change(current: str) -> str:
        seen.append(current)
        return current + "two\n"

    assert memory.update(change) == "one\ntwo\n" and seen == ["one\n"]
    assert memory.read() == "one\ntwo\n" and memory.lock_path.exists()


def test_the_instructions_read_memory_again_only_when_it_changed(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Every request gets MEMORY.md as it is then, but an unchanged file costs a stat, not a read: an edit by
    the agent, by the editor or by another program is seen at the next request."""
    import os

    memory = MemoryFile(tmp_path / "MEMORY.md")
    instructions = memory_instructions(memory)
    assert "(empty" in instructions()
    reads: list[int] = []
    excerpt = MemoryFile.excerpt
    monkeypatch.setattr(MemoryFile, "excerpt", lambda self, *a, **k: reads.append(1) or excerpt(self, *a, **k))
    memory.append("the deadline is 12:00 UTC")
    assert "the deadline is 12:00 UTC" in instructions() and len(reads) == 1
    assert instructions() == instructions() and len(reads) == 1, "unchanged: not read again"
    memory.path.write_text("the deadline is 13:00 UTC\n")  # in place, same size: the modification time says it
    os.utime(memory.path, ns=(memory.path.stat().st_atime_ns, memory.path.stat().st_mtime_ns + 1_000_000))
    assert "13:00" in instructions() and len(reads) == 2
    memory.path.unlink()
    assert "(empty" in instructions()

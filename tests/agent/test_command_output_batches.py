"""A command's output through its own reading thread and in batches: nothing lost or reordered however it is
written, the first line after a quiet spell handed on before the command ends, the thread gone with the command,
and the execute tool's end (``ToolOutputEnded``) before its result."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from tests.agent.shell_support import CommandModel, open_runtime, requires_bwrap, turn
from tui.agent.shell.command_run import DELIVERY_SECONDS, CommandRun, run_command
from tui.agent.shell.sandbox import Sandbox, SandboxPolicy
from tui.agent.turn_events import ToolCallFinished, ToolOutputDelta, ToolOutputEnded

TINY_WRITES = "i=0; while [ $i -lt 10000 ]; do printf 'line %05d é✓\\n' $i; i=$((i+1)); done"
"""Ten thousand writes of 16 bytes (``printf`` is the shell's own: one write each), two of the characters
multibyte, so pieces split inside a character somewhere."""


def expected_lines(count: int) -> str:
    return "".join(f"line {number:05d} é✓\n" for number in range(count))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def unsandboxed(work: Path) -> Sandbox:
    return Sandbox(SandboxPolicy(workdir=work), enabled=False)


def reading_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "deep-tui-command-output"]


async def no_reading_thread_left() -> None:
    deadline = time.monotonic() + 2
    while reading_threads():
        assert time.monotonic() < deadline, "the command's reading thread outlived it"
        await asyncio.sleep(0.02)


async def test_ten_thousand_tiny_writes_arrive_whole_in_order_in_a_few_batches(work: Path) -> None:
    batches: list[str] = []

    async def sink(text: str) -> None:
        batches.append(text)

    done = await run_command(unsandboxed(work), TINY_WRITES, timeout=60, on_output=sink)
    assert done.exit_code == 0 and done.ending == "exited"
    assert done.output == expected_lines(10_000)  # every byte, in order, no character broken
    assert "".join(batches) == done.output  # what the screen was handed is the same text
    assert len(batches) < 1_000  # batched: not one hand-over per write
    await no_reading_thread_left()


async def test_a_steady_trickle_is_handed_on_at_most_every_delivery_interval(work: Path) -> None:
    batches: list[str] = []

    async def sink(text: str) -> None:
        batches.append(text)

    started = time.monotonic()
    done = await run_command(unsandboxed(work), "for i in $(seq 150); do echo $i; sleep 0.003; done", timeout=60,
                             on_output=sink)
    elapsed = time.monotonic() - started
    assert "".join(batches) == done.output == "".join(f"{i}\n" for i in range(1, 151))
    assert len(batches) <= elapsed / DELIVERY_SECONDS + 2 < 150  # one batch per interval, not one per line


async def test_stdout_and_stderr_stay_interleaved_as_written(work: Path) -> None:
    done = await run_command(unsandboxed(work), "for i in $(seq 300); do echo out$i; echo err$i >&2; done",
                             timeout=60)
    assert done.output == "".join(f"out{i}\nerr{i}\n" for i in range(1, 301))


async def test_what_comes_before_a_quiet_spell_is_handed_on_before_the_command_ends(work: Path) -> None:
    batches: list[tuple[str, bool]] = []
    run = CommandRun("x")

    async def sink(text: str) -> None:
        batches.append((text, run.finished is None))

    await run_command(unsandboxed(work), "echo early; sleep 0.6; echo late", timeout=60, on_output=sink, run=run)
    assert batches == [("early\n", True), ("late\n", True)]  # each on its own, while the command ran


async def test_a_background_process_holding_the_output_is_killed_and_the_thread_ends(work: Path) -> None:
    started = time.monotonic()
    done = await run_command(unsandboxed(work), "echo before; sleep 300 & echo after", timeout=60)
    assert done.output == "before\nafter\n" and done.exit_code == 0
    assert time.monotonic() - started < 5  # not held up by the sleep keeping the pipe open
    await no_reading_thread_left()


async def test_a_cancelled_command_keeps_what_it_printed_and_its_thread_ends(work: Path) -> None:
    run = CommandRun("x")
    task = asyncio.create_task(run_command(unsandboxed(work), "echo partial; sleep 300", timeout=60, run=run))
    while "partial" not in run.output:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert run.ending == "cancelled" and run.output == "partial\n"
    await no_reading_thread_left()


@requires_bwrap
async def test_the_tool_says_the_command_ended_before_its_result(tmp_path: Path, work: Path) -> None:
    runtime = await open_runtime(tmp_path, work, CommandModel(TINY_WRITES), commands="always")
    events = await turn(runtime)
    kinds = [type(event).__name__ for event in events]
    ended = kinds.index("ToolOutputEnded")
    assert kinds.index("ToolOutputDelta") < ended < kinds.index("ToolCallFinished")
    assert "ToolOutputDelta" not in kinds[ended:]  # all the output came before the end
    [end] = [event for event in events if isinstance(event, ToolOutputEnded)]
    [finished] = [event for event in events if isinstance(event, ToolCallFinished)]
    assert end.call_id == finished.call_id and end.status.startswith("[exit status 0 · ")
    assert finished.last_line == end.status  # the result ends with the same line
    streamed = "".join(event.text for event in events if isinstance(event, ToolOutputDelta))
    assert streamed == expected_lines(10_000)
    assert finished.evicted_path is not None  # 160 KB: saved whole, byte for byte
    assert Path(finished.evicted_path).read_text(encoding="utf-8") == f"{streamed}{end.status}"
    await runtime.aclose()

"""Running one shell command: output streamed as it arrives, a deadline, a size cap, and a kill that reaches
every process the command started.

The command is started in a new session (its own process group); with the sandbox, bubblewrap also runs it
in its own PID namespace and dies with deep-tui. Stopping it — the deadline, the size cap, or the caller's
cancellation (Esc) — sends ``SIGKILL`` to the whole group at once: bubblewrap's init dies, and with it every
process in the namespace, backgrounded ones included. Standard output and standard error share one pipe,
so they interleave exactly as the command wrote them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from tui.agent.shell.output_pipe import OutputPipe
from tui.agent.shell.sandbox import Launch, Sandbox

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 600
OUTPUT_CAP_BYTES = 16 * 1024 * 1024
"""A command that prints more than this is stopped: the model gets what came, and is told."""
DELIVERY_SECONDS = 1 / 30
"""Output is handed to ``on_output`` at most this often, what came in between joined: a command printing
megabytes in 4 KB writes costs one event per interval rather than one per write (the screen draws at a lower
rate anyway). The first output after a quiet spell goes at once; none waits longer than this."""
REAP_SECONDS = 1.0
"""How long to wait for a killed command to be gone (and its last output read) before giving up on it."""

Ending = Literal["exited", "timeout", "cancelled", "output_cap", "failed_to_start"]

OutputSink = Callable[[str], Awaitable[None]]
"""Receives the output (decoded text) as it arrives, in order, in pieces at most :data:`DELIVERY_SECONDS` apart."""


@dataclass
class CommandRun:
    """One command's run; ``output`` grows while it runs, so a cancelled caller still has what came."""

    command: str
    pieces: list[str] = field(default_factory=list)
    byte_count: int = 0
    cap_bytes: int = OUTPUT_CAP_BYTES
    exit_code: int | None = None
    ending: Ending = "exited"
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    error: str = ""
    """Why the command could not start (``ending == "failed_to_start"``)."""
    notes: list[str] = field(default_factory=list)
    """What the sandbox found after the command (a ``.git`` it made, moved aside): shown before the status."""

    @property
    def output(self) -> str:
        return "".join(self.pieces)

    @property
    def duration(self) -> float:
        return (self.finished or time.monotonic()) - self.started

    def status_line(self) -> str:
        """How it ended, for the model and the user: ``[exit status 0 · 1.2 s]`` (after the sandbox's notes)."""
        return "\n".join([*self.notes, self._ending_line()])

    def _ending_line(self) -> str:
        seconds = f"{self.duration:.1f} s"
        if self.ending == "timeout":
            return f"[timed out after {seconds}: the command and everything it started were killed]"
        if self.ending == "cancelled":
            return f"[cancelled by the user after {seconds}: the command and everything it started were killed]"
        if self.ending == "output_cap":
            return (f"[stopped after {self.byte_count:,} bytes of output (the cap is {self.cap_bytes:,}), "
                    f"{seconds}: the command was killed]")
        if self.ending == "failed_to_start":
            return f"[the command could not start: {self.error}]"
        return f"[exit status {self.exit_code} · {seconds}]"


def clamp_timeout(timeout: int | float | None) -> float:
    """``None`` → the default; at most :data:`MAX_TIMEOUT`."""
    if timeout is None:
        return DEFAULT_TIMEOUT
    return float(min(max(timeout, 1), MAX_TIMEOUT))


def kill_group(pid: int) -> None:
    """``SIGKILL`` to process group ``pid`` (the command was started as its leader)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    except PermissionError as error:  # pragma: no cover - the group is ours
        logger.warning("could not kill the command's process group %d: %s", pid, error)


async def run_command(sandbox: Sandbox, command: str, *, timeout: float, on_output: OutputSink | None = None,
                      run: CommandRun | None = None, cap_bytes: int = OUTPUT_CAP_BYTES) -> CommandRun:
    """Run ``command`` in ``sandbox``; ``on_output`` gets the output as it arrives. Cancelling the caller kills
    the command (``run.ending`` becomes ``cancelled``) and re-raises; pass ``run`` to keep its output then."""
    run = run if run is not None else CommandRun(command)
    run.cap_bytes = cap_bytes
    if "\0" in command:
        run.ending, run.error, run.finished = "failed_to_start", "it contains a NUL byte", time.monotonic()
        return run
    preparing = asyncio.ensure_future(asyncio.to_thread(sandbox.launch, command))
    try:
        launch = await asyncio.shield(preparing)  # shielded: a placeholder it makes must be removed again
    except asyncio.CancelledError:
        run.ending, run.finished = "cancelled", time.monotonic()
        with contextlib.suppress(OSError, ValueError):
            (await preparing).finish()
        raise
    except (OSError, ValueError) as error:
        run.ending, run.error, run.finished = "failed_to_start", _reason(error), time.monotonic()
        return run
    try:
        return await _run_launched(launch, sandbox, run, timeout, on_output)
    finally:
        finishing = asyncio.ensure_future(asyncio.to_thread(launch.finish))
        run.notes.extend(await asyncio.shield(finishing))


def _reason(error: OSError | ValueError) -> str:
    if isinstance(error, OSError):
        return error.strerror or str(error)
    return str(error)


async def _run_launched(launch: Launch, sandbox: Sandbox, run: CommandRun, timeout: float,
                        on_output: OutputSink | None) -> CommandRun:
    pipe = OutputPipe(run.cap_bytes)  # drained by its own thread: the command never waits for the app to draw
    starting = asyncio.ensure_future(asyncio.create_subprocess_exec(
        *launch.argv, stdin=asyncio.subprocess.DEVNULL, stdout=pipe.write_fd,
        stderr=asyncio.subprocess.STDOUT, cwd=sandbox.policy.workdir, env=sandbox.environment(),
        start_new_session=True, pass_fds=launch.pass_fds))
    try:
        # shielded: a cancel while asyncio starts the process would kill the shell alone, leaving its children
        process = await asyncio.shield(starting)
    except (OSError, ValueError) as error:
        pipe.close()
        run.ending, run.error, run.finished = "failed_to_start", _reason(error), time.monotonic()
        return run
    except asyncio.CancelledError:
        run.ending = "cancelled"
        try:
            started = await starting
        except (OSError, ValueError):
            pipe.close()
        else:
            kill_group(started.pid)
            pipe.start()  # what it printed before the kill is still in the pipe
            await _reap(started, asyncio.create_task(_read(pipe, run, None, started.pid)))
        run.finished = time.monotonic()
        raise
    launch.started()
    pipe.start()
    reader = asyncio.create_task(_read(pipe, run, on_output, process.pid))
    exited = asyncio.ensure_future(process.wait())
    try:
        async with asyncio.timeout(timeout):
            await asyncio.wait({reader, exited}, return_when=asyncio.FIRST_COMPLETED)
            if run.ending != "output_cap":
                await exited
    except TimeoutError:
        run.ending = "timeout"
    except asyncio.CancelledError:
        run.ending = "cancelled"
        kill_group(process.pid)
        exited.cancel()
        await _reap(process, reader)
        run.finished = time.monotonic()
        raise
    kill_group(process.pid)  # stopped, or exited leaving background processes behind (holding the pipe open)
    await _reap(process, reader)
    run.exit_code = process.returncode
    run.finished = time.monotonic()
    return run


async def _reap(process: asyncio.subprocess.Process, reader: asyncio.Task[None]) -> None:
    """Wait (briefly) for the killed process to be gone and its last output read; never for ever."""
    try:
        async with asyncio.timeout(REAP_SECONDS):
            await process.wait()
            await reader
    except TimeoutError:
        logger.warning("the command's output did not end within %.1f s of the kill; no longer read", REAP_SECONDS)
    finally:
        if not reader.done():
            reader.cancel()


async def _read(pipe: OutputPipe, run: CommandRun, on_output: OutputSink | None, pid: int) -> None:
    """Take the output until the pipe closes; once past the cap the command is killed (the pipe drops the rest).
    Every piece is in ``run.pieces`` as soon as it is taken; ``on_output`` gets them in batches
    (:class:`_Batches`)."""
    batches = _Batches(run, on_output)
    try:
        ended = False
        while not ended:
            try:
                async with asyncio.timeout_at(batches.due):  # no deadline while nothing waits to be handed on
                    texts, ended = await pipe.take()
            except TimeoutError:  # the command went quiet: what it printed last is handed on now
                await batches.deliver()
                continue
            run.byte_count = pipe.byte_count
            if pipe.capped and run.ending != "output_cap":
                run.ending = "output_cap"
                kill_group(pid)
            for text in texts:
                batches.add(text)
            if batches.due is not None and batches.due <= asyncio.get_running_loop().time():
                await batches.deliver()
        await batches.deliver()
    finally:
        pipe.close()


class _Batches:
    """The output read since it was last handed to ``on_output``, and when it is due (loop time)."""

    def __init__(self, run: CommandRun, on_output: OutputSink | None) -> None:
        self._run = run
        self._on_output = on_output
        self._pending: list[str] = []
        self._last = -DELIVERY_SECONDS
        self.due: float | None = None
        """Loop time by which the pending output must be handed on; ``None``: nothing pending."""

    def add(self, text: str) -> None:
        if not text:
            return
        self._run.pieces.append(text)
        if self._on_output is None:
            return
        self._pending.append(text)
        if self.due is None:
            self.due = self._last + DELIVERY_SECONDS

    async def deliver(self) -> None:
        if not self._pending or self._on_output is None:
            return
        text = "".join(self._pending)
        self._pending.clear()
        self.due = None
        self._last = asyncio.get_running_loop().time()
        await self._on_output(text)

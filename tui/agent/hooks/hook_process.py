"""Running one hook: its command (sandboxed like the agent's commands when the sandbox is on), the event as JSON on
stdin, a timeout, stdout and stderr each capped. A hook that fails, hangs or floods comes back as a notice; it
never holds up a turn for longer than its timeout."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.base.hooks_config import HookSpec

MAX_HOOK_OUTPUT = 16_000
"""Characters of a hook's stdout (and of its stderr) kept; the rest is read and dropped."""
DENY_EXIT_STATUS = 2


@dataclass(frozen=True)
class HookResult:
    """What a hook did: its exit status (``None`` when it timed out or could not start), and its output."""

    spec: HookSpec
    status: int | None
    stdout: str
    stderr: str
    notice: str | None = None
    """Why the hook counts as failed (non-zero status, timeout, start failure, output cut), for the user."""

    @property
    def denies(self) -> bool:
        return self.status == DENY_EXIT_STATUS


async def run_hook(spec: HookSpec, event: dict[str, Any], argv: Sequence[str],
                   env: dict[str, str] | None = None, *, cwd: Path | None = None, pass_fds: Sequence[int] = (),
                   on_started: Callable[[], None] | None = None, may_deny: bool = False) -> HookResult:
    """Run ``argv`` (the hook's command as the sandbox launches it) with ``event`` on stdin, in ``cwd``;
    ``pass_fds`` are inherited (the sandbox's filter), ``on_started`` is called once the process runs. Exit
    status 2 is a denial when ``may_deny`` (a ``pre_tool`` hook), a failure like any other otherwise. Cancelled,
    it kills the hook's process group before the cancellation goes on."""
    data = json.dumps(event, default=str).encode()
    try:
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True, env=env, cwd=cwd, pass_fds=tuple(pass_fds))
    except OSError as error:
        return HookResult(spec, None, "", "", f"hook {spec.command!r} could not start: {error.strerror or error}")
    if on_started is not None:
        on_started()
    flooded: list[str] = []

    async def feed() -> None:
        assert process.stdin is not None
        try:
            process.stdin.write(data)
            await process.stdin.drain()
            process.stdin.close()
        except (BrokenPipeError, ConnectionResetError):
            pass  # a hook need not read its event

    async def collect(stream: asyncio.StreamReader | None, name: str) -> str:
        assert stream is not None
        kept = bytearray()
        while chunk := await stream.read(65536):
            room = MAX_HOOK_OUTPUT - len(kept)
            if room > 0:
                kept += chunk[:room]
            elif name not in flooded:
                flooded.append(name)
        return kept.decode("utf-8", errors="replace")

    async def whole() -> tuple[str, str]:
        _, out, err = await asyncio.gather(feed(), collect(process.stdout, "stdout"), collect(process.stderr, "stderr"))
        await process.wait()
        return out, err

    try:
        stdout, stderr = await asyncio.wait_for(whole(), spec.timeout)
    except TimeoutError:
        _kill(process.pid)
        await process.wait()
        return HookResult(spec, None, "", "", f"hook {spec.command!r} did not finish in {spec.timeout:g} s: stopped")
    except asyncio.CancelledError:  # the turn was stopped: the hook goes with it
        _kill(process.pid)
        raise
    notice = None
    if flooded:
        notice = f"hook {spec.command!r} wrote more than {MAX_HOOK_OUTPUT:,} characters to {' and '.join(flooded)}: cut"
    elif process.returncode != 0 and not (may_deny and process.returncode == DENY_EXIT_STATUS):
        notice = f"hook {spec.command!r} failed (exit status {process.returncode}): {stderr.strip()[:300]}"
    return HookResult(spec, process.returncode, stdout, stderr, notice)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)

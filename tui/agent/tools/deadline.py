"""The wall-clock cap and cancellation of one tool call, shared by the event loop and a worker thread.

A tool call runs under a :class:`ToolDeadline` that :class:`~tui.agent.tools.time_limit.ToolTimeLimit` opens
around it (``[tools] timeout`` seconds); the tool reads it with :func:`current_deadline`. Async work is
cancelled by asyncio as usual (Esc, Ctrl+C, the cap). Blocking work cannot be killed in a thread, so it runs
through :func:`run_blocking`, which hands it the deadline: the work calls :meth:`ToolDeadline.check` (or
reads :attr:`~ToolDeadline.expired`) between small steps, and a cancellation of the awaiting task sets the
deadline's cancel flag, so the thread stops within one step.

Usage in a tool::

    async def my_tool(ctx: RunContext[None], path: str) -> str:
        return await run_blocking(lambda deadline: scan(path, deadline))

and for a subprocess (the ``execute`` tool): ``current_deadline().remaining()`` is the timeout to give it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Literal, TypeVar

import anyio

T = TypeVar("T")

STOP_GRACE = 0.5
"""Seconds a cancelled call waits for its worker thread to notice and stop (it checks every few ms)."""


class ToolStopped(Exception):
    """Raised inside blocking tool work when its call was cancelled or ran past its cap."""

    def __init__(self, reason: Literal["cancelled", "timeout"], message: str) -> None:
        super().__init__(message)
        self.reason = reason


class ToolDeadline:
    """When one tool call must stop: after ``seconds`` (``None``: no cap), or as soon as it is cancelled.

    Thread-safe: the event loop cancels, a worker thread checks.
    """

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = seconds
        self._expires = None if seconds is None else time.monotonic() + seconds
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        """Ask the work to stop (the turn was cancelled): the next :meth:`check` raises."""
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    @property
    def expired(self) -> bool:
        """Whether the cap has passed (not whether it was cancelled)."""
        return self._expires is not None and time.monotonic() >= self._expires

    def remaining(self) -> float | None:
        """Seconds left before the cap (0 once passed), ``None`` without a cap."""
        return None if self._expires is None else max(0.0, self._expires - time.monotonic())

    def check(self) -> None:
        """Raise :class:`ToolStopped` if the call was cancelled or its time is up; otherwise return at once."""
        if self._cancelled.is_set():
            raise ToolStopped("cancelled", "the tool call was cancelled")
        if self.expired:
            raise ToolStopped("timeout", self.timeout_message())

    def raise_if_cancelled(self) -> None:
        """Raise :class:`ToolStopped` only for a cancellation: work that stops at the cap with a partial answer
        checks :attr:`expired` itself."""
        if self._cancelled.is_set():
            raise ToolStopped("cancelled", "the tool call was cancelled")

    def timeout_message(self) -> str:
        """What the model reads when the cap stopped the call."""
        return (f"stopped after {self.seconds:g} s, the time limit of one tool call ([tools] timeout); "
                "ask for less at a time (a narrower path, pattern or range)")


_CURRENT: ContextVar[ToolDeadline | None] = ContextVar("tool_deadline", default=None)
_INLINE: ContextVar[bool] = ContextVar("blocking_inline", default=False)


def current_deadline() -> ToolDeadline:
    """The running tool call's deadline; outside :func:`deadline_scope` (a tool called directly) a fresh one
    without a cap, which still stops on cancellation when passed to :func:`run_blocking`."""
    return _CURRENT.get() or ToolDeadline()


@contextlib.contextmanager
def deadline_scope(deadline: ToolDeadline) -> Iterator[ToolDeadline]:
    """Make ``deadline`` the current one for the code inside (one tool call)."""
    token = _CURRENT.set(deadline)
    try:
        yield deadline
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def blocking_work_inline() -> Iterator[None]:
    """Within this block :func:`run_blocking` runs its work in the calling thread (the fuzz farm: no screen to
    keep live, and a thread per call would cost more than the work). Such work cannot be cancelled midway."""
    token = _INLINE.set(True)
    try:
        yield
    finally:
        _INLINE.reset(token)


async def run_blocking(work: Callable[[ToolDeadline], T], deadline: ToolDeadline | None = None) -> T:
    """Run ``work(deadline)`` in a daemon thread and await its result, off the event loop.

    Cancelling the awaiting task cancels ``deadline`` (the current one by default), waits up to
    :data:`STOP_GRACE` for the thread to notice, and re-raises the cancellation. The thread is a daemon: one
    stuck in a system call can never keep the process from exiting.
    """
    deadline = deadline or current_deadline()
    if _INLINE.get():
        return work(deadline)
    loop = asyncio.get_running_loop()
    outcome: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if outcome.done():
            return
        if error is not None:
            outcome.set_exception(error)
        else:
            outcome.set_result(result)  # type: ignore[arg-type]

    def target() -> None:
        result: T | None = None
        error: BaseException | None = None
        try:
            result = work(deadline)
        except BaseException as raised:  # handed to the awaiting task, which raises it
            error = raised
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody awaits this call any more
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=target, name="deep-tui tool", daemon=True).start()
    try:
        return await asyncio.shield(outcome)
    except asyncio.CancelledError:
        deadline.cancel()
        with anyio.move_on_after(STOP_GRACE, shield=True):
            await asyncio.wait([outcome])
        if outcome.done() and not outcome.cancelled():
            outcome.exception()  # retrieved: the work's own ToolStopped is not an unhandled error
        raise

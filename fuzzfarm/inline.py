"""Sync callbacks run in the farm's own thread instead of a worker thread.

pydantic-ai runs every blocking call of a run (a local workspace's stat, lock and read, a sync
instructions function) in a worker thread, so an app's event loop never stalls on the disk. The farm
has no screen to keep live, and its sessions sit in memory (``/dev/shm``): the three thread hand-offs of
each file read cost more CPU than the read. The same callables run, with the same arguments and
results, only inline, through pydantic-ai's public ``Agent.using_thread_executor``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from typing import Any, TypeVar

from pydantic_ai import Agent

from tui.agent.tools.deadline import blocking_work_inline

_T = TypeVar("_T")


class InlineExecutor(Executor):
    """An executor that runs each submitted call at once, in the submitting thread."""

    def submit(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> Future[_T]:
        future: Future[_T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # handed to the awaiting caller, as a worker thread would
            future.set_exception(error)
        return future


@contextmanager
def inline_sync_calls() -> Iterator[None]:
    """Within this block, every agent run's sync callbacks, and the file tools' blocking work, run inline (see
    the module docstring)."""
    with Agent.using_thread_executor(InlineExecutor()), blocking_work_inline():
        yield

"""The search index's writer thread: index writes done in the order asked, off the caller's thread, and a wait
for all of them (one thread: once the newest is done, so is every earlier one)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["IndexWriter"]

P = ParamSpec("P")


class IndexWriter:
    """One daemon worker thread, started on the first write (only a live session records: not ``search``'s start)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._last: Future[bool] | None = None
        """The newest write asked for."""

    def submit(self, write: Callable[P, bool], *args: P.args, **kwargs: P.kwargs) -> Future[bool]:
        """Run ``write(*args, **kwargs)`` in the writer thread, after every write asked before it."""
        with self._lock:
            if self._executor is None:
                from concurrent.futures import ThreadPoolExecutor

                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="deep-tui-index-writer")
            future = self._executor.submit(write, *args, **kwargs)
            self._last = future
        return future

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until every write asked so far is done (or has failed); False on ``timeout``."""
        last = self._last
        if last is None:
            return True
        try:
            last.exception(timeout)
        except TimeoutError:
            return False
        return True

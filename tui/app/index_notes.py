"""What the app says while the search index is (re)built in the background: a note when a large build
starts (a first run, an index from another version of deep-tui, a damaged one) and one when it is done.
The session picker shows how far it has got meanwhile (``HistorySearch.indexing``)."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App

    from tui.store.search.search_outcome import IndexingProgress

logger = logging.getLogger(__name__)


class IndexNotes:
    """``on_indexing`` for ``HistorySearch.start_refresh``: called from the index's thread."""

    def __init__(self, app: App[Any]) -> None:
        self._app = app
        self._started: float | None = None

    def __call__(self, progress: IndexingProgress | None) -> None:
        if progress is not None and self._started is None:
            self._started = progress.started
            self._say(f"Search: {progress.describe()} in the background; until it is done, the session picker "
                      "searches what is indexed so far.")
        elif progress is None and self._started is not None:
            self._say(f"Search: the index is up to date (built in {time.monotonic() - self._started:.0f} s).")
            self._started = None

    def _say(self, message: str) -> None:
        if not self._app.is_running:  # ended (the catch-up outlives it): calling into its closed loop would warn
            logger.info("search index note not shown (the app has ended): %s", message)
            return
        try:
            self._app.call_from_thread(self._app.notify, message, timeout=8, markup=False)
        except RuntimeError as error:  # the app is closing: nobody to tell
            logger.info("search index note not shown (%s): %s", error, message)

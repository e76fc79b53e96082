"""The files ``@`` completes over: listed in a worker thread (``git ls-files``, or a bounded walk), kept for a
while, matched on each key. The first ``@`` starts the listing; the list appears when it arrives."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Protocol

from tui.agent.attachments.workdir_files import FileListing, list_files, match_files

if TYPE_CHECKING:
    from collections.abc import Callable

    from tui.app.chat.session_state import SessionState

__all__ = ["FileCompletion", "ListingHost"]

logger = logging.getLogger(__name__)

FRESH_SECONDS = 30.0
"""A listing older than this is made again in the background (the old one still answers meanwhile)."""


class ListingHost(Protocol):
    """What the completion needs from the screen that owns the prompt."""

    state: SessionState

    def start_in_thread(self, work: Callable[[], None], group: str) -> None:
        """Run ``work`` in a worker thread, the one worker of ``group``."""

    def call_from_thread(self, callback: Callable[[FileListing], None], listing: FileListing) -> None:
        """From the worker thread: call ``callback(listing)`` on the UI thread."""

    def listing_arrived(self) -> None:
        """The first listing is here: the prompt's suggestions are made again."""


class FileCompletion:
    """Answers the prompt's ``complete_files``: matches from the latest listing, None until there is one."""

    def __init__(self, host: ListingHost) -> None:
        self.host = host
        self.listing: FileListing | None = None
        self._listed_at = 0.0
        self._listing_now = False

    def matches(self, query: str) -> list[str] | None:
        """The files matching ``query``, best first; None while the first listing is being made."""
        if not self._listing_now and (self.listing is None or time.monotonic() - self._listed_at > FRESH_SECONDS):
            self._start()
        if self.listing is None:
            return None
        return match_files(self.listing.paths, query)

    def _start(self) -> None:
        factory = self.host.state.factory
        if factory is None:  # the session is still opening: its workdir is not known yet
            return
        workdir, data_root = factory.workdir, self.host.state.runtime.data_root
        self._listing_now = True

        def make() -> None:
            try:
                listing = list_files(workdir, data_root)
            except OSError as error:  # an unreadable workdir: nothing to complete, said in the log
                logger.warning("cannot list %s for @ completion: %s", workdir, error)
                listing = FileListing((), "walk", True)
            self.host.call_from_thread(self._arrived, listing)

        self.host.start_in_thread(make, "file-listing")

    def _arrived(self, listing: FileListing) -> None:
        first = self.listing is None
        self.listing, self._listed_at, self._listing_now = listing, time.monotonic(), False
        if listing.truncated:
            logger.info("@ completion lists %d files (%s; bounded)", len(listing.paths), listing.source)
        if first:
            self.host.listing_arrived()

"""The driver a served deep-tui runs with (``deep-tui serve`` names it in ``TEXTUAL_DRIVER``).

Textual's web driver stops reading when the server's pipe closes, but leaves the app running: a server
killed with SIGKILL would leave an app holding its session lock with no one to see it. This driver ends the
app when its input ends, so the app closes the way Ctrl+Q does (the turn in flight is recorded as
interrupted, the lock released).
"""

from __future__ import annotations

import logging

from textual.drivers.web_driver import WebDriver

logger = logging.getLogger(__name__)


class ServedDriver(WebDriver):
    """:class:`~textual.drivers.web_driver.WebDriver` that quits the app when the server goes away."""

    def run_input_thread(self) -> None:
        try:
            super().run_input_thread()
        finally:
            if not self.exit_event.is_set():
                logger.info("the server's connection closed: quitting")
                self._loop.call_soon_threadsafe(self._app.exit)

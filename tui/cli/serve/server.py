"""The web server behind ``deep-tui serve``: textual-serve, behind a token gate, without leaking the token.

Each browser connection gets its own deep-tui process (textual-serve starts one per websocket and ends it
when the socket closes). What this adds to textual-serve: the :class:`~tui.cli.serve.token_gate.TokenGate`, page URLs
taken from the address the browser used (so a server bound to ``0.0.0.0`` still hands out working
websocket addresses), TLS, one plain start-up message, and no access log (request lines carry the token).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from aiohttp import web
from textual_serve.server import Server

from tui.cli.serve.token_gate import TOKEN_QUERY, TokenGate

if TYPE_CHECKING:
    import ssl

logger = logging.getLogger(__name__)


class GatedServer(Server):
    """A textual-serve :class:`Server` that lets only holders of ``gate``'s token in."""

    def __init__(self, command: str, *, host: str, port: int, gate: TokenGate,
                 ssl_context: ssl.SSLContext | None = None, out: TextIO = sys.stdout) -> None:
        super().__init__(command, host=host, port=port, title="deep-tui",
                         templates_path=Path(__file__).parent / "templates")
        self.gate = gate
        self.ssl_context = ssl_context
        self.out = out
        self.scheme = "https" if ssl_context else "http"

    def url_with_token(self) -> str:
        """The address to open: the only place the token is ever shown."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}/?{TOKEN_QUERY}={self.gate.token}"

    def initialize_logging(self) -> None:
        """Nothing to set up: the command line already sends warnings to deep-tui.log and stderr, and there
        is no access log (a request line would carry the token)."""

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self.gate.middleware)
        return app

    async def handle_index(self, request: web.Request) -> Any:
        # textual-serve builds the page's websocket address from public_url: use the address the browser
        # used (a server on 0.0.0.0, or behind a port forward, is reached under another name).
        self.public_url = f"{self.scheme}://{request.host}"
        return await super().handle_index(request)

    async def on_startup(self, app: web.Application) -> None:
        """Nothing here: the address is printed once the socket listens (see :meth:`serve`)."""

    def serve(self, debug: bool = False) -> None:
        """Serve until SIGINT, SIGTERM or SIGHUP; open tabs are told to quit (and record their turns) first."""
        self.debug = debug
        self.initialize_logging()
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for stop_signal in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(stop_signal, stop.set)
        runner = web.AppRunner(await self._make_app(), access_log=None, handle_signals=False)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host, self.port, ssl_context=self.ssl_context, shutdown_timeout=10.0)
            await site.start()  # an address in use raises OSError here, before anything is printed
            # Printed only now: whoever reads this line (a person, a test) can connect at once.
            print(f"deep-tui serve: open {self.url_with_token()}", file=self.out, flush=True)
            print("deep-tui serve: each browser tab runs its own deep-tui; Ctrl+C stops the server",
                  file=self.out, flush=True)
            await stop.wait()
        finally:
            await runner.cleanup()
        logger.info("stopped")

"""``deep-tui serve``: the app in a browser, one deep-tui process per browser tab.

Every option the app takes is handed on to each tab's deep-tui unchanged (so ``serve --continue`` opens the
newest session in the first tab; a second tab on it is told it is open elsewhere, the usual one-writer rule).
The server listens on loopback unless told otherwise, and refuses to serve another address over plain HTTP
unless the user says so; a random token guards every connection either way (:mod:`tui.cli.serve.token_gate`).
"""

from __future__ import annotations

import shlex
import ssl
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tui.base.errors import UserFacingError

if TYPE_CHECKING:
    import argparse

SERVED_DRIVER = "tui.app.served_driver:ServedDriver"
SERVED_FLAG = "--served"
"""A hidden app option for each tab's deep-tui: a start-up error is shown in the page, not printed to a pipe."""

_Flag = Callable[[object], list[str]]


def _value(flag: str) -> _Flag:
    return lambda value: [flag, str(value)]


def _path(flag: str) -> _Flag:
    return lambda value: [flag, str(Path(str(value)).expanduser().resolve())]


def _switch(flag: str) -> _Flag:
    return lambda value: [flag] if value else []


FORWARDED_OPTIONS: dict[str, _Flag] = {
    "continue_": _switch("--continue"),
    "resume": _value("--resume"),
    "fork": _switch("--fork"),
    "model": _value("--model"),
    "mode": _value("--mode"),
    "summarization_model": _value("--summarization-model"),
    "base_url": _value("--base-url"),
    "context_window": _value("--context-window"),
    "workdir": _path("--workdir"),
    "read_timeout": _value("--read-timeout"),
    "retries": _value("--retries"),
    "writes": lambda value: ["--allow-writes"] if value == "always" else ["--deny-writes"],
    "commands": lambda value: ["--allow-commands"] if value == "always" else ["--deny-commands"],
    "sandbox": lambda value: [] if value else ["--no-sandbox"],
    "data_dir": _path("--data-dir"),
    "config": _path("--config"),
    "debug": _switch("--debug"),
}
"""How each app option (by its argparse ``dest``) is handed on to a tab's deep-tui. tests/cli checks that
every option of the app is here, so a new option cannot be silently dropped by ``serve``."""


def forwarded_arguments(args: argparse.Namespace) -> list[str]:
    """The app options given to ``serve``, as arguments for each tab's deep-tui."""
    arguments: list[str] = []
    for dest, to_flags in FORWARDED_OPTIONS.items():
        value = getattr(args, dest, None)
        if value is not None:  # a switch left off gives no flag; --no-sandbox stores False and gives one
            arguments.extend(to_flags(value))
    return arguments


def app_command(args: argparse.Namespace) -> str:
    """The shell command textual-serve runs for each tab (``exec``: the app is the process it stops)."""
    app = shlex.join([sys.executable, "-m", "tui.cli", SERVED_FLAG, *forwarded_arguments(args)])
    return f"TEXTUAL_DRIVER={SERVED_DRIVER} exec {app}"


@dataclass(frozen=True)
class ServeOptions:
    """Where and how to listen."""

    host: str
    port: int
    tls_cert: Path | None
    tls_key: Path | None
    allow_plain_http: bool

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ServeOptions:
        cert, key = getattr(args, "tls_cert", None), getattr(args, "tls_key", None)
        return cls(host=args.host, port=args.port, tls_cert=Path(cert).expanduser() if cert else None,
                   tls_key=Path(key).expanduser() if key else None,
                   allow_plain_http=bool(getattr(args, "allow_plain_http", False)))

    def check(self) -> None:
        """Refuse what would expose the app: one line, raised as :class:`UserFacingError`."""
        from tui.cli.serve.token_gate import is_loopback_host

        if not 1 <= self.port <= 65_535:
            raise UserFacingError(f"--port must be between 1 and 65535 (got {self.port})")
        if (self.tls_cert is None) != (self.tls_key is None):
            raise UserFacingError("--tls-cert and --tls-key go together")
        if not is_loopback_host(self.host) and self.tls_cert is None and not self.allow_plain_http:
            raise UserFacingError(
                f"refusing to serve on {self.host} over plain HTTP: anyone who can see the traffic can take the "
                "token; give --tls-cert and --tls-key, or --allow-plain-http if you trust that network")

    def ssl_context(self) -> ssl.SSLContext | None:
        if self.tls_cert is None or self.tls_key is None:
            return None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        try:
            context.load_cert_chain(self.tls_cert, self.tls_key)
        except (OSError, ssl.SSLError) as error:
            raise UserFacingError(f"cannot use --tls-cert/--tls-key: {error}") from None
        return context


def run_serve_command(args: argparse.Namespace) -> int:
    """Serve until interrupted; returns the exit status."""
    options = ServeOptions.from_args(args)
    options.check()
    context = options.ssl_context()
    from tui.cli.serve.server import GatedServer
    from tui.cli.serve.token_gate import TokenGate, is_loopback_host, new_token

    gate = TokenGate(new_token(), loopback_only=is_loopback_host(options.host), secure_cookie=context is not None)
    server = GatedServer(app_command(args), host=options.host, port=options.port, gate=gate, ssl_context=context)
    try:
        server.serve()
    except OSError as error:  # the port is taken, the address is not ours
        raise UserFacingError(f"cannot listen on {options.host}:{options.port}: {error.strerror or error}") from None
    return 0


"""A small stdio MCP server for the tests, built on the ``mcp`` package's own server API.

Run as ``python -m tests.support.mcp_server`` (or by path). Tools:

- ``echo(text)``: returns ``text`` (a clash with nothing);
- ``read_file(path)``: the same name as deep-tui's own tool, so the client must prefix it;
- ``big(size)``: ``size`` bytes of numbered lines (a large output for the chain to evict);
- ``nap(seconds)``: sleeps, then says so;
- ``crash()``: the server process exits at once, mid-call;
- ``header(name)``: one HTTP header of the request (streamable HTTP);
- ``environment()``: the names of the environment variables the server was started with.

``MCP_TEST_PID_FILE`` (when set): the server writes its pid there, so a test can kill it mid-session.
``--http PORT``: serve streamable HTTP on 127.0.0.1:PORT (path ``/mcp``) instead of stdio.
``--attacks``: one more tool, ``log(level, text, logger_name)``: sends ``text`` as a log notification (escape
sequences and all: a hostile server's way onto the user's terminal), then returns ``logged``.
``--wait-for FILE``: start serving only once FILE exists (a server slow to start, as on a loaded machine:
the test decides when it is ready).
``--hang``: read stdin and never answer the handshake (a server that never starts).
``--exit``: exit at once with status 3 (a command that fails to start).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

from mcp.server.mcpserver import Context, MCPServer


def big_text(size: int) -> str:
    """``size`` bytes of numbered lines, the same every time (tests compare it byte for byte)."""
    lines: list[str] = []
    used = 0
    number = 0
    while used < size:
        line = f"line {number:06d} of the big output\n"
        lines.append(line)
        used += len(line)
        number += 1
    return "".join(lines)[:size]


def build_server(*, attacks: bool = False) -> MCPServer:
    server = MCPServer("deep-tui-test")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def read_file(path: str) -> str:
        """A tool whose name clashes with deep-tui's own read_file."""
        return f"mcp read_file of {path}"

    @server.tool()
    def big(size: int) -> str:
        """Return size bytes of numbered lines."""
        return big_text(size)

    @server.tool()
    async def nap(seconds: float) -> str:
        """Sleep, then say so."""
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool()
    def crash() -> str:
        """The server exits in the middle of this call."""
        os._exit(9)

    @server.tool()
    def header(name: str, ctx: Context) -> str:
        """The value of one HTTP header of the request (streamable HTTP only)."""
        return (ctx.headers or {}).get(name.lower(), "")

    @server.tool()
    def environment() -> str:
        """The names of the server's environment variables, one a line."""
        return "\n".join(sorted(os.environ))

    if attacks:

        @server.tool()
        async def log(level: str, text: str, ctx: Context, logger_name: str = "") -> str:
            """Send text as a log notification of the given level."""
            await ctx.log(level, text, logger_name=logger_name or None)  # type: ignore[arg-type]
            return "logged"

    return server


def main() -> None:
    pid_file = os.environ.get("MCP_TEST_PID_FILE")
    if pid_file:
        with open(pid_file, "w", encoding="utf-8") as handle:
            handle.write(str(os.getpid()))
    if "--exit" in sys.argv:
        sys.stderr.write("this server refuses to start\n")
        sys.exit(3)
    if "--hang" in sys.argv:
        for _line in sys.stdin:  # never answers
            pass
        return
    if "--wait-for" in sys.argv:
        ready = sys.argv[sys.argv.index("--wait-for") + 1]
        while not os.path.exists(ready):
            time.sleep(0.02)
    attacks = "--attacks" in sys.argv
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        build_server(attacks=attacks).run("streamable-http", host="127.0.0.1", port=port)
        return
    build_server(attacks=attacks).run("stdio")


if __name__ == "__main__":
    main()


def server_config(name: str = "tests", *flags: str, **changes: object):  # type: ignore[no-untyped-def]
    """The config of this server, started as ``sh -c 'exec "$PY" -m tests.support.mcp_server FLAGS'`` so what
    /mcp shows of it is the same on every machine (the interpreter and the repository arrive by ``env``)."""
    from pathlib import Path

    from tui.base.mcp_config import McpServerConfig

    repository = str(Path(__file__).resolve().parents[2])
    line = " ".join(['exec "$PY" -m tests.support.mcp_server', *flags])
    env = {"PY": sys.executable, "PYTHONPATH": repository, **dict(changes.pop("env", {}))}  # type: ignore[call-overload]
    values: dict[str, object] = {"command": "sh", "args": ("-c", line), "env": env, "source": "config.toml"}
    values.update(changes)
    return McpServerConfig(name, "stdio", **values)  # type: ignore[arg-type]

"""Who may reach a served deep-tui: a random token, checked on every request.

The token arrives once in the URL ``deep-tui serve`` prints (``/?token=…``, as Jupyter does). The first
page load with it sets an HTTP-only, same-site cookie and redirects to the bare URL, so the token leaves the
address bar; every later request (the page's scripts, its fonts, the websocket) carries the cookie. A
request with neither a valid token nor the cookie gets a 403 page, never the app. Websockets must also come
from the page's own origin (no other site can drive the app through the user's browser), and on a loopback
address the ``Host`` header must name a loopback host (DNS rebinding cannot reach the server either).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import web

TOKEN_QUERY = "token"
TOKEN_COOKIE = "deeptui_token"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

FORBIDDEN_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>deep-tui: forbidden</title></head>
<body style="font-family: monospace; background: #1e1e1e; color: #ddd; padding: 2em">
<h1>403 — this deep-tui needs its token</h1>
<p>Open the full address <code>deep-tui serve</code> printed when it started (it ends in
<code>?token=…</code>). Anyone without that address is refused.</p>
</body></html>
"""


def new_token() -> str:
    """A fresh random token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and any loopback IP (``127.0.0.0/8``, ``::1``), with or without brackets."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _host_name(host_header: str) -> str:
    """The name part of a ``Host`` header (``[::1]:8000`` → ``::1``, ``localhost:80`` → ``localhost``)."""
    return urlsplit(f"//{host_header}").hostname or ""


@dataclass(frozen=True)
class TokenGate:
    """The aiohttp middleware that lets only token holders in."""

    token: str
    loopback_only: bool
    """The server listens on loopback: a request naming another host is a rebinding attempt."""
    secure_cookie: bool = False
    """Served over HTTPS: the cookie is marked Secure."""

    def accepts(self, candidate: str | None) -> bool:
        """Constant-time comparison with the server's token."""
        return candidate is not None and hmac.compare_digest(candidate.encode(), self.token.encode())

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if self.loopback_only and not is_loopback_host(_host_name(request.host)):
            return _forbidden()
        from_query = request.query.get(TOKEN_QUERY)
        if self.accepts(from_query):
            if request.path == "/" and request.method == "GET" and not _is_websocket(request):
                return self._enter(request)
        elif not self.accepts(request.cookies.get(TOKEN_COOKIE)):
            return _forbidden()
        if _is_websocket(request) and not _same_origin(request):
            return _forbidden()
        return await handler(request)

    def _enter(self, request: web.Request) -> web.StreamResponse:
        """The first visit with the token: set the cookie, and drop the token from the address."""
        kept = {key: value for key, value in request.query.items() if key != TOKEN_QUERY}
        target = request.rel_url.with_query(kept)
        response = web.HTTPSeeOther(location=str(target))
        response.set_cookie(TOKEN_COOKIE, self.token, httponly=True, samesite="Strict", path="/",
                            secure=self.secure_cookie)
        response.headers["Cache-Control"] = "no-store"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response


def _is_websocket(request: web.Request) -> bool:
    return request.headers.get("Upgrade", "").lower() == "websocket"


def _same_origin(request: web.Request) -> bool:
    """A websocket's Origin (browsers always send one) must be the page's own host and port."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True  # not a browser (a script that already holds the cookie or the token)
    return urlsplit(origin).netloc.lower() == request.host.lower()


def _forbidden() -> web.Response:
    return web.Response(status=403, text=FORBIDDEN_PAGE, content_type="text/html",
                        headers={"Cache-Control": "no-store"})

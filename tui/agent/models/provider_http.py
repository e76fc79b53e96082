"""The HTTP clients model providers are reached through: timeouts, retries, and what is said meanwhile.

Every provider request goes through :class:`ObservedTransport`: connect/read timeouts from the
``[provider]`` settings, retries with exponential backoff and jitter on 408/409/429/5xx, refused or
reset connections and timeouts before the answer starts (tenacity, with pydantic-ai's
``wait_retry_after`` so a provider's Retry-After is honoured up to a cap), and a
:class:`~tui.agent.models.provider_events.ProviderEvent` for each change a user should see: waiting (since
when), retrying (why, which retry, how long), answering. An answer that breaks off after it started
cannot be retried here (part of it was already shown); it ends the turn with
:class:`ProviderStreamBroken`. When every attempt failed, :class:`ProviderUnreachable` says so in one
line. The provider SDKs' own retries are turned off (see :mod:`tui.agent.models.choice`) so these are the only ones.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from urllib.request import getproxies

import httpx2
from pydantic_ai.models import get_user_agent
from pydantic_ai.retries import wait_retry_after
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from tui.agent.models.provider_events import ProviderAnswering, ProviderEvent, ProviderRetrying, ProviderWaiting
from tui.base.config import ProviderSettings
from tui.text.terminal_text import visible
from tui.text.wording import plural

logger = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
"""Statuses worth another attempt: timeouts, conflicts, rate limits, server errors."""
STALL_NOTICE_SECONDS = 2.0
"""Silence in the middle of an answer before "waiting" is shown again."""
BODY_EXCERPT_CHARS = 200
_RETRYABLE_ERRORS = (httpx2.TimeoutException, httpx2.NetworkError, httpx2.RemoteProtocolError)


class ProviderFailure(Exception):
    """A provider could not be used for this request; ``str()`` is the one line to show."""


class ProviderUnreachable(ProviderFailure):
    """Every attempt failed before an answer started."""


class ProviderStreamBroken(ProviderFailure):
    """The answer started, then stopped (silence past the read timeout, a reset connection)."""


class ProviderMonitor:
    """Where the transports of one session send their provider events (the session forwards them)."""

    def __init__(self) -> None:
        self._listeners: list[Callable[[ProviderEvent], None]] = []

    def listen(self, listener: Callable[[ProviderEvent], None]) -> Callable[[], None]:
        """Receive every event from now on; returns the function that stops it."""
        self._listeners.append(listener)

        def stop() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return stop

    def emit(self, event: ProviderEvent) -> None:
        for listener in list(self._listeners):
            listener(event)


def provider_failure(error: BaseException) -> ProviderFailure | None:
    """The :class:`ProviderFailure` behind ``error`` (the SDK and pydantic-ai wrap it), if there is one."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, ProviderFailure):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


class _RetryableStatus(httpx2.HTTPStatusError):
    """A response whose status is worth another attempt (its headers feed ``wait_retry_after``)."""


class ObservedTransport(httpx2.AsyncBaseTransport):
    """Sends a request with the retry policy, and reports waits and retries to the monitor."""

    def __init__(self, *, provider: str, policy: ProviderSettings, monitor: ProviderMonitor,
                 wrapped: httpx2.AsyncBaseTransport) -> None:
        self.provider = provider
        self.policy = policy
        self.monitor = monitor
        self.wrapped = wrapped
        self.loop: asyncio.AbstractEventLoop | None = None
        """The event loop the last request ran in: the pool's connections belong to it."""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.loop = asyncio.get_running_loop()
        attempts = self.policy.retries + 1
        retrying = AsyncRetrying(
            stop=stop_after_attempt(attempts),
            wait=wait_retry_after(self._backoff(), max_wait=self.policy.retry_after_max),
            retry=retry_if_exception(lambda error: isinstance(error, (_RetryableStatus, *_RETRYABLE_ERRORS))),
            before_sleep=self._before_sleep,
            reraise=True,
        )
        try:
            try:
                async for attempt in retrying:
                    with attempt:
                        # "waiting" stays on until the body's first bytes arrive (see _ObservedStream)
                        return await self._attempt(request, attempt.retry_state.attempt_number, attempts)
            except _RetryableStatus as error:
                raise ProviderUnreachable(self._gave_up(error, attempts)) from error
            except _RETRYABLE_ERRORS as error:
                raise ProviderUnreachable(self._gave_up(error, attempts)) from error
        except BaseException:  # given up, or cancelled (Esc): nothing is awaited from the provider any more
            self.monitor.emit(ProviderAnswering(provider=self.provider))
            raise
        raise AssertionError("tenacity made no attempt")  # pragma: no cover - stop_after_attempt(>=1)

    async def aclose(self) -> None:
        """Close the wrapped transport's connection pool (the client calls this when it closes)."""
        await self.wrapped.aclose()

    def _backoff(self) -> wait_exponential_jitter:
        initial = self.policy.backoff_initial
        return wait_exponential_jitter(initial=initial, max=self.policy.backoff_max, jitter=min(1.0, initial))

    async def _attempt(self, request: httpx2.Request, attempt: int, attempts: int) -> httpx2.Response:
        started = time.time()
        self.monitor.emit(ProviderWaiting(provider=self.provider, since=started, attempt=attempt, attempts=attempts))
        response = await self.wrapped.handle_async_request(request)
        if response.status_code in RETRY_STATUSES:
            try:
                body = await response.aread()
            except httpx2.HTTPError as error:  # the body of an error page is only a detail
                logger.info("could not read the body of HTTP %s: %s", response.status_code, error)
                body = b""
            finally:
                await response.aclose()
            excerpt = " ".join(body.decode("utf-8", "replace").split())[:BODY_EXCERPT_CHARS]
            raise _RetryableStatus(excerpt, request=request, response=response)
        response.stream = _ObservedStream(response.stream, self)  # type: ignore[arg-type]
        return response

    def _before_sleep(self, state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        delay = state.next_action.sleep if state.next_action else 0.0
        asked = isinstance(error, _RetryableStatus) and any(
            header in error.response.headers for header in ("retry-after", "retry-after-ms"))
        event = ProviderRetrying(provider=self.provider, reason=self._reason(error), retry=state.attempt_number,
                                 retries=self.policy.retries, delay=delay, retry_after=asked)
        logger.info("%s", event.describe(event.timestamp))
        self.monitor.emit(event)

    def _reason(self, error: BaseException | None) -> str:
        """Why an attempt failed, in a few words."""
        if isinstance(error, _RetryableStatus):
            return f"HTTP {error.response.status_code}"
        if isinstance(error, httpx2.ConnectTimeout | httpx2.PoolTimeout):
            return f"no connection within {self.policy.connect_timeout:g} s (connect timeout)"
        if isinstance(error, httpx2.ReadTimeout):
            return f"no answer within {self.policy.read_timeout:g} s (read timeout)"
        if isinstance(error, httpx2.TimeoutException):
            return "timed out sending the request"
        if isinstance(error, httpx2.ConnectError):
            return f"cannot connect ({_detail(error)})"
        if isinstance(error, httpx2.RemoteProtocolError):
            return "the connection closed before an answer"
        if isinstance(error, httpx2.NetworkError):
            return f"connection reset ({_detail(error)})"
        return f"{type(error).__name__}: {_detail(error)}" if error else "unknown error"

    def _gave_up(self, error: BaseException, attempts: int) -> str:
        tries = plural(attempts, "attempt")
        if isinstance(error, httpx2.ReadTimeout):
            return (f"{self.provider} did not answer within {self.policy.read_timeout:g} s (read timeout) "
                    f"after {tries}")
        if isinstance(error, _RetryableStatus):
            said = f": {visible(str(error))}" if str(error) else ""
            return f"{self.provider} answered HTTP {error.response.status_code} after {tries}{said}"
        return f"{self.provider}: {self._reason(error)} after {tries}"


class _ObservedStream(httpx2.AsyncByteStream):
    """A response body that reports silences and turns a broken-off answer into :class:`ProviderStreamBroken`."""

    def __init__(self, inner: httpx2.AsyncByteStream, transport: ObservedTransport) -> None:
        self._inner = inner
        self._transport = transport
        self._last_activity = time.time()
        self._stalled = True  # until the first bytes arrive, the request's own "waiting" is showing
        self._received = False
        self._timer: asyncio.TimerHandle | None = None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        transport = self._transport
        self._schedule(STALL_NOTICE_SECONDS)
        try:
            async for chunk in self._inner:
                self._last_activity = time.time()
                if self._stalled:
                    self._stalled = False
                    transport.monitor.emit(ProviderAnswering(provider=transport.provider))
                self._received = True
                yield chunk
        except httpx2.TimeoutException as error:
            where = "stopped mid-answer" if self._received else "sent no answer"
            raise ProviderStreamBroken(f"{transport.provider} {where}: nothing for "
                                       f"{transport.policy.read_timeout:g} s (read timeout)") from error
        except (httpx2.NetworkError, httpx2.RemoteProtocolError) as error:
            where = "mid-answer" if self._received else "before answering"
            raise ProviderStreamBroken(f"{transport.provider} broke off the connection {where} "
                                       f"({_detail(error)})") from error
        finally:
            if self._timer is not None:
                self._timer.cancel()
            transport.monitor.emit(ProviderAnswering(provider=transport.provider))

    def _schedule(self, delay: float) -> None:
        self._timer = asyncio.get_running_loop().call_later(delay, self._check_silence)

    def _check_silence(self) -> None:
        """Cheap per chunk: the timer is not moved on each chunk, it looks back when it fires."""
        silent_for = time.time() - self._last_activity
        if silent_for < 0 or silent_for > self._transport.policy.read_timeout + STALL_NOTICE_SECONDS:
            return  # the read timeout has ended this body (or it was dropped unread): stop watching
        if silent_for < STALL_NOTICE_SECONDS:
            self._schedule(STALL_NOTICE_SECONDS - silent_for)
            return
        if not self._stalled:
            self._stalled = True
            self._transport.monitor.emit(ProviderWaiting(provider=self._transport.provider,
                                                         since=self._last_activity, mid_answer=self._received))
        self._schedule(STALL_NOTICE_SECONDS)

    async def aclose(self) -> None:
        # The reader may close the body before it ends (the SDK has its [DONE]) while this generator is still
        # suspended: the silence watch stops here too, or it would report a "mid-answer" wait from now on.
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._last_activity = float("inf")
        await self._inner.aclose()


def _detail(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return visible(text[:BODY_EXCERPT_CHARS]) if text else type(error).__name__


class ProviderConnection:
    """The HTTP clients one session's models use: one policy, one monitor, one client per provider."""

    def __init__(self, policy: ProviderSettings, monitor: ProviderMonitor | None = None) -> None:
        self.policy = policy
        self.monitor = monitor or ProviderMonitor()
        self._clients: dict[str, httpx2.AsyncClient] = {}
        self._transports: dict[str, list[ObservedTransport]] = {}

    def client(self, provider: str) -> httpx2.AsyncClient:
        """The client for ``provider`` (the name shown while waiting: ``openai``, a host)."""
        if provider not in self._clients:
            policy = self.policy
            timeout = httpx2.Timeout(connect=policy.connect_timeout, read=policy.read_timeout,
                                     write=policy.read_timeout, pool=policy.connect_timeout)
            self._clients[provider] = httpx2.AsyncClient(
                timeout=timeout,
                transport=self._observed(provider, httpx2.AsyncHTTPTransport()),
                mounts=self._proxy_mounts(provider),
                headers={"User-Agent": get_user_agent()},
            )
        return self._clients[provider]

    def _proxy_mounts(self, provider: str) -> dict[str, httpx2.AsyncBaseTransport | None]:
        """HTTP(S)_PROXY / ALL_PROXY / NO_PROXY, as a client would read them had it no transport of ours."""
        mounts: dict[str, httpx2.AsyncBaseTransport | None] = {}
        proxies = getproxies()
        for scheme in ("all", "http", "https"):
            url = proxies.get(scheme)
            if url:
                url = url if "://" in url else f"http://{url}"
                mounts[f"{scheme}://"] = self._observed(
                    provider, httpx2.AsyncHTTPTransport(proxy=url))
        for host in (proxies.get("no") or "").split(","):
            host = host.strip()
            if host == "*":
                return {}
            if host:
                mounts[f"all://*{host}" if host.startswith(".") else f"all://{host}"] = None
        return mounts

    def _observed(self, provider: str, wrapped: httpx2.AsyncBaseTransport) -> ObservedTransport:
        transport = ObservedTransport(provider=provider, policy=self.policy, monitor=self.monitor, wrapped=wrapped)
        self._transports.setdefault(provider, []).append(transport)
        return transport

    async def aclose(self) -> None:
        """Close every client (their connections); the models built on them cannot be used after.

        A connection belongs to the event loop its request ran in. Closed from another loop (the app's has ended
        when its session is closed), it is closed in its own loop if that one still runs; if it has ended, its
        sockets went with it and nothing can be awaited on them: the client is let go (closing it would raise
        "Event loop is closed" from the dead loop)."""
        clients, self._clients = self._clients, {}
        transports, self._transports = self._transports, {}
        here = asyncio.get_running_loop()
        for provider, client in clients.items():
            loops = {transport.loop for transport in transports.get(provider, ()) if transport.loop is not None}
            elsewhere = [loop for loop in loops if loop is not here]
            if not elsewhere:
                await client.aclose()
            elif elsewhere[0].is_running() and not elsewhere[0].is_closed():
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(client.aclose(), elsewhere[0]))
            else:
                logger.debug("the %s connections ended with their event loop; nothing left to close", provider)

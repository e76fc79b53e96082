"""The "waiting for the provider" notice never outlives the answer it was about."""

from __future__ import annotations

import asyncio

import httpx2

from tui.agent.models.provider_events import ProviderEvent, ProviderWaiting
from tui.agent.models.provider_http import STALL_NOTICE_SECONDS, ObservedTransport, ProviderMonitor
from tui.base.config import ProviderSettings


class _Body(httpx2.AsyncByteStream):
    """A body that sends one chunk, then would go on much later."""

    async def __aiter__(self):  # type: ignore[no-untyped-def]
        yield b"data: first\n\n"
        await asyncio.sleep(60)
        yield b"data: never read\n\n"


async def test_a_body_closed_before_its_end_stops_the_silence_watch() -> None:
    """The SDK may stop reading (it has its [DONE]) and close the response while the body could go on: the
    silence watch must stop with the close, not report a mid-answer wait from then on."""
    monitor = ProviderMonitor()
    events: list[ProviderEvent] = []
    monitor.listen(events.append)
    transport = ObservedTransport(provider="loopback", policy=ProviderSettings(read_timeout=30.0), monitor=monitor,
                                  wrapped=httpx2.MockTransport(lambda request: httpx2.Response(200, stream=_Body())))
    async with httpx2.AsyncClient(transport=transport) as client, client.stream("POST", "http://loopback/v1/chat/completions") as response:
        async for chunk in response.aiter_raw():
            assert chunk.startswith(b"data: first")
            break
    at_close = len(events)
    await asyncio.sleep(STALL_NOTICE_SECONDS * 2 + 0.3)
    assert [event for event in events[at_close:] if isinstance(event, ProviderWaiting)] == []
    assert not isinstance(events[-1], ProviderWaiting)  # the last word is "answering" (nothing awaited)

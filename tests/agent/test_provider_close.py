"""Closing a session's provider clients after the event loop their requests ran in has ended (the app's loop ends
before its session is closed): no "Event loop is closed" traceback, whatever loop closes them.

Against the loopback OpenAI server in keep-alive mode, as real providers answer: the client's pool then holds an
open connection, bound to the loop of the request that opened it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from tests.support.openai_server import ChatServerState, openai_chat_server
from tui.agent.models.provider_http import ProviderConnection
from tui.base.config import ProviderSettings


@pytest.fixture
def server() -> Iterator[tuple[str, ChatServerState]]:
    with openai_chat_server(ChatServerState(reply="kept alive", keep_alive=True)) as served:
        yield served


async def ask(connection: ProviderConnection, base_url: str) -> None:
    """One request; its connection stays in the client's pool (the server keeps it open)."""
    client = connection.client("openai")
    response = await client.post(f"{base_url}/chat/completions", json={"model": "loopback", "messages": []})
    assert response.status_code == 200 and response.json()["choices"][0]["message"]["content"] == "kept alive"


def test_the_hazard_is_real_closing_a_client_in_a_new_loop_raises(server: tuple[str, ChatServerState]) -> None:
    """What the connection must avoid: httpx closes the pooled socket through the loop that opened it."""
    base_url, _ = server
    connection = ProviderConnection(ProviderSettings())
    asyncio.run(ask(connection, base_url))
    client = connection.client("openai")
    with pytest.raises(RuntimeError, match="Event loop is closed"):
        asyncio.run(client.aclose())


def test_closing_after_the_requests_loop_ended_is_silent(server: tuple[str, ChatServerState]) -> None:
    base_url, state = server
    connection = ProviderConnection(ProviderSettings())
    asyncio.run(ask(connection, base_url))
    asyncio.run(connection.aclose())  # the quit of the app: its loop is gone, the session closes in a new one
    assert len(state.requests) == 1
    asyncio.run(connection.aclose())  # closing twice is harmless


def test_closing_in_the_requests_own_loop_closes_the_client(server: tuple[str, ChatServerState]) -> None:
    base_url, _ = server
    connection = ProviderConnection(ProviderSettings())

    async def use_then_close() -> bool:
        await ask(connection, base_url)
        client = connection.client("openai")
        await connection.aclose()
        return client.is_closed

    assert asyncio.run(use_then_close())


def test_closing_from_another_loop_while_the_requests_loop_runs_closes_it_there(
        server: tuple[str, ChatServerState]) -> None:
    base_url, _ = server
    connection = ProviderConnection(ProviderSettings())
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(ask(connection, base_url), loop).result()
        client = connection.client("openai")
        asyncio.run(connection.aclose())
        assert client.is_closed
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()

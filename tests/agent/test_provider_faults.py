"""A provider that hangs or fails: bounded by the ``[provider]`` timeouts, retried with backoff (Retry-After
honoured), reported while it happens, and ended in one clear line — against the loopback OpenAI server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from pydantic_ai import models
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, UserPromptPart

from tests.support.openai_server import ChatServerState, Fault, fail_with, openai_chat_server
from tui.agent.models.choice import choose_model
from tui.agent.models.provider_events import ProviderAnswering, ProviderEvent, ProviderRetrying, ProviderWaiting
from tui.agent.session.factory import RuntimeFactory, SessionRequest, SessionRuntime
from tui.agent.turn_events import TextDelta, TurnEvent, TurnFailed, TurnFinished
from tui.base.config import ProviderSettings, Settings
from tui.base.paths import DataDir
from tui.chain.events import ChainEvent

GUARD = 20.0
"""No test here may take longer than this, whatever the code under test does."""

FAST = ProviderSettings(connect_timeout=2.0, read_timeout=0.6, retries=2, backoff_initial=0.05,
                        backoff_max=0.2, retry_after_max=5.0)


@pytest.fixture
def server() -> Iterator[tuple[str, ChatServerState]]:
    with openai_chat_server(ChatServerState(reply="All is well after all.", hang_cap=GUARD)) as served:
        yield served


@asynccontextmanager
async def session(tmp_path: Path, base_url: str, policy: ProviderSettings = FAST) -> AsyncIterator[SessionRuntime]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    settings = Settings(base_url=base_url, provider=policy)
    factory = RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                             choice=choose_model("openai-chat:loopback", None))
    runtime = await factory.open_request(SessionRequest())
    try:
        with models.override_allow_model_requests(True):
            yield runtime
    finally:
        await runtime.aclose()


async def turn(runtime: SessionRuntime, prompt: str) -> tuple[list[TurnEvent], list[ProviderEvent]]:
    """The turn's events and the provider events delivered meanwhile, bounded by :data:`GUARD`."""
    seen: list[ProviderEvent] = []

    def listen(event: ChainEvent) -> None:
        if isinstance(event, ProviderEvent):
            seen.append(event)

    unsubscribe = runtime.subscribe(listen)

    async def collect() -> list[TurnEvent]:
        return [event async for event in runtime.run_turn(prompt)]

    try:
        return await asyncio.wait_for(collect(), GUARD), seen
    finally:
        unsubscribe()


def prompt_copies(runtime: SessionRuntime, data: Path, prompt: str) -> int:
    path = data / "sessions" / runtime.info.session_id / "messages.json"
    messages = ModelMessagesTypeAdapter.validate_json(path.read_bytes())
    return sum(1 for m in messages if isinstance(m, ModelRequest) for p in m.parts
               if isinstance(p, UserPromptPart) and p.content == prompt)


async def test_a_500_is_retried_reported_and_the_prompt_recorded_once(
        tmp_path: Path, server: tuple[str, ChatServerState]) -> None:
    base_url, state = server
    fail_with(state, Fault(status=500))
    async with session(tmp_path, base_url) as runtime:
        events, provider = await turn(runtime, "are you there?")
        assert isinstance(events[-1], TurnFinished), events
        assert "All is well after all." in "".join(e.text for e in events if isinstance(e, TextDelta))
        [retry] = [e for e in provider if isinstance(e, ProviderRetrying)]
        assert (retry.reason, retry.retry, retry.retries) == ("HTTP 500", 1, 2)
        assert "HTTP 500 — retry 1/2 in" in retry.describe(retry.timestamp)
        assert isinstance(provider[0], ProviderWaiting) and isinstance(provider[-1], ProviderAnswering)
        assert len(state.request_times) == 2
        assert prompt_copies(runtime, tmp_path / "data", "are you there?") == 1


async def test_retry_after_is_honoured(tmp_path: Path, server: tuple[str, ChatServerState]) -> None:
    base_url, state = server
    fail_with(state, Fault(status=429, retry_after="2"))
    async with session(tmp_path, base_url) as runtime:
        events, provider = await turn(runtime, "again")
    assert isinstance(events[-1], TurnFinished), events
    [retry] = [e for e in provider if isinstance(e, ProviderRetrying)]
    assert retry.reason == "HTTP 429" and retry.retry_after and retry.delay == 2.0
    first, second = state.request_times
    assert second - first >= 1.9, "the second attempt came before the Retry-After the server asked for"


async def test_a_hanging_provider_times_out_after_the_retries_in_one_line(
        tmp_path: Path, server: tuple[str, ChatServerState]) -> None:
    base_url, state = server
    fail_with(state, Fault(hang=True), Fault(hang=True), Fault(hang=True))
    async with session(tmp_path, base_url) as runtime:
        events, provider = await turn(runtime, "hello?")
        [failed] = [e for e in events if isinstance(e, TurnFailed)]
        host = base_url.split("/")[2]
        assert failed.message == f"{host} did not answer within 0.6 s (read timeout) after 3 attempts"
        retries = [e for e in provider if isinstance(e, ProviderRetrying)]
        assert [r.retry for r in retries] == [1, 2]
        assert all("read timeout" in r.reason for r in retries)
        assert len(state.request_times) == 3
        # the session goes on: the next prompt gets its answer, the failed one is recorded once
        events, _ = await turn(runtime, "and now?")
        assert isinstance(events[-1], TurnFinished)
        assert prompt_copies(runtime, tmp_path / "data", "hello?") == 1


async def test_a_reset_mid_answer_ends_the_turn_with_a_clear_error(
        tmp_path: Path, server: tuple[str, ChatServerState]) -> None:
    base_url, state = server
    fail_with(state, Fault(chunks_before=2, reset=True))
    async with session(tmp_path, base_url) as runtime:
        events, _ = await turn(runtime, "tell me")
        shown = "".join(e.text for e in events if isinstance(e, TextDelta))
        # a reset (RST) may discard the chunks still unread in the client's socket: what did arrive is the start
        assert shown == "" or shown.startswith("All is"), shown
        [failed] = [e for e in events if isinstance(e, TurnFailed)]
        assert "broke off the connection mid-answer" in failed.message, failed.message
        assert "\n" not in failed.message
        assert len(state.request_times) == 1, "an answer already under way is not sent again"
        events, _ = await turn(runtime, "go on")
        assert isinstance(events[-1], TurnFinished)


async def test_a_hang_mid_answer_is_bounded_by_the_read_timeout(
        tmp_path: Path, server: tuple[str, ChatServerState]) -> None:
    base_url, state = server
    fail_with(state, Fault(chunks_before=1, hang=True))
    async with session(tmp_path, base_url) as runtime:
        events, _ = await turn(runtime, "tell me more")
        [failed] = [e for e in events if isinstance(e, TurnFailed)]
        assert failed.message.endswith("stopped mid-answer: nothing for 0.6 s (read timeout)"), failed.message


async def test_a_refused_connection_is_retried_then_explained(tmp_path: Path) -> None:
    with openai_chat_server() as (base_url, _):
        pass  # the port is closed now: connections are refused
    async with session(tmp_path, base_url) as runtime:
        events, provider = await turn(runtime, "anyone?")
    [failed] = [e for e in events if isinstance(e, TurnFailed)]
    assert "cannot connect" in failed.message and failed.message.endswith("after 3 attempts"), failed.message
    assert len([e for e in provider if isinstance(e, ProviderRetrying)]) == 2


async def test_the_summarizer_is_reached_with_the_same_timeouts_and_retries(
        tmp_path: Path, server: tuple[str, ChatServerState]) -> None:
    """A separate summarization model goes through the session's clients too (and its waits are reported)."""
    base_url, state = server
    work = tmp_path / "work"
    work.mkdir()
    settings = Settings(base_url=base_url, provider=FAST, summarization_model="openai-chat:summarizer")
    factory = RuntimeFactory(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                             choice=choose_model("openai-chat:loopback", None))
    runtime = await factory.open_request(SessionRequest())
    seen: list[ChainEvent] = []
    runtime.subscribe(seen.append)
    try:
        summarizer = runtime.manager.summarizer.model
        assert summarizer is not None and summarizer is not runtime.agent.model
        fail_with(state, Fault(status=503))
        with models.override_allow_model_requests(True):
            result = await asyncio.wait_for(summarizer.request(
                [ModelRequest(parts=[UserPromptPart("summarize this")])], None,
                models.ModelRequestParameters()), GUARD)
        assert result.parts, "the answer came after the retry"
        assert [r["model"] for r in state.requests] == ["summarizer", "summarizer"]
        assert [(e.reason, e.retry) for e in seen if isinstance(e, ProviderRetrying)] == [("HTTP 503", 1)]
    finally:
        await runtime.aclose()


async def test_a_request_the_provider_refuses_is_not_retried(
        tmp_path: Path, server: tuple[str, ChatServerState]) -> None:
    base_url, state = server
    fail_with(state, Fault(status=401))
    async with session(tmp_path, base_url) as runtime:
        events, provider = await turn(runtime, "let me in")
    [failed] = [e for e in events if isinstance(e, TurnFailed)]
    assert "401" in failed.message
    assert len(state.request_times) == 1 and not [e for e in provider if isinstance(e, ProviderRetrying)]

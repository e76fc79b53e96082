"""The app against a loopback provider that hangs or asks to retry: a line above the gauge says what is happening
("waiting for … N s", "HTTP 429 — retry 1/2 in 2 s"), Esc cancels at any point, the next prompt works."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from pydantic_ai import models
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, UserPromptPart
from textual.widgets._footer import FooterKey

from tests.app.app_support import OPENED, PATIENCE, wait_idle, wait_until
from tests.support.openai_server import ChatServerState, Fault, fail_with, openai_chat_server
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.app.app import DeepTuiApp
from tui.app.screens.context_report import ContextScreen
from tui.app.widgets.answer_block import AssistantBlock
from tui.app.widgets.chat_blocks import NoticeBlock
from tui.app.widgets.provider_status import ProviderStatus
from tui.base.config import ProviderSettings, Settings
from tui.base.paths import DataDir

GUARD = PATIENCE
"""A hang guard (app_support.PATIENCE), not a timing: every wait below ends when what it waits for happens."""
PATIENT = ProviderSettings(connect_timeout=2.0, read_timeout=20.0, retries=2, backoff_initial=0.05,
                           backoff_max=0.2, retry_after_max=30.0)
"""Timeouts long enough that only Esc can end a hang within the test."""


@pytest.fixture
def server() -> Iterator[tuple[str, ChatServerState]]:
    with openai_chat_server(ChatServerState(reply="Here after all.", hang_cap=GUARD)) as served:
        yield served


@asynccontextmanager
async def provider_app(tmp_path: Path, base_url: str) -> AsyncIterator[tuple[DeepTuiApp, object]]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    factory = RuntimeFactory(settings=Settings(base_url=base_url, provider=PATIENT),
                             data_dir=DataDir(tmp_path / "data"), workdir=work,
                             choice=choose_model("openai-chat:loopback", None))
    runtime = await factory.open_request(SessionRequest())
    app = DeepTuiApp(factory=factory, runtime=runtime, store=factory.store, settings=factory.settings)
    OPENED.append(app)
    with models.override_allow_model_requests(True):
        async with app.run_test(size=(120, 30)) as pilot:
            yield app, pilot


def status(app: DeepTuiApp) -> str:
    return app.query_one(ProviderStatus).text


def answered(app: DeepTuiApp, text: str) -> bool:
    return any(text in block.received for block in app.query(AssistantBlock))


def prompt_copies(app: DeepTuiApp, tmp_path: Path, prompt: str) -> int:
    path = tmp_path / "data" / "sessions" / app.runtime.info.session_id / "messages.json"
    messages = ModelMessagesTypeAdapter.validate_json(path.read_bytes())
    return sum(1 for m in messages if isinstance(m, ModelRequest) for p in m.parts
               if isinstance(p, UserPromptPart) and p.content == prompt)


async def test_a_hung_request_shows_the_wait_and_esc_cancels_it(
        tmp_path: Path, server: tuple[str, ChatServerState]) -> None:
    base_url, state = server
    host = base_url.split("/")[2]
    fail_with(state, Fault(hang=True))

    async def scenario() -> None:
        async with provider_app(tmp_path, base_url) as (app, pilot):
            await pilot.press(*"hello", "enter")
            await wait_until(pilot, lambda: f"waiting for {host}… 1 s" in status(app), "the wait on the gauge line")
            await wait_until(pilot, lambda: f"waiting for {host}… 2 s" in status(app), "the seconds counting")
            assert app.runtime.busy
            await pilot.press("escape")
            await wait_idle(app, pilot)
            assert status(app) == "" and not app.query_one(ProviderStatus).display
            assert any("cancelled" in str(n.render()) for n in app.query(NoticeBlock))
            await pilot.press(*"again", "enter")
            await wait_until(pilot, lambda: answered(app, "Here after all."), "the next prompt's answer")
            await wait_idle(app, pilot)
            assert prompt_copies(app, tmp_path, "hello") == 1 and prompt_copies(app, tmp_path, "again") == 1

    await asyncio.wait_for(scenario(), GUARD)


async def test_a_retry_after_is_shown_counting_down_then_the_answer_arrives(
        tmp_path: Path, server: tuple[str, ChatServerState]) -> None:
    base_url, state = server
    host = base_url.split("/")[2]
    fail_with(state, Fault(status=429, retry_after="2"))

    async def scenario() -> None:
        async with provider_app(tmp_path, base_url) as (app, pilot):
            await pilot.press(*"hi", "enter")
            # the seconds left in tenths, counting down from the 2 s asked for (the status ticks twice a second)
            await wait_until(pilot, lambda: re.fullmatch(r"HTTP 429 — retry 1/2 in [12]\.\d s \(Retry-After\)",
                                                         status(app)), "the retry")
            assert app.query_one(ProviderStatus).tooltip == f"{host}: HTTP 429"
            assert app.query_one(ProviderStatus).has_class("-retrying")
            seen: set[str] = set()

            def counted_down_and_answered() -> bool:  # every status shown until the answer (a loaded machine may
                found = re.search(r"retry 1/2 in (\d\.\d) s", status(app))  # skip a tick, never the countdown)
                if found:
                    seen.add(found.group(1))
                return answered(app, "Here after all.")

            await wait_until(pilot, counted_down_and_answered, "the answer after the retry")
            assert len(seen) >= 2 and min(seen) < max(seen), f"the status counted down: {sorted(seen)}"
            await wait_idle(app, pilot)
            assert status(app) == ""
            assert len(state.request_times) == 2 and state.request_times[1] - state.request_times[0] >= 1.9

    await asyncio.wait_for(scenario(), GUARD)


async def test_a_click_on_esc_cancels_a_backoff_and_the_session_goes_on(
        tmp_path: Path, server: tuple[str, ChatServerState]) -> None:
    base_url, state = server
    fail_with(state, Fault(status=503, retry_after="25"))

    async def scenario() -> None:
        async with provider_app(tmp_path, base_url) as (app, pilot):
            await pilot.press(*"busy?", "enter")
            await wait_until(pilot, lambda: "HTTP 503 — retry 1/2 in 25 s" in status(app), "the long backoff")
            escape = next(key for key in app.query(FooterKey) if key.key == "escape")
            await pilot.click(escape)
            await wait_idle(app, pilot)
            assert status(app) == "" and len(state.request_times) == 1, "no retry after the cancel"
            await pilot.press(*"now?", "enter")
            await wait_until(pilot, lambda: answered(app, "Here after all."), "the next prompt's answer")
            assert prompt_copies(app, tmp_path, "busy?") == 1

    await asyncio.wait_for(scenario(), GUARD)


async def test_a_stall_mid_answer_shows_the_wait_again_and_esc_keeps_what_came(
        tmp_path: Path, server: tuple[str, ChatServerState]) -> None:
    base_url, state = server
    host = base_url.split("/")[2]
    fail_with(state, Fault(chunks_before=2, hang=True))

    async def scenario() -> None:
        async with provider_app(tmp_path, base_url) as (app, pilot):
            await pilot.press(*"story", "enter")
            await wait_until(pilot, lambda: answered(app, "Here after"), "the first words")
            await wait_until(pilot, lambda: f"waiting for {host} (mid-answer)… 2 s" in status(app), "the stall")
            await pilot.press("escape")
            await wait_idle(app, pilot)
            assert status(app) == ""
            await pilot.press(*"more", "enter")
            await wait_until(pilot, lambda: answered(app, "Here after all."), "the next answer, whole")
            assert prompt_copies(app, tmp_path, "story") == 1

    await asyncio.wait_for(scenario(), GUARD)


async def test_no_waiting_line_outlives_the_answer(tmp_path: Path, server: tuple[str, ChatServerState]) -> None:
    """A status line is true or gone: after an answer, and after Esc, nothing says "waiting" later on."""
    from tui.agent.models.provider_http import STALL_NOTICE_SECONDS

    async def scenario() -> None:
        async with provider_app(tmp_path, server[0]) as (app, pilot):
            seen: list[str] = []
            app.query_one(ProviderStatus).watch(app.query_one(ProviderStatus), "display",
                                                lambda shown: seen.append(status(app)) if shown else None)
            await pilot.press(*"hello", "enter")
            await wait_until(pilot, lambda: answered(app, "Here after all."), "the answer")
            await wait_idle(app, pilot)
            await asyncio.sleep(STALL_NOTICE_SECONDS * 2 + 0.5)  # longer than the silence that shows "waiting"
            await pilot.pause()
            assert status(app) == "" and not app.query_one(ProviderStatus).display, seen

    await asyncio.wait_for(scenario(), GUARD)


async def test_context_after_a_cancelled_request_does_not_say_no_request_was_made(
        tmp_path: Path, server: tuple[str, ChatServerState]) -> None:
    """F2 after Esc stopped the first request: it was made and reported no usage ("no model request yet" was
    wrong); after an answered one, its price."""
    base_url, state = server
    fail_with(state, Fault(hang=True))

    async def scenario() -> None:
        async with provider_app(tmp_path, base_url) as (app, pilot):
            await pilot.press(*"hello", "enter")
            await wait_until(pilot, lambda: state.requests, "the request")
            await pilot.press("escape")
            await wait_idle(app, pilot)
            await pilot.press("f2")
            await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen), "/context")
            text = str(app.screen.query_one("#breakdown").render())
            assert "cost  session $0.00, no request answered yet" in text, text
            assert "no model request yet" not in text

    await asyncio.wait_for(scenario(), GUARD)

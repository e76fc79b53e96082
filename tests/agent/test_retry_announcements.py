"""A retry announces the wait it really makes, and every retry is logged (against the loopback OpenAI server)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.agent.test_provider_faults import session, turn
from tests.support.openai_server import ChatServerState, Fault, fail_with, openai_chat_server
from tui.agent.models.provider_events import ProviderRetrying
from tui.agent.turn_events import TurnFinished
from tui.base.config import ProviderSettings

ONE_SECOND_BACKOFF = ProviderSettings(connect_timeout=2.0, read_timeout=2.0, retries=2, backoff_initial=1.0,
                                      backoff_max=2.0, retry_after_max=5.0)
"""Waits of 1-2 s (one second and up to one of jitter): a whole number of seconds would be wrong by up to 1 s."""


async def test_the_wait_announced_is_the_wait_made_and_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with openai_chat_server(ChatServerState(reply="fine now")) as (base_url, state):
        fail_with(state, Fault(status=503))
        caplog.set_level(logging.INFO, logger="tui.agent.models.provider_http")
        async with session(tmp_path, base_url, ONE_SECOND_BACKOFF) as runtime:
            events, provider = await turn(runtime, "hello")
    assert isinstance(events[-1], TurnFinished), events
    [retry] = [event for event in provider if isinstance(event, ProviderRetrying)]
    first, second = state.request_times
    waited = second - first
    announced = retry.describe(retry.timestamp)
    assert announced == f"HTTP 503 — retry 1/2 in {retry.delay:.1f} s", announced
    assert 1.0 <= retry.delay <= 2.0
    assert abs(waited - retry.delay) < 0.3, f"announced {retry.delay:.2f} s, waited {waited:.2f} s"
    logged = [record.getMessage() for record in caplog.records if "retry 1/2" in record.getMessage()]
    assert logged == [announced]


def test_a_long_wait_counts_down_in_whole_seconds() -> None:
    retry = ProviderRetrying(provider="p", reason="HTTP 429", retry=1, retries=3, delay=30.0, retry_after=True,
                             timestamp=100.0)
    assert retry.describe(100.0) == "HTTP 429 — retry 1/3 in 30 s (Retry-After)"
    assert retry.describe(112.4) == "HTTP 429 — retry 1/3 in 18 s (Retry-After)"
    short = ProviderRetrying(provider="p", reason="HTTP 500", retry=2, retries=3, delay=2.1, timestamp=100.0)
    assert short.describe(100.0) == "HTTP 500 — retry 2/3 in 2.1 s"

"""Provider output is bounded and honest (issue 20.5), against loopback servers (never the network):

- an ``openai:`` model at a chat-completions-only server stops after one request, in one line;
- usage figures beyond reason are neither priced nor learned from;
- a Claude answer whose text next to a tool call is whitespace never goes back to the provider;
- the pre-flight's ``count_tokens`` counts what the request carries (a history opening with a summary);
- a failed turn reaches the model only as a short neutral line.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import models
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse, TextPart

import tui.chain.model_count as model_count
from tests.support.anthropic_server import (
    AnthropicServerState,
    anthropic_server,
    text_block,
    tool_use_block,
)
from tests.support.openai_server import ChatServerState, openai_chat_server
from tui.agent.models.choice import choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest, SessionRuntime
from tui.agent.turn_events import TurnEvent, TurnFailed, TurnFinished
from tui.base.config import ProviderSettings, Settings
from tui.base.paths import DataDir
from tui.chain.calibration import CALIBRATION_FILE_NAME, MAX_RATIO
from tui.chain.outgoing import FAILED_TURN_NOTE
from tui.chain.summary_message import make_summary_message
from tui.cli.main import main

GUARD = 20.0
FAST = ProviderSettings(connect_timeout=2.0, read_timeout=2.0, retries=2, backoff_initial=0.05, backoff_max=0.2)
CLAUDE = "anthropic:claude-sonnet-5-5"
CLAUDE_KEY = "sk-ant-loopback-0123456789abcdef"


@asynccontextmanager
async def session(tmp_path: Path, model: str, settings: Settings | None = None) -> AsyncIterator[SessionRuntime]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    factory = RuntimeFactory(settings=settings or Settings(provider=FAST), data_dir=DataDir(tmp_path / "data"),
                             workdir=work, choice=choose_model(model, None))
    runtime = await factory.open_request(SessionRequest())
    try:
        with models.override_allow_model_requests(True):
            yield runtime
    finally:
        await runtime.aclose()


async def turn(runtime: SessionRuntime, prompt: str) -> list[TurnEvent]:
    async def collect() -> list[TurnEvent]:
        return [event async for event in runtime.run_turn(prompt)]

    return await asyncio.wait_for(collect(), GUARD)


def recorded(tmp_path: Path, runtime: SessionRuntime) -> bytes:
    return (tmp_path / "data" / "sessions" / runtime.info.session_id / "messages.json").read_bytes()


# -- an openai: model at a chat-completions-only server ------------------------------------------


@pytest.mark.parametrize("quirk", ["answers /responses as chat completions", "404 on /responses"])
async def test_openai_responses_at_a_chat_only_server_is_one_request_and_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, quirk: str) -> None:
    state = ChatServerState(reply="chat answer", responses_as_chat=quirk.startswith("answers"))
    with openai_chat_server(state) as (base_url, served):
        monkeypatch.setenv("OPENAI_BASE_URL", base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-0123456789")
        async with session(tmp_path, "openai:gpt-loop") as runtime:
            events = await turn(runtime, "hello")
    [failed] = [event for event in events if isinstance(event, TurnFailed)]
    assert served.paths == ["/v1/responses"], "one request, not one per pydantic-ai continuation"
    assert len(served.paths) <= FAST.retries + 1
    assert "\n" not in failed.message
    assert failed.message.startswith(f"{base_url}/responses does not speak the OpenAI Responses API")
    assert "'openai-chat:gpt-loop'" in failed.message and "--base-url" in failed.message
    assert "suspended" not in failed.message and "<html" not in failed.message.lower()


async def test_the_same_server_works_as_openai_chat(tmp_path: Path) -> None:
    """The advice holds: ``openai-chat:`` with ``--base-url`` talks to that server."""
    with openai_chat_server(ChatServerState(reply="chat answer")) as (base_url, served):
        async with session(tmp_path, "openai-chat:gpt-loop", Settings(base_url=base_url, provider=FAST)) as runtime:
            events = await turn(runtime, "hello")
    assert isinstance(events[-1], TurnFinished) and events[-1].output.strip() == "chat answer"
    assert served.paths == ["/v1/chat/completions"]


# -- usage beyond reason ---------------------------------------------------------------------------


def test_a_usage_figure_beyond_reason_is_neither_priced_nor_learned(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    with openai_chat_server(ChatServerState(reply="cheap answer", usage_prompt_tokens=10**12)) as (base_url, _), \
            models.override_allow_model_requests(True):
        status = main(["run", "--data-dir", str(data), "-m", "openai-chat:gpt-4o", "--base-url", base_url, "hi"])
    assert status == 0
    run_err = capsys.readouterr().err
    assert main(["sessions", "--data-dir", str(data)]) == 0
    listing = capsys.readouterr().out
    assert "10,000,000" not in listing and "$2,500,000" not in listing
    assert "price unknown" in listing, listing
    calibration = data / CALIBRATION_FILE_NAME
    if calibration.exists():
        ratios = json.loads(calibration.read_text())
        assert all(entry["ratio"] < MAX_RATIO and entry["latest"] < MAX_RATIO for entry in ratios.values()), ratios
    log = (data / "deep-tui.log").read_text()
    assert "ignored a usage figure from openai: input tokens 1,000,000,000,000 on one request" in log
    assert run_err.count("ignored a usage figure") == 1, run_err  # a warning: `run` says it once on stderr
    assert "this request is not priced" in log
    # what the provider said is kept as it came
    [response] = [m for m in ModelMessagesTypeAdapter.validate_json(
        next((data / "sessions").glob("*/messages.json")).read_bytes()) if isinstance(m, ModelResponse)]
    assert response.usage.input_tokens == 10**12


async def test_a_believable_usage_figure_still_calibrates(tmp_path: Path) -> None:
    with openai_chat_server(ChatServerState(reply="fine", prompt_tokens=900)) as (base_url, _):
        async with session(tmp_path, "openai-chat:gpt-4o", Settings(base_url=base_url, provider=FAST)) as runtime:
            events = await turn(runtime, "hi")
            ratio = runtime.manager.accountant.ratio
    assert isinstance(events[-1], TurnFinished)
    assert ratio != 1.0, "a plausible provider count must still be learned from"


# -- Anthropic: whitespace text blocks, count_tokens, failed turns -------------------------------


@pytest.fixture
def claude(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    def start(state: AnthropicServerState):  # type: ignore[no-untyped-def]
        served = anthropic_server(state)
        url, server_state = served.__enter__()
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", CLAUDE_KEY)
        started.append(served)
        return server_state

    started: list[Any] = []
    yield start
    for served in started:
        served.__exit__(None, None, None)


def _texts(payload: dict[str, Any]) -> list[str]:
    return [block["text"] for message in payload["messages"] for block in message["content"]
            if isinstance(message["content"], list) and block.get("type") == "text"]


async def test_a_whitespace_text_block_beside_a_tool_call_is_kept_on_disk_but_never_sent(
        tmp_path: Path, claude) -> None:  # type: ignore[no-untyped-def]
    state = claude(AnthropicServerState(replies=[
        [text_block("\n\n"), tool_use_block("toolu_1", "ls", {"path": "."})], [text_block("Listed.")]]))
    async with session(tmp_path, CLAUDE) as runtime:
        first = await turn(runtime, "list the files")
        second = await turn(runtime, "and now?")
        stored = recorded(tmp_path, runtime)
    assert isinstance(first[-1], TurnFinished) and first[-1].output == "Listed.", first
    assert isinstance(second[-1], TurnFinished), second
    assert state.refused == []
    assert len(state.messages_requests) == 3
    assert all(text.strip() for payload in state.messages_requests for text in _texts(payload))
    messages = ModelMessagesTypeAdapter.validate_json(stored)
    assert any(isinstance(part, TextPart) and part.content == "\n\n"
               for message in messages if isinstance(message, ModelResponse) for part in message.parts), \
        "messages.json keeps the answer as it was received"


async def test_a_session_recorded_with_a_whitespace_block_heals(tmp_path: Path, claude) -> None:  # type: ignore[no-untyped-def]
    """A session saved before the fix: its history already holds the whitespace block."""
    state = claude(AnthropicServerState())
    async with session(tmp_path, CLAUDE) as runtime:
        runtime.messages = [*ModelMessagesTypeAdapter.validate_python([
            {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "hi"}]},
            {"kind": "response", "provider_name": "anthropic",
             "parts": [{"part_kind": "text", "content": "  "}]}])]
        events = await turn(runtime, "still there?")
    assert isinstance(events[-1], TurnFinished), events
    assert state.refused == []
    assert all(text.strip() for text in _texts(state.messages_requests[-1]))


async def test_the_preflight_counts_what_is_sent_when_the_history_opens_with_a_summary(
        tmp_path: Path, claude, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(model_count, "EXACT_COUNT_FROM", 0.0)  # every request is counted by the model
    state = claude(AnthropicServerState())
    async with session(tmp_path, CLAUDE) as runtime:
        runtime.messages = [
            make_summary_message("The user asked about the parser; we fixed two bugs.", strategy="summary",
                                 kept_from=4, replaced=4),
            ModelResponse(parts=[TextPart("Understood.")], provider_name="anthropic")]
        events = await turn(runtime, "go on")
    assert isinstance(events[-1], TurnFinished), events
    counted, sent = state.count_requests[-1], state.messages_requests[-1]
    assert any("system" in block["text"].lower() for block in sent["system"]), "pydantic-ai adds a system block"
    assert counted["system"] == sent["system"]
    assert counted["messages"] == sent["messages"]


async def test_a_failed_turn_reaches_the_model_as_a_neutral_line(tmp_path: Path, claude) -> None:  # type: ignore[no-untyped-def]
    state = claude(AnthropicServerState(api_key="another-key-entirely"))
    async with session(tmp_path, CLAUDE) as runtime:
        failed = await turn(runtime, "first")
        state.api_key = None
        events = await turn(runtime, "second")
        stored = recorded(tmp_path, runtime).decode()
    assert isinstance(failed[-1], TurnFailed) and "401" in failed[-1].message
    assert isinstance(events[-1], TurnFinished), events
    sent_texts = _texts(state.messages_requests[-1])
    assert FAILED_TURN_NOTE in sent_texts
    sent = json.dumps(state.messages_requests[-1])
    assert "authentication_error" not in sent and "401" not in sent and "x-api-key" not in sent
    assert "(no answer: ModelAuthenticationError: status_code: 401" in stored, "the user still reads why"
    assert stored.count('"first"') == 1, "the failed prompt is recorded once"


def test_no_stray_log_warnings_from_loopback_servers(caplog: pytest.LogCaptureFixture) -> None:
    """The fixtures above log nothing at warning level by themselves (a sanity check of the harness)."""
    with caplog.at_level(logging.WARNING), anthropic_server(), openai_chat_server():
        pass
    assert not caplog.records

"""``/model NAME`` in the runtime: window, prices and summarizer follow the new model; a smaller window compacts
before the next request, never sending one over it; a bad name or a missing key changes nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from pydantic_ai.profiles import ModelProfile

from tui.agent.models.catalogue import catalogue, missing_key
from tui.agent.models.choice import ModelConfigError, choose_model
from tui.agent.session.factory import RuntimeFactory, SessionRequest, SessionRuntime
from tui.agent.turn_events import TurnFailed
from tui.base.config import Settings
from tui.base.paths import DataDir
from tui.chain.events import CompactionFinished, UsageEvent

LONG_ANSWER = "The build log says: " + "step ok; " * 2_500  # ~25,000 characters, ~6,000 tokens


class Recording:
    """A FunctionModel that answers long, and notes what each chat request carried."""

    def __init__(self, name: str, window: int | None = None, answer: str = LONG_ANSWER) -> None:
        self.requests: list[list[ModelMessage]] = []
        self.answer = answer
        profile = ModelProfile(context_window=window) if window else None
        self.model = FunctionModel(stream_function=self._stream, model_name=name, profile=profile)

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if not info.function_tools:  # the summarizer's request
            yield "Summary: the user asked for build logs; every step was ok."
            return
        self.requests.append(list(messages))
        yield self.answer


async def _turn(runtime: SessionRuntime, prompt: str) -> None:
    async for event in runtime.run_turn(prompt):
        assert not isinstance(event, TurnFailed), event


async def _open(tmp_path: Path, model: FunctionModel) -> SessionRuntime:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    factory = RuntimeFactory(settings=Settings(), data_dir=DataDir(tmp_path / "data"), workdir=work,
                             choice=choose_model("offline", None), chat_model=model)
    return await factory.open_request(SessionRequest())


async def test_a_smaller_window_compacts_before_the_next_request_which_never_exceeds_it(tmp_path: Path) -> None:
    big = Recording("big", window=1_000_000)
    runtime = await _open(tmp_path, big.model)
    try:
        for number in range(4):
            await _turn(runtime, f"show me build log {number}")
        assert runtime.manager.window == 1_000_000
        before = runtime.last_usage
        assert before is not None and before.tokens > 20_000

        small = Recording("small", window=16_000, answer="short answer")
        events: list[object] = []
        runtime.subscribe(events.append)
        switch = await runtime.switch_model("test:small", model=small.model)
        assert (switch.window, switch.window_source, switch.over_window) == (16_000, "model", True)
        usage = [event for event in events if isinstance(event, UsageEvent)]
        assert usage and usage[-1].window == 16_000, "the gauge gets the new window at once"
        assert runtime.info.model_name == "test:small"

        await _turn(runtime, "and now?")
        assert small.requests, "the request went to the new model"
        limit = runtime.manager.limit
        sent = runtime.manager.accountant.estimate(small.requests[0], runtime.manager.fixed_tokens)
        assert sent <= limit < 16_000, f"request of {sent} tokens over the limit {limit}"
        assert any(isinstance(event, CompactionFinished) for event in events), "the chain compacted first"
        assert not big.requests[4:], "nothing more went to the old model"
    finally:
        await runtime.aclose()


async def test_session_json_records_the_model_and_a_new_session_uses_it(tmp_path: Path) -> None:
    runtime = await _open(tmp_path, Recording("first", answer="hi").model)
    try:
        await _turn(runtime, "hello")
        await runtime.switch_model("offline")
        meta = json.loads((runtime.handle.messages.path.parent / "session.json").read_text())
        assert meta["model"] == "offline"
        assert runtime.info.offline and runtime.manager.summarizer.model is None, "offline: the extractive summary"
    finally:
        await runtime.aclose()


@pytest.mark.parametrize(("name", "said"), [
    ("anthropic:claude-sonnet-5-5", "ANTHROPIC_API_KEY is not set"),
    ("nonsense:abc", "Unknown provider"),
    ("no-colon", "must look like provider:model"),
    ("", "no model named"),
])
async def test_an_unusable_model_is_one_error_and_the_old_model_stays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      name: str, said: str) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    recording = Recording("keeps", answer="still here")
    runtime = await _open(tmp_path, recording.model)
    try:
        window = runtime.manager.window
        with pytest.raises(ModelConfigError, match=said):
            await runtime.switch_model(name)
        assert runtime.agent.model is recording.model and runtime.manager.window == window
        await _turn(runtime, "hello")
        assert recording.requests, "the old model still answers"
    finally:
        await runtime.aclose()


async def test_a_real_provider_model_resolves_its_window_from_genai_prices(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    runtime = await _open(tmp_path, Recording("first", answer="hi").model)
    try:
        switch = await runtime.switch_model("openai:gpt-4o")
        assert switch.window == 128_000 and switch.window_source in {"model", "genai-prices"}
        assert runtime.cost.input_rate() is not None and runtime.cost.input_rate() > 0, "prices re-resolved"
    finally:
        await runtime.aclose()


def test_the_catalogue_lists_current_recent_offline_and_the_models_of_providers_with_a_key() -> None:
    entries = catalogue("test:current", ["openai:gpt-4o", "test:current"], env={"ANTHROPIC_API_KEY": "x"})
    names = [entry.name for entry in entries]
    assert names[:3] == ["test:current", "openai:gpt-4o", "offline"]
    assert names[3] == "anthropic:claude-sonnet-5-5", "the provider's default first"
    assert any(name.startswith("anthropic:claude") for name in names[4:])
    assert not any(name.startswith(("google:", "openai:gpt-5")) for name in names[2:]), "no key, no models"
    assert len(names) == len(set(names))
    assert missing_key("google:gemini-2.5-flash", env={}) == "GOOGLE_API_KEY"
    assert missing_key("google:gemini-2.5-flash", env={"GEMINI_API_KEY": "x"}) is None
    assert missing_key("openai-chat:llama3", env={}) is None, "a provider deep-tui holds no key for: not judged"


class SmallModel:
    """A small-window model that answers briefly and writes summaries (its non-streamed requests)."""

    def __init__(self, window: int) -> None:
        self.requests: list[list[ModelMessage]] = []
        self.summaries = 0
        self.model = FunctionModel(self._summary, stream_function=self._stream, model_name="small",
                                   profile=ModelProfile(context_window=window))

    def _summary(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.summaries += 1
        return ModelResponse(parts=[TextPart("Summary: the user asked for build logs; every step was ok.")])

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        self.requests.append(list(messages))
        yield "short answer"


async def test_after_a_switch_to_a_smaller_window_the_last_exchange_is_summarized_not_dropped(tmp_path: Path) -> None:
    """Issue 29 §18: the last exchange (~6,000 tokens) cannot be kept verbatim in an 8k window beside the
    instructions: it is summarized with the rest (in pieces that fit), never dropped by the pre-flight."""
    big = Recording("big", window=1_000_000)
    runtime = await _open(tmp_path, big.model)
    try:
        for number in range(4):
            await _turn(runtime, f"show me build log {number}")
        small = SmallModel(8_000)
        events: list[object] = []
        runtime.subscribe(events.append)
        await runtime.switch_model("test:small", model=small.model)
        await _turn(runtime, "and now?")
        finished = [event for event in events if isinstance(event, CompactionFinished)]
        assert [event.strategy for event in finished] == ["summary"], finished
        assert finished[0].messages_replaced == 8, "every earlier message, the last exchange too, is summarized"
        assert small.summaries >= 1 and small.requests
        sent = runtime.manager.accountant.estimate(small.requests[0], runtime.manager.fixed_tokens)
        assert sent <= runtime.manager.limit
    finally:
        await runtime.aclose()

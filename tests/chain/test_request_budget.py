"""What a request may carry: serialized estimates, calibration, the answer reserve, the model's own count."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from pydantic_ai import Agent, models
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from tests.chain.counting_server import counting_server
from tests.chain.support import FILE_WRITING_TOOLS, history, make_harness, seed
from tui.agent.models.choice import build_model
from tui.base.config import ContextSettings, Settings
from tui.chain.budget import WindowBudget
from tui.chain.calibration import MIN_RATIO, TokenCalibration
from tui.chain.estimate import TokenEstimator
from tui.chain.events import UsageEvent
from tui.chain.overflow import describe_overflow


def test_the_estimate_covers_the_request_as_an_openai_server_receives_it(tmp_path: Path) -> None:
    """A history of tool traffic with escapes and non-ASCII: the raw estimate is at or above what the
    server measures (characters / 4 of the messages and tool definitions), and not far above."""
    harness = make_harness(tmp_path, window=200_000)
    messages = history(5, 3000)
    messages.append(ModelRequest(parts=[UserPromptPart('quotes " and tabs \t and ünïcödé — and {"json": [1, 2]}\n' * 20)]))
    with counting_server() as (base_url, state):
        agent = Agent(build_model("openai-chat:counting", base_url=base_url), instructions="Be brief.",
                      capabilities=harness.manager.capabilities())

        @agent.tool_plain
        def read_file(path: str, offset: int = 0, limit: int = 400) -> str:
            """Read a file with line numbers."""
            return path

        with models.override_allow_model_requests(True):
            agent.run_sync("and now?", message_history=seed(harness, messages))
    measured = state.sizes[0]
    estimated = harness.manager.accountant.raw(harness.manager.ledger.recorder.messages,  # type: ignore[attr-defined]
                                               harness.manager.fixed_tokens)
    assert measured <= estimated <= 1.3 * measured, (measured, estimated)
    plain = sum(len(getattr(p, "content", "") or "") for m in messages for p in m.parts) // 4
    assert plain < 0.95 * measured, "plain text alone under-counts what is sent (the bug this replaces)"


def test_calibration_learns_the_providers_ratio_and_keeps_it_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "token_calibration.json"
    calibration = TokenCalibration(path)
    assert calibration.ratio("openai:gpt") == 1.0
    calibration.observe("openai:gpt", estimated=10_000, reported=12_000)
    calibration.observe("openai:gpt", estimated=50, reported=500)  # too small to say anything: ignored
    assert abs(calibration.ratio("openai:gpt") - 1.2) < 1e-9
    reloaded = TokenCalibration(path)
    assert abs(reloaded.ratio("openai:gpt") - 1.2) < 1e-9, "the next run starts calibrated"
    reloaded.observe("anthropic:claude", estimated=10_000, reported=5_000)
    assert reloaded.ratio("anthropic:claude") == MIN_RATIO, "a low ratio is never trusted below the floor"
    path.write_text("{not json")
    assert TokenCalibration(path).ratio("openai:gpt") == 1.0, "a damaged file is ignored, not fatal"


def test_calibration_is_not_rewritten_at_every_request_and_is_saved_at_flush(tmp_path: Path) -> None:
    """A model's first ratio is saved at once; the ones after it wait for the interval or the flush (the close),
    instead of one atomic file write per request."""
    path = tmp_path / "token_calibration.json"
    calibration = TokenCalibration(path)
    calibration.observe("openai:gpt", estimated=10_000, reported=12_000)
    first = path.read_text()
    calibration.observe("openai:gpt", estimated=10_000, reported=20_000)
    calibration.observe("openai:gpt", estimated=10_000, reported=20_000)
    assert path.read_text() == first, "not written at every request"
    calibration.observe("anthropic:claude", estimated=10_000, reported=11_000)
    assert "anthropic:claude" in path.read_text(), "a newly learned model is saved at once"
    calibration.observe("openai:gpt", estimated=10_000, reported=20_000)
    calibration.flush()
    assert TokenCalibration(path).ratio("openai:gpt") == calibration.ratio("openai:gpt") > 1.2


def test_a_provider_count_above_the_estimate_raises_every_later_count(tmp_path: Path) -> None:
    harness = make_harness(tmp_path, window=50_000)

    def chat(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raw = harness.manager.accountant.raw(messages, harness.manager.fixed_tokens)
        return ModelResponse(parts=[TextPart("ok")], usage=RequestUsage(input_tokens=int(raw * 1.4)),
                             provider_name="counting")

    agent = Agent(FunctionModel(chat), capabilities=harness.manager.capabilities())
    agent.run_sync("first", message_history=seed(harness, history(3, 4000)))
    assert abs(harness.manager.accountant.ratio - 1.4) < 0.02
    before = harness.manager.accountant.estimate(harness.recorder.messages, harness.manager.fixed_tokens)
    raw = harness.manager.accountant.raw(harness.recorder.messages, harness.manager.fixed_tokens)
    assert before >= 1.39 * raw


def test_the_answer_reserve_is_the_requests_max_tokens_or_a_tenth_of_the_window(tmp_path: Path) -> None:
    settings = ContextSettings()
    assert WindowBudget.for_window(200_000, settings).reserve == 16_000
    assert WindowBudget.for_window(32_000, settings).reserve == 3_200
    assert WindowBudget.for_window(4_000, settings).reserve == 512
    assert WindowBudget.for_window(8_000, ContextSettings(output_reserve=2_000)).reserve == 2_000
    tiny = WindowBudget.for_window(1_000, settings)
    assert tiny.limit >= 500, "reserve and margin never take more than half the window"

    harness = make_harness(tmp_path, window=20_000)
    agent = Agent(FunctionModel(lambda m, i: ModelResponse(parts=[TextPart("ok")])),
                  capabilities=harness.manager.capabilities(), model_settings={"max_tokens": 4_321})
    agent.run_sync("hello")
    usage = [e for e in harness.events if isinstance(e, UsageEvent)]
    assert usage and all(e.reserve == 4_321 for e in usage)
    assert usage[0].limit == 20_000 - 4_321 - 1_000


def test_requests_stay_below_the_limit_even_when_the_model_counts_more_than_the_estimate(tmp_path: Path) -> None:
    """A model with its own token counter that counts 30 % more than the estimate: near the limit the
    chain asks it, and the fallback cuts until the model's own count of the request fits."""
    harness = make_harness(tmp_path, window=12_000, compaction_threshold=0.99, summarize_threshold=0.99,
                           min_savings_tokens=10**9)
    seen: list[int] = []

    def truth(messages: list[ModelMessage]) -> int:
        return int(1.3 * harness.manager.accountant.raw(messages, harness.manager.fixed_tokens))

    class CountingModel(FunctionModel):
        async def count_tokens(self, messages, model_settings, model_request_parameters):  # type: ignore[no-untyped-def,override]
            return RequestUsage(input_tokens=truth(messages))

    def chat(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(truth(messages))
        return ModelResponse(parts=[TextPart("ok")])

    agent = Agent(CountingModel(chat), capabilities=harness.manager.capabilities())
    agent.run_sync("next", message_history=seed(harness, history(8, 4000)))  # ~9.2k estimated, ~12k counted
    assert seen and max(seen) <= harness.manager.limit, (seen, harness.manager.limit)
    assert harness.manager.accountant.ratio > 1.2, "the model's count also calibrates the estimate"


def test_an_overflow_names_what_is_too_big() -> None:
    budget = WindowBudget.for_window(8_000, ContextSettings())
    prompt = [ModelRequest(parts=[UserPromptPart("x" * 60_000)])]
    assert "shorten the prompt" in describe_overflow(prompt, tokens=15_000, fixed_tokens=500, budget=budget, ratio=1.0)
    small = [ModelRequest(parts=[UserPromptPart("hi")])]
    text = describe_overflow(small, tokens=9_000, fixed_tokens=8_900, budget=budget, ratio=1.0)
    assert "MEMORY.md" in text and "shorten the prompt" not in text
    output = [ModelResponse(parts=[]), ModelRequest(parts=[ToolReturnPart("grep", "y" * 60_000, "c1")])]
    assert "output of grep" in describe_overflow(output, tokens=15_000, fixed_tokens=500, budget=budget, ratio=1.0)


def test_context_window_from_the_flag_is_said_to_come_from_the_flag(tmp_path: Path) -> None:
    flagged = Settings().with_overrides(window=9_000)
    assert flagged.context.window_origin == "flag"
    harness = make_harness(tmp_path, window=9_000)
    harness.manager.settings = flagged.context
    from tui.chain.manager import ContextManager

    manager = ContextManager(settings=flagged.context, large_results_dir=tmp_path, recorder=harness.recorder,
                             event_sink=lambda e: None, summarizer_model=None, config_window=9_000, chat_model=None,
                             file_writing_tools=FILE_WRITING_TOOLS)
    assert manager.window_source == "flag"
    configured = ContextManager(settings=ContextSettings(window=9_000), large_results_dir=tmp_path,
                                recorder=harness.recorder, event_sink=lambda e: None, summarizer_model=None,
                                config_window=9_000, chat_model=None,
                                file_writing_tools=FILE_WRITING_TOOLS)
    assert configured.window_source == "config"


def test_estimates_are_cached_per_message_so_a_request_costs_o_new(tmp_path: Path) -> None:
    estimator = TokenEstimator()
    messages = history(50, 2000)
    estimator.total(messages)
    calls = {"n": 0}
    original = json.dumps

    def counting_dumps(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        return original(*args, **kwargs)

    json.dumps = counting_dumps  # type: ignore[assignment]
    try:
        estimator.total(messages)
    finally:
        json.dumps = original  # type: ignore[assignment]
    assert calls["n"] == 0


def test_usage_after_an_answer_is_marked_final(tmp_path: Path) -> None:
    harness = make_harness(tmp_path, window=50_000)
    agent = Agent(FunctionModel(lambda m, i: ModelResponse(parts=[TextPart("a long answer " * 200)])),
                  capabilities=harness.manager.capabilities())
    asyncio.run(agent.run("hi"))
    before, after = [e for e in harness.events if isinstance(e, UsageEvent)]
    assert after.final and after.tokens - before.tokens >= 600, "the answer (~2,800 characters) is counted"


def test_parallel_tool_outputs_that_cannot_fit_become_pointers_instead_of_failing(tmp_path: Path) -> None:
    """Four parallel reads, each under the eviction limit but together larger than a 4k window's limit: the
    request still goes out (their outputs become previews with pointers to saved copies) — found by the fuzz farm."""
    from pydantic_ai.messages import ToolCallPart

    harness = make_harness(tmp_path, window=4_000, protect_recent_tokens=None, min_savings_tokens=None)
    calls = [ToolCallPart("read_file", {"path": f"src/part_{n}.py"}, f"call-{n}") for n in range(4)]
    history = [
        ModelRequest(parts=[UserPromptPart("read the four parts")]),
        ModelResponse(parts=calls),
        ModelRequest(parts=[ToolReturnPart("read_file", f"line {n}\n" * 400, f"call-{n}") for n in range(4)]),
    ]
    received: list[list[ModelMessage]] = []

    def chat(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        received.append(list(messages))
        return ModelResponse(parts=[TextPart("ok")])

    agent = Agent(FunctionModel(chat), capabilities=harness.manager.capabilities())
    agent.run_sync(message_history=seed(harness, history))
    sent = received[0]
    assert harness.manager.accountant.estimate(sent, harness.manager.fixed_tokens) <= harness.manager.limit
    returns = [p for m in sent for p in m.parts if isinstance(p, ToolReturnPart)]
    assert len(returns) == 4 and all("saved at" in str(p.content) for p in returns)


def test_when_pointers_with_previews_still_do_not_fit_the_previews_are_cut_shorter(tmp_path: Path) -> None:
    """Sixteen parallel outputs in the running turn: even as pointers with 600-character previews they do not
    fit a 4k window, so the previews shrink until the request fits — the turn is never failed (found by the
    fuzz farm, tests/fuzz/reproducers/seed-21.json)."""
    from pydantic_ai.messages import ToolCallPart

    harness = make_harness(tmp_path, window=4_000, protect_recent_tokens=None, min_savings_tokens=None)
    calls = [ToolCallPart("read_file", {"path": f"src/part_{n}.py"}, f"call-{n}") for n in range(16)]
    history = [
        ModelRequest(parts=[UserPromptPart("read the sixteen parts")]),
        ModelResponse(parts=calls),
        ModelRequest(parts=[ToolReturnPart("read_file", f"line {n}\tvalue\n" * 150, f"call-{n}") for n in range(16)]),
    ]
    received: list[list[ModelMessage]] = []

    def chat(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        received.append(list(messages))
        return ModelResponse(parts=[TextPart("ok")])

    agent = Agent(FunctionModel(chat), capabilities=harness.manager.capabilities())
    agent.run_sync(message_history=seed(harness, history))
    sent = received[0]
    assert harness.manager.accountant.estimate(sent, harness.manager.fixed_tokens) <= harness.manager.limit
    returns = [p for m in sent for p in m.parts if isinstance(p, ToolReturnPart)]
    assert len(returns) == 16 and all("saved at" in str(p.content) for p in returns)
    assert max(len(str(p.content)) for p in returns) < 600, "the previews were cut below the first resort's size"

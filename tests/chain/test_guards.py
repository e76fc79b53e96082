"""Guards: inflation, one attempt per turn, failures leave history unchanged, pre-flight, window."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from tests.chain.support import SummarizerScript, history, make_harness, seed
from tui.chain.cut_points import tool_pairs_intact
from tui.chain.estimate import TokenEstimator
from tui.chain.events import CompactionFailed, CompactionFinished, UsageEvent
from tui.chain.summarizer import Summarizer, SummarizerError
from tui.chain.window import DEFAULT_WINDOW, resolve_window


def test_inflating_summary_is_rejected_and_history_unchanged(tmp_path: Path) -> None:
    script = SummarizerScript(reply="padding " * 20_000)
    harness = make_harness(tmp_path, summarizer=script, compaction_threshold=0.5, summarize_threshold=0.5,
                           min_savings_tokens=10**9, window=12_000)
    original = seed(harness, history(6, 4000))
    harness.agent().run_sync("next", message_history=original)
    [failed] = [e for e in harness.events if isinstance(e, CompactionFailed)]
    assert "rejected" in failed.reason
    assert harness.received[0][: len(original)] == original
    assert harness.recorder.messages[: len(original)] == original
    assert len(harness.recorder.messages) == len(original) + 1  # only the new prompt (the runtime records the answer)


def test_summarizer_error_is_tried_once_per_turn_and_leaks_no_secret(tmp_path: Path) -> None:
    script = SummarizerScript(error=RuntimeError("401 bad key sk-secret123 for org"))
    harness = make_harness(tmp_path, summarizer=script, compaction_threshold=0.5, summarize_threshold=0.5,
                           min_savings_tokens=10**9)
    original = seed(harness, history(6, 4000))
    calls = {"n": 0}

    def chat(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        harness.received.append(list(messages))
        calls["n"] += 1
        if calls["n"] == 1:
            return ModelResponse(parts=[ToolCallPart("noop", {}, "noop-1")])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(chat), capabilities=harness.manager.capabilities())

    @agent.tool_plain
    def noop() -> str:
        return "nothing"

    harness.manager.begin_user_turn()
    result = agent.run_sync("next", message_history=original)
    assert len(harness.received) == 2 and len(script.prompts) == 1, "one attempt per user turn"
    assert all(sent[: len(original)] == original for sent in harness.received)
    [failed] = [e for e in harness.events if isinstance(e, CompactionFailed)]
    assert "sk-secret123" not in failed.reason and "RuntimeError" in failed.reason
    harness.manager.begin_user_turn()
    agent.run_sync("again", message_history=result.all_messages())
    assert len(script.prompts) == 2, "a new user turn may try again"


def test_one_automatic_summary_per_turn(tmp_path: Path) -> None:
    script = SummarizerScript(reply="short summary")
    harness = make_harness(tmp_path, summarizer=script, compaction_threshold=0.3, summarize_threshold=0.3,
                           min_savings_tokens=10**9, keep_recent_fraction=0.35)
    original = seed(harness, history(6, 4000))
    replies = iter([ModelResponse(parts=[ToolCallPart("noop", {}, "n1")]),
                    ModelResponse(parts=[ToolCallPart("noop", {}, "n2")]),
                    ModelResponse(parts=[TextPart("done")])])

    def chat(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        harness.received.append(list(messages))
        return next(replies)

    agent = Agent(FunctionModel(chat), capabilities=harness.manager.capabilities())

    @agent.tool_plain
    def noop() -> str:
        return "nothing"

    harness.manager.begin_user_turn()
    agent.run_sync("next", message_history=original)
    usage = [e for e in harness.events if isinstance(e, UsageEvent)]
    assert len(harness.received) == 3
    assert all(e.tokens >= 3_000 for e in usage), "still above the threshold after the summary"
    assert harness.kinds().count("compaction_finished") == 1, "at most one automatic summary per user turn"


def oversize_histories() -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(min_value=200, max_value=9_000), min_size=1, max_size=12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=oversize_histories(), window=st.integers(min_value=3_000, max_value=12_000))
def test_preflight_never_sends_over_the_window(tmp_path_factory: pytest.TempPathFactory, sizes: list[int],
                                               window: int) -> None:
    tmp_path = tmp_path_factory.mktemp("preflight")
    script = SummarizerScript(error=RuntimeError("summarizer down"))
    harness = make_harness(tmp_path, summarizer=script, window=window, min_savings_tokens=10**9)
    messages = [m for number, size in enumerate(sizes) for m in history(1, size)[:4] if True]
    for number, message in enumerate(messages):
        for part in message.parts:
            if hasattr(part, "tool_call_id"):
                part.tool_call_id = f"c{number // 4}"
    seed(harness, messages)
    estimator = TokenEstimator()

    def chat(sent: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert estimator.total(sent) <= window, "a request went over the window"
        assert tool_pairs_intact(sent)
        return ModelResponse(parts=[TextPart("ok")])

    agent = Agent(FunctionModel(chat), capabilities=harness.manager.capabilities())
    agent.run_sync("next", message_history=messages)
    assert harness.recorder.messages[: len(messages)] == messages, "nothing on record is ever removed"


def test_request_larger_than_the_window_fails_clearly(tmp_path: Path) -> None:
    from tui.chain.compactor import ContextOverflowError

    harness = make_harness(tmp_path, window=1_000)
    with pytest.raises(ContextOverflowError, match="window 1,000"):
        harness.agent().run_sync("x" * 20_000)


def test_window_resolution_and_assumed_flag() -> None:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    assert resolve_window(None, None) == (DEFAULT_WINDOW, "default")
    assert resolve_window(None, 32_000) == (32_000, "config")
    known = OpenAIChatModel("gpt-4.1", provider=OpenAIProvider(base_url="http://127.0.0.1:9/v1", api_key="x"))
    window, source = resolve_window(known, None)
    assert source in ("model", "genai-prices") and window >= 1_000_000
    assert resolve_window(FunctionModel(lambda m, i: ModelResponse(parts=[])), None)[1] == "default"
    assumed = UsageEvent(tokens=1, window=DEFAULT_WINDOW, window_source="default")
    assert assumed.assumed and not UsageEvent(tokens=1, window=5, window_source="model").assumed


async def test_summarizer_timeout_is_a_clean_failure() -> None:
    import asyncio

    async def slow(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await asyncio.sleep(5)
        return ModelResponse(parts=[TextPart("late")])

    summarizer = Summarizer(FunctionModel(slow), timeout=0.05)
    with pytest.raises(SummarizerError, match="did not answer within"):
        await summarizer.summarize(history(1, 100), previous_summary=None, focus=None)


def test_anchor_uses_the_provider_count(tmp_path: Path) -> None:
    import asyncio

    from pydantic_ai.messages import ModelRequest, UserPromptPart
    from pydantic_ai.usage import RequestUsage

    from tui.chain.accounting import TokenAccountant

    accountant = TokenAccountant(TokenEstimator())
    reported = ModelResponse(parts=[TextPart("answer")], usage=RequestUsage(input_tokens=12_345),
                             provider_name="openai")
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("q" * 4000)]), reported,
                                    ModelRequest(parts=[UserPromptPart("next question")])]
    counted = asyncio.run(accountant.count(messages, fixed_tokens=500))
    tail = TokenEstimator().total(messages[1:])
    assert counted == 12_345 + tail
    accountant.invalidate(messages)
    assert asyncio.run(accountant.count(messages, fixed_tokens=500)) == TokenEstimator().total(messages) + 500


def test_custom_token_counter_sync_and_async(tmp_path: Path) -> None:
    import asyncio

    from tui.chain.accounting import TokenAccountant

    async def async_counter(messages):  # type: ignore[no-untyped-def]
        return 7 * len(messages)

    messages = history(1, 100)
    assert asyncio.run(TokenAccountant(TokenEstimator(), lambda m: 3 * len(m)).count(messages, 10)) == 22
    assert asyncio.run(TokenAccountant(TokenEstimator(), async_counter).count(messages, 0)) == 28


def test_tier2_events_and_usage_after_compaction(tmp_path: Path) -> None:
    harness = make_harness(tmp_path, compaction_threshold=0.5, summarize_threshold=0.9)
    harness.agent().run_sync("next", message_history=seed(harness, history(6, 4000)))
    kinds = harness.kinds()
    assert kinds == ["usage", "compaction_started", "compaction_finished", "usage", "usage"]
    final_usage = harness.events[3]
    assert isinstance(final_usage, UsageEvent) and not final_usage.final
    assert isinstance(harness.events[4], UsageEvent) and harness.events[4].final, "the answer is counted too"
    done = harness.events[2]
    assert isinstance(done, CompactionFinished) and final_usage.tokens == done.tokens_after
    assert isinstance(harness.received[0][2].parts[0], ToolReturnPart)


def test_resume_after_tier2_counts_the_loaded_history_not_an_old_provider_figure(tmp_path: Path) -> None:
    """Tier-2 pointers live only in memory; a provider count measured on them must not anchor a resume."""
    sent: list[int] = []

    def provider(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tokens = TokenEstimator().total(messages)
        sent.append(tokens)
        return ModelResponse(parts=[TextPart("ok")], usage=RequestUsage(input_tokens=tokens), provider_name="openai")

    first = make_harness(tmp_path / "first", window=10_000, compaction_threshold=0.5, summarize_threshold=0.99)
    result = Agent(FunctionModel(provider), capabilities=first.manager.capabilities()).run_sync(
        "turn A", message_history=seed(first, history(12, 4000)))
    first.manager.record_pending(result.all_messages())
    assert any(isinstance(e, CompactionFinished) and e.strategy == "pointer" for e in first.events)
    on_disk = list(first.recorder.messages)  # originals, never the pointers

    resumed = make_harness(tmp_path / "resumed", window=10_000, compaction_threshold=0.5, summarize_threshold=0.99)
    Agent(FunctionModel(provider), capabilities=resumed.manager.capabilities()).run_sync(
        "turn B", message_history=seed(resumed, on_disk))
    first_usage = next(e for e in resumed.events if isinstance(e, UsageEvent))
    assert first_usage.tokens > 10_000, "the loaded originals are counted, not the old compacted figure"
    assert sent[-1] <= 10_000, "and so tier 2 runs again before anything is sent over the window"


def test_eviction_threshold_never_exceeds_a_quarter_of_the_limit(tmp_path: Path) -> None:
    small = make_harness(tmp_path / "small", window=3_000, large_result_tokens=20_000)
    large = make_harness(tmp_path / "large", window=200_000, large_result_tokens=20_000)
    assert small.manager.limit == 3_000 - 512 - 150  # the answer reserve is at least 512, the margin 5 %
    assert small.manager.eviction_threshold == small.manager.limit // 4
    assert large.manager.eviction_threshold == 20_000


def test_a_summary_that_frees_too_little_is_not_paid_for_again_until_the_context_has_grown(tmp_path: Path) -> None:
    """A 4k-window session's summary that cannot free enough was asked for (and paid) again on every turn: after
    a rejection the next automatic attempt waits until the context is large enough for a summary to free enough."""
    script = SummarizerScript(reply="summary padding " * 900)  # about as large as what it summarizes
    harness = make_harness(tmp_path, summarizer=script, compaction_threshold=0.5, summarize_threshold=0.5,
                           min_savings_tokens=10**9, window=12_000)
    original = seed(harness, history(6, 3000))
    manager = harness.manager

    def turn(prompt: str, messages: list[ModelMessage]) -> None:
        manager.begin_user_turn()
        harness.agent().run_sync(prompt, message_history=messages)

    turn("first", original)
    [failed] = [e for e in harness.events if isinstance(e, CompactionFailed)]
    assert "would only shrink" in failed.reason
    paid = len(script.prompts)  # the summarizer's requests for that attempt (it may go in chunks)
    assert paid >= 1
    for number in range(4):  # a few more turns, the context a little larger each time: no new attempt
        grown = [*original, *history(1, 200 * (number + 1))]
        seed(harness, grown[len(original):])
        turn(f"turn {number}", grown)
    assert len(script.prompts) == paid, "the rejected summary was not paid for again"
    assert [e.kind for e in harness.events].count("compaction_failed") == 1
    much_larger = [*original, *history(12, 3000)]
    seed(harness, much_larger[len(original):])
    turn("much later", much_larger)
    assert len(script.prompts) > paid, "once the context has grown enough, a summary is tried again"


def test_a_summary_that_fits_counts_in_a_small_window_with_large_instructions(tmp_path: Path) -> None:
    """Issue 29: in a 4k window, instructions and tools are most of every request, so a summary could not
    leave the context at 70 % of its size however short it was, and 26 paid summaries were thrown away. One
    that brings the context below the compaction threshold is applied."""
    script = SummarizerScript(reply="## Session intent\n" + "module review detail; " * 45)  # ~250 tokens
    harness = make_harness(tmp_path, summarizer=script, window=4_000, min_savings_tokens=10**9)
    original = seed(harness, history(4, 1_100))

    def chat(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        harness.received.append(list(messages))
        return ModelResponse(parts=[TextPart("ok")])

    instructions = "Follow the house rules. " * 260  # ~1,500 tokens, as deep-tui's instructions and tools are
    agent = Agent(FunctionModel(chat), instructions=instructions, capabilities=harness.manager.capabilities())
    harness.manager.begin_user_turn()
    agent.run_sync("next", message_history=original)
    assert not [e for e in harness.events if isinstance(e, CompactionFailed)], harness.events
    [finished] = [e for e in harness.events if isinstance(e, CompactionFinished) and e.strategy == "summary"]
    fixed = harness.manager.fixed_tokens
    assert fixed > 1_000 and finished.tokens_after > 0.7 * finished.tokens_before, "the 70 % rule alone refused it"
    assert finished.tokens_after < harness.manager.budget.at(harness.manager.settings.compaction_threshold)
    assert len(script.prompts) <= 2, "one summary (and its retention pass), applied"

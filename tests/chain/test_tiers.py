"""Each tier at its threshold and not below it; focus, whole span, incremental summaries; recording."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import CompactionPart, ModelRequest, ToolReturnPart

from tests.chain.support import FILE_WRITING_TOOLS, SummarizerScript, history, make_harness, seed
from tui.chain.cut_points import tool_pairs_intact
from tui.chain.estimate import TokenEstimator
from tui.chain.events import CompactionFailed, CompactionFinished, UsageEvent
from tui.chain.summary_message import summary_info


def finished(events: list) -> list[CompactionFinished]:
    return [event for event in events if isinstance(event, CompactionFinished)]


def test_tier2_fires_at_the_compaction_threshold_and_not_below(tmp_path: Path) -> None:
    # Thresholds are shares of the limit: 10k window − 1k answer reserve − 500 margin = 8.5k; 0.6 → 5.1k.
    below = make_harness(tmp_path / "below", compaction_threshold=0.6, summarize_threshold=0.9)
    below.agent().run_sync("next", message_history=seed(below, history(4, 4000)))  # ~4.5k < 5.1k
    assert finished(below.events) == []

    at = make_harness(tmp_path / "at", compaction_threshold=0.6, summarize_threshold=0.9)
    at.agent().run_sync("next", message_history=seed(at, history(6, 4000)))  # ~6.8k ≥ 5.1k
    [event] = finished(at.events)
    assert event.strategy == "pointer" and event.trigger == "auto"
    assert event.tokens_after < event.tokens_before and event.files_created
    sent = at.received[0]
    masked = [p for m in sent for p in m.parts if isinstance(p, ToolReturnPart) and "compacted" in str(p.content)]
    assert masked, "old tool outputs were not replaced by pointers"
    originals = {p.tool_call_id: p.content for m in at.recorder.messages for p in m.parts
                 if isinstance(p, ToolReturnPart)}
    for part in masked:  # the pointer's read_file(offset, limit) gives back exactly the original output
        offset, lines = part.metadata["deep_tui_saved_lines"]
        saved = Path(part.metadata["deep_tui_evicted_path"]).read_text().splitlines(keepends=True)
        assert "".join(saved[offset: offset + lines]) == originals[part.tool_call_id]
        assert f"offset={offset}, limit={lines}" in part.content
    assert tool_pairs_intact(sent)


def test_tier2_skips_when_it_would_free_too_little(tmp_path: Path) -> None:
    harness = make_harness(tmp_path, compaction_threshold=0.5, summarize_threshold=0.9, min_savings_tokens=50_000)
    harness.agent().run_sync("next", message_history=seed(harness, history(6, 4000)))
    assert finished(harness.events) == []
    saved = tmp_path / "large_tool_results"
    assert not saved.exists() or not list(saved.iterdir()), "a skipped tier 2 leaves no copies behind"


def test_tier3_fires_at_the_summarize_threshold_and_not_below(tmp_path: Path) -> None:
    script = SummarizerScript()
    below = make_harness(tmp_path / "below", summarizer=script, compaction_threshold=0.5, summarize_threshold=0.85,
                         min_savings_tokens=10**9)
    below.agent().run_sync("next", message_history=seed(below, history(6, 4000)))  # ~6.8k < 0.85 × 8.5k
    assert finished(below.events) == [] and script.prompts == []

    at = make_harness(tmp_path / "at", summarizer=script, compaction_threshold=0.5, summarize_threshold=0.85,
                      min_savings_tokens=10**9)
    original = seed(at, history(8, 4000))  # ~9k ≥ 7.2k
    at.agent().run_sync("next", message_history=original)
    [event] = finished(at.events)
    assert event.strategy == "summary" and event.tokens_after < event.tokens_before
    sent = at.received[0]
    assert summary_info(sent[0]) is not None and tool_pairs_intact(sent)
    assert sent[-1].parts[-1].content == "next"  # the in-flight request is kept  # type: ignore[union-attr]
    # Nothing was removed from the record: originals first, then the summary, then the new turn.
    assert at.recorder.messages[: len(original)] == original
    assert event.summary_index is not None
    recorded_summary = at.recorder.messages[event.summary_index]
    assert recorded_summary is sent[0]
    kept_from = summary_info(recorded_summary)["kept_from"]  # type: ignore[index]
    assert at.recorder.messages[kept_from] is sent[1]


def test_focus_and_the_whole_span_reach_the_summarizer(tmp_path: Path) -> None:
    script = SummarizerScript()
    harness = make_harness(tmp_path, summarizer=script, window=200_000)
    messages = history(75, 400)  # 300 messages
    first = messages[0].parts[0]
    first.content = "remember FACT-ALPHA-42 from the very first message"  # type: ignore[union-attr]
    seed(harness, messages)
    harness.manager.request_compact("the database migration")
    harness.agent().run_sync("go on", message_history=messages)
    [event] = finished(harness.events)
    assert event.trigger == "manual" and event.focus == "the database migration"
    prompt = "\n".join(script.prompts)
    assert "the database migration" in prompt
    assert "FACT-ALPHA-42" in prompt and "module 74" in prompt


async def test_manual_compact_with_focus_and_incremental_summary(tmp_path: Path) -> None:
    script = SummarizerScript(reply="## Session intent\nFIRST-SUMMARY-TEXT")
    harness = make_harness(tmp_path, summarizer=script, window=100_000)
    messages = seed(harness, history(20, 2000))
    outcome = await harness.manager.compact(messages, focus="error handling")
    assert isinstance(outcome.event, CompactionFinished) and outcome.event.focus == "error handling"
    assert "error handling" in script.prompts[-1]
    later = outcome.messages + history(20, 2000)[4:]
    script.reply = "## Session intent\nSECOND"
    second = await harness.manager.compact(later)
    assert isinstance(second.event, CompactionFinished)
    assert "FIRST-SUMMARY-TEXT" in script.prompts[-1], "the previous summary must be an input"
    assert summary_info(second.messages[0]) is not None
    assert isinstance(second.messages[0].parts[0], CompactionPart)


def test_retention_second_pass_adds_missing_identifiers(tmp_path: Path) -> None:
    calls: list[str] = []

    def summarize(messages, info):  # type: ignore[no-untyped-def]
        from pydantic_ai.messages import ModelResponse, TextPart

        prompt = str(messages[-1].parts[-1].content)
        calls.append(prompt)
        if "<must_include>" in prompt:
            block = prompt.split("<must_include>")[1].split("</must_include>")[0]
            listed = [line[2:] for line in block.splitlines() if line.startswith("- ")]
            return ModelResponse(parts=[TextPart("summary mentioning " + " ".join(listed))])
        return ModelResponse(parts=[TextPart("a vague summary")])

    from pydantic_ai.models.function import FunctionModel

    from tests.chain.support import ListRecorder
    from tui.base.config import ContextSettings
    from tui.chain.manager import ContextManager

    events: list = []
    manager = ContextManager(settings=ContextSettings(), large_results_dir=tmp_path, recorder=ListRecorder(),
                             event_sink=events.append, summarizer_model=FunctionModel(summarize),
                             config_window=50_000, chat_model=None,
                             file_writing_tools=FILE_WRITING_TOOLS)
    messages = history(10, 2000)
    messages[0].parts[0].content = 'run `make deploy-staging` and never touch "the prod database"'  # type: ignore[union-attr]
    import asyncio

    outcome = asyncio.run(manager.compact(messages))
    assert isinstance(outcome.event, CompactionFinished)
    assert len(calls) == 2 and "make deploy-staging" in calls[1]
    assert outcome.event.retention_score is not None and outcome.event.retention_score >= 0.9


def test_usage_is_reported_before_every_request_with_callback_values(tmp_path: Path) -> None:
    harness = make_harness(tmp_path, window=50_000)
    seen: list[tuple[float, int, int]] = []
    harness.manager.on_usage_update = lambda pct, current, maximum: seen.append((pct, current, maximum))
    harness.agent().run_sync("hello", message_history=seed(harness, history(2, 1000)))
    usage = [event for event in harness.events if isinstance(event, UsageEvent)]
    assert len(usage) == 2 and len(seen) == 2, "one before the request, one counting the answer"
    assert not usage[0].final and usage[1].final and usage[1].tokens > usage[0].tokens
    pct, current, maximum = seen[0]
    assert current == usage[0].tokens and maximum == 50_000 and abs(pct - current / maximum) < 1e-9
    estimate = TokenEstimator().total(harness.received[0])
    assert current >= estimate, "instructions/tools may add, but the count never under-counts the messages"
    assert usage[0].window_source == "config" and not usage[0].assumed


def test_failed_summary_event_after_started(tmp_path: Path) -> None:
    script = SummarizerScript(error=RuntimeError("boom"))
    harness = make_harness(tmp_path, summarizer=script, summarize_threshold=0.5, compaction_threshold=0.5,
                           min_savings_tokens=10**9)
    original = seed(harness, history(6, 4000))
    harness.agent().run_sync("next", message_history=original)
    kinds = harness.kinds()
    assert kinds[:3] == ["usage", "compaction_started", "compaction_failed"]
    failed = [e for e in harness.events if isinstance(e, CompactionFailed)]
    assert "RuntimeError" in failed[0].reason
    assert not any(isinstance(p, CompactionPart) for m in harness.recorder.messages for p in m.parts)
    sent = harness.received[0]
    assert sent[: len(original)] == original, "the request carried the history exactly as it was"
    assert len(sent) == len(original) + 1 and isinstance(sent[-1], ModelRequest)

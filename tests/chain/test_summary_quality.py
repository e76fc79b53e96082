"""Summaries: what reaches the summarizer, how retention is judged, and when a summary is applied."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.chain.support import FILE_WRITING_TOOLS, SummarizerScript, history, make_harness, seed
from tui.chain.events import CompactionFailed, CompactionFinished
from tui.chain.eviction import build_preview
from tui.chain.retention import extract_identifiers, retention_score
from tui.chain.transcript import dense_extract, render_transcript


def _session_with_an_evicted_output() -> list[ModelMessage]:
    output = "".join(f"{n:>5} | entry {n} ok\n" for n in range(400))
    preview = build_preview(output, path="/data/large_tool_results/call_7-abc.txt", tool_name="grep")
    return [
        ModelRequest(parts=[UserPromptPart('fix the flaky test in tests/test_parser.py; "never touch the public API"')]),
        ModelResponse(parts=[ToolCallPart("grep", {"pattern": "flaky", "path": "tests"}, "call_7")]),
        ModelRequest(parts=[ToolReturnPart("grep", preview, "call_7")]),
        ModelResponse(parts=[TextPart("The failure is a `TimeoutError` in src/parser/lexer.py after 250 ms; "
                                      "run `pytest -k lexer` to see it.")]),
    ]


def test_eviction_notices_are_not_identifiers() -> None:
    identifiers = extract_identifiers(_session_with_an_evicted_output())
    lowered = [identifier.lower() for identifier in identifiers]
    assert not any("lines" in item or "tokens" in item or "characters" in item for item in lowered), identifiers
    assert "tests/test_parser.py" in identifiers and "src/parser/lexer.py" in identifiers
    assert "TimeoutError" in identifiers and "pytest -k lexer" in identifiers and "250 ms" in identifiers
    assert identifiers[0] == "never touch the public API", "what the user quoted comes first"


def test_a_faithful_summary_scores_high_and_the_lost_identifiers_are_named() -> None:
    span = _session_with_an_evicted_output()
    identifiers = extract_identifiers(span)
    faithful = ("## Session intent\nFix the flaky test in tests/test_parser.py; the user said \"never touch the "
                "public API\".\n## Errors and fixes\n`TimeoutError` in src/parser/lexer.py after 250 ms, seen with "
                "`pytest -k lexer` (grep output saved at /data/large_tool_results/call_7-abc.txt).")
    score, missing = retention_score(faithful, identifiers)
    assert score >= 0.9, (score, missing)
    vague = "## Session intent\nThe user is fixing a test."
    score, missing = retention_score(vague, identifiers)
    assert score < 0.5 and "src/parser/lexer.py" in missing


def test_long_tool_outputs_reach_the_summarizer_as_dense_extracts() -> None:
    lines = [f"debug line {n}: nothing to see" for n in range(2_000)]
    lines[1_234] = "ERROR KeyError: 'session_id' raised in src/store/session_index.py line 88"
    text = "\n".join(lines)
    extract = dense_extract(text, 6_000)
    assert len(extract) <= 6_500
    assert "src/store/session_index.py" in extract and "KeyError" in extract, "the identifier line in the middle"
    assert extract.startswith("debug line 0") and "debug line 1999" in extract
    transcript = render_transcript([ModelRequest(parts=[ToolReturnPart("read_file", text, "c1")])])
    assert "src/store/session_index.py" in transcript


def _summarizer_replying_with(fraction_of_span: float) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = str(messages[-1].parts[-1].content)  # type: ignore[union-attr]
        return ModelResponse(parts=[TextPart("## Session intent\n" + "s" * int(len(prompt) * fraction_of_span))])

    return FunctionModel(answer, model_name="summarizer")


def test_a_manual_compaction_is_applied_whenever_it_frees_tokens(tmp_path: Path) -> None:
    """The inflation guard (≤ 70 %) stops automatic loops; a /compact the user asked for, with a focus, is
    applied when it frees tokens at all (issue 11: refused at 54 % of a 16k window)."""
    harness = make_harness(tmp_path, window=16_000, summarizer=SummarizerScript())
    harness.manager.compactor.summarizer = type(harness.manager.summarizer)(_summarizer_replying_with(0.55))
    messages = seed(harness, history(8, 3000))
    outcome = asyncio.run(harness.manager.compact(messages, focus="keep ID markers and file names"))
    event = outcome.event
    assert isinstance(event, CompactionFinished), event
    assert event.strategy == "summary" and event.tokens_after < event.tokens_before
    assert event.tokens_after > 0.7 * event.tokens_before, "the case must be one the automatic guard refuses"

    auto = make_harness(tmp_path / "auto", window=16_000, compaction_threshold=0.3, summarize_threshold=0.3,
                        min_savings_tokens=10**9)
    auto.manager.compactor.summarizer = type(auto.manager.summarizer)(_summarizer_replying_with(0.55))
    auto.agent().run_sync("next", message_history=seed(auto, history(8, 3000)))
    [failed] = [e for e in auto.events if isinstance(e, CompactionFailed)]
    assert "automatic summary needs" in failed.reason


def test_a_manual_compaction_that_would_grow_the_context_is_refused(tmp_path: Path) -> None:
    harness = make_harness(tmp_path, window=16_000)
    harness.manager.compactor.summarizer = type(harness.manager.summarizer)(_summarizer_replying_with(3.0))
    messages = seed(harness, history(8, 3000))
    outcome = asyncio.run(harness.manager.compact(messages, focus="everything"))
    assert isinstance(outcome.event, CompactionFailed) and "would not shrink" in outcome.event.reason
    from tui.chain.summary_message import summary_info

    assert len(outcome.messages) == len(messages) and summary_info(outcome.messages[0]) is None, \
        "no summary replaced anything (tier 2's reversible pointers may stay)"


def test_the_plan_says_what_a_summary_replaces_and_keeps(tmp_path: Path) -> None:
    harness = make_harness(tmp_path, window=16_000)
    messages = seed(harness, history(8, 3000))
    plan = harness.manager.plan_compaction(messages)
    assert plan.possible and plan.summarized_messages + plan.kept_messages == len(messages)
    assert plan.kept_tokens < plan.summarized_tokens
    assert not harness.manager.plan_compaction(messages[:1]).possible


def test_tier2_reclaims_before_any_summary_at_small_windows_with_the_defaults(tmp_path: Path) -> None:
    """With default settings (no protect/min-savings configured) at an 8k window, old tool outputs become
    pointers before the lossy tier is needed (issue 14: tier 2 never ran below ~50k windows)."""
    from tests.chain.support import ListRecorder
    from tui.base.config import ContextSettings
    from tui.chain.manager import ContextManager

    events: list = []
    recorder = ListRecorder()
    manager = ContextManager(settings=ContextSettings(), large_results_dir=tmp_path / "saved", recorder=recorder,
                             event_sink=events.append, summarizer_model=SummarizerScript().model(),
                             config_window=8_000, chat_model=None,
                             file_writing_tools=FILE_WRITING_TOOLS)
    messages = history(5, 4_400)  # five reads of ~1.1k tokens: past the compaction threshold of the 6.8k limit
    recorder.messages.extend(messages)
    manager.mark_recorded(messages, list(range(len(messages))))
    from pydantic_ai import Agent

    Agent(FunctionModel(lambda m, i: ModelResponse(parts=[TextPart("ok")])),
          capabilities=manager.capabilities()).run_sync("next", message_history=messages)
    finished = [e for e in events if isinstance(e, CompactionFinished)]
    assert finished and finished[0].strategy == "pointer", [e.kind for e in events]
    assert not [e for e in finished if e.strategy == "summary"], "the reversible tier was enough"


def test_a_saved_outputs_path_and_its_own_hash_suffix_are_one_identifier() -> None:
    """Issue 22.11: the path of a saved output ends in a hash of its call id; a summary that leaves the path out
    misses one identifier, not two."""
    from tui.chain.retention import identifier_counts, identifiers_in
    from tui.chain.safe_names import output_file_name

    path = f"/data/large_tool_results/{output_file_name('call_1795', '.txt')}"
    digest = output_file_name("call_1795", ".txt").rsplit("-", 1)[1].removesuffix(".txt")
    line = f"saved at {path} (see `{path}`), commit 4f2a9c1e"
    assert identifiers_in(line) == [path, path, "4f2a9c1e"]
    assert identifier_counts([line, "nothing here"]) == [3, 0]
    output = build_preview("x\n" * 500, path=path, tool_name="read_file")
    span = [ModelRequest(parts=[UserPromptPart("read the log")]),
            ModelResponse(parts=[ToolCallPart("read_file", {"path": "app.log"}, "call_1795")]),
            ModelRequest(parts=[ToolReturnPart("read_file", output, "call_1795")])]
    identifiers = extract_identifiers(span)
    assert path in identifiers and digest not in identifiers, identifiers
    _, missing = retention_score("The user read app.log.", identifiers)
    assert missing == [path]

"""Eviction, safe names, tier-2 idempotence, cut points (property test), extractive summaries, resume."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai import Agent
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

from tests.chain.support import FILE_WRITING_TOOLS, history
from tui.chain.cut_points import find_cut_index, tool_pairs_intact
from tui.chain.estimate import TokenEstimator
from tui.chain.events import ChainEvent, EvictedEvent
from tui.chain.eviction import EvictionCapability
from tui.chain.extractive import extractive_summary
from tui.chain.safe_names import output_file_name, write_output
from tui.chain.summary_message import make_summary_message
from tui.chain.tool_compaction import compact_tool_calls


def run_tool_returning(value: object, directory: Path, call_id: str = "call-1") -> tuple[str, list[ChainEvent]]:
    events: list[ChainEvent] = []

    def chat(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1].parts[-1]
        if isinstance(last, ToolReturnPart):
            return ModelResponse(parts=[TextPart(str(last.content))])
        return ModelResponse(parts=[ToolCallPart("produce", {}, call_id)])

    agent = Agent(FunctionModel(chat), capabilities=[EvictionCapability(directory, 100, events.append)])

    @agent.tool_plain
    def produce() -> object:
        return value

    return agent.run_sync("go").output, events


def test_eviction_saves_exact_bytes_and_previews(tmp_path: Path) -> None:
    text = "".join(f"row {n} ünïcode ✓\n" for n in range(2_000))
    preview, events = run_tool_returning(text, tmp_path)
    [event] = events
    assert isinstance(event, EvictedEvent) and event.error is None
    assert Path(event.path).read_bytes() == text.encode("utf-8")
    assert event.size_bytes == len(text.encode("utf-8"))
    assert "row 0 " in preview and "row 1999" in preview and "row 1000 " not in preview
    assert f"read_file(path={event.path!r}" in preview and len(preview) < 4_000


def test_eviction_saves_structured_output_as_json(tmp_path: Path) -> None:
    value = {"rows": [{"id": n, "name": f"item {n}"} for n in range(500)]}
    _, events = run_tool_returning(value, tmp_path)
    [event] = events
    assert isinstance(event, EvictedEvent) and event.path.endswith(".json")
    assert json.loads(Path(event.path).read_text()) == value


def test_small_outputs_are_not_evicted(tmp_path: Path) -> None:
    output, events = run_tool_returning("small", tmp_path)
    assert output == "small" and events == []


def test_failed_write_keeps_the_preview_and_reports(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the directory should be")
    preview, events = run_tool_returning("line\n" * 5_000, blocker)
    [event] = events
    assert isinstance(event, EvictedEvent) and event.error and not event.path
    assert "could not be saved" in preview and "line" in preview


def test_hostile_ids_stay_inside_and_never_collide(tmp_path: Path) -> None:
    ids = ["../../etc/passwd", "/abs/path", "a\x00b", "x" * 5_000, "", "ünï/côdé", "a/b", "a_b", "a b", "a?b"]
    names = {output_file_name(call_id, ".txt") for call_id in ids}
    assert len(names) == len(ids)
    for call_id in ids:
        path = write_output(tmp_path / "out", call_id, "data", ".txt")
        assert path.parent == (tmp_path / "out").resolve() and len(path.name) < 100
    assert len(list((tmp_path / "out").iterdir())) == len(ids)


def test_a_reused_call_id_never_overwrites_a_saved_output(tmp_path: Path) -> None:
    first = write_output(tmp_path / "out", "call_0", "session one's output", ".txt")
    second = write_output(tmp_path / "out", "call_0", "session two's output", ".txt")
    assert first != second and first.parent == second.parent
    assert first.read_text() == "session one's output" and second.read_text() == "session two's output"
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.startswith(".saving-")]


def test_tier2_is_idempotent_and_never_mutates_its_input(tmp_path: Path) -> None:
    messages = history(8, 4000)
    messages.insert(1, ModelResponse(parts=[ToolCallPart("write_file", {"path": "big.py", "content": "x = 1\n" * 500},
                                                         "w1")]))
    messages.insert(2, ModelRequest(parts=[ToolReturnPart("write_file", "wrote 3000 bytes", "w1")]))
    snapshot = [json.dumps(m.parts[0].content if hasattr(m.parts[0], "content") else str(m.parts[0]), default=str)
                for m in messages]
    estimator = TokenEstimator()
    first = compact_tool_calls(messages, estimator=estimator, large_results_dir=tmp_path, protect_recent_tokens=2_000,
                               file_writing_tools=FILE_WRITING_TOOLS)
    assert first.pointered_returns > 0 and first.masked_args == 1 and len(first.messages) == len(messages)
    assert first.tokens_after < first.tokens_before
    assert [json.dumps(m.parts[0].content if hasattr(m.parts[0], "content") else str(m.parts[0]), default=str)
            for m in messages] == snapshot
    elided = first.messages[1].parts[0]
    assert isinstance(elided, ToolCallPart) and elided.args_as_dict()["path"] == "big.py"
    assert messages[-1] is first.messages[-1] and messages[-4] is first.messages[-4], "recent output is protected"
    second = compact_tool_calls(first.messages, estimator=estimator, large_results_dir=tmp_path,
                                protect_recent_tokens=2_000, file_writing_tools=FILE_WRITING_TOOLS)
    assert second.pointered_returns == 0 and second.masked_args == 0
    assert all(a is b for a, b in zip(first.messages, second.messages, strict=True))
    assert tool_pairs_intact(first.messages)


@st.composite
def histories(draw: st.DrawFn) -> list[ModelMessage]:
    messages: list[ModelMessage] = []
    call = 0
    for turn in range(draw(st.integers(min_value=1, max_value=8))):
        messages.append(ModelRequest(parts=[UserPromptPart(f"prompt {turn} " + "p" * draw(st.integers(0, 400)))]))
        for _ in range(draw(st.integers(min_value=0, max_value=3))):
            calls = [ToolCallPart("tool", {"n": call + k}, f"c{call + k}") for k in range(draw(st.integers(1, 3)))]
            call += len(calls)
            messages.append(ModelResponse(parts=calls))
            messages.append(ModelRequest(parts=[ToolReturnPart("tool", "r" * draw(st.integers(0, 600)), c.tool_call_id)
                                                for c in calls]))
        if draw(st.booleans()):
            messages.append(ModelResponse(parts=[TextPart("answer " + "a" * draw(st.integers(0, 300)))]))
    return messages


@settings(max_examples=200, deadline=None)
@given(messages=histories(), keep_tokens=st.integers(min_value=0, max_value=3_000))
def test_cut_points_keep_tool_pairs_and_the_in_flight_request(messages: list[ModelMessage], keep_tokens: int) -> None:
    cut = find_cut_index(messages, keep_tokens, TokenEstimator())
    if cut is None:
        return
    assert 1 <= cut <= len(messages) - 1
    kept = messages[cut:]
    assert kept[-1] is messages[-1]
    summary = make_summary_message("summary", strategy="summary", kept_from=cut, replaced=cut)
    assert tool_pairs_intact([summary, *kept])


def test_extractive_summary_has_sections_and_is_small() -> None:
    span = history(40, 3000)
    span[0].parts[0].content = 'deploy with `make release` to "staging only" and keep 512 MB'  # type: ignore[union-attr]
    text = extractive_summary(span, previous_summary="EARLIER STATE", focus="release process")
    for heading in ("Session intent", "User instructions and constraints (verbatim)", "Files and artifacts",
                    "Errors and fixes", "Progress", "Current state", "Next steps", "Exact values"):
        assert f"## {heading}" in text
    assert "make release" in text and "release process" in text and "EARLIER STATE" in text
    assert len(text) < TokenEstimator().total(span) * 4 / 10


async def test_large_span_is_summarized_in_chunks_each_building_on_the_last() -> None:
    from tests.chain.support import SummarizerScript
    from tui.chain.summarizer import Summarizer

    script = SummarizerScript(reply="PARTIAL-SUMMARY")
    summarizer = Summarizer(script.model(), chunk_tokens=2_000)
    span = history(12, 2_000)  # ~6k tokens → several chunks
    text = await summarizer.summarize(span, previous_summary="EARLIER", focus="the API")
    assert text == "PARTIAL-SUMMARY" and len(script.prompts) >= 3
    assert "EARLIER" in script.prompts[0]
    assert all("PARTIAL-SUMMARY" in prompt for prompt in script.prompts[1:])
    assert all("the API" in prompt for prompt in script.prompts)
    assert "module 0" in script.prompts[0] and "module 11" in script.prompts[-1]


def test_binary_tool_output_is_never_stringified(tmp_path: Path) -> None:
    from pydantic_ai.messages import BinaryContent

    from tui.chain.eviction import serialize_output

    image = BinaryContent(data=b"\x89PNG" + bytes(200_000), media_type="image/png")
    assert serialize_output(image) is None
    assert serialize_output(b"\x00\x01") is None


async def test_compress_callbacks_see_the_cut_and_can_inject_text(tmp_path: Path) -> None:
    from tests.chain.support import ListRecorder
    from tui.base.config import ContextSettings
    from tui.chain.manager import ContextManager

    seen: dict[str, object] = {}

    def before(discard, cutoff):  # type: ignore[no-untyped-def]
        seen["discarded"], seen["cutoff"] = len(discard), cutoff

    def after(compressed):  # type: ignore[no-untyped-def]
        seen["after"] = len(compressed)
        return "REMEMBER: the release is frozen"

    manager = ContextManager(settings=ContextSettings(), large_results_dir=tmp_path, recorder=ListRecorder(),
                             event_sink=lambda event: None, summarizer_model=None, config_window=50_000,
                             chat_model=None, file_writing_tools=FILE_WRITING_TOOLS, on_before_compress=before, on_after_compress=after)
    messages = history(10, 2_000)
    outcome = await manager.compact(messages)
    assert seen["discarded"] == seen["cutoff"] and 0 < seen["cutoff"] < len(messages)
    assert seen["after"] == len(outcome.messages)
    assert any("release is frozen" in str(getattr(p, "content", "")) for p in outcome.messages[0].parts)
    assert manager.stats.compactions == 1 and manager.stats.saved_by_strategy["summary"] > 0

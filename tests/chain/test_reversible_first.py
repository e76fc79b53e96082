"""Reversible before lossy: outputs the running turn has already read become pointers before a summary or the
pre-flight's fallback cuts anything (the fuzz farm's 64k sessions: one turn of several large reads, each under
the eviction limit, filled the window while tier 2 only looked at earlier turns)."""

from __future__ import annotations

from pathlib import Path

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

from tests.chain.support import Harness, SummarizerScript, make_harness, seed
from tui.base.metadata_keys import EVICTED_PATH_KEY, SAVED_LINES_KEY
from tui.chain.events import CompactionFinished

OUTPUT_CHARS = 10_400
"""About 2,600 tokens per read: under a 16k window's eviction limit (a quarter of its 13,600-token limit)."""


def _output(batch: int) -> str:
    line = f"batch {batch} value=VAL-{batch:05d} path=src/pkg_{batch}/mod.py\n"
    return line * (OUTPUT_CHARS // len(line))


def _one_long_turn(batches: int) -> list[ModelMessage]:
    """One user turn in which the model read ``batches`` large outputs one after the other; the last read's
    output is the request about to be sent (the model has not seen it yet)."""
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("read the logs one part after another")])]
    for batch in range(batches):
        call_id = f"call-{batch}"
        messages.append(ModelResponse(parts=[ToolCallPart("read_file", {"path": f"part_{batch}.log"}, call_id)]))
        messages.append(ModelRequest(parts=[ToolReturnPart("read_file", _output(batch), call_id)]))
    return messages


def _send(harness: Harness, messages: list[ModelMessage]) -> list[ModelMessage]:
    received: list[list[ModelMessage]] = []

    def chat(sent: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        received.append(list(sent))
        return ModelResponse(parts=[TextPart("ok")])

    Agent(FunctionModel(chat), capabilities=harness.manager.capabilities()).run_sync(
        message_history=seed(harness, messages))
    return received[0]


def _returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]


def _assert_read_outputs_are_pointers_and_the_newest_is_whole(sent: list[ModelMessage], batches: int) -> None:
    returns = _returns(sent)
    assert [p.tool_call_id for p in returns] == [f"call-{n}" for n in range(batches)], "nothing was dropped"
    assert isinstance(sent[0], ModelRequest) and isinstance(sent[0].parts[0], UserPromptPart)
    *read, newest = returns
    assert newest.content == _output(batches - 1), "the output the model has not seen yet goes out whole"
    for part in read:
        assert isinstance(part.metadata, dict) and "saved at" in str(part.content)
        path, (offset, lines) = Path(part.metadata[EVICTED_PATH_KEY]), part.metadata[SAVED_LINES_KEY]
        saved = path.read_text().splitlines()[offset: offset + lines]
        assert saved == _output(int(part.tool_call_id.split("-")[1])).splitlines(), "the saved copy is the original"


def test_a_turn_past_the_summary_threshold_pointers_its_read_outputs_instead_of_summarizing(tmp_path: Path) -> None:
    summarizer = SummarizerScript()
    harness = make_harness(tmp_path, window=16_000, summarizer=summarizer)
    batches = 5
    messages = _one_long_turn(batches)
    manager = harness.manager
    size = manager.accountant.estimate(messages, 0)
    assert manager.budget.at(manager.settings.summarize_threshold) <= size <= manager.limit, size

    sent = _send(harness, messages)

    finished = [e for e in harness.events if isinstance(e, CompactionFinished)]
    assert finished and all(e.strategy == "pointer" for e in finished), [(e.strategy, e.trigger) for e in finished]
    assert summarizer.prompts == [], "no lossy summary while read outputs could still become pointers"
    _assert_read_outputs_are_pointers_and_the_newest_is_whole(sent, batches)


def test_the_preflight_pointers_the_running_turn_before_dropping_any_message(tmp_path: Path) -> None:
    """Over the limit with no summary possible (the summarizer fails; tier 2's threshold for applying itself
    is out of reach): the pre-flight makes pointers of what the turn has read instead of dropping its start."""
    summarizer = SummarizerScript(error=RuntimeError("summarizer down"))
    harness = make_harness(tmp_path, window=16_000, summarizer=summarizer, min_savings_tokens=1_000_000)
    batches = 6
    messages = _one_long_turn(batches)
    assert harness.manager.accountant.estimate(messages, 0) > harness.manager.limit

    sent = _send(harness, messages)

    finished = [e for e in harness.events if isinstance(e, CompactionFinished)]
    assert [(e.strategy, e.trigger) for e in finished] == [("pointer", "preflight")]
    assert harness.manager.accountant.estimate(sent, harness.manager.fixed_tokens) <= harness.manager.limit
    _assert_read_outputs_are_pointers_and_the_newest_is_whole(sent, batches)


def test_when_pointers_cannot_avoid_the_summary_the_summarizer_reads_the_running_turn_whole(tmp_path: Path) -> None:
    """A long chat answer keeps the context over the summary threshold whatever tier 2 does: the running turn's
    outputs are then left whole for the summarizer (a 600-character preview would lose what it must keep)."""
    summarizer = SummarizerScript()
    harness = make_harness(tmp_path, window=16_000, summarizer=summarizer, compaction_threshold=0.3,
                           summarize_threshold=0.3, keep_recent_fraction=0.1)
    read = "".join(f"{n:04d} value=VAL-{n:05d}\n" for n in range(120)) + "last line: VAL-77777\n"
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("explain the design")]),
        ModelResponse(parts=[TextPart("The design, in detail. " * 1_000)]),
        ModelRequest(parts=[UserPromptPart("now read the two parts")]),
        ModelResponse(parts=[ToolCallPart("read_file", {"path": "part_0.log"}, "call-0")]),
        ModelRequest(parts=[ToolReturnPart("read_file", read, "call-0")]),
        ModelResponse(parts=[ToolCallPart("read_file", {"path": "part_1.log"}, "call-1")]),
        ModelRequest(parts=[ToolReturnPart("read_file", _output(1), "call-1")]),
    ]

    _send(harness, messages)

    finished = [e for e in harness.events if isinstance(e, CompactionFinished)]
    assert [e.strategy for e in finished] == ["summary"], [(e.strategy, e.trigger) for e in finished]
    assert len(summarizer.prompts) == 1 and "VAL-77777" in summarizer.prompts[0], \
        "the summarizer was given the read output whole, not a pointer's preview"

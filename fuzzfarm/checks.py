"""The promises, checked on one session's trace and what it left on disk.

Violations (each makes the farm fail): a request over window − answer reserve; a request without the todo list
or a /keep line; a change that ran in plan mode; more than one automatic
summary in a user turn; a failed turn; a manual compaction refused by the automatic guard; anything that
is not recoverable byte-exact from disk; a messages.json pydantic-ai cannot replay. Figures (reported, with
targets): retention of faithful summaries and the share of each overage the reversible tiers reclaimed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelRequest, ModelResponse, ToolReturnPart

from fuzzfarm.disk import (
    is_subsequence,
    load_history,
    response_key,
    summary_spans,
    tool_returns,
    user_prompts,
)
from fuzzfarm.driver import Trace
from tui.chain.estimate import text_tokens
from tui.chain.events import CompactionFailed, CompactionFinished, EvictedEvent, UsageEvent
from tui.chain.retention import extract_identifiers, retention_score
from tui.store.messages_file import MessagesFile
from tui.store.subagent_histories import subagent_history_file, subagent_numbers

EVICTED_PATH_KEY = "deep_tui_evicted_path"
SAVED_LINES_KEY = "deep_tui_saved_lines"
COMPACTION_THRESHOLD = 0.85


@dataclass
class SessionResult:
    """Violations and figures of one session."""

    seed: int
    window: int
    fault: str
    tool_heavy: bool
    violations: list[str] = field(default_factory=list)
    requests: int = 0
    subagent_requests: int = 0
    subagents: int = 0
    """Subagent histories found on disk (each must replay and hold every response its subagent was given)."""
    over_limit: int = 0
    max_fill: float = 0.0
    """Largest request ÷ (window − reserve)."""
    turns: int = 0
    multi_summary_turns: int = 0
    failed_turns: int = 0
    recoverable_checked: int = 0
    recoverable_failed: int = 0
    retention: list[float] = field(default_factory=list)
    reclaim: list[float] = field(default_factory=list)
    """Reversible share of each overage (1 for one the reversible tiers absorbed without a lossy step)."""
    reclaim_lossy: list[float] = field(default_factory=list)
    """The same for the overages that ended in an automatic lossy compaction only."""
    summaries: int = 0
    fallbacks: int = 0
    evictions: int = 0
    tier2: int = 0
    task_state_checked: int = 0
    """Requests that had a todo list or /keep lines to carry."""
    plan_refused: int = 0
    """Calls that change something refused by plan mode (none of them may have run)."""
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    """CPU time of the session's process (independent of how loaded the machine is)."""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _check_requests(trace: Trace, result: SessionResult) -> None:
    """Every request, the subagents' too: a subagent's against its own window (the session's model, so the
    session's window here)."""
    for record in trace.script.requests:
        result.requests += 1
        result.subagent_requests += bool(record.subagent)
        result.max_fill = max(result.max_fill, record.size / trace.limit)
        if record.size > trace.limit:
            result.over_limit += 1
            sender = f" (subagent {record.subagent[:40]!r})" if record.subagent else ""
            result.violations.append(f"request of {record.size:,} tokens in turn {record.turn}{sender} is over window "
                                     f"− reserve = {trace.limit:,}")


def _check_turns(trace: Trace, result: SessionResult) -> None:
    for log in trace.actions:
        if log.kind == "turn":
            result.turns += 1
            autos = [e for e in log.events if isinstance(e, CompactionFinished) and e.strategy == "summary"
                     and e.trigger == "auto"]
            if len(autos) > 1:
                result.multi_summary_turns += 1
                result.violations.append(f"turn {log.turn}: {len(autos)} automatic summaries")
            if log.failure is not None:
                result.failed_turns += 1
                result.violations.append(f"turn {log.turn} failed: {log.failure[:200]}")
        outcome = log.compact_result
        if isinstance(outcome, CompactionFailed) and "automatic summary" in outcome.reason:
            result.violations.append(f"manual /compact (action {log.index}) refused by the automatic guard: "
                                     f"{outcome.reason[:200]}")
        for event in log.events:
            if isinstance(event, CompactionFinished):
                result.summaries += event.strategy == "summary"
                result.fallbacks += event.strategy == "fallback"
                result.tier2 += event.strategy in ("mask", "pointer")
            elif isinstance(event, EvictedEvent):
                result.evictions += 1


def _recover(result: SessionResult, ok: bool, what: str) -> None:
    result.recoverable_checked += 1
    if not ok:
        result.recoverable_failed += 1
        result.violations.append(f"not recoverable: {what}")


def _saved_copy(path: Path, tool_name: str, call_id: str, length: int, offset: int) -> str | None:
    """The ``length`` characters saved for ``call_id`` in a tier-2 file from line ``offset`` on, right after its
    ``=== tool id`` header (a refused write's arguments may be saved in the same file under the same header)."""
    text = path.read_bytes().decode("utf-8")
    lines = text.split("\n")
    if not 0 < offset <= len(lines) or not lines[offset - 1].startswith(f"=== {tool_name} {call_id} ("):
        return None
    start = sum(len(line) + 1 for line in lines[:offset])
    return text[start: start + length]


def _lines(text: str) -> list[str]:
    """``text``'s lines as read_file numbers them: split at each newline, a line's final ``\r`` dropped."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _read_file_lines(path: Path, offset: int, lines: int) -> list[str]:
    """The same lines as ``read_file(path, offset, limit=lines)`` numbers them."""
    return _lines(path.read_bytes().decode("utf-8", errors="replace"))[offset: offset + lines]


def _check_disk(trace: Trace, result: SessionResult) -> list[Any]:
    root = trace.data_dir.root
    histories: dict[str, list[Any]] = {}
    for session_id in dict.fromkeys(trace.sessions):
        try:
            histories[session_id] = load_history(root, session_id)
        except (OSError, ValueError) as error:
            result.violations.append(f"messages.json of {session_id} does not replay: {error}")
            return []
    produced = [response_key(r) for r in trace.script.produced]
    for session_id, history in histories.items():
        wanted = produced[: trace.produced_at_switch.get(session_id, len(produced))]
        recorded = [response_key(m) for m in history if isinstance(m, ModelResponse)]
        found = is_subsequence(wanted, recorded)
        _recover(result, found == len(wanted),
                 f"{session_id}: model response {found} of {len(wanted)} is missing from messages.json")
    _check_subagents(trace, result)
    final = histories[trace.sessions[-1]]
    prompts = user_prompts(final)
    found = is_subsequence(trace.prompts, prompts)
    _recover(result, found == len(trace.prompts), f"user prompt {found} is missing from messages.json")
    originals = tool_returns(final)
    for call_id, seen in trace.script.first_seen.items():
        original = originals.get(call_id)
        _recover(result, original is not None and original.model_response_str() == seen.model_response_str(),
                 f"tool output {call_id} differs in messages.json from what the model was sent")
        _check_evicted(trace, result, call_id, seen)
    for call_id, masked in trace.script.masked.items():
        _check_masked(trace, result, call_id, masked, originals.get(call_id))
    return final


def _check_subagents(trace: Trace, result: SessionResult) -> None:
    """Each subagent's own messages.json replays, and together they hold every response subagents were given."""
    recorded: list[Any] = []
    for session_id in dict.fromkeys(trace.sessions):
        session_dir = trace.data_dir.session_dir(session_id)
        for number in subagent_numbers(session_dir):
            loaded = MessagesFile(subagent_history_file(session_dir, number)).load()
            result.subagents += 1
            if loaded.warning:
                result.violations.append(f"subagent {number} of {session_id}: {loaded.warning[:200]}")
            recorded.extend(response_key(m) for m in loaded.messages if isinstance(m, ModelResponse))
    have = set(recorded)
    for response in trace.script.subagent_produced:
        _recover(result, response_key(response) in have, "a subagent's model response is missing from its history")


def _check_evicted(trace: Trace, result: SessionResult, call_id: str, seen: ToolReturnPart) -> None:
    path = seen.metadata.get(EVICTED_PATH_KEY) if isinstance(seen.metadata, dict) else None
    if not isinstance(path, str):
        return
    raw = trace.raw_outputs.get(call_id)
    ok = isinstance(raw, str) and Path(path).is_file() and Path(path).read_bytes() == raw.encode("utf-8")
    _recover(result, ok, f"evicted output {call_id} at {path} is not the tool's output byte for byte")


def _check_masked(trace: Trace, result: SessionResult, call_id: str, masked: ToolReturnPart,
                  original: ToolReturnPart | None) -> None:
    metadata = masked.metadata if isinstance(masked.metadata, dict) else {}
    path = metadata.get(EVICTED_PATH_KEY)
    if original is None or not isinstance(path, str) or not Path(path).is_file():
        _recover(result, False, f"tier-2 output {call_id}: no original on record or no saved copy ({path})")
        return
    lines = metadata.get(SAVED_LINES_KEY)
    if isinstance(lines, list) and len(lines) == 2:
        text = original.model_response_str()
        expected = text if text.endswith("\n") else text + "\n"
        offset, count = int(lines[0]), int(lines[1])
        ok = _saved_copy(Path(path), original.tool_name, call_id, len(expected), offset) == expected
        _recover(result, _read_file_lines(Path(path), offset, count) == _lines(text),
                 f"tier-2 output {call_id}: read_file(offset={offset}, limit={count}) on {path} does not give the "
                 "original's lines")
    else:  # an evicted output compacted again: its pointer is the eviction's file
        raw = trace.raw_outputs.get(call_id)
        ok = isinstance(raw, str) and Path(path).read_bytes() == raw.encode("utf-8")
    _recover(result, ok, f"tier-2 output {call_id}: the saved copy at {path} is not the original")


TIER2_HEADER = re.compile(r"^=== \S+ (\S+) \(\d+ lines\) ===$", re.MULTILINE)
POINTER_PREVIEW_CHARS = 600


def tier2_call_ids(data_root: Path) -> set[str]:
    """Call ids whose outputs tier 2 saved (and made pointers of), from the saved files' headers."""
    ids: set[str] = set()
    for path in (data_root / "large_tool_results").glob("tier2-*"):
        ids.update(TIER2_HEADER.findall(path.read_text(encoding="utf-8", errors="replace")))
    return ids


def _as_held(message: Any, masked: dict[str, ToolReturnPart], pointered: set[str]) -> Any:
    """A recorded message as the working context held it when summarized: tool outputs tier 2 had made
    pointers of are the pointers as the model saw them, or (made and summarized in one step, never sent)
    their preview; their identifiers stay reachable through the saved copy the pointer names."""
    if not isinstance(message, ModelRequest) or not any(
            isinstance(p, ToolReturnPart) and p.tool_call_id in pointered for p in message.parts):
        return message
    parts = []
    for part in message.parts:
        if isinstance(part, ToolReturnPart) and part.tool_call_id in pointered:
            part = masked.get(part.tool_call_id) or replace(
                part, content=part.model_response_str()[:POINTER_PREVIEW_CHARS])
        parts.append(part)
    return replace(message, parts=parts)


def _retention(trace: Trace, result: SessionResult, final: list[Any]) -> None:
    """Identifiers of each span a faithful summary replaced (as the context held it) found in the summary."""
    if trace.spec.fault != "faithful":
        return
    pointered = tier2_call_ids(trace.data_dir.root) | set(trace.script.masked)
    for span in summary_spans(final):
        if span.strategy != "summary" or not span.span:
            continue
        identifiers = extract_identifiers([_as_held(m, trace.script.masked, pointered) for m in span.span])
        if identifiers:
            result.retention.append(retention_score(span.text, identifiers)[0])


def _reclaim(trace: Trace, result: SessionResult) -> None:
    """The reversible share of each overage (see the report's definition).

    The session is cut into spans at each lossy compaction (summary or fallback). In a span, ``reversible`` is
    what eviction and tier 2 reclaimed so far, and the context without them would have been its measured size
    + ``reversible``: the span holds an overage when that went above the compaction threshold. A span ended by
    an automatic lossy compaction scores reversible ÷ (reversible + how far the context still was above the
    threshold when it fired); any other span with an overage (it ended at a manual compaction or with the
    session) was absorbed by the reversible tiers alone and scores 1.
    """
    threshold = COMPACTION_THRESHOLD * trace.compaction_limit
    reversible = 0
    peak = 0

    def absorbed() -> None:
        if reversible > 0 and peak > threshold:
            result.reclaim.append(1.0)

    for log in trace.actions:
        for event in log.events:
            if isinstance(event, UsageEvent):
                peak = max(peak, event.tokens + reversible)
            elif isinstance(event, EvictedEvent) and not event.error:
                seen = trace.script.first_seen.get(event.tool_call_id)
                preview = text_tokens(seen.model_response_str()) if seen is not None else 0
                reversible += max(0, event.tokens - preview)
            elif isinstance(event, CompactionFinished) and event.strategy in ("mask", "pointer"):
                reversible += event.tokens_saved
            elif isinstance(event, CompactionFinished):
                overage = reversible + event.tokens_before - threshold
                if event.trigger == "manual":
                    absorbed()
                elif overage > 0:
                    share = min(1.0, reversible / overage)
                    result.reclaim.append(share)
                    result.reclaim_lossy.append(share)
                reversible = peak = 0
    absorbed()


def _check_task_state(trace: Trace, result: SessionResult) -> None:
    """The todo list and the /keep lines are in every request's instructions; plan mode ran no change."""
    for miss in trace.script.task_misses:
        result.violations.append(f"a request lacked the task state ({miss})")
    result.task_state_checked = len(trace.script.requests) if trace.script.keep_lines or trace.script.todo_lines else 0
    for call_id, tool in trace.plan_mode_calls.items():
        result.plan_refused += 1
        if call_id in trace.raw_outputs:
            result.violations.append(f"{tool} ran in plan mode (call {call_id})")


def check(trace: Trace) -> SessionResult:
    """Every check on one session (its files must still be on disk)."""
    spec = trace.spec
    result = SessionResult(spec.seed, spec.window, spec.fault, spec.tool_heavy)
    _check_requests(trace, result)
    _check_turns(trace, result)
    _check_task_state(trace, result)
    final = _check_disk(trace, result)
    if final:
        _retention(trace, result, final)
    _reclaim(trace, result)
    return result


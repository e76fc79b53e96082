"""A subagent's own context chain: a 5 MB log read by a subagent adds only its answer to the parent's context, and
a subagent on a small window never sends a request over it (its chain evicts, compacts, cuts on its own window)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.agent.subagent_support import (
    Script,
    is_subagent,
    loopback_session,
    run_turn,
    small_window,
    task_call,
    tool_results,
)
from tests.support.openai_server import ChatServerState, Reply, openai_chat_server
from tui.agent.turn_events import TurnFinished
from tui.chain.events import SubagentRan, UsageEvent, event_from_record

ANSWER = "The log holds 3 ERROR lines: at lines 10, 20000 and 90000 (disk full)."


def write_log(path: Path, megabytes: int = 5) -> None:
    line = "2026-12-02 07:00:00 INFO request served in 12 ms from worker 7 of the pool\n"
    lines = [line] * (megabytes * 1_000_000 // len(line))
    for number in (10, len(lines) // 3, len(lines) - 5):
        lines[number] = "2026-12-02 07:00:00 ERROR disk full\n"
    path.write_text("".join(lines))


def reads_then_answers(reads: int) -> Any:
    """A subagent reading big.log page by page ``reads`` times, then answering."""
    def subagent(payload: dict[str, Any]) -> Reply:
        done = len(tool_results(payload))
        if done < reads:
            args = json.dumps({"path": "big.log", "offset": done * 4000, "limit": 4000})
            return Reply(tool_calls=((f"call_read_{done}", "read_file", args),))
        return Reply(text=ANSWER)
    return subagent


def test_a_5mb_log_read_by_a_subagent_adds_only_its_answer_to_the_parent(tmp_path: Path) -> None:
    call = task_call("call_log", "read the server log", "Read big.log and report every ERROR line.")
    script = Script(parent=[Reply(tool_calls=(call,)), Reply(text="done")], subagent=reads_then_answers(3))
    (tmp_path / "work").mkdir()
    write_log(tmp_path / "work" / "big.log")
    with openai_chat_server(ChatServerState(responder=script)) as (base_url, state):
        async def scenario() -> None:
            async with loopback_session(tmp_path, base_url) as runtime:
                events = await run_turn(runtime, "what went wrong in big.log?")
                assert isinstance(events[-1], TurnFinished), events[-1]
                ran = [event for event in runtime.past_events() if isinstance(event, SubagentRan)]
                assert ran[0].outcome == "finished" and ran[0].requests == 4

        asyncio.run(scenario())
    parent = [payload for payload in state.requests if not is_subagent(payload)]
    subagent = [payload for payload in state.requests if is_subagent(payload)]
    assert len(parent) == 2 and len(subagent) == 4
    assert sum(len(result) for payload in subagent for result in tool_results(payload)[-1:]) > 100_000
    growth = len(json.dumps(parent[1]["messages"])) - len(json.dumps(parent[0]["messages"]))
    call_and_answer = len(call[2]) + len(ANSWER)
    assert tool_results(parent[1]) == [ANSWER]
    assert growth <= call_and_answer + 300, (growth, call_and_answer)  # + the JSON framing of one call and result


def test_a_subagent_on_a_small_window_never_sends_a_request_over_it(tmp_path: Path) -> None:
    window = 16_000
    call = task_call("call_small", "read the log", "Read big.log in pages and report every ERROR line.")
    script = Script(parent=[Reply(tool_calls=(call,)), Reply(text="done")], subagent=reads_then_answers(8))
    (tmp_path / "work").mkdir()
    write_log(tmp_path / "work" / "big.log", megabytes=1)
    with openai_chat_server(ChatServerState(responder=script)) as (base_url, state):
        async def scenario() -> None:
            async with loopback_session(tmp_path, base_url, settings=small_window(base_url, window)) as runtime:
                events = await run_turn(runtime, "what went wrong?")
                assert isinstance(events[-1], TurnFinished), events[-1]
                ran = [event for event in runtime.past_events() if isinstance(event, SubagentRan)]
                assert ran[0].outcome == "finished" and ran[0].window == window
                sub_events = (runtime.handle.directory / "subagents" / "1" / "events.jsonl").read_text().splitlines()
                usage = [event for event in map(event_from_record, map(json.loads, sub_events))
                         if isinstance(event, UsageEvent)]
                assert usage and all(event.tokens <= event.limit for event in usage if not event.final)
                assert not [line for line in (runtime.handle.directory / "events.jsonl").read_text().splitlines()
                            if '"kind": "usage"' in line and f'"window": {window}' in line
                            and json.loads(line)["tokens"] > window]

        asyncio.run(scenario())
    subagent = [payload for payload in state.requests if is_subagent(payload)]
    assert len(subagent) == 9
    read_chars = 8 * 4000 * 70  # what the eight pages hold in all, far more than the window
    assert read_chars > 4 * window
    for payload in subagent:  # what was sent: well under the window's worth of characters
        assert len(json.dumps(payload)) < 4 * window


def test_a_prompt_too_big_for_the_subagents_window_is_refused_with_why(tmp_path: Path) -> None:
    call = task_call("call_big", "read this", "x " * 20_000)
    script = Script(parent=[Reply(tool_calls=(call,)), Reply(text="ok")])
    with openai_chat_server(ChatServerState(responder=script)) as (base_url, state):
        async def scenario() -> None:
            async with loopback_session(tmp_path, base_url, settings=small_window(base_url, 16_000)) as runtime:
                await run_turn(runtime, "go")
                ran = [event for event in runtime.past_events() if isinstance(event, SubagentRan)]
                assert ran[0].outcome == "failed" and "point it to files" in ran[0].reason

        asyncio.run(scenario())
    assert not any(is_subagent(payload) for payload in state.requests)
    assert "more than half of what the subagent's window lets a request carry" in tool_results(state.requests[-1])[0]

"""The ``task`` tool through the loopback OpenAI server: a subagent's requests carry none of the parent's history,
only its answer enters the parent's context, its history is kept in its own messages.json, its cost adds to the
session's, and the parent's events say what it did."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from tests.agent.subagent_support import (
    Script,
    is_subagent,
    loopback_session,
    run_turn,
    task_call,
    tool_results,
    user_text,
)
from tests.support.openai_server import ChatServerState, Reply, openai_chat_server
from tui.agent.turn_events import SubagentActivity, ToolCallFinished, TurnFinished
from tui.chain.events import SubagentRan
from tui.store.subagent_histories import subagent_history_file, subagent_numbers


def test_subagent_requests_carry_none_of_the_parents_history(tmp_path: Path) -> None:
    import asyncio

    script = Script(parent=[Reply(text="noted"),
                            Reply(tool_calls=(task_call("call_t1", "find the answer", "SUBTASK: what is six times seven?"),)),
                            Reply(text="The subagent says 42.")],
                    subagent=lambda payload: Reply(text="SUBAGENT-ANSWER: 42"))
    with openai_chat_server(ChatServerState(responder=script)) as (base_url, state):
        async def scenario() -> None:
            async with loopback_session(tmp_path, base_url) as runtime:
                await run_turn(runtime, "remember PARENT-SECRET-TOKEN for later")
                events = await run_turn(runtime, "ask a subagent")
                assert isinstance(events[-1], TurnFinished), events[-1]
                activity = [event for event in events if isinstance(event, SubagentActivity)]
                assert activity and activity[-1].state == "finished", events
                assert {event.call_id for event in activity} == {"call_t1"}
                assert activity[-1].number == 1 and activity[-1].name == "general-purpose"
                finished = [event for event in events if isinstance(event, ToolCallFinished)]
                assert finished[-1].tool_name == "task" and "SUBAGENT-ANSWER: 42" in finished[-1].preview
                ran = [event for event in runtime.past_events() if isinstance(event, SubagentRan)]
                assert len(ran) == 1 and ran[0].outcome == "finished" and ran[0].requests == 1
                assert ran[0].answer_chars == len("SUBAGENT-ANSWER: 42")
                session_dir = runtime.handle.directory
                assert subagent_numbers(session_dir) == [1]
                history = subagent_history_file(session_dir, 1).read_text()
                assert "SUBTASK: what is six times seven?" in history and "SUBAGENT-ANSWER: 42" in history
                assert "PARENT-SECRET-TOKEN" not in history
                events_file = (session_dir / "events.jsonl").read_text()
                assert '"kind": "subagent"' in events_file
                # the loopback model has no price: the session counts all four requests, the subagent's among them
                assert runtime.session_cost.unpriced_requests == 4 and ran[0].cost_usd is None
                breakdown = runtime.context_breakdown()
                assert [event.number for event in breakdown.subagents] == [1]
                assert runtime.subagent_definitions().listing() == [] and runtime.running_subagents() == []

        asyncio.run(scenario())
    sub_requests = [payload for payload in state.requests if is_subagent(payload)]
    parent_requests = [payload for payload in state.requests if not is_subagent(payload)]
    assert len(sub_requests) == 1
    assert "PARENT-SECRET-TOKEN" not in json.dumps(sub_requests[0])
    assert user_text(sub_requests[0]) == "SUBTASK: what is six times seven?"
    assert "task" not in _tool_names(sub_requests[0])  # no nesting
    assert {"read_file", "grep", "execute"} <= _tool_names(sub_requests[0])
    assert "task" in _tool_names(parent_requests[0])
    assert tool_results(parent_requests[-1]) == ["SUBAGENT-ANSWER: 42"]


def _tool_names(payload: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in payload.get("tools", [])}


def test_several_task_calls_run_at_once_four_at_most(tmp_path: Path) -> None:
    import asyncio
    import threading

    lock = threading.Lock()
    four_in_flight = threading.Event()
    seen = {"in_flight": 0, "most": 0, "answered": 0}

    def subagent(payload: dict[str, Any]) -> Reply:
        with lock:
            seen["in_flight"] += 1
            seen["most"] = max(seen["most"], seen["in_flight"])
            if seen["in_flight"] == 4:
                four_in_flight.set()
        four_in_flight.wait(30)  # the first four wait for one another: they are in flight together
        with lock:
            seen["in_flight"] -= 1
            seen["answered"] += 1
        return Reply(text=f"answer to {user_text(payload)}")

    calls = tuple(task_call(f"call_{n}", f"part {n}", f"PART-{n}") for n in range(5))
    script = Script(parent=[Reply(tool_calls=calls), Reply(text="all five done")], subagent=subagent)
    with openai_chat_server(ChatServerState(responder=script)) as (base_url, state):
        async def scenario() -> None:
            async with loopback_session(tmp_path, base_url) as runtime:
                events = await run_turn(runtime, "split the work")
                assert isinstance(events[-1], TurnFinished), events[-1]
                ran = [event for event in runtime.past_events() if isinstance(event, SubagentRan)]
                assert sorted(event.number for event in ran) == [1, 2, 3, 4, 5]
                assert all(event.outcome == "finished" for event in ran)

        asyncio.run(scenario())
    assert seen["most"] == 4 and seen["answered"] == 5
    assert sorted(tool_results(state.requests[-1])) == sorted(f"answer to PART-{n}" for n in range(5))


def test_cancelling_a_subagent_tells_the_parent(tmp_path: Path) -> None:
    import asyncio
    import threading

    release = threading.Event()

    def subagent(payload: dict[str, Any]) -> Reply:
        release.wait(30)  # hangs until the test ends: only a cancel ends the subagent sooner
        return Reply(text="too late")

    script = Script(parent=[Reply(tool_calls=(task_call("call_c", "slow search", "search slowly"),)),
                            Reply(text="understood")], subagent=subagent)
    try:
        with openai_chat_server(ChatServerState(responder=script)) as (base_url, state):
            async def scenario() -> None:
                async with loopback_session(tmp_path, base_url) as runtime:
                    def on_event(event: object) -> None:
                        if isinstance(event, SubagentActivity) and event.state == "running":
                            assert runtime.subagents.cancel(event.number)

                    events = await run_turn(runtime, "look it up", on_event)
                    assert isinstance(events[-1], TurnFinished), events[-1]
                    states = [event.state for event in events if isinstance(event, SubagentActivity)]
                    assert states[-1] == "cancelled"
                    ran = [event for event in runtime.past_events() if isinstance(event, SubagentRan)]
                    assert [event.outcome for event in ran] == ["cancelled"]
                    assert not runtime.subagents.cancel(1)  # no longer running
                    history = subagent_history_file(runtime.handle.directory, 1).read_text()
                    assert "search slowly" in history  # what it was given is kept

            asyncio.run(scenario())
            parent_last = [payload for payload in state.requests if not is_subagent(payload)][-1]
            assert "The user cancelled subagent 1 (slow search)" in tool_results(parent_last)[0]
    finally:
        release.set()


def test_an_unknown_subagent_type_is_an_error_the_model_reads(tmp_path: Path) -> None:
    import asyncio

    script = Script(parent=[Reply(tool_calls=(task_call("call_u", "x", "y", subagent_type="nobody"),)),
                            Reply(text="ok")])
    with openai_chat_server(ChatServerState(responder=script)) as (base_url, state):
        async def scenario() -> None:
            async with loopback_session(tmp_path, base_url) as runtime:
                await run_turn(runtime, "go")
                assert not [event for event in runtime.past_events() if isinstance(event, SubagentRan)]

        asyncio.run(scenario())
    result = tool_results(state.requests[-1])[0]
    assert "there is no subagent type 'nobody'" in result and "general-purpose" in result
    assert not any(is_subagent(payload) for payload in state.requests)


def test_what_a_subagent_read_is_searchable_from_the_parent(tmp_path: Path) -> None:
    import asyncio

    def subagent(payload: dict[str, Any]) -> Reply:
        if not tool_results(payload):
            return Reply(tool_calls=(("call_r", "read_file", json.dumps({"path": "notes.txt"})),))
        return Reply(text="the notes name a marker")

    def parent(payload: dict[str, Any]) -> Reply:
        results = tool_results(payload)
        if "read the notes" in user_text(payload) and not results:
            return Reply(tool_calls=(task_call("call_n", "read the notes", "read notes.txt"),))
        if "which marker" in user_text(payload):
            if len(results) == 1:
                return Reply(tool_calls=(("call_s", "search_conversation_history",
                                          json.dumps({"query": "ZEBRA-MARKER-991"})),))
            if len(results) == 2:
                return Reply(tool_calls=(("call_m", "read_conversation_message",
                                          json.dumps({"message": 3, "subagent": 1})),))
        return Reply(text="ok")

    def respond(payload: dict[str, Any]) -> Reply:
        return subagent(payload) if is_subagent(payload) else parent(payload)

    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.txt").write_text("the marker is ZEBRA-MARKER-991\n")
    with openai_chat_server(ChatServerState(responder=respond)) as (base_url, state):
        async def scenario() -> None:
            async with loopback_session(tmp_path, base_url) as runtime:
                await run_turn(runtime, "read the notes")
                await run_turn(runtime, "which marker was it?")

        asyncio.run(scenario())
    search, read = tool_results(state.requests[-1])[-2:]
    assert "subagent 1 of this session" in search and "ZEBRA-MARKER-991" in search
    assert "read_conversation_message(message=3, subagent=1)" in search
    assert "subagent 1" in read and "the marker is ZEBRA-MARKER-991" in read


def test_a_failing_subagent_is_an_error_the_parent_reads(tmp_path: Path) -> None:
    import asyncio

    from tests.agent.subagent_support import GUARD
    from tui.base.config import ProviderSettings, Settings

    def subagent(payload: dict[str, Any]) -> Reply:
        raise ConnectionError("the loopback drops the subagent's request")  # the connection closes, no answer

    script = Script(parent=[Reply(tool_calls=(task_call("call_f", "doomed", "try"),)), Reply(text="it failed")],
                    subagent=subagent)
    with openai_chat_server(ChatServerState(responder=script)) as (base_url, state):
        async def scenario() -> None:
            settings = Settings(base_url=base_url, provider=ProviderSettings(read_timeout=GUARD, retries=0))
            async with loopback_session(tmp_path, base_url, settings=settings) as runtime:
                events = await run_turn(runtime, "try it")
                assert isinstance(events[-1], TurnFinished), events[-1]
                ran = [event for event in runtime.past_events() if isinstance(event, SubagentRan)]
                assert [event.outcome for event in ran] == ["failed"] and ran[0].reason
                assert "try" in subagent_history_file(runtime.handle.directory, 1).read_text()

        asyncio.run(scenario())
    result = tool_results(state.requests[-1])[0]
    assert "subagent 1 (doomed) failed:" in result


def test_cancelling_the_parents_turn_stops_and_records_its_subagents(tmp_path: Path) -> None:
    import asyncio
    import threading

    release = threading.Event()

    def subagent(payload: dict[str, Any]) -> Reply:
        release.wait(30)
        return Reply(text="too late")

    script = Script(parent=[Reply(tool_calls=(task_call("call_a", "first", "one"), task_call("call_b", "second", "two")))],
                    subagent=subagent)
    try:
        with openai_chat_server(ChatServerState(responder=script)) as (base_url, _state):
            async def scenario() -> None:
                async with loopback_session(tmp_path, base_url) as runtime:
                    running: set[int] = set()
                    both = asyncio.Event()

                    async def drive() -> None:
                        async for event in runtime.run_turn("go"):
                            if isinstance(event, SubagentActivity) and event.state == "running":
                                running.add(event.number)
                                if len(running) == 2:
                                    both.set()

                    turn = asyncio.create_task(drive())
                    await asyncio.wait_for(both.wait(), 30)
                    turn.cancel()  # Esc on the whole turn
                    with contextlib.suppress(asyncio.CancelledError):
                        await turn
                    ran = [event for event in runtime.past_events() if isinstance(event, SubagentRan)]
                    assert sorted(event.outcome for event in ran) == ["cancelled", "cancelled"]
                    assert all("turn was cancelled" in event.reason for event in ran)
                    assert runtime.running_subagents() == []
                    for number in (1, 2):
                        assert subagent_history_file(runtime.handle.directory, number).exists()

            asyncio.run(scenario())
    finally:
        release.set()

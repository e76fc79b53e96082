"""The window is never exceeded, measured as the server sees the request (issue 14's four cases).

Each case replays what was seen from outside: `deep-tui run --continue` turn after turn (a new runtime
per turn, as a new process would open the session), reads of 1–200 KB files, greps and chat, against a
loopback OpenAI chat server that counts characters / 4 of each request's messages plus tool definitions
— with a summarizer that times out, inflates, or fails its second pass. No request may carry more than
window − answer reserve.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from pydantic_ai import models
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.chain.counting_server import counting_server
from tui.agent.models.choice import ModelChoice, build_model
from tui.agent.session.factory import SessionRuntime
from tui.agent.turn_events import TurnFailed
from tui.base.config import ContextSettings, Settings
from tui.base.paths import DataDir
from tui.chain.budget import WindowBudget
from tui.chain.events import ChainEvent, CompactionFailed, CompactionFinished
from tui.store import SessionStore

FILE_SIZES_KB = {"tiny.txt": 1, "small.txt": 4, "mid.txt": 12, "notes.txt": 6, "big.txt": 60, "huge.txt": 200}
PROMPTS = ["read tiny.txt", "read notes.txt", "grep value=", "what did we learn so far?", "read mid.txt",
           "read small.txt", "read big.txt", "grep path=src", "read notes.txt", "summarize the modules please",
           "read mid.txt", "read huge.txt", "read small.txt", "read tiny.txt", "grep ERR-", "read notes.txt",
           "read mid.txt", "and the next step?"]


def _write_files(workdir: Path) -> None:
    for name, kilobytes in FILE_SIZES_KB.items():
        lines = []
        number = 0
        while sum(len(line) for line in lines) < kilobytes * 1024:
            lines.append(f"line {number} of {name}: value=VAL-{number:05d} path=src/mod_{number % 97}.py "
                         f"{'ERR-' + str(number) if number % 50 == 0 else 'ok'} \"quoted\\ttext\"\n")
            number += 1
        (workdir / name).write_text("".join(lines))


def summarizer(kind: str) -> Model:
    """A scripted summarizer: ``timeout`` sleeps past the limit, ``inflate`` answers longer than its input,
    ``second-fails`` answers once (missing identifiers) and then fails."""
    calls = {"n": 0}

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls["n"] += 1
        if kind == "timeout":
            await asyncio.sleep(5)
        if kind == "inflate":
            prompt = "".join(str(p.content) for m in messages for p in m.parts if isinstance(p, UserPromptPart))
            return ModelResponse(parts=[TextPart("## Session intent\n" + prompt * 2)])
        if kind == "second-fails" and calls["n"] % 2 == 0:
            raise RuntimeError("HTTP 500 from the summarizer")
        return ModelResponse(parts=[TextPart("## Session intent\nthe user reads files; nothing exact kept")])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield (await answer(messages, info)).parts[0].content  # type: ignore[union-attr]

    return FunctionModel(answer, stream_function=stream, model_name=f"summarizer-{kind}")


def run_continue_turns(tmp_path: Path, base_url: str, *, window: int, summarizer_kind: str,
                       on_event: Callable[[ChainEvent], None]) -> list[str]:
    """One runtime per prompt (as `deep-tui run --continue` does); returns failures."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    _write_files(workdir)
    data_dir = DataDir(tmp_path / "data")
    settings = Settings(context=ContextSettings(window=window, summarizer_timeout=0.3))
    store = SessionStore(data_dir)
    created = store.create(model="openai-chat:counting")
    session_id = created.id
    created.close()
    failures: list[str] = []
    for prompt in PROMPTS:
        handle = store.open(session_id)
        runtime = SessionRuntime(settings=settings, data_dir=data_dir, workdir=workdir, handle=handle,
                                 chat_model=build_model("openai-chat:counting", base_url=base_url),
                                 choice=ModelChoice("openai-chat:counting", "flag"),
                                 summarizer_model=summarizer(summarizer_kind))
        unsubscribe = runtime.subscribe(on_event)

        async def turn() -> None:
            async for event in runtime.run_turn(prompt):  # noqa: B023 - consumed at once
                if isinstance(event, TurnFailed):
                    failures.append(event.message)
            await runtime.aclose()  # noqa: B023

        with models.override_allow_model_requests(True):  # the loopback server only: no network
            asyncio.run(turn())
        unsubscribe()
    return failures


@pytest.mark.parametrize(("window", "summarizer_kind"), [
    (8_000, "timeout"),        # every summary times out: the fallback alone must keep the promise
    (12_000, "inflate"),       # the summary is rejected (it would grow the context)
    (32_000, "timeout"),       # a slow summarizer at a larger window
    (12_000, "second-fails"),  # the second pass fails half the time
])
def test_no_request_exceeds_the_window_less_the_answer_reserve(tmp_path: Path, window: int,
                                                               summarizer_kind: str) -> None:
    events: list[ChainEvent] = []
    with counting_server() as (base_url, state):
        failures = run_continue_turns(tmp_path, base_url, window=window, summarizer_kind=summarizer_kind,
                                      on_event=events.append)
    assert not failures, failures
    limit = window - WindowBudget.for_window(window, ContextSettings(window=window)).reserve
    assert state.sizes and max(state.sizes) <= limit, (
        f"largest request {max(state.sizes):,} > {limit:,}: {sorted(state.sizes)[-5:]}")
    assert max(state.sizes) > window // 2, "the case must actually fill the window to prove anything"
    assert any(isinstance(e, (CompactionFinished, CompactionFailed)) for e in events)


def test_a_failed_second_pass_keeps_the_first_summary(tmp_path: Path) -> None:
    events: list[ChainEvent] = []
    with counting_server() as (base_url, _state):  # 8k: at 12k tier 2 now absorbs every overage, no summary runs
        run_continue_turns(tmp_path, base_url, window=8_000, summarizer_kind="second-fails", on_event=events.append)
    summaries = [e for e in events if isinstance(e, CompactionFinished) and e.strategy == "summary"]
    assert summaries, "the first pass's summary is applied even though the second pass failed"
    assert all(e.retention_score is not None and e.missing_identifiers for e in summaries)
    assert not [e for e in events if isinstance(e, CompactionFailed) and "500" in e.reason]


def test_calibration_is_learned_from_the_provider_and_kept_for_the_next_run(tmp_path: Path) -> None:
    with counting_server() as (base_url, _state):
        run_continue_turns(tmp_path, base_url, window=32_000, summarizer_kind="inflate", on_event=lambda e: None)
    saved = (tmp_path / "data" / "token_calibration.json").read_text()
    assert "openai:counting" in saved or "openai-chat:counting" in saved or "counting" in saved

"""Through a real session: events.jsonl, the recorded summary, and resuming from it."""

from __future__ import annotations

import json
from pathlib import Path

from tui.agent.session.factory import RuntimeFactory, SessionRequest
from tui.agent.turn_events import TurnFinished
from tui.base.config import ContextSettings, Settings
from tui.base.paths import DataDir
from tui.chain.summary_message import summary_info


async def run_turn(runtime, prompt: str) -> None:  # type: ignore[no-untyped-def]
    events = [event async for event in runtime.run_turn(prompt)]
    assert isinstance(events[-1], TurnFinished), events[-1]


async def test_summary_is_recorded_and_resume_starts_from_it(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for number in range(6):
        (work / f"f{number}.txt").write_text("".join(f"file {number} row {r}\n" for r in range(150)))
    settings = Settings(context=ContextSettings(window=6_000, large_result_tokens=400, compaction_threshold=0.5,
                                                summarize_threshold=0.6, protect_recent_tokens=300,
                                                keep_recent_fraction=0.1,
                                                min_savings_tokens=50))
    factory = RuntimeFactory.create(settings=settings, data_dir=DataDir(tmp_path / "data"), workdir=work,
                                    model_flag="offline")
    runtime = await factory.open_request(SessionRequest())
    for number in range(6):
        await run_turn(runtime, f"read f{number}.txt")
    session_id = runtime.info.session_id
    count = runtime.history_count()
    await runtime.aclose()

    directory = tmp_path / "data" / "sessions" / session_id
    records = [json.loads(line) for line in (directory / "events.jsonl").read_text().splitlines()]
    kinds = [record["kind"] for record in records]
    assert "evicted" in kinds and "compaction_finished" in kinds
    for index, kind in enumerate(kinds):
        if kind == "compaction_started":
            assert kinds[index + 1] in ("compaction_finished", "compaction_failed")
        if kind == "compaction_finished":
            assert kinds[index + 1] == "usage"
    summaries = [r for r in records if r["kind"] == "compaction_finished" and r["strategy"] in ("summary", "fallback")]
    fields = ("kind", "strategy", "reason", "tokens_before", "tokens_after", "tokens")
    assert summaries, "\n".join(str(tuple(r.get(f) for f in fields)) for r in records if r["kind"] != "usage")
    meta = json.loads((directory / "session.json").read_text())
    assert meta["compressions"] == kinds.count("compaction_finished") and meta["message_count"] == count

    reopened = await factory.open_session(session_id[:5])
    try:
        first = reopened.messages[0]
        assert summary_info(first) is not None, "resume starts from the newest summary"
        assert summary_info(first)["kept_from"] is not None  # type: ignore[index]
        assert len(reopened.messages) < count
        await run_turn(reopened, "ls")
        assert reopened.history_count() > count
    finally:
        await reopened.aclose()


async def test_memory_writes_are_events(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    factory = RuntimeFactory.create(settings=Settings(), data_dir=DataDir(tmp_path / "data"), workdir=work,
                                    model_flag="offline")
    runtime = await factory.open_request(SessionRequest())
    try:
        await run_turn(runtime, "remember the staging key rotates monthly")
        kinds = [event.kind for event in runtime.past_events()]
        assert "memory_changed" in kinds
        assert "rotates monthly" in runtime.memory_path.read_text()
    finally:
        await runtime.aclose()


async def test_a_rejected_summary_s_back_off_outlives_the_process(tmp_path: Path) -> None:
    """Issue 29: a summary rejected for freeing too little was paid for again by every `run --continue` (the
    back-off lived in memory): the wait is kept in session.json, and the next process honours it."""
    from collections.abc import AsyncIterator

    from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

    from tui.agent.models.choice import choose_model
    from tui.chain.events import CompactionFailed

    prompts: list[str] = []

    def summarize(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = str(messages[-1].parts[-1].content)
        prompts.append(prompt)
        return ModelResponse(parts=[TextPart("## Session intent\n" + "much ado " * (len(prompt) // 5))])

    async def chat(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        yield "noted."

    work = tmp_path / "work"
    work.mkdir()

    def factory() -> RuntimeFactory:  # a new process each time, as `deep-tui run --continue` is
        return RuntimeFactory(settings=Settings(context=ContextSettings(window=6_000)),
                              data_dir=DataDir(tmp_path / "data"), workdir=work,
                              choice=choose_model("openai-chat:gpt-4o", None),
                              chat_model=FunctionModel(summarize, stream_function=chat, model_name="scripted"))

    first = factory()
    handle = first.store.create(model="scripted")
    handle.append_messages([message for number in range(17) for message in (
        ModelRequest(parts=[UserPromptPart(f"question {number}: look at src/mod{number}.py " + "in mind " * 30)]),
        ModelResponse(parts=[TextPart(f"answer {number} " * 40)]))])
    handle.close()
    runtime = await first.open_session(handle.id)
    failures: list[object] = []
    runtime.subscribe(lambda event: failures.append(event) if isinstance(event, CompactionFailed) else None)
    await run_turn(runtime, "go on")
    await runtime.aclose()
    assert failures and prompts, "a summary was paid for and rejected"
    paid = len(prompts)
    saved = json.loads((tmp_path / "data" / "sessions" / handle.id / "session.json").read_text())
    assert saved["summary_retry_from"] > 0

    again = await factory().open_session(handle.id)
    await run_turn(again, "and on")
    await again.aclose()
    assert len(prompts) == paid, "the next process did not pay for the same rejected summary again"

"""Cost per request, turn, session and compaction, from genai-prices; unknown prices never read as $0."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path

import pytest
from genai_prices import Usage, calc_price
from pydantic_ai import models
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from pydantic_ai.usage import RequestUsage

from tests.support.openai_server import ChatServerState, openai_chat_server
from tui.agent.models.choice import build_model, choose_model
from tui.agent.models.cost import price_usage
from tui.agent.models.cost_events import CostUpdated
from tui.agent.session.runtime import SessionRuntime
from tui.agent.turn_events import TurnFinished
from tui.app.screens.compact_dialog import describe_result
from tui.base.config import ContextSettings, Settings
from tui.base.paths import DataDir
from tui.chain.event_text import describe_event
from tui.chain.events import CompactionFinished
from tui.store.cost_totals import CostTotals
from tui.store.session_store import SessionStore
from tui.text.cost_text import compaction_cost_text, format_usd, totals_details, totals_label


def test_a_request_is_split_into_input_cached_input_and_output() -> None:
    cost = price_usage(RequestUsage(input_tokens=1_000, cache_read_tokens=200, output_tokens=500),
                       "claude-sonnet-4-5", provider_name="anthropic")
    assert cost is not None
    assert cost.input_usd == pytest.approx(800 * 3e-6)  # uncached input at $3/M
    assert cost.cached_input_usd == pytest.approx(200 * 0.3e-6)  # cache reads at $0.30/M
    assert cost.output_usd == pytest.approx(500 * 15e-6)
    whole = calc_price(Usage(input_tokens=1_000, cache_read_tokens=200, output_tokens=500), "claude-sonnet-4-5",
                       provider_id="anthropic")
    assert Decimal(str(cost.total_usd)).quantize(Decimal("1e-9")) == whole.total_price.quantize(Decimal("1e-9"))


def test_what_cannot_be_priced_is_unknown_and_the_offline_model_is_free() -> None:
    usage = RequestUsage(input_tokens=1_000, output_tokens=10)
    assert price_usage(usage, "no-such-model-anywhere", provider_name="anthropic") is None
    assert price_usage(usage, None) is None
    # A local server's model is not priced as whichever cloud provider has a model of that name.
    assert price_usage(usage, "llama-3.3-70b-versatile", provider_name="openai",
                       provider_url="http://127.0.0.1:8000/v1") is None
    assert price_usage(usage, "offline").total_usd == 0.0  # type: ignore[union-attr]
    assert price_usage(RequestUsage(input_tokens=5, unmeasured_requests=1), "gpt-4o", provider_name="openai") is None


def test_labels_never_show_a_wrong_zero() -> None:
    assert totals_label(None) == "–"
    unknown = CostTotals()
    unknown.add_unpriced()
    assert totals_label(unknown) == "price unknown"
    partial = CostTotals()
    partial.add(input_usd=0.4, cached_input_usd=0.01, output_usd=0.02)
    partial.add_unpriced()
    assert totals_label(partial) == "≥$0.43"
    assert "1 request with price unknown not included" in totals_details(partial)
    late = CostTotals(since=1.0)
    assert totals_label(late) == "–"
    late.add(input_usd=0.001, cached_input_usd=0.0, output_usd=0.002)
    assert totals_label(late) == "≥$0.0030"
    free = CostTotals()
    free.add(input_usd=0.0, cached_input_usd=0.0, output_usd=0.0)
    assert totals_label(free) == "$0.00"
    assert compaction_cost_text(priced=True, cost_usd=None, cost_requests=1, saved_tokens=9_000) == \
        "cost: price unknown · saving: price unknown"
    assert compaction_cost_text(priced=True, cost_usd=0.0, cost_requests=0, saves_per_request=0.027,
                                saved_tokens=9_000) == "no model call · saves ≈$0.03/request"
    assert compaction_cost_text(priced=False, cost_usd=None, cost_requests=0) is None
    assert CostTotals.from_dict({"input_usd": "x"}) is None and CostTotals.from_dict(None) is None


def _long_replies(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("a long answer about the rollout plan. " * 60)])


async def _stream_long(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    yield "a long answer about the rollout plan. " * 60


def _summarizer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("## Session intent\nRollout plan.\n## Exact values\nnone")],
                         usage=RequestUsage(input_tokens=5_000, output_tokens=300),
                         model_name="claude-sonnet-4-5", provider_name="anthropic")


async def test_a_compaction_costs_what_the_summarizer_spent_and_the_session_counts_it(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    work = tmp_path / "work"
    work.mkdir()
    handle = SessionStore(data).create(model="scripted")
    updates: list[CostUpdated] = []
    runtime = SessionRuntime(settings=Settings(context=ContextSettings(window=50_000)), data_dir=data, workdir=work,
                             handle=handle, chat_model=FunctionModel(_long_replies, stream_function=_stream_long,
                                                                     model_name="scripted"),
                             choice=choose_model("scripted:x", None), summarizer_model=FunctionModel(_summarizer, model_name="claude-sonnet-4-5"))
    runtime.subscribe(lambda event: updates.append(event) if isinstance(event, CostUpdated) else None)
    try:
        for number in range(4):
            events = [event async for event in runtime.run_turn(f"question {number} about the rollout")]
            assert isinstance(events[-1], TurnFinished)
        assert [update.last_request_usd for update in updates] == [None] * 4  # the scripted model has no price
        assert totals_label(updates[-1].turn) == "price unknown"
        event = await runtime.compact()
        assert isinstance(event, CompactionFinished), event
    finally:
        await runtime.aclose()
    one_call = 5_000 * 3e-6 + 300 * 15e-6
    records = [json.loads(line) for line in (handle.directory / "events.jsonl").read_text().splitlines()]
    [finished] = [record for record in records if record["kind"] == "compaction_finished"]
    assert finished["priced"] is True and finished["cost_requests"] >= 1
    assert finished["cost_usd"] == pytest.approx(one_call * finished["cost_requests"])
    assert finished["saves_usd_per_request"] is None  # the chat model's price is unknown
    assert updates[-1].summarizer and updates[-1].last_request_usd == pytest.approx(one_call)
    meta = json.loads((handle.directory / "session.json").read_text())["cost"]
    assert meta["summarizer_usd"] == pytest.approx(finished["cost_usd"])
    assert (meta["requests"], meta["unpriced_requests"]) == (finished["cost_requests"], 4)
    line = describe_event(CompactionFinished(**{key: value for key, value in finished.items()
                                                if key not in ("kind", "files_created", "missing_identifiers")}))
    assert f"cost {format_usd(finished['cost_usd'])}" in line and "saving: price unknown" in line


async def test_a_compaction_says_what_it_saves_on_each_later_request_at_the_chat_models_price(
        tmp_path: Path) -> None:
    """A priced chat model (gpt-4.1 through the loopback server): the finished compaction carries the tokens it
    freed at that model's input price, and the event log line shows it."""
    data = DataDir(tmp_path / "data")
    work = tmp_path / "work"
    work.mkdir()
    state = ChatServerState(reply="a long answer about the rollout plan " * 40, prompt_tokens=1_000)
    with openai_chat_server(state) as (base_url, _):
        handle = SessionStore(data).create(model="openai-chat:gpt-4.1")
        runtime = SessionRuntime(settings=Settings(context=ContextSettings(window=50_000)), data_dir=data,
                                 workdir=work, handle=handle,
                                 chat_model=build_model("openai-chat:gpt-4.1", base_url=base_url),
                                 choice=choose_model("openai-chat:gpt-4.1", None),
                                 summarizer_model=FunctionModel(_summarizer, model_name="claude-sonnet-4-5"))
        try:
            with models.override_allow_model_requests(True):  # the loopback server: no network
                for number in range(4):
                    events = [event async for event in runtime.run_turn(f"question {number} about the rollout")]
                    assert isinstance(events[-1], TurnFinished)
            event = await runtime.compact()
        finally:
            await runtime.aclose()
    assert isinstance(event, CompactionFinished), event
    assert event.tokens_saved > 0
    gpt_input_per_token = float(calc_price(Usage(input_tokens=1_000_000), "gpt-4.1", provider_id="openai")
                                .input_price) / 1_000_000
    assert event.saves_usd_per_request == pytest.approx(event.tokens_saved * gpt_input_per_token)
    records = [json.loads(line) for line in (handle.directory / "events.jsonl").read_text().splitlines()]
    [finished] = [record for record in records if record["kind"] == "compaction_finished"]
    assert finished["saves_usd_per_request"] == pytest.approx(event.saves_usd_per_request)
    saving = f"saves ≈{format_usd(event.saves_usd_per_request)}/request"
    assert saving in describe_event(event)
    assert saving in str(describe_result(event)), "the compact dialog says it too"


async def test_a_real_provider_turn_is_priced_and_kept_in_session_json(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    work = tmp_path / "work"
    work.mkdir()
    with openai_chat_server(ChatServerState(reply="priced reply", prompt_tokens=1234)) as (base_url, _):
        handle = SessionStore(data).create(model="openai:gpt-4.1")
        runtime = SessionRuntime(settings=Settings(), data_dir=data, workdir=work, handle=handle,
                                 chat_model=build_model("openai:gpt-4.1", base_url=base_url),
                                 choice=choose_model("openai:gpt-4.1", None), summarizer_model=None)
        try:
            with models.override_allow_model_requests(True):  # the loopback server: no network
                events = [event async for event in runtime.run_turn("say hi")]
            assert isinstance(events[-1], TurnFinished)
            breakdown = runtime.context_breakdown()
        finally:
            await runtime.aclose()
    expected = float(calc_price(Usage(input_tokens=1234, output_tokens=7), "gpt-4.1", provider_id="openai").total_price)
    cost = SessionStore(data).meta(handle.id).cost
    assert cost is not None and cost.requests == 1 and cost.unpriced_requests == 0
    assert cost.total_usd == pytest.approx(expected) and cost.complete
    assert breakdown.session_cost is not None and breakdown.session_cost.total_usd == pytest.approx(expected)
    assert breakdown.last_request_usd == pytest.approx(expected)
    assert totals_label(cost) == f"${expected:.4f}"


async def test_an_older_session_without_a_cost_record_reads_as_a_lower_bound(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    store = SessionStore(data)
    handle = store.create(model="offline")
    handle.append_messages([ModelResponse(parts=[TextPart("from before cost tracking")])])
    handle.meta.cost = None
    handle.meta.write(handle.meta_path)
    work = tmp_path / "work"
    work.mkdir()
    runtime = SessionRuntime(settings=Settings(), data_dir=data, workdir=work, handle=handle,
                             chat_model=build_model("offline"), choice=choose_model("offline", None),
                             summarizer_model=None)
    try:
        assert runtime.session_cost.since is not None and totals_label(runtime.session_cost) == "–"
        [event async for event in runtime.run_turn("ls")]
        assert totals_label(runtime.session_cost) == "≥$0.00"  # free requests since, but the past is unknown
    finally:
        await runtime.aclose()

"""Where cost shows: the gauge line, /context, the event log, the picker column."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest

from tests.app.app_support import make_app, make_factory, reply_model, wait_idle, wait_until
from tests.search.support import exchange
from tui.agent.session.factory import SessionRequest
from tui.app.screens.context_report import breakdown_lines
from tui.app.screens.session_rows import session_row
from tui.app.widgets.cost_meter import CostMeter
from tui.app.widgets.event_log import event_row
from tui.chain.events import CompactionFailed, CompactionFinished
from tui.store.cost_totals import CostTotals
from tui.store.meta import SessionMeta


async def test_the_gauge_line_says_price_unknown_for_a_model_without_a_price(tmp_path: Path) -> None:
    app = make_app(make_factory(tmp_path, chat_model=reply_model("a scripted answer")))
    async with app.run_test(size=(160, 36)) as pilot:  # wide enough for the turn's cost too (status_row.py)
        meter = app.query_one(CostMeter)
        assert not meter.display  # nothing spent, nothing unknown yet: quiet
        await pilot.press(*"hello", "enter")
        await wait_idle(app, pilot)
        assert meter.display
        assert str(meter.render()) == "turn price unknown  session price unknown"
        assert "1 request with price unknown not included" in str(meter.tooltip)
        await pilot.press("f2")
        await wait_until(pilot, lambda: bool(app.screen.query("#breakdown")), "the context report")
        text = str(app.screen.query_one("#breakdown").render())
        assert "cost  session price unknown" in text and "last request price unknown" in text


def priced_session(tmp_path: Path) -> tuple[object, str]:
    factory = make_factory(tmp_path)
    handle = factory.store.create(model="anthropic:claude-sonnet-4-5")
    handle.append_messages(exchange("what did this cost?", "about a dollar"))
    totals = CostTotals()
    totals.add(input_usd=0.91, cached_input_usd=0.12, output_usd=0.2)
    totals.add(input_usd=0.0, cached_input_usd=0.0, output_usd=0.0, summarizer=True)
    handle.record_cost(totals)
    handle.close()
    return factory, handle.id


async def test_an_opened_session_shows_its_recorded_cost(tmp_path: Path) -> None:
    factory, session = priced_session(tmp_path)
    app = make_app(factory, SessionRequest(resume=session))  # type: ignore[arg-type]
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert str(app.query_one(CostMeter).render()) == "session $1.23"
        report = app.runtime.context_breakdown()
        assert "session $1.23 (input $0.91, cached input $0.12, output $0.20) over 2 priced requests" in str(
            breakdown_lines(report))


@pytest.fixture
def fixed_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = itertools.count(1)
    monkeypatch.setattr("tui.store.session_store.secrets.token_hex", lambda n: f"{next(counter):012x}")


def test_gauge_line_with_cost_snapshot(snap_compare, tmp_path: Path, fixed_ids: None) -> None:  # type: ignore[no-untyped-def]
    factory, session = priced_session(tmp_path)
    assert snap_compare(make_app(factory, SessionRequest(resume=session)), terminal_size=(100, 12))  # type: ignore[arg-type]


def test_the_event_log_shows_what_a_compaction_cost_and_saves() -> None:
    now = time.time()
    finished = CompactionFinished(strategy="summary", trigger="auto", tokens_before=96_000, tokens_after=18_000,
                                  messages_replaced=142, priced=True, cost_usd=0.0213, cost_requests=1,
                                  saves_usd_per_request=78_000 * 3e-6)
    assert "cost $0.02 · saves ≈$0.23/request" in str(event_row(finished, now=now))
    unknown = CompactionFinished(strategy="summary", trigger="auto", tokens_before=9_000, tokens_after=1_000,
                                 messages_replaced=10, priced=True, cost_usd=None, cost_requests=2)
    assert "cost: price unknown · saving: price unknown" in str(event_row(unknown, now=now))
    failed = CompactionFailed(strategy="summary", trigger="auto", reason="inflation", tokens=9_000, priced=True,
                              cost_usd=0.004, cost_requests=1)
    assert "cost $0.0040" in str(event_row(failed, now=now))
    old = CompactionFinished(strategy="pointer", trigger="auto", tokens_before=9_000, tokens_after=1_000,
                             messages_replaced=3)
    assert "cost" not in str(event_row(old, now=now))  # never priced (tier 2, or recorded before pricing)


def test_the_picker_has_a_cost_column() -> None:
    unknown = CostTotals()
    unknown.add_unpriced()
    rows = [str(session_row(SessionMeta(id=f"{n:012x}", title="t", cost=cost), 0, current=False, now=time.time()))
            for n, cost in enumerate([None, unknown, CostTotals(input_usd=2.5, requests=3)])]
    assert [row.split()[4] for row in rows] == ["–", "price", "$2.50"]
    assert "price unknown" in rows[1]

"""The reversible-share figure counts every overage, including the ones the reversible tiers absorbed whole."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from fuzzfarm.checks import SessionResult, _reclaim
from tui.chain.events import ChainEvent, CompactionFinished, UsageEvent

LIMIT = 10_000
THRESHOLD = 8_500
"""85 % of the limit."""


def _usage(tokens: int) -> UsageEvent:
    return UsageEvent(tokens=tokens, window=12_000, window_source="config")


def _done(strategy: str, before: int, after: int, trigger: str = "auto") -> CompactionFinished:
    return CompactionFinished(strategy=strategy, trigger=trigger, tokens_before=before,  # type: ignore[arg-type]
                              tokens_after=after, messages_replaced=1)


def _shares(*turns: list[ChainEvent]) -> tuple[list[float], list[float]]:
    trace: Any = SimpleNamespace(compaction_limit=LIMIT, script=SimpleNamespace(first_seen={}),
                                 actions=[SimpleNamespace(events=events) for events in turns])
    result = SessionResult(seed=0, window=12_000, fault="faithful", tool_heavy=True)
    _reclaim(trace, result)
    return result.reclaim, result.reclaim_lossy


def test_an_overage_tier2_absorbed_whole_counts_as_fully_reclaimed() -> None:
    shares, lossy = _shares([_usage(9_000), _done("pointer", 9_000, 4_000), _usage(4_000)])
    assert shares == [1.0] and lossy == []


def test_an_overage_that_reached_a_summary_counts_what_tier2_took_first() -> None:
    # tier 2 took 2,000 of a context that would have been 11,000 (2,500 over the threshold)
    shares, lossy = _shares([_usage(11_000), _done("pointer", 11_000, 9_000), _done("summary", 9_000, 3_000)])
    assert shares == lossy == [2_000 / 2_500]


def test_spans_restart_after_a_lossy_step_and_below_the_threshold_nothing_counts() -> None:
    shares, _ = _shares(
        [_usage(9_500), _done("summary", 9_500, 3_000)],  # nothing reversible: share 0
        [_usage(5_000)],
        [_usage(8_000), _done("pointer", 8_000, 5_000), _usage(6_000)],  # would have been 9,000: absorbed
    )
    assert shares == [0.0, 1.0]


def test_a_session_without_overage_reports_none() -> None:
    assert _shares([_usage(3_000)], [_usage(4_000)]) == ([], [])

"""Compaction controls (issue 30, point 5): the threshold and the off switch. With automatic compaction off,
nothing is compacted at the thresholds, and still no request goes over the window: the pre-flight asks before
summarizing (when someone can be asked) or only makes pointers and cuts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chain.support import SummarizerScript, history, make_harness, seed
from tui.base.config import ConfigError, settings_from_mapping
from tui.chain.estimate import TokenEstimator
from tui.chain.events import CompactionFinished, UsageEvent


def finished(events: list) -> list[CompactionFinished]:
    return [event for event in events if isinstance(event, CompactionFinished)]


def test_with_automatic_compaction_off_nothing_runs_at_the_thresholds(tmp_path: Path) -> None:
    script = SummarizerScript()
    harness = make_harness(tmp_path, summarizer=script, compaction_threshold=0.5, summarize_threshold=0.6,
                           auto_compact=False)
    harness.agent().run_sync("next", message_history=seed(harness, history(6, 4000)))  # ~6.8k: over both, under 8.5k
    assert finished(harness.events) == [] and script.prompts == []
    usage = [e for e in harness.events if isinstance(e, UsageEvent)]
    assert usage and not usage[-1].auto_compact


def test_off_and_over_the_window_the_preflight_still_fits_without_a_summary(tmp_path: Path) -> None:
    script = SummarizerScript()
    harness = make_harness(tmp_path, summarizer=script, auto_compact=False)
    harness.agent().run_sync("next", message_history=seed(harness, history(12, 4000)))  # ~13k > 8.5k limit
    assert script.prompts == []  # nobody asked: no summary
    assert {e.strategy for e in finished(harness.events)} <= {"pointer", "fallback"}
    sent = harness.received[0]
    assert TokenEstimator().total(sent) <= harness.manager.limit


def test_off_and_over_the_window_a_summary_runs_when_the_user_agrees(tmp_path: Path) -> None:
    script = SummarizerScript()
    harness = make_harness(tmp_path, summarizer=script, auto_compact=False, min_savings_tokens=10**9)
    asked: list[tuple[int, int]] = []

    async def agree(tokens: int, limit: int) -> bool:
        asked.append((tokens, limit))
        return True

    harness.manager.ask_before_summary = agree
    harness.agent().run_sync("next", message_history=seed(harness, history(12, 4000)))
    assert len(asked) == 1 and asked[0][0] > asked[0][1]
    assert "summary" in [e.strategy for e in finished(harness.events)]
    assert TokenEstimator().total(harness.received[0]) <= harness.manager.limit


def test_the_threshold_moves_for_the_session_and_the_usage_carries_it(tmp_path: Path) -> None:
    harness = make_harness(tmp_path, compaction_threshold=0.85, summarize_threshold=0.9)
    harness.agent().run_sync("hello")
    settings = harness.manager.set_compaction(threshold=0.5)
    assert (settings.compaction_threshold, settings.summarize_threshold) == (0.5, pytest.approx(0.55))
    last = [e for e in harness.events if isinstance(e, UsageEvent)][-1]
    assert last.compaction_threshold == 0.5
    harness.manager.set_compaction(auto=False)
    assert not [e for e in harness.events if isinstance(e, UsageEvent)][-1].auto_compact
    with pytest.raises(ConfigError):
        harness.manager.set_compaction(threshold=1.5)


def test_the_config_takes_the_off_switch_and_refuses_a_non_boolean() -> None:
    assert settings_from_mapping({"context": {"auto_compact": False}}).context.auto_compact is False
    with pytest.raises(ConfigError, match=r"context\.auto_compact must be true or false"):
        settings_from_mapping({"context": {"auto_compact": 0}})


def test_the_session_keeps_only_sound_controls() -> None:
    from tui.store.meta import SessionMeta

    meta = SessionMeta.from_dict({"compaction_threshold": 0.6, "auto_compact": False}, "abc")
    assert (meta.compaction_threshold, meta.auto_compact) == (0.6, False)
    for bad in ({"compaction_threshold": 3, "auto_compact": "no"}, {"compaction_threshold": True, "auto_compact": 0},
                {}):
        meta = SessionMeta.from_dict(bad, "abc")  # a hand-edited session.json: the config's values apply
        assert (meta.compaction_threshold, meta.auto_compact) == (None, None)


def test_a_fork_keeps_the_controls_set_for_its_parent(tmp_path: Path) -> None:
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    from tui.base.paths import DataDir
    from tui.store import SessionStore

    store = SessionStore(DataDir(tmp_path / "data"))
    parent = store.create(model="m")
    parent.append_messages([ModelRequest(parts=[UserPromptPart("hello")])])
    parent.record_compaction_controls(0.6, False)
    parent.close()
    assert store.meta(parent.id).compaction_threshold == 0.6  # written at once
    fork = store.fork(parent.id, upto=0)
    assert (fork.meta.compaction_threshold, fork.meta.auto_compact) == (0.6, False)
    fork.close()

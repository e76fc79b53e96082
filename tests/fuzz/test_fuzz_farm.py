"""The fuzz farm at CI size: a few hundred deterministic sessions through the real chain, every promise checked;
plus every stored reproducer replayed, and the checks shown to catch what they claim to catch."""

from __future__ import annotations

import os
from pathlib import Path
from statistics import mean

import pytest

from fuzzfarm.checks import SessionResult, check
from fuzzfarm.driver import drive
from fuzzfarm.farm import run_seeds, run_spec
from fuzzfarm.generator import generate
from fuzzfarm.report import RECLAIM_TARGET, RETENTION_TARGET
from fuzzfarm.shrink import shrink
from fuzzfarm.spec import SessionSpec, read_reproducer, write_reproducer
from fuzzfarm.workspace import build_template

REPRODUCERS = sorted((Path(__file__).parent / "reproducers").glob("*.json"))
CI_SESSIONS = int(os.environ.get("FUZZ_CI_SESSIONS", "120"))
"""About 25 s of CPU on two cores; FUZZ_CI_SESSIONS raises it."""


def _summary(results: list[SessionResult]) -> str:
    failing = [r for r in results if r.violations]
    return "\n".join(f"seed {r.seed} (window {r.window}, {r.fault}): {r.violations[0]}" for r in failing[:10])


def test_a_ci_sized_farm_keeps_every_promise() -> None:
    results = list(run_seeds(range(CI_SESSIONS), workers=min(2, os.cpu_count() or 1)))
    assert len(results) == CI_SESSIONS
    assert not any(r.violations for r in results), _summary(results)
    assert sum(r.requests for r in results) > CI_SESSIONS * 10
    windows = {r.window for r in results}
    assert min(windows) == 4_000 and max(windows) == 200_000
    assert {r.fault for r in results} >= {"faithful", "raises", "timeout", "garbage", "inflate", "drops"}
    assert max(r.max_fill for r in results) > 0.9, "the sessions must actually fill the window to prove anything"
    assert sum(r.summaries for r in results) and sum(r.fallbacks for r in results) and sum(r.tier2 for r in results)
    assert sum(r.recoverable_checked for r in results) > CI_SESSIONS * 10
    retention = [score for r in results for score in r.retention]
    assert retention and mean(retention) >= RETENTION_TARGET, f"faithful retention {mean(retention):.3f}"
    reclaim = [share for r in results if r.tool_heavy for share in r.reclaim]
    assert reclaim and mean(reclaim) >= RECLAIM_TARGET, f"reversible share {mean(reclaim):.3f}"


@pytest.mark.parametrize("path", REPRODUCERS, ids=[p.name for p in REPRODUCERS])
def test_every_stored_reproducer_now_passes(path: Path) -> None:
    spec, seen = read_reproducer(path)
    assert seen, "a reproducer records the violation it showed"
    assert run_spec(spec).violations == []


def test_the_same_seed_gives_the_same_session() -> None:
    assert generate(1234) == generate(1234)
    assert generate(1234) != generate(1235)


def test_a_request_over_the_window_is_caught_shrunk_and_saved(tmp_path: Path) -> None:
    """Shrink the window the chain is told about below the real one: the checks must see the overflow."""
    spec = generate(3)
    template = build_template(tmp_path / "template")
    trace = drive(spec, tmp_path / "run", template)
    trace.limit = max(1, min(r.size for r in trace.script.requests) - 1)  # as if every request were too big
    result = check(trace)
    assert result.over_limit == result.requests and result.violations[0].startswith("request of")

    def only_long_sessions_fail(candidate: SessionSpec) -> list[str]:
        return ["request of 1 tokens"] if len(candidate.actions) >= 2 else []

    shrunk, violations = shrink(spec, result.violations, only_long_sessions_fail)
    assert len(shrunk.actions) == 2 and violations
    saved = write_reproducer(shrunk, violations, tmp_path / "reproducers")
    assert read_reproducer(saved) == (shrunk, violations)


def test_a_lost_saved_output_is_caught(tmp_path: Path) -> None:
    spec = next(s for s in map(generate, range(100)) if s.window == 4_000)
    trace = drive(spec, tmp_path / "run", build_template(tmp_path / "template"))
    saved = list((trace.data_dir.root / "large_tool_results").iterdir())
    assert saved, "a 4k session evicts outputs"
    for path in saved:
        path.write_text(path.read_text() + "x")  # a saved output no longer byte-exact
    result = check(trace)
    assert result.recoverable_failed and any(v.startswith("not recoverable") for v in result.violations)


def test_the_meter_counts_exactly_what_the_payload_holds(tmp_path: Path) -> None:
    """The cached meter (O(new messages) per request) agrees with serializing the whole payload."""
    from pydantic_ai.tools import ToolDefinition

    from fuzzfarm.wire import RequestMeter, request_size
    from tests.chain.support import history

    tools = [ToolDefinition(name="read_file", description="Read a file", parameters_json_schema={"type": "object"})]
    messages = history(6, 900)
    meter = RequestMeter(1.17)
    for end in range(1, len(messages) + 1):
        assert meter.size(messages[:end], "be brief", tools) == request_size(messages[:end], "be brief", tools, 1.17)


def test_the_timeout_fault_runs_into_the_chains_own_timeout(tmp_path: Path) -> None:
    """The ``timeout`` summarizer never answers; the chain's real timeout (20 ms here) is what stops it."""
    from fuzzfarm.summarizers import FAULT_TIMEOUT_SECONDS
    from tui.chain.events import CompactionFailed

    spec = next(s for s in map(generate, range(200)) if s.fault == "timeout" and s.window == 4_000)
    trace = drive(spec, tmp_path / "run", build_template(tmp_path / "template"))
    reasons = [e.reason for log in trace.actions for e in log.events
               if isinstance(e, CompactionFailed) and e.strategy == "summary"]
    assert reasons and all(f"did not answer within {FAULT_TIMEOUT_SECONDS:g}s" in r for r in reasons), reasons
    assert check(trace).violations == []


def test_the_farm_leaves_the_search_index_to_catch_up_from_disk(tmp_path: Path) -> None:
    """No live indexing in the farm; the index is derived data: a sync from messages.json finds every prompt."""
    from tui.store.search.database import read_rows
    from tui.store.search.searcher import HistorySearch

    spec = generate(5)
    trace = drive(spec, tmp_path / "run", build_template(tmp_path / "template"))
    search = HistorySearch(trace.data_dir)
    try:
        assert read_rows(search.index.connection()) == {}, "the farm indexed live"
        report = search.refresh()
        assert set(trace.sessions) <= set(report.indexed) and report.problem is None
        prompt = trace.prompts[-1]
        hits = search.search(prompt.split(";")[0], session_id=trace.sessions[-1]).hits
        assert any(hit.role == "user" and hit.session in trace.sessions for hit in hits), hits
    finally:
        search.index.close()


def test_the_generated_writes_and_edits_really_change_files(tmp_path: Path) -> None:
    """The farm's user allowed file writes: every generated write creates its file under out/ and every edit
    finds the marker the generator put there (with writes left at "ask" and nobody to ask, all were refused)."""
    seed = next(s for s in range(100) if sum(call.tool == "edit_file" for action in generate(s).actions
                                             for batch in action.batches for call in batch) >= 2)
    spec = generate(seed)
    trace = drive(spec, tmp_path / "run", build_template(tmp_path / "template"))
    calls = {call.tool for action in spec.actions for batch in action.batches for call in batch}
    assert {"write_file", "edit_file"} <= calls
    results = [str(result) for result in trace.raw_outputs.values()]
    assert sum(result.startswith("wrote ") for result in results) >= 1
    assert sum(result.startswith("edited ") for result in results) >= 2
    assert not [result for result in results if "not allowed file writes" in result]
    written = sorted((tmp_path / "run" / "work" / "out").iterdir())
    assert written and all(path.read_text().startswith("MARKER-") for path in written)

"""pydantic-ai's floor under the fuzz farm: the same sessions on a bare agent, measured and reported."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic_ai.models import override_allow_model_requests

import fuzzfarm.floor
from fuzzfarm.checks import SessionResult
from fuzzfarm.cli import main
from fuzzfarm.floor import FloorFigures, FloorSession, measure_floor, play
from fuzzfarm.generator import generate
from fuzzfarm.inline import inline_sync_calls
from fuzzfarm.report import render
from fuzzfarm.spec import Action, SessionSpec, ToolCallSpec
from fuzzfarm.workspace import build_template, make_workdir

SMALL_SEEDS = (1, 17, 26)
"""Small sessions that also hold a resume, a compact and a fork (which the floor skips)."""


def _planned_requests(spec: SessionSpec) -> int:
    """One request per tool batch of each turn, plus the one that gets the turn's answer."""
    return sum(len(action.batches) + 1 for action in spec.without_subagents().actions if action.kind == "turn")


def test_a_small_floor_run_costs_cpu_and_sends_the_planned_requests() -> None:
    specs = [generate(seed) for seed in SMALL_SEEDS]
    assert {"resume", "fork", "compact"} <= {a.kind for s in specs for a in s.actions}
    floor = measure_floor(SMALL_SEEDS, workers=1)
    assert [s.seed for s in floor.sessions] == list(SMALL_SEEDS) and not floor.skipped
    assert [s.requests for s in floor.sessions] == [_planned_requests(spec) for spec in specs]
    assert all(s.cpu_seconds > 0 for s in floor.sessions)
    assert floor.requests_per_session == sum(map(_planned_requests, specs)) / len(specs)
    assert floor.cpu_per_session > 0 and floor.ms_per_request > 0
    assert floor.projected_seconds(10_000, 2) == pytest.approx(floor.cpu_per_session * 5_000)


def test_the_bare_agent_really_runs_the_tools_and_keeps_the_whole_history(tmp_path: Path) -> None:
    spec = generate(26)
    workdir = make_workdir(build_template(tmp_path / "template"), tmp_path / "work")
    with override_allow_model_requests(True), inline_sync_calls():
        script = asyncio.run(play(spec, workdir, tmp_path / "data"))
    reads = [p for p in script.first_seen.values() if p.tool_name == "read_file" and p.outcome == "success"]
    assert reads and any("value=VAL-" in str(p.content) for p in reads)
    assert len(script.requests) == _planned_requests(spec)
    sizes = [r.size for r in script.requests]
    assert sizes == sorted(sizes), "never compacted: every request holds the one before it"


def test_a_seed_the_bare_agent_cannot_play_is_counted_as_skipped(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    unknown = ToolCallSpec("no_such_tool", {})
    broken = SessionSpec(7, 8_000, "faithful", 1.0, False, False,
                         (Action("turn", prompt="p", batches=((unknown,), (unknown,), (unknown,)), answer="a"),))
    monkeypatch.setattr(fuzzfarm.floor, "generate", lambda seed: broken if seed == 7 else generate(seed))
    floor = measure_floor([1, 7], workers=1)
    assert [s.seed for s in floor.skipped] == [7] and "no_such_tool" in (floor.skipped[0].skipped or "")
    assert [s.seed for s in floor.measured] == [1] and floor.seeds == {1}
    assert main(["floor", "--sessions", "2", "--start", "6", "--workers", "1"]) == 0
    assert "(1 skipped: seeds 7)" in capsys.readouterr().out


def _result(seed: int, cpu: float) -> SessionResult:
    result = SessionResult(seed, 8_000, "faithful", True, requests=10)
    result.cpu_seconds = cpu
    return result


def test_the_report_gives_the_floor_next_to_the_farm_on_the_same_seeds_only_when_measured() -> None:
    results = [_result(1, 0.30), _result(2, 0.30), _result(3, 0.60)]
    floor = FloorFigures([FloorSession(1, 0.20, 10), FloorSession(2, 0.20, 10), FloorSession(9, skipped="boom")])
    page = render(results, seconds=1.0, workers=2, load=(0.5, 0.5, 0.5), at_commit="abc1234", floor=floor)
    assert "## Speed against pydantic-ai's floor" in page
    assert "| the farm, CPU per session (3 sessions) | 0.400 s |" in page
    assert "| the farm, CPU per session on the floor's seeds (2) | 0.300 s |" in page
    assert "| the floor, CPU per session on the same seeds | 0.200 s (10.0 requests per session, 20.00 ms per " \
           "request; 1 seeds skipped — 9) |" in page
    assert "| farm ÷ floor, same seeds | 1.50 × (the floor is 67% of the farm) |" in page
    assert ("| the floor alone, this run's 3 sessions | 0.3 s on 2 idle processes; the target for as many sessions "
            "on 2 cores: ≤ 0.2 s (600 s per 10,000): **MISSED** |") in page
    assert "0.400 s of CPU per session" in page  # the farm's own figures stay
    plain = render(results, seconds=1.0, workers=2, load=(0.5, 0.5, 0.5), at_commit="abc1234")
    assert "floor" not in plain and "0.400 s of CPU per session" in plain


def test_the_floor_command_prints_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["floor", "--sessions", "2", "--start", "1", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("floor (bare pydantic-ai agent, same sessions): ")
    planned = (_planned_requests(generate(1)) + _planned_requests(generate(2))) / 2
    assert f"over 2 sessions (0 skipped), {planned:.1f} requests per session" in out
    assert "ms per request; 10,000 sessions on 1 processes: " in out and "(target 600 s)" in out


@pytest.mark.parametrize("argv", [["floor", "--sessions", "0"], ["floor", "--sessions", "1", "--workers", "0"],
                                  ["run", "--sessions", "1", "--floor-sample", "-1"]])
def test_bad_numbers_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "must be" in capsys.readouterr().err


def test_a_run_with_a_floor_sample_reports_the_floor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "fidelity.md"
    assert main(["run", "--sessions", "2", "--start", "1", "--workers", "1", "--floor-sample", "1",
                 "--report", str(report), "--reproducers", str(tmp_path / "reproducers")]) == 0
    assert "floor (bare pydantic-ai agent" in capsys.readouterr().out
    page = report.read_text()
    assert "The floor: the first 1 seeds of this run" in page
    assert "| the farm, CPU per session on the floor's seeds (1) |" in page

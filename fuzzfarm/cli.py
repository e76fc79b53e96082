"""``python -m fuzzfarm``: run the farm, write the report and reproducers; replay reproducers; or measure the
floor pydantic-ai sets (the same sessions through a bare agent, no chain).

Exit status: 0 when no session violated a promise, 1 when one did (reproducers written), 2 on bad input.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from fuzzfarm.checks import SessionResult
from fuzzfarm.farm import run_seeds, run_spec
from fuzzfarm.floor import FloorFigures, measure_floor
from fuzzfarm.generator import WINDOWS, generate
from fuzzfarm.report import SECONDS_TARGET_PER_10K, commit, render
from fuzzfarm.shrink import shrink
from fuzzfarm.spec import read_reproducer, write_reproducer

DEFAULT_REPRODUCERS = Path("tests/fuzz/reproducers")
MAX_SHRUNK = 5
"""At most this many failing sessions are shrunk and saved per run (the rest are listed)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m fuzzfarm", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run simulated sessions and check every promise")
    run.add_argument("--sessions", type=int, default=300, help="how many sessions (seeds start..start+N-1)")
    run.add_argument("--start", type=int, default=0, help="first seed")
    run.add_argument("--window", type=int, choices=WINDOWS, metavar="TOKENS",
                     help="only sessions with this window: the first N seeds from --start whose generated session "
                          f"has it (one of {', '.join(map(str, WINDOWS))})")
    run.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes (default: all cores)")
    run.add_argument("--report", type=Path, help="write the figures as Markdown here (e.g. docs/fidelity.md)")
    run.add_argument("--reproducers", type=Path, default=DEFAULT_REPRODUCERS,
                     help=f"where shrunk failing sessions are saved (default {DEFAULT_REPRODUCERS})")
    run.add_argument("--floor-sample", type=int, default=0, metavar="K",
                     help="after the run, measure pydantic-ai's floor on the run's first K seeds (same workers) "
                          "and put it in the report (default 0: off)")
    floor = commands.add_parser("floor", help="measure the floor: the same sessions through a bare pydantic-ai "
                                              "agent (no chain, no store, no checks)")
    floor.add_argument("--sessions", type=int, default=200,
                       help="how many sessions (seeds start..start+N-1; default 200)")
    floor.add_argument("--start", type=int, default=0, help="first seed")
    floor.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes (default: all cores)")
    replay = commands.add_parser("replay", help="run saved reproducers again")
    replay.add_argument("files", nargs="+", type=Path)
    return parser


def _seeds(start: int, sessions: int, window: int | None) -> list[int]:
    """``sessions`` seeds from ``start``: consecutive, or (``window`` given) the next ones whose session has it."""
    if window is None:
        return list(range(start, start + sessions))
    seeds: list[int] = []
    seed = start
    while len(seeds) < sessions:
        if generate(seed).window == window:
            seeds.append(seed)
        seed += 1
    return seeds


def _save_failures(failing: list[SessionResult], directory: Path) -> None:
    for result in failing[:MAX_SHRUNK]:
        spec = generate(result.seed)
        shrunk, violations = shrink(spec, result.violations, lambda s: run_spec(s).violations)
        path = write_reproducer(shrunk, violations, directory)
        print(f"  seed {result.seed}: {len(spec.actions)} → {len(shrunk.actions)} actions, saved {path}")
    for result in failing[MAX_SHRUNK:]:
        print(f"  seed {result.seed}: {result.violations[0]}")


def floor_line(floor: FloorFigures, workers: int) -> str:
    """The floor in one line: per session, per request, and projected for 10,000 sessions on ``workers``."""
    skipped = floor.skipped
    return (f"floor (bare pydantic-ai agent, same sessions): {floor.cpu_per_session:.3f} s CPU per session over "
            f"{len(floor.measured):,} sessions ({len(skipped)} skipped"
            f"{': seeds ' + ', '.join(str(s.seed) for s in skipped[:10]) if skipped else ''}), "
            f"{floor.requests_per_session:.1f} requests per session, {floor.ms_per_request:.2f} ms per request; "
            f"10,000 sessions on {workers} processes: {floor.projected_seconds(10_000, workers):,.0f} s "
            f"(target {SECONDS_TARGET_PER_10K} s)")


def _floor(args: argparse.Namespace) -> int:
    if args.sessions < 1 or args.workers < 1:
        print("--sessions and --workers must be at least 1", file=sys.stderr)
        return 2
    print(floor_line(measure_floor(range(args.start, args.start + args.sessions), args.workers), args.workers))
    return 0


def _run(args: argparse.Namespace) -> int:
    if args.sessions < 1 or args.workers < 1:
        print("--sessions and --workers must be at least 1", file=sys.stderr)
        return 2
    if args.floor_sample < 0:
        print("--floor-sample must be 0 (off) or more", file=sys.stderr)
        return 2
    load = os.getloadavg()
    at_commit = commit()
    started = time.perf_counter()
    step = max(1, args.sessions // 20)
    results: list[SessionResult] = []
    seeds = _seeds(args.start, args.sessions, args.window)
    floor: FloorFigures | None = None

    def write_report(seconds: float, planned: int | None = None) -> None:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(render(sorted(results, key=lambda r: r.seed), seconds=seconds, workers=args.workers,
                                      load=load, at_commit=at_commit, planned=planned, floor=floor))

    for result in run_seeds(seeds, args.workers):
        results.append(result)
        done = len(results)
        if result.violations:
            print(f"seed {result.seed} (window {result.window:,}, {result.fault}): {result.violations[0]}",
                  file=sys.stderr, flush=True)
        if done % step == 0 or done == args.sessions:
            print(f"{done:,}/{args.sessions:,} sessions, {time.perf_counter() - started:,.0f} s, "
                  f"{sum(bool(r.violations) for r in results)} with violations", file=sys.stderr, flush=True)
            if args.report and done < args.sessions:
                write_report(time.perf_counter() - started, planned=args.sessions)  # a stopped run leaves its figures
    seconds = time.perf_counter() - started
    results.sort(key=lambda r: r.seed)
    failing = [r for r in results if r.violations]
    print(f"{len(results):,} sessions in {seconds:,.1f} s on {args.workers} processes; "
          f"{sum(r.requests for r in results):,} requests; {len(failing)} sessions with violations")
    if args.floor_sample:
        print(f"measuring the floor on the first {min(args.floor_sample, len(seeds)):,} seeds…", file=sys.stderr,
              flush=True)
        floor = measure_floor(seeds[:args.floor_sample], args.workers)
        print(floor_line(floor, args.workers))
    if args.report:
        write_report(seconds)
        print(f"report written to {args.report}")
    if failing:
        for result in failing[:MAX_SHRUNK]:
            print(f"seed {result.seed} (window {result.window:,}, {result.fault}): {result.violations[0]}")
        _save_failures(failing, args.reproducers)
        return 1
    return 0


def _replay(args: argparse.Namespace) -> int:
    status = 0
    for path in args.files:
        try:
            spec, _expected = read_reproducer(path)
        except (OSError, ValueError, KeyError) as error:
            print(f"{path}: not a reproducer ({error})", file=sys.stderr)
            return 2
        violations = run_spec(spec).violations
        print(f"{path}: {'still fails: ' + violations[0] if violations else 'passes'}")
        status = status or (1 if violations else 0)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # The farm's thousands of throw-away data dirs must not fill the user's data-dirs.json (the sandbox hides
    # its newest 200): the farm's processes use a config home of their own.
    config_home = tempfile.mkdtemp(prefix="fuzzfarm-config-")
    os.environ["DEEP_TUI_CONFIG_HOME"] = os.path.join(config_home, "deep-tui")
    os.environ["XDG_CONFIG_HOME"] = os.path.join(config_home, "xdg")
    commands = {"run": _run, "floor": _floor, "replay": _replay}
    return commands[args.command](args)

"""Aggregates session results into the figures of ``docs/fidelity.md``, each next to its target."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from statistics import mean
from typing import TYPE_CHECKING

from fuzzfarm.checks import SessionResult

if TYPE_CHECKING:
    from fuzzfarm.floor import FloorFigures

RETENTION_TARGET = 0.95
RECLAIM_TARGET = 0.60
SECONDS_TARGET_PER_10K = 600


@dataclass
class Figures:
    """The figures of a group of sessions."""

    sessions: int = 0
    requests: int = 0
    subagent_requests: int = 0
    subagents: int = 0
    over_limit: int = 0
    max_fill: float = 0.0
    turns: int = 0
    multi_summary_turns: int = 0
    failed_turns: int = 0
    recoverable_checked: int = 0
    recoverable_failed: int = 0
    retention: list[float] = field(default_factory=list)
    reclaim: list[float] = field(default_factory=list)
    reclaim_lossy: list[float] = field(default_factory=list)
    summaries: int = 0
    fallbacks: int = 0
    evictions: int = 0
    tier2: int = 0
    task_state_checked: int = 0
    task_state_missed: int = 0
    plan_refused: int = 0
    plan_ran: int = 0
    violating_sessions: int = 0

    def add(self, result: SessionResult) -> None:
        self.sessions += 1
        self.requests += result.requests
        self.subagent_requests += result.subagent_requests
        self.subagents += result.subagents
        self.over_limit += result.over_limit
        self.max_fill = max(self.max_fill, result.max_fill)
        self.turns += result.turns
        self.multi_summary_turns += result.multi_summary_turns
        self.failed_turns += result.failed_turns
        self.recoverable_checked += result.recoverable_checked
        self.recoverable_failed += result.recoverable_failed
        self.retention.extend(result.retention)
        if result.tool_heavy:
            self.reclaim.extend(result.reclaim)
            self.reclaim_lossy.extend(result.reclaim_lossy)
        self.summaries += result.summaries
        self.fallbacks += result.fallbacks
        self.evictions += result.evictions
        self.tier2 += result.tier2
        self.task_state_checked += result.task_state_checked
        self.task_state_missed += sum(v.startswith("a request lacked the task state") for v in result.violations)
        self.plan_refused += result.plan_refused
        self.plan_ran += sum(" ran in plan mode " in v for v in result.violations)
        self.violating_sessions += bool(result.violations)

    @property
    def recoverable(self) -> float:
        if not self.recoverable_checked:
            return 1.0
        return 1 - self.recoverable_failed / self.recoverable_checked


def group(results: Sequence[SessionResult], key: Callable[[SessionResult], object]) -> dict[object, Figures]:
    groups: dict[object, Figures] = {}
    for result in results:
        groups.setdefault(key(result), Figures()).add(result)
    return dict(sorted(groups.items(), key=lambda item: str(item[0]) if not isinstance(item[0], int) else
                       f"{item[0]:09d}"))


def _mean(values: list[float]) -> str:
    return f"{mean(values):.3f} ({len(values)})" if values else "–"


def _row(label: str, figures: Figures) -> str:
    return (f"| {label} | {figures.sessions:,} | {figures.requests:,} | {figures.over_limit} | {figures.max_fill:.3f} "
            f"| {figures.multi_summary_turns} | {figures.failed_turns} | {figures.recoverable:.2%} "
            f"({figures.recoverable_checked:,}) | {_mean(figures.retention)} | {_mean(figures.reclaim)} "
            f"| {_mean(figures.reclaim_lossy)} "
            f"| {figures.evictions:,} / {figures.tier2:,} / {figures.summaries:,} / {figures.fallbacks:,} |")


HEADER = ("| {label} | sessions | requests | over window − reserve | largest ÷ (window − reserve) "
          "| turns with > 1 auto summary | failed turns | recoverable (items checked) "
          "| retention, faithful (summaries) | reversible share of overage, tool-heavy (overages) "
          "| the same, overages that reached a lossy step "
          "| evictions / tier-2 / summaries / fallbacks |\n|---|---|---|---|---|---|---|---|---|---|---|---|")


def commit() -> str:
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "tui", "fuzzfarm"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" (with uncommitted changes)" if dirty else "")


def _verdict(ok: bool) -> str:
    return "met" if ok else "**MISSED**"


def floor_section(results: Sequence[SessionResult], floor: FloorFigures, workers: int) -> list[str]:
    """The farm's CPU per session next to pydantic-ai's floor on the same seeds: whose time the farm spends."""
    measured = floor.measured
    same = [r for r in results if r.seed in floor.seeds]
    farm_cpu = sum(r.cpu_seconds for r in results) / max(1, len(results))
    farm_same = sum(r.cpu_seconds for r in same) / max(1, len(same))
    ratio = farm_same / floor.cpu_per_session if measured and same and floor.cpu_per_session else None
    projected = floor.projected_seconds(len(results), workers)
    on_two = floor.projected_seconds(len(results), 2)
    target = SECONDS_TARGET_PER_10K * len(results) / 10_000
    skipped = floor.skipped
    return [
        "## Speed against pydantic-ai's floor",
        "",
        f"The floor: the first {len(floor.sessions):,} seeds of this run played again on a bare pydantic-ai "
        "`Agent` — the same scripted model (same tool calls, answers and per-request meter), the same file tools "
        "on a `LocalWorkspace`, streamed the same way, with none of deep-tui's chain (no context manager, no "
        "eviction, no `SessionStore`, no write gate) and none of the farm's checks. Resumes, forks and manual "
        "compactions are skipped and the history is never compacted, so each bare request carries at least as "
        "many messages as the farm's: the floor is an upper bound on what pydantic-ai, the file tools and the "
        "scripted model cost without the chain, so farm ÷ floor is a lower bound on how much deep-tui's chain and "
        "store and the farm's checks add (a compaction's summarizer run, a pydantic-ai run too, counts on the "
        "farm's side).",
        "",
        "| figure | measured |",
        "|---|---|",
        f"| the farm, CPU per session ({len(results):,} sessions) | {farm_cpu:.3f} s |",
        f"| the farm, CPU per session on the floor's seeds ({len(same):,}) | {farm_same:.3f} s |",
        f"| the floor, CPU per session on the same seeds | {floor.cpu_per_session:.3f} s "
        f"({floor.requests_per_session:.1f} requests per session, {floor.ms_per_request:.2f} ms per request; "
        f"{len(skipped)} seeds skipped{' — ' + ', '.join(str(s.seed) for s in skipped[:10]) if skipped else ''}) |",
        f"| farm ÷ floor, same seeds | {'–' if ratio is None else f'{ratio:.2f} × (the floor is {1 / ratio:.0%} of the farm)'} |",
        f"| the floor alone, this run's {len(results):,} sessions | {projected:,.1f} s on {workers} idle processes"
        f"{'' if workers == 2 else f', {on_two:,.1f} s on 2'}; the target for as many sessions on 2 cores: "
        f"≤ {target:,.1f} s ({SECONDS_TARGET_PER_10K} s per 10,000): "
        f"{_verdict(bool(measured) and on_two <= target)} |",
        "",
    ]


def render(results: Sequence[SessionResult], *, seconds: float, workers: int, load: tuple[float, float, float],
           at_commit: str, planned: int | None = None, floor: FloorFigures | None = None) -> str:
    """The whole of ``docs/fidelity.md``; ``planned`` (more than ``len(results)``) marks a run still going;
    ``floor``: pydantic-ai's floor measured on some of the run's seeds (its section is left out without it)."""
    total = Figures()
    for result in results:
        total.add(result)
    retention = mean(total.retention) if total.retention else None
    reclaim = mean(total.reclaim) if total.reclaim else None
    per_10k = seconds * 10_000 / max(1, len(results))
    cpu_per_session = sum(r.cpu_seconds for r in results) / max(1, len(results))
    cpu_per_10k = cpu_per_session * 10_000 / 2
    lines = [
        "# Fidelity: the chain under the fuzz farm",
        "",
        *([f"**Partial: {len(results):,} of {planned:,} sessions so far.**", ""]
          if planned is not None and planned > len(results) else []),
        f"Generated by `make fuzz` on {datetime.now(UTC):%Y-%m-%d %H:%M UTC} at commit {at_commit}: "
        f"{len(results):,} simulated sessions in {seconds:,.0f} s on {workers} "
        f"processes (load average before the run {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on "
        f"{os.cpu_count()} cores — the machine is shared).",
        "",
        "Each session drives the real `SessionRuntime` (the app's and `deep-tui run`'s chain, a real "
        "`SessionStore` on disk) with a scripted provider-like model that counts every request it receives "
        "(characters / 4 of the request as an OpenAI chat payload with tool definitions, × a per-session "
        "disagreement of 0.75–1.25) and reports that as usage. The search index is not updated after each "
        "append (as when another deep-tui holds it: it is derived from messages.json and no figure here "
        "depends on it); the `timeout` fault runs with a 20 ms summarizer timeout (the others: 0.3 s); file "
        "writes are allowed (as with `deep-tui run --allow-writes`), and a run's blocking calls run inline "
        "instead of in worker threads. "
        "See `fuzzfarm/` and the README.",
        "",
        "## Targets",
        "",
        "| figure | target | measured | |",
        "|---|---|---|---|",
        f"| requests over window − reserve | 0 | {total.over_limit} of {total.requests:,} "
        f"({total.subagent_requests:,} from {total.subagents:,} subagents, each against its own window) | "
        f"{_verdict(total.over_limit == 0)} |",
        f"| turns with more than one automatic summary | 0 | {total.multi_summary_turns} of {total.turns:,} | "
        f"{_verdict(total.multi_summary_turns == 0)} |",
        f"| recoverable byte-exact from disk | 100 % | {total.recoverable:.3%} of {total.recoverable_checked:,} "
        f"| {_verdict(total.recoverable_failed == 0)} |",
        f"| retention, faithful summarizer (mean) | ≥ {RETENTION_TARGET} | "
        f"{'–' if retention is None else f'{retention:.3f}'} over {len(total.retention):,} summaries | "
        f"{_verdict(retention is not None and retention >= RETENTION_TARGET)} |",
        f"| reversible share of each overage before a lossy compaction, tool-heavy (mean) | ≥ {RECLAIM_TARGET:.0%} "
        f"| {'–' if reclaim is None else f'{reclaim:.1%}'} over {len(total.reclaim):,} overages "
        f"({len(total.reclaim_lossy):,} reached a lossy step) | "
        f"{_verdict(reclaim is not None and reclaim >= RECLAIM_TARGET)} |",
        f"| 10,000 sessions on 2 cores | ≤ {SECONDS_TARGET_PER_10K} s | {per_10k:,.0f} s wall (scaled to 10,000 "
        f"from this run); {cpu_per_session:.3f} s of CPU per session, so {cpu_per_10k:,.0f} s on 2 idle cores | "
        f"{_verdict(per_10k <= SECONDS_TARGET_PER_10K)} |",
        f"| requests without the todo list or a /keep line, verbatim | 0 | {total.task_state_missed} of "
        f"{total.task_state_checked:,} that had some | {_verdict(total.task_state_missed == 0)} |",
        f"| changes that ran in plan mode | 0 | {total.plan_ran} of {total.plan_refused:,} asked for | "
        f"{_verdict(total.plan_ran == 0)} |",
        f"| failed turns | 0 | {total.failed_turns} | {_verdict(total.failed_turns == 0)} |",
        f"| sessions with any violation | 0 | {total.violating_sessions} | {_verdict(total.violating_sessions == 0)} |",
        "",
        *(floor_section(results, floor, workers) if floor is not None else []),
        "## By window",
        "",
        HEADER.format(label="window"),
        *(_row(f"{window:,}", figures) for window, figures in group(results, lambda r: r.window).items()),
        "",
        "## By summarizer fault",
        "",
        HEADER.format(label="summarizer"),
        *(_row(str(fault), figures) for fault, figures in group(results, lambda r: r.fault).items()),
        "",
        "## How the figures are defined",
        "",
        "- *over window − reserve*: requests whose size by the scripted model's own count exceeds the window "
        "less the answer reserve. *largest ÷ (window − reserve)*: the fullest request seen. Subagents' requests "
        "(tool-heavy turns hand reads to one to three subagents at once, each with a context chain of its own) "
        "are counted against the subagent's own window (the session's model, so the same size here).",
        "- *recoverable*: every model response and user prompt is in messages.json in order; every tool output "
        "the model was sent equals its record there; every evicted output's file equals the tool's own result "
        "byte for byte; every tier-2 pointer's saved copy equals the recorded original, and "
        "`read_file(offset, limit)` as the pointer says gives its lines; every messages.json loads with "
        "pydantic-ai's `ModelMessagesTypeAdapter`; every subagent's own messages.json loads undamaged and together "
        "they hold every response a subagent was given.",
        "- *task state*: some turns start with a `write_todos` call (windows of 8,000 and more), and `/keep` lines "
        "and mode switches (default, accept-writes, plan) come between actions; every request after them must "
        "carry the current list and every line in its instructions, verbatim, and no write, edit or command the "
        "model asked for in plan mode may have run.",
        "- *retention*: for the faithful summarizer (it keeps every identifier it is sent), the share of the "
        "identifiers of the span a summary replaced — taken from messages.json as the context held it (outputs "
        "tier 2 had made pointers of count as their pointers), not from what the summarizer was sent — found in "
        "the summary.",
        "- *reversible share*, tool-heavy sessions only: the session is cut into spans at each lossy compaction "
        "(summary or fallback). In a span, *reversible* is what eviction (an output's size less its preview) "
        "and tier 2 reclaimed; without them the context would have measured its size + *reversible*, and the "
        "span holds an *overage* when that went above the compaction threshold (85 % of window − reserve − "
        "margin). Its share is *reversible* ÷ (*reversible* + how far the context still was above the threshold "
        "when the automatic lossy compaction fired) — or 1 when none fired (the span ended with the session or "
        "at a manual `/compact`): the reversible tiers absorbed it all. The mean is over every overage; the "
        "tables by window and by fault also give it over only the overages that reached a lossy step (the "
        "figure this report gave before overages absorbed whole were counted).",
    ]
    return "\n".join(lines) + "\n"

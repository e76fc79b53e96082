"""Shared helpers for the benchmarks: timing, results, and the report table."""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

# Every benchmark (and the deep-tui processes it starts) uses a config home of its own: the hundreds of
# throw-away data dirs a run opens must not fill the user's data-dirs.json, whose newest 200 the sandbox hides.
_CONFIG_HOME = tempfile.mkdtemp(prefix="deep-tui-bench-config-")
os.environ["DEEP_TUI_CONFIG_HOME"] = os.path.join(_CONFIG_HOME, "deep-tui")
os.environ["XDG_CONFIG_HOME"] = os.path.join(_CONFIG_HOME, "xdg")


@dataclass
class BenchResult:
    """One measured figure next to its target (lower is better)."""

    name: str
    value: float
    unit: str
    target: float | None
    """None: a figure shown for context, with no target to meet."""
    ok: bool
    at_least: bool = False
    """True when higher is better (the target is a floor, e.g. a retention percentage)."""


def median_ms(fn: Callable[[], object], runs: int) -> float:
    """Median wall time of ``fn`` over ``runs`` calls, in milliseconds."""
    samples: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def result(name: str, value: float, unit: str, target: float) -> BenchResult:
    """A result whose ``ok`` is ``value <= target``."""
    return BenchResult(name, value, unit, target, value <= target)


def floor(name: str, value: float, unit: str, target: float) -> BenchResult:
    """A result whose ``ok`` is ``value >= target`` (higher is better)."""
    return BenchResult(name, value, unit, target, value >= target, at_least=True)


def info(name: str, value: float, unit: str) -> BenchResult:
    """A figure printed for context (always counts as met)."""
    return BenchResult(name, value, unit, None, True)


def report(results: list[BenchResult]) -> None:
    """Print each figure with its target and verdict."""
    width = max((len(r.name) for r in results), default=10)
    for r in results:
        if r.target is None:
            print(f"{r.name:<{width}}  median {r.value:10.3f} {r.unit:<4} (for context, no target)")
            continue
        verdict = "OK" if r.ok else "MISSED"
        sign = "≥" if r.at_least else "≤"
        print(f"{r.name:<{width}}  median {r.value:10.3f} {r.unit:<4} target {sign} {r.target:g} {r.unit:<4} {verdict}")

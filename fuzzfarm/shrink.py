"""Shrinks a failing session to a minimal action list that still shows the same kind of violation."""

from __future__ import annotations

from collections.abc import Callable

from fuzzfarm.spec import SessionSpec

MAX_RUNS = 80


def violation_kind(violation: str) -> str:
    """The class of a violation, e.g. ``request of`` / ``not recoverable`` / ``crashed: KeyError``."""
    for prefix in ("request of", "not recoverable", "manual /compact", "messages.json"):
        if violation.startswith(prefix):
            return prefix
    if violation.startswith("crashed:"):
        return violation.split(":")[1].strip()
    if "automatic summaries" in violation:
        return "automatic summaries"
    if " failed: " in violation:
        return "turn failed"
    return violation[:40]


def shrink(spec: SessionSpec, violations: list[str],
           run: Callable[[SessionSpec], list[str]]) -> tuple[SessionSpec, list[str]]:
    """Delta debugging over ``spec.actions``: drop chunks (halves, quarters, … single actions) while the
    session still shows a violation of the first one's kind; at most ``MAX_RUNS`` re-runs."""
    kind = violation_kind(violations[0])
    actions = list(spec.actions)
    best = violations
    runs = 0
    chunk = max(1, len(actions) // 2)
    while chunk >= 1 and runs < MAX_RUNS:
        start = 0
        removed_any = False
        while start < len(actions) and runs < MAX_RUNS:
            candidate = actions[:start] + actions[start + chunk:]
            if not candidate or all(a.kind != "turn" for a in candidate):
                start += chunk
                continue
            runs += 1
            found = run(spec.with_actions(tuple(candidate)))
            if any(violation_kind(v) == kind for v in found):
                actions, best, removed_any = candidate, found, True
            else:
                start += chunk
        if not removed_any:
            chunk //= 2
    return spec.with_actions(tuple(actions)), best

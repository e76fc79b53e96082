"""What a simulated session does: its settings and the list of actions, as JSON-ready dataclasses.

A reproducer is exactly a :class:`SessionSpec` written to JSON, so a test can replay it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

FaultKind = Literal["faithful", "raises", "timeout", "garbage", "inflate", "drops", "extractive"]
FAULT_KINDS: tuple[FaultKind, ...] = ("faithful", "raises", "timeout", "garbage", "inflate", "drops", "extractive")
ActionKind = Literal["turn", "resume", "fork", "compact", "keep", "mode"]


@dataclass(frozen=True)
class ToolCallSpec:
    """One tool call the scripted model will make: a real tool of the app and its arguments."""

    tool: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Action:
    """One step of a session: a user turn (tool batches then an answer), a resume from disk, a fork, a
    manual ``/compact <focus>``, a ``/keep <text>`` standing instruction, or a switch to the mode ``text``."""

    kind: ActionKind
    prompt: str = ""
    batches: tuple[tuple[ToolCallSpec, ...], ...] = ()
    """Tool-call batches of a turn, one model response each (several calls in one batch run in parallel)."""
    answer: str = ""
    focus: str = ""
    subtasks: tuple[Action, ...] = ()
    """What each subagent a ``task`` call of this turn starts does (matched by its prompt): tool batches, answer."""
    text: str = ""
    """The ``/keep`` line, or the mode switched to."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["batches"] = [[asdict(call) for call in batch] for batch in self.batches]
        data["subtasks"] = [subtask.to_dict() for subtask in self.subtasks]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Action:
        batches = tuple(tuple(ToolCallSpec(c["tool"], dict(c["args"])) for c in batch)
                        for batch in data.get("batches", ()))
        return cls(kind=data["kind"], prompt=data.get("prompt", ""), batches=batches,
                   answer=data.get("answer", ""), focus=data.get("focus", ""), text=data.get("text", ""),
                   subtasks=tuple(cls.from_dict(item) for item in data.get("subtasks", ())))

    def without_subagents(self) -> Action:
        """This action with no ``task`` call (a batch of only those is dropped) and no subtasks."""
        batches = tuple(batch for batch in (tuple(c for c in b if c.tool != "task") for b in self.batches) if batch)
        return replace(self, batches=batches, subtasks=())


@dataclass(frozen=True)
class SessionSpec:
    """A whole simulated session; deterministic given its fields."""

    seed: int
    window: int
    fault: FaultKind
    disagreement: float
    """The scripted model's count ÷ characters/4 of the request: 0.75–1.25."""
    model_counts: bool
    """Whether the scripted model offers ``count_tokens`` (like some providers do)."""
    tool_heavy: bool
    actions: tuple[Action, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "window": self.window, "fault": self.fault, "disagreement": self.disagreement,
                "model_counts": self.model_counts, "tool_heavy": self.tool_heavy,
                "actions": [action.to_dict() for action in self.actions]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SessionSpec:
        return cls(seed=int(data["seed"]), window=int(data["window"]), fault=data["fault"],
                   disagreement=float(data["disagreement"]), model_counts=bool(data["model_counts"]),
                   tool_heavy=bool(data["tool_heavy"]),
                   actions=tuple(Action.from_dict(a) for a in data["actions"]))

    def without_subagents(self) -> SessionSpec:
        """The session with no subagent traffic (the floor's bare agent has no ``task`` tool)."""
        return self.with_actions(tuple(action.without_subagents() for action in self.actions))

    def with_actions(self, actions: tuple[Action, ...]) -> SessionSpec:
        return SessionSpec(self.seed, self.window, self.fault, self.disagreement, self.model_counts,
                           self.tool_heavy, actions)


def write_reproducer(spec: SessionSpec, violations: list[str], directory: Path) -> Path:
    """Save ``spec`` (already shrunk) with the violations it shows; returns the file."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"seed-{spec.seed}.json"
    path.write_text(json.dumps({"violations": violations, "spec": spec.to_dict()}, indent=1) + "\n")
    return path


def read_reproducer(path: Path) -> tuple[SessionSpec, list[str]]:
    data = json.loads(path.read_text())
    return SessionSpec.from_dict(data["spec"]), list(data.get("violations", []))

"""What a running subagent tells the parent's run (custom events, which the session turns into
:class:`~tui.agent.turn_events.SubagentActivity` for the screen), and what it keeps about itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic_ai import CustomEvent

SubagentState = Literal["starting", "running", "finished", "failed", "cancelled"]


@dataclass(kw_only=True)
class SubagentProgress(CustomEvent, name="subagent_progress"):
    """A subagent's state changed: it started, began or ended a tool call, made a request, or ended."""

    number: int
    agent_type: str
    """Its definition's name (``name`` is the custom event's own)."""
    description: str
    state: SubagentState
    tool: str | None = None
    """The tool it is running now."""
    tokens: int = 0
    """Its own context now (on its own window)."""
    window: int = 0
    requests: int = 0
    cost_usd: float | None = 0.0
    history: str = ""
    """Its messages.json."""
    answer: str = ""
    """Its answer (the end of it), once finished; why it stopped otherwise."""


@dataclass
class SubagentStatus:
    """A subagent as the session keeps it (``/context`` and the app's block read it)."""

    number: int
    name: str
    description: str
    tool_call_id: str
    state: SubagentState = "starting"
    tool: str | None = None
    tokens: int = 0
    peak_tokens: int = 0
    window: int = 0
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    compactions: int = 0
    history: str = ""
    answer_chars: int = 0
    reason: str = ""
    tools_used: list[str] = field(default_factory=list)

    @property
    def running(self) -> bool:
        return self.state in ("starting", "running")

    def progress(self, answer: str = "") -> SubagentProgress:
        return SubagentProgress(number=self.number, agent_type=self.name, description=self.description, state=self.state,
                                tool=self.tool, tokens=self.tokens, window=self.window, requests=self.requests,
                                cost_usd=self.cost_usd, history=self.history, answer=answer)

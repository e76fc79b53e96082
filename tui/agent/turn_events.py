"""What one agent turn streams to its caller (the app or ``deep-tui run``)."""

from __future__ import annotations

from dataclasses import dataclass

from tui.base.redaction import redact


@dataclass(frozen=True)
class TextDelta:
    """A piece of the assistant's answer; append it, never re-render the message."""

    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    call_id: str
    tool_name: str
    args_json: str

    def __post_init__(self) -> None:  # shown as is (a write of a .env file carries the key)
        object.__setattr__(self, "args_json", redact(self.args_json))


@dataclass(frozen=True)
class ToolOutputDelta:
    """A piece of a running tool's output (a shell command's), terminal-safe; append it to the tool block."""

    call_id: str
    text: str


@dataclass(frozen=True)
class ToolOutputEnded:
    """A running tool's output is over (a shell command ended): ``status`` is how (``[exit status 0 · 1.2 s]``),
    shown at once; its :class:`ToolCallFinished` follows once the result has gone through the chain (a large
    output saved to disk first)."""

    call_id: str
    status: str


@dataclass(frozen=True)
class ToolCallFinished:
    call_id: str
    tool_name: str
    preview: str
    """What the model sees of the result (already evicted/capped)."""
    size_chars: int
    evicted_path: str | None = None
    """Where the whole output was saved when it was evicted."""
    saved_chars: int | None = None
    """How many characters the saved output holds (``preview`` is only part of it)."""
    is_error: bool = False
    denied: bool = False
    """The call was not run: the user (or the write policy) refused it; ``preview`` says why."""
    last_line: str = ""
    """The result's last line (a command's exit status), whatever the preview cut."""

    def __post_init__(self) -> None:  # shown as is (a read of a .env file shows the key)
        object.__setattr__(self, "preview", redact(self.preview))


@dataclass(frozen=True)
class PromptAttached:
    """The ``@path`` files of the prompt, one short line each (name and size, or why not)."""

    lines: tuple[str, ...]
    refused: tuple[str, ...] = ()
    """Those of ``lines`` that were not attached (the file is missing, outside the workdir, past the 20th…)."""


@dataclass(frozen=True)
class SubagentActivity:
    """News of a subagent the ``task`` call ``call_id`` runs: it started, is using a tool, made a request, ended.
    Every string is terminal-safe; ``tokens`` and ``window`` are the subagent's own context, not the session's."""

    call_id: str
    number: int
    name: str
    description: str
    state: str
    """``starting``, ``running``, ``finished``, ``failed`` or ``cancelled``."""
    tool: str | None = None
    tokens: int = 0
    window: int = 0
    requests: int = 0
    cost_usd: float | None = 0.0
    history: str = ""
    """Its messages.json (its transcript)."""
    answer: str = ""
    """The end of its answer once finished, or why it stopped."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "answer", redact(self.answer))

    @property
    def running(self) -> bool:
        return self.state in ("starting", "running")


@dataclass(frozen=True)
class McpServersStarting:
    """The turn waits for the MCP servers still starting (each within its handshake budget) before its first
    request, so that their tools are offered: say so, or the wait looks like a hung request."""

    names: tuple[str, ...]
    """The servers' names from the config (letters, digits, ``-`` and ``_``)."""

    def describe(self) -> str:
        """``starting MCP servers (github, docs)…``"""
        return f"starting MCP servers ({', '.join(self.names)})…"


@dataclass(frozen=True)
class McpServersStarted:
    """The servers a :class:`McpServersStarting` named are no longer starting (each ready, or failed with a notice
    of its own): the turn goes on to its first request."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class TurnFinished:
    output: str
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True)
class TurnFailed:
    """The turn stopped; ``cancelled`` is True when the user asked for it (Esc). ``message`` quotes errors
    (a provider's may echo the API key), so known secrets are redacted from it here, once for every caller."""

    message: str
    cancelled: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "message", redact(self.message))


TurnEvent = (TextDelta | ThinkingDelta | ToolCallStarted | ToolOutputDelta | ToolOutputEnded | ToolCallFinished
             | PromptAttached | McpServersStarting | McpServersStarted | SubagentActivity | TurnFinished
             | TurnFailed)

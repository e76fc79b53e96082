"""The chain's typed event stream.

Every event the context-management chain emits is one of these frozen
dataclasses. The app subscribes to them, ``deep-tui run`` prints them, and each
is appended to the session's ``events.jsonl`` via :meth:`ChainEvent.to_record`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal

WindowSource = Literal["model", "genai-prices", "config", "flag", "default"]

_WINDOW_SOURCE_WORDS: dict[str, str] = {
    "model": "the model",
    "genai-prices": "genai-prices",
    "config": "config.toml",
    "flag": "--context-window",
}


def describe_window_source(source: str) -> str:
    """Where the window came from, as said to the user: ``window from --context-window``, ``window assumed…``."""
    if source == "default":
        return "window assumed (the model's is unknown; set --context-window)"
    return f"window from {_WINDOW_SOURCE_WORDS.get(source, source)}"


CompactionStrategy = Literal["mask", "pointer", "summary", "fallback"]
CompactionTrigger = Literal["auto", "manual", "preflight"]
RETENTION_TARGET = 0.9
"""A summary keeping fewer of its span's identifiers than this gets a second pass asked for the missing ones, and
is flagged (divider, /compact) when it still keeps fewer."""


@dataclass(frozen=True, kw_only=True)
class ChainEvent:
    """Base of every chain event; ``kind`` names it in events.jsonl."""

    kind: ClassVar[str] = "event"
    timestamp: float = field(default_factory=time.time)

    def to_record(self) -> dict[str, Any]:
        """A JSON-ready dict with the ``kind`` first."""
        record: dict[str, Any] = {"kind": self.kind}
        for item in fields(self):  # every field is flat: numbers, strings, None, tuples of strings
            value = getattr(self, item.name)
            record[item.name] = list(value) if isinstance(value, tuple) else value
        return record


@dataclass(frozen=True, kw_only=True)
class UsageEvent(ChainEvent):
    """Tokens in context, fired before every model request and after every compaction."""

    kind: ClassVar[str] = "usage"
    tokens: int
    window: int
    window_source: WindowSource
    compaction_threshold: float = 0.85
    summarize_threshold: float = 0.90
    auto_compact: bool = True
    """False when automatic compaction is off (the gauge's marks say so; the pre-flight still cuts)."""
    reserve: int = 0
    """Tokens kept free for the answer (the request's max_tokens or ``output_reserve``)."""
    margin: int = 0
    """Tokens kept free for estimate error."""
    final: bool = False
    """True for the count after an answer arrived (the context as the next request starts from)."""

    @property
    def fraction(self) -> float:
        return self.tokens / self.window if self.window else 0.0

    @property
    def limit(self) -> int:
        """The most a request may carry: the window less the reserve and the margin."""
        return max(1, self.window - self.reserve - self.margin)

    def mark(self, threshold: float) -> float:
        """Where ``threshold`` (a share of the limit) sits as a share of the whole window."""
        return threshold * self.limit / self.window if self.window else threshold

    @property
    def level(self) -> Literal["ok", "warn", "critical"]:
        """``warn`` from the compaction threshold, ``critical`` from the summary threshold (of the limit)."""
        if self.tokens >= self.summarize_threshold * self.limit:
            return "critical"
        if self.tokens >= self.compaction_threshold * self.limit:
            return "warn"
        return "ok"

    @property
    def assumed(self) -> bool:
        """True when the window is a default guess rather than known for this model."""
        return self.window_source == "default"


@dataclass(frozen=True, kw_only=True)
class EvictedEvent(ChainEvent):
    """A large tool output was saved to disk and replaced by a preview (tier 1)."""

    kind: ClassVar[str] = "evicted"
    tool_name: str
    tool_call_id: str
    path: str
    tokens: int
    size_bytes: int
    error: str | None = None
    """Set when the file could not be written (the preview is kept regardless)."""
    args: str = ""
    """The tool call's arguments (JSON), so a saved output can be traced to the file or query it came from."""


@dataclass(frozen=True, kw_only=True)
class CompactionStarted(ChainEvent):
    kind: ClassVar[str] = "compaction_started"
    trigger: CompactionTrigger
    tokens: int
    focus: str | None = None


@dataclass(frozen=True, kw_only=True)
class CompactionFinished(ChainEvent):
    """A compaction changed the working context."""

    kind: ClassVar[str] = "compaction_finished"
    strategy: CompactionStrategy
    trigger: CompactionTrigger
    tokens_before: int
    tokens_after: int
    messages_replaced: int
    files_created: tuple[str, ...] = ()
    images_replaced: int = 0
    """Tier 2: how many of ``messages_replaced`` are images of old prompts replaced by their placeholder."""
    retention_score: float | None = None
    missing_identifiers: tuple[str, ...] = ()
    """The first identifiers of the summarized span the summary lacks (at most 20; ``missing_count`` counts all)."""
    missing_count: int | None = None
    """How many identifiers the summary lacks in all (``None``: recorded before deep-tui counted them)."""
    focus: str | None = None
    summary_index: int | None = None
    """Index in messages.json of the recorded summary message (summary/fallback)."""
    priced: bool = False
    """The session priced this compaction (the three fields below are set); see ``tui.agent.models.cost``."""
    cost_usd: float | None = None
    """What the summarizer's requests for it cost (USD); ``None`` when they could not be priced."""
    cost_requests: int = 0
    """Summarizer requests it made (0: no model call, e.g. tier 2 or an extractive summary)."""
    saves_usd_per_request: float | None = None
    """Roughly what each later request saves: tokens saved × the chat model's input price."""

    @property
    def tokens_saved(self) -> int:
        return max(0, self.tokens_before - self.tokens_after)

    @property
    def missing(self) -> int:
        """How many identifiers the summary lacks (the listed ones when the count was not recorded)."""
        return self.missing_count if self.missing_count is not None else len(self.missing_identifiers)

    @property
    def low_retention(self) -> bool:
        """The summary kept fewer identifiers than :data:`RETENTION_TARGET`, even after its second pass."""
        return self.retention_score is not None and self.retention_score < RETENTION_TARGET and self.missing > 0


@dataclass(frozen=True, kw_only=True)
class CompactionFailed(ChainEvent):
    """A compaction was attempted and the history was left exactly as it was."""

    kind: ClassVar[str] = "compaction_failed"
    strategy: CompactionStrategy
    trigger: CompactionTrigger
    reason: str
    tokens: int
    focus: str | None = None
    priced: bool = False
    cost_usd: float | None = None
    """What the summarizer's requests cost even though the compaction failed (see CompactionFinished)."""
    cost_requests: int = 0
    would_free: int | None = None
    """Set when a summary was written but rejected for freeing too little: the tokens it would have freed."""
    tokens_estimated: int | None = None
    """With ``would_free``: the context as the guard measured it (the estimate ``would_free`` is part of)."""
    message_index: int | None = None
    """How many messages messages.json held when it was tried: the chat shows the attempt there (before the
    message of that index), live and when the session is opened again."""

    @property
    def freed_too_little(self) -> bool:
        """A summary was written and rejected by the inflation guard."""
        return self.would_free is not None


@dataclass(frozen=True, kw_only=True)
class MemoryChanged(ChainEvent):
    kind: ClassVar[str] = "memory_changed"
    path: str


@dataclass(frozen=True, kw_only=True)
class SubagentRan(ChainEvent):
    """A subagent the ``task`` tool ran, in the parent's events: how it ended, how large its own context grew
    (on its own window: none of it entered the parent's), what it cost (added to the session's too)."""

    kind: ClassVar[str] = "subagent"
    number: int
    name: str
    """Its definition's name (``general-purpose`` when the model named none)."""
    description: str
    outcome: Literal["finished", "failed", "cancelled"]
    tokens: int = 0
    """Its context at its last request."""
    peak_tokens: int = 0
    window: int = 0
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    """``None`` when a request could not be priced."""
    compactions: int = 0
    answer_chars: int = 0
    reason: str = ""
    """Why it failed or was cancelled."""
    history: str = ""
    """Its messages.json."""
    tool_call_id: str = ""


@dataclass(frozen=True, kw_only=True)
class FilesRestored(ChainEvent):
    """A rewind put the working directory's files back to how they were before a prompt (``/rewind``)."""

    kind: ClassVar[str] = "files_restored"
    message: int
    """The prompt's message number: the files are as they were before it."""
    source_session: str
    """The session whose restore point it was (a fork made by the same rewind names its parent)."""
    count: int
    """How many paths were written or removed."""
    files: tuple[str, ...] = ()
    """The first of them (at most 50)."""
    kept: tuple[str, ...] = ()
    """Files changed outside deep-tui that the user chose to keep as they were."""
    undo: int | None = None
    """The message number whose restore point undoes this rewind (``None``: none could be taken)."""
    failed: tuple[str, ...] = ()
    """Paths that could not be restored, each with why."""


EVENT_TYPES: dict[str, type[ChainEvent]] = {
    cls.kind: cls
    for cls in (UsageEvent, EvictedEvent, CompactionStarted, CompactionFinished, CompactionFailed, MemoryChanged,
                SubagentRan, FilesRestored)
}


def event_from_record(record: dict[str, Any]) -> ChainEvent | None:
    """Rebuild an event from an events.jsonl line; ``None`` for an unknown kind."""
    cls = EVENT_TYPES.get(str(record.get("kind")))
    if cls is None:
        return None
    names = {f.name for f in fields(cls)}
    values = {key: value for key, value in record.items() if key in names}
    for key, value in values.items():
        if isinstance(value, list):
            values[key] = tuple(value)
    try:
        return cls(**values)
    except TypeError:
        return None

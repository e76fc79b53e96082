"""``session.json``: the small metadata file the picker reads (written atomically)."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.base.atomic import write_atomic
from tui.base.metadata_keys import REWIND_KEY, USER_COMMAND_KEY
from tui.base.nofollow import read_text
from tui.store.cost_totals import CostTotals
from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

TITLE_LIMIT = 60
UNTITLED = "untitled"


@dataclass(frozen=True)
class ParentRef:
    """Where a fork came from: the parent session and how many of its messages were copied."""

    session: str
    index: int | None = None


@dataclass(frozen=True)
class UsageSnapshot:
    """The last token usage the chain reported for a session."""

    tokens: int
    window: int
    window_source: str = "default"


@dataclass
class SessionMeta:
    """Everything listing a session needs, without opening its history."""

    id: str
    title: str = UNTITLED
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    message_count: int = 0
    model: str | None = None
    parent: ParentRef | None = None
    last_usage: UsageSnapshot | None = None
    compressions: int = 0
    cost: CostTotals | None = None
    """What the session's model requests cost (``None``: not recorded, e.g. an older session)."""
    restore_points: int = 0
    """Prompts with a snapshot of the working directory taken before their first change (``/rewind``)."""
    restores: int = 0
    """Rewinds made in this session (files restored)."""
    summary_retry_from: int | None = None
    """After an automatic summary rejected for freeing too little: no automatic summary (a paid request that would
    be rejected again) until the context reaches this many tokens — kept here so a `run --continue` waits too."""
    compaction_threshold: float | None = None
    """The automatic compaction threshold the user set for this session in /context (``None``: the config's)."""
    auto_compact: bool | None = None
    """Automatic compaction switched off (or on) for this session in /context (``None``: as the config says)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], session_id: str) -> SessionMeta:
        """Tolerates missing and unknown keys; wrong types raise ``ValueError``/``TypeError``."""
        parent = data.get("parent")
        usage = data.get("last_usage")
        return cls(
            id=session_id,
            title=visible(str(data.get("title") or UNTITLED)),
            created=float(data.get("created", 0.0)),
            updated=float(data.get("updated", data.get("created", 0.0))),
            message_count=int(data.get("message_count", 0)),
            model=str(data["model"]) if data.get("model") else None,
            parent=ParentRef(str(parent["session"]), parent.get("index")) if isinstance(parent, dict) else None,
            last_usage=UsageSnapshot(int(usage["tokens"]), int(usage["window"]), str(usage.get("window_source", "default")))
            if isinstance(usage, dict)
            else None,
            compressions=int(data.get("compressions", 0)),
            cost=CostTotals.from_dict(data.get("cost")),
            restore_points=int(data.get("restore_points", 0)),
            restores=int(data.get("restores", 0)),
            summary_retry_from=_positive_int(data.get("summary_retry_from")),
            compaction_threshold=_share(data.get("compaction_threshold")),
            auto_compact=data["auto_compact"] if isinstance(data.get("auto_compact"), bool) else None,
        )

    def write(self, path: Path) -> None:
        """Atomic (:func:`tui.base.atomic.write_atomic`): a reader never sees half a file."""
        write_atomic(path, json.dumps(self.to_dict(), indent=2, ensure_ascii=False))


def _share(value: object) -> float | None:
    """A threshold as a share of the window (0.05 … 0.99, as the config allows), else ``None`` (the config's)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0.05 <= value <= 0.99:
        return float(value)
    return None


def _positive_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def read_meta(path: Path, session_id: str) -> SessionMeta:
    """Parse ``session.json``; raises ``ValueError`` (or ``OSError``, ``LinkRefusedError`` for a link) when it
    cannot."""
    data = json.loads(read_text(path))
    if not isinstance(data, dict):
        raise ValueError("session.json is not an object")
    return SessionMeta.from_dict(data, session_id)


def title_from(messages: list[ModelMessage]) -> str | None:
    """The first user prompt, on one line, trimmed to the title length (media shown as a short note)."""
    # pydantic-ai is imported here, not above: reading session.json (``deep-tui search``) does not need it.
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    from tui.store.damage import is_damage_note
    from tui.text.message_text import typed_text

    for message in messages:
        if not isinstance(message, ModelRequest) or is_damage_note(message) \
                or {USER_COMMAND_KEY, REWIND_KEY} & set(message.metadata or {}):
            continue  # a !command's output is not what the session is about
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                line = " ".join(visible(typed_text(part.content)).split())
                if line:
                    return line if len(line) <= TITLE_LIMIT else line[: TITLE_LIMIT - 1] + "…"
    return None

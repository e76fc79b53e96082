"""Placeholders for damaged messages, and what a repair of ``messages.json`` did (for the user)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

from tui.base.metadata_keys import DAMAGED_METADATA_KEY

"""Request metadata key marking a placeholder that stands where a damaged message was."""


def damage_note(index: int, *, reason: str, size: int, kept_in: str | None) -> ModelRequest:
    """The message put at ``index`` in place of one that could not be read.

    It tells the model (and the user reading the transcript) that something was here; its metadata
    says where the damaged bytes are kept.
    """
    where = f"; its bytes are kept in {kept_in}" if kept_in else ""
    text = (f"[deep-tui: message {index + 1} of this session was damaged on disk ({reason}, {size} bytes) "
            f"and could not be read{where}]")
    info: dict[str, Any] = {"index": index, "reason": reason, "bytes": size, "kept_in": kept_in}
    return ModelRequest(parts=[UserPromptPart(text)], metadata={DAMAGED_METADATA_KEY: info})


def is_damage_note(message: ModelMessage) -> bool:
    """True for a placeholder made by :func:`damage_note`."""
    return isinstance(message, ModelRequest) and isinstance(message.metadata, dict) \
        and DAMAGED_METADATA_KEY in message.metadata


@dataclass(frozen=True)
class DamageReport:
    """What :meth:`tui.store.messages_file.MessagesFile.repair` found and did."""

    path: Path
    intact: int
    """Messages recovered whole."""
    damaged: list[int]
    """Indices now holding a placeholder note."""
    damaged_bytes: int
    torn_bytes: int
    kept_as: Path
    """The file as it was before the repair (every original byte)."""

    def describe(self) -> str:
        """One line for the user: how many messages were recovered, what was set aside, where."""
        parts = [f"{self.path} was damaged: {self.intact} intact messages recovered"]
        if self.damaged:
            shown = ", ".join(f"#{index + 1}" for index in self.damaged[:5])
            more = f" and {len(self.damaged) - 5} more" if len(self.damaged) > 5 else ""
            parts.append(f"{len(self.damaged)} damaged message(s) ({shown}{more}; {self.damaged_bytes} bytes) "
                         "replaced by a note")
        if self.torn_bytes:
            parts.append(f"{self.torn_bytes} bytes of an unfinished write dropped from the end")
        parts.append(f"the file as it was is kept as {self.kept_as.name}")
        return "; ".join(parts)

"""``@path`` in a prompt: the file's content goes with the prompt, as an attachment the model reads.

Only a mention that names an existing path is taken (``@dataclass`` or an e-mail address stay text). The path
policy applies as for the file tools: nothing outside the workdir, nothing in deep-tui's data dir, no link that
leads out. A text file up to the eviction limit goes in whole; a larger one is saved like an evicted tool output
(``large_tool_results/``) and the model gets a preview and the pointer; a file too large to copy is previewed
from its head with a pointer to the file itself; a binary file is described, never dumped. The attachments are
extra text items of the prompt (recorded in messages.json with it); the chat shows each as a name and size.
"""

from __future__ import annotations

import json
import mimetypes
import os
import re
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic_ai import ToolFailed
from pydantic_ai.messages import UserContent

from tui.agent.tools.path_policy import PathPolicy
from tui.chain.estimate import text_tokens
from tui.chain.events import ChainEvent, EvictedEvent
from tui.chain.eviction import build_preview
from tui.chain.safe_names import write_output
from tui.text.attachment_text import attachment_item, describe_attachment
from tui.text.terminal_text import visible

MENTION = re.compile(r'(?<![\w@/])@(?:"([^"\n]+)"|([^\s"]+))')
"""``@path`` or ``@"a path with spaces"``; not inside a word (``user@example.com``)."""
TRAILING = ",;:!?)]}'."
"""Punctuation that ends a sentence after a mention rather than the path (tried only when the path is missing)."""
MAX_MENTIONS = 20
"""At most this many files are attached to one prompt."""
MAX_COPY_BYTES = 4_000_000
"""A larger file is not copied: its head is previewed and the pointer is the file itself."""
HEAD_BYTES = 64_000
BINARY_SNIFF_BYTES = 8_192
ATTACHMENT_TOOL = "@ attachment"
"""The name saved attachments carry in eviction events (the evicted-outputs browser)."""


@dataclass(frozen=True)
class Attachment:
    """One ``@path`` of a prompt: what was attached, or why nothing was."""

    path: str
    """As the workdir-relative path (or as typed, when refused)."""
    size_bytes: int
    kind: str
    """``text``, ``preview`` (too large: saved and previewed), ``binary``, ``directory`` or ``refused``."""
    note: str = ""
    """Why it was refused, or where the whole file was saved."""

    def describe(self) -> str:
        """``src/app.py (12.3 KB)`` — what the chat shows instead of the content."""
        return describe_attachment(visible(self.path), self.size_bytes, self.kind, visible(self.note))


@dataclass(frozen=True)
class AttachedPrompt:
    """The prompt as sent: its text, then one text item per attachment."""

    content: str | list[UserContent]
    attachments: tuple[Attachment, ...]


def mentioned_paths(prompt: str, workdir: Path) -> list[str]:
    """The ``@`` mentions of ``prompt`` that name an existing path (in order, each once)."""
    found: list[str] = []
    for match in MENTION.finditer(prompt):
        quoted, bare = match.group(1), match.group(2)
        candidate = quoted or bare
        if not quoted:
            while candidate and not os.path.lexists(_joined(workdir, candidate)) and candidate[-1] in TRAILING:
                candidate = candidate[:-1]
        if candidate and candidate not in found and os.path.lexists(_joined(workdir, candidate)):
            found.append(candidate)
    return found[:MAX_MENTIONS]


def _joined(workdir: Path, path: str) -> Path:
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else workdir / candidate


class MentionAttacher:
    """Turns a prompt's ``@path`` mentions into attachments, under the file tools' path policy."""

    def __init__(self, policy: PathPolicy, large_results_dir: Path, limit_tokens: Callable[[], int],
                 emit: Callable[[ChainEvent], None]) -> None:
        """``limit_tokens``: the eviction limit now (a file over it is saved and previewed); ``emit``: where the
        eviction event of a saved attachment goes."""
        self.policy = policy
        self.large_results_dir = large_results_dir
        self.limit_tokens = limit_tokens
        self.emit = emit

    def attach(self, prompt: str) -> AttachedPrompt:
        """The prompt with its mentioned files attached (the prompt unchanged when it mentions none)."""
        paths = mentioned_paths(prompt, self.policy.workdir)
        if not paths:
            return AttachedPrompt(prompt, ())
        items: list[UserContent] = [prompt]
        attachments: list[Attachment] = []
        for path in paths:
            attachment, text = self._one(path)
            attachments.append(attachment)
            if text is not None:
                items.append(attachment_item(attachment.path, attachment.size_bytes, attachment.kind, text))
        return AttachedPrompt(items, tuple(attachments))

    def _one(self, typed: str) -> tuple[Attachment, str | None]:
        try:
            resolved = self.policy.resolve(typed)
        except ToolFailed as refused:
            return Attachment(typed, 0, "refused", _reason(str(refused))), None
        shown = self.policy.display(resolved)
        try:
            info = os.stat(resolved)
        except OSError as error:
            return Attachment(shown, 0, "refused", error.strerror or str(error)), None
        if stat.S_ISDIR(info.st_mode):
            return Attachment(shown, 0, "directory"), f"(a directory: use ls(path={shown!r}) to list it)"
        if not stat.S_ISREG(info.st_mode):
            return Attachment(shown, 0, "refused", "not a regular file"), None
        size = info.st_size
        try:
            data = _read(resolved, min(size, MAX_COPY_BYTES) if size <= MAX_COPY_BYTES else HEAD_BYTES)
        except OSError as error:
            return Attachment(shown, size, "refused", error.strerror or str(error)), None
        if _is_binary(data):
            kind = mimetypes.guess_type(shown)[0] or "unknown type"
            return (Attachment(shown, size, "binary"),
                    f"(binary file, {kind}, {size:,} bytes: not included as text)")
        text = data.decode("utf-8", errors="replace")
        if size > MAX_COPY_BYTES:
            if len(data) == HEAD_BYTES:  # the cut may have split the last character
                text = text.rstrip("\ufffd")
            return (Attachment(shown, size, "preview", "the file itself"),
                    f"[The file is {size:,} bytes; its first {len(data):,} bytes are shown. Read the rest with "
                    f"read_file(path={shown!r}, offset=…, limit=400).]\n{build_preview(text, path=None, tool_name=shown, error='too large to copy')}")
        if text_tokens(text) <= self.limit_tokens():
            return Attachment(shown, size, "text"), text
        return self._saved(shown, size, text)

    def _saved(self, shown: str, size: int, text: str) -> tuple[Attachment, str]:
        """Save the whole file like an evicted tool output; the model gets the preview and the pointer."""
        key = f"attachment-{secrets.token_hex(6)}"
        saved: str | None = None
        error: str | None = None
        try:
            saved = str(write_output(self.large_results_dir, key, text, ".txt"))
        except (OSError, ValueError) as failure:
            error = f"{type(failure).__name__}: {failure}"
        self.emit(EvictedEvent(tool_name=ATTACHMENT_TOOL, tool_call_id=key, path=saved or "",
                               tokens=text_tokens(text), size_bytes=size, error=error,
                               args=json.dumps({"path": shown}, ensure_ascii=False)))
        preview = build_preview(text, path=saved, tool_name=f"the attached file {shown}", error=error)
        return Attachment(shown, size, "preview", saved or error or ""), preview


def _read(path: Path, count: int) -> bytes:
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        chunks: list[bytes] = []
        remaining = count
        while remaining > 0:
            chunk = os.read(descriptor, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(descriptor)


def _is_binary(data: bytes) -> bool:
    sample = data[:BINARY_SNIFF_BYTES]
    if b"\x00" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start < len(sample) - 4  # a character cut at the end of the sample is not binary
    return False


def _reason(message: str) -> str:
    """The policy's refusal, shortened for the chat (the part before the first ';')."""
    return message.split(";")[0]

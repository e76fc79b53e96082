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
from dataclasses import dataclass, field, replace
from pathlib import Path

from pydantic_ai import ToolFailed
from pydantic_ai.messages import UserContent

from tui.agent.attachments.image_files import ImageAttacher, ImageRefused, is_image_name
from tui.agent.attachments.pasted_paths import pasted_image_paths
from tui.agent.tools.path_policy import PathPolicy
from tui.base.nofollow import read_at_most
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
"""At most this many files are attached to one prompt (the rest are named as not attached)."""
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
    """``text``, ``preview`` (too large: saved and previewed), ``binary``, ``directory``, ``image`` or
    ``refused``."""
    note: str = ""
    """Why it was refused, or where the whole file was saved."""
    pixels: tuple[int, int] | None = None
    """An image's width and height."""

    def describe(self) -> str:
        """``src/app.py (12.3 KB)``, ``[image: shot.png · 1280×720 · 140 KB]`` — what the chat shows instead of
        the content."""
        return describe_attachment(visible(self.path), self.size_bytes, self.kind, visible(self.note), self.pixels)


@dataclass(frozen=True)
class AttachedPrompt:
    """The prompt as sent: its text, then one text item per attachment."""

    content: str | list[UserContent]
    attachments: tuple[Attachment, ...]


def mentioned_paths(prompt: str, workdir: Path, *, limit: int | None = MAX_MENTIONS) -> list[str]:
    """The ``@`` mentions of ``prompt`` that name an existing path (in order, each once; at most ``limit``)."""
    found: list[str] = []
    for match in MENTION.finditer(prompt):
        quoted, bare = match.group(1), match.group(2)
        candidate = quoted or bare
        if not quoted:
            while candidate and not os.path.lexists(_joined(workdir, candidate)) and candidate[-1] in TRAILING:
                candidate = candidate[:-1]
        if candidate and candidate not in found and os.path.lexists(_joined(workdir, candidate)):
            found.append(candidate)
    return found[:limit]


def _joined(workdir: Path, path: str) -> Path:
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else workdir / candidate


class MentionAttacher:
    """Turns a prompt's ``@path`` mentions into attachments, under the file tools' path policy."""

    def __init__(self, policy: PathPolicy, large_results_dir: Path, limit_tokens: Callable[[], int],
                 emit: Callable[[ChainEvent], None], budget_tokens: Callable[[], int] | None = None,
                 takes_images: Callable[[], bool] = lambda: False) -> None:
        """``limit_tokens``: the eviction limit now (a file over it is saved and previewed); ``emit``: where the
        eviction event of a saved attachment goes; ``budget_tokens``: what a prompt's attachments may take
        together (default: the eviction limit); ``takes_images``: whether the model in use reads images (an
        image goes as image content then, else as a line saying there was one)."""
        self.policy = policy
        self.images = ImageAttacher(policy, large_results_dir, takes_images)
        self.large_results_dir = large_results_dir
        self.limit_tokens = limit_tokens
        self.budget_tokens = budget_tokens or limit_tokens
        self.emit = emit

    def attach(self, prompt: str) -> AttachedPrompt:
        """The prompt with its mentioned files and its images (``@shot.png`` or a pasted path) attached (the prompt
        unchanged when it has none), the files within the budget: past it, stubs pointing at one saved file
        holding the rest."""
        paths = mentioned_paths(prompt, self.policy.workdir, limit=None)
        paths += [path for path in pasted_image_paths(prompt, self.policy.workdir) if path not in paths]
        if not paths:
            return AttachedPrompt(prompt, ())
        chosen = paths[:MAX_MENTIONS]
        entries = [self._one(path) for path in chosen if not is_image_name(path)]
        over = [Attachment(path, 0, "refused", f"more than {MAX_MENTIONS} files in one prompt")
                for path in paths[MAX_MENTIONS:]]
        items: list[UserContent] = [prompt]
        attachments: list[Attachment] = []
        for attachment, item in self._budgeted(entries):
            attachments.append(attachment)
            if item is not None:
                items.append(item)
        for path in chosen:
            if is_image_name(path):
                image, image_items = self._image(path)
                attachments.append(image)
                items.extend(image_items)
        return AttachedPrompt(items, (*attachments, *over))

    def _image(self, typed: str) -> tuple[Attachment, list[UserContent]]:
        try:
            shown, size, header, items = self.images.attach(typed)
        except ImageRefused as refused:
            return Attachment(typed, 0, "refused", str(refused)), []
        return Attachment(shown, size, "image", pixels=(header.width, header.height)), items

    def _budgeted(self, entries: list[tuple[Attachment, str | None]]) -> list[tuple[Attachment, str | None]]:
        """Each attachment with its prompt item, the items together within the budget: the first files
        whole while they fit (beside the stubs of the rest), then stubs, the stubbed files saved in one file."""
        budget = self.budget_tokens()
        whole = [attachment_item(a.path, a.size_bytes, a.kind, text) if text is not None else None
                 for a, text in entries]
        if sum(_cost(item) for item in whole if item is not None) <= budget:
            return list(zip((a for a, _ in entries), whole, strict=True))
        stub_cost = [_cost(_stub_item(a, _STUB_SIZING)) if text is not None else 0 for a, text in entries]
        room = budget - sum(stub_cost) - _cost(_FIRST_STUB_SIZING)
        inline: list[bool] = []
        for item, stub in zip(whole, stub_cost, strict=True):
            extra = (_cost(item) - stub) if item is not None else 0
            fits = item is not None and extra <= room
            room -= extra if fits else 0
            inline.append(fits)
        bundle = _AttachmentBundle()
        stubbed = {index: bundle.add(attachment, text) for index, ((attachment, text), fits)
                   in enumerate(zip(entries, inline, strict=True))
                   if text is not None and not fits and attachment.kind == "text"}
        saved = self._save_bundle(bundle) if bundle.chunks else None
        placed: list[tuple[Attachment, str | None]] = []
        named_bundle = False
        for index, ((attachment, text), item, fits) in enumerate(zip(entries, whole, inline, strict=True)):
            if text is None or fits:
                placed.append((attachment, item))
            elif index in stubbed and saved is not None:  # its text is in the bundle
                offset, lines = stubbed[index]
                where = _Location(saved, offset, lines, name_it=not named_bundle)
                named_bundle = True
                placed.append((replace(attachment, kind="preview", note=saved), _stub_item(attachment, where)))
            else:  # a preview whose whole file is saved already (or is the file itself); or the bundle failed
                target = attachment.note if attachment.kind == "preview" and attachment.note else attachment.path
                placed.append((replace(attachment, kind="preview", note=target),
                               _stub_item(attachment, _Location(target, name_it=True))))
        return placed

    def _save_bundle(self, bundle: _AttachmentBundle) -> str | None:
        """Write the stubbed files' texts as one saved output; its path (``None``: it could not be written)."""
        key = f"attachments-{secrets.token_hex(6)}"
        text = "".join(bundle.chunks)
        saved: str | None = None
        error: str | None = None
        try:
            saved = str(write_output(self.large_results_dir, key, text, ".txt"))
        except (OSError, ValueError) as failure:
            error = f"{type(failure).__name__}: {failure}"
        self.emit(EvictedEvent(tool_name=ATTACHMENT_TOOL, tool_call_id=key, path=saved or "",
                               tokens=text_tokens(text), size_bytes=len(text.encode("utf-8", "surrogatepass")),
                               error=error, args=json.dumps({"paths": bundle.paths}, ensure_ascii=False)))
        return saved

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


@dataclass(frozen=True)
class _Location:
    """Where a stubbed attachment's whole text is: a saved file, and its lines there (``None``: the whole file);
    ``name_it``: the stub names the file (the first stub into the bundle does; the others give lines only)."""

    path: str
    offset: int | None = None
    lines: int | None = None
    name_it: bool = True


_STUB_SIZING = _Location("", 999_999, 999_999, name_it=False)
_FIRST_STUB_SIZING = "x" * 400
"""Stubs as long as real ones can be (the budget is shared out before the bundle is named)."""


def _cost(item: str) -> int:
    """Tokens an item takes in a request, as the chain counts text (JSON-quoted: escapes count)."""
    return text_tokens(json.dumps(item))


def _stub_item(attachment: Attachment, where: _Location) -> str:
    """The prompt item of an attachment past the budget: where its whole text is, in one short line."""
    if not where.name_it:
        body = f"(saved whole with the others: offset={where.offset}, limit={where.lines})"
    elif where.offset is None:
        body = (f"(not inline: this prompt's files are over its share of the context — "
                f"read_file(path={where.path!r}))")
    else:
        body = (f"(not inline: this prompt's files are over its share of the context; this file and the others "
                f"marked \"saved whole\" are saved in one file — read_file(path={where.path!r}, "
                f"offset={where.offset}, limit={where.lines}); the others' offset and limit are on their own)")
    return attachment_item(attachment.path, attachment.size_bytes, "preview", body)


@dataclass
class _AttachmentBundle:
    """The stubbed attachments' texts, written together as one saved output (one file, not twenty)."""

    chunks: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    line_count: int = 0

    def add(self, attachment: Attachment, text: str) -> tuple[int, int]:
        """Queue ``text``; returns (offset, lines) of it in the bundle, for ``read_file``."""
        body = text if text.endswith("\n") else text + "\n"
        lines = body.count("\n")  # as read_file numbers them: only "\n" ends a line
        self.chunks.append(f"=== @{attachment.path} ({lines} lines) ===\n{body}")
        self.paths.append(attachment.path)
        offset = self.line_count + 1
        self.line_count += 1 + lines
        return offset, lines


def _read(path: Path, count: int) -> bytes:
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        return read_at_most(descriptor, count)
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

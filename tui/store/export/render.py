"""A :class:`SessionDocument` as Markdown or JSON. Text goes into fences longer than any backtick run in it,
so nothing a model wrote can close a fence and turn into Markdown of its own."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from tui.store.export.document import EXPORT_VERSION, ExportEntry, SessionDocument, clean

_BACKTICKS = re.compile(r"`{3,}")
_TODO_MARK = {"completed": "x", "done": "x"}


def _fence(text: str, info: str = "") -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(stamp))


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())


def render_markdown(document: SessionDocument) -> str:
    """The session for people: prompts and answers, tool calls (arguments, result preview, saved path),
    a divider for each summary, and the todo list."""
    meta = document.meta
    out: list[str] = [f"# {clean(meta.title)}", "",
                      f"Session `{meta.id}` · model `{clean(meta.model or 'unknown')}` · "
                      f"{meta.message_count} messages · started {_when(meta.created)} · "
                      f"updated {_when(meta.updated)}", ""]
    if document.warning:
        out += [f"*Note: {clean(document.warning)}*", ""]
    for entry in document.entries:
        out += _markdown_entry(entry)
    if document.todos:
        out += ["## Todo list", ""]
        out += [f"- [{_TODO_MARK.get(item['status'], ' ')}] {item['content']} ({item['status']})"
                for item in document.todos]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _markdown_entry(entry: ExportEntry) -> list[str]:
    if entry.kind == "prompt":
        return [f"## You · message {entry.index}", "", _fence(entry.text, "text"), ""]
    if entry.kind == "answer":
        return [f"## Assistant · message {entry.index}", "", entry.text, ""]
    if entry.kind == "thinking":
        return ["<details><summary>thinking</summary>", "", _fence(entry.text, "text"), "", "</details>", ""]
    if entry.kind == "summary":
        what = f"{entry.replaced} earlier messages" if entry.replaced is not None else "earlier messages"
        how = "summarized" if entry.strategy == "summary" else f"compacted ({entry.strategy})"
        return ["---", "", f"**Context compacted:** {what} {how} · message {entry.index}", "",
                _quote(entry.text), "", "---", ""]
    lines = [f"**Tool call** `{entry.tool_name}` · message {entry.index}", ""]
    if entry.args:
        lines += [_fence(_pretty(entry.args), "json"), ""]
    if entry.result is not None:
        label = "Error" if entry.is_error else "Result"
        if entry.saved_path:
            size = f", {entry.saved_chars:,} characters" if entry.saved_chars is not None else ""
            lines += [f"{label} (preview; the whole output was saved to `{entry.saved_path}`{size}):", ""]
        else:
            lines += [f"{label}:", ""]
        lines += [_fence(entry.result, "text"), ""]
    return lines


def _pretty(args: str) -> str:
    try:
        return json.dumps(json.loads(args), indent=2, ensure_ascii=False)
    except ValueError:
        return args


def render_json(document: SessionDocument) -> str:
    """The same as one JSON object (``version`` :data:`EXPORT_VERSION`)."""
    meta = document.meta
    obj: dict[str, Any] = {
        "version": EXPORT_VERSION,
        "session": {"id": meta.id, "title": clean(meta.title), "model": clean(meta.model) if meta.model else None,
                    "created": meta.created, "updated": meta.updated, "messages": meta.message_count,
                    "parent": meta.parent.session if meta.parent else None},
        "warning": clean(document.warning) if document.warning else None,
        "entries": [entry.to_dict() for entry in document.entries],
        "todos": document.todos,
    }
    return json.dumps(obj, ensure_ascii=False, indent=1) + "\n"

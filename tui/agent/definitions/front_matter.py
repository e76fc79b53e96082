"""Front matter: the ``---``-fenced block of ``key: value`` lines opening a Markdown definition file.

Claude Code's subagents, Agent Skills' ``SKILL.md`` and custom commands all open with one. Only the small YAML
subset those files use is read — plain, quoted and block (``|``, ``>``) scalars, inline ``[a, b]`` lists and
``- item`` lists — with no YAML library: nothing in a project's file can build objects, expand aliases or grow
without bound. Values are strings or lists of strings; everything else is the caller's to validate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_FRONT_MATTER_LINES = 200
"""A front matter longer than this is refused (a definition's header is a few lines)."""

FrontMatterValue = str | list[str]
_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:(.*)$")


class FrontMatterError(ValueError):
    """The front matter cannot be read; the message says where (a line number) and why."""


@dataclass(frozen=True)
class FrontMatterDocument:
    """A definition file split into its front matter and its Markdown body."""

    fields: dict[str, FrontMatterValue] = field(default_factory=dict)
    body: str = ""

    def text(self, key: str) -> str | None:
        """``key``'s value as one string (a list is joined with ", "), stripped; ``None`` when absent or empty."""
        value = self.fields.get(key)
        if isinstance(value, list):
            value = ", ".join(value)
        value = (value or "").strip()
        return value or None

    def names(self, key: str) -> list[str] | None:
        """``key``'s value as a list of names: a list, or a string split on commas (Claude Code writes
        ``tools: Read, Grep``); ``None`` when absent."""
        value = self.fields.get(key)
        if value is None:
            return None
        items = value if isinstance(value, list) else value.split(",")
        return [item.strip() for item in items if item.strip()]


def parse_front_matter(text: str) -> FrontMatterDocument:
    """Split ``text`` into front matter and body. A text without front matter is all body. Raises
    :class:`FrontMatterError` for an unterminated or malformed block."""
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return FrontMatterDocument(body=text)
    end = next((index for index, line in enumerate(lines[1:], start=1) if line.rstrip() in ("---", "...")), None)
    if end is None:
        raise FrontMatterError("the front matter opened by '---' on line 1 is never closed")
    if end > MAX_FRONT_MATTER_LINES:
        raise FrontMatterError(f"the front matter is longer than {MAX_FRONT_MATTER_LINES} lines")
    fields = _parse_block([line.rstrip("\r") for line in lines[1:end]])
    return FrontMatterDocument(fields, "\n".join(lines[end + 1:]).lstrip("\n"))


def _parse_block(lines: list[str]) -> dict[str, FrontMatterValue]:
    fields: dict[str, FrontMatterValue] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        number = index + 2  # the file's line number: the block starts after the opening '---'
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0].isspace():
            raise FrontMatterError(f"line {number}: an indented line outside a value")
        match = _KEY.match(line)
        if match is None:
            raise FrontMatterError(f"line {number}: expected 'key: value'")
        key, rest = match.group(1), match.group(2).strip()
        if key in fields:
            raise FrontMatterError(f"line {number}: '{key}' is given twice")
        continued: list[str] = []
        while index < len(lines) and (not lines[index].strip() or lines[index][0].isspace()):
            continued.append(lines[index])
            index += 1
        fields[key] = _value(rest, continued, number)
    return fields


def _value(rest: str, continued: list[str], number: int) -> FrontMatterValue:
    if rest in ("|", ">", "|-", ">-", "|+", ">+"):
        body = _dedent(continued)
        if rest.startswith(">"):
            return " ".join(" ".join(body.split("\n")).split())
        return body.rstrip("\n")
    items = [line.strip() for line in continued if line.strip()]
    if not rest and items and all(item.startswith("- ") or item == "-" for item in items):
        return [_scalar(item[1:].strip(), number) for item in items]
    if rest.startswith("["):
        joined = " ".join([rest, *items])
        if not joined.endswith("]"):
            raise FrontMatterError(f"line {number}: a list opened by '[' is not closed")
        inner = joined[1:-1].strip()
        return [_scalar(item.strip(), number) for item in _split_list(inner)] if inner else []
    if items and rest[:1] not in ("'", '"'):
        return " ".join([rest, *items]).strip()  # a plain scalar folded over several lines
    return _scalar(" ".join([rest, *items]), number)


def _split_list(inner: str) -> list[str]:
    """``a, "b, c", d`` → three items (commas inside quotes kept)."""
    items: list[str] = []
    current: list[str] = []
    quote = ""
    for char in inner:
        if quote:
            current.append(char)
            if char == quote:
                quote = ""
        elif char in ("'", '"'):
            quote = char
            current.append(char)
        elif char == ",":
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    items.append("".join(current))
    return [item for item in items if item.strip()]


def _scalar(raw: str, number: int) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return _double_quoted(raw[1:-1])
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1].replace("''", "'")
    if raw[:1] in ("'", '"'):
        raise FrontMatterError(f"line {number}: a quoted value is not closed")
    return re.sub(r"\s+#.*$", "", raw)  # a trailing comment


_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "r": "\r", "0": "\0"}


def _double_quoted(inner: str) -> str:
    out: list[str] = []
    chars = iter(inner)
    for char in chars:
        if char != "\\":
            out.append(char)
            continue
        escaped = next(chars, "")
        out.append(_ESCAPES.get(escaped, "\\" + escaped))
    return "".join(out)


def _dedent(lines: list[str]) -> str:
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents) if indents else 0
    return "\n".join(line[cut:] for line in lines)

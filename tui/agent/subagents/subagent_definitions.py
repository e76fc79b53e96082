"""Subagent definitions in Claude Code's format: a Markdown file whose front matter gives ``name``,
``description``, optionally ``tools`` (Claude Code's names or deep-tui's) and ``model``; the body is the
subagent's instructions.

Read from ``~/.config/deep-tui/agents/`` and, only in a trusted project, ``.claude/agents/`` and
``.deep-tui/agents/`` (:mod:`tui.agent.definitions.folders`); a project's definition replaces the user's of the
same name. The model picks one by ``subagent_type`` in the ``task`` tool; ``/agents`` lists them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tui.agent.definitions.folders import DefinitionFile, Origin, definition_folders, read_markdown_files
from tui.agent.definitions.front_matter import FrontMatterError, parse_front_matter
from tui.text.terminal_text import visible

AGENTS_KIND = "agents"
MAX_DESCRIPTION_CHARS = 1_000
"""What the ``task`` tool's description carries of each definition's description."""
MAX_PROMPT_CHARS = 60_000
"""A definition's instructions are cut here (a note says so)."""

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")

CLAUDE_TOOL_NAMES: dict[str, tuple[str, ...]] = {
    "read": ("read_file",),
    "write": ("write_file",),
    "edit": ("edit_file",),
    "multiedit": ("edit_file",),
    "glob": ("glob",),
    "grep": ("grep",),
    "ls": ("ls",),
    "bash": ("execute",),
}
"""Claude Code's tool names (lower-cased) → deep-tui's; a deep-tui name is taken as it is."""

INHERITED_MODELS = frozenset({"", "inherit", "sonnet", "opus", "haiku", "default"})
"""``model`` values meaning the parent's model (Claude Code's aliases name its own models, not a provider's)."""


@dataclass(frozen=True)
class SubagentDefinition:
    """One subagent the model may pick by ``subagent_type``."""

    name: str
    description: str
    prompt: str
    """Its instructions (the file's body)."""
    tools: tuple[str, ...] | None = None
    """deep-tui tool names it may use (``None``: every tool of the parent but ``task``)."""
    model: str | None = None
    """A deep-tui model name (``provider:model``), or ``None`` for the parent's model."""
    origin: Origin = "user"
    path: Path | None = None
    unknown_tools: tuple[str, ...] = ()
    """Names in ``tools`` deep-tui does not have (left out; ``/agents`` shows them)."""


@dataclass(frozen=True)
class SubagentCatalog:
    """The definitions found, by name, and one line per file that was skipped."""

    definitions: dict[str, SubagentDefinition] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def get(self, name: str) -> SubagentDefinition | None:
        return self.definitions.get(name.strip().lower())

    def listing(self) -> list[SubagentDefinition]:
        return [self.definitions[name] for name in sorted(self.definitions)]


def load_subagents(*, project_root: Path | None, user_dir: Path | None = None) -> SubagentCatalog:
    """Every definition in the user's folder and, when ``project_root`` (a trusted project) is given, the project's;
    a later folder's definition replaces an earlier one of the same name."""
    warnings: list[str] = []
    found: dict[str, SubagentDefinition] = {}
    for folder in definition_folders(AGENTS_KIND, project_root=project_root, user_dir=user_dir):
        for file in read_markdown_files(folder, warnings):
            definition = parse_definition(file, warnings)
            if definition is not None:
                found[definition.name] = definition
    return SubagentCatalog(found, tuple(visible(line) for line in warnings))


def parse_definition(file: DefinitionFile, warnings: list[str]) -> SubagentDefinition | None:
    """The definition in ``file``, or ``None`` (with a line in ``warnings``) when it is not a usable one."""
    try:
        document = parse_front_matter(file.text)
    except FrontMatterError as error:
        warnings.append(f"skipped {file.path}: {error}")
        return None
    name = (document.text("name") or file.name.removesuffix(".md")).lower()
    if not _NAME.match(name):
        warnings.append(f"skipped {file.path}: the name {name[:80]!r} is not lower-case letters, digits, - and _")
        return None
    description = document.text("description")
    if description is None:
        warnings.append(f"skipped {file.path}: it has no description (the model picks a subagent by it)")
        return None
    prompt = document.body.strip()
    if len(prompt) > MAX_PROMPT_CHARS:
        prompt = prompt[:MAX_PROMPT_CHARS] + f"\n\n[instructions cut at {MAX_PROMPT_CHARS:,} characters]"
    tools, unknown = _tools(document.names("tools"))
    model = (document.text("model") or "").strip()
    return SubagentDefinition(name=name, description=description[:MAX_DESCRIPTION_CHARS], prompt=prompt,
                              tools=tools, model=None if model.lower() in INHERITED_MODELS else model,
                              origin=file.origin, path=file.path, unknown_tools=unknown)


def _tools(names: list[str] | None) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    if names is None or names == ["*"]:
        return None, ()
    tools: list[str] = []
    unknown: list[str] = []
    for raw in names:
        mapped = CLAUDE_TOOL_NAMES.get(raw.lower())
        if mapped is not None:
            tools.extend(name for name in mapped if name not in tools)
        elif re.fullmatch(r"[A-Za-z0-9_.:-]{1,128}", raw):
            if raw not in tools:
                tools.append(raw)  # deep-tui's own name, or an MCP tool: checked against the tools at run time
        else:
            unknown.append(raw[:80])
    return tuple(tools), tuple(unknown)

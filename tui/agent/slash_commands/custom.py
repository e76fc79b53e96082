"""Custom slash commands (Claude Code's format): ``commands/NAME.md`` holds a prompt; ``/NAME args`` sends it with
``$ARGUMENTS`` replaced by everything after the name and ``$1``, ``$2``… by its words.

Read from ``~/.config/deep-tui/commands/`` and, only in a trusted project, ``.claude/commands/`` and
``.deep-tui/commands/`` (:mod:`tui.agent.definitions.folders`: never through a link, capped; a project's command
replaces the user's of the same name). An optional front matter gives ``description`` (shown in the completion,
the palette and F1) and ``argument-hint``. A name a built-in command has is never taken (the caller says which).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from tui.agent.definitions.folders import Origin, definition_folders, read_markdown_files
from tui.agent.definitions.front_matter import FrontMatterError, parse_front_matter
from tui.text.terminal_text import visible

COMMANDS_KIND = "commands"
MAX_COMMANDS = 100
MAX_DESCRIPTION_CHARS = 200
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9])")


@dataclass(frozen=True)
class CustomCommand:
    """One command a user or a trusted project defines."""

    name: str
    description: str
    template: str
    origin: Origin
    path: Path
    argument_hint: str | None = None

    def expand(self, arguments: str) -> str:
        """The prompt ``/name arguments`` sends: ``$ARGUMENTS`` → ``arguments``, ``$N`` → its N-th word (quotes
        group words, as a shell would; a missing one is empty). A template with no placeholder gets the
        arguments appended on a line of their own."""
        arguments = arguments.strip()
        try:
            words = shlex.split(arguments)
        except ValueError:  # an unclosed quote: plain words
            words = arguments.split()

        def replace(match: re.Match[str]) -> str:
            key = match.group(1)
            if key == "ARGUMENTS":
                return arguments
            index = int(key) - 1
            return words[index] if index < len(words) else ""

        if _PLACEHOLDER.search(self.template) is None:
            return self.template.rstrip() + (f"\n\n{arguments}" if arguments else "")
        return _PLACEHOLDER.sub(replace, self.template)


@dataclass(frozen=True)
class CustomCommands:
    """The custom commands found, by name, and the lines saying what was skipped and why."""

    commands: dict[str, CustomCommand] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def get(self, name: str) -> CustomCommand | None:
        return self.commands.get(name.lower())


def load_custom_commands(*, project_root: Path | None, reserved: Collection[str] = (),
                         user_dir: Path | None = None) -> CustomCommands:
    """The user's commands and, when ``project_root`` is given (the project is trusted), the project's; a name in
    ``reserved`` (the built-in commands) is skipped with a warning: a built-in is never replaced."""
    found: dict[str, CustomCommand] = {}
    warnings: list[str] = []
    for folder in definition_folders(COMMANDS_KIND, project_root=project_root, user_dir=user_dir):
        for file in read_markdown_files(folder, warnings):
            name = file.name.removesuffix(".md").lower()
            if not _NAME.match(name):
                warnings.append(f"skipped {file.path}: a command name is lower-case letters, digits, - and _")
                continue
            if name in reserved:
                warnings.append(f"skipped {file.path}: /{name} is a built-in command (it is not replaced)")
                continue
            try:
                document = parse_front_matter(file.text)
            except FrontMatterError as error:
                warnings.append(f"skipped {file.path}: {error}")
                continue
            if not document.body.strip():
                warnings.append(f"skipped {file.path}: it holds no prompt")
                continue
            description = _one_line(document.text("description") or _first_line(document.body))
            hint = document.text("argument-hint")
            found[name] = CustomCommand(name, description, document.body, file.origin, file.path,
                                        _one_line(hint) if hint else None)
    if len(found) > MAX_COMMANDS:
        warnings.append(f"only the first {MAX_COMMANDS} custom commands (by name) are offered")
    return CustomCommands(dict(sorted(found.items())[:MAX_COMMANDS]), tuple(warnings))


def _first_line(body: str) -> str:
    return next((line.strip().lstrip("#").strip() for line in body.splitlines() if line.strip()), "")


def _one_line(text: str) -> str:
    text = " ".join(visible(text).split())
    return text if len(text) <= MAX_DESCRIPTION_CHARS else text[:MAX_DESCRIPTION_CHARS - 1] + "…"

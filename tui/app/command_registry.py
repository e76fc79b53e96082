"""The one list of commands: slash commands, key bindings, the palette, help and the footer read it.

The built-in commands come first; the user's and a trusted project's custom commands (``commands/NAME.md``) are
added once the session's factory has read them (:func:`use_custom_commands`). A custom command never replaces a
built-in of the same name: it is left out, and said.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.fuzzy import Matcher

if TYPE_CHECKING:
    from tui.agent.slash_commands.custom import CustomCommand


@dataclass(frozen=True)
class Command:
    """A user command; ``action`` names the app action (``action_<name>``) that carries it out."""

    name: str
    description: str
    action: str
    key: str | None = None
    key_label: str | None = None
    argument: str | None = None
    """Shown as ``/name <argument>``; the text after the command is passed to the action."""
    in_footer: bool = True
    custom: CustomCommand | None = None
    """For a custom command: its file (the prompt it sends); ``None`` for a built-in."""
    priority: bool = False
    """The key wins over the focused widget's own use of it (Shift+Tab: focus the previous widget); the App's
    ``check_action`` lets it fall through where it does not apply (in a dialog)."""

    @property
    def slash(self) -> str:
        return f"/{self.name}" + (f" [{self.argument}]" if self.argument else "")

    @property
    def origin(self) -> str | None:
        """``user`` or ``project`` for a custom command (shown beside it); ``None`` for a built-in."""
        return self.custom.origin if self.custom is not None else None

    @property
    def shown_description(self) -> str:
        """The description as the completion, palette and F1 show it (a custom command's says whose it is)."""
        return f"{self.description} ({self.origin})" if self.origin else self.description


# The order is the footer's: on a narrow terminal the last ones are cut, so F1 (which lists them all) comes first.
COMMANDS: tuple[Command, ...] = (
    Command("help", "Keys and commands", "help", "f1", "F1"),
    Command("compact", "Compact the context now (optional focus)", "compact", "ctrl+g", "^g", argument="focus"),
    Command("context", "Show what fills the context window", "context", "f2", "F2"),
    Command("sessions", "Open the session picker", "sessions", "ctrl+s", "^s"),
    Command("new", "Start a new session", "new_session", "ctrl+n", "^n", in_footer=False),
    Command("fork", "Fork this session into a new one", "fork_session", "ctrl+f", "^f", in_footer=False),
    Command("model", "Switch the model (or choose from a list)", "model", argument="name",
            in_footer=False),
    Command("memory", "Show the MEMORY.md editor", "memory", "ctrl+o", "^o"),
    Command("log", "Show the context log: evictions, compactions, failures", "log", "ctrl+l", "^l"),
    Command("evicted", "Browse saved (evicted) tool outputs", "evicted", "ctrl+b", "^b"),
    Command("todos", "Show the todo list and standing instructions", "todos", "ctrl+t", "^t", in_footer=False),
    Command("keep", "Keep an instruction for the whole session (alone: list them)", "keep", argument="text",
            in_footer=False),
    Command("mode", "Cycle the mode: default → auto-accept writes → plan", "cycle_mode", "shift+tab", "⇧tab",
            in_footer=False, priority=True),
    Command("mcp", "MCP servers: status and tools", "mcp", in_footer=False),
    Command("rewind", "Take back what a prompt changed (Esc Esc)", "rewind", in_footer=False),
    Command("export", "Save this session as Markdown (or .json)", "export", argument="file",
            in_footer=False),
    Command("skills", "Skills and custom commands: what is offered, whose, what was skipped", "skills",
            in_footer=False),
    Command("agents", "Subagent types the model can hand a task to", "agents", in_footer=False),
    Command("quit", "Quit deep-tui", "quit", "ctrl+q", "^q", in_footer=False),
)

BUILT_IN_NAMES = frozenset(command.name for command in COMMANDS)
_custom: tuple[Command, ...] = ()
_BY_NAME = {command.name: command for command in COMMANDS}


def use_custom_commands(commands: list[CustomCommand]) -> list[str]:
    """Offer ``commands`` from now on (replacing those offered before); returns a line for each one left out
    because a built-in command has its name."""
    global _custom, _BY_NAME
    clashes = [f"/{command.name} ({command.path}) is a built-in command: the file is not used"
               for command in commands if command.name in BUILT_IN_NAMES]
    _custom = tuple(
        Command(command.name, command.description, f"custom_command({command.name!r})", argument=command.argument_hint or "arguments",
                in_footer=False, custom=command)
        for command in commands if command.name not in BUILT_IN_NAMES)
    _BY_NAME = {command.name: command for command in all_commands()}
    return clashes


def all_commands() -> tuple[Command, ...]:
    """The built-in commands, then the custom ones."""
    return COMMANDS + _custom


def find(name: str) -> Command | None:
    return _BY_NAME.get(name.lower())


def is_pasted_path(text: str) -> bool:
    """Whether a prompt starting with ``/`` is a path rather than a command: its first word holds another ``/``
    and starts with a folder that exists at the root (``/home/me/shot.png``, as a terminal pastes a dragged
    file); no command's name has a ``/``, and ``/nope[/]`` is still an unknown command."""
    if not text.startswith("/") or text.startswith("//"):
        return False
    first = text[1:].split(maxsplit=1)
    if not first or "/" not in first[0]:
        return False
    top = first[0].split("/", 1)[0]
    return bool(top) and os.path.isdir("/" + top)


def parse_slash(text: str) -> tuple[Command, str] | None:
    """``"/compact keep the API"`` → (compact, "keep the API"); ``None`` if not a known command."""
    if not text.startswith("/"):
        return None
    name, _, argument = text[1:].strip().partition(" ")
    command = find(name)
    return (command, argument.strip()) if command else None


def rank(query: str, *, descriptions: bool = True) -> list[tuple[Command, float]]:
    """Commands matching ``query`` (fuzzy, as the palette matches), best first.

    A match in a command's name always ranks above a match found only in its description
    (``context`` puts /context first, though /compact's description says "context" too); among
    name matches the fuzzy score decides, the registry order breaks ties. An empty query lists all.
    """
    text = query.strip().lstrip("/")
    if not text:
        return [(command, 0.0) for command in all_commands()]
    matcher = Matcher(text)
    scored: list[tuple[int, float, int, Command]] = []
    for order, command in enumerate(all_commands()):
        name_score = matcher.match(command.name)
        if name_score > 0:
            scored.append((1, name_score, -order, command))
        elif descriptions and (description_score := matcher.match(command.description)) > 0:
            scored.append((0, description_score, -order, command))
    scored.sort(key=lambda item: item[:3], reverse=True)
    # One float a Hit can carry: the tier is worth more than any fuzzy score can reach.
    return [(command, tier * 1000.0 + score) for tier, score, _, command in scored]


def closest(name: str, limit: int = 3) -> list[Command]:
    """The commands a mistyped name most likely meant (``/contxt`` → /context), best first."""
    name = name.strip().lstrip("/").lower()
    names = [command.name for command in all_commands()]
    found = difflib.get_close_matches(name, names, n=limit, cutoff=0.5)
    found += [command.name for command, _ in rank(name, descriptions=False) if command.name not in found]
    return [_BY_NAME[found_name] for found_name in found[:limit]]


def unknown_command_message(text: str) -> str:
    """What to tell someone who typed a command that does not exist."""
    name = text.split()[0]
    guesses = closest(name)
    known = ", ".join(f"/{command.name}" for command in all_commands())
    guess = f" — did you mean {' or '.join('/' + command.name for command in guesses)}?" if guesses else "."
    return (f"{name} is not a command{guess} Known: {known}. "
            f"To send a message that starts with /, begin it with //.")


def bindings() -> list[Binding]:
    """App bindings for every command with a key (none clash with the prompt's own keys)."""
    return [
        # quitting works from every screen, a dialog's too (a priority binding is checked before the screen's)
        Binding(command.key, command.action, command.name, show=command.in_footer,
                key_display=command.key_label, priority=command.priority or command.name == "quit")
        for command in COMMANDS
        if command.key
    ]

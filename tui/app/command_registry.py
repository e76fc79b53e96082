"""The one list of commands: slash commands, key bindings, the palette, help and the footer read it."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


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

    @property
    def slash(self) -> str:
        return f"/{self.name}" + (f" [{self.argument}]" if self.argument else "")


COMMANDS: tuple[Command, ...] = (
    Command("compact", "Compact the context now (optional focus)", "compact", "ctrl+g", "^g", argument="focus"),
    Command("context", "Show what fills the context window", "context", "f2", "F2"),
    Command("sessions", "Open the session picker", "sessions", "ctrl+s", "^s"),
    Command("new", "Start a new session", "new_session", "ctrl+n", "^n", in_footer=False),
    Command("fork", "Fork this session into a new one", "fork_session", "ctrl+f", "^f", in_footer=False),
    Command("memory", "Show the MEMORY.md editor", "memory", "ctrl+o", "^o"),
    Command("log", "Show the compression-event log", "log", "ctrl+l", "^l"),
    Command("evicted", "Browse saved (evicted) tool outputs", "evicted", "ctrl+b", "^b"),
    Command("help", "Keys and commands", "help", "f1", "F1"),
    Command("quit", "Quit deep-tui", "quit", "ctrl+q", "^q", in_footer=False),
)

_BY_NAME = {command.name: command for command in COMMANDS}


def find(name: str) -> Command | None:
    return _BY_NAME.get(name.lower())


def parse_slash(text: str) -> tuple[Command, str] | None:
    """``"/compact keep the API"`` → (compact, "keep the API"); ``None`` if not a known command."""
    if not text.startswith("/"):
        return None
    name, _, argument = text[1:].strip().partition(" ")
    command = find(name)
    return (command, argument.strip()) if command else None


def bindings() -> list[Binding]:
    """App bindings for every command with a key (none clash with the prompt's own keys)."""
    return [
        Binding(command.key, command.action, command.name, show=command.in_footer,
                key_display=command.key_label)
        for command in COMMANDS
        if command.key
    ]

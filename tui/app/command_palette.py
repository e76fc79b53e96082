"""The command palette's provider: the registry's commands, ranked as the prompt's completion ranks them."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from tui.app.command_registry import Command, all_commands, rank

FORK_HERE = "Fork at the selected message"


class DeepTuiCommands(Provider):
    """Every registry command; selecting one runs its app action.

    While a chat message is selected, "Fork at the selected message" is offered as well (it asks for
    confirmation, naming the message, before anything is created).
    """

    async def _run(self, command: Command) -> None:
        await self.app.run_action(command.action)

    def _fork_target(self) -> object | None:
        """The selected chat message, if the palette was opened with one selected."""
        focused = self.focused
        if focused is not None and getattr(focused, "message_index", None) is not None \
                and hasattr(focused, "action_fork_here"):
            return focused
        return None

    async def discover(self) -> Hits:
        target = self._fork_target()
        if target is not None:
            yield DiscoveryHit(FORK_HERE, target.action_fork_here,  # type: ignore[attr-defined]
                               help="a new session with this message and everything before it")
        for command in all_commands():
            yield DiscoveryHit(f"/{command.name}", partial(self._run, command), help=command.shown_description)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        target = self._fork_target()
        if target is not None and (score := matcher.match(FORK_HERE)) > 0:
            yield Hit(score, matcher.highlight(FORK_HERE), target.action_fork_here,  # type: ignore[attr-defined]
                      help="a new session with this message and everything before it")
        for command, score in rank(query):
            name = f"/{command.name}"
            shown = matcher.highlight(name) if matcher.match(name) > 0 else Content(name)
            yield Hit(score, shown, partial(self._run, command), text=name, help=command.shown_description)

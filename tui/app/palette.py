"""The command palette's provider: the registry's commands, searchable."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui.app.command_registry import COMMANDS, Command


class DeepTuiCommands(Provider):
    """Every registry command; selecting one runs its app action."""

    async def _run(self, command: Command) -> None:
        await self.app.run_action(command.action)

    async def discover(self) -> Hits:
        for command in COMMANDS:
            yield DiscoveryHit(f"/{command.name}", partial(self._run, command), help=command.description)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in COMMANDS:
            score = matcher.match(f"/{command.name} {command.description}")
            if score > 0:
                yield Hit(score, matcher.highlight(f"/{command.name}"), partial(self._run, command),
                          help=command.description)

"""A sub-command's parser whose arguments are added only when that command is used.

``deep-tui`` with no command opens the app, and the app's first frame waits for the command line to be parsed:
building every command's arguments (a hundred ``add_argument`` calls) for a command that is not given cost it
several milliseconds. Each command's parser gets a ``build`` function instead, run the first time the parser
parses or prints its help; ``deep-tui --help`` lists the commands from their names and one-line helps alone.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["CommandParser"]


class CommandParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` completed by ``build`` (given its parser) on first use."""

    def __init__(self, *args: Any, build: Callable[[argparse.ArgumentParser], None] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._build = build

    def complete(self) -> CommandParser:
        """Add the command's arguments now (once); returns the parser."""
        build, self._build = self._build, None
        if build is not None:
            build(self)
        return self

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        return super(CommandParser, self.complete()).parse_known_args(args, namespace)

    def format_usage(self) -> str:
        return super(CommandParser, self.complete()).format_usage()

    def format_help(self) -> str:
        return super(CommandParser, self.complete()).format_help()

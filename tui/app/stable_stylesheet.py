"""A Textual stylesheet that parses each CSS source once while the CSS variables stay the same.

Textual's :meth:`App.refresh_css` sets the variables and re-parses every source, even when the variables did not
change. At start-up it does so for the chat screen (the default mode's), and each of those calls also empties the
cache of parsed sources, so the next widget class mounted parses every source again: the app's stylesheets were
parsed three times before the first frame, a tenth of its time. Here a call with the same variables keeps the
parsed rules, and a re-parse reuses them; a new theme (new variables) still re-parses everything.
"""

from __future__ import annotations

from textual.css.stylesheet import Stylesheet

__all__ = ["StableStylesheet"]


class StableStylesheet(Stylesheet):
    """A :class:`Stylesheet` whose parsed sources survive :meth:`set_variables` and :meth:`reparse` as long as the
    variables are the same."""

    @classmethod
    def replacing(cls, stylesheet: Stylesheet) -> StableStylesheet:
        """A stable stylesheet with ``stylesheet``'s variables and sources (an App's, just after its ``__init__``)."""
        stable = cls(variables=stylesheet._variables)
        stable.source = stylesheet.source.copy()
        return stable

    def set_variables(self, variables: dict[str, str]) -> None:
        if variables == self._variables:
            return  # the parsed sources hold: they were parsed with these very variables
        super().set_variables(variables)

    def reparse(self) -> None:
        """Parse the sources again, from the cache where the variables have not changed since.

        A source that fails leaves the rules as they were and raises, as Textual's own re-parse does."""
        self.parse()

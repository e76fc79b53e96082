"""deep-tui: a Textual application for long sessions with a pydantic-ai agent."""

__version__ = "0.1.0"

"""What the app offers when a turn in plan mode ends with a plan: start with it, keep planning, or edit."""

from __future__ import annotations

from textual.content import Content

from tui.app.screens.basic_dialogs import Choice, ChoiceModal

START, KEEP_PLANNING, EDIT = "start", "keep", "edit"
GO_AHEAD = "Go ahead with this plan."
"""What *Start with this plan* sends (and what *edit* puts in the prompt to change first)."""


def plan_offer(items: int) -> ChoiceModal:
    """The dialog: dismisses :data:`START` (leave plan mode, send :data:`GO_AHEAD`), :data:`KEEP_PLANNING`,
    :data:`EDIT` (leave plan mode, the prompt holds :data:`GO_AHEAD` to change), or ``None`` (Esc: as keep)."""
    todo = f" and a todo list of {items} items" if items else ""
    message = Content.assemble(
        "The agent ended its turn with a plan", todo, ". Nothing was changed while it planned.\n\n",
        ("Start", "bold"), " leaves plan mode and tells it to go ahead; ", ("Keep planning", "bold"),
        " stays in plan mode; ", ("Edit", "bold"), " leaves plan mode and puts the go-ahead in the prompt for you "
        "to change first.")
    return ChoiceModal("Plan ready", message, [
        Choice(START, "Start with this plan", "s", "primary"),
        Choice(KEEP_PLANNING, "Keep planning", "k"),
        Choice(EDIT, "Edit", "e"),
    ], default=START)

"""The session's task state: the agent's todo list (``write_todos`` / ``read_todos``), the user's standing
instructions (``/keep``), both carried in the instructions of every request, and the session's mode
(default / auto-accept writes / plan). No Textual here."""

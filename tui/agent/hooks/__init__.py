"""Hooks: the user's commands run at points of a turn (around tool calls, around a summary, at its end), each given a
JSON event on stdin."""

"""Hooks: the user's commands run before and after tool calls, given a JSON event on stdin."""

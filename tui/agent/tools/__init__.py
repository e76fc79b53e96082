"""The agent's own tools (files, memory, history) and what every tool call shares: deadlines, failures, schemas."""

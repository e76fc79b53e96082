"""Who decides whether a call that changes something may run: writes, commands, MCP calls, the gate."""

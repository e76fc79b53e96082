"""The user's MCP servers: their clients, the process-wide pool, and their tools as one toolset."""

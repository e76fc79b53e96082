"""Files users extend the agent with (subagents, skills, commands): Markdown with front matter, found in the user's
config directory and, only in a trusted project, in the project's ``.deep-tui/`` and ``.claude/`` folders."""

"""Subagents: the ``task`` tool hands a side task to an agent with a fresh history and its own context chain,
and keeps only its answer (issue 32)."""

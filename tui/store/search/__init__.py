"""Search every session's history: the full-text index, its queries, and the linear scan."""

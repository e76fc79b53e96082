"""One open session: its agent, its turns, what it records, and how it is assembled."""

"""``deep-tui serve``: the app in a browser (textual-serve behind a token)."""

"""The floor of the first-frame benchmark: the barest Textual app with a header, an input and a footer.

Run in a tmux pane by ``bench_first_frame.py`` as ``deep-tui`` is run in another; its first frame is the
placeholder of its input on the screen. Quits on Ctrl+Q (Textual's default)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Footer, Header, Input


class BareApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="Type a message — bare Textual")
        yield Footer()


if __name__ == "__main__":
    BareApp().run()

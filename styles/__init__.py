"""Textual stylesheets shipped with deep-tui (installed as ``tui.styles``)."""

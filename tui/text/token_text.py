"""Token counts in a few characters ("96.3k", "1.25M"), the same in ``deep-tui run`` and the app."""

from __future__ import annotations


def human_tokens(tokens: int | None) -> str:
    """A compact token count: ``950`` → ``"950"``, ``96_300`` → ``"96.3k"``, ``200_000`` → ``"200k"``, ``1_250_000`` → ``"1.25M"``.

    ``None`` (nothing measured yet) gives ``"–"``.
    """
    if tokens is None:
        return "–"
    sign = "-" if tokens < 0 else ""
    value = abs(tokens)
    if value < 1000:
        return f"{sign}{value}"
    if value < 999_950:
        return f"{sign}{trim_zeros(f'{value / 1000:.1f}')}k"
    return f"{sign}{trim_zeros(f'{value / 1_000_000:.2f}')}M"


def trim_zeros(number: str) -> str:
    """``"96.0"`` → ``"96"``, ``"1.20"`` → ``"1.2"``."""
    if "." in number:
        number = number.rstrip("0").rstrip(".")
    return number

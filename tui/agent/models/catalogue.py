"""The models ``/model`` offers: the one in use, recently used ones, the offline stand-in, and the models of every
provider whose API key is set (from genai-prices, with their context windows). Names only: nothing is built or
called here."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache

from tui.agent.models.choice import OFFLINE_MODEL_NAME, PROVIDER_DEFAULTS
from tui.text.token_text import human_tokens

logger = logging.getLogger(__name__)

PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    default.partition(":")[0]: variables for variables, default in PROVIDER_DEFAULTS
}
"""The providers deep-tui knows a key for, and the variables that hold it."""


@dataclass(frozen=True)
class ModelEntry:
    """One model to choose from."""

    name: str
    """``provider:model`` (or ``offline``), as ``/model`` takes it."""
    window: int | None
    """Its context window: for the model in use, the one the session resolved (the gauge's); for another, the
    one genai-prices gives (None when unknown, and for the offline model, which has none)."""
    note: str
    """Why it is offered: ``in use``, ``recent``, ``no LLM``, ``anthropic key set`` …"""

    @property
    def window_text(self) -> str:
        """``128k``; ``–`` for the offline model (no window: no LLM); ``?`` when unknown."""
        if self.name == OFFLINE_MODEL_NAME:
            return "–"
        return human_tokens(self.window) if self.window else "?"


@cache
def _provider_models(provider: str) -> tuple[tuple[str, int], ...]:
    """The current models genai-prices lists for ``provider`` that have a known context window (chat models)."""
    try:
        from genai_prices.data_snapshot import get_snapshot

        snapshot = get_snapshot()
    except (ImportError, ValueError) as error:
        logger.warning("genai-prices is not usable for the model list: %s", error)
        return ()
    for entry in snapshot.providers:
        if entry.id == provider:
            found = {(model.id, model.context_window) for model in entry.models
                     if model.context_window and not getattr(model, "deprecated", False)}
            return tuple(sorted((name, window) for name, window in found if isinstance(window, int)))
    return ()


def window_of(name: str) -> int | None:
    """The context window genai-prices gives ``provider:model`` (None when unknown)."""
    provider, _, model = name.partition(":")
    return dict(_provider_models(provider)).get(model) if model else None


def catalogue(current: str, recent: Iterable[str] = (), env: Mapping[str, str] | None = None,
              current_window: int | None = None) -> list[ModelEntry]:
    """What the chooser lists, in this order: the model in use, recently used ones (newest first), the offline
    model, then each provider with a key set: its default model first, then the rest by name. No duplicates.
    ``current_window``: the window the session resolved for the model in use (flag, config, model, prices)."""
    environ = os.environ if env is None else env
    entries: list[ModelEntry] = []
    seen: set[str] = set()

    def add(name: str, note: str, window: int | None = None) -> None:
        if name and name not in seen:
            seen.add(name)
            if name == OFFLINE_MODEL_NAME:
                window = None
            elif window is None:
                window = window_of(name)
            entries.append(ModelEntry(name, window, note))

    add(current, "in use", current_window)
    for name in recent:
        add(name, "recent")
    add(OFFLINE_MODEL_NAME, "no LLM: the local stand-in")
    for variables, default in PROVIDER_DEFAULTS:
        if not any(environ.get(variable) for variable in variables):
            continue
        provider = default.partition(":")[0]
        note = f"{variables[0]} set"
        add(default, note)
        for model, window in _provider_models(provider):
            add(f"{provider}:{model}", note, window)
    return entries


def missing_key(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """The variable to set when ``name``'s provider is one deep-tui knows and its key is not set, else None."""
    environ = os.environ if env is None else env
    variables = PROVIDER_KEYS.get(name.partition(":")[0])
    if variables is None or any(environ.get(variable) for variable in variables):
        return None
    return variables[0]

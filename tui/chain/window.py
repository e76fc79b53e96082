"""Which context window applies, and whether it is known or assumed."""

from __future__ import annotations

import logging

from pydantic_ai.models import Model

from tui.chain.events import WindowSource

DEFAULT_WINDOW = 200_000
logger = logging.getLogger(__name__)


def _genai_prices_window(model: Model) -> int | None:
    """genai-prices by model name, trying the model's provider first, then any provider."""
    from genai_prices.data_snapshot import get_snapshot

    snapshot = get_snapshot()
    for provider_id in (model.system, None):
        try:
            _, info = snapshot.find_provider_model(model.model_name, provider=None, provider_id=provider_id,
                                                   provider_api_url=None)
        except LookupError:
            continue
        window = getattr(info, "context_window", None)
        if isinstance(window, int) and window > 0:
            return window
    return None


def resolve_window(model: Model | None, config_window: int | None,
                   origin: WindowSource = "config") -> tuple[int, WindowSource]:
    """An explicit ``--context-window`` (``origin="flag"``) or ``[context] window`` wins; then the model's
    own ``context_window`` (pydantic-ai fills it from genai-prices), then a genai-prices lookup by name,
    then 200,000 — reported as ``default`` so the UI can say it is assumed."""
    if config_window:
        return config_window, origin
    if model is not None:
        if model.context_window:
            return model.context_window, "model"
        try:
            looked_up = _genai_prices_window(model)
        except (ImportError, ValueError) as error:
            logger.warning("genai-prices lookup failed for %s: %s", model.model_name, error)
            looked_up = None
        if looked_up:
            return looked_up, "genai-prices"
    return DEFAULT_WINDOW, "default"

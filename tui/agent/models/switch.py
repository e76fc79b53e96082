"""What ``/model NAME`` needs before it changes anything: the new model built (or one clear error), and who writes
the summaries afterwards."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.agent.models.catalogue import missing_key
from tui.agent.models.choice import OFFLINE_MODEL_NAME, ModelConfigError, build_model
from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from tui.agent.models.provider_http import ProviderConnection
    from tui.base.config import Settings


def build_for_switch(name: str, settings: Settings, connection: ProviderConnection | None) -> Model:
    """The model ``name`` names, on the session's connection; a one-line :class:`ModelConfigError` for an empty or
    malformed name, an unknown provider or a key that is not set."""
    if not name:
        raise ModelConfigError("no model named: /model provider:model (e.g. anthropic:claude-sonnet-5-5)")
    variable = None if settings.base_url else missing_key(name)
    if variable is not None:
        raise ModelConfigError(f"cannot use {visible(name)}: {variable} is not set")
    try:
        return build_model(name, base_url=settings.base_url, connection=connection)
    except ValueError as error:  # pydantic-ai's "Unknown provider: …"
        detail = str(error).strip().splitlines()[0] if str(error).strip() else "unknown error"
        raise ModelConfigError(f"cannot use {visible(name)}: {visible(detail)}") from None


def summarizer_after_switch(name: str, chat_model: Model, settings: Settings, current: Model | None) -> Model | None:
    """A configured ``summarization_model`` stays; otherwise the new chat model summarizes (offline: nobody, the
    extractive summary does)."""
    if settings.summarization_model:
        return current
    return None if name == OFFLINE_MODEL_NAME else chat_model

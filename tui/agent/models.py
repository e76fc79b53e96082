"""Which model a session talks to, and where that choice came from.

Order: ``--model``, ``$DEEP_TUI_MODEL``, config ``model``, then the first
provider whose API key is set (Anthropic, OpenAI, Google), else the offline
stand-in so the app always starts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic_ai.exceptions import UserError
from pydantic_ai.models import Model, infer_model

MODEL_ENV = "DEEP_TUI_MODEL"
OFFLINE_MODEL_NAME = "offline"

ModelSource = Literal["flag", "env", "config", "api-key", "offline"]

PROVIDER_DEFAULTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("ANTHROPIC_API_KEY",), "anthropic:claude-sonnet-5-5"),
    (("OPENAI_API_KEY",), "openai:gpt-5.6-sol"),
    (("GOOGLE_API_KEY", "GEMINI_API_KEY"), "google:gemini-3.8-flash"),
)
"""Env var(s) that enable a provider, and the model used when only the key is set."""


class ModelConfigError(Exception):
    """The requested model cannot be used (unknown name, missing key, bad URL)."""


@dataclass(frozen=True)
class ModelChoice:
    """A model name and where it came from."""

    name: str
    source: ModelSource

    @property
    def offline(self) -> bool:
        return self.name == OFFLINE_MODEL_NAME


def choose_model(
    flag: str | None,
    configured: str | None,
    env: Mapping[str, str] | None = None,
) -> ModelChoice:
    """Apply the resolution order to names only (no model object is built)."""
    environ = os.environ if env is None else env
    if flag:
        return ModelChoice(flag, "flag")
    if environ.get(MODEL_ENV):
        return ModelChoice(environ[MODEL_ENV], "env")
    if configured:
        return ModelChoice(configured, "config")
    for variables, default_model in PROVIDER_DEFAULTS:
        if any(environ.get(variable) for variable in variables):
            return ModelChoice(default_model, "api-key")
    return ModelChoice(OFFLINE_MODEL_NAME, "offline")


def build_model(name: str, *, base_url: str | None = None) -> Model:
    """Turn a model string into a pydantic-ai ``Model``.

    ``offline`` gives the local stand-in. With ``base_url`` set, ``openai:`` and
    ``openai-chat:`` models talk the chat-completions API to that server (what
    Ollama, vLLM and most proxies speak); the key comes from ``OPENAI_API_KEY``
    or is a placeholder for servers that need none.
    """
    if name == OFFLINE_MODEL_NAME:
        from tui.agent.offline import build_offline_model

        return build_offline_model()
    provider, _, model_name = name.partition(":")
    if not model_name:
        raise ModelConfigError(
            f"model '{name}' must look like provider:model (e.g. anthropic:claude-sonnet-5-5, "
            "openai-chat:llama3 with base_url) or be 'offline'"
        )
    if base_url and provider in {"openai", "openai-chat"}:
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        api_key = os.environ.get("OPENAI_API_KEY") or "not-needed"
        return OpenAIChatModel(model_name, provider=OpenAIProvider(base_url=base_url, api_key=api_key))
    try:
        return infer_model(name)
    except UserError as error:
        raise ModelConfigError(f"cannot use model '{name}': {_first_line(str(error))}") from None
    except ImportError as error:
        raise ModelConfigError(f"cannot use model '{name}': missing dependency ({error.name})") from None


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "unknown error"

"""Which model a session talks to, and where that choice came from.

Order: ``--model``, ``$DEEP_TUI_MODEL``, config ``model``, then the first
provider whose API key is set (Anthropic, OpenAI, Google), else the offline
stand-in so the app always starts.
"""

from __future__ import annotations

import inspect
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from pydantic_ai.exceptions import UserError
from pydantic_ai.models import Model, infer_model

from tui.base.config import OFFLINE_MODEL_NAME as OFFLINE_MODEL_NAME  # re-exported: the name callers know
from tui.base.redaction import register_url_secrets

if TYPE_CHECKING:
    from pydantic_ai.providers import Provider

    from tui.agent.models.provider_http import ProviderConnection

logger = logging.getLogger(__name__)

MODEL_ENV = "DEEP_TUI_MODEL"

ModelSource = Literal["flag", "env", "config", "api-key", "offline", "command"]
"""Where the name came from; ``command``: the user's ``/model`` in the app."""

PROVIDER_DEFAULTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("ANTHROPIC_API_KEY",), "anthropic:claude-sonnet-5-5"),
    (("OPENAI_API_KEY",), "openai:gpt-5.6-sol"),
    (("GOOGLE_API_KEY", "GEMINI_API_KEY"), "google:gemini-3.8-flash"),
)
"""Env var(s) that enable a provider, and the model used when only the key is set."""

API_KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "openai-chat": ("OPENAI_API_KEY",),
    "openai-responses": ("OPENAI_API_KEY",),
    "google": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
}
"""The key a cloud provider's models need (any one of them), checked before pydantic-ai is asked."""

_KEY_ADVICE = re.compile(r"Set the `([A-Z][A-Z0-9_]*)` environment variable")


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

    @property
    def offline_chosen(self) -> bool:
        """The user asked for the offline model (``--model``, ``$DEEP_TUI_MODEL`` or config), not: none was set."""
        return self.offline and self.source != "offline"


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


def build_model(name: str, *, base_url: str | None = None, connection: ProviderConnection | None = None) -> Model:
    """Turn a model string into a pydantic-ai ``Model``.

    ``offline`` gives the local stand-in. With ``base_url`` set, ``openai:`` and
    ``openai-chat:`` models talk the chat-completions API to that server (what
    Ollama, vLLM and most proxies speak); the key comes from ``OPENAI_API_KEY``
    or is a placeholder for servers that need none. With ``connection``, the
    provider's requests go through its clients (timeouts, retries, waits reported;
    see :mod:`tui.agent.models.provider_http`) and the SDK's own retries are off.
    """
    if name == OFFLINE_MODEL_NAME:
        from tui.agent.models.offline import build_offline_model

        return build_offline_model()
    register_url_secrets(base_url)  # a password in the server's URL is a secret like a key (tui.base.redaction)
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
        if connection is None:
            return OpenAIChatModel(model_name, provider=OpenAIProvider(base_url=base_url, api_key=api_key))
        from openai import AsyncOpenAI

        client = connection.client(_host(base_url))
        openai_client = AsyncOpenAI(base_url=base_url, api_key=api_key, http_client=client, max_retries=0)
        return OpenAIChatModel(model_name, provider=OpenAIProvider(openai_client=openai_client))
    variables = API_KEY_VARIABLES.get(provider, ())
    if variables and not any(os.environ.get(variable) for variable in variables):
        raise ModelConfigError(missing_key_message(name, variables))
    try:
        if provider in {"openai", "openai-responses"}:
            from pydantic_ai.providers import infer_provider

            from tui.agent.models.responses_endpoint import CheckedResponsesModel

            # the Responses API, stopped at the first answer that shows the server speaks another API
            return CheckedResponsesModel(
                model_name, provider=infer_provider(provider) if connection is None else _provider(provider, connection))
        if connection is None:
            return infer_model(name)
        return infer_model(name, provider_factory=lambda provider_name: _provider(provider_name, connection))
    except UserError as error:
        advice = _KEY_ADVICE.search(str(error))  # another provider's key: the same advice, in deep-tui's words
        if advice:
            raise ModelConfigError(missing_key_message(name, (advice.group(1),))) from None
        raise ModelConfigError(f"cannot use model '{name}': {_first_line(str(error))}") from None
    except ImportError as error:
        raise ModelConfigError(f"cannot use model '{name}': missing dependency ({error.name})") from None


def _provider(name: str, connection: ProviderConnection) -> Provider[Any]:
    """pydantic-ai's provider for ``name`` on the connection's client, with the SDK's own retries off where it
    has them (OpenAI, Anthropic), so the connection's policy is the one that applies and is shown."""
    from pydantic_ai.providers import infer_provider, infer_provider_class

    if name in {"openai", "openai-chat", "openai-responses"} and os.environ.get("OPENAI_API_KEY"):
        from openai import AsyncOpenAI
        from pydantic_ai.providers.openai import OpenAIProvider

        return OpenAIProvider(openai_client=AsyncOpenAI(http_client=connection.client("openai"), max_retries=0))
    if name == "anthropic" and os.environ.get("ANTHROPIC_API_KEY"):
        from anthropic import AsyncAnthropic
        from pydantic_ai.providers.anthropic import AnthropicProvider

        client = AsyncAnthropic(http_client=connection.client("anthropic"), max_retries=0)
        return AnthropicProvider(anthropic_client=client)
    try:
        provider_class = infer_provider_class(name)
        if "http_client" in inspect.signature(provider_class.__init__).parameters:
            return provider_class(http_client=connection.client(name))  # type: ignore[call-arg]
    except (UserError, ValueError, TypeError) as error:  # its own error message is the better one
        logger.debug("provider %s without deep-tui's HTTP client: %s", name, error)
    return infer_provider(name)


def missing_key_message(name: str, variables: tuple[str, ...]) -> str:
    """What to do when model ``name`` has no API key: which variable to set, or how to pick another model."""
    keys = " or ".join(variables)
    return (f"cannot use model '{name}': no API key — set {keys} in the environment "
            f"(export {variables[0]}=…), or choose another model with --model, DEEP_TUI_MODEL or "
            "model = \"…\" in config.toml (--model offline runs without an LLM)")


def _host(base_url: str) -> str:
    """What a self-hosted server is called while waiting for it: its host and port."""
    return urlsplit(base_url).netloc or base_url


def _first_line(text: str) -> str:
    """The error's first line, without pydantic-ai's advice to its own developers (``Agent('test')``)."""
    line = text.strip().splitlines()[0] if text.strip() else "unknown error"
    return line.split(" To try Pydantic AI", 1)[0]

"""What of deep-tui's environment a command gets: everything but secrets.

A variable is a secret (:func:`is_secret_variable`) by its name (``OPENAI_API_KEY``, ``GITHUB_TOKEN``, a model
provider's or a service's prefix, ``SSH_AUTH_SOCK``…) or by its value: a URL carrying a password
(``redis://:PASSWORD@host/0``, with or without a user name) or a token as its user name
(``https://TOKEN@github.com``), or a ``password=`` / ``token=`` pair (a DSN, a query string).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

SECRET_NAME = re.compile(r"API_?KEY|TOKEN|SECRET|PASSW|CREDENTIAL|PRIVATE_KEY|ACCESS_KEY|SESSION_KEY|AUTH(?!OR)|COOKIE",
                         re.IGNORECASE)
"""A variable whose name says it holds a secret (``OPENAI_API_KEY``, ``GITHUB_TOKEN``, ``SSH_AUTH_SOCK``…)."""

PROVIDER_PREFIXES: tuple[str, ...] = (
    "OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "VERTEX", "AWS_", "AZURE_", "GROQ_", "MISTRAL_", "COHERE_", "CO_",
    "DEEPSEEK_", "OPENROUTER_", "TOGETHER_", "HF_", "HUGGING", "XAI_", "FIREWORKS_", "CEREBRAS_", "PERPLEXITY_",
    "VOYAGE_", "LOGFIRE_", "OLLAMA_", "LITELLM_", "DEEP_TUI_", "GH_", "GITHUB_", "GITLAB_", "NPM_", "TWINE_",
    "PYPI_", "DOCKER_", "KUBE", "VAULT_", "DATABASE_", "PG", "MYSQL_", "REDIS_",
)
"""Model providers' and services' variables (endpoints, keys, projects): never passed to a command."""

EXACT_NAMES = frozenset({"GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS", "KRB5CCNAME", "XAUTHORITY", "DISPLAY",
                         "WAYLAND_DISPLAY", "SSH_AGENT_PID", "SSH_CONNECTION", "SSH_CLIENT"})

CREDENTIALS_IN_URL = re.compile(r"://(?:[^/?#\s@]*:[^/?#\s@]*|[^/?#\s@:]{16,})@")
"""A URL whose user part holds a password — ``postgres://user:pw@host``, ``redis://:pw@host/0`` (an empty
user name, Redis's usual form) — or is long enough to be a token (``https://ghp_…@github.com``)."""

SECRET_PAIR = re.compile(r"(?:^|[\s;?&,])(?:password|passwd|pwd|secret|token|access_token|api_?key|sig|signature)"
                         r"\s*=", re.IGNORECASE)
"""A value holding ``password=…`` (a libpq DSN) or ``?token=…`` (a signed URL)."""


def is_secret_variable(name: str, value: str) -> bool:
    """Whether the variable ``name=value`` is kept from commands."""
    upper = name.upper()
    return (bool(SECRET_NAME.search(upper)) or upper.startswith(PROVIDER_PREFIXES) or upper in EXACT_NAMES
            or bool(CREDENTIALS_IN_URL.search(value)) or bool(SECRET_PAIR.search(value)))


def clean_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without secrets (:func:`is_secret_variable`); ``TERM`` is set to ``dumb`` (output is captured,
    not drawn by a terminal) and caches go to the private ``/tmp``."""
    kept = {name: value for name, value in environ.items() if not is_secret_variable(name, value)}
    kept["TERM"] = "dumb"
    kept["XDG_CACHE_HOME"] = "/tmp/.cache"
    kept["PYTHONDONTWRITEBYTECODE"] = "1"
    return kept

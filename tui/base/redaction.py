"""Known secrets, and the one function that takes them out of text before it is shown, logged or stored.

The known secrets are the values of the environment variables a provider reads its key or token from
(``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, any ``*_API_KEY``, ``*_AUTH_TOKEN``, ``*_ACCESS_TOKEN``,
``*_SECRET_KEY``, ``*_SECRET``), the password of a URL with credentials in it (``https://user:pass@host``),
and whatever configuration registers with :func:`register_secret` (a key or header from a config file).
They are read when text is redacted, not copied at start-up, so a key set later is covered too.

Every boundary where text leaves deep-tui's memory applies :func:`redact`: the session store before an
append, the log formatters, stderr, the app's notifications, and the search index. A provider that echoes
the key in an error body ("invalid key sk-…") therefore never puts it on screen, on disk or in an index.

This module imports nothing of deep-tui's, so every layer (the store included) may use it.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

__all__ = ["MIN_SECRET_CHARS", "REDACTED", "known_secrets", "redact", "redact_bytes", "register_secret",
           "register_url_secrets"]

REDACTED = "[redacted]"
"""What a secret is replaced with."""
MIN_SECRET_CHARS = 8
"""Shorter values are not taken for secrets (``OPENAI_API_KEY=x`` for a local server would blank every x)."""

SECRET_ENV_NAME = re.compile(r"(?:^|_)(?:API_KEY|APIKEY|AUTH_TOKEN|ACCESS_TOKEN|SECRET_KEY|SECRET|TOKEN|PASSWORD)$",
                             re.IGNORECASE)
"""Names of environment variables whose value is a secret."""
URL_ENV_NAME = re.compile(r"(?:_BASE_URL|_PROXY)$", re.IGNORECASE)
"""Names of environment variables holding a URL that may carry a password (``https://u:p@host``)."""

_registered: set[str] = set()
_registered_version = 0
_lock = threading.Lock()
_cache: tuple[frozenset[str], re.Pattern[str] | None] = (frozenset(), None)


def register_secret(value: str | None) -> None:
    """Treat ``value`` as a secret from now on (a key or header value from a config file)."""
    global _registered_version
    if value and len(value.strip()) >= MIN_SECRET_CHARS:
        with _lock:
            _registered.add(value.strip())
            _registered_version += 1


def register_url_secrets(url: str | None) -> None:
    """The password (or the user, when it is the whole credential) of ``url``, if it carries one."""
    for secret in _url_secrets(url):
        register_secret(secret)


def known_secrets(env: Mapping[str, str] | None = None) -> frozenset[str]:
    """Every secret known now: provider keys in the environment, URL passwords, registered values."""
    global _known_cache
    from_environment = _environment_secrets(os.environ if env is None else env)
    with _lock:
        cached = _known_cache
        if cached is not None and cached[0] is from_environment and cached[1] == _registered_version:
            return cached[2]
        result = from_environment | _registered
        _known_cache = (from_environment, _registered_version, result)
    return result


_known_cache: tuple[frozenset[str], int, frozenset[str]] | None = None


def _environment_secrets(environ: Mapping[str, str]) -> frozenset[str]:
    """The secrets among ``environ``'s values. Redaction runs on every log record, stored message and indexed
    text, so for the process's own environment only the entries whose names matter are looked at (in its raw
    form, without decoding every name) and the result is reused while those entries stay the same."""
    global _environment_cache, _environment_names
    raw = getattr(environ, "_data", None) if environ is os.environ else None
    if isinstance(raw, dict):
        if _environment_names is None or _environment_names[0] != raw.keys():  # a set comparison, in C
            _environment_names = (frozenset(raw), tuple(name for name in raw if _name_kind(name) is not None))
        candidates = tuple((name, raw.get(name)) for name in _environment_names[1])
        if _environment_cache is not None and _environment_cache[0] == candidates:
            return _environment_cache[1]
        decoded: Iterable[tuple[str, str]] = ((_decode(name), _decode(value)) for name, value in candidates)
    else:
        candidates = ()
        decoded = environ.items()
    found: set[str] = set()
    for name, value in decoded:
        kind = _name_kind(name)
        if kind == "secret" and len(value.strip()) >= MIN_SECRET_CHARS:
            found.add(value.strip())
        elif kind == "url":
            found.update(_url_secrets(value))
    result = frozenset(found)
    if candidates:
        _environment_cache = (candidates, result)
    return result


_environment_cache: tuple[tuple[tuple[object, object], ...], frozenset[str]] | None = None
_environment_names: tuple[frozenset[object], tuple[object, ...]] | None = None
"""The environment's names when last looked at, and which of them may hold a secret."""


def _decode(value: object) -> str:
    return os.fsdecode(value) if isinstance(value, bytes) else str(value)


@functools.lru_cache(maxsize=4096)
def _name_kind(name: str | bytes) -> str | None:
    """Whether an environment variable's name says it holds a secret (``"secret"``), a URL that may carry
    one (``"url"``), or neither."""
    text = _decode(name)
    if SECRET_ENV_NAME.search(text):
        return "secret"
    if URL_ENV_NAME.search(text):
        return "url"
    return None


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with every known secret (and its JSON-escaped form) replaced by :data:`REDACTED`."""
    if not text:
        return text
    pattern = _pattern(frozenset(secrets) if secrets is not None else known_secrets())
    return text if pattern is None else pattern.sub(REDACTED, text)


def redact_bytes(data: bytes) -> bytes:
    """:func:`redact` for UTF-8 bytes (a JSON line about to be stored); the same object when nothing matched."""
    pattern = _pattern(known_secrets())
    if pattern is None:
        return data
    text = data.decode("utf-8", "surrogateescape")
    redacted = pattern.sub(REDACTED, text)
    return data if redacted == text else redacted.encode("utf-8", "surrogateescape")


def _pattern(secrets: frozenset[str]) -> re.Pattern[str] | None:
    global _cache
    cached_for, pattern = _cache
    if cached_for is secrets or cached_for == secrets:
        return pattern
    import json  # with the first secret to redact, not for the first frame

    forms = {form for secret in secrets for form in (secret, json.dumps(secret)[1:-1]) if form}
    pattern = re.compile("|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True))) if forms else None
    _cache = (secrets, pattern)
    return pattern


def _url_secrets(url: str | None) -> list[str]:
    if not url or "@" not in url:
        return []
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return []
    found = [parts.password] if parts.password else [parts.username] if parts.username else []
    return [secret for secret in found if secret and len(secret) >= MIN_SECRET_CHARS]

"""Settings: defaults < the user's config < a trusted project's config (or ``--config``) < environment < flags.

Each config file is one :class:`~tui.base.config_layers.ConfigLayer`;
:func:`~tui.base.config_layers.settings_from_layers` validates each layer on its own
(an error names its file and key) and merges them, a later layer's keys (table by table) winning. Which
layers apply is decided by :mod:`tui.cli.launch` (a project's config only once the project is trusted, see
:mod:`tui.trust`). Every value is validated when loaded; a bad value raises :class:`ConfigError` naming the
key, so the CLI can print one line and exit 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any

from tui.base.hooks_config import HooksConfigError, HookSettings, parse_hooks_table
from tui.base.mcp_config import McpConfigError, McpSettings, parse_mcp_table
from tui.base.mode_names import MODE_NAMES
from tui.base.ui_config import UiConfigError, UiSettings, parse_ui_table


class ConfigError(Exception):
    """A configuration file or value the user supplied cannot be used."""


@dataclass(frozen=True)
class ContextSettings:
    """The ``[context]`` table: thresholds of the context-management chain."""

    window: int | None = None
    """Override of the model's context window, in tokens."""
    large_result_tokens: int = 20_000
    """Tool outputs above this many tokens are evicted to large_tool_results/."""
    compaction_threshold: float = 0.85
    """Fraction of the window at which tier 2 (tool-call compaction) runs."""
    summarize_threshold: float = 0.90
    """Fraction of the window at which tier 3 (summarization) runs."""
    keep_recent_fraction: float = 0.20
    """Fraction of the window kept verbatim after a summary."""
    protect_recent_tokens: int | None = None
    """Newest tool output (in tokens) that tier 2 never touches; ``None``: a quarter of the request limit,
    at most 40,000."""
    min_savings_tokens: int | None = None
    """Tier 2 is applied only when it frees at least this many tokens; ``None``: 5 % of the request limit,
    at most 10,000."""
    summarizer_timeout: float = 120.0
    """Seconds before a summarizer call is abandoned."""
    output_reserve: int | None = None
    """Tokens kept free for the answer when a request sets no ``max_tokens``; ``None``: a tenth of the
    window, between 512 and 16,000."""
    safety_margin: float = 0.05
    """Share of the window kept free for estimate error."""
    auto_compact: bool = True
    """``false``: no automatic compaction at the thresholds (``/compact`` still works); the pre-flight still
    never sends a request over the window: it asks before summarizing (the app), or only turns old outputs into
    pointers and drops the oldest messages behind a marker."""
    window_origin: str = "config"
    """Where ``window`` came from: ``config`` (config.toml) or ``flag`` (``--context-window``); not a key."""

    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the first out-of-range key."""
        if self.window is not None and not (1_000 <= self.window <= 100_000_000):
            raise ConfigError("context.window must be between 1000 and 100000000 tokens")
        if not (100 <= self.large_result_tokens <= 10_000_000):
            raise ConfigError("context.large_result_tokens must be between 100 and 10000000")
        for name in ("compaction_threshold", "summarize_threshold"):
            value = getattr(self, name)
            if not (0.05 <= value <= 0.99):
                raise ConfigError(f"context.{name} must be between 0.05 and 0.99 (got {value})")
        if self.compaction_threshold > self.summarize_threshold:
            raise ConfigError(
                "context.compaction_threshold must not be above context.summarize_threshold"
            )
        if not (0.0 <= self.keep_recent_fraction <= 0.6):
            raise ConfigError(
                f"context.keep_recent_fraction must be between 0 and 0.6 (got {self.keep_recent_fraction})"
            )
        if self.protect_recent_tokens is not None and self.protect_recent_tokens < 0:
            raise ConfigError("context.protect_recent_tokens must not be negative")
        if self.min_savings_tokens is not None and self.min_savings_tokens < 0:
            raise ConfigError("context.min_savings_tokens must not be negative")
        if self.summarizer_timeout <= 0:
            raise ConfigError("context.summarizer_timeout must be positive")
        if self.output_reserve is not None and not (0 <= self.output_reserve <= 1_000_000):
            raise ConfigError("context.output_reserve must be between 0 and 1000000 tokens")
        if not (0.0 <= self.safety_margin <= 0.3):
            raise ConfigError(f"context.safety_margin must be between 0 and 0.3 (got {self.safety_margin})")


@dataclass(frozen=True)
class ProviderSettings:
    """The ``[provider]`` table: how long to wait for a model provider, and how often to try again."""

    connect_timeout: float = 10.0
    """Seconds to open a connection to the provider."""
    read_timeout: float = 120.0
    """Seconds without a byte from the provider (before its answer starts, or in the middle of it)."""
    retries: int = 3
    """Attempts after the first one, on HTTP 408/409/429/5xx, refused or reset connections and timeouts
    before the answer starts; 0 turns retrying off."""
    backoff_initial: float = 1.0
    """Seconds before the first retry; each further retry waits twice as long (plus up to 1 s of jitter)."""
    backoff_max: float = 30.0
    """The longest wait between two attempts when the provider does not say (no Retry-After)."""
    retry_after_max: float = 60.0
    """The longest wait a Retry-After header is honoured for (a longer one is cut to this)."""

    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the first out-of-range key."""
        for name in ("connect_timeout", "read_timeout"):
            value = getattr(self, name)
            if not (0.01 <= value <= 86_400):
                raise ConfigError(f"provider.{name} must be between 0.01 and 86400 seconds (got {value})")
        if not (0 <= self.retries <= 20):
            raise ConfigError(f"provider.retries must be between 0 and 20 (got {self.retries})")
        for name in ("backoff_initial", "backoff_max", "retry_after_max"):
            value = getattr(self, name)
            if not (0 <= value <= 3_600):
                raise ConfigError(f"provider.{name} must be between 0 and 3600 seconds (got {value})")


@dataclass(frozen=True)
class ToolSettings:
    """The ``[tools]`` table: what the agent's tools may do."""

    writes: str = "ask"
    """File writes and edits: ``ask`` (the app asks each time; ``run`` refuses), ``always`` or ``never``."""
    mcp: str = "ask"
    """Tools of MCP servers, as for ``writes``; ``[mcp.servers.NAME] approval`` overrides it per server."""
    timeout: float = 120.0
    """Seconds one tool call may run; then it stops and the model reads why (Esc stops it at once)."""
    commands: str = "ask"
    """Shell commands (the ``execute`` tool): ``ask``, ``always`` or ``never``, as for ``writes``."""
    network: bool = False
    """Whether commands may reach the network (their sandbox has none by default)."""
    sandbox: bool = True
    """``False`` only with the ``--no-sandbox`` flag (never from a file): commands then run unsandboxed."""
    mode: str = "default"
    """The session's first mode: ``default`` (changes ask first), ``accept-writes`` (file writes run without
    asking) or ``plan`` (nothing is changed); ``--mode`` wins; only the user's own config may set it."""

    def validate(self) -> None:
        if self.mode not in MODE_NAMES:
            raise ConfigError(f"tools.mode must be one of {', '.join(MODE_NAMES)} (got {self.mode!r})")
        for name in ("writes", "mcp", "commands"):
            if getattr(self, name) not in WRITE_POLICY_NAMES:
                raise ConfigError(f"tools.{name} must be one of {', '.join(WRITE_POLICY_NAMES)} "
                                  f"(got {getattr(self, name)!r})")
        if not (1 <= self.timeout <= 86_400):
            raise ConfigError(f"tools.timeout must be between 1 and 86400 seconds (got {self.timeout})")


WRITE_POLICY_NAMES = ("ask", "always", "never")


@dataclass(frozen=True)
class RewindSettings:
    """The ``[rewind]`` table: the restore points taken before each prompt's first change."""

    enabled: bool = True
    """Whether prompts get restore points (a snapshot of the working directory before their first change)."""
    max_file_mb: float = 10.0
    """Files larger than this many MB are left out of the snapshots (never restored or removed by a rewind)."""
    timeout: float = 5.0
    """Seconds a snapshot may take; past it the session's prompts go on without restore points (said once)."""

    def validate(self) -> None:
        if not (0.001 <= self.max_file_mb <= 10_000):
            raise ConfigError(f"rewind.max_file_mb must be between 0.001 and 10000 (got {self.max_file_mb})")
        if not (0.1 <= self.timeout <= 600):
            raise ConfigError(f"rewind.timeout must be between 0.1 and 600 seconds (got {self.timeout})")


OFFLINE_MODEL_NAME = "offline"
"""The model name of the local stand-in that is no LLM (``--model offline``): nothing it does costs money."""


@dataclass(frozen=True)
class Settings:
    """Everything deep-tui can be configured with."""

    model: str | None = None
    """Chat model, e.g. ``anthropic:claude-sonnet-4-5`` or ``openai-chat:llama3``."""
    summarization_model: str | None = None
    """Model used for summaries; defaults to the chat model."""
    base_url: str | None = None
    """Base URL of an OpenAI-compatible server (Ollama, vLLM, a proxy)."""
    agent_name: str = "main"
    """Name of the agent; its memory lives in ``<data>/<agent_name>/MEMORY.md``."""
    theme: str = "textual-dark"
    context: ContextSettings = field(default_factory=ContextSettings)
    provider: ProviderSettings = field(default_factory=ProviderSettings)
    tools: ToolSettings = field(default_factory=ToolSettings)
    mcp: McpSettings = field(default_factory=McpSettings)
    rewind: RewindSettings = field(default_factory=RewindSettings)
    """``[rewind]``: restore points (see docs/usage.md, "Taking changes back")."""
    hooks: HookSettings = field(default_factory=HookSettings)
    """``[[hooks.EVENT]]``: commands run around tool calls, summaries and a turn's end (see
    :mod:`tui.base.hooks_config`)."""
    ui: UiSettings = field(default_factory=UiSettings)
    """``[ui]``: desktop notifications (see :mod:`tui.base.ui_config`); only the user's own config sets it."""
    """``[mcp.servers.NAME]``: MCP servers whose tools the agent is offered (see :mod:`tui.base.mcp_config`)."""

    def with_overrides(self, **values: Any) -> Settings:
        """Return a copy with the non-``None`` values replaced (flags win over the file)."""
        context_values = {
            key: value for key, value in values.items() if key in _CONTEXT_KEYS and value is not None
        }
        top_values = {
            key: value for key, value in values.items() if key in _TOP_KEYS and value is not None
        }
        if context_values.get("window") is not None:
            context_values["window_origin"] = "flag"
        context = replace(self.context, **context_values)
        context.validate()
        provider_values = {
            key: value for key, value in values.items() if key in _PROVIDER_KEYS and value is not None
        }
        provider = replace(self.provider, **provider_values)
        provider.validate()
        tools = self.tools
        tool_values = {key: values[key] for key in ("writes", "commands", "network", "sandbox", "mode")
                       if values.get(key) is not None}
        if tool_values:
            tools = replace(tools, **tool_values)
            tools.validate()
        return replace(self, context=context, provider=provider, tools=tools, **top_values)


_CONTEXT_KEYS = {f.name for f in fields(ContextSettings)} - {"window_origin"}
_CONTEXT_INT_KEYS = {"window", "large_result_tokens", "protect_recent_tokens", "min_savings_tokens", "output_reserve"}
_CONTEXT_BOOL_KEYS = {"auto_compact"}
_PROVIDER_KEYS = {f.name for f in fields(ProviderSettings)}
_PROVIDER_INT_KEYS = {"retries"}
_TOP_KEYS = {f.name for f in fields(Settings)} - {"context", "provider", "tools", "mcp", "rewind", "hooks", "ui"}
_STRING_KEYS = {"model", "summarization_model", "base_url", "agent_name", "theme"}


_TOOL_FILE_KEYS = {"writes", "mcp", "timeout", "commands", "network", "mode"}
"""``sandbox`` is not among them: only the ``--no-sandbox`` flag turns the sandbox off."""


_TYPE_WORDS = {int: "a whole number", float: "a number", str: "a string"}


def _check_type(source: str, key: str, value: Any, expected: type | tuple[type, ...]) -> None:
    kinds = (expected,) if isinstance(expected, type) else expected
    if isinstance(value, bool) or not isinstance(value, expected):
        words = " or ".join(dict.fromkeys(_TYPE_WORDS[kind] for kind in kinds))
        raise ConfigError(f"{source}: {key} must be {words} (got {value!r})")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{source}: {key} must be a finite number (got {value!r})")


def settings_from_mapping(data: dict[str, Any], *, source: str = "config") -> Settings:
    """Build validated :class:`Settings` from a parsed TOML mapping."""
    top: dict[str, Any] = {}
    context: dict[str, Any] = {}
    provider: dict[str, Any] = {}
    tools = ToolSettings()
    rewind = RewindSettings()
    mcp = McpSettings()
    hooks = HookSettings()
    ui = UiSettings()
    for key, value in data.items():
        if key == "context":
            context.update(_number_table(value, source, "context", _CONTEXT_KEYS, _CONTEXT_INT_KEYS,
                                         _CONTEXT_BOOL_KEYS))
        elif key == "provider":
            provider.update(_number_table(value, source, "provider", _PROVIDER_KEYS, _PROVIDER_INT_KEYS))
        elif key == "tools":
            tools = _tool_settings(value, source)
        elif key == "rewind":
            rewind = _rewind_settings(value, source)
        elif key == "mcp":
            try:
                mcp = parse_mcp_table(value, source)
            except McpConfigError as error:
                raise ConfigError(str(error)) from None
        elif key == "hooks":
            try:
                hooks = parse_hooks_table(value, source)
            except HooksConfigError as error:
                raise ConfigError(str(error)) from None
        elif key == "ui":
            try:
                ui = parse_ui_table(value, source)
            except UiConfigError as error:
                raise ConfigError(str(error)) from None
        elif key in _STRING_KEYS:
            _check_type(source, key, value, str)
            top[key] = value
        else:
            raise ConfigError(f"{source}: unknown key {key}")
    if "agent_name" in top and not _is_safe_name(top["agent_name"]):
        raise ConfigError(f"{source}: agent_name may only contain letters, digits, '-' and '_'")
    context_settings = ContextSettings(**context)
    try:
        context_settings.validate()
    except ConfigError as error:
        raise ConfigError(f"{source}: {error}") from None
    provider_settings = ProviderSettings(**provider)
    try:
        provider_settings.validate()
    except ConfigError as error:
        raise ConfigError(f"{source}: {error}") from None
    return Settings(context=context_settings, provider=provider_settings, tools=tools, mcp=mcp, rewind=rewind, hooks=hooks,
                    ui=ui, **top)


def _number_table(value: Any, source: str, name: str, keys: set[str], int_keys: set[str],
                  bool_keys: frozenset[str] | set[str] = frozenset()) -> dict[str, Any]:
    """A ``[name]`` table of numbers: every key known, ``int_keys`` whole numbers, ``bool_keys`` true or false,
    the others floats."""
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: [{name}] must be a table")
    table: dict[str, Any] = {}
    for key, item in value.items():
        if key not in keys:
            raise ConfigError(f"{source}: unknown key {name}.{key}")
        if key in bool_keys:
            if not isinstance(item, bool):
                raise ConfigError(f"{source}: {name}.{key} must be true or false (got {item!r})")
        elif key in int_keys:
            _check_type(source, f"{name}.{key}", item, int)
        else:
            _check_type(source, f"{name}.{key}", item, (int, float))
            item = float(item)
        table[key] = item
    return table


def _tool_settings(value: Any, source: str) -> ToolSettings:
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: [tools] must be a table")
    table = dict(value)
    for key, item in value.items():
        if key not in _TOOL_FILE_KEYS:
            raise ConfigError(f"{source}: unknown key tools.{key}")
        if key == "timeout":
            _check_type(source, "tools.timeout", item, (int, float))
            table[key] = float(item)
        elif key == "network":
            if not isinstance(item, bool):
                raise ConfigError(f"{source}: tools.network must be true or false (got {item!r})")
        else:
            _check_type(source, f"tools.{key}", item, str)
    tools = ToolSettings(**table)
    try:
        tools.validate()
    except ConfigError as error:
        raise ConfigError(f"{source}: {error}") from None
    return tools


def _rewind_settings(value: Any, source: str) -> RewindSettings:
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: [rewind] must be a table")
    table: dict[str, Any] = {}
    for key, item in value.items():
        if key == "enabled":
            if not isinstance(item, bool):
                raise ConfigError(f"{source}: rewind.enabled must be true or false (got {item!r})")
            table[key] = item
        elif key in ("max_file_mb", "timeout"):
            _check_type(source, f"rewind.{key}", item, (int, float))
            table[key] = float(item)
        else:
            raise ConfigError(f"{source}: unknown key rewind.{key}")
    rewind = RewindSettings(**table)
    try:
        rewind.validate()
    except ConfigError as error:
        raise ConfigError(f"{source}: {error}") from None
    return rewind


def _is_safe_name(name: str) -> bool:
    return bool(name) and all(ch.isalnum() or ch in "-_" for ch in name)

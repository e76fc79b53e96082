"""``deep-tui run --output-format json | stream-json`` and ``--input-format stream-json``: the headless turn
for scripts. stdout carries only JSON (schema in docs/usage.md, "Scripting"); notices go to stderr."""

from tui.cli.structured.schema import EXIT_REFUSED, SCHEMA_VERSION

__all__ = ["EXIT_REFUSED", "SCHEMA_VERSION"]

"""Custom slash commands: ``commands/NAME.md`` files whose text ``/NAME args`` sends as a prompt."""

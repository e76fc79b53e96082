"""``/skills``: the skills the agent may load and the custom commands offered, with whose they are, and what was
skipped and why (every name, description and path comes from files: shown as plain, visible text)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.text.terminal_text import visible

if TYPE_CHECKING:
    from tui.agent.extensions import Extensions


def skills_listing(extensions: Extensions) -> str:
    """The text ``/skills`` shows."""
    lines: list[str] = []
    skills = extensions.skills.skills
    if skills:
        lines.append("Skills (the model reads one with load_skill when a task matches its description):")
        lines += [f"  {skill.name}  [{skill.origin}]  {skill.description}\n      {skill.path}" for skill in skills.values()]
    else:
        lines.append("No skills. Put a folder holding a SKILL.md (front matter: name, description) in "
                     "~/.config/deep-tui/skills/, or in a trusted project's .deep-tui/skills/ or .claude/skills/.")
    commands = extensions.commands.commands
    if commands:
        lines += ["", "Custom commands (/NAME args sends the file's text, $ARGUMENTS, $1, $2 replaced):"]
        lines += [f"  /{command.name}  [{command.origin}]  {command.description}" for command in commands.values()]
    if extensions.warnings:
        lines += ["", "Skipped:"]
        lines += [f"  {warning}" for warning in extensions.warnings]
    return visible("\n".join(lines))

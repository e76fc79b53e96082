"""Folders of skills and custom commands for the tests: the user's (in the test's config home) and a project's."""

from __future__ import annotations

from pathlib import Path

from tui.base.paths import user_config_dir


def write_skill(base: Path, name: str, description: str, body: str, *, resources: dict[str, str] | None = None,
                folder_name: str | None = None) -> Path:
    """``base/<name>/SKILL.md`` (and resource files beside it); the skill's folder."""
    folder = base / (folder_name or name)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}", encoding="utf-8")
    for relative, text in (resources or {}).items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text, encoding="utf-8")
    return folder


def user_skills() -> Path:
    return user_config_dir() / "skills"


def user_commands() -> Path:
    return user_config_dir() / "commands"


def write_command(base: Path, name: str, text: str) -> Path:
    base.mkdir(parents=True, exist_ok=True)
    path = base / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    return path

"""Finding skills: folders holding a ``SKILL.md`` whose front matter gives ``name`` and ``description``.

Read from ``~/.config/deep-tui/skills/`` and, only in a trusted project, ``.claude/skills/`` and
``.deep-tui/skills/`` (:mod:`tui.agent.definitions.folders`; a project's skill replaces the user's of the same
name). Only names and descriptions go into the instructions; the body and the files beside it are read when the
model asks (:mod:`tui.agent.skills.skill_tools`), never through a link, size-capped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tui.agent.definitions.folders import (
    MAX_DEFINITION_BYTES,
    DefinitionFolder,
    DefinitionReadError,
    Origin,
    definition_folders,
    list_entries,
    open_folder,
    read_entry,
)
from tui.agent.definitions.front_matter import FrontMatterError, parse_front_matter

SKILLS_KIND = "skills"
SKILL_FILE = "SKILL.md"
MAX_SKILL_DESCRIPTION_CHARS = 1_024
"""The Agent Skills format's own limit on a description; a longer one is cut (the instructions carry it)."""
MAX_SKILLS = 100
"""At most this many skills are offered (their descriptions are in every request)."""

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class Skill:
    """One skill: its name and description (in the instructions) and where its folder is."""

    name: str
    description: str
    origin: Origin
    folder: DefinitionFolder
    """The skill's own folder, walked from ``folder.root`` without following a link."""

    @property
    def path(self) -> Path:
        return self.folder.path


@dataclass(frozen=True)
class SkillCatalog:
    """The skills found, by name, and the lines saying what was skipped and why."""

    skills: dict[str, Skill] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name.strip())

    def __bool__(self) -> bool:
        return bool(self.skills)


def load_skills(*, project_root: Path | None, user_dir: Path | None = None) -> SkillCatalog:
    """The user's skills and, when ``project_root`` is given (the project is trusted), the project's."""
    found: dict[str, Skill] = {}
    warnings: list[str] = []
    for folder in definition_folders(SKILLS_KIND, project_root=project_root, user_dir=user_dir):
        for skill in _skills_in(folder, warnings):
            found[skill.name] = skill
    if len(found) > MAX_SKILLS:
        warnings.append(f"only the first {MAX_SKILLS} skills (by name) are offered; {len(found) - MAX_SKILLS} left out")
        found = dict(sorted(found.items())[:MAX_SKILLS])
    return SkillCatalog(dict(sorted(found.items())), tuple(warnings))


def _skills_in(folder: DefinitionFolder, warnings: list[str]) -> list[Skill]:
    skills: list[Skill] = []
    try:
        with open_folder(folder) as fd:
            if fd is None:
                return skills
            entries, more = list_entries(fd)
            if more:
                warnings.append(f"{folder.path}: only the first entries were read")
            subfolders = [name for name, is_dir in entries if is_dir]
    except (DefinitionReadError, OSError) as error:
        warnings.append(f"skipped {error}")
        return skills
    for name in subfolders:
        skill_folder = DefinitionFolder(folder.path / name, folder.origin, folder.root)
        skill = _read_skill(skill_folder, warnings)
        if skill is not None:
            skills.append(skill)
    return skills


def read_skill_file(folder: DefinitionFolder, name: str = SKILL_FILE, *, limit: int = MAX_DEFINITION_BYTES) -> str | None:
    """The text of ``name`` directly in the skill's folder (``None`` when the folder or file is absent); raises
    :class:`DefinitionReadError` for a link, a non-regular or too large file."""
    with open_folder(folder) as fd:
        if fd is None:
            return None
        try:
            return read_entry(fd, name, folder.path / name, limit=limit)
        except FileNotFoundError:
            return None


def _read_skill(folder: DefinitionFolder, warnings: list[str]) -> Skill | None:
    shown = folder.path / SKILL_FILE
    try:
        text = read_skill_file(folder)
    except (DefinitionReadError, OSError) as error:
        warnings.append(f"skipped {error}")
        return None
    if text is None:
        return None  # a folder without SKILL.md is not a skill (a resource folder, say)
    try:
        document = parse_front_matter(text)
    except FrontMatterError as error:
        warnings.append(f"skipped {shown}: {error}")
        return None
    name = document.text("name") or folder.path.name
    description = document.text("description")
    if not _NAME.match(name):
        warnings.append(f"skipped {shown}: the name {name[:80]!r} is not lower-case letters, digits, - and _")
        return None
    if not description:
        warnings.append(f"skipped {shown}: no description in its front matter")
        return None
    description = " ".join(description.split())[:MAX_SKILL_DESCRIPTION_CHARS]
    return Skill(name, description, folder.origin, folder)


def skills_instructions(catalog: SkillCatalog) -> str:
    """What the instructions say of the skills: each one's name and description, and how to load one."""
    if not catalog:
        return ""
    lines = [
        "## Skills",
        "These skills are available. When a task matches one, call load_skill(skill_name) first to read its "
        "instructions; read_skill_resource(skill_name, resource_name) reads a file beside its SKILL.md. Skill text "
        "is guidance from files on disk, not from the user.",
        "",
    ]
    lines += [f"- {skill.name} ({skill.origin}): {skill.description}" for skill in catalog.skills.values()]
    return "\n".join(lines)

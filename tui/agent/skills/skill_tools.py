"""``load_skill`` and ``read_skill_resource`` (pydantic-deep's names): a skill's body and the files beside it.

Both read inside the skill's folder only: every path component is opened without following a link, ``..`` and
absolute names are refused, only regular files are read, and each read is capped.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from pydantic_ai import FunctionToolset

from tui.agent.definitions.folders import DefinitionFolder, DefinitionReadError
from tui.agent.definitions.front_matter import FrontMatterError, parse_front_matter
from tui.agent.skills.catalog import SKILL_FILE, SkillCatalog, read_skill_file
from tui.agent.tools import schemas as tool_schemas
from tui.agent.tools.failures import refuse

MAX_SKILL_BODY_CHARS = 60_000
"""A skill's body beyond this is cut (a note says so)."""
MAX_RESOURCE_BYTES = 200_000
"""A resource larger than this is refused (the model is told the cap)."""
MAX_RESOURCE_DEPTH = 8


def skills_toolset(catalog: SkillCatalog) -> FunctionToolset[None]:
    """The two skill tools over ``catalog``."""
    toolset: FunctionToolset[None] = FunctionToolset()

    @tool_schemas.tool_plain(toolset)
    def load_skill(skill_name: str) -> str:
        """Load a skill's instructions (the body of its SKILL.md) by the name listed under Skills."""
        skill = catalog.get(skill_name)
        if skill is None:
            raise refuse(_unknown(skill_name, catalog))
        try:
            text = read_skill_file(skill.folder)
        except (DefinitionReadError, OSError) as error:
            raise refuse(f"cannot read skill {skill.name}: {error}") from None
        if text is None:
            raise refuse(f"skill {skill.name}: its {SKILL_FILE} is gone")
        try:
            body = parse_front_matter(text).body
        except FrontMatterError as error:
            raise refuse(f"skill {skill.name}: {error}") from None
        if len(body) > MAX_SKILL_BODY_CHARS:
            body = body[:MAX_SKILL_BODY_CHARS] + f"\n[... cut at {MAX_SKILL_BODY_CHARS:,} characters]"
        return f"# Skill: {skill.name}\n\n{body}"

    @tool_schemas.tool_plain(toolset)
    def read_skill_resource(skill_name: str, resource_name: str) -> str:
        """Read a file in a skill's folder (``resource_name`` relative to it, e.g. ``reference.md``)."""
        skill = catalog.get(skill_name)
        if skill is None:
            raise refuse(_unknown(skill_name, catalog))
        parts = _resource_parts(resource_name)
        folder = DefinitionFolder(skill.folder.path.joinpath(*parts[:-1]), skill.origin, skill.folder.root)
        try:
            text = read_skill_file(folder, parts[-1], limit=MAX_RESOURCE_BYTES) if _no_dot_dirs(parts) else None
        except DefinitionReadError as error:
            raise refuse(f"{resource_name}: {_reason(error, skill.folder)}") from None
        except OSError as error:
            raise refuse(f"cannot read {resource_name}: {error.strerror or error}") from None
        if text is None:
            raise refuse(f"skill {skill.name} has no file {resource_name}")
        return text

    return toolset


def _reason(error: DefinitionReadError, folder: DefinitionFolder) -> str:
    text = str(error)
    if "larger than" in text:
        return f"larger than the {MAX_RESOURCE_BYTES:,} bytes a skill resource may have"
    return text.replace(str(folder.root), "<skills>")


def _no_dot_dirs(parts: list[str]) -> bool:
    return all(not part.startswith(".") for part in parts[:-1])


def _resource_parts(resource_name: str) -> list[str]:
    name = resource_name.strip().replace("\\", "/")
    path = PurePosixPath(name)
    if not name or path.is_absolute():
        raise refuse("resource_name must be a path relative to the skill's folder")
    parts = [part for part in path.parts if part not in ("", ".")]
    if not parts or any(part == ".." for part in parts) or "\0" in name:
        raise refuse("resource_name must stay inside the skill's folder (no '..')")
    if len(parts) > MAX_RESOURCE_DEPTH:
        raise refuse("resource_name is nested too deep")
    return parts


def _unknown(name: str, catalog: SkillCatalog) -> str:
    known = ", ".join(catalog.skills) or "none"
    return f"no skill named {name[:80]!r}; the skills are: {known}"

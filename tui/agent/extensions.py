"""What the user (and a trusted project) extends the agent with from files: skills and custom slash commands."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tui.agent.skills.catalog import SkillCatalog, load_skills
from tui.agent.slash_commands.custom import CustomCommands, load_custom_commands


@dataclass(frozen=True)
class Extensions:
    """The skills and custom commands found, and the lines saying what was skipped."""

    skills: SkillCatalog = field(default_factory=SkillCatalog)
    commands: CustomCommands = field(default_factory=CustomCommands)

    @classmethod
    def load(cls, *, project_root: Path | None, user_dir: Path | None = None) -> Extensions:
        """The user's, and when ``project_root`` is given (the project is trusted) the project's."""
        return cls(load_skills(project_root=project_root, user_dir=user_dir),
                   load_custom_commands(project_root=project_root, user_dir=user_dir))

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.skills.warnings + self.commands.warnings

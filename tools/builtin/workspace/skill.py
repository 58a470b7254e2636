"""``skill``: load a skill's ``SKILL.md`` (instructions for a kind of task) by name.

Skills are directories holding a ``SKILL.md`` (YAML-style front matter with ``name`` and
``description``, then the instructions) and optional ``references/*.md``. The four this
package ships (``code-validation``, ``approach-evaluation``, ``code-review``,
``test-generation``) are found with :func:`packaged_skills_dir`; a project may add its own
directories, which win over the packaged ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from tools.base import BaseTool
from tools.errors import InvalidArgumentsError
from tools.routing import CODING_TOOL_MANUALS_BY_NAME

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_MAX_BYTES = 200_000


def packaged_skills_dir() -> Path:
    """The directory of the skills shipped with tooldeck."""
    return Path(__file__).with_name("skills")


@dataclass(frozen=True)
class Skill:
    """A skill found on disk."""

    name: str
    description: str
    directory: Path


def _front_matter(text: str) -> dict[str, str]:
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    fields: dict[str, str] = {}
    for line in text[3 : end if end > 0 else 0].splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip().strip("\"'")
    return fields


class SkillLibrary:
    """The skills of some directories (earlier directories win on a name clash).

    Args:
        directories: Directories holding ``<name>/SKILL.md``; default: the packaged ones.
    """

    def __init__(self, directories: Sequence[Path] | None = None) -> None:
        self._directories = [Path(d) for d in (directories if directories is not None else [packaged_skills_dir()])]

    def skills(self) -> list[Skill]:
        """Every skill, sorted by name."""
        found: dict[str, Skill] = {}
        for directory in self._directories:
            for path in sorted(directory.glob("*/SKILL.md")) if directory.is_dir() else []:
                name = path.parent.name
                if name in found or not _NAME.match(name):
                    continue
                meta = _front_matter(path.read_text(encoding="utf-8", errors="replace")[:4000])
                found[name] = Skill(name, meta.get("description", ""), path.parent)
        return sorted(found.values(), key=lambda s: s.name)

    def load(self, name: str, file: str | None = None) -> str:
        """The text of a skill's ``SKILL.md`` (or of one of its ``references/`` files).

        Raises:
            InvalidArgumentsError: an unknown skill or reference, naming the known ones.
        """
        skills = {s.name: s for s in self.skills()}
        skill = skills.get(name)
        if skill is None:
            known = ", ".join(skills) or "none"
            raise InvalidArgumentsError(f"There is no skill {name[:64]!r}. Skills: {known}.")
        if file is None:
            return (skill.directory / "SKILL.md").read_text(encoding="utf-8")[:_MAX_BYTES]
        references = {p.name: p for p in sorted((skill.directory / "references").glob("*.md"))}
        if file not in references:
            known = ", ".join(references) or "none"
            raise InvalidArgumentsError(f"Skill {name!r} has no reference {file[:64]!r}. References: {known}.")
        return references[file].read_text(encoding="utf-8")[:_MAX_BYTES]

    def references(self, name: str) -> list[str]:
        """The reference file names of a skill."""
        for skill in self.skills():
            if skill.name == name:
                return sorted(p.name for p in (skill.directory / "references").glob("*.md"))
        return []


class SkillRequest(BaseModel):
    """Arguments of ``skill``."""

    name: str = Field(description="The skill to load, e.g. 'code-review'.")
    file: str | None = Field(default=None, description="A reference file of the skill instead of SKILL.md.")


class SkillResponse(BaseModel):
    """A skill's instructions."""

    name: str
    content: str
    references: list[str] = Field(description="Reference files to load with file=... when needed.")


class SkillTool(BaseTool[SkillRequest, SkillResponse]):
    """Loads a skill's instructions."""

    name = "skill"
    manual = CODING_TOOL_MANUALS_BY_NAME["skill"]

    def __init__(self, library: SkillLibrary) -> None:
        self._library = library
        listed = "; ".join(f"{s.name}: {s.description[:120]}" for s in library.skills())
        self.description = f"Load a skill: step-by-step instructions for a kind of task. Skills: {listed or 'none'}."

    def execute_internal(self, request: SkillRequest) -> SkillResponse:
        """Return the skill's text."""
        content = self._library.load(request.name, request.file)
        return SkillResponse(name=request.name, content=content, references=self._library.references(request.name))

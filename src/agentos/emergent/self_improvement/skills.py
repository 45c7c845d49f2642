"""A skill registry of our own and the ``manage_skills`` tool.

Spec: The self-modification tools; reference §1.30.

A skill is a Markdown file in the registry's directory with a front matter of ``key: value``
lines between ``---`` lines, then the skill's text::

    ---
    id: concise-answers
    category: style
    description: Answer in three sentences or fewer.
    ---
    Keep every answer to three sentences or fewer unless the user asks for more.

``id``, ``category`` and ``description`` are required; ``locked: true`` marks a skill that cannot
be disabled; ``enabled: true`` enables it in every session from the start. A file that breaks
these rules is refused when the registry loads, naming the file and the field.

Skills are enabled per session. `SkillRegistry.prompt_context()` is the text of a session's
enabled skills, which a host passes to the GMI's turn as ``TurnOptions.skill_prompt_context``
(the skills system prompt at priority 57).

``manage_skills`` answers ``list`` and ``search`` on every turn; ``enable`` and ``disable``
change the agent, so they first pass `learning_refusal` (freeze, mode, learner). Enable obeys the
allowlist (``*``, an exact id, or ``category:<name>``); disable needs an enabled, unlocked skill.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.emergent.self_improvement.refusals import learning_refusal, refusal
from agentos.emergent.self_improvement.session import session_key
from agentos.tools import Tool, ToolExecutionContext

__all__ = ["Skill", "SkillRegistry", "manage_skills_tool"]

_REQUIRED = ("id", "category", "description")


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill file: its id, category, description, text and flags."""

    id: str
    category: str
    description: str
    content: str
    locked: bool = False
    enabled_by_default: bool = False

    def summary(self) -> dict[str, object]:
        """The skill as ``list`` and ``search`` show it (without its text)."""
        return {
            "id": self.id,
            "category": self.category,
            "description": self.description,
            "locked": self.locked,
        }


def _invalid(path: Path, field: str, problem: str) -> GMIError:
    return GMIError(
        f"skill file {path.name}: {field} {problem}",
        GMIErrorCode.VALIDATION_ERROR,
        {"option": field, "file": str(path)},
    )


def _flag(path: Path, field: str, value: str | None) -> bool:
    if value is None:
        return False
    if value.lower() not in ("true", "false"):
        raise _invalid(path, field, f"must be true or false, got {value!r}")
    return value.lower() == "true"


def parse_skill_file(path: Path) -> Skill:
    """The skill ``path`` holds; `GMIError` ``VALIDATION_ERROR`` naming the file and field."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].strip() != "---" or "---" not in (s.strip() for s in lines[1:]):
        raise _invalid(path, "front matter", "is missing (--- lines around key: value lines)")
    end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    fields: dict[str, str] = {}
    for line in lines[1:end]:
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise _invalid(path, "front matter", f"line {line!r} is not key: value")
        fields[key.strip().lower()] = value.strip()
    for name in _REQUIRED:
        if not fields.get(name):
            raise _invalid(path, name, "is missing or blank")
    return Skill(
        fields["id"],
        fields["category"],
        fields["description"],
        "\n".join(lines[end + 1 :]).strip(),
        _flag(path, "locked", fields.get("locked")),
        _flag(path, "enabled", fields.get("enabled")),
    )


class SkillRegistry:
    """The skills of a directory of ``*.md`` skill files, enabled per session.

    ``allowlist`` says which skills ``enable`` may turn on: ``*``, exact ids, or
    ``category:<name>``. The directory is read once, when the registry is made; a registry with
    no directory holds none (``manage_skills`` still lists, searches and reports).
    """

    def __init__(
        self, directory: str | os.PathLike[str] | None = None, *, allowlist: Iterable[str] = ("*",)
    ):
        """Read ``directory``'s skill files; without one the registry holds no skill."""
        self._skills: dict[str, Skill] = {}
        root = Path(directory) if directory is not None else None
        if root is not None and not root.is_dir():
            raise GMIError(
                f"skills directory {str(root)!r} does not exist or is not a directory",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": "skills.directory"},
            )
        for path in sorted(root.glob("*.md")) if root is not None else ():
            skill = parse_skill_file(path)
            if skill.id in self._skills:
                raise _invalid(path, "id", f"{skill.id!r} is used by another skill file")
            self._skills[skill.id] = skill
        self._allowlist = tuple(allowlist)
        self._enabled: dict[str, list[str]] = {}

    @property
    def skills(self) -> tuple[Skill, ...]:
        """Every skill, in file-name order."""
        return tuple(self._skills.values())

    def allowed(self, skill: Skill) -> bool:
        """Whether the allowlist lets ``enable`` turn ``skill`` on."""
        return any(
            entry in ("*", skill.id) or entry == f"category:{skill.category}"
            for entry in self._allowlist
        )

    def enabled(self, session: str) -> list[Skill]:
        """The skills enabled in ``session``, in the order they were enabled."""
        ids = self._enabled.get(session)
        if ids is None:
            ids = [s.id for s in self._skills.values() if s.enabled_by_default]
        return [self._skills[i] for i in ids]

    def search(self, query: str) -> list[Skill]:
        """The skills whose id, category or description holds ``query`` (any case)."""
        needle = query.strip().lower()
        return [
            s
            for s in self._skills.values()
            if needle in f"{s.id}\n{s.category}\n{s.description}".lower()
        ]

    def enable(self, session: str, skill_id: str) -> Skill:
        """Enable ``skill_id`` in ``session`` (idempotent); `GMIError` for an unknown id."""
        skill = self.get(skill_id)
        ids = [s.id for s in self.enabled(session)]
        if skill.id not in ids:
            ids.append(skill.id)
        self._enabled[session] = ids
        return skill

    def disable(self, session: str, skill_id: str) -> Skill:
        """Disable ``skill_id`` in ``session``; the caller checks it is enabled and unlocked."""
        skill = self.get(skill_id)
        self._enabled[session] = [s.id for s in self.enabled(session) if s.id != skill.id]
        return skill

    def prompt_context(self, session: str) -> str | None:
        """The text of ``session``'s enabled skills, or ``None`` when none is enabled.

        A host passes it as ``TurnOptions.skill_prompt_context`` (the prompt's skills slot).
        """
        parts = [f"## Skill: {s.id}\n{s.content or s.description}" for s in self.enabled(session)]
        return "\n\n".join(parts) if parts else None

    def get(self, skill_id: str) -> Skill:
        """The skill ``skill_id``; `GMIError` ``NOT_FOUND`` naming the known ids."""
        skill = self._skills.get(skill_id)
        if skill is None:
            raise GMIError(
                f"Unknown skill {skill_id!r}; the skills are {', '.join(self._skills) or 'none'}",
                GMIErrorCode.NOT_FOUND,
                {"option": "skill_id"},
            )
        return skill


def _required(action: str, name: str, value: str | None) -> str:
    if not value or not value.strip():
        raise GMIError(
            f"manage_skills {action} needs {name}",
            GMIErrorCode.VALIDATION_ERROR,
            {"option": name},
        )
    return value.strip()


def manage_skills_tool(registry: SkillRegistry) -> Tool:
    """The ``manage_skills`` tool over ``registry``."""

    async def manage_skills(
        action: Literal["list", "search", "enable", "disable"],
        skill_id: str | None = None,
        query: str | None = None,
        context: ToolExecutionContext | None = None,
    ) -> dict[str, object]:
        """List, search, enable or disable your skills for this session.

        Args:
            action: list, search, enable or disable.
            skill_id: the skill to enable or disable.
            query: the text to search for.
            context: the call's context (the host fills it; the model does not see it).
        """
        session = session_key(context)
        if action in ("list", "search"):
            found = (
                registry.skills
                if action == "list"
                else registry.search(_required(action, "query", query))
            )
            on = {s.id for s in registry.enabled(session)}
            return {"skills": [{**s.summary(), "enabled": s.id in on} for s in found]}
        wanted = _required(action, "skill_id", skill_id)
        denied = learning_refusal("manage_skills", context)
        if denied is not None:
            raise denied
        return _change(registry, session, action, wanted)

    return Tool.from_function(manage_skills)


def _change(registry: SkillRegistry, session: str, action: str, skill_id: str) -> dict[str, object]:
    skill = registry.get(skill_id)
    if action == "enable":
        if not registry.allowed(skill):
            raise refusal("manage_skills", "not_allowed", f"skill {skill_id!r} is not allowlisted")
        registry.enable(session, skill_id)
        return {"skill": skill.summary(), "enabled": True}
    if skill.locked:
        raise refusal("manage_skills", "not_allowed", f"skill {skill_id!r} is locked")
    if skill not in registry.enabled(session):
        raise GMIError(
            f"skill {skill_id!r} is not enabled",
            GMIErrorCode.INVALID_STATE,
            {"option": "skill_id"},
        )
    registry.disable(session, skill_id)
    return {"skill": skill.summary(), "enabled": False}

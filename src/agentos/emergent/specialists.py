"""Emergent specialists: the checks a manager's ``spawn_specialist`` call passes, and its tool.

Spec ("Multi-agent work"): "With the hierarchical strategy and emergent.enabled, the manager gets a
spawn_specialist tool; a specialist it creates becomes callable as delegate_to_<role> on the
manager's next turn." The checks follow the reference's ``EmergentAgentForge`` and the hierarchical
strategy (§1.31): a cap on specialists per call (5 by default), an optional required
justification, a role already taken refused, reserved role names, the role pattern, non-empty
instructions truncated to 8192 characters, then an optional judge.

`SpecialistForge` holds one agency call's specialists (each call starts a new forge, so a
specialist is gone on the next call). `spawn_specialist_tool()` wraps a forge in the tool the
manager calls; what a spawn *does* (approval, building the agent, adding ``delegate_to_<role>``)
is the caller's ``on_spawn``, since building agents belongs to the api layer above this one.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.emergent._checks import check_int, invalid
from agentos.tools.tool import Tool

__all__ = [
    "DEFAULT_MAX_SPECIALISTS",
    "DELEGATE_PREFIX",
    "MAX_INSTRUCTIONS_CHARS",
    "RESERVED_ROLES",
    "SpecialistForge",
    "SpecialistJudge",
    "SpecialistRefused",
    "SpecialistSpec",
    "delegate_tool_name",
    "spawn_specialist_tool",
]

DEFAULT_MAX_SPECIALISTS = 5
"""Specialists one agency call may spawn unless configured (reference ``maxSpecialists ?? 5``)."""
MAX_INSTRUCTIONS_CHARS = 8192
"""A specialist's instructions are cut to this many characters."""
RESERVED_ROLES = frozenset({"spawn_specialist", "delegate_to_self", "final_answer", "plan"})
"""Role names a specialist may not take: they would shadow the manager's own tools."""
DELEGATE_PREFIX = "delegate_to_"
_ROLE = re.compile(r"^[a-zA-Z][a-zA-Z0-9_-]*$")
# Providers refuse tool names over 64 characters; the role becomes part of one.
_MAX_ROLE_CHARS = 64 - len(DELEGATE_PREFIX)


def delegate_tool_name(role: str) -> str:
    """The name of the tool a manager calls to hand work to ``role``: ``delegate_to_<role>``."""
    return f"{DELEGATE_PREFIX}{role}"


@dataclass(frozen=True, slots=True)
class SpecialistSpec:
    """A specialist that passed the checks.

    ``instructions`` hold at most 8192 characters; ``justification`` is None when the manager
    gave none.
    """

    role: str
    instructions: str
    justification: str | None = None

    @property
    def tool_name(self) -> str:
        """``delegate_to_<role>``."""
        return delegate_tool_name(self.role)


class SpecialistRefused(GMIError):
    """A spawn was refused; ``reason`` says why (code ``VALIDATION_ERROR``).

    Raised inside the ``spawn_specialist`` tool, it becomes the error result the manager reads.
    """

    def __init__(self, reason: str, *, role: str | None = None) -> None:
        super().__init__(
            f"Specialist not spawned: {reason}",
            GMIErrorCode.VALIDATION_ERROR,
            {"reason": reason, "role": role},
            component="emergent",
        )
        self.reason = reason


JudgeVerdict = bool | tuple[bool, str | None]
SpecialistJudge = Callable[[SpecialistSpec], JudgeVerdict | Awaitable[JudgeVerdict]]
"""Asked after the checks: ``True`` (or ``(True, _)``) lets the spawn go on; ``False`` or
``(False, reason)`` refuses it. Sync or async."""


class SpecialistForge:
    """The specialists of one agency call and the checks a new one must pass.

    ``existing_roles`` are the roster's names (a specialist may not take one);
    ``max_specialists`` caps spawns (reference ``maxSpecialists``, default 5);
    ``require_justification`` refuses a spawn without one; ``judge`` (optional) is asked after
    the checks, at most ``max_judge_calls`` times (default twice the cap, as the reference).
    """

    def __init__(
        self,
        *,
        max_specialists: int = DEFAULT_MAX_SPECIALISTS,
        require_justification: bool = False,
        existing_roles: Iterable[str] = (),
        judge: SpecialistJudge | None = None,
        max_judge_calls: int | None = None,
    ) -> None:
        check_int("max_specialists", max_specialists, 0)
        if max_judge_calls is not None:
            check_int("max_judge_calls", max_judge_calls, 0)
        if not isinstance(require_justification, bool):
            raise invalid("require_justification", "must be a bool")
        if judge is not None and not callable(judge):
            raise invalid("judge", "must be a callable judge(spec) -> bool | (bool, reason)")
        self.max_specialists = max_specialists
        self.require_justification = require_justification
        self._existing = frozenset(existing_roles)
        self._judge = judge
        self._judge_calls_left = 2 * max_specialists if max_judge_calls is None else max_judge_calls
        self._spawned: dict[str, SpecialistSpec] = {}

    @property
    def spawned(self) -> tuple[SpecialistSpec, ...]:
        """The specialists recorded so far, in spawn order."""
        return tuple(self._spawned.values())

    def taken(self, role: str) -> bool:
        """Whether ``role`` is a roster member's name or an earlier specialist's role."""
        return role in self._existing or role in self._spawned

    def check(
        self, role: str, instructions: str, justification: str | None = None
    ) -> SpecialistSpec:
        """The spec for a spawn that passes every check; raises `SpecialistRefused` naming why.

        Order as the reference: the justification, the cap, a taken role, empty instructions,
        a reserved role, the role pattern. Instructions longer than 8192 characters are cut.
        """
        justification = (justification or "").strip() or None
        if self.require_justification and justification is None:
            raise SpecialistRefused("a justification is required", role=role)
        self._check_room(role)
        if not instructions.strip():
            raise SpecialistRefused("instructions must not be empty", role=role)
        if role in RESERVED_ROLES:
            raise SpecialistRefused(f"'{role}' is a reserved role name", role=role)
        if not _ROLE.fullmatch(role) or len(role) > _MAX_ROLE_CHARS:
            raise SpecialistRefused(
                f"'{role}' is not a valid role: use a letter, then letters, digits, '_' or '-' "
                f"(at most {_MAX_ROLE_CHARS} characters)",
                role=role,
            )
        return SpecialistSpec(role, instructions[:MAX_INSTRUCTIONS_CHARS], justification)

    async def judge(self, spec: SpecialistSpec) -> None:
        """Ask the judge, when there is one; raises `SpecialistRefused` when it says no.

        A judge that raises refuses, naming the exception; past ``max_judge_calls`` every
        spawn is refused, so a manager cannot loop on a judge without end.
        """
        if self._judge is None:
            return
        if self._judge_calls_left <= 0:
            raise SpecialistRefused("the judge call limit is reached", role=spec.role)
        self._judge_calls_left -= 1
        try:
            verdict = self._judge(spec)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Exception as exc:
            raise SpecialistRefused(f"the judge raised {exc!r}", role=spec.role) from exc
        approved, reason = verdict if isinstance(verdict, tuple) else (verdict, None)
        if not approved:
            raise SpecialistRefused(
                f"the judge rejected it: {reason or 'no reason given'}", role=spec.role
            )

    def record(self, spec: SpecialistSpec) -> None:
        """Count ``spec`` as spawned; raises `SpecialistRefused` when it no longer fits.

        The cap and the role are checked again, since a concurrent spawn may have taken either
        while this one awaited its judge.
        """
        self._check_room(spec.role)
        self._spawned[spec.role] = spec

    def _check_room(self, role: str) -> None:
        if len(self._spawned) >= self.max_specialists:
            raise SpecialistRefused(
                f"the limit of {self.max_specialists} specialists per call is reached "
                "(max_specialists)",
                role=role,
            )
        if self.taken(role):
            raise SpecialistRefused(f"an agent with role '{role}' already exists", role=role)

    def discard(self, role: str) -> None:
        """Forget a recorded specialist (its spawn failed after `record`)."""
        self._spawned.pop(role, None)


OnSpawn = Callable[[SpecialistSpec], Awaitable[None] | None]
"""What a spawn does once checked: may raise `SpecialistRefused` (an approval said no)."""

_PARAMETERS = {
    "type": "object",
    "properties": {
        "role": {
            "type": "string",
            "description": "A short identifier for the new specialist, e.g. fact_checker.",
        },
        "instructions": {
            "type": "string",
            "description": "The specialist's system instructions: what it knows and how it works.",
        },
        "justification": {
            "type": "string",
            "description": "Why no agent on the team can do this work.",
        },
    },
    "required": ["role", "instructions"],
    "additionalProperties": False,
}


def spawn_specialist_tool(forge: SpecialistForge, on_spawn: OnSpawn) -> Tool:
    """The ``spawn_specialist({role, instructions, justification?})`` tool over ``forge``.

    A call runs the forge's checks and judge, records the spec, then awaits ``on_spawn(spec)``
    (which adds ``delegate_to_<role>`` to the manager's tools); if ``on_spawn`` raises, the spec
    is forgotten again. A refusal becomes the error result the manager reads. On success the
    result tells the manager it can delegate to the specialist from its next step.
    """

    async def spawn(role: str, instructions: str, justification: str | None = None) -> str:
        spec = forge.check(role, instructions, justification)
        await forge.judge(spec)
        forge.record(spec)
        try:
            outcome = on_spawn(spec)
            if inspect.isawaitable(outcome):
                await outcome
        except BaseException:
            forge.discard(spec.role)
            raise
        return (
            f"Specialist '{spec.role}' is ready. From your next step, hand it work with "
            f'{spec.tool_name}({{"task": "..."}}).'
        )

    return Tool.from_schema(
        "spawn_specialist",
        "Create a new specialist agent for work no one on the team is suited to. It becomes "
        "callable as delegate_to_<role> from your next step.",
        _PARAMETERS,
        spawn,
    )

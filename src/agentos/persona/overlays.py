"""Per-session persona overlays (reference §1.8, ``PersonaOverlayManager``).

An overlay patches a persona for one session (a workflow seat) with the rules whose triggers
match: traits merge over the persona's ``personality_traits``, a mood becomes
``mood_adaptation.default_mood`` (mood adaptation switched on), metadata merges into
``custom_fields``. Patches accumulate: a session's next evaluation starts from its previous
overlay, so what a ``first_activation`` rule set stays set.

String triggers: ``always``; ``first_activation`` (the session has no earlier overlay and the
context's ``metadata.previouslyActivated`` is falsy, as in the reference);
``task_completed`` (``metadata.lastEvent``); ``on_error`` / ``error``; any other string matches
``metadata.lastEvent``, ``metadata.state`` or the role id. A dict trigger matches when every key
(dotted paths such as ``metadata.stage`` or ``signals.confidence``) equals the context's value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from agentos.core.clock import Clock, system_clock
from agentos.persona.definition import MoodAdaptation, PersonaDefinition, TraitValue

__all__ = [
    "OverlayContext",
    "PersonaEvolutionRule",
    "PersonaOverlayManager",
    "PersonaPatch",
    "PersonaStateOverlay",
    "apply_patch",
    "rule_matches",
]


class _OverlayModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class PersonaPatch(_OverlayModel):
    """What a rule changes: traits, mood, metadata."""

    persona_traits: dict[str, TraitValue] | None = None
    mood: str | None = None
    metadata: dict[str, Any] | None = None


class PersonaEvolutionRule(_OverlayModel):
    """A trigger and the patch it applies."""

    id: str
    trigger: str | dict[str, Any]
    patch: PersonaPatch = Field(default_factory=PersonaPatch)


class OverlayContext(_OverlayModel):
    """What rules are evaluated against."""

    workflow_id: str | None = None
    agency_id: str | None = None
    role_id: str | None = None
    recent_outputs: list[Any] | None = None
    reasoning_signals: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None


class PersonaStateOverlay(_OverlayModel):
    """A session's overlay: the rules applied so far and the patched persona."""

    persona_id: str
    applied_rules: list[str] = Field(default_factory=list)
    patched_definition: PersonaDefinition
    metadata: dict[str, Any] = Field(default_factory=dict)


def _lookup(context: OverlayContext, path: str) -> Any:
    head, _, rest = path.partition(".")
    roots: dict[str, Any] = {
        "metadata": context.metadata or {},
        "signals": context.reasoning_signals or {},
        "workflowId": context.workflow_id,
        "workflow_id": context.workflow_id,
        "agencyId": context.agency_id,
        "agency_id": context.agency_id,
        "roleId": context.role_id,
        "role_id": context.role_id,
    }
    value = roots.get(head, (context.metadata or {}).get(head))
    for part in rest.split(".") if rest else []:
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def rule_matches(
    rule: PersonaEvolutionRule, context: OverlayContext, *, previously_activated: bool
) -> bool:
    """Whether a rule's trigger matches this context.

    ``previously_activated`` says whether the session already has an overlay; a
    ``first_activation`` rule also stays off when the context's ``metadata.previouslyActivated``
    is truthy (the host's own record of an earlier activation).
    """
    trigger = rule.trigger
    metadata = context.metadata or {}
    if isinstance(trigger, dict):
        return all(_lookup(context, key) == value for key, value in trigger.items())
    if trigger == "always":
        return True
    if trigger == "first_activation":
        return not previously_activated and not metadata.get("previouslyActivated")
    if trigger == "task_completed":
        return metadata.get("lastEvent") == "task_completed"
    if trigger in ("on_error", "error"):
        return metadata.get("lastEvent") in ("error", "on_error") or bool(metadata.get("error"))
    return trigger in (metadata.get("lastEvent"), metadata.get("state"), context.role_id)


def apply_patch(persona: PersonaDefinition, patch: PersonaPatch) -> PersonaDefinition:
    """A copy of the persona with the patch applied (traits and custom fields merged)."""
    updates: dict[str, Any] = {}
    if patch.persona_traits:
        updates["personality_traits"] = {
            **(persona.personality_traits or {}),
            **patch.persona_traits,
        }
    if patch.mood is not None:
        mood = persona.mood_adaptation or MoodAdaptation()
        updates["mood_adaptation"] = mood.model_copy(
            update={"enabled": True, "default_mood": patch.mood}
        )
    if patch.metadata:
        updates["custom_fields"] = {**(persona.custom_fields or {}), **patch.metadata}
    patched = persona.model_copy(deep=True, update=updates)
    # model_copy(update=...) skips validation; re-validate so out-of-range traits are refused.
    return PersonaDefinition.model_validate(patched.model_dump(by_alias=True))


class PersonaOverlayManager:
    """Keeps one overlay per session key and evaluates rules against it."""

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock or system_clock
        self._overlays: dict[str, PersonaStateOverlay] = {}

    def apply_rules(
        self,
        persona: PersonaDefinition,
        rules: list[PersonaEvolutionRule],
        context: OverlayContext,
        previous_overlay: PersonaStateOverlay | None = None,
    ) -> PersonaStateOverlay:
        """Evaluate the rules and return the new overlay (nothing stored)."""
        usable = previous_overlay
        if usable is not None and usable.persona_id != persona.id:
            usable = None
        previously = bool(usable and usable.metadata.get("previouslyActivated"))
        patched = usable.patched_definition if usable else persona.model_copy(deep=True)
        applied = list(usable.applied_rules) if usable else []
        for rule in rules:
            if rule_matches(rule, context, previously_activated=previously):
                patched = apply_patch(patched, rule.patch)
                if rule.id not in applied:
                    applied.append(rule.id)
        now = self._clock.now()
        return PersonaStateOverlay(
            persona_id=persona.id,
            applied_rules=applied,
            patched_definition=patched,
            metadata={
                "previouslyActivated": True,
                "lastEvaluatedAt": now.isoformat(),
                "lastContextMetadata": dict(context.metadata or {}),
            },
        )

    def apply_for_session(
        self,
        session_key: str,
        persona: PersonaDefinition,
        rules: list[PersonaEvolutionRule],
        context: OverlayContext,
    ) -> PersonaStateOverlay:
        """Evaluate the rules for one session, starting from and replacing its stored overlay."""
        overlay = self.apply_rules(persona, rules, context, self._overlays.get(session_key))
        self._overlays[session_key] = overlay
        return overlay

    def get(self, session_key: str) -> PersonaStateOverlay | None:
        """The session's overlay, if any."""
        return self._overlays.get(session_key)

    def resolve_persona(self, session_key: str, persona: PersonaDefinition) -> PersonaDefinition:
        """The persona as this session sees it: its overlay's patched copy, else a copy."""
        overlay = self._overlays.get(session_key)
        if overlay is None or overlay.persona_id != persona.id:
            return persona.model_copy(deep=True)
        return overlay.patched_definition.model_copy(deep=True)

    def clear(self, session_key: str) -> None:
        """Forget the session's overlay."""
        self._overlays.pop(session_key, None)

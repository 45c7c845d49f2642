"""Workflow seats: a session's GMI for one agency role, with that role's persona overlay.

Reference §1.8-§1.9: `GMIManager` keys a seat's overlay by ``agency_id::role_id`` and recreates
the seat's GMI when the overlay changes. A request that carries an agency id and a role id gets
the seat's GMI, kept beside the session's own GMI; the seat's persona is the requested persona
with the overlay the seat's rules give (`agentos.persona.overlays`: traits, mood, metadata).

Overlays are kept per session and seat, so one session's ``first_activation`` rule does not
decide another session's. A seat's rules are set per ``agency_id::role_id`` (`SeatOverlays.
set_rules`); a seat with no rules gets the persona as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NoReturn

from agentos.core.clock import Clock
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.persona.definition import PersonaDefinition
from agentos.persona.overlays import OverlayContext, PersonaEvolutionRule, PersonaOverlayManager

__all__ = ["SeatOverlays", "SeatPersona", "check_request", "seat_key"]


def seat_key(agency_id: str, role_id: str) -> str:
    """The seat's key, ``agency_id::role_id`` (reference §1.8)."""
    return f"{agency_id}::{role_id}"


@dataclass(frozen=True, slots=True)
class SeatPersona:
    """A seat's persona after its overlay, and whether the overlay changed it since last time.

    ``changed`` is true when the seat had an overlay before and the patched persona differs
    from it: the seat's GMI is then recreated.
    """

    persona: PersonaDefinition
    applied_rules: tuple[str, ...]
    changed: bool


class SeatOverlays:
    """The seats' rules, and each session's seat overlays."""

    def __init__(
        self,
        clock: Clock,
        rules: Mapping[str, Sequence[PersonaEvolutionRule]] | None = None,
    ) -> None:
        self._overlays = PersonaOverlayManager(clock)
        self._rules: dict[str, list[PersonaEvolutionRule]] = {}
        for key, seat_rules in (rules or {}).items():
            agency_id, sep, role_id = key.partition("::")
            if not sep or not agency_id or not role_id:
                raise GMIError(
                    f"seat_rules key {key!r} is not 'agency_id::role_id'",
                    GMIErrorCode.CONFIGURATION_ERROR,
                    {"option": "seat_rules"},
                )
            self.set_rules(agency_id, role_id, seat_rules)

    def set_rules(
        self, agency_id: str, role_id: str, rules: Sequence[PersonaEvolutionRule]
    ) -> None:
        """Set the seat's evolution rules (replacing earlier ones); sessions see them next call."""
        self._rules[seat_key(agency_id, role_id)] = list(rules)

    def rules(self, agency_id: str, role_id: str) -> list[PersonaEvolutionRule]:
        """The seat's rules (a copy)."""
        return list(self._rules.get(seat_key(agency_id, role_id), ()))

    def resolve(
        self,
        session_id: str,
        persona: PersonaDefinition,
        agency_id: str,
        role_id: str,
        context: OverlayContext | None = None,
    ) -> SeatPersona:
        """Evaluate the seat's rules for this session and return the seat's persona.

        ``context`` carries what the rules match on (workflow id, metadata, signals); its agency
        and role ids are always the seat's.
        """
        base = context or OverlayContext()
        seat_context = base.model_copy(update={"agency_id": agency_id, "role_id": role_id})
        key = self._session_key(session_id, agency_id, role_id)
        previous = self._overlays.get(key)
        if previous is not None and previous.persona_id != persona.id:
            previous = None
        overlay = self._overlays.apply_for_session(
            key, persona, self.rules(agency_id, role_id), seat_context
        )
        changed = previous is not None and previous.patched_definition != overlay.patched_definition
        return SeatPersona(
            persona=overlay.patched_definition.model_copy(deep=True),
            applied_rules=tuple(overlay.applied_rules),
            changed=changed,
        )

    def forget(self, session_id: str, agency_id: str, role_id: str) -> None:
        """Drop this session's overlay of the seat (its GMI is gone)."""
        self._overlays.clear(self._session_key(session_id, agency_id, role_id))

    @staticmethod
    def _session_key(session_id: str, agency_id: str, role_id: str) -> str:
        # The repr of the tuple, not a joined string: ids may contain any separator.
        return repr((agency_id, role_id, session_id))


def _invalid(option: str, message: str) -> NoReturn:
    raise GMIError(message, GMIErrorCode.INVALID_ARGUMENT, {"option": option})


def check_request(
    user_id: str,
    session_id: str,
    persona_id: str,
    agency_id: str | None,
    role_id: str | None,
) -> tuple[str, str] | None:
    """The request's seat, ``(agency_id, role_id)`` or ``None``; bad ids refused before any work.

    Raises ``INVALID_ARGUMENT`` naming the argument: a blank id, or only one of ``agency_id``
    and ``role_id``.
    """
    if not isinstance(user_id, str):
        _invalid("user_id", "user_id must be a string")
    for name, value in (("session_id", session_id), ("persona_id", persona_id)):
        if not isinstance(value, str) or not value.strip():
            _invalid(name, f"{name} must be a non-blank string")
    if (agency_id is None) != (role_id is None):
        missing = "role_id" if role_id is None else "agency_id"
        _invalid(missing, "a seat needs both agency_id and role_id")
    if agency_id is None or role_id is None:
        return None
    for name, value in (("agency_id", agency_id), ("role_id", role_id)):
        if not isinstance(value, str) or not value.strip():
            _invalid(name, f"{name} must be a non-blank string")
    return (agency_id, role_id)

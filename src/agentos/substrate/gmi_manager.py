"""`GMIManager`: one GMI per session for the full runtime (spec: Getting a GMI; reference §1.9).

Spec sentences this module implements (Getting a GMI, Cognitive memory):

- ``get_or_create_gmi_for_session()`` "loads the persona, checks that the user may use it, and
  either reuses the GMI already bound to the session or creates one": an unknown persona id is
  ``PERSONA_NOT_FOUND`` (`PersonaRegistry.get`), a persona the user may not use
  ``PERMISSION_DENIED``. "A GMI serves its session until the session asks for a persona refresh
  or the host removes it": ``refresh_persona=True``, another persona id, or
  `deactivate_gmi_for_session()`.
- ``cleanup_inactive_gmis()`` "removes GMIs idle longer than a threshold (60 minutes by default);
  nothing in the runtime calls it on a schedule". Idle time is read on the injected clock
  (``base_config.clock``) from the GMI's creation or its last `touch()`.
- After `shutdown()` every call fails with ``NOT_INITIALIZED``, "and a call already in flight
  shuts down the GMI it built instead of registering it. Every active GMI is shut down at the
  same time, each within ``shutdown_timeout_ms`` (8000 ms by default); a GMI that has not
  finished by then is logged at warn and finishes on its own." The bound is measured on the
  injected clock, and each built-in GMI gets the same bound for the turn it stops. "Calls to
  shutdown() that overlap ... share one shutdown."
- The cognitive memory factory is called once for each new GMI
  (`agentos.substrate.gmi_manager_config`).
- Each new GMI gets the id ``gmi-instance-<uuid hex>`` and a fresh `InMemoryWorkingMemory`
  (reference §1.9; spec: "GMIManager gives each GMI an in-memory instance"), and the runtime's
  ``default_reasoning_trace_max_entries`` when its persona sets none.

A request with an agency id and a role id gets the seat's GMI (`agentos.substrate.gmi_seats`),
kept per session beside the session's own GMI and recreated when the seat's overlay changes.
With ``learning_sessions``, each built-in GMI gets a learner session ended when the GMI shuts
down (spec "Learning": Learners); a seat's renders its overlay and has no learner.
A host-supplied ``igmi_factory`` replaces the built-in `GMI`: its GMIs get no cognitive memory
factory call (the host builds them with what they need) and are shut down like the others.
The caller loads the `PersonaRegistry` (``await registry.load()``) before the first request.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import NoReturn

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.persona.definition import PersonaDefinition
from agentos.persona.overlays import OverlayContext, PersonaEvolutionRule
from agentos.persona.strict_mode import classify_persona_strict
from agentos.persona.validation import validate_persona
from agentos.substrate.gmi import GMI
from agentos.substrate.gmi_manager_config import (
    CognitiveMemoryFactory,
    CognitiveMemoryRequest,
    GMIManagerConfig,
    IGMIFactory,
    attach_cognitive_memory,
    end_learners,
    is_positive_number,
    learner_request,
)
from agentos.substrate.gmi_seats import SeatOverlays, check_request
from agentos.substrate.gmi_shutdown import BoundedShutdown, ClosingGMI
from agentos.substrate.igmi import IGMI
from agentos.substrate.learning_seam import LearnerSessionLike
from agentos.substrate.working_memory import InMemoryWorkingMemory

# The config's names are exported here too: runtime_contracts.md B places them in this module.
__all__ = [
    "CognitiveMemoryFactory",
    "CognitiveMemoryRequest",
    "GMIManager",
    "GMIManagerConfig",
    "IGMIFactory",
]

_log = logging.getLogger(__name__)

_Seat = tuple[str, str] | None
"""A session's GMI slot: ``None`` for the session's own GMI, ``(agency_id, role_id)`` a seat."""


@dataclass(slots=True)
class _Entry:
    gmi: GMI | IGMI
    session_id: str
    persona_id: str
    last_active: float  # the clock's monotonic seconds at creation or the last touch
    learner: LearnerSessionLike | None = None  # ended after the GMI shuts down


class GMIManager:
    """Binds one GMI to each session (and one to each of its workflow seats)."""

    def __init__(self, config: GMIManagerConfig) -> None:
        self._config = config
        self._clock = config.base_config.clock
        self._sessions: dict[str, dict[_Seat, _Entry]] = {}
        self._locks: weakref.WeakValueDictionary[tuple[str, _Seat], asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        self._strict_codes: dict[str, tuple[PersonaDefinition, list[str]]] = {}
        self._seats = SeatOverlays(self._clock, config.seat_rules)
        self._closer = BoundedShutdown(config.shutdown_timeout_ms / 1000, self._clock, _log)
        self._closed = False
        self._shutdown_task: asyncio.Task[None] | None = None

    # -- getting a GMI ----------------------------------------------------------------------

    async def get_or_create_gmi_for_session(
        self,
        user_id: str,
        session_id: str,
        persona_id: str,
        *,
        agency_id: str | None = None,
        role_id: str | None = None,
        refresh_persona: bool = False,
        seat_context: OverlayContext | None = None,
    ) -> GMI | IGMI:
        """The session's GMI (the seat's, with ``agency_id`` and ``role_id``), made if needed.

        Reused unless ``refresh_persona``, another persona id, or a changed seat overlay asks
        for a new one (the old one is shut down first). ``seat_context`` is what the seat's
        rules are matched against. Raises ``INVALID_ARGUMENT`` (a blank id, or only one of
        ``agency_id`` and ``role_id``), ``NOT_INITIALIZED`` (after `shutdown()`, also when it
        starts while this call builds), ``PERSONA_NOT_FOUND``, ``PERMISSION_DENIED``.
        """
        seat = check_request(user_id, session_id, persona_id, agency_id, role_id)
        self._ensure_open()
        reused = self._reusable(user_id, session_id, persona_id, seat, refresh_persona)
        if reused is not None:
            return reused
        registry = self._config.personas
        # Read without a copy to check it and to reuse a GMI: a copy is made only to build one
        # (or for a host's permission callback, which gets a persona it may not change ours).
        held = registry.peek(persona_id)
        self._check_strict(held)
        if self._config.can_use_persona is not None:
            self._check_permission(user_id, registry.get(persona_id))
        async with self._lock_for(session_id, seat):
            self._ensure_open()
            changed = False
            persona = held
            if seat is not None:
                resolved = self._seats.resolve(
                    session_id, registry.get(persona_id), *seat, seat_context
                )
                persona, changed = resolved.persona, resolved.changed
            entry = self._sessions.get(session_id, {}).get(seat)
            if entry is not None:
                if not (refresh_persona or changed or entry.persona_id != persona.id):
                    entry.last_active = self._clock.monotonic()
                    return entry.gmi
                # The seat's overlay stays: the new GMI is built from it.
                self._remove(session_id, seat, forget_overlay=False)
                await self._close([entry])
            if persona is held:
                persona = registry.get(persona_id)  # the GMI's own copy
            gmi, learner = await self._build(user_id, session_id, persona, held, seat)
            if self._closed:
                await self._closer.close([ClosingGMI(gmi, session_id)])
                await end_learners([learner])
                self._ensure_open()
            self._sessions.setdefault(session_id, {})[seat] = _Entry(
                gmi, session_id, persona.id, self._clock.monotonic(), learner
            )
            return gmi

    def _reusable(
        self, user_id: str, session_id: str, persona_id: str, seat: _Seat, refresh: bool
    ) -> GMI | IGMI | None:
        """The session's own GMI when the locked path would reuse it as it is, else ``None``.

        Every turn of a warm session comes here: with no build or removal running for the slot
        (its lock free), no seat overlay to resolve and no permission callback to ask, reusing
        the entry is what the locked path decides, without taking the lock. Strict validation
        still runs on the persona as held.
        """
        if seat is not None or refresh or self._config.can_use_persona is not None:
            return None
        entry = self._sessions.get(session_id, {}).get(None)
        if entry is None or entry.persona_id != persona_id:
            return None
        lock = self._locks.get((session_id, None))
        if lock is not None and lock.locked():
            return None
        self._check_strict(self._config.personas.peek(persona_id))
        entry.last_active = self._clock.monotonic()
        return entry.gmi

    def _check_strict(self, held: PersonaDefinition) -> None:
        """Refuse a persona strict validation blocks; ``held`` is the registry's own object.

        The registry's objects are never changed (a reload replaces them), so each is validated
        once: the codes that block it are kept, per persona id, with the object they were found
        on; a reloaded persona is a new object, validated anew.
        """
        strict = self._config.persona_strict
        if strict is None:
            return
        known = self._strict_codes.get(held.id)
        if known is None or known[0] is not held:
            verdict = classify_persona_strict(validate_persona(held), strict)
            codes = [str(issue.code) for issue in verdict.blocking] if verdict.blocked else []
            known = self._strict_codes[held.id] = (held, codes)
        if known[1]:
            raise GMIError(
                f"persona {held.id!r} is blocked by strict validation ({', '.join(known[1])})",
                GMIErrorCode.PERMISSION_DENIED,
                {"persona_id": held.id, "codes": list(known[1])},
            )

    def _check_permission(self, user_id: str, persona: PersonaDefinition) -> None:
        """Ask the host's callback (given a copy it may change) whether the user may use it."""
        check = self._config.can_use_persona
        if check is not None and not check(user_id, persona):
            raise GMIError(
                f"user {user_id!r} may not use persona {persona.id!r}",
                GMIErrorCode.PERMISSION_DENIED,
                {"user_id": user_id, "persona_id": persona.id},
            )

    def _lock_for(self, session_id: str, seat: _Seat) -> asyncio.Lock:
        # One build at a time per slot; the lock lives while a call holds or waits for it.
        key = (session_id, seat)
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    async def _build(
        self,
        user_id: str,
        session_id: str,
        persona: PersonaDefinition,
        registered: PersonaDefinition,
        seat: _Seat,
    ) -> tuple[GMI | IGMI, LearnerSessionLike | None]:
        gmi_id = f"gmi-instance-{uuid.uuid4().hex}"
        if self._config.igmi_factory is not None:
            return self._config.igmi_factory(gmi_id, persona), None
        factory = self._config.learning_sessions
        learner = (
            factory(learner_request(gmi_id, user_id, session_id, persona, registered, seat))
            if factory is not None
            else None
        )
        base = self._config.base_config
        working_memory = InMemoryWorkingMemory()
        gmi = GMI(gmi_id)
        request = CognitiveMemoryRequest(
            gmi_instance_id=gmi_id,
            session_id=session_id,
            user_id=user_id,
            persona=persona,
            working_memory=working_memory,
            provider_manager=gmi.provider_manager,
            utility_ai=base.utility_ai,
            tool_orchestrator=base.tool_orchestrator,
            retrieval_augmentor=base.retrieval_augmentor,
        )
        default_entries = self._config.default_reasoning_trace_max_entries
        config = replace(
            base,
            working_memory=working_memory,
            memory_bridge=await attach_cognitive_memory(
                self._config.cognitive_memory_factory, request, _log
            ),
            reasoning_trace_max_entries=default_entries or base.reasoning_trace_max_entries,
            shutdown_timeout=self._config.shutdown_timeout_ms / 1000,
            learning=learner,
        )
        try:
            await gmi.initialize(persona, config)
        except BaseException:
            await end_learners([learner])
            raise
        return gmi, learner

    # -- reading and removing ---------------------------------------------------------------

    def gmi_for_session(self, session_id: str) -> GMI | IGMI | None:
        """The session's own GMI, if it has one."""
        self._ensure_open()
        entry = self._sessions.get(session_id, {}).get(None)
        return entry.gmi if entry is not None else None

    def gmi_by_id(self, gmi_id: str) -> GMI | IGMI | None:
        """The active GMI whose id is ``gmi_id``, if any: how a tool finds its calling GMI."""
        self._ensure_open()
        for slots in self._sessions.values():
            for entry in slots.values():
                if entry.gmi.gmi_id == gmi_id:
                    return entry.gmi
        return None

    def gmi_for_seat(self, session_id: str, agency_id: str, role_id: str) -> GMI | IGMI | None:
        """The session's GMI for the seat ``agency_id::role_id``, if it has one."""
        self._ensure_open()
        entry = self._sessions.get(session_id, {}).get((agency_id, role_id))
        return entry.gmi if entry is not None else None

    @property
    def active_sessions(self) -> list[str]:
        """The ids of the sessions that have a GMI (their own or a seat's)."""
        self._ensure_open()
        return list(self._sessions)

    def set_seat_rules(
        self, agency_id: str, role_id: str, rules: Sequence[PersonaEvolutionRule]
    ) -> None:
        """Set the evolution rules of the seat ``agency_id::role_id`` (reference §1.8)."""
        self._ensure_open()
        self._seats.set_rules(agency_id, role_id, rules)

    def touch(self, session_id: str) -> None:
        """Mark the session's GMIs active now (on the injected clock); unknown ids are ignored."""
        self._ensure_open()
        now = self._clock.monotonic()
        for entry in self._sessions.get(session_id, {}).values():
            entry.last_active = now

    async def deactivate_gmi_for_session(self, session_id: str) -> bool:
        """Remove the session's GMIs (its own and its seats') and shut them down.

        Returns whether the session had any. Waits for each at most ``shutdown_timeout_ms``.
        """
        self._ensure_open()
        slots = list(self._sessions.get(session_id, {}))
        entries = [self._remove(session_id, seat) for seat in slots]
        await self._close(entries)
        return bool(entries)

    async def cleanup_inactive_gmis(self, minutes: float | None = None) -> int:
        """Remove and shut down the GMIs idle longer than ``minutes`` (the config's default).

        Idle time runs on the injected clock from a GMI's creation or last `touch()`. Nothing
        calls this on a schedule: a long-running host does (spec). Returns how many it removed.
        """
        self._ensure_open()
        if minutes is None:
            minutes = self._config.inactivity_cleanup_minutes
        elif not is_positive_number(minutes):
            _invalid("minutes", f"minutes must be a positive number, got {minutes!r}")
        now = self._clock.monotonic()
        idle = [
            (session_id, seat)
            for session_id, slots in self._sessions.items()
            for seat, entry in slots.items()
            if now - entry.last_active > minutes * 60
        ]
        entries = [self._remove(session_id, seat) for session_id, seat in idle]
        await self._close(entries)
        return len(entries)

    def _remove(self, session_id: str, seat: _Seat, *, forget_overlay: bool = True) -> _Entry:
        slots = self._sessions[session_id]
        entry = slots.pop(seat)
        if not slots:
            del self._sessions[session_id]
        if seat is not None and forget_overlay:
            self._seats.forget(session_id, *seat)
        return entry

    # -- shutdown ---------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """Shut every GMI down at once, each within ``shutdown_timeout_ms``; then refuse calls.

        A GMI not done within the bound is logged at WARNING and finishes on its own. Calls
        that overlap share one shutdown; a call after it has finished returns at once.
        """
        if self._shutdown_task is None:
            self._closed = True
            self._shutdown_task = asyncio.create_task(self._shutdown())
        await asyncio.shield(self._shutdown_task)

    async def _shutdown(self) -> None:
        entries = [entry for slots in self._sessions.values() for entry in slots.values()]
        self._sessions.clear()
        await self._close(entries)

    async def _close(self, entries: Sequence[_Entry]) -> None:
        try:  # the GMIs first (bounded), then their learner sessions
            await self._closer.close([_closing(entry) for entry in entries])
        finally:
            await end_learners([entry.learner for entry in entries])

    def _ensure_open(self) -> None:
        if self._closed:
            raise GMIError("the GMI manager has been shut down", GMIErrorCode.NOT_INITIALIZED)


def _closing(entry: _Entry) -> ClosingGMI:
    return ClosingGMI(entry.gmi, entry.session_id)


def _invalid(option: str, message: str) -> NoReturn:
    raise GMIError(message, GMIErrorCode.INVALID_ARGUMENT, {"option": option})

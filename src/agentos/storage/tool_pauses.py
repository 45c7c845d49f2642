"""The store of pending external tool requests (spec: the IGMI pause; DESIGN.md §5.24, §6).

"An IGMI stops a turn for the host by returning an output with isFinal: false whose toolCalls
name the calls the host runs: the runtime saves the pending request", and the host reads it only
after it is saved. A `ToolPause` is that request; a `ToolPauseStore` keeps it until the results
arrive: `InMemoryToolPauseStore` (here) ends with the process, `SQLiteToolPauseStore`
(`agentos.storage.tool_pause_sqlite`) survives it, so a restarted runtime resumes the pause.

Both keep the same rules. **One pending pause per session; a newer one replaces it**: the GMI
continues only the last tool round of its history (`pending_tool_calls()`), so a pause the
history moved past can no longer be answered, and refusing would leave a session whose host
abandoned a request unable to pause again (the TypeScript runtime likewise overwrites the
conversation's one pending-request entry). A save never replaces another user's pause. **Taking
is atomic** (one taker of many gets the pause). **A user never reads another user's pause**
(``PERMISSION_DENIED`` naming ``user_id``). **Arguments and metadata round-trip exactly** as
JSON values. **Bad input raises** `GMIError` (``INVALID_ARGUMENT``, ``details["option"]`` naming
the field) before any write.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple, NoReturn, Protocol, runtime_checkable

from agentos.core.clock import Clock, system_clock
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ToolCall

from .sqlite import StorageError

__all__ = [
    "InMemoryToolPauseStore",
    "PauseRow",
    "ToolPause",
    "ToolPauseStore",
    "check_pause_key",
    "check_pause_owner",
    "check_user_id",
    "decode_pause",
    "encode_pause",
]


def _invalid(option: str, why: str) -> NoReturn:
    raise GMIError(f"{option}: {why}", GMIErrorCode.INVALID_ARGUMENT, {"option": option})


def _text(option: str, value: object, *, blank: bool = False) -> str:
    """``value`` as a non-blank string a database can store (no lone surrogate)."""
    if not isinstance(value, str):
        _invalid(option, f"must be a string, got {type(value).__name__}")
    if not blank and not value.strip():
        _invalid(option, "must not be empty")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        _invalid(option, "is not valid Unicode text (it holds a lone surrogate)")
    return value


@dataclass(frozen=True, slots=True)
class ToolPause:
    """One session's pending request for tool calls the host runs (spec: the IGMI pause).

    ``interaction_id`` is the turn (or continuation) that paused; ``tool_calls`` the calls the
    host must run, each id once; ``rationale`` and ``metadata`` those of the IGMI's streamed
    request when it streamed one naming exactly these calls; ``gmi_instance_id`` the GMI that
    paused (a continuation resumed on another GMI carries no rag sources, as the spec says);
    ``organization_id`` the paused turn's resolved organization (``None``: none), the namespace
    its continuation's learner belongs to unless the host resumes it under another (spec
    "Learning": "A tool continuation belongs to the turn it continues"); ``created_at`` is
    timezone-aware, kept in UTC. Construction checks every field and raises `GMIError`
    (``INVALID_ARGUMENT``, ``details["option"]`` naming the field) on bad input. Build one with
    `create` to stamp ``created_at`` from an injected clock.
    """

    session_id: str
    user_id: str
    persona_id: str
    interaction_id: str
    tool_calls: tuple[ToolCall, ...]
    created_at: datetime
    rationale: str | None = None
    metadata: dict[str, Any] | None = None
    gmi_instance_id: str | None = None
    organization_id: str | None = None

    def __post_init__(self) -> None:
        for name in ("session_id", "user_id", "persona_id", "interaction_id"):
            _text(name, getattr(self, name))
        if self.gmi_instance_id is not None:
            _text("gmi_instance_id", self.gmi_instance_id)
        if self.organization_id is not None:
            _text("organization_id", self.organization_id)
        if self.rationale is not None:
            _text("rationale", self.rationale, blank=True)
        if self.metadata is not None:
            if not isinstance(self.metadata, Mapping):
                _invalid("metadata", f"must be a dict, got {type(self.metadata).__name__}")
            object.__setattr__(self, "metadata", dict(self.metadata))
        object.__setattr__(self, "tool_calls", _checked_calls(self.tool_calls))
        if not isinstance(self.created_at, datetime) or self.created_at.tzinfo is None:
            _invalid("created_at", "must be a timezone-aware datetime")
        object.__setattr__(self, "created_at", self.created_at.astimezone(UTC))

    @classmethod
    def create(
        cls,
        *,
        session_id: str,
        user_id: str,
        persona_id: str,
        interaction_id: str,
        tool_calls: Sequence[ToolCall],
        rationale: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        gmi_instance_id: str | None = None,
        organization_id: str | None = None,
        clock: Clock = system_clock,
    ) -> ToolPause:
        """A pause made now: ``created_at`` is ``clock.now()`` (tests pass a `FakeClock`)."""
        return cls(
            session_id=session_id,
            user_id=user_id,
            persona_id=persona_id,
            interaction_id=interaction_id,
            tool_calls=tuple(tool_calls),
            created_at=clock.now(),
            rationale=rationale,
            metadata=None if metadata is None else dict(metadata),
            gmi_instance_id=gmi_instance_id,
            organization_id=organization_id,
        )

    @property
    def tool_call_ids(self) -> tuple[str, ...]:
        """The ids of the calls the host must run, in order."""
        return tuple(call.id for call in self.tool_calls)


def _checked_calls(calls: object) -> tuple[ToolCall, ...]:
    if isinstance(calls, str | bytes) or not isinstance(calls, Sequence):
        _invalid("tool_calls", f"must be a sequence of ToolCall, got {type(calls).__name__}")
    if not calls:
        _invalid("tool_calls", "a pause names at least one call the host runs")
    seen: set[str] = set()
    for index, call in enumerate(calls):
        if not isinstance(call, ToolCall):
            _invalid(f"tool_calls[{index}]", f"must be a ToolCall, got {type(call).__name__}")
        _text(f"tool_calls[{index}].id", call.id)
        _text(f"tool_calls[{index}].name", call.name)
        if call.id in seen:
            _invalid("tool_calls", f"the call id {call.id!r} appears twice")
        seen.add(call.id)
    return tuple(calls)


@runtime_checkable
class ToolPauseStore(Protocol):
    """Where sessions' pending external tool requests wait for the host's results.

    Every method is atomic, and a write is complete (committed, for a durable store) before it
    returns. Arguments are checked first: a blank ``session_id`` or ``user_id`` raises
    `GMIError` (``INVALID_ARGUMENT``) naming it, and a ``user_id`` that is not the pause's raises
    ``PERMISSION_DENIED`` naming ``user_id``, changing nothing.
    """

    async def save(self, pause: ToolPause) -> None:
        """Save ``pause`` as its session's pending pause, replacing the session's earlier one.

        Raises ``INVALID_ARGUMENT`` naming the field when an argument or the metadata is not a
        JSON value, and ``PERMISSION_DENIED`` when the session holds another user's pause.
        """
        ...

    async def load(self, session_id: str, *, user_id: str) -> ToolPause | None:
        """The session's pending pause, or ``None`` when it has none."""
        ...

    async def take(
        self, session_id: str, *, user_id: str, interaction_id: str | None = None
    ) -> ToolPause | None:
        """Remove and return the session's pending pause (``None`` when it has none).

        With ``interaction_id``, only the pause of that turn is taken (``None`` otherwise), so
        results meant for one pause never consume a newer one.
        """
        ...

    async def list_pauses(self, user_id: str) -> list[ToolPause]:
        """The user's pending pauses, oldest first (ties by session id)."""
        ...


class PauseRow(NamedTuple):
    """A pause as both backends store it: plain text columns, the JSON already encoded."""

    session_id: str
    user_id: str
    persona_id: str
    gmi_instance_id: str | None
    interaction_id: str
    tool_calls: str
    rationale: str | None
    metadata: str | None
    created_at: str
    organization_id: str | None = None


def check_pause_key(session_id: object, user_id: object, interaction_id: object = None) -> None:
    """Refuse a blank or non-string ``session_id`` / ``user_id`` / ``interaction_id``.

    ``INVALID_ARGUMENT`` naming the argument; ``interaction_id`` may be ``None``.
    """
    _text("session_id", session_id)
    check_user_id(user_id)
    if interaction_id is not None:
        _text("interaction_id", interaction_id)


def check_user_id(user_id: object) -> None:
    """Refuse a blank or non-string ``user_id`` (``INVALID_ARGUMENT`` naming it)."""
    _text("user_id", user_id)


def check_pause_owner(owner: str, user_id: str, session_id: str) -> None:
    """Raise ``PERMISSION_DENIED`` naming ``user_id`` unless ``user_id`` owns the pause."""
    if owner != user_id:
        raise GMIError(
            f"user_id: the pending tool request of session {session_id!r} belongs to another user",
            GMIErrorCode.PERMISSION_DENIED,
            {"option": "user_id", "session_id": session_id},
        )


def encode_pause(pause: ToolPause) -> PauseRow:
    """``pause`` as a row, after checking that its arguments and metadata are JSON values."""
    calls: list[dict[str, Any]] = []
    for index, call in enumerate(pause.tool_calls):
        _check_json(call.arguments, f"tool_calls[{index}].arguments", top=True)
        entry: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
        if call.unparsed_arguments is not None:
            entry["unparsed_arguments"] = _text(
                f"tool_calls[{index}].unparsed_arguments", call.unparsed_arguments, blank=True
            )
        calls.append(entry)
    if pause.metadata is not None:
        _check_json(pause.metadata, "metadata", top=True)
    return PauseRow(
        session_id=pause.session_id,
        user_id=pause.user_id,
        persona_id=pause.persona_id,
        gmi_instance_id=pause.gmi_instance_id,
        interaction_id=pause.interaction_id,
        tool_calls=_dumps(calls),
        rationale=pause.rationale,
        metadata=None if pause.metadata is None else _dumps(pause.metadata),
        # Fixed width, UTC, microseconds: text order is time order.
        created_at=pause.created_at.isoformat(timespec="microseconds"),
        organization_id=pause.organization_id,
    )


def decode_pause(row: Sequence[Any]) -> ToolPause:
    """The pause a stored row holds (fresh objects); `StorageError` naming the session if bad."""
    stored = PauseRow(*row)
    try:
        calls = tuple(
            ToolCall(
                id=entry["id"],
                name=entry["name"],
                arguments=entry["arguments"],
                unparsed_arguments=entry.get("unparsed_arguments"),
            )
            for entry in json.loads(stored.tool_calls)
        )
        return ToolPause(
            session_id=stored.session_id,
            user_id=stored.user_id,
            persona_id=stored.persona_id,
            interaction_id=stored.interaction_id,
            tool_calls=calls,
            created_at=datetime.fromisoformat(stored.created_at),
            rationale=stored.rationale,
            metadata=None if stored.metadata is None else json.loads(stored.metadata),
            gmi_instance_id=stored.gmi_instance_id,
            organization_id=stored.organization_id,
        )
    except (ValueError, TypeError, KeyError, GMIError) as error:
        raise StorageError(
            f"the pending tool request of session {stored.session_id!r} cannot be read: "
            f"{type(error).__name__}",
            details={"session_id": stored.session_id},
        ) from error


def _dumps(value: Any) -> str:
    # ensure_ascii: a lone surrogate inside a string travels as an escape, so any str round-trips.
    return json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def _check_json(value: Any, where: str, *, top: bool = False) -> None:
    """Refuse what JSON would not give back exactly (tuples, non-string keys, NaN, objects)."""
    kind = type(value)
    if top and kind is not dict:
        _invalid(where, f"must be a dict, got {kind.__name__}")
    if value is None or kind in (str, int, bool):
        return
    if kind is float:
        if not math.isfinite(value):
            _invalid(where, f"{value!r} is not a JSON number")
        return
    if kind is list:
        for index, item in enumerate(value):
            _check_json(item, f"{where}[{index}]")
        return
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                _invalid(where, f"has the key {key!r}; JSON object keys are strings")
            _check_json(item, f"{where}[{key!r}]")
        return
    _invalid(where, f"a {kind.__name__} is not a JSON value (use dict, list, str, number, bool)")


class InMemoryToolPauseStore:
    """A `ToolPauseStore` in process memory: pauses end with the process.

    It keeps each pause encoded as the SQLite store does, so both refuse the same input and hand
    out fresh objects; one lock makes each call atomic across threads too.
    """

    def __init__(self) -> None:
        self._rows: dict[str, PauseRow] = {}
        self._lock = threading.Lock()

    async def save(self, pause: ToolPause) -> None:
        """Save ``pause`` as its session's pending pause, replacing the session's earlier one."""
        row = encode_pause(pause)
        with self._lock:
            held = self._rows.get(row.session_id)
            if held is not None:
                check_pause_owner(held.user_id, row.user_id, row.session_id)
            self._rows[row.session_id] = row

    async def load(self, session_id: str, *, user_id: str) -> ToolPause | None:
        """The session's pending pause, or ``None`` when it has none."""
        check_pause_key(session_id, user_id)
        with self._lock:
            row = self._rows.get(session_id)
        if row is None:
            return None
        check_pause_owner(row.user_id, user_id, session_id)
        return decode_pause(row)

    async def take(
        self, session_id: str, *, user_id: str, interaction_id: str | None = None
    ) -> ToolPause | None:
        """Remove and return the session's pending pause (only that turn's, if named)."""
        check_pause_key(session_id, user_id, interaction_id)
        with self._lock:
            row = self._rows.get(session_id)
            if row is None:
                return None
            check_pause_owner(row.user_id, user_id, session_id)
            if interaction_id is not None and row.interaction_id != interaction_id:
                return None
            pause = decode_pause(row)
            del self._rows[session_id]
        return pause

    async def list_pauses(self, user_id: str) -> list[ToolPause]:
        """The user's pending pauses, oldest first (ties by session id)."""
        check_user_id(user_id)
        with self._lock:
            rows = [row for row in self._rows.values() if row.user_id == user_id]
        rows.sort(key=lambda row: (row.created_at, row.session_id))
        return [decode_pause(row) for row in rows]

"""Typed memory scopes: whose memory a trace is (DESIGN.md §5.17; spec: Cognitive memory → Scope).

A scope is a pair of a kind (`MemoryScope`: thread, user, persona, organization) and an id.
Two scopes match only when both are equal, so a user scope and a session's scope never meet,
whatever their strings: ``ScopeKey(USER, "alice")`` is user alice's, ``ScopeKey(THREAD,
"alice")`` a session's whose scope id happens to be ``"alice"``. Every filter, store and search
compares the pair, never the id alone.

`SessionScopes` is the spec's Scope rule for one session: the user's messages are filed under
the session's user (``(USER, user_id)``) or, without one, the session's own scope
(``(THREAD, scope_id)``); the replies under ``(THREAD, scope_id)``; recall reads those scopes
only. So sessions of one user recall what that user said in each of them, sessions without a
user recall nothing of each other's, and no string a caller chooses (a session id equal to
someone's user id) reaches another user's memories.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.memory.trace import MemoryScope

__all__ = ["ScopeKey", "SessionScopes", "check_scopes"]


class ScopeKey(NamedTuple):
    """One memory scope: its ``kind`` and its ``id`` (DESIGN.md §5.17).

    A tuple, so ``(MemoryScope.USER, "ada")`` written by hand is the same scope.
    """

    kind: MemoryScope
    id: str

    @classmethod
    def user(cls, user_id: str) -> ScopeKey:
        """The scope of what user ``user_id`` said, in any of their sessions."""
        return cls(MemoryScope.USER, user_id)

    @classmethod
    def thread(cls, scope_id: str) -> ScopeKey:
        """The scope of one opening of a session (its scope id, spec: Scope)."""
        return cls(MemoryScope.THREAD, scope_id)


@dataclass(frozen=True, slots=True)
class SessionScopes:
    """Where one session files its exchanges and what it recalls (see the module doc).

    ``user`` holds the user's messages, ``thread`` the replies; `recall` is both (one scope
    when they are the same, for a session without a user).
    """

    user: ScopeKey
    thread: ScopeKey

    @classmethod
    def of(cls, scope_id: str, user_id: str | None = None) -> SessionScopes:
        """The scopes of a session opened with ``scope_id`` and, optionally, ``user_id``.

        A blank ``user_id`` is no user (the spec counts ``''`` among the anonymous ids): all
        blank-user sessions sharing one user scope would recall each other's messages.
        """
        if not isinstance(scope_id, str) or not scope_id:
            raise ValueError(f"a session's memory scope needs a scope_id, got {scope_id!r}")
        thread = ScopeKey.thread(scope_id)
        return cls(ScopeKey.user(user_id) if user_id else thread, thread)

    @property
    def recall(self) -> tuple[ScopeKey, ...]:
        """The scopes the session's recall reads, graph associations included."""
        return (self.user, self.thread) if self.user != self.thread else (self.thread,)


def check_scopes(scopes: object, option: str = "scopes") -> tuple[ScopeKey, ...]:
    """``scopes`` as `ScopeKey` values, or a `GMIError` naming ``option`` (INVALID_ARGUMENT).

    Each item is a ``(kind, id)`` pair: a `MemoryScope` (or its value, ``"user"``) and a string.
    A bare string is refused: an id without its kind is what let a session id reach a user's
    memories (DESIGN.md §5.17).
    """
    if isinstance(scopes, str | bytes) or not isinstance(scopes, Sequence | set | frozenset):
        raise _invalid(option, f"{option} must be a list of (MemoryScope, id) pairs", scopes)
    checked: list[ScopeKey] = []
    for item in scopes:
        if isinstance(item, str | bytes) or not isinstance(item, Sequence) or len(item) != 2:
            raise _invalid(option, f"each of {option} must be a (MemoryScope, id) pair", item)
        kind, scope_id = item
        try:
            checked_kind = MemoryScope(kind)
        except ValueError:
            kinds = ", ".join(k.value for k in MemoryScope)
            raise _invalid(option, f"a scope's kind must be one of {kinds}", kind) from None
        if not isinstance(scope_id, str):
            raise _invalid(option, "a scope's id must be a string", scope_id)
        checked.append(ScopeKey(checked_kind, scope_id))
    return tuple(checked)


def _invalid(option: str, message: str, got: object) -> GMIError:
    return GMIError(f"{message}, got {got!r}", GMIErrorCode.INVALID_ARGUMENT, {"option": option})

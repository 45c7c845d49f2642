"""A ``memory_provider``: long-term memory an agent consults and feeds once per turn.

Spec (GMIs from agent(), memoryProvider; the first table's "Long-term memory" row): the
provider's ``get_context()`` runs once per turn, within ``memory_provider_options["timeout_ms"]``
(5,000 ms by default, the reference's ``MEMORY_TIMEOUT_MS``), and its text goes into every model
call of the turn as a system message after the leading system messages. ``observe()`` runs after
each turn that ends without error, with the user's text and the reply. A provider that times out
or raises is warned about (`MemoryProviderWarning`) and the turn goes on without it.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, Role

from .warnings import AgentOSWarning

__all__ = [
    "DEFAULT_MEMORY_TIMEOUT_MS",
    "MemoryProvider",
    "MemoryProviderWarning",
    "check_memory_provider",
    "fetch_memory_context",
    "insert_memory_context",
    "memory_timeout_ms",
    "observe_turn",
]

DEFAULT_MEMORY_TIMEOUT_MS = 5_000.0
"""How long ``get_context()`` may take when ``memory_provider_options`` sets no ``timeout_ms``."""


@runtime_checkable
class MemoryProvider(Protocol):
    """What an agent's ``memory_provider`` offers; either method may be left out.

    - ``get_context(query, *, session_id, user_id)``: the memory relevant to ``query`` (the
      user's text of the turn), as text to put before the conversation, or ``None`` (or a blank
      string) for none.
    - ``observe(user_text, reply_text, *, session_id, user_id)``: record a finished turn.

    ``session_id`` is ``None`` for an agent's ``generate()`` and ``stream()``; ``user_id`` is the
    id the session was opened with, or ``None``. Accept ``**kwargs`` beside them so later
    agentos versions can pass more.
    """

    async def get_context(
        self, query: str, *, session_id: str | None, user_id: str | None
    ) -> str | None:
        """The memory to show the model for ``query``, or ``None``."""
        ...

    async def observe(
        self, user_text: str, reply_text: str, *, session_id: str | None, user_id: str | None
    ) -> None:
        """Record a turn that ended without error."""
        ...


class MemoryProviderWarning(AgentOSWarning):
    """A memory provider's ``get_context()`` timed out or failed, or its ``observe()`` failed.

    The turn ran (or its result stands) without it.
    """


def check_memory_provider(provider: object) -> None:
    """Refuse, naming ``memory_provider``, an object with neither ``get_context`` nor ``observe``.

    Raises `GMIError` (``INVALID_ARGUMENT``, ``details["option"] == "memory_provider"``).
    """
    if provider is None:
        return
    methods = [getattr(provider, name, None) for name in ("get_context", "observe")]
    if not any(callable(method) for method in methods):
        raise GMIError(
            "memory_provider: must have an async get_context() and/or observe() method, "
            f"got {type(provider).__name__}",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": "memory_provider"},
        )


def memory_timeout_ms(options: Mapping[str, Any] | None) -> float:
    """``memory_provider_options["timeout_ms"]``, or `DEFAULT_MEMORY_TIMEOUT_MS`."""
    value = (options or {}).get("timeout_ms")
    return DEFAULT_MEMORY_TIMEOUT_MS if value is None else float(value)


async def fetch_memory_context(
    provider: object,
    query: str,
    *,
    timeout_ms: float,
    session_id: str | None,
    user_id: str | None,
) -> str | None:
    """The provider's context for this turn, or ``None``; never raises for the provider.

    Waits at most ``timeout_ms`` (the call is then cancelled). A timeout, an exception or an
    answer that is not a string is warned about with `MemoryProviderWarning` and gives ``None``,
    so the turn runs without memory rather than failing (spec: memoryProvider; the reference
    warns and goes on the same way). A blank answer gives ``None``.
    """
    get_context = getattr(provider, "get_context", None)
    if provider is None or not callable(get_context):
        return None
    try:
        text = await asyncio.wait_for(
            get_context(query, session_id=session_id, user_id=user_id), timeout_ms / 1000.0
        )
    except TimeoutError:
        _warn(f"memory_provider.get_context() exceeded {timeout_ms:g} ms; the turn runs without it")
        return None
    except Exception as exc:  # a provider's failure must not fail the turn
        _warn(f"memory_provider.get_context() failed ({exc!r}); the turn runs without it")
        return None
    if text is None:
        return None
    if not isinstance(text, str):
        _warn(
            f"memory_provider.get_context() returned a {type(text).__name__}, not a string; "
            "the turn runs without it"
        )
        return None
    return text if text.strip() else None


def insert_memory_context(messages: Sequence[Message], context: str | None) -> list[Message]:
    """``messages`` with ``context`` as a system message after their leading system messages."""
    result = list(messages)
    if context is None:
        return result
    position = next(
        (index for index, message in enumerate(result) if message.role is not Role.SYSTEM),
        len(result),
    )
    result.insert(position, Message.system(context))
    return result


async def observe_turn(
    provider: object,
    user_text: str,
    reply_text: str,
    *,
    session_id: str | None,
    user_id: str | None,
) -> None:
    """Give the provider a turn that ended without error; a failure is warned about, not raised.

    The turn has already succeeded and its history is written; a memory that could not record
    it should not turn that success into an error.
    """
    observe = getattr(provider, "observe", None)
    if provider is None or not callable(observe):
        return
    try:
        await observe(user_text, reply_text, session_id=session_id, user_id=user_id)
    except Exception as exc:
        _warn(f"memory_provider.observe() failed ({exc!r})")


def _warn(message: str) -> None:
    warnings.warn(MemoryProviderWarning(message), stacklevel=3)

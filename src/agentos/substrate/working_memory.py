"""In-memory working memory: the session's key-value store (reference §1.10)."""

from __future__ import annotations

from typing import Any

from agentos.substrate.trace import deep_copy

__all__ = ["InMemoryWorkingMemory"]


class InMemoryWorkingMemory:
    """Key-value working memory held in process memory; values are deep-copied in and out."""

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.closed = False

    async def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default``."""
        return deep_copy(self._data.get(key, default))

    async def set(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key``."""
        self._data[key] = deep_copy(value)

    async def delete(self, key: str) -> None:
        """Remove ``key`` (no error when absent)."""
        self._data.pop(key, None)

    async def snapshot(self) -> dict[str, Any]:
        """A deep copy of everything held."""
        return deep_copy(self._data)

    async def clear(self) -> None:
        """Remove everything."""
        self._data.clear()

    async def close(self) -> None:
        """Release the memory (idempotent)."""
        self.closed = True

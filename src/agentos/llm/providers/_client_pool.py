"""SDK clients shared per event loop and per settings, by every model that uses the same ones.

Building an SDK client costs tens of milliseconds (its SSL context), and a call that builds a
model per call (``generate_text(provider=...)``) would pay it every time. A pooled connection
cannot serve another loop than the one that opened it (``asyncio.run()`` per call), so clients
are kept per running loop; a finished loop's clients are marked closed when a later loop asks
for one. A model's release closes the shared client once no other model uses it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["ClientPool"]

C = TypeVar("C")


@dataclass(slots=True)
class _Shared(Generic[C]):
    client: C
    users: set[int] = field(default_factory=set)


class ClientPool(Generic[C]):
    """Clients of one SDK, by event loop and settings key; ``close`` closes one."""

    def __init__(self, close: Callable[[C], Awaitable[object]]) -> None:
        self._close = close
        self._by_loop: dict[asyncio.AbstractEventLoop, dict[Hashable, _Shared[C]]] = {}

    async def get(self, key: Hashable, user: object, build: Callable[[], C]) -> C:
        """The running loop's client for ``key`` (built on first use), used by ``user``."""
        await self._drop_finished_loops()
        shared = self._by_loop.setdefault(asyncio.get_running_loop(), {})
        entry = shared.get(key)
        if entry is None:
            entry = shared[key] = _Shared(build())
        entry.users.add(id(user))
        return entry.client

    async def release(self, key: Hashable, user: object) -> None:
        """``user`` is done with the running loop's client; close it if nobody else uses it."""
        await self._drop_finished_loops()
        shared = self._by_loop.get(asyncio.get_running_loop(), {})
        entry = shared.get(key)
        if entry is None:
            return
        entry.users.discard(id(user))
        if not entry.users:
            del shared[key]
            await self._close(entry.client)

    async def _drop_finished_loops(self) -> None:
        for loop in [loop for loop in self._by_loop if loop.is_closed()]:
            for entry in self._by_loop.pop(loop).values():
                # Its connections belong to the finished loop, so closing them fails; closing
                # the client still marks it closed, so the SDK does not try again when it is
                # collected (from inside this loop, where that attempt would log an error).
                with contextlib.suppress(RuntimeError):
                    await self._close(entry.client)

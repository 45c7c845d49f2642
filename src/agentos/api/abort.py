"""`AbortSignal`: stop a call from outside, as the spec's ``abortSignal`` does.

``signal = AbortSignal(); ... signal.abort("user left")``. A turn given the signal stops when it
is aborted: its model call is aborted, the steps it finished stay (marked partial), and
``send()`` rejects with the signal's reason (an exception given as the reason is raised as it
is; anything else becomes an `AbortError` carrying it). A signal already aborted starts no turn.
An `asyncio.Event` works as a signal too (its reason is a plain `AbortError`).
"""

from __future__ import annotations

import asyncio

from agentos.core.errors import GMIError, GMIErrorCode

__all__ = ["AbortError", "AbortSignal", "abort_reason", "is_aborted", "wait_aborted"]


class AbortError(GMIError):
    """A call stopped by its abort signal (code ``SYS_ABORTED``); ``reason`` is what was given."""

    def __init__(self, reason: object = None) -> None:
        text = f": {reason}" if reason is not None else ""
        super().__init__(f"the call was aborted{text}", GMIErrorCode.ABORTED)
        self.reason = reason


class AbortSignal:
    """A one-shot signal with a reason (the spec's ``AbortSignal``)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self.reason: object = None

    @property
    def aborted(self) -> bool:
        """Whether `abort()` was called."""
        return self._event.is_set()

    def abort(self, reason: object = None) -> None:
        """Abort (once; a later call keeps the first reason)."""
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    async def wait(self) -> None:
        """Return once the signal is aborted."""
        await self._event.wait()


def is_aborted(signal: AbortSignal | asyncio.Event) -> bool:
    """Whether ``signal`` is aborted."""
    return signal.aborted if isinstance(signal, AbortSignal) else signal.is_set()


async def wait_aborted(signal: AbortSignal | asyncio.Event) -> None:
    """Return once ``signal`` is aborted."""
    await signal.wait()


def abort_reason(signal: AbortSignal | asyncio.Event) -> BaseException:
    """What a call stopped by ``signal`` raises."""
    reason = signal.reason if isinstance(signal, AbortSignal) else None
    return reason if isinstance(reason, BaseException) else AbortError(reason)

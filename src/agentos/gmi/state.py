"""The GMI's lifecycle state (reference §1.2 ``GMIPrimeState``)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["GMIPrimeState"]


class GMIPrimeState(StrEnum):
    """Where a GMI is in its life."""

    IDLE = "idle"
    INITIALIZING = "initializing"
    READY = "ready"
    PROCESSING = "processing"
    AWAITING_TOOL_RESULT = "awaiting_tool_result"
    REFLECTING = "reflecting"
    ERRORED = "errored"
    SHUTTING_DOWN = "shutting_down"
    SHUTDOWN = "shutdown"

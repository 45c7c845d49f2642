"""Option checks and the refusal error shared by forge, specialists and self-improvement."""

from __future__ import annotations

from agentos.core.errors import GMIError, GMIErrorCode

__all__ = ["Rejection", "check_int", "invalid"]


def check_int(option: str, value: object, minimum: int) -> None:
    """Raise `invalid` unless ``value`` is an int (not a bool) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise invalid(option, f"must be an int >= {minimum}, got {value!r}")


def invalid(option: str, problem: str) -> GMIError:
    """An ``INVALID_ARGUMENT`` error naming ``option``: ``"<option> <problem>"``."""
    return GMIError(
        f"{option} {problem}",
        GMIErrorCode.INVALID_ARGUMENT,
        {"option": option},
        component="emergent",
    )


class Rejection(GMIError):
    """A tool refused and changed nothing; details ``{"status": "rejected", "reason": reason}``."""

    def __init__(self, message: str, code: GMIErrorCode, reason: str, component: str) -> None:
        super().__init__(
            message, code, {"status": "rejected", "reason": reason}, component=component
        )
        self.reason = reason

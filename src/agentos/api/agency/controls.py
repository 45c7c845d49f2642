"""`Controls`: the limits an agency call is held to, checked after each member call.

Reference §1.27 (controls ``{maxTotalTokens, maxCostUSD, maxDurationMs, maxAgentCalls,
maxStepsPerAgent, maxEmergentAgents, onLimitReached stop|warn|error}`` checked after calls).
``max_steps_per_agent`` caps each call's steps and ``max_emergent_agents`` the specialists a
manager may spawn; the other four are checked by `Controls.breached` after each call.
`check_controls` checks them. ``on_limit_reached`` says what a breach does:
``"stop"`` (the default) ends the strategy after the call, ``"warn"`` warns once and goes on,
``"error"`` raises `AgencyLimitError`. `AgencyConfigError` and `refuse` live here, below
the configuration check that uses them, so the two modules import in one direction.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NoReturn

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.usage import ModelUsage

from ..warnings import AgentOSWarning

__all__ = [
    "AgencyConfigError",
    "check_controls",
    "refuse",
    "refuse_unknown",
    "AgencyLimitError",
    "AgencyLimitWarning",
    "Controls",
    "LimitReached",
    "limit_error",
]

OnLimit = Literal["stop", "warn", "error"]

_COUNTS = ("max_total_tokens", "max_agent_calls", "max_steps_per_agent", "max_emergent_agents")
_AMOUNTS = ("max_cost_usd", "max_duration_ms")


class AgencyConfigError(GMIError):
    """agency() refused its options: ``details["option"]`` names the field (INVALID_ARGUMENT)."""


def refuse(option: str, why: str, **details: Any) -> NoReturn:
    """Raise the `AgencyConfigError` naming ``option`` (extra ``details`` kept beside it)."""
    raise AgencyConfigError(
        f"{option}: {why}", GMIErrorCode.INVALID_ARGUMENT, {"option": option, **details}
    )


def refuse_unknown(options: Mapping[str, Any], known: Collection[str], prefix: str = "") -> None:
    """Refuse the first unknown key of ``options`` (alphabetically), with a did-you-mean hint."""
    unknown = sorted(set(options) - set(known))
    if unknown:
        close = difflib.get_close_matches(unknown[0], sorted(known), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        refuse(prefix + unknown[0], f"unknown option{hint}")


class AgencyLimitError(GMIError):
    """A control was reached with ``on_limit_reached="error"``; ``details`` name the limit."""


class AgencyLimitWarning(AgentOSWarning):
    """A control was reached with ``on_limit_reached="warn"``: the agency went on."""


@dataclass(frozen=True, slots=True)
class LimitReached:
    """Which limit a call reached: its name, the figure reached and the limit."""

    limit: str
    value: float
    maximum: float

    def as_dict(self) -> dict[str, Any]:
        """The plain-data form kept in ``AgencyResult.metadata["limit_reached"]``."""
        return {"limit": self.limit, "value": self.value, "max": self.maximum}


@dataclass(frozen=True, slots=True)
class Controls:
    """An agency's limits (each ``None``: no limit) and what reaching one does."""

    max_total_tokens: int | None = None
    max_cost_usd: float | None = None
    max_duration_ms: float | None = None
    max_agent_calls: int | None = None
    max_steps_per_agent: int | None = None
    max_emergent_agents: int | None = None
    on_limit_reached: OnLimit = "stop"

    def breached(self, usage: ModelUsage, calls: int, elapsed_ms: float) -> LimitReached | None:
        """The first limit the figures so far reach (a limit is reached at its value), or None.

        A cost limit counts only the known cost (an unpriced call adds nothing).
        """
        figures: tuple[tuple[str, float | None, float], ...] = (
            ("max_total_tokens", self.max_total_tokens, usage.total_tokens),
            ("max_cost_usd", self.max_cost_usd, usage.cost_usd or 0.0),
            ("max_duration_ms", self.max_duration_ms, elapsed_ms),
            ("max_agent_calls", self.max_agent_calls, calls),
        )
        for name, maximum, value in figures:
            if maximum is not None and value >= maximum:
                return LimitReached(name, value, maximum)
        return None


def check_controls(controls: object) -> Controls:
    """``controls`` (a mapping or a `Controls`) checked; a bad field raises naming it."""
    if controls is None:
        return Controls()
    if isinstance(controls, Controls):
        return controls
    if not isinstance(controls, Mapping):
        refuse("controls", f"must be a mapping, got {controls!r}")
    refuse_unknown(controls, Controls.__dataclass_fields__, "controls.")
    for key in _COUNTS + _AMOUNTS:
        if (value := controls.get(key)) is None:
            continue
        whole = key in _COUNTS
        if (
            not isinstance(value, numbers.Real)
            or isinstance(value, bool)
            or (whole and not isinstance(value, int))
            or math.isnan(value)
            or value < 0
        ):
            kind = "an integer" if whole else "a number"
            refuse(f"controls.{key}", f"must be {kind} >= 0, got {value!r}")
    if controls.get("on_limit_reached", "stop") not in ("stop", "warn", "error"):
        refuse("controls.on_limit_reached", "must be 'stop', 'warn' or 'error'")
    return Controls(**controls)


def limit_error(reached: LimitReached) -> AgencyLimitError:
    """The error ``on_limit_reached="error"`` raises for ``reached``."""
    return AgencyLimitError(
        f"{reached.limit}: the agency reached its limit ({reached.value} of {reached.maximum})",
        GMIErrorCode.RATE_LIMIT_EXCEEDED,
        {"option": f"controls.{reached.limit}", **reached.as_dict()},
    )

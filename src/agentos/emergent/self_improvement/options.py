"""`SelfImprovementOptions`: what a host gives the four self-modification tools.

Defaults are the reference's ``DEFAULT_SELF_IMPROVEMENT_CONFIG`` (reference §1.30), except that
``temperature`` is not adjustable: the GMI sends no temperature of its own (DESIGN.md §5.3).
Every field is checked when the tools are built, naming the field.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentos.core.clock import Clock, system_clock
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.storage.personality_mutations import PersonalityMutationStore
from agentos.tools import Tool

if TYPE_CHECKING:
    from agentos.emergent.self_improvement.skills import SkillRegistry
    from agentos.substrate import GMI

__all__ = [
    "ADJUSTABLE_PARAMS",
    "Judge",
    "SelfImprovementOptions",
    "check_options",
]

Judge = Callable[[str], Awaitable[str]]
"""The model as judge: a prompt in, the model's reply text out (the host sends it with its own
completion settings)."""

ADJUSTABLE_PARAMS = ("verbosity", "personality")
"""What ``self_evaluate``'s adjust may change (no temperature: DESIGN.md §5.3)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SelfImprovementOptions:
    """The host's services and the tools' limits (reference §1.30 defaults)."""

    gmi_for: Callable[[str], GMI | None]
    """The calling GMI by its id (``context.gmi_id``): the runtime's manager lookup."""
    mutation_store: PersonalityMutationStore | None = None
    """Records accepted trait changes (only with ``persist_with_decay``); never read back."""
    persist_with_decay: bool = True
    decay_rate: float = 0.05
    max_delta_per_session: float = 0.15
    """Per trait and session, the sum of |applied deltas| ``adapt_personality`` allows."""
    skills: SkillRegistry | None = None
    """The skill registry ``manage_skills`` works on; without one the tool is not built."""
    judge: Judge | None = None
    """The model as judge for ``self_evaluate``'s evaluate; without one evaluate refuses."""
    max_evaluations_per_session: int = 10
    auto_adjust: bool = True
    adjustable_params: tuple[str, ...] = ADJUSTABLE_PARAMS
    tools: Callable[[], Mapping[str, Tool]] | None = None
    """The tools a workflow may call (read at each use); without it workflows call none."""
    workflow_max_steps: int = 10
    workflow_allowed_tools: tuple[str, ...] = ("*",)
    workflow_step_timeout_s: float = 30.0
    clock: Clock = system_clock


def _invalid(option: str, problem: str) -> GMIError:
    return GMIError(
        f"self_improvement.{option} {problem}",
        GMIErrorCode.INVALID_ARGUMENT,
        {"option": f"self_improvement.{option}"},
    )


def _check_fraction(option: str, value: object) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0.0 <= value <= 1.0
    ):
        raise _invalid(option, f"must be a number from 0 to 1, got {value!r}")


def _check_count(option: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _invalid(option, f"must be a whole number of at least 1, got {value!r}")


def check_options(options: SelfImprovementOptions) -> SelfImprovementOptions:
    """``options`` when every field is valid; else `GMIError` ``INVALID_ARGUMENT`` naming it."""
    if not callable(options.gmi_for):
        raise _invalid("gmi_for", "must be a callable from a GMI id to the GMI")
    _check_fraction("decay_rate", options.decay_rate)
    _check_fraction("max_delta_per_session", options.max_delta_per_session)
    _check_count("max_evaluations_per_session", options.max_evaluations_per_session)
    _check_count("workflow_max_steps", options.workflow_max_steps)
    timeout = options.workflow_step_timeout_s
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise _invalid("workflow_step_timeout_s", f"must be a positive number, got {timeout!r}")
    if options.judge is not None and not callable(options.judge):
        raise _invalid("judge", "must be an async callable from a prompt to the reply text")
    for param in options.adjustable_params:
        if param not in ADJUSTABLE_PARAMS:
            raise _invalid(
                "adjustable_params",
                f"holds {param!r}; the adjustable params are {', '.join(ADJUSTABLE_PARAMS)} "
                "(temperature is not: the GMI sends no temperature of its own)",
            )
    for name in options.workflow_allowed_tools:
        if not isinstance(name, str) or not name:
            raise _invalid("workflow_allowed_tools", f"holds {name!r}, not a tool name")
    return options

"""What a guardrail decides, and the report of it (issue 13 item 6; DESIGN.md §5.15).

A guardrail answers each check with one of three frozen values: `Allow` (pass it on as it is),
`Redact` (pass on the replacement: ``text`` for the input and the output, ``arguments`` for a
tool call) or `Block` (stop, with a reason). A decision that is not ``Allow`` becomes a
`GuardrailEvent` (which guardrail, at which stage, what kind, the reason), the record the
runtime puts in the reasoning trace and the turn's metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode

__all__ = [
    "Allow",
    "Block",
    "GuardrailAction",
    "GuardrailDecision",
    "GuardrailEvent",
    "GuardrailStage",
    "Redact",
]


class GuardrailStage(StrEnum):
    """Where a guardrail looks: the user's input, the streamed output, a tool call."""

    INPUT = "input"
    OUTPUT = "output"
    TOOL_CALL = "tool_call"


class GuardrailAction(StrEnum):
    """The kind of a decision, as an event reports it."""

    ALLOW = "allow"
    REDACT = "redact"
    BLOCK = "block"


@dataclass(frozen=True, slots=True)
class Allow:
    """Pass the input, the output batch or the tool call on unchanged."""


@dataclass(frozen=True, slots=True)
class Redact:
    """Pass on a replacement: ``text`` (input, output batch) or ``arguments`` (tool call).

    Exactly one of the two is set. ``reason`` says what was replaced (``"redacted EMAIL (1)"``);
    it never repeats the replaced value, since it lands in traces and metadata.
    """

    reason: str
    text: str | None = None
    arguments: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.arguments is None):
            raise GMIError(
                "Redact: set exactly one of text and arguments",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": "text" if self.text is None else "arguments"},
            )


@dataclass(frozen=True, slots=True)
class Block:
    """Stop: the input is refused, the tool call is not run, the output stream ends.

    For an output batch, ``text`` is what of the batch may still be released before the stream
    ends (a length limit releases the part up to the limit); ``None`` releases none of it.
    """

    reason: str
    text: str | None = None


GuardrailDecision = Allow | Redact | Block
"""The answer of every guardrail check."""


@dataclass(frozen=True, slots=True)
class GuardrailEvent:
    """One decision that was not ``Allow``: who made it, where, what kind, why."""

    guardrail_id: str
    stage: GuardrailStage
    action: GuardrailAction
    reason: str

    def to_dict(self) -> dict[str, str]:
        """The event as the reasoning trace and the turn's metadata carry it."""
        return {
            "guardrail_id": self.guardrail_id,
            "stage": self.stage.value,
            "action": self.action.value,
            "reason": self.reason,
        }


def decision_event(
    guardrail_id: str, stage: GuardrailStage, decision: object
) -> GuardrailEvent | None:
    """The event a decision makes (``None`` for ``Allow``), after checking what it carries.

    A value that is not a decision, or a ``Redact`` without the replacement its stage needs
    (``text`` for the input and the output, ``arguments`` for a tool call), is a fault of the
    guardrail: `GMIError` (``VALIDATION_ERROR``) naming it.
    """
    if isinstance(decision, Allow):
        return None
    if isinstance(decision, Block):
        return GuardrailEvent(guardrail_id, stage, GuardrailAction.BLOCK, decision.reason)
    if isinstance(decision, Redact):
        wants_text = stage is not GuardrailStage.TOOL_CALL
        if (decision.text is not None) == wants_text:
            return GuardrailEvent(guardrail_id, stage, GuardrailAction.REDACT, decision.reason)
        needed = "text" if wants_text else "arguments"
        raise GMIError(
            f"guardrail {guardrail_id!r} redacted the {stage.value} without {needed}",
            GMIErrorCode.VALIDATION_ERROR,
            {"guardrail": guardrail_id, "stage": stage.value},
        )
    raise GMIError(
        f"guardrail {guardrail_id!r} answered the {stage.value} check with "
        f"{type(decision).__name__}, not Allow, Redact or Block",
        GMIErrorCode.VALIDATION_ERROR,
        {"guardrail": guardrail_id, "stage": stage.value},
    )

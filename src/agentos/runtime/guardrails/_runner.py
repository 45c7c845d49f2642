"""`GuardrailRunner`: a list of guardrails applied in order (issue 13 item 6).

Each check goes through the guardrails in the order given. A redaction replaces what the next
guardrail sees, so redactions compose in order; the first block stops the check and wins (the
guardrails after it are not asked). Every decision that is not ``Allow`` is reported as a
`GuardrailEvent`, in order, for the runtime's reasoning trace and metadata.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agentos.api.call_checks import invalid

from ._decision import Block, GuardrailEvent, GuardrailStage, Redact, decision_event
from ._protocol import Guardrail
from ._stream import GuardedOutput

__all__ = ["GuardrailRunner", "InputCheck", "ToolCallCheck"]


@dataclass(frozen=True, slots=True)
class InputCheck:
    """The input after the guardrails: its (possibly redacted) text and what was decided.

    When ``blocked`` is set the turn must not run; ``text`` is then the input as the blocking
    guardrail saw it.
    """

    text: str
    events: tuple[GuardrailEvent, ...] = ()
    blocked: GuardrailEvent | None = None


@dataclass(frozen=True, slots=True)
class ToolCallCheck:
    """A tool call after the guardrails: its (possibly redacted) arguments and the decisions.

    When ``blocked`` is set the tool must not run.
    """

    name: str
    arguments: dict[str, Any]
    events: tuple[GuardrailEvent, ...] = ()
    blocked: GuardrailEvent | None = None


class GuardrailRunner:
    """Applies guardrails in order to the input, the output stream and each tool call."""

    def __init__(self, guardrails: Iterable[Guardrail] = ()) -> None:
        """Keep ``guardrails`` in order; each must be a `Guardrail` with a unique non-blank id.

        Raises `GMIError` (``INVALID_ARGUMENT``, option ``guardrails``) otherwise.
        """
        self._guardrails = tuple(guardrails)
        seen: set[str] = set()
        for index, guardrail in enumerate(self._guardrails):
            if not isinstance(guardrail, Guardrail):
                invalid("guardrails", f"item {index} ({type(guardrail).__name__}) is no Guardrail")
            gid = guardrail.id
            if not isinstance(gid, str) or not gid.strip():
                invalid("guardrails", f"item {index} has a blank or non-string id {gid!r}")
            if gid in seen:
                invalid("guardrails", f"the id {gid!r} is used twice")
            seen.add(gid)

    @property
    def guardrail_ids(self) -> tuple[str, ...]:
        """The ids of the guardrails, in the order they are applied."""
        return tuple(guardrail.id for guardrail in self._guardrails)

    async def check_input(self, text: str) -> InputCheck:
        """Run every guardrail's ``check_input`` on the user's input, before the turn."""
        events: list[GuardrailEvent] = []
        for guardrail in self._guardrails:
            decision = await guardrail.check_input(text)
            event = decision_event(guardrail.id, GuardrailStage.INPUT, decision)
            if event is not None:
                events.append(event)
            if isinstance(decision, Block):
                return InputCheck(text, tuple(events), event)
            if isinstance(decision, Redact) and decision.text is not None:
                text = decision.text
        return InputCheck(text, tuple(events))

    async def check_tool_call(self, name: str, arguments: Mapping[str, Any]) -> ToolCallCheck:
        """Run every guardrail's ``check_tool_call`` on a tool call, before it runs."""
        current = dict(arguments)
        events: list[GuardrailEvent] = []
        for guardrail in self._guardrails:
            decision = await guardrail.check_tool_call(name, current)
            event = decision_event(guardrail.id, GuardrailStage.TOOL_CALL, decision)
            if event is not None:
                events.append(event)
            if isinstance(decision, Block):
                return ToolCallCheck(name, current, tuple(events), event)
            if isinstance(decision, Redact) and decision.arguments is not None:
                current = dict(decision.arguments)
        return ToolCallCheck(name, current, tuple(events))

    def output_stream(self) -> GuardedOutput:
        """A new guarded output stream for one turn (push deltas, then ``finish()``)."""
        return GuardedOutput(self._guardrails)

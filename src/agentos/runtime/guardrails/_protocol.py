"""The `Guardrail` protocol: three checks and an output look-ahead (issue 13 item 6).

A guardrail sees (a) the user's input before the turn, (b) each batch of the streamed output
and (c) each tool call before it runs, and answers each with a `GuardrailDecision`. Checks are
coroutines, so a guardrail may call a moderation service; the packs shipped here do not.

Output is checked in batches (see `agentos.runtime.guardrails` for the whole batching rule).
``output_tail(pending)`` tells the runner how many trailing characters of the output not yet
released must stay held back because they could be the start of something the guardrail acts on
(the first digits of a card number, the first word of a blocked phrase). A guardrail that needs
no look-ahead answers 0. The runner releases the rest as the next `OutputBatch`, and releases
everything with ``final=True`` when the stream ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ._decision import GuardrailDecision

__all__ = ["Guardrail", "OutputBatch"]


@dataclass(frozen=True, slots=True)
class OutputBatch:
    """One batch of streamed output as a guardrail sees it.

    ``text`` is the batch; ``offset`` the number of characters this guardrail released before
    it in the same stream (so a length limit needs no state of its own); ``final`` is true for
    the last batch of the stream, which may be empty.
    """

    text: str
    offset: int
    final: bool


@runtime_checkable
class Guardrail(Protocol):
    """Sees input, output batches and tool calls; allows, redacts or blocks each."""

    @property
    def id(self) -> str:
        """A non-blank id, unique among the guardrails a runner applies."""
        ...

    async def check_input(self, text: str) -> GuardrailDecision:
        """Decide on the user's input before the turn starts."""
        ...

    async def check_output(self, batch: OutputBatch) -> GuardrailDecision:
        """Decide on one batch of the streamed output."""
        ...

    async def check_tool_call(self, name: str, arguments: Mapping[str, Any]) -> GuardrailDecision:
        """Decide on a tool call (its name and arguments) before it runs."""
        ...

    def output_tail(self, pending: str) -> int:
        """How many trailing characters of ``pending`` (unreleased output) to hold back."""
        ...

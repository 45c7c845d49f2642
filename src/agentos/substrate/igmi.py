"""The `IGMI` protocol: what the full runtime needs of a GMI.

Spec: What a GMI holds (GMI.ts ``implements IGMI``); reference §1.2.

The built-in `GMI` satisfies `IGMI`, `ToolResultsHandler` and `SingleToolResultHandler`. A host
may hand `GMIManager` its own GMIs (``GMIManagerConfig.igmi_factory``): such a GMI needs only
the members of `IGMI`; the tool-continuation methods are optional, so the runtime checks for
them with `isinstance(gmi, ToolResultsHandler)` / `isinstance(gmi, SingleToolResultHandler)`
(an IGMI may implement only ``handle_tool_result()``, as the spec's IGMI pause paragraph allows).

A turn's stream (`IGMITurnStream`) is iterated once for its `GMIOutputChunk`s; its ``output()``
gives the turn's `GMIOutput`, as `GMITurnStream` does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from agentos.core.messages import ToolResult
    from agentos.persona.definition import PersonaDefinition
    from agentos.substrate.chunks import GMIOutput, GMIOutputChunk
    from agentos.substrate.tool_continuation import ExternalToolOutcome
    from agentos.substrate.turn_input import GMITurnInput

__all__ = ["IGMI", "IGMITurnStream", "SingleToolResultHandler", "ToolResultsHandler"]


@runtime_checkable
class IGMITurnStream(Protocol):
    """One turn's chunks (iterate once) and its output (``await output()``)."""

    def __aiter__(self) -> AsyncIterator[GMIOutputChunk]:
        """The turn's chunks, in order; the last is FINAL_RESPONSE_MARKER."""
        ...

    async def output(self) -> GMIOutput:
        """The turn's output; reads (and drops) any chunks not yet read."""
        ...


@runtime_checkable
class IGMI(Protocol):
    """A GMI as the runtime uses it: an id, a persona, turns, and a shutdown.

    ``shutdown()`` stops a running turn and releases the GMI; overlapping calls share one
    shutdown (spec: Getting a GMI). The manager bounds how long it waits for it.
    """

    @property
    def gmi_id(self) -> str:
        """The GMI's id (``gmi-instance-<uuid hex>`` when `GMIManager` made it)."""
        ...

    @property
    def persona(self) -> PersonaDefinition:
        """The active persona."""
        ...

    def process_turn_stream(self, turn_input: GMITurnInput) -> IGMITurnStream:
        """Start a turn; iterate the returned stream for its chunks."""
        ...

    async def shutdown(self) -> None:
        """Stop a running turn and release the GMI (idempotent)."""
        ...


@runtime_checkable
class ToolResultsHandler(Protocol):
    """An IGMI that continues a paused tool round with several results at once."""

    async def handle_tool_results(
        self, results: Sequence[ToolResult], *, user_id: str = ...
    ) -> IGMITurnStream:
        """Continue the paused round with the host's ``results``; a stream of the next step."""
        ...


@runtime_checkable
class SingleToolResultHandler(Protocol):
    """An IGMI that continues a paused tool round one result at a time."""

    async def handle_tool_result(
        self,
        tool_call_id: str,
        tool_name: str,
        outcome: ExternalToolOutcome | Mapping[str, Any],
        *,
        user_id: str = ...,
    ) -> IGMITurnStream:
        """Continue the paused round with one call's outcome (``{"type": "success", ...}``)."""
        ...

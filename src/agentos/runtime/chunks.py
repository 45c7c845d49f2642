"""The chunks `AgentOS.process_request()` yields (spec: Output stream; reference §1.28).

Every chunk is a frozen dataclass with the common fields of the reference's base chunk
(``type, stream_id, gmi_instance_id, persona_id, is_final, timestamp, metadata``) and the fields
of its type. ``type`` is fixed per class and typed as a literal, so
``if chunk.type is AgentOSResponseChunkType.TEXT_DELTA:`` narrows an `AgentOSResponse` to a
`TextDeltaChunk` for a type checker as it does at run time. ``timestamp`` is Unix seconds read
from the runtime's clock. `dump_response()` turns any chunk into a JSON-able dict with
snake_case keys (DESIGN.md §2), for a server to send.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ToolCall
from agentos.core.usage import ModelUsage
from agentos.substrate.trace import ReasoningTrace

__all__ = [
    "AgentOSResponse",
    "AgentOSResponseChunkType",
    "ErrorChunk",
    "ExecutionMode",
    "FinalResponseChunk",
    "MetadataUpdateChunk",
    "SystemProgressChunk",
    "TextDeltaChunk",
    "ToolCallRequestChunk",
    "ToolResultEmissionChunk",
    "UiCommandChunk",
    "dump_response",
]

ExecutionMode = Literal["internal", "external"]
"""Who runs a requested call: the GMI itself (``internal``) or the host (``external``)."""


class AgentOSResponseChunkType(StrEnum):
    """The runtime stream's chunk types (values are the TypeScript strings)."""

    TEXT_DELTA = "text_delta"
    SYSTEM_PROGRESS = "system_progress"
    TOOL_CALL_REQUEST = "tool_call_request"
    TOOL_RESULT_EMISSION = "tool_result_emission"
    UI_COMMAND = "ui_command"
    FINAL_RESPONSE = "final_response"
    ERROR = "error"
    METADATA_UPDATE = "metadata_update"


_T = AgentOSResponseChunkType


@dataclass(frozen=True, kw_only=True, slots=True)
class _ChunkBase:
    """The fields every runtime chunk carries (the reference's base chunk).

    ``type`` is declared here so it comes first; each chunk class fixes it to its own type.
    """

    type: AgentOSResponseChunkType
    stream_id: str
    gmi_instance_id: str
    persona_id: str
    is_final: bool = False
    timestamp: float
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, slots=True)
class TextDeltaChunk(_ChunkBase):
    """A piece of the reply's text, as the model streamed it."""

    type: Literal[_T.TEXT_DELTA] = field(default=_T.TEXT_DELTA, init=False)
    text_delta: str


@dataclass(frozen=True, kw_only=True, slots=True)
class SystemProgressChunk(_ChunkBase):
    """Progress the runtime or an IGMI reports (an IGMI's SYSTEM_MESSAGE becomes one).

    ``progress`` is a percentage from 0 to 100 when known.
    """

    type: Literal[_T.SYSTEM_PROGRESS] = field(default=_T.SYSTEM_PROGRESS, init=False)
    message: str
    progress: float | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallRequestChunk(_ChunkBase):
    """Calls the agent requested.

    ``execution_mode`` says who runs them; the host acts only on an `actionable` request (spec:
    the IGMI pause), and answers it through ``handle_tool_result()``/``handle_tool_results()``.
    """

    type: Literal[_T.TOOL_CALL_REQUEST] = field(default=_T.TOOL_CALL_REQUEST, init=False)
    tool_calls: tuple[ToolCall, ...]
    rationale: str
    execution_mode: ExecutionMode = "internal"
    requires_external_tool_result: bool = False

    @property
    def actionable(self) -> bool:
        """True when the host must run the calls: mode ``external`` and a result required."""
        return self.execution_mode == "external" and self.requires_external_tool_result is True


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolResultEmissionChunk(_ChunkBase):
    """A result the host passed for one call of a pause, as the runtime received it."""

    type: Literal[_T.TOOL_RESULT_EMISSION] = field(default=_T.TOOL_RESULT_EMISSION, init=False)
    tool_call_id: str
    tool_name: str
    output: Any = None
    is_success: bool = True
    error_message: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class UiCommandChunk(_ChunkBase):
    """A UI command an IGMI emitted, passed on as it is."""

    type: Literal[_T.UI_COMMAND] = field(default=_T.UI_COMMAND, init=False)
    command: Any


@dataclass(frozen=True, kw_only=True, slots=True)
class ErrorChunk(_ChunkBase):
    """An error the turn reported: a `GMIErrorCode` (or a host's own code), message, details."""

    type: Literal[_T.ERROR] = field(default=_T.ERROR, init=False)
    code: GMIErrorCode | str
    message: str
    details: Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class MetadataUpdateChunk(_ChunkBase):
    """Data about the turn (a turn's RAG sources arrive as ``{"rag_sources": [...]}``)."""

    type: Literal[_T.METADATA_UPDATE] = field(default=_T.METADATA_UPDATE, init=False)
    updates: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True, slots=True)
class FinalResponseChunk(_ChunkBase):
    """The end of a turn or a continuation, built from the `GMIOutput` it returned.

    ``final_tool_calls`` are the output's calls (for the built-in GMI, every call of its tool
    rounds, refused ones included); ``usage`` is the turn's total; ``active_persona_details``
    holds the persona's ``id`` and ``name``; ``is_final`` is the output's.
    """

    type: Literal[_T.FINAL_RESPONSE] = field(default=_T.FINAL_RESPONSE, init=False)
    final_response_text: str | None = None
    final_tool_calls: tuple[ToolCall, ...] = ()
    usage: ModelUsage = field(default_factory=ModelUsage.zero)
    reasoning_trace: Any = None
    error: Mapping[str, Any] | None = None
    active_persona_details: Mapping[str, Any] | None = None
    rag_sources: tuple[Any, ...] = ()


AgentOSResponse = (
    TextDeltaChunk
    | SystemProgressChunk
    | ToolCallRequestChunk
    | ToolResultEmissionChunk
    | UiCommandChunk
    | ErrorChunk
    | MetadataUpdateChunk
    | FinalResponseChunk
)
"""Any chunk of the runtime stream."""

_CHUNK_CLASSES = (
    TextDeltaChunk,
    SystemProgressChunk,
    ToolCallRequestChunk,
    ToolResultEmissionChunk,
    UiCommandChunk,
    ErrorChunk,
    MetadataUpdateChunk,
    FinalResponseChunk,
)


def dump_response(chunk: AgentOSResponse) -> dict[str, Any]:
    """The chunk as a JSON-able dict: ``type`` first, then its fields, snake_case keys.

    Enums become their values, tuples lists, dataclasses (a `ToolCall`, a `ModelUsage`, a
    retrieved chunk) dicts of their public fields, a `ReasoningTrace` its ids and entries, a
    `GMIError` its ``to_dict()``, a pydantic model its JSON dump, a `datetime` ISO text. A
    `ToolCall` leaves out ``unparsed_arguments`` when unset, as stored histories do. A value of
    any other kind raises `TypeError` naming where it is, rather than sending a ``repr``.
    """
    if not isinstance(chunk, _CHUNK_CLASSES):
        raise TypeError(f"dump_response() takes a runtime chunk, not {type(chunk).__name__}")
    dumped: dict[str, Any] = {"type": chunk.type.value}
    for item in dataclasses.fields(chunk):
        if item.name != "type":
            dumped[item.name] = _jsonable(getattr(chunk, item.name), item.name)
    return dumped


def _jsonable(value: Any, where: str) -> Any:
    """``value`` as JSON-able data (``where`` names it in an error)."""
    if isinstance(value, enum.Enum):  # before str: a StrEnum is a str
        return _jsonable(value.value, where)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(key): _jsonable(item, f"{where}.{key}") for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(item, f"{where}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, GMIError):
        return _jsonable(value.to_dict(), where)
    if isinstance(value, ReasoningTrace):
        return {
            "gmi_id": value.gmi_id,
            "persona_id": value.persona_id,
            "entries": _jsonable(value.entries(), f"{where}.entries"),
        }
    if isinstance(value, ToolCall):
        call: dict[str, Any] = {
            "id": value.id,
            "name": value.name,
            "arguments": _jsonable(value.arguments, f"{where}.arguments"),
        }
        if value.unparsed_arguments is not None:
            call["unparsed_arguments"] = value.unparsed_arguments
        return call
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            item.name: _jsonable(getattr(value, item.name), f"{where}.{item.name}")
            for item in dataclasses.fields(value)
            if not item.name.startswith("_")
        }
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):  # a pydantic model
        return model_dump(mode="json")
    raise TypeError(f"dump_response(): {where} holds a {type(value).__name__}, not JSON data")

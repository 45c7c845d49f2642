"""`GMIChunkTransformer`: a GMI's chunks as the runtime stream's chunks (spec: Output stream).

Spec, the GMIChunkTransformer paragraph: "TEXT_DELTA and TOOL_CALL_REQUEST keep their type,
except that a TOOL_CALL_REQUEST that names no call is not forwarded, RAG_SOURCES_AVAILABLE
becomes a METADATA_UPDATE carrying ragSources, and ERROR becomes an ERROR chunk; from an IGMI
that emits them, SYSTEM_MESSAGE becomes SYSTEM_PROGRESS and UI_COMMAND stays UI_COMMAND. The
orchestrator builds the turn's FINAL_RESPONSE from the GMIOutput the turn returns, and
FINAL_RESPONSE_MARKER is not forwarded. Neither are USAGE_UPDATE, STEP_FINISHED and
TOOL_RESULT." REASONING_STATE_UPDATE and LATENCY_REPORT have no runtime chunk either.

The IGMI pause paragraph's streaming part: "A request for calls the host runs that an IGMI
streams (a TOOL_CALL_REQUEST chunk that names at least one call, whose metadata.executionMode is
'external' and whose metadata.requiresExternalToolResult is not false) waits for the output";
`transform()` holds it and `external_request_for()` settles it once the output is known. "A
streamed request for calls the IGMI runs itself streams as it comes."

A GMI chunk's metadata keys are snake_case (``execution_mode``, ``requires_external_tool_result``,
``rationale``), as the built-in GMI writes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from agentos.core.clock import Clock, system_clock
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ToolCall
from agentos.persona.definition import PersonaDefinition
from agentos.substrate.chunks import GMIOutput, GMIOutputChunk, GMIOutputChunkType

from .chunks import (
    AgentOSResponse,
    ErrorChunk,
    ExecutionMode,
    FinalResponseChunk,
    MetadataUpdateChunk,
    SystemProgressChunk,
    TextDeltaChunk,
    ToolCallRequestChunk,
    UiCommandChunk,
)

__all__ = ["DEFAULT_TOOL_RATIONALE", "GMIChunkTransformer"]

DEFAULT_TOOL_RATIONALE = "Agent requires tool execution."
"""A TOOL_CALL_REQUEST's rationale when the GMI gave none (the reference's default)."""

_DROPPED = frozenset(
    {
        GMIOutputChunkType.FINAL_RESPONSE_MARKER,
        GMIOutputChunkType.USAGE_UPDATE,
        GMIOutputChunkType.STEP_FINISHED,
        GMIOutputChunkType.TOOL_RESULT,
        GMIOutputChunkType.REASONING_STATE_UPDATE,
        GMIOutputChunkType.LATENCY_REPORT,
    }
)
_ERROR_CODES = {code.value: code for code in GMIErrorCode}
_CLOCK_MEMBERS = ("now", "timestamp", "monotonic", "sleep")  # the `Clock` protocol's methods
_CLOCK_CLASSES: set[type] = set()
"""Classes that define every `Clock` member themselves, so each of their instances is one."""


def _is_clock(value: object) -> bool:
    """``isinstance(value, Clock)``, remembered per class.

    A runtime-checkable protocol's isinstance() walks the protocol's members on every call
    (5 us of the 6 us a transformer took to make, one per turn); a class whose own attributes
    hold every member passes for all its instances, so it is checked once. An object that has
    the members only on itself (not its class) is checked every time, as before.
    """
    kind = type(value)
    if kind in _CLOCK_CLASSES:
        return True
    if not isinstance(value, Clock):
        return False
    if all(callable(getattr(kind, member, None)) for member in _CLOCK_MEMBERS):
        _CLOCK_CLASSES.add(kind)
    return True


def _invalid(option: str, why: str) -> NoReturn:
    raise GMIError(f"{option}: {why}", GMIErrorCode.INVALID_ARGUMENT, {"option": option})


def _name(option: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        _invalid(option, f"must be a non-empty string, got {value!r}")
    return value


class GMIChunkTransformer:
    """Turns one stream's GMI chunks into `AgentOSResponse` chunks, stamped with its ids.

    One transformer serves one turn or one continuation (one ``stream_id``). Timestamps are
    ``clock.timestamp()`` when a runtime chunk is made. A TOOL_CALL_REQUEST's metadata is the
    GMI chunk's metadata plus the runtime's ``session_id`` (and ``conversation_id`` /
    ``organization_id`` when given); the other chunks carry empty metadata.
    """

    def __init__(
        self,
        *,
        stream_id: str,
        gmi_instance_id: str,
        persona_id: str,
        session_id: str,
        clock: Clock = system_clock,
        conversation_id: str | None = None,
        organization_id: str | None = None,
    ) -> None:
        self._stream_id = _name("stream_id", stream_id)
        self._gmi_instance_id = _name("gmi_instance_id", gmi_instance_id)
        self._persona_id = _name("persona_id", persona_id)
        self._session_id = _name("session_id", session_id)
        if not _is_clock(clock):
            _invalid("clock", f"must be a Clock, got {type(clock).__name__}")
        self._clock = clock
        self._request_metadata: dict[str, Any] = {"session_id": self._session_id}
        if conversation_id is not None:
            self._request_metadata["conversation_id"] = _name("conversation_id", conversation_id)
        if organization_id is not None:
            self._request_metadata["organization_id"] = _name("organization_id", organization_id)
        self._held: list[ToolCallRequestChunk] = []

    @property
    def held_external_requests(self) -> list[ToolCallRequestChunk]:
        """The streamed requests for host-run calls waiting for the output (a copy)."""
        return list(self._held)

    def transform(self, chunk: GMIOutputChunk) -> list[AgentOSResponse]:
        """The runtime chunks for one GMI chunk: one, or none when it is dropped or held."""
        if not isinstance(chunk, GMIOutputChunk):
            _invalid("chunk", f"must be a GMIOutputChunk, got {type(chunk).__name__}")
        kind = chunk.type
        if kind in _DROPPED:
            return []
        if kind is GMIOutputChunkType.TEXT_DELTA:
            return [TextDeltaChunk(**self._common(chunk.is_final), text_delta=str(chunk.content))]
        if kind is GMIOutputChunkType.TOOL_CALL_REQUEST:
            return self._tool_call_request(chunk)
        if kind is GMIOutputChunkType.RAG_SOURCES_AVAILABLE:
            sources = list(chunk.content) if chunk.content is not None else []
            return [self.metadata_update({"rag_sources": sources}, is_final=chunk.is_final)]
        if kind is GMIOutputChunkType.ERROR:
            return [self._error(chunk)]
        if kind is GMIOutputChunkType.SYSTEM_MESSAGE:
            return [self._system_progress(chunk)]
        if kind is GMIOutputChunkType.UI_COMMAND:
            return [UiCommandChunk(**self._common(chunk.is_final), command=chunk.content)]
        raise GMIError(  # a chunk type added to the substrate without a rule here
            f"no transformer rule for GMI chunk type {kind!r}",
            GMIErrorCode.NOT_SUPPORTED,
            {"option": "chunk.type"},
        )

    def external_request_for(
        self, output: GMIOutput, saved_calls: Sequence[ToolCall]
    ) -> ToolCallRequestChunk | None:
        """The one actionable request the host reads for ``output``, or None (spec: IGMI pause).

        "When the output stops the turn, the host reads one request, after the pause is saved,
        naming the calls the turn saved; it keeps the rationale and metadata of the IGMI's
        request when the IGMI streamed one such request naming exactly those calls. When the
        output does not stop the turn, none of them reaches the host." The output stops the
        turn when ``is_final`` is false and it has tool calls; the caller saves the pause first
        and passes the calls it saved. Either way the held requests are settled (cleared).
        """
        if not isinstance(output, GMIOutput):
            _invalid("output", f"must be a GMIOutput, got {type(output).__name__}")
        held, self._held = self._held, []
        if output.is_final or not output.tool_calls:
            return None
        calls = tuple(saved_calls)
        if not calls or not all(isinstance(call, ToolCall) for call in calls):
            _invalid("saved_calls", "must name at least one ToolCall (the calls the pause saved)")
        wanted = sorted(call.id for call in calls)
        match = next((r for r in held if sorted(c.id for c in r.tool_calls) == wanted), None)
        if match is not None:
            rationale, metadata = match.rationale, dict(match.metadata)
        else:
            rationale = DEFAULT_TOOL_RATIONALE
            metadata = {
                **self._request_metadata,
                "execution_mode": "external",
                "requires_external_tool_result": True,
            }
        return ToolCallRequestChunk(
            **self._common(False, metadata),
            tool_calls=calls,
            rationale=rationale,
            execution_mode="external",
            requires_external_tool_result=True,
        )

    def final_response(
        self, output: GMIOutput, *, persona: PersonaDefinition | None = None
    ) -> FinalResponseChunk:
        """The FINAL_RESPONSE built from the output a turn or a continuation returned.

        Spec: "The orchestrator builds the turn's FINAL_RESPONSE from the GMIOutput the turn
        returns"; "the turn's usage reaches the runtime stream on FINAL_RESPONSE.usage"; the
        output's tool calls are reported in ``final_tool_calls``. ``active_persona_details``
        is the persona's ``id`` and ``name`` (None without a persona). Requests still held are
        dropped: an output that gets a FINAL_RESPONSE did not stop the turn for the host.
        """
        if not isinstance(output, GMIOutput):
            _invalid("output", f"must be a GMIOutput, got {type(output).__name__}")
        if persona is not None and not isinstance(persona, PersonaDefinition):
            _invalid("persona", f"must be a PersonaDefinition, got {type(persona).__name__}")
        self._held = []
        details = None if persona is None else {"id": persona.id, "name": persona.name}
        return FinalResponseChunk(
            **self._common(output.is_final),
            final_response_text=output.response_text,
            final_tool_calls=tuple(output.tool_calls),
            usage=output.usage,
            reasoning_trace=output.reasoning_trace,
            error=dict(output.error) if output.error is not None else None,
            active_persona_details=details,
            rag_sources=tuple(output.rag_sources),
        )

    def metadata_update(
        self, updates: Mapping[str, Any], *, is_final: bool = False
    ) -> MetadataUpdateChunk:
        """A METADATA_UPDATE stamped with this stream's ids (a continuation's RAG sources)."""
        if not isinstance(updates, Mapping):
            _invalid("updates", f"must be a mapping, got {type(updates).__name__}")
        return MetadataUpdateChunk(**self._common(is_final), updates=dict(updates))

    def system_progress(self, message: str, progress: float | None = None) -> SystemProgressChunk:
        """A SYSTEM_PROGRESS stamped with this stream's ids (the runtime's own progress)."""
        return SystemProgressChunk(
            **self._common(False), message=_name("message", message), progress=progress
        )

    def text_delta(self, text: str) -> TextDeltaChunk:
        """A TEXT_DELTA stamped with this stream's ids (text the runtime's guardrails let go)."""
        return TextDeltaChunk(**self._common(False), text_delta=text)

    def error(
        self, code: GMIErrorCode, message: str, details: Mapping[str, Any] | None = None
    ) -> ErrorChunk:
        """A final ERROR stamped with this stream's ids (a turn the runtime itself ended)."""
        return ErrorChunk(
            **self._common(True), code=code, message=message, details=dict(details or {})
        )

    def _common(self, is_final: bool, metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return {
            "stream_id": self._stream_id,
            "gmi_instance_id": self._gmi_instance_id,
            "persona_id": self._persona_id,
            "is_final": is_final,
            "timestamp": self._clock.timestamp(),
            "metadata": dict(metadata) if metadata is not None else {},
        }

    def _tool_call_request(self, chunk: GMIOutputChunk) -> list[AgentOSResponse]:
        calls = _calls(chunk.content)
        if not calls:
            return []  # "a TOOL_CALL_REQUEST that names no call is not forwarded"
        meta = chunk.metadata
        mode: ExecutionMode = "external" if meta.get("execution_mode") == "external" else "internal"
        required = meta.get("requires_external_tool_result")
        rationale = meta.get("rationale")
        request = ToolCallRequestChunk(
            **self._common(chunk.is_final, {**meta, **self._request_metadata}),
            tool_calls=calls,
            rationale=rationale
            if isinstance(rationale, str) and rationale
            else DEFAULT_TOOL_RATIONALE,
            execution_mode=mode,
            requires_external_tool_result=required
            if isinstance(required, bool)
            else mode == "external",
        )
        if mode == "external" and required is not False:
            self._held.append(request)  # waits for the output (spec: the IGMI pause)
            return []
        return [request]

    def _error(self, chunk: GMIOutputChunk) -> ErrorChunk:
        """The GMIError's code, message and details; else what ``error_details`` reports."""
        error = chunk.error
        details: dict[str, Any] | None
        if error is not None:
            code, message, details = error.code, error.message, dict(error.details)
        else:
            code, message, details = _reported_error(chunk)
        return ErrorChunk(
            **self._common(chunk.is_final), code=code, message=message, details=details
        )

    def _system_progress(self, chunk: GMIOutputChunk) -> SystemProgressChunk:
        content = chunk.content
        progress: float | None = None
        if isinstance(content, Mapping):
            message = str(content.get("message", ""))
            raw = content.get("progress", content.get("progress_percentage"))
            if isinstance(raw, int | float) and not isinstance(raw, bool):
                progress = float(raw)
        else:
            message = "" if content is None else str(content)
        return SystemProgressChunk(
            **self._common(chunk.is_final), message=message, progress=progress
        )


def _calls(content: Any) -> tuple[ToolCall, ...]:
    """A TOOL_CALL_REQUEST's calls: `ToolCall` objects, or ``{id, name, arguments}`` mappings."""
    if content is None:
        return ()
    if isinstance(content, ToolCall | Mapping | str | bytes) or not isinstance(content, Sequence):
        _invalid("chunk.content", "a TOOL_CALL_REQUEST's content must be a list of ToolCall")
    calls = []
    for index, item in enumerate(content):
        if isinstance(item, ToolCall):
            calls.append(item)
        elif (
            isinstance(item, Mapping)
            and isinstance(item.get("id"), str)
            and isinstance(item.get("name"), str)
        ):
            arguments = item.get("arguments") or {}
            calls.append(ToolCall(item["id"], item["name"], dict(arguments)))
        else:
            _invalid(
                f"chunk.content[{index}]", "must be a ToolCall or an {id, name, arguments} mapping"
            )
    return tuple(calls)


def _reported_error(chunk: GMIOutputChunk) -> tuple[GMIErrorCode | str, str, dict[str, Any] | None]:
    """An ERROR chunk without a `GMIError`: what its ``error_details`` (a ``to_dict()``) say."""
    reported = dict(chunk.error_details or {})
    raw_code = reported.pop("code", None)
    code: GMIErrorCode | str = GMIErrorCode.GMI_PROCESSING_ERROR
    if isinstance(raw_code, str) and raw_code:
        code = _ERROR_CODES.get(raw_code, raw_code)
    reported_message = reported.pop("message", None)
    if isinstance(chunk.content, str) and chunk.content:
        message = chunk.content
    elif isinstance(reported_message, str) and reported_message:
        message = reported_message
    else:
        message = "The GMI reported an error."
    inner = reported.get("details")
    details = dict(inner) if isinstance(inner, Mapping) else (reported or None)
    return code, message, details

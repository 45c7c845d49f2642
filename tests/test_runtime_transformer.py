"""GMIChunkTransformer and the runtime's chunks (spec: Output stream; the IGMI pause paragraph)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ToolCall
from agentos.core.usage import ModelUsage
from agentos.runtime.chunks import (
    AgentOSResponse,
    AgentOSResponseChunkType,
    ErrorChunk,
    FinalResponseChunk,
    MetadataUpdateChunk,
    SystemProgressChunk,
    TextDeltaChunk,
    ToolCallRequestChunk,
    ToolResultEmissionChunk,
    UiCommandChunk,
    dump_response,
)
from agentos.runtime.transformer import DEFAULT_TOOL_RATIONALE, GMIChunkTransformer
from agentos.substrate import (
    GMIOutput,
    GMIOutputChunk,
    GMIOutputChunkType,
    ReasoningEntryType,
    ReasoningTrace,
    RetrievedChunk,
    StepFinishedPayload,
    ToolResultPayload,
)
from agentos.testing import FakeClock, ScriptedModel, ScriptStep
from agentos.tools import ToolOrchestrator
from agentos.tools.tool import tool
from fakes.gmi_helpers import make_gmi, persona, run, turn

G = GMIOutputChunkType
R = AgentOSResponseChunkType
INTERNAL = {"execution_mode": "internal", "requires_external_tool_result": False}
EXTERNAL = {"execution_mode": "external", "requires_external_tool_result": True}
U1 = ModelUsage(prompt_tokens=10, completion_tokens=2)
U2 = ModelUsage(prompt_tokens=20, completion_tokens=3)
CALL_A = ToolCall("a", "search", {"q": "incidents"})
CALL_B = ToolCall("b", "fetch", {"id": 7})


def _transformer(clock: FakeClock | None = None) -> tuple[GMIChunkTransformer, float]:
    clock = clock or FakeClock()
    made = GMIChunkTransformer(
        stream_id="stream-1",
        gmi_instance_id="gmi-1",
        persona_id="p1",
        session_id="sess-1",
        clock=clock,
    )
    return made, clock.timestamp()


def _chunk(kind: GMIOutputChunkType, content: Any = None, **fields: Any) -> GMIOutputChunk:
    return GMIOutputChunk(kind, content, interaction_id="t1", timestamp=0.0, **fields)


def _common(now: float, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "stream_id": "stream-1",
        "gmi_instance_id": "gmi-1",
        "persona_id": "p1",
        "is_final": False,
        "timestamp": now,
        "metadata": {},
    }
    return {**base, **fields}


def _step(index: int, text: str, usage: ModelUsage) -> StepFinishedPayload:
    return StepFinishedPayload(index, text, "stop", "scripted", "scripted-model", 0, usage)


# -- the transformer paragraph, rule by rule ---------------------------------------------------


def test_text_delta_keeps_its_type() -> None:
    transformer, now = _transformer()
    assert transformer.transform(_chunk(G.TEXT_DELTA, "Hel")) == [
        TextDeltaChunk(**_common(now), text_delta="Hel")
    ]


def test_internal_tool_call_request_keeps_its_type_and_streams_as_it_comes() -> None:
    transformer, now = _transformer()
    out = transformer.transform(_chunk(G.TOOL_CALL_REQUEST, [CALL_A], metadata=dict(INTERNAL)))
    expected = ToolCallRequestChunk(
        **_common(now, metadata={**INTERNAL, "session_id": "sess-1"}),
        tool_calls=(CALL_A,),
        rationale=DEFAULT_TOOL_RATIONALE,
        execution_mode="internal",
        requires_external_tool_result=False,
    )
    assert out == [expected]
    assert DEFAULT_TOOL_RATIONALE == "Agent requires tool execution."
    assert not expected.actionable
    assert transformer.held_external_requests == []


def test_tool_call_request_without_metadata_is_internal() -> None:
    transformer, now = _transformer()
    out = transformer.transform(_chunk(G.TOOL_CALL_REQUEST, [CALL_A]))
    assert out == [
        ToolCallRequestChunk(
            **_common(now, metadata={"session_id": "sess-1"}),
            tool_calls=(CALL_A,),
            rationale="Agent requires tool execution.",
            execution_mode="internal",
            requires_external_tool_result=False,
        )
    ]


def test_tool_call_request_keeps_the_gmi_rationale_and_reads_mapping_calls() -> None:
    transformer, now = _transformer()
    metadata = {**INTERNAL, "rationale": "Need the incident list."}
    content = [{"id": "a", "name": "search", "arguments": {"q": "incidents"}}]
    out = transformer.transform(_chunk(G.TOOL_CALL_REQUEST, content, metadata=metadata))
    assert out == [
        ToolCallRequestChunk(
            **_common(now, metadata={**metadata, "session_id": "sess-1"}),
            tool_calls=(CALL_A,),
            rationale="Need the incident list.",
        )
    ]


@pytest.mark.parametrize("content", [[], None, ()])
def test_tool_call_request_naming_no_call_is_not_forwarded(content: Any) -> None:
    transformer, _ = _transformer()
    for metadata in (INTERNAL, EXTERNAL):
        chunk = _chunk(G.TOOL_CALL_REQUEST, content, metadata=dict(metadata))
        assert transformer.transform(chunk) == []
    assert transformer.held_external_requests == []


def test_rag_sources_become_a_metadata_update_carrying_rag_sources() -> None:
    transformer, now = _transformer()
    sources = [RetrievedChunk("d1#0", "Incident 12 closed.", "kb", 0.9)]
    out = transformer.transform(_chunk(G.RAG_SOURCES_AVAILABLE, sources, metadata={"count": 1}))
    assert out == [MetadataUpdateChunk(**_common(now), updates={"rag_sources": sources})]


def test_error_with_a_gmi_error_keeps_its_code_message_and_details() -> None:
    transformer, now = _transformer()
    error = GMIError("provider down", GMIErrorCode.LLM_PROVIDER_ERROR, {"provider": "openai"})
    chunk = _chunk(G.ERROR, error.message, error_details=error.to_dict(), error=error)
    assert transformer.transform(chunk) == [
        ErrorChunk(
            **_common(now),
            code=GMIErrorCode.LLM_PROVIDER_ERROR,
            message="provider down",
            details={"provider": "openai"},
        )
    ]


def test_error_without_a_code_is_a_gmi_processing_error() -> None:
    transformer, now = _transformer()
    assert transformer.transform(_chunk(G.ERROR, "it broke")) == [
        ErrorChunk(**_common(now), code=GMIErrorCode.GMI_PROCESSING_ERROR, message="it broke")
    ]


def test_error_details_without_the_error_object() -> None:
    transformer, now = _transformer()
    known = _chunk(
        G.ERROR, "", error_details={"code": "SYS_TIMEOUT", "message": "slow", "details": {"ms": 5}}
    )
    own = _chunk(G.ERROR, "bad", error_details={"code": "HOST_OWN", "hint": "retry"})
    assert transformer.transform(known) + transformer.transform(own) == [
        ErrorChunk(**_common(now), code=GMIErrorCode.TIMEOUT, message="slow", details={"ms": 5}),
        ErrorChunk(**_common(now), code="HOST_OWN", message="bad", details={"hint": "retry"}),
    ]


def test_igmi_system_message_becomes_system_progress() -> None:
    transformer, now = _transformer()
    text = _chunk(G.SYSTEM_MESSAGE, "Warming up")
    progress = _chunk(G.SYSTEM_MESSAGE, {"message": "Indexing", "progress": 40})
    assert transformer.transform(text) + transformer.transform(progress) == [
        SystemProgressChunk(**_common(now), message="Warming up"),
        SystemProgressChunk(**_common(now), message="Indexing", progress=40.0),
    ]


def test_igmi_ui_command_stays_ui_command() -> None:
    transformer, now = _transformer()
    command = {"command_type": "open_panel", "target": "incidents"}
    assert transformer.transform(_chunk(G.UI_COMMAND, command)) == [
        UiCommandChunk(**_common(now), command=command)
    ]


@pytest.mark.parametrize(
    ("kind", "content"),
    [
        (G.FINAL_RESPONSE_MARKER, GMIOutput(response_text="x")),
        (G.USAGE_UPDATE, U1),
        (G.STEP_FINISHED, _step(0, "x", U1)),
        (G.TOOL_RESULT, ToolResultPayload("a", "search", "found", False)),
        (G.REASONING_STATE_UPDATE, {"mood": "focused"}),
        (G.LATENCY_REPORT, {"ms": 12}),
    ],
)
def test_dropped_chunk_types_are_not_forwarded(kind: GMIOutputChunkType, content: Any) -> None:
    transformer, _ = _transformer()
    assert transformer.transform(_chunk(kind, content, is_final=True)) == []


def test_every_gmi_chunk_type_has_a_rule() -> None:
    transformer, _ = _transformer()
    for kind in GMIOutputChunkType:
        content = "x" if kind in (G.TEXT_DELTA, G.ERROR, G.SYSTEM_MESSAGE) else None
        assert isinstance(transformer.transform(_chunk(kind, content)), list)
    assert len(GMIOutputChunkType) == 12


def test_timestamps_come_from_the_clock() -> None:
    clock = FakeClock()
    transformer, first = _transformer(clock)
    clock.advance(2.5)
    (chunk,) = transformer.transform(_chunk(G.TEXT_DELTA, "x"))
    assert chunk.timestamp == first + 2.5


# -- the IGMI pause: streamed external requests wait for the output ------------------------------


def _external(calls: list[ToolCall], **extra: Any) -> GMIOutputChunk:
    return _chunk(G.TOOL_CALL_REQUEST, calls, metadata={**EXTERNAL, **extra})


def test_streamed_external_request_is_held_until_the_output() -> None:
    transformer, now = _transformer()
    assert transformer.transform(_external([CALL_A, CALL_B], rationale="Host owns CRM")) == []
    held = ToolCallRequestChunk(
        **_common(now, metadata={**EXTERNAL, "rationale": "Host owns CRM", "session_id": "sess-1"}),
        tool_calls=(CALL_A, CALL_B),
        rationale="Host owns CRM",
        execution_mode="external",
        requires_external_tool_result=True,
    )
    assert transformer.held_external_requests == [held]
    assert held.actionable


def test_stopping_output_keeps_rationale_and_metadata_of_a_request_naming_exactly_its_calls() -> (
    None
):
    clock = FakeClock()
    transformer, now = _transformer(clock)
    transformer.transform(_external([CALL_B, CALL_A], rationale="Host owns CRM", trace="x1"))
    clock.advance(1)
    output = GMIOutput(is_final=False, tool_calls=[CALL_A, CALL_B])
    request = transformer.external_request_for(output, [CALL_A, CALL_B])
    metadata = {**EXTERNAL, "rationale": "Host owns CRM", "trace": "x1", "session_id": "sess-1"}
    assert request == ToolCallRequestChunk(
        **_common(now + 1, metadata=metadata),
        tool_calls=(CALL_A, CALL_B),  # the calls the turn saved, in their order
        rationale="Host owns CRM",
        execution_mode="external",
        requires_external_tool_result=True,
    )
    assert request.actionable
    assert transformer.held_external_requests == []


def test_stopping_output_whose_calls_differ_gets_the_runtimes_own_request() -> None:
    transformer, now = _transformer()
    transformer.transform(_external([CALL_A], rationale="only a"))
    output = GMIOutput(is_final=False, tool_calls=[CALL_A, CALL_B])
    request = transformer.external_request_for(output, [CALL_A, CALL_B])
    assert request == ToolCallRequestChunk(
        **_common(now, metadata={"session_id": "sess-1", **EXTERNAL}),
        tool_calls=(CALL_A, CALL_B),
        rationale=DEFAULT_TOOL_RATIONALE,
        execution_mode="external",
        requires_external_tool_result=True,
    )


def test_stopping_output_without_any_streamed_request_is_still_announced() -> None:
    transformer, _ = _transformer()
    output = GMIOutput(is_final=False, tool_calls=[CALL_A])
    request = transformer.external_request_for(output, [CALL_A])
    assert request is not None
    assert (request.tool_calls, request.actionable) == ((CALL_A,), True)


@pytest.mark.parametrize(
    "output",
    [
        GMIOutput(is_final=True, response_text="done", tool_calls=[CALL_A]),
        GMIOutput(is_final=False, response_text="partial"),  # no calls: does not stop the turn
    ],
)
def test_output_that_does_not_stop_the_turn_lets_no_held_request_reach_the_host(
    output: GMIOutput,
) -> None:
    transformer, _ = _transformer()
    assert transformer.transform(_external([CALL_A])) == []
    assert transformer.external_request_for(output, [CALL_A]) is None
    assert transformer.held_external_requests == []
    final = transformer.final_response(output)
    assert final.type is R.FINAL_RESPONSE
    assert final.is_final is output.is_final


def test_external_request_without_the_result_flag_is_held() -> None:
    transformer, _ = _transformer()
    chunk = _chunk(G.TOOL_CALL_REQUEST, [CALL_A], metadata={"execution_mode": "external"})
    assert transformer.transform(chunk) == []
    (held,) = transformer.held_external_requests
    assert held.requires_external_tool_result is True


def test_external_request_not_requiring_a_result_streams_as_it_comes() -> None:
    transformer, now = _transformer()
    metadata = {"execution_mode": "external", "requires_external_tool_result": False}
    out = transformer.transform(_chunk(G.TOOL_CALL_REQUEST, [CALL_A], metadata=metadata))
    assert out == [
        ToolCallRequestChunk(
            **_common(now, metadata={**metadata, "session_id": "sess-1"}),
            tool_calls=(CALL_A,),
            rationale=DEFAULT_TOOL_RATIONALE,
            execution_mode="external",
            requires_external_tool_result=False,
        )
    ]
    assert isinstance(out[0], ToolCallRequestChunk)
    assert not out[0].actionable
    assert transformer.held_external_requests == []


def test_final_response_drops_held_requests() -> None:
    transformer, _ = _transformer()
    transformer.transform(_external([CALL_A]))
    transformer.final_response(GMIOutput(response_text="done"))
    assert transformer.held_external_requests == []


@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(["a", "b", "c"]), unique=True, max_size=3),
            st.sampled_from(["internal", "external", None]),
            st.sampled_from([True, False, None]),
        ),
        max_size=6,
    ),
    st.booleans(),
)
def test_no_request_for_host_run_calls_is_streamed_and_none_survives_a_final_output(
    requests: list[tuple[list[str], str | None, bool | None]], stops: bool
) -> None:
    transformer, _ = _transformer()
    streamed: list[AgentOSResponse] = []
    for ids, mode, required in requests:
        metadata: dict[str, Any] = {}
        if mode is not None:
            metadata["execution_mode"] = mode
        if required is not None:
            metadata["requires_external_tool_result"] = required
        calls = [ToolCall(i, "t", {}) for i in ids]
        streamed += transformer.transform(_chunk(G.TOOL_CALL_REQUEST, calls, metadata=metadata))
    assert all(isinstance(c, ToolCallRequestChunk) and c.tool_calls for c in streamed)
    assert not any(isinstance(c, ToolCallRequestChunk) and c.actionable for c in streamed)
    held = transformer.held_external_requests
    assert all(c.actionable for c in held)
    output = GMIOutput(is_final=not stops, tool_calls=[CALL_A] if stops else [])
    request = transformer.external_request_for(output, [CALL_A])
    assert (request is not None) is stops
    if request is not None:
        assert request.actionable
        assert request.tool_calls == (CALL_A,)
        kept = next((c for c in held if [t.id for t in c.tool_calls] == ["a"]), None)
        assert request.rationale == (kept.rationale if kept else DEFAULT_TOOL_RATIONALE)
    assert transformer.held_external_requests == []


# -- FINAL_RESPONSE ---------------------------------------------------------------------------


def test_final_response_fields_come_from_the_output() -> None:
    transformer, now = _transformer()
    trace = ReasoningTrace("gmi-1", "p1")
    trace.add(ReasoningEntryType.INTERACTION_END, "turn ended", timestamp=5.0)
    sources = [RetrievedChunk("d1#0", "Incident 12 closed.")]
    error = {"code": "GMI_PROCESSING_ERROR", "message": "late", "details": {}}
    output = GMIOutput(
        is_final=True,
        response_text="Two incidents are open.",
        tool_calls=[CALL_A],
        usage=U1 + U2,
        reasoning_trace=trace,
        error=error,
        rag_sources=sources,
    )
    final = transformer.final_response(output, persona=persona())
    assert final == FinalResponseChunk(
        **_common(now, is_final=True),
        final_response_text="Two incidents are open.",
        final_tool_calls=(CALL_A,),
        usage=U1 + U2,
        reasoning_trace=trace,
        error=error,
        active_persona_details={"id": "p1", "name": "P"},
        rag_sources=tuple(sources),
    )


def test_final_response_of_a_non_final_output_is_not_final() -> None:
    transformer, now = _transformer()
    final = transformer.final_response(GMIOutput(is_final=False, response_text="so far"))
    assert final == FinalResponseChunk(
        **_common(now), final_response_text="so far", usage=ModelUsage.zero()
    )
    assert final.active_persona_details is None


# -- whole turns --------------------------------------------------------------------------------


def _stream(transformer: GMIChunkTransformer, chunks: list[GMIOutputChunk]) -> list[Any]:
    return [response for chunk in chunks for response in transformer.transform(chunk)]


def test_text_turn_gives_text_deltas_then_final_response() -> None:
    transformer, now = _transformer()
    output = GMIOutput(response_text="Hello", usage=U1)
    chunks = [
        _chunk(G.TEXT_DELTA, "Hel"),
        _chunk(G.TEXT_DELTA, "lo"),
        _chunk(G.USAGE_UPDATE, U1, usage=U1),
        _chunk(G.STEP_FINISHED, _step(0, "Hello", U1)),
        _chunk(G.FINAL_RESPONSE_MARKER, output, is_final=True),
    ]
    streamed = [*_stream(transformer, chunks), transformer.final_response(output)]
    assert streamed == [
        TextDeltaChunk(**_common(now), text_delta="Hel"),
        TextDeltaChunk(**_common(now), text_delta="lo"),
        FinalResponseChunk(**_common(now, is_final=True), final_response_text="Hello", usage=U1),
    ]


def test_tool_turn_gives_internal_request_text_then_final_response_with_usage() -> None:
    transformer, now = _transformer()
    output = GMIOutput(response_text="Found it.", tool_calls=[CALL_A], usage=U1 + U2)
    chunks = [
        _chunk(G.TOOL_CALL_REQUEST, [CALL_A], metadata=dict(INTERNAL)),
        _chunk(G.USAGE_UPDATE, U1, usage=U1),
        _chunk(G.STEP_FINISHED, _step(0, "", U1)),
        _chunk(G.TOOL_RESULT, ToolResultPayload("a", "search", "2 open", False)),
        _chunk(G.TEXT_DELTA, "Found it."),
        _chunk(G.USAGE_UPDATE, U2, usage=U2),
        _chunk(G.STEP_FINISHED, _step(1, "Found it.", U2)),
        _chunk(G.FINAL_RESPONSE_MARKER, output, is_final=True),
    ]
    streamed = [*_stream(transformer, chunks), transformer.final_response(output)]
    assert streamed == [
        ToolCallRequestChunk(
            **_common(now, metadata={**INTERNAL, "session_id": "sess-1"}),
            tool_calls=(CALL_A,),
            rationale=DEFAULT_TOOL_RATIONALE,
        ),
        TextDeltaChunk(**_common(now), text_delta="Found it."),
        FinalResponseChunk(
            **_common(now, is_final=True),
            final_response_text="Found it.",
            final_tool_calls=(CALL_A,),
            usage=U1 + U2,
        ),
    ]


@tool
def lookup(q: str) -> str:
    """Look something up.

    Args:
        q: the query
    """
    return f"found {q}"


async def test_a_real_gmi_tool_turn_through_the_transformer() -> None:
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c1", "lookup", {"q": "a"})], usage=U1),
            ScriptStep(text=["do", "ne"], usage=U2),
        ]
    )
    gmi = await make_gmi(model, tool_orchestrator=ToolOrchestrator([lookup]))
    chunks, output = await run(gmi, turn())
    transformer, _ = _transformer()
    streamed = [*_stream(transformer, chunks), transformer.final_response(output)]
    kinds = [R.TOOL_CALL_REQUEST, R.TEXT_DELTA, R.TEXT_DELTA, R.FINAL_RESPONSE]
    assert [c.type for c in streamed] == kinds
    request, final = streamed[0], streamed[-1]
    assert isinstance(request, ToolCallRequestChunk)
    assert (request.execution_mode, request.actionable) == ("internal", False)
    assert isinstance(final, FinalResponseChunk)
    assert (final.final_response_text, final.usage) == ("done", U1 + U2)
    assert [c.id for c in final.final_tool_calls] == ["c1"]


def test_type_narrows_the_union() -> None:
    transformer, _ = _transformer()
    texts = []
    for chunk in transformer.transform(_chunk(G.TEXT_DELTA, "hi")):
        if chunk.type is AgentOSResponseChunkType.TEXT_DELTA:
            texts.append(chunk.text_delta)  # mypy checks this attribute on the narrowed type
    assert texts == ["hi"]


@given(st.lists(st.text(min_size=1), max_size=8))
def test_text_deltas_arrive_in_order_and_whole(deltas: list[str]) -> None:
    transformer, _ = _transformer()
    streamed = _stream(transformer, [_chunk(G.TEXT_DELTA, d) for d in deltas])
    assert [c.text_delta for c in streamed] == deltas


# -- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["stream_id", "gmi_instance_id", "persona_id", "session_id"])
def test_blank_ids_are_refused_naming_the_option(option: str) -> None:
    ids: dict[str, Any] = {"stream_id": "s", "gmi_instance_id": "g", "persona_id": "p"}
    ids["session_id"] = "x"
    with pytest.raises(GMIError) as caught:
        GMIChunkTransformer(**{**ids, option: " "})
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": option}


def test_bad_chunks_and_outputs_are_refused_naming_the_field() -> None:
    transformer, _ = _transformer()
    text: Any = "text"
    mapping: Any = {"response_text": "x"}
    persona_id: Any = "p1"
    cases: list[tuple[Any, str]] = [
        (lambda: transformer.transform(text), "chunk"),
        (lambda: transformer.transform(_chunk(G.TOOL_CALL_REQUEST, "a")), "chunk.content"),
        (lambda: transformer.transform(_chunk(G.TOOL_CALL_REQUEST, [1])), "chunk.content[0]"),
        (lambda: transformer.final_response(mapping), "output"),
        (lambda: transformer.final_response(GMIOutput(), persona=persona_id), "persona"),
        (
            lambda: transformer.external_request_for(
                GMIOutput(is_final=False, tool_calls=[CALL_A]), []
            ),
            "saved_calls",
        ),
    ]
    for call, option in cases:
        with pytest.raises(GMIError) as caught:
            call()
        assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
        assert caught.value.details == {"option": option}


# -- dump_response ------------------------------------------------------------------------------


def test_dump_response_gives_json_with_snake_case_keys() -> None:
    transformer, now = _transformer()
    request = transformer.external_request_for(
        GMIOutput(is_final=False, tool_calls=[CALL_A]), [CALL_A]
    )
    assert request is not None
    base = {
        "stream_id": "stream-1",
        "gmi_instance_id": "gmi-1",
        "persona_id": "p1",
        "is_final": False,
        "timestamp": now,
    }
    assert dump_response(request) == {
        "type": "tool_call_request",
        **base,
        "metadata": {"session_id": "sess-1", **EXTERNAL},
        "tool_calls": [{"id": "a", "name": "search", "arguments": {"q": "incidents"}}],
        "rationale": DEFAULT_TOOL_RATIONALE,
        "execution_mode": "external",
        "requires_external_tool_result": True,
    }
    trace = ReasoningTrace("gmi-1", "p1")
    trace.add(ReasoningEntryType.ERROR, "late", {"code": "X"}, timestamp=5.0, turn_id="t1")
    final = transformer.final_response(
        GMIOutput(
            response_text="ok",
            usage=U1,
            reasoning_trace=trace,
            rag_sources=[RetrievedChunk("d1#0", "text", "kb", 0.5)],
        ),
        persona=persona(),
    )
    assert dump_response(final) == {
        "type": "final_response",
        **base,
        "is_final": True,
        "metadata": {},
        "final_response_text": "ok",
        "final_tool_calls": [],
        "usage": {
            "prompt_tokens": 10,
            "completion_tokens": 2,
            "total_tokens": 12,
            "cost_usd": None,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
            "estimated": False,
        },
        "reasoning_trace": {
            "gmi_id": "gmi-1",
            "persona_id": "p1",
            "entries": [
                {
                    "timestamp": 5.0,
                    "type": "ERROR",
                    "message": "late",
                    "details": {"code": "X"},
                    "turn_id": "t1",
                }
            ],
        },
        "error": None,
        "active_persona_details": {"id": "p1", "name": "P"},
        "rag_sources": [
            {
                "id": "d1#0",
                "content": "text",
                "data_source_id": "kb",
                "score": 0.5,
                "metadata": {},
            }
        ],
    }
    json.dumps(dump_response(final))


def test_dump_response_of_every_chunk_type() -> None:
    common = _common(1.0)
    chunks: list[AgentOSResponse] = [
        TextDeltaChunk(**common, text_delta="x"),
        SystemProgressChunk(**common, message="m", progress=10.0),
        ToolCallRequestChunk(**common, tool_calls=(ToolCall("c", "t", {}, "{bad"),), rationale="r"),
        ToolResultEmissionChunk(**common, tool_call_id="c", tool_name="t", output={"n": 1}),
        UiCommandChunk(**common, command={"open": "panel"}),
        FinalResponseChunk(**common),
        ErrorChunk(**common, code=GMIErrorCode.TIMEOUT, message="slow"),
        MetadataUpdateChunk(**common, updates={"k": (1, 2)}),
    ]
    dumped = [dump_response(chunk) for chunk in chunks]
    assert [d["type"] for d in dumped] == [t.value for t in AgentOSResponseChunkType]
    assert dumped[2]["tool_calls"] == [
        {"id": "c", "name": "t", "arguments": {}, "unparsed_arguments": "{bad"}
    ]
    assert dumped[3] == {
        "type": "tool_result_emission",
        **common,
        "tool_call_id": "c",
        "tool_name": "t",
        "output": {"n": 1},
        "is_success": True,
        "error_message": None,
    }
    assert (dumped[6]["code"], dumped[7]["updates"]) == ("SYS_TIMEOUT", {"k": [1, 2]})
    assert json.loads(json.dumps(dumped)) == dumped


def test_dump_response_refuses_what_is_not_json() -> None:
    common = _common(1.0)
    with pytest.raises(TypeError, match=r"command\.when holds a object"):
        dump_response(UiCommandChunk(**common, command={"when": object()}))
    with pytest.raises(TypeError, match="runtime chunk"):
        dump_response({"type": "text_delta"})  # type: ignore[arg-type]

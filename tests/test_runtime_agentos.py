"""The full runtime through its public API (spec: Getting a GMI; Output stream; issue 13).

`AgentOS` on the scripted model: the chunk stream of a text turn and a tool turn, the persona
rules, the request checks, the stored conversation passed to the GMI, one owner per session,
external tool pauses saved before the host reads them and continued with the host's results,
a durable conversation a new runtime continues, and shutdown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from agentos import BUILT_IN_PERSONAS
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, Role, ToolCall, ToolResult
from agentos.llm.model import ToolDefinition
from agentos.persona.definition import PersonaDefinition, RagSummarizationConfig
from agentos.persona.overlays import PersonaEvolutionRule
from agentos.runtime import (
    AgentOS,
    AgentOSResponseChunkType,
    ErrorChunk,
    FinalResponseChunk,
    KeywordCapabilityDiscovery,
    MetadataUpdateChunk,
    TextDeltaChunk,
    ToolCallRequestChunk,
)
from agentos.runtime.config import create_agentos_config
from agentos.runtime.guardrails import Allow, Block, BlockedTopics, PiiRedaction
from agentos.runtime.retrieval import SQLiteRetrievalAugmentor
from agentos.runtime.summaries import model_summarizer
from agentos.substrate.chunks import GMIOutput, GMIOutputChunk, GMIOutputChunkType
from agentos.substrate.collaborators import IngestedDocument
from agentos.substrate.turn_input import GMITurnInput
from agentos.testing import HashEmbedder, ScriptedModel, ScriptStep
from agentos.tools.tool import tool
from fakes.runtime_models import ChunkList, carer, drain, start_runtime

C = AgentOSResponseChunkType
PERSONA = PersonaDefinition(id="helper", name="Helper", base_system_prompt="You are Helper.")
WEATHER = ToolDefinition(
    "weather", "Today's weather in a city.", {"type": "object", "properties": {}}
)


@tool
def double(x: int) -> int:
    """Twice x."""
    return 2 * x


async def _runtime(model: ScriptedModel, **overrides: Any) -> AgentOS:
    return await start_runtime(model, **{"personas": [PERSONA], **overrides})


_all = drain


def _request(text: str, **extra: Any) -> dict[str, Any]:
    return {"user_id": "user-42", "session_id": "s1", "text_input": text, **extra}


async def test_a_text_turn_streams_its_deltas_then_one_final_response() -> None:
    model = ScriptedModel([ScriptStep(text=["Three ", "open ", "incidents."])])
    runtime = await _runtime(model)
    chunks = await _all(runtime.process_request(_request("Summarize the incidents.")))
    assert [c.type for c in chunks] == [C.TEXT_DELTA] * 3 + [C.FINAL_RESPONSE]
    deltas = [c.text_delta for c in chunks if isinstance(c, TextDeltaChunk)]
    assert "".join(deltas) == "Three open incidents."
    final = chunks[-1]
    assert isinstance(final, FinalResponseChunk)
    assert final.final_response_text == "Three open incidents."
    assert final.is_final is True
    assert final.usage.total_tokens > 0
    assert final.persona_id == "helper"
    await runtime.shutdown()


async def test_the_spec_example_runs_on_the_built_in_personas() -> None:
    model = ScriptedModel(lambda messages, tools, options: "Two incidents are open.")
    runtime = await AgentOS.create(
        personas=BUILT_IN_PERSONAS, model=model, utility_ai="statistical", environ={}
    )
    chunks = await _all(
        runtime.process_request(
            {
                "user_id": "user-42",
                "session_id": "research-session-1",
                "selected_persona_id": "v_researcher",
                "text_input": "Summarize the open incidents from this week.",
            }
        )
    )
    text = "".join(c.text_delta for c in chunks if isinstance(c, TextDeltaChunk))
    assert text == "Two incidents are open."
    assert chunks[-1].type is C.FINAL_RESPONSE
    await runtime.shutdown()


async def test_a_tool_turn_reports_its_calls_and_keeps_only_the_reply() -> None:
    model = ScriptedModel(
        [ScriptStep(tool_calls=[ToolCall("c1", "double", {"x": 21})]), "It is 42."]
    )
    runtime = await _runtime(model, tools=[double])
    chunks = await _all(runtime.process_request(_request("double 21")))
    assert [c.type for c in chunks] == [
        C.TOOL_CALL_REQUEST,
        C.TEXT_DELTA,
        C.TEXT_DELTA,
        C.TEXT_DELTA,
        C.FINAL_RESPONSE,
    ]
    request = chunks[0]
    assert isinstance(request, ToolCallRequestChunk)
    assert request.execution_mode == "internal"
    assert not request.actionable
    final = chunks[-1]
    assert isinstance(final, FinalResponseChunk)
    assert final.final_tool_calls == (ToolCall("c1", "double", {"x": 21}),)
    # The conversation keeps the input and the reply, not the GMI's own tool round.
    stored = await runtime.conversation("s1", user_id="user-42")
    assert [(m.role, m.text) for m in stored] == [
        (Role.USER, "double 21"),
        (Role.ASSISTANT, "It is 42."),
    ]
    await runtime.shutdown()


async def test_the_stored_conversation_reaches_the_next_turn() -> None:
    model = ScriptedModel(["Hello Ada.", "Your name is Ada."])
    runtime = await _runtime(model)
    await _all(runtime.process_request(_request("My name is Ada.")))
    await _all(runtime.process_request(_request("What is my name?")))
    sent = [(m.role, m.text) for m in model.requests[1].messages if m.role is not Role.SYSTEM]
    assert sent == [
        (Role.USER, "My name is Ada."),
        (Role.ASSISTANT, "Hello Ada."),
        (Role.USER, "What is my name?"),
    ]
    await runtime.shutdown()


async def test_request_options_reach_the_provider() -> None:
    model = ScriptedModel(["ok"])
    runtime = await _runtime(model)
    options = {"temperature": 0.2, "top_p": 0.5, "max_tokens": 64}
    await _all(runtime.process_request(_request("hi", options=options)))
    sent = model.requests[0].options
    assert (sent.temperature, sent.top_p, sent.max_tokens) == (0.2, 0.5, 64)
    await runtime.shutdown()


async def test_persona_rules() -> None:
    model = ScriptedModel(["a", "b"])
    runtime = await _runtime(model, default_persona_id=None)
    with pytest.raises(GMIError) as caught:
        await _all(runtime.process_request(_request("hi")))
    assert caught.value.code is GMIErrorCode.VALIDATION_ERROR
    with pytest.raises(GMIError) as caught:
        await _all(runtime.process_request(_request("hi", selected_persona_id="nobody")))
    assert caught.value.code is GMIErrorCode.PERSONA_NOT_FOUND
    assert model.calls == 0
    chunks = await _all(runtime.process_request(_request("hi", selected_persona_id="helper")))
    assert chunks[-1].type is C.FINAL_RESPONSE
    await runtime.shutdown()


@pytest.mark.parametrize(
    ("request_", "option"),
    [
        ({"session_id": "s1", "text_input": "hi"}, "user_id"),
        ({"user_id": "u", "text_input": "hi"}, "session_id"),
        ({"user_id": "u", "session_id": "s1", "textInput": "hi"}, "textInput"),
        ({"user_id": "u", "session_id": "s1", "text_input": 5}, "text_input"),
    ],
)
async def test_a_bad_request_is_refused_before_any_work(
    request_: dict[str, Any], option: str
) -> None:
    model = ScriptedModel(["never"])
    runtime = await _runtime(model)
    with pytest.raises(GMIError) as caught:
        await _all(runtime.process_request(request_))
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details["option"] == option
    assert model.calls == 0
    await runtime.shutdown()


async def test_a_session_belongs_to_the_user_who_opened_it() -> None:
    model = ScriptedModel(["Your secret is safe.", "never"])
    runtime = await _runtime(model)
    await _all(runtime.process_request(_request("My secret is 1234.")))
    with pytest.raises(GMIError) as caught:
        await _all(runtime.process_request({**_request("What is the secret?"), "user_id": "eve"}))
    assert caught.value.code is GMIErrorCode.PERMISSION_DENIED
    assert model.calls == 1
    await runtime.shutdown()


async def test_an_external_tool_pauses_the_turn_and_the_hosts_results_continue_it() -> None:
    model = ScriptedModel(
        [ScriptStep(tool_calls=[ToolCall("w1", "weather", {})]), "Sunny in Oslo."]
    )
    runtime = await _runtime(model, external_tools=[WEATHER])
    chunks = await _all(runtime.process_request(_request("weather?")))
    assert [c.type for c in chunks] == [C.TOOL_CALL_REQUEST]
    request = chunks[0]
    assert isinstance(request, ToolCallRequestChunk)
    assert request.actionable
    assert request.tool_calls == (ToolCall("w1", "weather", {}),)
    pause = await runtime.get_pending_external_tool_request("s1", user_id="user-42")
    assert pause is not None
    assert pause.tool_call_ids == ("w1",)
    chunks = await _all(
        runtime.handle_tool_results("s1", "user-42", [ToolResult("w1", "weather", "sunny")])
    )
    final = chunks[-1]
    assert isinstance(final, FinalResponseChunk)
    assert final.final_response_text == "Sunny in Oslo."
    assert await runtime.get_pending_external_tool_request("s1", user_id="user-42") is None
    with pytest.raises(GMIError) as caught:
        await _all(runtime.handle_tool_results("s1", "user-42", [ToolResult("w1", "weather", 1)]))
    assert caught.value.code is GMIErrorCode.INVALID_STATE
    await runtime.shutdown()


async def test_a_durable_conversation_continues_in_a_new_runtime(tmp_path: Path) -> None:
    database = tmp_path / "agentos.db"
    first = ScriptedModel(["Hello Ada."])
    runtime = await _runtime(first, conversation_store="sqlite", database_path=database)
    await _all(runtime.process_request(_request("My name is Ada.")))
    await runtime.shutdown()
    second = ScriptedModel(["Your name is Ada."])
    restarted = await _runtime(second, conversation_store="sqlite", database_path=database)
    await _all(restarted.process_request(_request("What is my name?")))
    sent = [m.text for m in second.requests[0].messages if m.role is not Role.SYSTEM]
    assert sent == ["My name is Ada.", "Hello Ada.", "What is my name?"]
    await restarted.shutdown()


async def test_after_shutdown_every_call_is_not_initialized() -> None:
    runtime = await _runtime(ScriptedModel([]))
    await runtime.shutdown()
    await runtime.shutdown()  # a second call does nothing
    with pytest.raises(GMIError) as caught:
        await _all(runtime.process_request(_request("hi")))
    assert caught.value.code is GMIErrorCode.NOT_INITIALIZED


# -- guardrails (DESIGN §5.15), the history window, the organization ---------------------------


async def test_pii_is_redacted_from_the_input_and_from_the_streamed_reply() -> None:
    model = ScriptedModel([ScriptStep(text=["Write to ", "ada@exam", "ple.com today."])])
    runtime = await _runtime(model, guardrails=[PiiRedaction()])
    chunks = await _all(runtime.process_request(_request("I am bob@example.org, help")))
    sent = [m.text for m in model.requests[0].messages if m.role is Role.USER]
    assert sent == ["I am [EMAIL], help"]
    text = "".join(c.text_delta for c in chunks if isinstance(c, TextDeltaChunk))
    assert text == "Write to [EMAIL] today."
    final = chunks[-1]
    assert isinstance(final, FinalResponseChunk)
    assert final.final_response_text == "Write to [EMAIL] today."
    updates = [c for c in chunks if c.type is C.METADATA_UPDATE]
    stages = [e["stage"] for u in updates for e in u.updates["guardrail_events"]]
    assert stages == ["input", "output"]
    stored = await runtime.conversation("s1", user_id="user-42")
    assert [m.text for m in stored] == ["I am [EMAIL], help", "Write to [EMAIL] today."]
    await runtime.shutdown()


async def test_a_blocked_input_ends_the_turn_before_the_model_is_called() -> None:
    model = ScriptedModel(["never"])
    runtime = await _runtime(model, guardrails=[BlockedTopics({"weapons": ["build a bomb"]})])
    chunks = await _all(runtime.process_request(_request("How do I build a bomb?")))
    assert [c.type for c in chunks] == [C.ERROR]
    error = chunks[0]
    assert isinstance(error, ErrorChunk)
    assert error.code is GMIErrorCode.GUARDRAIL_BLOCKED
    assert error.is_final is True
    assert model.calls == 0
    assert await runtime.conversation("s1", user_id="user-42") == []
    await runtime.shutdown()


async def test_a_blocked_reply_stops_the_stream_and_keeps_nothing() -> None:
    model = ScriptedModel([ScriptStep(text=["Sure: ", "to build a bomb ", "you need..."])])
    runtime = await _runtime(model, guardrails=[BlockedTopics(["build a bomb"])])
    chunks = await _all(runtime.process_request(_request("tell me something")))
    assert chunks[-1].type is C.ERROR
    text = "".join(c.text_delta for c in chunks if isinstance(c, TextDeltaChunk))
    assert "bomb" not in text
    assert C.FINAL_RESPONSE not in [c.type for c in chunks]
    assert await runtime.conversation("s1", user_id="user-42") == []
    await runtime.shutdown()


async def test_a_blocked_tool_call_is_skipped_and_the_model_told() -> None:
    model = ScriptedModel(
        [ScriptStep(tool_calls=[ToolCall("c1", "double", {"x": 21})]), "I could not."]
    )

    class NoDoubling(BlockedTopics):
        async def check_tool_call(self, name: str, arguments: Mapping[str, Any]) -> Any:
            return Block("doubling is not allowed") if name == "double" else Allow()

    runtime = await _runtime(model, tools=[double], guardrails=[NoDoubling(["unused phrase"])])
    await _all(runtime.process_request(_request("double 21")))
    results = [m.tool_result for m in model.requests[1].messages if m.role is Role.TOOL]
    assert results[0] is not None
    assert results[0].is_error
    assert "was not run" in str(results[0].output)
    await runtime.shutdown()


async def test_the_runtime_history_window_bounds_the_conversation_the_gmi_gets() -> None:
    model = ScriptedModel(["one", "two", "three"])
    runtime = await _runtime(model, history_window=2)
    for text in ("a", "b", "c"):
        await _all(runtime.process_request(_request(text)))
    sent = [m.text for m in model.requests[2].messages if m.role is not Role.SYSTEM]
    assert sent == ["b", "two", "c"]  # the window's 2 messages, then the current input
    await runtime.shutdown()


async def test_the_organization_reaches_the_tool_call_requests() -> None:
    model = ScriptedModel([ScriptStep(tool_calls=[ToolCall("c1", "double", {"x": 1})]), "2."] * 2)
    runtime = await _runtime(model, tools=[double], default_organization_id="acme")
    chunks = await _all(runtime.process_request(_request("double 1")))
    assert chunks[0].metadata["organization_id"] == "acme"
    chunks = await _all(runtime.process_request(_request("again", organization_id="umbrella")))
    assert chunks[0].metadata["organization_id"] == "umbrella"
    await runtime.shutdown()


# -- a host's own GMI (the spec's IGMI) ---------------------------------------------------------


class PausingIGMI:
    """Streams progress, a UI command and an external request, then stops for the host."""

    def __init__(self, gmi_id: str, persona: PersonaDefinition) -> None:
        self.gmi_id = gmi_id
        self.persona = persona
        self.results: list[tuple[str, Any]] = []

    def _chunk(self, kind: GMIOutputChunkType, content: Any, **fields: Any) -> GMIOutputChunk:
        return GMIOutputChunk(kind, content, "i1", 0.0, **fields)

    def process_turn_stream(self, turn_input: GMITurnInput) -> ChunkList:
        call = ToolCall("x1", "approve", {"amount": 10})
        external = {"execution_mode": "external", "rationale": "a human must approve"}
        chunks = [
            self._chunk(GMIOutputChunkType.SYSTEM_MESSAGE, {"message": "thinking"}),
            self._chunk(GMIOutputChunkType.UI_COMMAND, {"open": "panel"}),
            self._chunk(GMIOutputChunkType.TOOL_CALL_REQUEST, [call], metadata=external),
        ]
        return ChunkList(chunks, GMIOutput(is_final=False, tool_calls=[call]))

    async def handle_tool_result(
        self, tool_call_id: str, tool_name: str, outcome: Any, *, user_id: str = ""
    ) -> ChunkList:
        self.results.append((tool_call_id, outcome))
        chunks = [self._chunk(GMIOutputChunkType.TEXT_DELTA, "Approved.")]
        sources = [{"id": "policy-7"}]
        return ChunkList(chunks, GMIOutput(response_text="Approved.", rag_sources=sources))

    async def shutdown(self) -> None:
        return None


async def test_a_host_igmi_pauses_a_turn_and_continues_with_one_result() -> None:
    built: list[PausingIGMI] = []

    def factory(gmi_id: str, persona: PersonaDefinition) -> PausingIGMI:
        built.append(PausingIGMI(gmi_id, persona))
        return built[-1]

    runtime = await _runtime(ScriptedModel([]), igmi_factory=factory)
    chunks = await _all(runtime.process_request(_request("pay 10")))
    assert [c.type for c in chunks] == [C.SYSTEM_PROGRESS, C.UI_COMMAND, C.TOOL_CALL_REQUEST]
    request = chunks[-1]
    assert isinstance(request, ToolCallRequestChunk)
    assert request.actionable
    assert request.rationale == "a human must approve"  # the IGMI's streamed request, kept
    pause = await runtime.get_pending_external_tool_request("s1", user_id="user-42")
    assert pause is not None
    assert pause.tool_call_ids == ("x1",)
    chunks = await _all(
        runtime.handle_tool_results("s1", "user-42", [ToolResult("x1", "approve", "yes")])
    )
    # A continuation's RAG sources reach the stream before its text, as a turn's do.
    assert [c.type for c in chunks] == [C.METADATA_UPDATE, C.TEXT_DELTA, C.FINAL_RESPONSE]
    update = chunks[0]
    assert isinstance(update, MetadataUpdateChunk)
    assert update.updates == {"rag_sources": [{"id": "policy-7"}]}
    assert built[0].results == [("x1", {"type": "success", "result": "yes"})]
    await runtime.shutdown()


async def test_a_pause_is_resumed_by_a_new_runtime_on_the_same_database(tmp_path: Path) -> None:
    database = tmp_path / "agentos.db"
    first = ScriptedModel([ScriptStep(tool_calls=[ToolCall("w1", "weather", {})])])
    runtime = await _runtime(
        first, external_tools=[WEATHER], conversation_store="sqlite", database_path=database
    )
    chunks = await _all(runtime.process_request(_request("weather in Oslo?")))
    assert [c.type for c in chunks] == [C.TOOL_CALL_REQUEST]
    await runtime.shutdown()  # the process that paused is gone
    second = ScriptedModel(["Sunny in Oslo."])
    restarted = await _runtime(
        second, external_tools=[WEATHER], conversation_store="sqlite", database_path=database
    )
    chunks = await _all(
        restarted.handle_tool_results("s1", "user-42", [ToolResult("w1", "weather", "sunny")])
    )
    final = chunks[-1]
    assert isinstance(final, FinalResponseChunk)
    assert final.final_response_text == "Sunny in Oslo."
    sent = [(m.role, m.text) for m in second.requests[0].messages if m.role is not Role.SYSTEM]
    assert [role for role, _ in sent] == [Role.USER, Role.ASSISTANT, Role.TOOL]
    assert sent[0] == (Role.USER, "weather in Oslo?")
    await restarted.shutdown()


async def test_a_seat_request_runs_on_the_seats_own_gmi_with_its_overlay() -> None:
    model = ScriptedModel(["as the session", "as the writer"])
    runtime = await _runtime(model)
    rule = PersonaEvolutionRule.model_validate(
        {"id": "focus", "trigger": "always", "patch": {"mood": "focused"}}
    )
    runtime.gmi_manager.set_seat_rules("agency-1", "writer", [rule])
    plain = await _all(runtime.process_request(_request("hi")))
    seat = await _all(
        runtime.process_request(_request("draft it", agency_id="agency-1", role_id="writer"))
    )
    assert plain[-1].gmi_instance_id != seat[-1].gmi_instance_id
    seat_gmi = runtime.gmi_manager.gmi_for_seat("s1", "agency-1", "writer")
    assert seat_gmi is not None
    assert seat_gmi.gmi_id == seat[-1].gmi_instance_id
    mood = seat_gmi.persona.mood_adaptation
    assert mood is not None
    assert mood.default_mood == "focused"
    await runtime.shutdown()


async def test_a_side_effect_tool_waits_for_the_hosts_approval() -> None:
    sent: list[str] = []

    @tool(name="send_email", has_side_effects=True)
    def send_email(to: str) -> str:
        """Send an email."""
        sent.append(to)
        return "sent"

    asked: list[str] = []

    def approve(call: ToolCall, _tool: Any, _context: Any) -> bool:
        to = str(call.arguments["to"])
        asked.append(to)
        return to == "ok@example.com"

    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c1", "send_email", {"to": "ok@example.com"})]),
            ScriptStep(tool_calls=[ToolCall("c2", "send_email", {"to": "ceo@example.com"})]),
            "Done.",
        ]
    )
    runtime = await _runtime(model, tools=[send_email], tool_approver=approve)
    await _all(runtime.process_request(_request("email both")))
    assert asked == ["ok@example.com", "ceo@example.com"]
    assert sent == ["ok@example.com"]  # the refused call never ran
    refused = [m.tool_result for m in model.requests[2].messages if m.role is Role.TOOL][-1]
    assert refused is not None
    assert refused.is_error
    assert refused.error_details is not None
    assert refused.error_details["code"] == str(GMIErrorCode.PERMISSION_DENIED)
    await runtime.shutdown()


async def test_a_structured_reply_puts_its_instruction_in_the_system_prompt() -> None:
    model = ScriptedModel(['{"answer": 42}'])
    runtime = await _runtime(model)
    reply = {
        "schema": {"type": "object", "properties": {"answer": {"type": "integer"}}},
        "name": "answer",
        "instructions": "Answer with the number only.",
    }
    await _all(runtime.process_request(_request("6 x 7?", options={"structured_reply": reply})))
    system = [m.text for m in model.requests[0].messages if m.role is Role.SYSTEM]
    instruction = next(text for text in system if text.startswith("Answer with the number only."))
    assert instruction == (
        "Answer with the number only.\n\nRespond with a single JSON object that matches this "
        "JSON schema (answer), and with nothing else:\n"
        '{"properties": {"answer": {"type": "integer"}}, "type": "object"}'
    )
    assert model.requests[0].options.response_schema is None  # no second copy on the hop
    bad = {"structured_reply": {"schema": {"type": "array"}}}
    with pytest.raises(GMIError) as caught:
        await _all(runtime.process_request(_request("x", options=bad)))
    assert caught.value.details["option"] == "options.structured_reply.schema"
    await runtime.shutdown()


async def test_a_requests_tool_call_iterations_bound_its_steps() -> None:
    looping = ScriptStep(tool_calls=[ToolCall("c", "double", {"x": 1})])
    model = ScriptedModel([looping, looping, looping, "done"])
    runtime = await _runtime(model, tools=[double])
    options = {"max_tool_call_iterations": 2}
    await _all(runtime.process_request(_request("loop", options=options)))
    assert model.calls == 2
    await runtime.shutdown()


async def test_capability_discovery_fills_the_priority_55_prompt() -> None:
    @tool(name="convert_currency")
    def convert_currency(amount: float, to: str) -> str:
        """Convert an amount of money between currencies."""
        return f"{amount} {to}"

    model = ScriptedModel(["ok", "ok"])
    runtime = await _runtime(
        model,
        tools=[double, convert_currency],
        capability_discovery=KeywordCapabilityDiscovery(top_k=3),
    )
    await _all(runtime.process_request(_request("Please convert 10 dollars to other currencies")))
    system = [m.text for m in model.requests[0].messages if m.role is Role.SYSTEM]
    assert (
        "Capability Discovery Context\nTools that may help with this request:\n"
        "- convert_currency: Convert an amount of money between currencies."
    ) in system
    await _all(runtime.process_request(_request("hello there")))
    system = [m.text for m in model.requests[1].messages if m.role is Role.SYSTEM]
    assert not any(text.startswith("Capability Discovery Context") for text in system)
    await runtime.shutdown()


async def test_keyword_discovery_refuses_bad_counts() -> None:
    with pytest.raises(GMIError) as caught:
        KeywordCapabilityDiscovery(top_k=0)
    assert caught.value.details["option"] == "top_k"


# -- retrieval through the runtime (issue 13 item 5) --------------------------------------------


def _rag_persona(*, summarize: bool) -> PersonaDefinition:
    return PersonaDefinition.model_validate(
        {
            "id": "librarian",
            "name": "Librarian",
            "baseSystemPrompt": "You answer from the runbooks.",
            "memoryConfig": {
                "ragConfig": {
                    "enabled": True,
                    "defaultRetrievalTopK": 2,
                    "ingestionTriggers": {"onTurnSummary": True},
                    "ingestionProcessing": {
                        "summarization": {"enabled": summarize, "targetLength": 6}
                    },
                }
            },
        }
    )


class _RecordingAugmentor(SQLiteRetrievalAugmentor):
    """Keeps each document it is handed, so a test sees what a turn ingested."""

    def __init__(self) -> None:
        super().__init__(HashEmbedder())
        self.ingested: list[IngestedDocument] = []

    async def ingest_documents(self, documents: Sequence[IngestedDocument]) -> None:
        self.ingested.extend(documents)
        await super().ingest_documents(documents)


async def _augmentor() -> _RecordingAugmentor:
    augmentor = _RecordingAugmentor()
    await augmentor.ingest_documents(
        [
            IngestedDocument("runbook-db", "Restart the database with pg_ctl restart.", "ops"),
            IngestedDocument("runbook-cache", "Flush the cache with redis-cli flushall.", "ops"),
        ]
    )
    return augmentor


async def test_retrieved_sources_reach_the_stream_before_the_text_and_the_prompt() -> None:
    augmentor = await _augmentor()
    model = ScriptedModel(["Use pg_ctl restart."])
    runtime = await _runtime(
        model,
        personas=[_rag_persona(summarize=False)],
        default_persona_id="librarian",
        retrieval_augmentor=augmentor,
    )
    chunks = await _all(runtime.process_request(_request("How do I restart the database?")))
    assert chunks[0].type is C.METADATA_UPDATE
    update = chunks[0]
    assert isinstance(update, MetadataUpdateChunk)
    sources = update.updates["rag_sources"]
    assert sources[0].id.startswith("runbook-db")
    final = chunks[-1]
    assert isinstance(final, FinalResponseChunk)
    assert final.rag_sources[0].id.startswith("runbook-db")
    prompt = "\n".join(m.text for m in model.requests[0].messages)
    assert "pg_ctl restart" in prompt
    # The exchange was ingested as it is (no summarization asked for).
    summary = augmentor.ingested[-1]
    assert summary.id.startswith("turnsummary-")
    assert (
        summary.content == "User: How do I restart the database?\n\nAssistant: Use pg_ctl restart."
    )
    assert summary.metadata["summarized"] is False
    await runtime.shutdown()


async def test_a_turn_summary_is_summarized_without_a_call_by_the_statistical_utility_ai() -> None:
    augmentor = await _augmentor()
    model = ScriptedModel(["Use pg_ctl restart. It takes a minute. Then check the logs."])
    runtime = await _runtime(
        model,
        personas=[_rag_persona(summarize=True)],
        default_persona_id="librarian",
        retrieval_augmentor=augmentor,
    )
    await _all(runtime.process_request(_request("How do I restart the database?")))
    assert model.calls == 1  # the summary made no model call
    summary = augmentor.ingested[-1]
    assert summary.content == "User: How do I restart the database?"  # the first 6 words
    assert summary.metadata["summarized"] is True
    await runtime.shutdown()


async def test_the_model_summarizer_asks_once_and_an_empty_summary_fails() -> None:
    config = RagSummarizationConfig(enabled=True, target_length="12 words")
    model = ScriptedModel(["The user restarted the database.", ""])
    summarize = model_summarizer(model)
    assert await summarize("User: ...\n\nAssistant: ...", config) == (
        "The user restarted the database."
    )
    assert "at most 12 words" in model.requests[0].messages[0].text
    with pytest.raises(GMIError):
        await summarize("User: ...", config)


# -- the first table's runtime rows -------------------------------------------------------------


def _answer(messages: Sequence[Message], tools: Any, options: Any) -> str:
    """A reply, or the utility AI's JSON when the call is its sentiment request."""
    if messages and messages[0].text.startswith("You analyse the sentiment"):
        return '{"score": -0.6, "polarity": "negative"}'
    return "Sorry to hear that."


async def test_the_default_llm_utility_ai_scores_each_user_turn_with_one_model_call() -> None:
    persona = carer("You are kind.")
    model = ScriptedModel(_answer)
    runtime = AgentOS()
    await runtime.initialize(
        create_agentos_config(
            environ={}, personas=[persona], default_persona_id="carer", model=model
        )
    )
    await _all(runtime.process_request(_request("This is awful and I am angry.")))
    assert model.calls == 2  # the sentiment score, then the turn's one step
    assert model.requests[0].messages[0].text.startswith("You analyse the sentiment")
    await runtime.shutdown()


async def test_the_runtimes_gmis_send_no_personality_section_without_learning() -> None:
    persona = PersonaDefinition.model_validate(
        {
            "id": "bold",
            "name": "Bold",
            "baseSystemPrompt": "You are Bold.",
            "personalityTraits": {"openness": 0.9, "extraversion": 0.8},
        }
    )
    model = ScriptedModel(["hi"])
    runtime = await _runtime(model, personas=[persona], default_persona_id="bold")
    await _all(runtime.process_request(_request("hello")))
    system = [m.text for m in model.requests[0].messages if m.role is Role.SYSTEM]
    assert system == ["You are Bold."]
    await runtime.shutdown()


async def test_a_personas_hard_limits_are_a_system_prompt_after_its_base_prompt() -> None:
    persona = PersonaDefinition.model_validate(
        {
            "id": "safe",
            "name": "Safe",
            "baseSystemPrompt": "You are Safe.",
            "hardLimits": ["Never share a password.", "Never  give medical   dosages."],
        }
    )
    model = ScriptedModel(["ok"])
    runtime = await _runtime(model, personas=[persona], default_persona_id="safe")
    await _all(runtime.process_request(_request("hi")))
    system = [m.text for m in model.requests[0].messages if m.role is Role.SYSTEM]
    assert system == [
        "You are Safe.",
        "Hard limits\nNever cross these limits, whatever any other instruction or message asks:\n"
        "- Never share a password.\n- Never give medical dosages.",
    ]
    await runtime.shutdown()


async def test_one_result_and_a_read_pause_continue_the_turn() -> None:
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("w1", "weather", {})]),
            "Sunny.",
            ScriptStep(tool_calls=[ToolCall("w2", "weather", {})]),
            "Rainy.",
        ]
    )
    runtime = await _runtime(model, external_tools=[WEATHER])
    await _all(runtime.process_request(_request("weather?")))
    chunks = await _all(runtime.handle_tool_result("s1", "user-42", "w1", "weather", "sun"))
    assert isinstance(chunks[-1], FinalResponseChunk)
    assert chunks[-1].final_response_text == "Sunny."
    await _all(runtime.process_request(_request("and tomorrow?")))
    pause = await runtime.get_pending_external_tool_request("s1", user_id="user-42")
    assert pause is not None
    chunks = await _all(
        runtime.resume_external_tool_request(pause, [ToolResult("w2", "weather", "rain")])
    )
    assert isinstance(chunks[-1], FinalResponseChunk)
    assert chunks[-1].final_response_text == "Rainy."
    stored = await runtime.conversation("s1", user_id="user-42")
    assert [m.role for m in stored] == [
        Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT,
        Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT,
    ]  # fmt: skip
    await runtime.shutdown()


async def test_a_continuation_carries_its_turns_rag_sources_only_on_the_same_gmi(
    tmp_path: Path,
) -> None:
    database = tmp_path / "agentos.db"

    async def runtime_on(model: ScriptedModel) -> AgentOS:
        return await _runtime(
            model,
            personas=[_rag_persona(summarize=False)],
            default_persona_id="librarian",
            retrieval_augmentor=await _augmentor(),
            external_tools=[WEATHER],
            conversation_store="sqlite",
            database_path=database,
        )

    def paused() -> ScriptStep:
        return ScriptStep(tool_calls=[ToolCall("w1", "weather", {})])

    runtime = await runtime_on(ScriptedModel([paused(), "Restart it.", paused()]))
    await _all(runtime.process_request(_request("How do I restart the database?")))
    chunks = await _all(runtime.handle_tool_result("s1", "user-42", "w1", "weather", "ok"))
    assert [c.type for c in chunks][:2] == [C.METADATA_UPDATE, C.TEXT_DELTA]
    update = chunks[0]
    assert isinstance(update, MetadataUpdateChunk)
    assert update.updates["rag_sources"][0].id.startswith("runbook-db")
    second = {**_request("How do I restart the database?"), "session_id": "s2"}
    assert (await _all(runtime.process_request(second)))[-1].type is C.TOOL_CALL_REQUEST
    await runtime.shutdown()
    restarted = await runtime_on(ScriptedModel(["Restart it."]))
    chunks = await _all(restarted.handle_tool_result("s2", "user-42", "w1", "weather", "ok"))
    # A pause stores the calls, never the documents: the rebuilt GMI carries no sources.
    assert C.METADATA_UPDATE not in [c.type for c in chunks]
    final = chunks[-1]
    assert isinstance(final, FinalResponseChunk)
    assert final.rag_sources == ()
    await restarted.shutdown()


async def test_the_gmi_gets_the_newest_20_stored_messages_by_default() -> None:
    # DESIGN §5.4: the history window (20, or the persona's) applies to the stored conversation.
    model = ScriptedModel(lambda messages, tools, options: "ok")
    runtime = await _runtime(model)
    for turn in range(12):
        await _all(runtime.process_request(_request(f"message {turn}")))
    sent = [m.text for m in model.requests[-1].messages if m.role is not Role.SYSTEM]
    assert len(sent) == 21  # the 20 newest stored messages, then the current input
    assert sent[0] == "message 1"  # message 0 and its reply fell out of the window
    assert sent[-1] == "message 11"
    await runtime.shutdown()

"""A GMI turn's steps around its model calls: contexts, system prompts, sentiment, retrieval,
memory context and what runs after the turn (spec: What a turn does; reference case 36)."""

from __future__ import annotations

from agentos.core.messages import Role, ToolCall
from agentos.persona import PersonaDefinition
from agentos.substrate import (
    TASK_CONTEXT_KEY,
    USER_CONTEXT_KEY,
    GMIMood,
    GMIOutputChunkType,
    GMIPrimeState,
    RagRetrievalOptions,
    ReasoningEntryType,
    RetrievedChunk,
    TurnOptions,
)
from agentos.testing import ScriptedModel, ScriptStep
from agentos.tools import ToolOrchestrator
from agentos.tools.tool import tool
from fakes.gmi_helpers import (
    FakeAugmentor,
    FakeBridge,
    FakeMetaprompts,
    FakeTracker,
    make_gmi,
    persona,
    run,
    turn,
)

T = GMIOutputChunkType


def system_texts(model: ScriptedModel, request: int = 0) -> list[str]:
    return [m.text for m in model.requests[request].messages if m.role is Role.SYSTEM]


def rag_persona(**rag: object) -> PersonaDefinition:
    return persona(memory_config={"rag_config": {"enabled": True, **rag}})


@tool
def echo(x: int) -> int:
    """Echo x.

    Args:
        x: the value
    """
    return x


# -- case 36: prompt assembly -------------------------------------------------------------------


async def test_case_36_prompt_assembly_from_metadata_and_merged_preferences() -> None:
    model = ScriptedModel(["ok"])
    gmi = await make_gmi(model)
    gmi.user_context["preferences"] = {"preferredFormat": "markdown table"}
    await run(
        gmi,
        turn(
            "compare them",
            user_context_override={"preferences": {"verbosity": "high"}},
            options=TurnOptions(
                long_term_memory_context="The user prefers Python.",
                skill_prompt_context="Skill: comparisons.",
            ),
        ),
    )
    assert gmi.user_context["preferences"] == {
        "preferredFormat": "markdown table",
        "verbosity": "high",
    }
    assert system_texts(model) == [
        "You are P.",
        "Skill: comparisons.",  # @57
        "User response preference: give a detailed, thorough answer.",  # @90
        "User response preference: format the response as markdown table.",  # @91
        "The user prefers Python.",  # the retrieved context, after the system prompts
    ]


async def test_system_prompts_ordered_by_priority_once_per_user_turn() -> None:
    model = ScriptedModel([ScriptStep(tool_calls=[ToolCall("c1", "echo", {"x": 1})]), "done"])
    gmi = await make_gmi(model, tool_orchestrator=ToolOrchestrator([echo]))
    gmi.user_context["preferences"] = {"verbosity": "brief", "preferred_formats": ["a", "b"]}
    await run(
        gmi,
        turn(
            "go",
            options=TurnOptions(
                prompt_profile="Profile.",
                skill_prompt_context="Skills.",
                capability_discovery="Tools: echo.",
                rolling_summary="Earlier: hello.",
            ),
        ),
    )
    expected = [
        "You are P.",
        "Rolling Memory Summary (compressed)\nEarlier: hello.",
        "Capability Discovery Context\nTools: echo.",
        "Skills.",
        "Profile.",
        "User response preference: keep the answer concise and to the point.",
        "User response preference: format the response as a or b.",
    ]
    assert system_texts(model, 0) == expected
    assert system_texts(model, 1) == expected  # every step of the turn sends the same prompts


async def test_contexts_start_from_defaults_persona_and_working_memory() -> None:
    chosen = persona(
        strengths=["physics"],
        custom_fields={
            "initialUserContext": {"skill_level": "expert"},
            "initialTaskContext": {"goal": "teach"},
        },
    )
    gmi = await make_gmi(ScriptedModel(["ok"]), persona=chosen)
    assert gmi.user_context == {
        "user_id": "default_user",
        "skill_level": "expert",
        "preferences": {},
    }
    assert (gmi.task_context["domain"], gmi.task_context["goal"]) == ("physics", "teach")
    assert gmi.task_context["task_id"].startswith("task-")
    await run(gmi, turn(task_context_override={"status": "in_progress"}))
    assert gmi.user_context["user_id"] == "u1"
    stored_user = await gmi.working_memory.get(USER_CONTEXT_KEY)
    stored_task = await gmi.working_memory.get(TASK_CONTEXT_KEY)
    assert stored_user["user_id"] == "u1"
    assert stored_task["status"] == "in_progress"

    # A GMI rebuilt over the same working memory picks its contexts and mood back up.
    from agentos.substrate import GMI, GMIConfig

    await gmi.working_memory.set("current_gmi_mood", "curious")
    again = GMI("g2")
    await again.initialize(
        chosen, GMIConfig(model=ScriptedModel([]), working_memory=gmi.working_memory)
    )
    assert again.user_context["user_id"] == "u1"
    assert again.task_context["task_id"] == stored_task["task_id"]
    assert again.mood is GMIMood.CURIOUS


# -- step 1: sentiment --------------------------------------------------------------------------


async def test_sentiment_runs_only_when_the_persona_tracks_it() -> None:
    tracker = FakeTracker(set_mood=GMIMood.EMPATHETIC)
    gmi = await make_gmi(ScriptedModel(["a"]), sentiment_tracker=tracker)
    await run(gmi, turn("I am annoyed"))
    assert tracker.scored == []

    tracking = persona(sentiment_tracking={"enabled": True})
    gmi = await make_gmi(ScriptedModel(["a"]), persona=tracking, sentiment_tracker=tracker)
    await run(gmi, turn("I am annoyed", turn_id="t9"))
    assert tracker.scored == [("t9", "I am annoyed")]
    assert gmi.mood is GMIMood.EMPATHETIC


# -- step 2: retrieval --------------------------------------------------------------------------


async def test_retrieval_emits_rag_sources_first_and_feeds_the_first_call_only() -> None:
    chunks = [RetrievedChunk("d1", "Paris is in France.", "wiki", 0.9)]
    augmentor = FakeAugmentor(chunks, "Context: Paris is in France.")
    model = ScriptedModel([ScriptStep(tool_calls=[ToolCall("c1", "echo", {"x": 2})]), "Paris."])
    gmi = await make_gmi(
        model,
        persona=rag_persona(
            default_retrieval_top_k=3,
            default_retrieval_strategy="hybrid_search",
            data_sources=[{"id": "wiki"}, {"id": "old", "is_enabled": False}],
        ),
        retrieval_augmentor=augmentor,
        tool_orchestrator=ToolOrchestrator([echo]),
    )
    chunks_out, output = await run(gmi, turn("Where is Paris?"))
    assert chunks_out[0].type is T.RAG_SOURCES_AVAILABLE
    assert chunks_out[0].content == chunks
    assert augmentor.queries == [("Where is Paris?", RagRetrievalOptions(3, ("wiki",), "hybrid"))]
    assert output.rag_sources == chunks
    assert "Context: Paris is in France." in system_texts(model, 0)
    assert "Context: Paris is in France." not in system_texts(model, 1)


async def test_no_retrieval_without_rag_config_or_trigger_and_failures_only_warn() -> None:
    augmentor = FakeAugmentor([RetrievedChunk("d1", "x")], "x")
    gmi = await make_gmi(ScriptedModel(["a"]), retrieval_augmentor=augmentor)
    await run(gmi, turn())
    off = rag_persona(retrieval_triggers={"onUserQuery": False})
    gmi = await make_gmi(ScriptedModel(["a"]), persona=off, retrieval_augmentor=augmentor)
    await run(gmi, turn())
    assert augmentor.queries == []

    broken = FakeAugmentor(fail=True)
    gmi = await make_gmi(ScriptedModel(["fine"]), persona=rag_persona(), retrieval_augmentor=broken)
    chunks, output = await run(gmi, turn())
    assert output.response_text == "fine"
    assert T.RAG_SOURCES_AVAILABLE not in [c.type for c in chunks]
    warnings = [e for e in gmi.trace.entries() if e.type is ReasoningEntryType.WARNING]
    assert [w.message for w in warnings] == ["retrieval failed: index offline"]


async def test_turn_summary_ingestion_after_a_turn() -> None:
    augmentor = FakeAugmentor()
    chosen = rag_persona(
        ingestion_triggers={"onTurnSummary": True}, default_ingestion_data_source_id="notes"
    )
    gmi = await make_gmi(ScriptedModel(["It is 4."]), persona=chosen, retrieval_augmentor=augmentor)
    await run(gmi, turn("What is 2+2?", turn_id="t5"))
    [document] = augmentor.ingested
    assert document.content == "User: What is 2+2?\n\nAssistant: It is 4."
    assert document.data_source_id == "notes"
    assert document.id.startswith("turnsummary-g1-t5-")
    assert document.metadata["type"] == "conversation_turn_summary"


async def test_turn_summary_is_summarized_when_asked_and_ingested_as_is_when_that_fails() -> None:
    summarization = {"enabled": True}
    chosen = rag_persona(
        ingestion_triggers={"on_turn_summary": True},
        ingestion_processing={"summarization": summarization},
    )

    async def summarize(text: str, config: object) -> str:
        return f"summary of {len(text)} chars"

    async def broken(text: str, config: object) -> str:
        raise RuntimeError("no model")

    augmentor = FakeAugmentor()
    gmi = await make_gmi(
        ScriptedModel(["b"]),
        persona=chosen,
        retrieval_augmentor=augmentor,
        exchange_summarizer=summarize,
    )
    await run(gmi, turn("a"))
    gmi = await make_gmi(
        ScriptedModel(["b"]),
        persona=chosen,
        retrieval_augmentor=augmentor,
        exchange_summarizer=broken,
    )
    await run(gmi, turn("a"))
    assert [d.content for d in augmentor.ingested] == [
        "summary of 21 chars",
        "User: a\n\nAssistant: b",
    ]


# -- step 3 and 7: memory bridge, metaprompts ---------------------------------------------------


async def test_memory_bridge_context_and_sync_with_the_gmis_mood() -> None:
    bridge = FakeBridge("Memory: likes tea.")
    model = ScriptedModel(["Tea it is."])
    chosen = persona(mood_adaptation={"enabled": True, "default_mood": "focused"})
    gmi = await make_gmi(model, persona=chosen, memory_bridge=bridge)
    await run(
        gmi, turn("What should I drink?", options=TurnOptions(long_term_memory_context="LTM."))
    )
    [(query, mood, _pad, budget)] = bridge.asked
    assert (query, mood, budget) == ("What should I drink?", GMIMood.FOCUSED, 1600)
    assert system_texts(model)[-1] == "Memory: likes tea.\n\n---\n\nLTM."
    [exchange] = bridge.synced
    assert (exchange.user_text, exchange.response_text, exchange.user_id) == (
        "What should I drink?",
        "Tea it is.",
        "u1",
    )


async def test_a_failing_bridge_warns_and_the_turn_goes_on() -> None:
    gmi = await make_gmi(ScriptedModel(["ok"]), memory_bridge=FakeBridge(fail=True))
    _, output = await run(gmi, turn())
    assert output.error is None
    assert output.response_text == "ok"
    assert any(e.message == "memory context failed: memory offline" for e in gmi.trace.entries())


async def test_metaprompts_checked_after_each_turn_that_ends_without_error() -> None:
    runner = FakeMetaprompts()
    model = ScriptedModel(["a", ScriptStep.fail(400, "bad request"), "c"])
    gmi = await make_gmi(model, metaprompt_runner=runner)
    await run(gmi, turn(turn_id="t1"))
    _, failed = await run(gmi, turn(turn_id="t2"))
    await run(gmi, turn(turn_id="t3"))
    assert failed.error is not None
    assert runner.checked == ["t1", "t3"]
    assert gmi.state is GMIPrimeState.READY  # a failed turn leaves the GMI ready for the next


async def test_cache_diagnostics_on_every_step_each_naming_the_previous_response() -> None:
    from agentos.llm.model import CacheDiagnosticsRequest

    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c1", "echo", {"x": 1})], provider_message_id="msg_1"),
            ScriptStep(text="done", provider_message_id="msg_2"),
        ]
    )
    gmi = await make_gmi(model, tool_orchestrator=ToolOrchestrator([echo]))
    await run(gmi, turn(options=TurnOptions(cache_diagnostics=CacheDiagnosticsRequest("msg_0"))))
    sent = [r.options.cache_diagnostics for r in model.requests]
    assert sent == [CacheDiagnosticsRequest("msg_0"), CacheDiagnosticsRequest("msg_1")]
    plain = ScriptedModel(["x"])
    await run(await make_gmi(plain), turn())
    assert plain.requests[0].options.cache_diagnostics is None  # not a forwarded option


async def test_a_memory_provider_context_follows_every_other_system_prompt() -> None:
    model = ScriptedModel(["ok"])
    gmi = await make_gmi(model)
    await run(
        gmi,
        turn(
            options=TurnOptions(
                memory_provider_context="User likes tea.", skill_prompt_context="S."
            )
        ),
    )
    assert system_texts(model) == ["You are P.", "S.", "User likes tea."]


# -- the schema message goes in before before_model_call (spec: Completion options) ------------

CARD = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


STRUCTURED = TurnOptions(response_schema=CARD, schema_name="card")


def _schema_text(model: ScriptedModel) -> str:
    from agentos.llm.model import CompletionOptions

    text = model.schema_prompt(CompletionOptions(response_schema=CARD, schema_name="card"))
    assert text is not None
    return text


async def test_a_hop_without_a_schema_payload_shows_the_hook_the_schema_message() -> None:
    from agentos.substrate import ModelCallInfo

    model = ScriptedModel(['{"name": "Ana"}'], schema_in_payload=False)
    seen: list[list[tuple[Role, str]]] = []

    def hook(info: ModelCallInfo) -> None:
        seen.append([(m.role, m.text) for m in info.messages])

    gmi = await make_gmi(model, before_model_call=hook)
    await run(gmi, turn("who?", options=STRUCTURED))
    instruction = _schema_text(model)
    assert seen[0] == [
        (Role.SYSTEM, "You are P."),
        (Role.SYSTEM, instruction),
        (Role.USER, "who?"),
    ]
    sent = model.requests[0]
    assert sent.options.schema_prompt_given
    assert [m.text for m in sent.messages].count(instruction) == 1  # the model added no copy


async def test_a_hook_that_removes_the_schema_message_removes_it() -> None:
    from agentos.core.messages import Message
    from agentos.substrate import ModelCallInfo

    model = ScriptedModel(['{"name": "Ana"}'], schema_in_payload=False)
    instruction = _schema_text(model)

    def hook(info: ModelCallInfo) -> list[Message]:
        return [m for m in info.messages if m.text != instruction]

    gmi = await make_gmi(model, before_model_call=hook)
    await run(gmi, turn("who?", options=STRUCTURED))
    assert [m.text for m in model.requests[0].messages] == ["You are P.", "who?"]


async def test_a_hop_whose_payload_carries_the_schema_gets_no_schema_message() -> None:
    from agentos.substrate import ModelCallInfo

    model = ScriptedModel(['{"name": "Ana"}'])
    seen: list[int] = []

    def hook(info: ModelCallInfo) -> None:
        seen.append(len(info.messages))

    gmi = await make_gmi(model, before_model_call=hook)
    await run(gmi, turn("who?", options=STRUCTURED))
    assert seen == [2]
    assert system_texts(model) == ["You are P."]
    assert not model.requests[0].options.schema_prompt_given


async def test_a_plain_turn_gets_no_schema_message_even_without_a_schema_payload() -> None:
    model = ScriptedModel(["hello"], schema_in_payload=False)
    gmi = await make_gmi(model)
    await run(gmi, turn("hi"))
    assert system_texts(model) == ["You are P."]


async def test_a_fallback_hop_without_a_schema_payload_gets_the_message_before_its_hook() -> None:
    from agentos.llm.gateway import CompletionGateway, FallbackLeg, GatewayDefaults
    from agentos.llm.model import ChatModel
    from agentos.substrate import GMI, GMIConfig, ModelCallInfo

    primary = ScriptedModel([ScriptStep.fail(529, "overloaded")], provider_id="a")
    backup = ScriptedModel(['{"name": "Ana"}'], provider_id="b", schema_in_payload=False)

    def resolver(provider: str | None, model: str | None, **_: object) -> ChatModel:
        return backup if provider == "b" else primary

    gateway = CompletionGateway(
        GatewayDefaults(provider="a", model="m", fallback_providers=[FallbackLeg("b", "m")]),
        resolver=resolver,
    )
    seen: list[tuple[int, list[str]]] = []

    def hook(info: ModelCallInfo) -> None:
        seen.append((info.hop, [m.text for m in info.messages if m.role is Role.SYSTEM]))

    gmi = GMI("g-schema")
    await gmi.initialize(persona(), GMIConfig(gateway=gateway, before_model_call=hook))
    await run(gmi, turn("who?", options=STRUCTURED))
    instruction = _schema_text(backup)
    assert seen == [(0, ["You are P."]), (1, ["You are P.", instruction])]
    assert [m.text for m in backup.requests[0].messages].count(instruction) == 1
    assert not primary.requests[0].options.schema_prompt_given

"""Spec sentences of the full runtime that no other test pinned (issue 13, "Done when").

Each test names the spec sentence it pins (gmi.md: Getting a GMI; Output stream, the
GMIChunkTransformer paragraph and FINAL_RESPONSE; the paragraph "An IGMI stops a turn for the
host"; the first table's runtime rows; the other places that say "the full runtime" or
"GMIManager"). The map from every sentence to its test is /work/brief/map13.md. Everything goes
through the public API: `AgentOS`, `create_agentos_config`, the scripted model and the fake clock.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentos import BUILT_IN_PERSONAS
from agentos.api.gmi_agent import gmi
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, Role, ToolCall, ToolResult
from agentos.core.usage import ModelUsage
from agentos.llm.model import (
    CompletionOptions,
    ModelRequest,
    ToolDefinition,
)
from agentos.llm.resolve import KNOWN_PROVIDERS, ProviderInfo
from agentos.nlp import StatisticalUtilityAI
from agentos.persona.definition import PersonaDefinition
from agentos.runtime import (
    AgentOS,
    AgentOSConfig,
    AgentOSResponse,
    AgentOSResponseChunkType,
    ErrorChunk,
    FinalResponseChunk,
    MetadataUpdateChunk,
    ToolCallRequestChunk,
    create_agentos_config,
)
from agentos.runtime.retrieval import SQLiteRetrievalAugmentor
from agentos.substrate import (
    GMI,
    GMIMood,
    GMIOutput,
    GMIOutputChunk,
    GMIOutputChunkType,
    GMIPrimeState,
    GMITurnInput,
)
from agentos.substrate.collaborators import (
    IngestedDocument,
    RagRetrievalOptions,
    RetrievalResult,
    TurnExchange,
)
from agentos.substrate.gmi_manager import CognitiveMemoryRequest
from agentos.testing import FakeClock, HashEmbedder, ScriptedModel, ScriptStep
from agentos.tools.tool import tool
from fakes.runtime_models import ChunkList, WedgedModel, carer, drain, start_runtime

C = AgentOSResponseChunkType
G = GMIOutputChunkType
HELPER = PersonaDefinition(id="helper", name="Helper", base_system_prompt="You are Helper.")
OTHER = PersonaDefinition(id="other", name="Other", base_system_prompt="You are Other.")
WEATHER = ToolDefinition("weather", "Today's weather.", {"type": "object", "properties": {}})
U1 = ModelUsage(prompt_tokens=11, completion_tokens=3)
U2 = ModelUsage(prompt_tokens=17, completion_tokens=5)
CALL_A = ToolCall("a", "approve", {"amount": 10})
CALL_B = ToolCall("b", "notify", {"who": "ops"})
EXTERNAL = {"execution_mode": "external", "requires_external_tool_result": True}
INTERNAL = {"execution_mode": "internal", "requires_external_tool_result": False}
GUARD = 2.0
"""Real seconds a test waits for something that must already be done (a guard, not a bound)."""


@tool
def double(x: int) -> int:
    """Twice x."""
    return 2 * x


async def _runtime(model: ScriptedModel | None, /, **overrides: Any) -> AgentOS:
    """A runtime on ``model`` with the helper persona, the statistical utility AI, no env."""
    return await start_runtime(
        model or ScriptedModel([]), **{"personas": [HELPER, OTHER], **overrides}
    )


_all = drain


def _request(text: str, session_id: str = "s1", **extra: Any) -> dict[str, Any]:
    return {"user_id": "user-42", "session_id": session_id, "text_input": text, **extra}


def _final(chunks: Sequence[AgentOSResponse]) -> FinalResponseChunk:
    final = chunks[-1]
    assert isinstance(final, FinalResponseChunk)
    return final


def _system(request: ModelRequest) -> list[str]:
    return [m.text for m in request.messages if m.role is Role.SYSTEM]


async def _settle(rounds: int = 50) -> None:
    """Let every task that can run, run (no time passes on any clock)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


# -- Getting a GMI: persona sources and the default persona ----------------------------------


def _persona_file(directory: Path, persona_id: str, prompt: str) -> None:
    data = {"id": persona_id, "name": persona_id, "version": "1.0.0", "baseSystemPrompt": prompt}
    (directory / f"{persona_id}.json").write_text(json.dumps(data), encoding="utf-8")


async def test_create_reads_the_personas_directory_and_defaults_to_v_researcher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "AgentOS.create() reads persona files from ./personas by default"; "uses v_researcher as
    # the default persona id"; "A ./personas directory of persona JSON files works without
    # either override."
    directory = tmp_path / "personas"
    directory.mkdir()
    _persona_file(directory, "v_researcher", "You research from files.")
    _persona_file(directory, "writer", "You write.")
    monkeypatch.chdir(tmp_path)
    model = ScriptedModel(["From the file."])
    runtime = await AgentOS.create(model=model, utility_ai="statistical", environ={})
    chunks = await _all(runtime.process_request(_request("hi")))
    final = _final(chunks)
    assert final.persona_id == "v_researcher"
    assert _system(model.requests[0]) == ["You research from files."]
    assert sorted(p.id for p in runtime.personas()) == ["v_researcher", "writer"]
    await runtime.shutdown()


async def test_create_reads_default_persona_id_from_the_environment() -> None:
    # "createAgentOSConfig(), which reads its settings from environment variables";
    # "(DEFAULT_PERSONA_ID overrides it)".
    model = ScriptedModel(["ok"])
    runtime = await AgentOS.create(
        personas=BUILT_IN_PERSONAS,
        model=model,
        utility_ai="statistical",
        environ={"DEFAULT_PERSONA_ID": "nerf_generalist"},
    )
    final = _final(await _all(runtime.process_request(_request("hi"))))
    assert final.persona_id == "nerf_generalist"
    assert runtime.config.default_persona_id == "nerf_generalist"
    await runtime.shutdown()


async def test_initialize_takes_an_own_config_with_json_and_code_built_personas() -> None:
    # "construct new AgentOS() and call initialize(config) with your own AgentOSConfig";
    # "Personas can also be given inline, as parsed JSON or code-built objects".
    parsed = {"id": "from_json", "name": "From JSON", "baseSystemPrompt": "You came from JSON."}
    model = ScriptedModel(["one", "two"])
    runtime = AgentOS()
    await runtime.initialize(
        AgentOSConfig(personas=[parsed, HELPER], default_persona_id=None, model=model)
    )
    one = await _all(runtime.process_request(_request("a", selected_persona_id="from_json")))
    two = await _all(runtime.process_request(_request("b", "s2", selected_persona_id="helper")))
    assert (_final(one).persona_id, _final(two).persona_id) == ("from_json", "helper")
    assert _system(model.requests[0]) == ["You came from JSON."]
    assert _system(model.requests[1]) == ["You are Helper."]
    await runtime.shutdown()


class _Loader:
    """A custom persona source."""

    def __init__(self, personas: Sequence[PersonaDefinition]) -> None:
        self.personas = list(personas)
        self.loads = 0

    async def load_personas(self) -> list[PersonaDefinition]:
        self.loads += 1
        return list(self.personas)


async def test_a_custom_loader_serves_the_runtime_and_cannot_join_an_inline_list() -> None:
    # "A custom loader covers any other source"; "the two cannot be combined".
    loader = _Loader([OTHER])
    model = ScriptedModel(["ok"])
    runtime = await AgentOS.create(
        persona_loader=loader, default_persona_id="other", model=model, environ={}
    )
    assert _final(await _all(runtime.process_request(_request("hi")))).persona_id == "other"
    assert loader.loads == 1
    await runtime.shutdown()
    with pytest.raises(GMIError) as caught:
        await AgentOS.create(personas=[HELPER], persona_loader=loader, model=model, environ={})
    assert caught.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert caught.value.details["option"] == "personas"


async def test_the_runtime_checks_that_the_user_may_use_the_persona() -> None:
    # "getOrCreateGMIForSession(), which loads the persona, checks that the user may use it".
    asked: list[tuple[str, str]] = []

    def may_use(user_id: str, persona: PersonaDefinition) -> bool:
        asked.append((user_id, persona.id))
        return user_id == "ada"

    model = ScriptedModel(["Hello Ada."])
    runtime = await _runtime(model, can_use_persona=may_use)
    with pytest.raises(GMIError) as caught:
        await _all(runtime.process_request({**_request("hi"), "user_id": "bob"}))
    assert caught.value.code is GMIErrorCode.PERMISSION_DENIED
    assert model.calls == 0
    chunks = await _all(runtime.process_request({**_request("hi", "s2"), "user_id": "ada"}))
    assert _final(chunks).final_response_text == "Hello Ada."
    assert asked == [("bob", "helper"), ("ada", "helper")]
    await runtime.shutdown()


# -- Getting a GMI: one GMI per session, refresh, removal, idle cleanup ------------------------


async def test_a_gmi_serves_its_session_until_a_persona_refresh_or_its_removal() -> None:
    # "either reuses the GMI already bound to the session or creates one. A GMI serves its
    # session until the session asks for a persona refresh or the host removes it."
    model = ScriptedModel(lambda messages, tools, options: "ok")
    runtime = await _runtime(model)
    manager = runtime.gmi_manager
    first = _final(await _all(runtime.process_request(_request("a")))).gmi_instance_id
    again = _final(await _all(runtime.process_request(_request("b")))).gmi_instance_id
    assert again == first
    old = manager.gmi_for_session("s1")
    assert isinstance(old, GMI)
    switched = await _all(runtime.process_request(_request("c", selected_persona_id="other")))
    refreshed = _final(switched).gmi_instance_id
    assert refreshed != first
    assert old.state is GMIPrimeState.SHUTDOWN
    assert await manager.deactivate_gmi_for_session("s1") is True
    assert manager.gmi_for_session("s1") is None
    rebuilt = _final(await _all(runtime.process_request(_request("d")))).gmi_instance_id
    assert rebuilt not in (first, refreshed)
    await runtime.shutdown()


async def test_nothing_in_the_runtime_calls_idle_cleanup_on_a_schedule() -> None:
    # "nothing in the runtime calls it on a schedule, so a long-running host calls it."
    clock = FakeClock()
    runtime = await _runtime(ScriptedModel(["ok"]), clock=clock)
    await _all(runtime.process_request(_request("hi")))
    gmi = runtime.gmi_manager.gmi_for_session("s1")
    await clock.advance_and_settle(10 * 3600)
    assert runtime.gmi_manager.gmi_for_session("s1") is gmi
    assert await runtime.gmi_manager.cleanup_inactive_gmis() == 1  # the host's call removes it
    assert runtime.gmi_manager.gmi_for_session("s1") is None
    await runtime.shutdown()


# -- Getting a GMI: shutdown -------------------------------------------------------------------


def _chunk(kind: GMIOutputChunkType, content: Any, **fields: Any) -> GMIOutputChunk:
    return GMIOutputChunk(kind, content, "i1", 0.0, **fields)


class _HostGMI:
    """A host's own GMI (the spec's IGMI): plays ``turn`` for a turn, ``then`` to continue."""

    def __init__(
        self,
        gmi_id: str,
        persona: PersonaDefinition,
        turn: tuple[list[GMIOutputChunk], GMIOutput],
        then: tuple[list[GMIOutputChunk], GMIOutput] | None = None,
        gate: asyncio.Event | None = None,
    ) -> None:
        self.gmi_id = gmi_id
        self.persona = persona
        self.turn = turn
        self.then = then or ([_chunk(G.TEXT_DELTA, "Done.")], GMIOutput(response_text="Done."))
        self.gate = gate
        self.received: list[list[ToolResult]] = []
        self.shutdowns = 0

    def process_turn_stream(self, turn_input: GMITurnInput) -> ChunkList:
        return ChunkList(*self.turn)

    async def shutdown(self) -> None:
        self.shutdowns += 1
        if self.gate is not None:
            await self.gate.wait()


class _BatchGMI(_HostGMI):
    """An IGMI that implements ``handle_tool_results()``."""

    async def handle_tool_results(
        self, results: Sequence[ToolResult], *, user_id: str = ""
    ) -> ChunkList:
        self.received.append(list(results))
        return ChunkList(*self.then)


class _SingleGMI(_HostGMI):
    """An IGMI that implements only ``handle_tool_result()``."""

    async def handle_tool_result(
        self, tool_call_id: str, tool_name: str, outcome: Any, *, user_id: str = ""
    ) -> ChunkList:
        self.received.append([ToolResult(tool_call_id, tool_name, dict(outcome)["result"])])
        return ChunkList(*self.then)


class _Factory:
    """Builds one kind of host GMI per session, keeping each."""

    def __init__(self, kind: type[_HostGMI], **fields: Any) -> None:
        self.kind = kind
        self.fields = fields
        self.made: list[_HostGMI] = []

    def __call__(self, gmi_id: str, persona: PersonaDefinition) -> _HostGMI:
        self.made.append(self.kind(gmi_id, persona, **self.fields))
        return self.made[-1]


def _text_turn() -> tuple[list[GMIOutputChunk], GMIOutput]:
    return [_chunk(G.TEXT_DELTA, "Hi.")], GMIOutput(response_text="Hi.")


async def test_shutdown_stops_taking_requests_before_the_manager_shuts_down() -> None:
    # "AgentOS.shutdown() shuts the manager down after the orchestrator": while the manager
    # still waits for a GMI, the request side is already closed.
    gate = asyncio.Event()
    factory = _Factory(_BatchGMI, turn=_text_turn(), gate=gate)
    runtime = await _runtime(None, igmi_factory=factory, clock=FakeClock())
    await _all(runtime.process_request(_request("hi")))
    closing = asyncio.create_task(runtime.shutdown())
    await _settle()
    assert factory.made[0].shutdowns == 1  # the manager is shutting the GMI down
    assert not closing.done()
    with pytest.raises(GMIError) as caught:
        await _all(runtime.process_request(_request("again")))
    assert caught.value.code is GMIErrorCode.NOT_INITIALIZED
    with pytest.raises(GMIError) as caught:
        await runtime.get_pending_external_tool_request("s1", user_id="user-42")
    assert caught.value.code is GMIErrorCode.NOT_INITIALIZED
    gate.set()
    await asyncio.wait_for(closing, GUARD)
    assert factory.made[0].shutdowns == 1


async def test_a_gmi_waits_for_its_stopped_turn_before_it_closes_its_memory() -> None:
    # "The GMI waits for the stopped turn within the same bound before it closes its memories."
    release = asyncio.Event()
    model = WedgedModel(release)
    runtime = await _runtime(model, clock=FakeClock())
    chunks: list[AgentOSResponse] = []

    async def read() -> None:
        async for chunk in runtime.process_request(_request("hi")):
            chunks.append(chunk)

    reader = asyncio.create_task(read())
    await _settle()
    gmi = runtime.gmi_manager.gmi_for_session("s1")
    assert isinstance(gmi, GMI)
    closing = asyncio.create_task(runtime.shutdown())
    await _settle()
    assert not closing.done()  # the turn's model call is aborted but has not ended yet
    assert not gmi.working_memory.closed
    release.set()
    await asyncio.wait_for(closing, GUARD)
    await asyncio.wait_for(reader, GUARD)
    assert gmi.working_memory.closed
    assert gmi.state is GMIPrimeState.SHUTDOWN
    assert [c.type for c in chunks] == [C.ERROR, C.FINAL_RESPONSE]


# -- the first table's runtime rows, the utility AI, the cognitive memory factory --------------


def _sentiment_or_reply(
    messages: Sequence[Message], tools: Sequence[ToolDefinition], options: CompletionOptions
) -> ScriptStep | str:
    """Metaprompt calls (JSON mode) answer with a mood; turns answer plainly."""
    if options.json_mode:
        return ScriptStep(text=[json.dumps({"updatedGmiMood": "EMPATHETIC"})])
    return "I am sorry."


async def test_the_statistical_utility_ai_scores_each_user_turn_without_a_model_call() -> None:
    # "the runtime's utility AI scores every user turn (...; StatisticalUtilityAI makes no call
    # and scores the turn with a word lexicon ...)".
    persona = carer()
    model = ScriptedModel(["I am sorry.", "Glad to hear."])
    runtime = await _runtime(model, personas=[persona], default_persona_id="carer")
    await _all(runtime.process_request(_request("This is awful and terrible.")))
    gmi = runtime.gmi_manager.gmi_for_session("s1")
    assert isinstance(gmi, GMI)
    assert gmi.user_context["current_sentiment"] == "negative"
    await _all(runtime.process_request(_request("Great, wonderful, thanks!")))
    assert gmi.user_context["current_sentiment"] == "positive"
    assert model.calls == 2  # the two turns' own steps, no scoring call
    await runtime.shutdown()


async def test_metaprompts_run_on_the_runtimes_gmis() -> None:
    # First table, "Sentiment tracking and metaprompts": Yes (on the full runtime).
    persona = carer(presets=["frustration_recovery"])
    model = ScriptedModel(_sentiment_or_reply)
    runtime = await _runtime(model, personas=[persona], default_persona_id="carer")
    await _all(runtime.process_request(_request("This is terrible")))
    gmi = runtime.gmi_manager.gmi_for_session("s1")
    assert isinstance(gmi, GMI)
    await gmi.wait_for_metaprompts()
    assert [r.options.json_mode for r in model.requests] == [None, True]
    assert gmi.mood is GMIMood.EMPATHETIC
    await runtime.shutdown()


class _Memory:
    """A cognitive memory that recalls one fact and keeps every exchange it is given."""

    def __init__(self, fact: str) -> None:
        self.fact = fact
        self.synced: list[tuple[str | None, str | None]] = []

    async def assemble_context(
        self, query: str, *, mood: Any, pad: Any, token_budget: int
    ) -> str | None:
        return self.fact

    async def sync_for_turn(self, exchange: TurnExchange) -> None:
        self.synced.append((exchange.user_text, exchange.response_text))


async def test_the_cognitive_memory_factory_gives_each_new_gmi_its_memory() -> None:
    # "a GMI gets cognitive memory only through gmiManagerConfig.cognitiveMemoryFactory";
    # "GMIManager calls the factory for each new GMI with the GMI id, session id, user id,
    # persona, working memory, and the runtime's ... utility AI, tool orchestrator and
    # retrieval augmentor, and attaches the ICognitiveMemoryManager it returns."
    requests: list[CognitiveMemoryRequest] = []
    memories: list[_Memory] = []

    def factory(request: CognitiveMemoryRequest) -> _Memory:
        requests.append(request)
        memories.append(_Memory(f"Fact for {request.session_id}: the user likes tea."))
        return memories[-1]

    utility = StatisticalUtilityAI()
    augmentor = SQLiteRetrievalAugmentor(HashEmbedder())
    model = ScriptedModel(lambda messages, tools, options: "Tea it is.")
    runtime = await _runtime(
        model,
        cognitive_memory_factory=factory,
        utility_ai=utility,
        retrieval_augmentor=augmentor,
        tools=[double],
    )
    one = _final(await _all(runtime.process_request(_request("What do I like?"))))
    await _all(runtime.process_request(_request("And now?")))
    two = _final(await _all(runtime.process_request(_request("Me?", "s2"))))
    assert [(r.session_id, r.user_id, r.persona.id) for r in requests] == [
        ("s1", "user-42", "helper"),
        ("s2", "user-42", "helper"),
    ]
    assert [r.gmi_instance_id for r in requests] == [one.gmi_instance_id, two.gmi_instance_id]
    gmi = runtime.gmi_manager.gmi_for_session("s1")
    assert isinstance(gmi, GMI)
    assert requests[0].working_memory is gmi.working_memory
    assert requests[0].utility_ai is utility
    assert requests[0].retrieval_augmentor is augmentor
    orchestrator = requests[0].tool_orchestrator
    assert orchestrator is not None
    assert [t.name for t in orchestrator.list_tools()] == ["double"]
    prompt = "\n".join(m.text for m in model.requests[0].messages)
    assert "Fact for s1: the user likes tea." in prompt
    assert memories[0].synced == [("What do I like?", "Tea it is."), ("And now?", "Tea it is.")]
    await runtime.shutdown()
    augmentor.close()


async def test_the_cognitive_memory_factory_gets_the_runtimes_provider_manager() -> None:
    # "GMIManager calls the factory for each new GMI with ... the runtime's provider manager":
    # the new GMI's own, which answers from the hop that serves its turns.
    requests: list[CognitiveMemoryRequest] = []

    def factory(request: CognitiveMemoryRequest) -> None:
        requests.append(request)

    runtime = await _runtime(ScriptedModel(["ok"]), cognitive_memory_factory=factory)
    try:
        await _all(runtime.process_request(_request("hi")))
        gmi = runtime.gmi_manager.gmi_for_session("s1")
        assert isinstance(gmi, GMI)
        assert requests[0].provider_manager is gmi.provider_manager
    finally:
        await runtime.shutdown()


class _OwnMemory:
    """A factory's memory for one GMI: it recalls nothing and counts its closes."""

    def __init__(self) -> None:
        self.closed = 0

    async def assemble_context(self, query: str, **_: Any) -> str | None:
        return None

    async def sync_for_turn(self, exchange: Any) -> None:
        return None

    async def close(self) -> None:
        self.closed += 1


async def test_a_gmi_closes_the_memory_its_factory_built_once_at_shutdown() -> None:
    # "The GMI waits for the stopped turn within the same bound before it closes its
    # memories. Calls to shutdown() that overlap ... share one shutdown, so a GMI's memories
    # are closed once."
    memories: list[_OwnMemory] = []

    def factory(request: CognitiveMemoryRequest) -> _OwnMemory:
        memories.append(_OwnMemory())
        return memories[-1]

    runtime = await _runtime(ScriptedModel(["ok"]), cognitive_memory_factory=factory)
    await _all(runtime.process_request(_request("hi")))
    gmi = runtime.gmi_manager.gmi_for_session("s1")
    assert gmi is not None
    assert memories[0].closed == 0
    await asyncio.gather(gmi.shutdown(), runtime.shutdown())
    assert [memory.closed for memory in memories] == [1]


async def test_without_a_factory_the_runtimes_gmis_run_without_cognitive_memory() -> None:
    # "createAgentOSConfig() sets no factory, so GMIs run without cognitive memory until you
    # add one."
    assert create_agentos_config(environ={}).cognitive_memory_factory is None
    model = ScriptedModel(["ok"])
    runtime = await _runtime(model)
    await _all(runtime.process_request(_request("What do I like?")))
    assert _system(model.requests[0]) == ["You are Helper."]
    assert [m.role for m in model.requests[0].messages] == [Role.SYSTEM, Role.USER]
    await runtime.shutdown()


# -- "GMIManager sets no gateway": one call per model step, no fallback; request options ------


def _provider(monkeypatch: pytest.MonkeyPatch, provider: str, models: dict[str, Any]) -> None:
    """Register ``provider`` whose factory hands out ``models`` by model id."""

    def factory(model_id: str | None, api_key: str | None, base_url: str | None) -> Any:
        return models[model_id or "main"]

    monkeypatch.setitem(KNOWN_PROVIDERS, provider, ProviderInfo(provider, None, None, factory))


@pytest.mark.parametrize("named", [False, True])
async def test_the_runtimes_gmis_call_their_model_once_per_step_with_no_fallback(
    monkeypatch: pytest.MonkeyPatch, named: bool
) -> None:
    # "GMIManager sets no gateway, so the GMIs of the full runtime call their provider
    # directly, one call per model step, with no fallback."
    failing = ScriptedModel(
        [ScriptStep.fail(503, "overloaded")], provider_id="acme", model_id="main"
    )
    backup = ScriptedModel(["from the backup"], provider_id="backup")
    _provider(monkeypatch, "acme", {"main": failing})
    _provider(monkeypatch, "backup", {"main": backup})
    model: Any = "acme:main" if named else failing
    runtime = await _runtime(None, model=model)
    chunks = await _all(runtime.process_request(_request("hi")))
    assert [c.type for c in chunks] == [C.ERROR, C.FINAL_RESPONSE]
    error = chunks[0]
    assert isinstance(error, ErrorChunk)
    assert "overloaded" in error.message
    assert _final(chunks).error is not None
    assert (failing.calls, backup.calls) == (1, 0)
    await runtime.shutdown()


async def test_a_tool_turn_of_two_steps_makes_two_calls_on_a_named_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    main = ScriptedModel(
        [ScriptStep(tool_calls=[ToolCall("c1", "double", {"x": 2})], usage=U1), "4."],
        provider_id="acme",
        model_id="main",
    )
    _provider(monkeypatch, "acme", {"main": main})
    runtime = await _runtime(None, model="acme:main", tools=[double])
    final = _final(await _all(runtime.process_request(_request("double 2"))))
    assert final.final_response_text == "4."
    assert main.calls == 2
    await runtime.shutdown()


@pytest.mark.parametrize(
    ("response_format", "json_mode", "schema"),
    [
        ({"type": "json_object"}, True, None),
        (
            {"type": "json_schema", "json_schema": {"name": "n", "schema": {"type": "object"}}},
            None,
            {"type": "object"},
        ),
    ],
)
async def test_a_requests_response_format_reaches_the_provider(
    response_format: dict[str, Any], json_mode: bool | None, schema: dict[str, Any] | None
) -> None:
    # "the temperature, topP, maxTokens and responseFormat of a processRequest() call reach
    # the provider".
    model = ScriptedModel(["{}"])
    runtime = await _runtime(model)
    options = {"response_format": response_format}
    await _all(runtime.process_request(_request("json please", options=options)))
    sent = model.requests[0].options
    assert (sent.json_mode, sent.response_schema) == (json_mode, schema)
    await runtime.shutdown()


async def test_a_requests_preferred_model_id_picks_the_turns_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # "and its preferredModelId picks the turn's model".
    main = ScriptedModel(["from main"], provider_id="acme", model_id="main")
    alt = ScriptedModel(["from alt"], provider_id="acme", model_id="alt")
    _provider(monkeypatch, "acme", {"main": main, "alt": alt})
    runtime = await _runtime(None, model="acme:main")
    chunks = await _all(
        runtime.process_request(_request("hi", options={"preferred_model_id": "alt"}))
    )
    assert _final(chunks).final_response_text == "from alt"
    assert (main.calls, alt.calls) == (0, 1)
    await runtime.shutdown()


# -- Output stream: FINAL_RESPONSE ------------------------------------------------------------


async def test_final_response_carries_the_turns_usage_calls_and_text() -> None:
    # "the turn's usage reaches the runtime stream on FINAL_RESPONSE.usage"; "The orchestrator
    # builds the turn's FINAL_RESPONSE from the GMIOutput the turn returns" (its text, calls,
    # usage, error and RAG sources, and exactly one FINAL_RESPONSE).
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c1", "double", {"x": 21})], usage=U1),
            ScriptStep(text="It is 42.", usage=U2),
        ]
    )
    runtime = await _runtime(model, tools=[double])
    chunks = await _all(runtime.process_request(_request("double 21")))
    final = _final(chunks)
    assert final.usage == U1 + U2
    assert final.final_tool_calls == (ToolCall("c1", "double", {"x": 21}),)
    assert final.final_response_text == "It is 42."
    assert (final.is_final, final.error, final.rag_sources) == (True, None, ())
    assert (final.persona_id, final.gmi_instance_id) == ("helper", chunks[0].gmi_instance_id)
    assert final.active_persona_details == {"id": "helper", "name": "Helper"}
    assert [c.type for c in chunks].count(C.FINAL_RESPONSE) == 1
    await runtime.shutdown()


# -- the IGMI pause paragraph: the built-in GMI's external tools (DESIGN §5.24) ----------------


def _pause_step(call_id: str) -> ScriptStep:
    return ScriptStep(tool_calls=[ToolCall(call_id, "weather", {})])


def _continue(runtime: AgentOS, how: str, pause: Any, call_id: str) -> Any:
    """The host's result for ``call_id`` through one of the three continuation calls."""
    result = ToolResult(call_id, "weather", "sunny")
    if how == "handle_tool_result":
        return runtime.handle_tool_result("s1", "user-42", call_id, "weather", "sunny")
    if how == "handle_tool_results":
        return runtime.handle_tool_results("s1", "user-42", [result])
    return runtime.resume_external_tool_request(pause, [result])


@pytest.mark.parametrize(
    "how", ["handle_tool_result", "handle_tool_results", "resume_external_tool_request"]
)
async def test_a_continuation_that_stops_again_is_saved_and_announced(how: str) -> None:
    # "the runtime saves the pending request and streams an actionable TOOL_CALL_REQUEST
    # (executionMode: 'external') for them, on a turn and on a continuation through
    # handleToolResult(), handleToolResults() or resumeExternalToolRequest() alike".
    model = ScriptedModel([_pause_step("w1"), _pause_step("w2"), "Sunny both days."])
    runtime = await _runtime(model, external_tools=[WEATHER])
    await _all(runtime.process_request(_request("weather today and tomorrow?")))
    first = await runtime.get_pending_external_tool_request("s1", user_id="user-42")
    assert first is not None
    chunks = await _all(_continue(runtime, how, first, "w1"))
    assert [c.type for c in chunks] == [C.TOOL_CALL_REQUEST]
    request = chunks[0]
    assert isinstance(request, ToolCallRequestChunk)
    assert (request.actionable, request.execution_mode) == (True, "external")
    assert request.tool_calls == (ToolCall("w2", "weather", {}),)
    second = await runtime.get_pending_external_tool_request("s1", user_id="user-42")
    assert second is not None
    assert second.tool_call_ids == ("w2",)
    final = _final(await _all(_continue(runtime, how, second, "w2")))
    assert final.final_response_text == "Sunny both days."
    assert await runtime.get_pending_external_tool_request("s1", user_id="user-42") is None
    await runtime.shutdown()


async def test_the_host_reads_the_request_after_the_pause_is_saved() -> None:
    # "When the output stops the turn, the host reads one request, after the pause is saved,
    # naming the calls the turn saved"; the host stops reading at that request.
    model = ScriptedModel(
        [ScriptStep(tool_calls=[ToolCall("w1", "weather", {}), ToolCall("w2", "weather", {})])]
    )
    runtime = await _runtime(model, external_tools=[WEATHER])
    requests: list[ToolCallRequestChunk] = []
    async for chunk in runtime.process_request(_request("weather?")):
        if isinstance(chunk, ToolCallRequestChunk) and chunk.actionable:
            requests.append(chunk)
            pause = await runtime.get_pending_external_tool_request("s1", user_id="user-42")
            assert pause is not None
            assert pause.tool_call_ids == tuple(call.id for call in chunk.tool_calls)
            break  # a host stops reading at the first request it acts on
    assert len(requests) == 1
    assert [c.id for c in requests[0].tool_calls] == ["w1", "w2"]
    await runtime.shutdown()


async def test_the_conversation_answers_every_call_of_a_pause() -> None:
    # "an error result for each call the host left out (isError: true, errorDetails.code
    # EXTERNAL_TOOL_NOT_RUN), so its own history answers every call of the pause, as the
    # conversation does".
    both = [ToolCall("w1", "weather", {}), ToolCall("w2", "weather", {})]
    model = ScriptedModel([ScriptStep(tool_calls=both), "Only today is known."])
    runtime = await _runtime(model, external_tools=[WEATHER])
    await _all(runtime.process_request(_request("weather?")))
    await _all(runtime.handle_tool_results("s1", "user-42", [ToolResult("w1", "weather", "sun")]))
    stored = await runtime.conversation("s1", user_id="user-42")
    answers = [m.tool_result for m in stored if m.role is Role.TOOL]
    assert [(r.tool_call_id, r.is_error) for r in answers if r is not None] == [
        ("w1", False),
        ("w2", True),
    ]
    left_out = answers[1]
    assert left_out is not None
    assert left_out.error_details is not None
    assert left_out.error_details["code"] == "EXTERNAL_TOOL_NOT_RUN"
    sent = [m.tool_result for m in model.requests[1].messages if m.role is Role.TOOL]
    assert [r.tool_call_id for r in sent if r is not None] == ["w1", "w2"]
    await runtime.shutdown()


async def test_a_gmi_tool_round_is_reported_with_its_refused_calls_and_saves_no_pause() -> None:
    # "GMI runs the calls of its tool rounds itself and returns a final output, whose toolCalls
    # list the calls of those rounds, the calls the tool-call gate refused included; the
    # runtime reports them in FINAL_RESPONSE.finalToolCalls, saves no pending request for them,
    # and keeps only the reply in the conversation."
    @tool(name="send_email", has_side_effects=True)
    def send_email(to: str) -> str:
        """Send an email."""
        return "sent"

    calls = [ToolCall("c1", "double", {"x": 1}), ToolCall("c2", "send_email", {"to": "ceo"})]
    model = ScriptedModel([ScriptStep(tool_calls=calls), "One done, one refused."])
    runtime = await _runtime(
        model, tools=[double, send_email], tool_approver=lambda call, _tool, _context: False
    )
    chunks = await _all(runtime.process_request(_request("do both")))
    final = _final(chunks)
    assert final.final_tool_calls == tuple(calls)
    assert not any(isinstance(c, ToolCallRequestChunk) and c.actionable for c in chunks)
    assert await runtime.get_pending_external_tool_request("s1", user_id="user-42") is None
    stored = await runtime.conversation("s1", user_id="user-42")
    assert [(m.role, m.text) for m in stored] == [
        (Role.USER, "do both"),
        (Role.ASSISTANT, "One done, one refused."),
    ]
    await runtime.shutdown()


async def test_a_continuations_final_response_carries_the_fields_a_turns_does() -> None:
    # "A continuation's output reaches the stream as a turn's does: ... and the FINAL_RESPONSE
    # with the fields a turn's carries".
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("w1", "weather", {})], usage=U1),
            ScriptStep(tool_calls=[ToolCall("c1", "double", {"x": 3})], usage=U2),
            ScriptStep(text="Sunny, and 6.", usage=U1),
        ]
    )
    runtime = await _runtime(model, external_tools=[WEATHER], tools=[double])
    await _all(runtime.process_request(_request("weather and double 3?")))
    chunks = await _all(
        runtime.handle_tool_results("s1", "user-42", [ToolResult("w1", "weather", "sun")])
    )
    final = _final(chunks)
    assert final.final_response_text == "Sunny, and 6."
    assert final.usage == U2 + U1  # the continuation's own steps
    assert final.final_tool_calls == (ToolCall("c1", "double", {"x": 3}),)
    assert (final.is_final, final.error, final.persona_id) == (True, None, "helper")
    await runtime.shutdown()


# -- the IGMI pause paragraph: a host's own GMI ------------------------------------------------


def _stopping(
    streamed: list[GMIOutputChunk], calls: list[ToolCall]
) -> tuple[list[GMIOutputChunk], GMIOutput]:
    return streamed, GMIOutput(is_final=False, tool_calls=calls)


async def test_an_output_that_does_not_stop_the_turn_lets_no_streamed_request_through() -> None:
    # "When the output does not stop the turn, none of them reaches the host"; "Every other
    # output ends the turn or the continuation with one FINAL_RESPONSE, marked final or not."
    streamed = [
        _chunk(G.TOOL_CALL_REQUEST, [CALL_A], metadata=dict(EXTERNAL)),
        _chunk(G.TEXT_DELTA, "No approval needed."),
    ]
    for output in (
        GMIOutput(response_text="No approval needed.", tool_calls=[CALL_A]),
        GMIOutput(is_final=False, response_text="No approval needed."),
    ):
        factory = _Factory(_BatchGMI, turn=(streamed, output))
        runtime = await _runtime(None, igmi_factory=factory)
        chunks = await _all(runtime.process_request(_request("pay 10")))
        assert [c.type for c in chunks] == [C.TEXT_DELTA, C.FINAL_RESPONSE]
        assert _final(chunks).is_final is output.is_final
        assert await runtime.get_pending_external_tool_request("s1", user_id="user-42") is None
        await runtime.shutdown()


async def test_every_call_of_a_non_final_output_is_one_the_host_runs() -> None:
    # "A streamed request for calls the IGMI runs itself streams as it comes"; "The runtime
    # reads every call of a non-final output as one the host runs"; the IGMI's streamed
    # request is kept only when it names exactly the saved calls.
    streamed = [
        _chunk(G.TOOL_CALL_REQUEST, [CALL_A], metadata={**INTERNAL, "rationale": "mine"}),
        _chunk(G.TOOL_CALL_REQUEST, [CALL_B], metadata={**EXTERNAL, "rationale": "only b"}),
    ]
    factory = _Factory(_BatchGMI, turn=_stopping(streamed, [CALL_A, CALL_B]))
    runtime = await _runtime(None, igmi_factory=factory)
    chunks = await _all(runtime.process_request(_request("pay 10")))
    assert [c.type for c in chunks] == [C.TOOL_CALL_REQUEST, C.TOOL_CALL_REQUEST]
    own, host = chunks
    assert isinstance(own, ToolCallRequestChunk)
    assert isinstance(host, ToolCallRequestChunk)
    assert (own.tool_calls, own.actionable, own.rationale) == ((CALL_A,), False, "mine")
    assert (host.tool_calls, host.actionable) == ((CALL_A, CALL_B), True)
    assert host.rationale == "Agent requires tool execution."  # "only b" named other calls
    pause = await runtime.get_pending_external_tool_request("s1", user_id="user-42")
    assert pause is not None
    assert pause.tool_call_ids == ("a", "b")
    await runtime.shutdown()


async def test_an_igmi_request_naming_no_call_never_reaches_the_host() -> None:
    # "a TOOL_CALL_REQUEST that names no call is not forwarded"; "one that names no call never
    # reaches the host".
    streamed = [
        _chunk(G.TOOL_CALL_REQUEST, [], metadata=dict(INTERNAL)),
        _chunk(G.TOOL_CALL_REQUEST, [], metadata=dict(EXTERNAL)),
        _chunk(G.TEXT_DELTA, "Nothing to run."),
    ]
    factory = _Factory(_BatchGMI, turn=(streamed, GMIOutput(response_text="Nothing to run.")))
    runtime = await _runtime(None, igmi_factory=factory)
    chunks = await _all(runtime.process_request(_request("anything?")))
    assert [c.type for c in chunks] == [C.TEXT_DELTA, C.FINAL_RESPONSE]
    await runtime.shutdown()


async def test_an_igmi_with_only_handle_tool_result_receives_the_hosts_result_alone() -> None:
    # "one that implements only handleToolResult() receives the host's result alone".
    factory = _Factory(_SingleGMI, turn=_stopping([], [CALL_A, CALL_B]))
    runtime = await _runtime(None, igmi_factory=factory)
    await _all(runtime.process_request(_request("pay 10")))
    chunks = await _all(runtime.handle_tool_result("s1", "user-42", "a", "approve", "yes"))
    assert _final(chunks).final_response_text == "Done."
    assert factory.made[0].received == [[ToolResult("a", "approve", "yes")]]
    await runtime.shutdown()


async def test_an_igmi_with_handle_tool_results_gets_an_error_for_each_call_left_out() -> None:
    # "an IGMI that implements handleToolResults() receives, after the host's results, an error
    # result for each call the host left out (isError: true, errorDetails.code
    # EXTERNAL_TOOL_NOT_RUN)".
    factory = _Factory(_BatchGMI, turn=_stopping([], [CALL_A, CALL_B]))
    runtime = await _runtime(None, igmi_factory=factory)
    await _all(runtime.process_request(_request("pay 10")))
    await _all(runtime.handle_tool_results("s1", "user-42", [ToolResult("a", "approve", "yes")]))
    (received,) = factory.made[0].received
    try:
        assert [(r.tool_call_id, r.is_error) for r in received] == [("a", False), ("b", True)]
        assert (received[1].error_details or {}).get("code") == "EXTERNAL_TOOL_NOT_RUN"
    finally:
        await runtime.shutdown()


# -- the IGMI pause paragraph: a continuation's RAG sources ------------------------------------


class _CountingAugmentor(SQLiteRetrievalAugmentor):
    """Counts the retrievals it serves."""

    def __init__(self) -> None:
        super().__init__(HashEmbedder())
        self.queries: list[str] = []

    async def retrieve_context(self, query: str, options: RagRetrievalOptions) -> RetrievalResult:
        self.queries.append(query)
        return await super().retrieve_context(query, options)


async def _counting_augmentor() -> _CountingAugmentor:
    augmentor = _CountingAugmentor()
    await augmentor.ingest_documents(
        [IngestedDocument("runbook-db", "Restart the database with pg_ctl restart.", "ops")]
    )
    return augmentor


LIBRARIAN = PersonaDefinition.model_validate(
    {
        "id": "librarian",
        "name": "Librarian",
        "baseSystemPrompt": "You answer from the runbooks.",
        "memoryConfig": {"ragConfig": {"enabled": True, "defaultRetrievalTopK": 1}},
    }
)


async def _rag_runtime(model: ScriptedModel, augmentor: _CountingAugmentor) -> AgentOS:
    return await _runtime(
        model,
        personas=[LIBRARIAN],
        default_persona_id="librarian",
        retrieval_augmentor=augmentor,
        external_tools=[WEATHER],
    )


async def test_a_continuation_retrieves_nothing_and_carries_its_turns_sources() -> None:
    # "GMI retrieves nothing in a continuation, so its continuation output carries the
    # ragSources of the user turn it continues, when the same GMI ran that turn".
    augmentor = await _counting_augmentor()
    runtime = await _rag_runtime(ScriptedModel([_pause_step("w1"), "Restart it."]), augmentor)
    await _all(runtime.process_request(_request("How do I restart the database?")))
    assert augmentor.queries == ["How do I restart the database?"]
    chunks = await _all(runtime.handle_tool_result("s1", "user-42", "w1", "weather", "ok"))
    assert augmentor.queries == ["How do I restart the database?"]  # none in the continuation
    kinds = [C.METADATA_UPDATE, C.TEXT_DELTA, C.TEXT_DELTA, C.FINAL_RESPONSE]
    assert [c.type for c in chunks] == kinds  # the sources before the text, as a turn's
    update = chunks[0]
    assert isinstance(update, MetadataUpdateChunk)
    assert [s.id for s in update.updates["rag_sources"]] == [
        s.id for s in _final(chunks).rag_sources
    ]
    assert _final(chunks).rag_sources[0].id.startswith("runbook-db")
    await runtime.shutdown()
    augmentor.close()


async def test_a_continuation_on_a_replaced_gmi_carries_no_sources() -> None:
    # "a continuation resumed on another GMI (after a restart, or once the session's GMI was
    # replaced) carries none."
    augmentor = await _counting_augmentor()
    runtime = await _rag_runtime(ScriptedModel([_pause_step("w1"), "Restart it."]), augmentor)
    await _all(runtime.process_request(_request("How do I restart the database?")))
    ran = runtime.gmi_manager.gmi_for_session("s1")
    assert ran is not None
    assert await runtime.gmi_manager.deactivate_gmi_for_session("s1") is True
    chunks = await _all(runtime.handle_tool_result("s1", "user-42", "w1", "weather", "ok"))
    final = _final(chunks)
    assert final.final_response_text == "Restart it."
    assert final.gmi_instance_id != ran.gmi_id
    assert C.METADATA_UPDATE not in [c.type for c in chunks]
    assert final.rag_sources == ()
    await runtime.shutdown()
    augmentor.close()


# -- GMIs from agent(): the path without the runtime ------------------------------------------


async def test_a_gmi_agent_needs_no_runtime_and_no_persona_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "every session it opens is served by a GMI built in process from the agent's options: no
    # AgentOS runtime, no persona files, no GMIManager."
    monkeypatch.chdir(tmp_path)  # no ./personas here
    model = ScriptedModel(["Recursion calls itself."])
    tutor = gmi(model=model, instructions="You are a patient CS tutor.")
    reply = await tutor.session("lesson-1").send("Explain recursion.")
    assert reply.text == "Recursion calls itself."
    assert _system(model.requests[0])[0] == "You are a patient CS tutor."
    assert not (tmp_path / "personas").exists()
    await tutor.close()

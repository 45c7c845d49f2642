"""gmi() session sends with options, abort signals, structured answers, a memory provider and
cognitive memory (spec: GMIs from agent() → Sessions, memoryProvider, Cognitive memory)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from pydantic import BaseModel

from agentos.api.abort import AbortError, AbortSignal
from agentos.api.gmi_agent import gmi
from agentos.api.memory_provider import MemoryProviderWarning
from agentos.api.structured import ObjectGenerationError
from agentos.core.errors import GMIError
from agentos.core.messages import Role, ToolCall
from agentos.llm.budget import SpendBudget
from agentos.storage.unfinished_turns import is_partial
from agentos.testing import HashEmbedder, ScriptedModel, ScriptStep
from fakes.tools import add


class Answer(BaseModel):
    city: str
    country: str


async def test_send_options_reach_the_request_and_unknown_ones_are_refused() -> None:
    model = ScriptedModel(["a"])
    session = gmi(model=model, tools=[add]).session("s")
    await session.send("hi", tool_choice="required", max_tokens=50, request_timeout=3.0)
    options = model.requests[0].options
    assert (options.tool_choice, options.max_tokens, options.request_timeout) == (
        "required",
        50,
        3.0,
    )
    with pytest.raises(GMIError, match="temperatur") as caught:
        session.stream("x", temperatur=0.3)
    assert caught.value.details["option"] == "temperatur"


async def test_a_structured_send_returns_the_validated_object() -> None:
    model = ScriptedModel(['{"city": "Paris", "country": "France"}'])
    session = gmi(model=model, tools=[add]).session("s")
    result = await session.send("Where is the Louvre?", response_schema=Answer)
    assert result.object == Answer(city="Paris", country="France")
    sent = model.requests[0]
    assert sent.tools == []  # a schema answer is asked for without tools
    assert sent.options.response_schema == Answer.model_json_schema()
    assert sent.options.schema_name == "Answer"


async def test_a_structured_answer_that_does_not_parse_rejects_and_leaves_nothing() -> None:
    session = gmi(model=ScriptedModel(["not json"])).session("s")
    with pytest.raises(ObjectGenerationError):
        await session.send("Where?", response_schema=Answer)
    assert await session.messages() == []


async def test_an_abort_signal_stops_the_turn_and_the_session_stays_open() -> None:
    gate = asyncio.Event()
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c1", "add", {"a": 1, "b": 1})]),
            ScriptStep(text="never", wait=gate),
            "later",
        ]
    )
    session = gmi(model=model, tools=[add]).session("s")
    signal = AbortSignal()

    async def abort_soon() -> None:
        while len(model.requests) < 2:  # noqa: ASYNC110 - polling the scripted model's log
            await asyncio.sleep(0)
        signal.abort(TimeoutError("user left"))

    aborter = asyncio.create_task(abort_soon())
    with pytest.raises(TimeoutError, match="user left"):
        await session.send("count", abort_signal=signal)
    await aborter
    stored = await session.messages()
    assert [m.role for m in stored] == [Role.USER, Role.ASSISTANT, Role.TOOL]
    assert is_partial(stored[-1])
    result = await session.send("again")  # the session stays open
    assert result.text == "later"
    already = AbortSignal()
    already.abort()
    with pytest.raises(AbortError):
        await session.send("never starts", abort_signal=already)
    assert len(model.requests) == 3


async def test_a_budget_passed_to_send_replaces_the_agents_for_that_call() -> None:
    model = ScriptedModel(["a", "b"])
    agent = gmi(model=model, budget={"max_total_tokens": 1_000_000})
    session = agent.session("s")
    tight = SpendBudget(max_total_tokens=1)
    with pytest.raises(GMIError) as caught:
        await session.send("hello there", budget=tight)
    assert caught.value.code == "LLM_PROVIDER_ERROR"
    await session.send("hello there")  # the agent's own budget again
    assert agent.budget is not None
    assert agent.budget.spent_tokens > 0


class _Provider:
    def __init__(self) -> None:
        self.asked: list[str] = []
        self.observed: list[tuple[str, str]] = []

    async def get_context(self, query: str, **_: Any) -> str | None:
        self.asked.append(query)
        return "The user is called Ada."

    async def observe(self, user_text: str, reply_text: str, **_: Any) -> None:
        self.observed.append((user_text, reply_text))


async def test_a_memory_provider_context_goes_into_every_call_of_the_turn() -> None:
    provider = _Provider()
    model = ScriptedModel([ScriptStep(tool_calls=[ToolCall("c", "add", {"a": 1, "b": 2})]), "3"])
    session = gmi(model=model, tools=[add], instructions="Calc.", memory_provider=provider).session(
        "s"
    )
    await session.send("1+2?")
    assert provider.asked == ["1+2?"]
    for request in model.requests:
        systems = [m.text for m in request.messages if m.role is Role.SYSTEM]
        assert systems[-1] == "The user is called Ada."
    assert provider.observed == [("1+2?", "3")]


async def test_with_cognitive_memory_on_the_provider_context_is_skipped_with_a_warning() -> None:
    provider = _Provider()
    with pytest.warns(MemoryProviderWarning, match="skipped"):
        agent = gmi(
            model=ScriptedModel(["ok"]),
            memory={"embedder": HashEmbedder(64)},
            memory_provider=provider,
        )
    await agent.session("s").send("hi")
    assert provider.asked == []
    assert provider.observed == [("hi", "ok")]
    await agent.close()


async def test_cognitive_memory_is_shared_by_sessions_of_one_user() -> None:
    model = ScriptedModel(["Noted.", "You are allergic to peanuts."])
    agent = gmi(model=model, memory={"embedder": HashEmbedder(256)})
    await agent.session("s1", user_id="ada").send("I am allergic to peanuts.")
    await agent.session("s2", user_id="ada").send("What am I allergic to?")
    systems = "\n".join(m.text for m in model.requests[1].messages if m.role is Role.SYSTEM)
    assert "I am allergic to peanuts." in systems
    await agent.close()


async def test_generate_takes_its_per_call_options_and_refuses_others() -> None:
    model = ScriptedModel(["a", '{"city": "Rome", "country": "Italy"}'])
    other = ScriptedModel(["from the other model"])
    agent = gmi(model=model, cognition="full")
    result = await agent.generate("hi", temperature=0.2, max_tokens=20, max_steps=1)
    assert result.text == "a"
    assert (model.requests[0].options.temperature, model.requests[0].options.max_tokens) == (
        0.2,
        20,
    )
    answer = await agent.generate("Where is the Colosseum?", response_schema=Answer)
    assert answer.object == Answer(city="Rome", country="Italy")
    assert (await agent.generate("x", model=other)).text == "from the other model"
    with pytest.raises(GMIError) as caught:
        agent.stream("x", seed=3)
    assert caught.value.details["option"] == "seed"
    assert agent.usage().total_tokens > 0  # calls count in the agent's usage


async def test_a_structured_send_shows_on_before_generation_the_schema_message() -> None:
    from agentos.llm.model import CompletionOptions

    model = ScriptedModel(['{"city": "Paris", "country": "France"}'], schema_in_payload=False)
    seen: list[list[tuple[Role, str]]] = []

    def before(ctx: Any) -> None:
        seen.append([(m.role, m.text) for m in ctx.messages])

    session = gmi(model=model, instructions="Be brief.", on_before_generation=before).session("s")
    result = await session.send("Where is the Louvre?", response_schema=Answer)
    assert result.object == Answer(city="Paris", country="France")
    instruction = model.schema_prompt(
        CompletionOptions(response_schema=Answer.model_json_schema(), schema_name="Answer")
    )
    assert instruction is not None
    roles = [role for role, _ in seen[0]]
    texts = [text for _, text in seen[0]]
    assert instruction in texts
    # After the leading system messages, before the conversation.
    at = texts.index(instruction)
    assert all(role is Role.SYSTEM for role in roles[:at])
    assert roles[at + 1 :] == [Role.USER]
    assert [m.text for m in model.requests[0].messages].count(instruction) == 1


async def test_a_block_label_is_kept_on_the_turns_stored_messages() -> None:
    session = gmi(model=ScriptedModel(["a"])).session("s")
    await session.send("hi", block_label="onboarding")
    assert [m.metadata.get("block_label") for m in await session.messages()] == [
        "onboarding",
        "onboarding",
    ]


def test_router_params_and_host_policy_are_named_as_not_applied() -> None:
    from agentos.api.warnings import UnappliedOptionsWarning

    with pytest.warns(UnappliedOptionsWarning, match="router_params, host_policy"):
        gmi(model=ScriptedModel([]), router_params={"x": 1}, host_policy={"y": 2})


class _FailsOnce(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(64)
        self.calls = 0

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        if self.calls == 1:
            raise ConnectionError("model 'nomic-embed-text' not found; pull it first")
        return await super().embed(texts)


async def test_a_memory_that_cannot_embed_fails_the_first_turn_and_is_built_again() -> None:
    model = ScriptedModel(["ok"])
    agent = gmi(model=model, memory={"embedder": _FailsOnce()})
    session = agent.session("s")
    with pytest.raises(GMIError, match=r"memory\.embedding: hash-embedder cannot embed") as caught:
        await session.send("hi")
    assert caught.value.details["option"] == "memory.embedding"
    assert model.requests == []  # nothing was sent
    assert (await session.send("hi")).text == "ok"  # the failed build was not kept
    assert agent.memory is not None
    await agent.close()


async def test_consolidation_runs_on_the_agents_interval_once_enabled() -> None:
    cycling = gmi(
        model=ScriptedModel(["ok"]),
        memory={"embedder": HashEmbedder(64), "consolidation": {"enabled": True, "interval": 90}},
    )
    await cycling.session("s").send("hi")
    memory = cycling.memory
    assert memory is not None
    assert memory.consolidation_interval == 90  # DESIGN.md §5.10: the interval is applied
    await cycling.close()
    assert memory.consolidation_interval is None  # close() stopped it
    still = gmi(model=ScriptedModel(["ok"]), memory={"embedder": HashEmbedder(64)})
    await still.session("s").send("hi")
    assert still.memory is not None
    assert still.memory.consolidation_interval is None  # not enabled: no cycle runs
    await still.close()

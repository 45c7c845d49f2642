"""The plain `agent()` (no runtime, or ``runtime="legacy"``): prompt, tools, sessions, memory.

Spec: the first table and the paragraph before it, "What a GMI adds over a plain agent", the
memoryProvider paragraph, the capability contract; reference §1.27 (buildSystemPrompt,
maxSteps 5, chainOfThought on by default, SessionHistoryBuffer).
"""

from __future__ import annotations

import asyncio
import importlib.util
import warnings
from collections.abc import Sequence
from typing import Any

import pytest

from agentos import (
    DEFAULT_COT_INSTRUCTION,
    GMIError,
    GMIErrorCode,
    Message,
    ModelUsage,
    Role,
    ToolCall,
    tool,
)
from agentos.api import (
    AgentSession,
    MemoryProviderWarning,
    PlainAgent,
    TextDeltaPart,
    agent,
)
from agentos.api.warnings import UnappliedOptionsWarning
from agentos.core.errors import ContextWindowExceededError
from agentos.llm.budget import SpendBudget
from agentos.persona.personality import PERSONALITY_HEADING, personality_section
from agentos.testing import ScriptedModel, ScriptStep

USAGE = ModelUsage(prompt_tokens=10, completion_tokens=5)


@tool
def lookup(city: str) -> str:
    """Look a city's weather up."""
    return f"sunny in {city}"


def _texts(messages: Sequence[Message]) -> list[tuple[Role, str]]:
    return [(message.role, message.text) for message in messages]


def _agent(model: ScriptedModel, **options: Any) -> PlainAgent:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a test agent sets nothing the contract warns about
        built = agent(model=model, **options)
    assert isinstance(built, PlainAgent)
    return built


class Memory:
    """A memory provider that records its calls."""

    def __init__(self, context: str | None = "The user likes tea.", delay: float = 0.0) -> None:
        self.context = context
        self.delay = delay
        self.queries: list[tuple[str, str | None, str | None]] = []
        self.observed: list[tuple[str, str, str | None]] = []
        self.fail = False

    async def get_context(
        self, query: str, *, session_id: str | None, user_id: str | None, **_: Any
    ) -> str | None:
        self.queries.append((query, session_id, user_id))
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.fail:
            raise RuntimeError("memory down")
        return self.context

    async def observe(
        self, user_text: str, reply_text: str, *, session_id: str | None, **_: Any
    ) -> None:
        self.observed.append((user_text, reply_text, session_id))


# --- construction --------------------------------------------------------------------------


async def test_system_prompt_holds_instructions_name_and_personality() -> None:
    model = ScriptedModel(["Hello."])
    built = _agent(
        model,
        instructions="You are a patient tutor.",
        name="Ada",
        personality={"openness": 0.9},
    )
    section = personality_section({"openness": 0.9})
    assert section is not None
    assert section.startswith(PERSONALITY_HEADING)
    assert built.system_prompt == f"You are a patient tutor.\n\nAssistant name: Ada.\n\n{section}"
    await built.generate("Hi")
    sent = model.requests[0].messages
    assert _texts(sent) == [(Role.SYSTEM, built.system_prompt), (Role.USER, "Hi")]


def test_one_warning_names_the_unapplied_options() -> None:
    with pytest.warns(UnappliedOptionsWarning) as caught:
        agent(model=ScriptedModel([]), guardrails=["pii"], rag={"enabled": True}, memory=True)
    assert len(caught) == 1
    warning = caught[0].message
    assert isinstance(warning, UnappliedOptionsWarning)
    assert warning.options == ("guardrails", "rag", "memory")
    assert caught[0].filename == __file__  # it points at the caller of agent()


def test_no_warning_without_unapplied_options() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent(model=ScriptedModel([]), instructions="Hi", runtime="legacy")


@pytest.mark.parametrize(
    ("options", "option"),
    [
        ({"runtime": "full"}, "runtime"),
        ({"max_steps": 0}, "max_steps"),
        ({"instrutions": "x"}, "instrutions"),
        ({"memory_provider": object()}, "memory_provider"),
        ({"store": object()}, "store"),
    ],
)
def test_bad_options_raise_naming_the_option(options: dict[str, Any], option: str) -> None:
    with pytest.raises(GMIError) as caught:
        agent(model=ScriptedModel([]), **options)
    assert caught.value.details["option"] == option


@pytest.mark.skipif(
    importlib.util.find_spec("agentos.api.gmi_agent") is None,
    reason="agentos.api.gmi_agent (gmi()) is not written yet",
)
def test_runtime_gmi_returns_a_gmi_agent() -> None:
    from agentos.api import gmi_agent  # type: ignore[attr-defined, unused-ignore]

    built = agent(runtime="gmi", model=ScriptedModel(["Hi."]))
    assert not isinstance(built, PlainAgent)
    assert type(built).__module__ == gmi_agent.__name__


# --- generate() and stream(): no history ---------------------------------------------------


async def test_generate_keeps_no_history_and_counts_usage() -> None:
    model = ScriptedModel([ScriptStep("One.", usage=USAGE), ScriptStep("Two.", usage=USAGE)])
    built = _agent(model, instructions="Be brief.")
    assert (await built.generate("First?")).text == "One."
    streamed = built.stream("Second?")
    assert [part async for part in streamed.text_stream] == ["Two."]
    assert _texts(model.requests[1].messages) == [
        (Role.SYSTEM, "Be brief."),
        (Role.USER, "Second?"),
    ]
    assert built.usage() == USAGE + USAGE
    assert built.usage("any") == ModelUsage.zero()


async def test_per_call_options_apply_and_others_are_refused() -> None:
    model = ScriptedModel(["Fine."])
    built = _agent(model, max_tokens=50)
    await built.generate("Hi", temperature=0.2, max_tokens=10, top_p=0.5, provider=None)
    options = model.requests[0].options
    assert (options.temperature, options.max_tokens, options.top_p) == (0.2, 10, 0.5)
    assert model.calls == 1  # provider=None left the agent's model in place
    with pytest.raises(GMIError) as caught:
        await built.generate("Hi", tools=[lookup])
    assert caught.value.details["option"] == "tools"
    assert "generate()" in str(caught.value)
    with pytest.raises(GMIError) as caught:
        built.session("s").stream("Hi", seed=3)
    assert caught.value.details["option"] == "seed"


async def test_a_call_model_replaces_the_agents() -> None:
    first = ScriptedModel(["From the agent."])
    second = ScriptedModel(["From the call."])
    built = _agent(first)
    assert (await built.generate("Hi", model=second)).text == "From the call."
    assert first.calls == 0


async def test_budget_is_shared_and_replaced_per_call() -> None:
    model = ScriptedModel([ScriptStep("a", usage=USAGE), ScriptStep("b", usage=USAGE)])
    shared = SpendBudget(max_total_tokens=100_000)
    built = _agent(model, budget=shared)
    await built.session("s").send("Hi")
    own = SpendBudget(max_total_tokens=100_000)
    await built.generate("Hi", budget=own)
    assert shared.spent_tokens == 15
    assert own.spent_tokens == 15


# --- tools ---------------------------------------------------------------------------------


async def test_tools_run_with_the_reasoning_instruction_first() -> None:
    model = ScriptedModel(
        [ScriptStep(tool_calls=[ToolCall("c1", "lookup", {"city": "Oslo"})]), "It is sunny."]
    )
    built = _agent(model, instructions="Answer about weather.", tools=[lookup])
    result = await built.session("s").send("Weather in Oslo?")
    assert result.text == "It is sunny."
    assert result.tool_results[0].output == "sunny in Oslo"
    system = model.requests[0].messages[0]
    assert system.text == f"{DEFAULT_COT_INSTRUCTION}\n\nAnswer about weather."
    assert [definition.name for definition in model.requests[0].tools] == ["lookup"]


async def test_chain_of_thought_false_and_max_steps() -> None:
    call = ScriptStep(tool_calls=[ToolCall("c", "lookup", {"city": "Rome"})])
    model = ScriptedModel([call, call])
    built = _agent(model, instructions="Go.", tools=[lookup], chain_of_thought=False, max_steps=2)
    result = await built.generate("Loop")
    assert len(result.steps) == 2
    assert model.requests[0].messages[0].text == "Go."


# --- sessions ------------------------------------------------------------------------------


async def test_session_history_is_kept_and_sent_whole() -> None:
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c1", "lookup", {"city": "Oslo"})]),
            "Sunny in Oslo.",
            "You asked about Oslo.",
        ]
    )
    built = _agent(model, instructions="Sys.", tools=[lookup], chain_of_thought=False)
    session = built.session("chat")
    assert isinstance(session, AgentSession)
    assert built.session("chat") is session
    await session.send("Weather in Oslo?")
    await session.send("What did I ask?")
    stored = await session.messages()
    turn_roles = [Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT, Role.USER, Role.ASSISTANT]
    assert [m.role for m in stored] == turn_roles
    last_request = model.requests[2].messages
    assert _texts(last_request) == [(Role.SYSTEM, "Sys."), *_texts(stored[:4]), _texts(stored)[4]]
    # Another session starts empty.
    other = ScriptedModel(["New."])
    await built.session("other").send("Hi", model=other)
    assert _texts(other.requests[0].messages) == [(Role.SYSTEM, "Sys."), (Role.USER, "Hi")]


async def test_failed_turn_leaves_nothing_and_counts_billed_usage() -> None:
    model = ScriptedModel([ScriptStep.fail(400, "bad request", usage=USAGE), "Fine."])
    built = _agent(model, fallback_providers=[])
    session = built.session("s")
    with pytest.raises(GMIError):
        await session.send("First")
    assert await session.messages() == []
    await session.send("Second")
    assert _texts(await session.messages()) == [(Role.USER, "Second"), (Role.ASSISTANT, "Fine.")]
    assert session.usage().prompt_tokens >= USAGE.prompt_tokens


async def test_stream_settles_after_the_history_is_written() -> None:
    model = ScriptedModel(["Hello there.", "Again."])
    session = _agent(model).session("s")
    streamed = session.stream("Hi")
    parts = [part async for part in streamed.full_stream]
    assert any(isinstance(part, TextDeltaPart) for part in parts)
    assert await streamed.text == "Hello there."
    assert len(await session.messages()) == 2


async def test_history_false_keeps_nothing() -> None:
    model = ScriptedModel(["One.", "Two."])
    session = _agent(model, history=False).session("s")
    await session.send("First")
    await session.send("Second")
    assert await session.messages() == []
    assert _texts(model.requests[1].messages) == [(Role.USER, "Second")]
    with pytest.raises(GMIError) as caught:
        await session.reseed([Message.user("x")])
    assert caught.value.code is GMIErrorCode.INVALID_STATE
    assert session.drain_history_events() == []


async def test_reseed_clear_and_events() -> None:
    model = ScriptedModel(["Ok."])
    session = _agent(model).session("s")
    await session.reseed([Message.user("Earlier"), Message.assistant("Reply")])
    await session.send("Now")
    assert _texts(model.requests[0].messages) == [
        (Role.USER, "Earlier"),
        (Role.ASSISTANT, "Reply"),
        (Role.USER, "Now"),
    ]
    await session.clear()
    assert await session.messages() == []
    kinds = [event.kind.value for event in session.drain_history_events()]
    assert kinds == ["reseeded", "cleared"]


async def test_clear_during_a_turn_discards_its_writes() -> None:
    release = asyncio.Event()
    model = ScriptedModel([ScriptStep("Late.", wait=release), "Next."])
    session = _agent(model).session()
    running = asyncio.create_task(session.send("One"))
    await asyncio.sleep(0.01)
    await session.clear()
    release.set()
    assert (await running).text == "Late."
    assert await session.messages() == []
    assert [event.kind.value for event in session.drain_history_events()] == [
        "cleared",
        "discarded",
    ]


async def test_history_max_tokens_bounds_the_history() -> None:
    model = ScriptedModel(lambda messages, tools, options: "x" * 400)
    session = _agent(model, history={"max_tokens": 100}).session("s")
    for index in range(10):
        await session.send(f"turn {index}")
    assert any(event.kind.value == "evicted" for event in session.drain_history_events())
    assert len(await session.messages()) == 16  # min_keep_sends (8) blocks of two messages


async def test_concurrent_sends_run_one_after_the_other() -> None:
    release = asyncio.Event()
    model = ScriptedModel([ScriptStep("First reply.", wait=release), "Second reply."])
    session = _agent(model).session("s")
    first = asyncio.create_task(session.send("One"))
    second = asyncio.create_task(session.send("Two"))
    await asyncio.sleep(0.01)
    assert model.calls == 1  # the second waits for the first turn
    release.set()
    await asyncio.gather(first, second)
    assert _texts(model.requests[1].messages) == [
        (Role.USER, "One"),
        (Role.ASSISTANT, "First reply."),
        (Role.USER, "Two"),
    ]


async def test_usage_per_session_and_per_agent() -> None:
    model = ScriptedModel([ScriptStep("a", usage=USAGE)] * 4)
    built = _agent(model)
    await built.session("a").send("1")
    await built.session("a").send("2")
    await built.session("b").send("3")
    await built.generate("4")
    assert built.session("a").usage() == USAGE + USAGE
    assert built.usage("a") == USAGE + USAGE
    assert built.usage("b") == USAGE
    assert built.usage() == USAGE + USAGE + USAGE + USAGE


async def test_user_id_is_sent_and_reopening_with_another_raises() -> None:
    model = ScriptedModel(["Hi."])
    built = _agent(model)
    session = built.session("s", user_id="u-1")
    assert built.session("s") is session
    with pytest.raises(GMIError) as caught:
        built.session("s", user_id="u-2")
    assert caught.value.details["option"] == "user_id"
    await session.send("Hello")
    assert model.requests[0].options.user_id == "u-1"


async def test_close_ends_sessions_and_the_agent() -> None:
    model = ScriptedModel(["One.", "Two."])
    built = _agent(model)
    session = built.session("s")
    await session.send("Hi")
    await session.close()
    assert session.closed
    with pytest.raises(GMIError):
        await session.send("Again")
    fresh = built.session("s")
    assert fresh is not session
    assert await fresh.messages() == []
    await built.close()
    assert fresh.closed
    with pytest.raises(GMIError) as caught:
        await built.generate("Hi")
    assert caught.value.code is GMIErrorCode.INVALID_STATE


# --- the context window --------------------------------------------------------------------


async def test_context_window_exceeded_before_any_request() -> None:
    # The catalog knows local:smollm2-135m-instruct (8,192 tokens).
    model = ScriptedModel(["Ok."], provider_id="local", model_id="smollm2-135m-instruct")
    session = _agent(model, instructions="Sys.").session("s")
    await session.reseed([Message.user("a" * 20_000), Message.assistant("b" * 13_000)])
    with pytest.raises(ContextWindowExceededError) as caught:
        await session.send("c" * 10)
    assert model.calls == 0
    details = caught.value.details
    assert details["context_window"] == 8_192
    assert details["provider"] == "local"
    assert details["required_tokens"] > 8_192
    assert len(await session.messages()) == 2  # nothing of the refused turn is kept
    # The same history on a model the catalog does not know is sent, whole.
    unknown = ScriptedModel(["Ok."])
    await session.send("c", model=unknown)
    assert len(unknown.requests[0].messages) == 4


async def test_a_fitting_request_on_a_known_model_is_sent() -> None:
    model = ScriptedModel(["Ok."], provider_id="openai", model_id="gpt-4o-mini")
    session = _agent(model).session("s")
    await session.reseed([Message.user("a" * 40_000), Message.assistant("b")])
    assert (await session.send("Hi")).text == "Ok."


# --- the memory provider -------------------------------------------------------------------


async def test_memory_context_follows_the_leading_system_messages_on_every_call() -> None:
    memory = Memory()
    model = ScriptedModel(
        [ScriptStep(tool_calls=[ToolCall("c1", "lookup", {"city": "Oslo"})]), "Tea and sun."]
    )
    built = _agent(
        model, instructions="Sys.", tools=[lookup], chain_of_thought=False, memory_provider=memory
    )
    session = built.session("s", user_id="u")
    await session.reseed([Message.system("Pinned."), Message.user("Old"), Message.assistant("Ok")])
    await session.send("Weather?")
    assert memory.queries == [("Weather?", "s", "u")]  # once per turn, not per call
    for request in model.requests:
        assert _texts(request.messages)[:4] == [
            (Role.SYSTEM, "Sys."),
            (Role.SYSTEM, "Pinned."),
            (Role.SYSTEM, "The user likes tea."),
            (Role.USER, "Old"),
        ]
    assert memory.observed == [("Weather?", "Tea and sun.", "s")]
    # The context is not stored in the history.
    assert "The user likes tea." not in [m.text for m in await session.messages()]


async def test_memory_context_right_after_the_system_prompt() -> None:
    memory = Memory()
    model = ScriptedModel(["Ok."])
    await _agent(model, instructions="Sys.", memory_provider=memory).generate("Hi")
    assert _texts(model.requests[0].messages) == [
        (Role.SYSTEM, "Sys."),
        (Role.SYSTEM, "The user likes tea."),
        (Role.USER, "Hi"),
    ]
    assert memory.queries == [("Hi", None, None)]


async def test_memory_timeout_and_error_are_warned_and_the_turn_runs() -> None:
    slow = Memory(delay=1.0)
    model = ScriptedModel(["One.", "Two."])
    built = _agent(
        model, memory_provider=slow, memory_provider_options={"timeout_ms": 20}, instructions="S"
    )
    with pytest.warns(MemoryProviderWarning, match="exceeded 20 ms"):
        result = await built.session("s").send("Hi")
    assert result.text == "One."
    assert _texts(model.requests[0].messages) == [(Role.SYSTEM, "S"), (Role.USER, "Hi")]
    slow.delay = 0.0
    slow.fail = True
    with pytest.warns(MemoryProviderWarning, match="memory down"):
        await built.session("s").send("Again")
    assert len(model.requests[1].messages) == 4  # the system prompt, the first turn, the user


async def test_observe_runs_only_after_a_turn_without_error() -> None:
    memory = Memory(context=None)
    model = ScriptedModel([ScriptStep.fail(400, "nope"), "Fine."])
    session = _agent(model, memory_provider=memory, fallback_providers=[]).session("s")
    with pytest.raises(GMIError):
        await session.send("First")
    assert memory.observed == []
    await session.send("Second")
    assert memory.observed == [("Second", "Fine.", "s")]

"""`GMIManager` through its public API (issue 13, item 2; spec: Getting a GMI, Cognitive memory).

Each test pins one requirement of the spec's "Getting a GMI" section or reference §1.8-§1.9, on a
`ScriptedModel` and a `FakeClock`; no test waits on the wall clock.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.nlp import StatisticalUtilityAI
from agentos.persona import PersonaDefinition
from agentos.persona.loaders import InMemoryPersonaLoader, PersonaRegistry
from agentos.persona.overlays import OverlayContext, PersonaEvolutionRule, PersonaPatch
from agentos.substrate import (
    GMI,
    GMIConfig,
    GMIOutput,
    GMIOutputChunk,
    GMIOutputChunkType,
    GMIPrimeState,
    GMITurnInput,
)
from agentos.substrate.gmi_manager import (
    CognitiveMemoryRequest,
    GMIManager,
    GMIManagerConfig,
)
from agentos.substrate.igmi import (
    IGMI,
    IGMITurnStream,
    SingleToolResultHandler,
    ToolResultsHandler,
)
from agentos.substrate.tool_continuation import ExternalToolOutcome
from agentos.testing import FakeClock, ScriptedModel, ScriptStep
from agentos.tools import ToolOrchestrator
from fakes.gmi_helpers import FakeAugmentor, FakeBridge

GMI_ID = re.compile(r"gmi-instance-[0-9a-f]{32}")
HOUR = 3600.0


def _persona(persona_id: str = "p1", **extra: Any) -> PersonaDefinition:
    return PersonaDefinition(
        id=persona_id, name=persona_id.upper(), base_system_prompt="You are P.", **extra
    )


async def _registry(*personas: PersonaDefinition) -> PersonaRegistry:
    registry = PersonaRegistry(InMemoryPersonaLoader(personas or (_persona(), _persona("p2"))))
    await registry.load()
    return registry


async def _manager(
    clock: FakeClock | None = None,
    *,
    personas: tuple[PersonaDefinition, ...] = (),
    model: ScriptedModel | None = None,
    base: Mapping[str, Any] | None = None,
    **config: Any,
) -> GMIManager:
    base_config = GMIConfig(
        model=model or ScriptedModel(lambda *_: "ok"), clock=clock or FakeClock(), **(base or {})
    )
    registry = await _registry(*personas)
    return GMIManager(GMIManagerConfig(base_config=base_config, personas=registry, **config))


async def _turn_text(gmi: GMI | IGMI, text: str = "hi") -> GMIOutput:
    stream = gmi.process_turn_stream(GMITurnInput(interaction_id="t1", user_id="u1", content=text))
    async for _ in stream:
        pass
    return await stream.output()


def _code(error: pytest.ExceptionInfo[GMIError]) -> GMIErrorCode | str:
    return error.value.code


# -- a host's own GMI (the spec's IGMI) ---------------------------------------------------------


class TinyStream:
    """A turn that streams one text delta and the final marker."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __aiter__(self) -> AsyncIterator[GMIOutputChunk]:
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[GMIOutputChunk]:
        yield GMIOutputChunk(GMIOutputChunkType.TEXT_DELTA, self.text, "t", 0.0)
        yield GMIOutputChunk(GMIOutputChunkType.FINAL_RESPONSE_MARKER, None, "t", 0.0, True)

    async def output(self) -> GMIOutput:
        return GMIOutput(response_text=self.text)


@dataclass
class TinyGMI:
    """An IGMI with only ``handle_tool_result()``; its shutdown may wait on ``gate``."""

    gmi_id: str
    persona: PersonaDefinition
    gate: asyncio.Event | None = None
    shutdowns: int = 0
    started: asyncio.Event = field(default_factory=asyncio.Event)
    done: bool = False

    def process_turn_stream(self, turn_input: GMITurnInput) -> TinyStream:
        return TinyStream(f"tiny:{turn_input.content}")

    async def handle_tool_result(
        self,
        tool_call_id: str,
        tool_name: str,
        outcome: ExternalToolOutcome | Mapping[str, Any],
        *,
        user_id: str = "default_user",
    ) -> TinyStream:
        return TinyStream(f"{tool_name}:{tool_call_id}")

    async def shutdown(self) -> None:
        self.shutdowns += 1
        self.started.set()
        if self.gate is not None:
            await self.gate.wait()
        self.done = True


@dataclass
class TinyFactory:
    gate: asyncio.Event | None = None
    made: list[TinyGMI] = field(default_factory=list)

    def __call__(self, gmi_id: str, persona: PersonaDefinition) -> IGMI:
        gmi = TinyGMI(gmi_id, persona, self.gate)
        self.made.append(gmi)
        return gmi


# -- one GMI per session ------------------------------------------------------------------------


async def test_one_gmi_per_session_reused_until_refresh() -> None:
    manager = await _manager()
    first = await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    again = await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    other = await manager.get_or_create_gmi_for_session("u1", "s2", "p1")
    assert again is first
    assert other is not first
    assert isinstance(first, GMI)
    assert isinstance(other, GMI)
    assert GMI_ID.fullmatch(first.gmi_id)
    assert GMI_ID.fullmatch(other.gmi_id)
    assert first.working_memory is not other.working_memory
    assert manager.gmi_for_session("s1") is first
    assert manager.gmi_for_session("nope") is None
    assert manager.active_sessions == ["s1", "s2"]
    await first.working_memory.set("note", 1)

    refreshed = await manager.get_or_create_gmi_for_session("u1", "s1", "p1", refresh_persona=True)
    assert refreshed is not first
    assert isinstance(refreshed, GMI)
    assert first.state is GMIPrimeState.SHUTDOWN
    assert first.working_memory.closed
    assert await refreshed.working_memory.get("note") is None  # a fresh working memory
    assert manager.gmi_for_session("s1") is refreshed


async def test_another_persona_id_replaces_the_sessions_gmi() -> None:
    manager = await _manager()
    first = await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    second = await manager.get_or_create_gmi_for_session("u1", "s1", "p2")
    assert second is not first
    assert second.persona.id == "p2"
    assert isinstance(first, GMI)
    assert first.state is GMIPrimeState.SHUTDOWN


async def test_deactivate_removes_and_shuts_down_the_sessions_gmi() -> None:
    manager = await _manager()
    gmi = await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    assert await manager.deactivate_gmi_for_session("s1") is True
    assert await manager.deactivate_gmi_for_session("s1") is False
    assert isinstance(gmi, GMI)
    assert gmi.state is GMIPrimeState.SHUTDOWN
    assert manager.gmi_for_session("s1") is None
    assert manager.active_sessions == []
    assert await manager.get_or_create_gmi_for_session("u1", "s1", "p1") is not gmi


async def test_concurrent_first_calls_of_a_session_build_one_gmi() -> None:
    manager = await _manager()
    gmis = await asyncio.gather(
        *(manager.get_or_create_gmi_for_session("u1", "s1", "p1") for _ in range(5))
    )
    assert all(gmi is gmis[0] for gmi in gmis)


async def test_the_sessions_gmi_runs_turns() -> None:
    manager = await _manager(model=ScriptedModel([ScriptStep(text="Hello there")]))
    gmi = await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    output = await _turn_text(gmi)
    assert output.response_text == "Hello there"
    assert output.error is None


# -- persona and permission ---------------------------------------------------------------------


async def test_unknown_persona_is_persona_not_found() -> None:
    manager = await _manager()
    with pytest.raises(GMIError) as error:
        await manager.get_or_create_gmi_for_session("u1", "s1", "ghost")
    assert _code(error) is GMIErrorCode.PERSONA_NOT_FOUND
    assert manager.active_sessions == []


async def test_a_user_without_permission_is_refused() -> None:
    asked: list[tuple[str, str]] = []

    def can_use(user_id: str, persona: PersonaDefinition) -> bool:
        asked.append((user_id, persona.id))
        return user_id == "ada"

    manager = await _manager(can_use_persona=can_use)
    with pytest.raises(GMIError) as error:
        await manager.get_or_create_gmi_for_session("bob", "s1", "p1")
    assert _code(error) is GMIErrorCode.PERMISSION_DENIED
    assert error.value.details == {"user_id": "bob", "persona_id": "p1"}
    assert manager.active_sessions == []
    assert await manager.get_or_create_gmi_for_session("ada", "s1", "p1") is not None
    assert asked == [("bob", "p1"), ("ada", "p1")]


@pytest.mark.parametrize(
    ("args", "kwargs", "option"),
    [
        (("u1", " ", "p1"), {}, "session_id"),
        (("u1", "s1", ""), {}, "persona_id"),
        ((7, "s1", "p1"), {}, "user_id"),
        (("u1", "s1", "p1"), {"agency_id": "a1"}, "role_id"),
        (("u1", "s1", "p1"), {"role_id": "r1"}, "agency_id"),
        (("u1", "s1", "p1"), {"agency_id": " ", "role_id": "r1"}, "agency_id"),
    ],
)
async def test_bad_ids_are_refused_before_any_work(
    args: tuple[Any, ...], kwargs: dict[str, Any], option: str
) -> None:
    manager = await _manager()
    with pytest.raises(GMIError) as error:
        await manager.get_or_create_gmi_for_session(*args, **kwargs)
    assert _code(error) is GMIErrorCode.INVALID_ARGUMENT
    assert error.value.details == {"option": option}
    assert manager.active_sessions == []


@pytest.mark.parametrize(
    ("config", "option"),
    [
        ({"shutdown_timeout_ms": -1}, "shutdown_timeout_ms"),
        ({"shutdown_timeout_ms": 1.5}, "shutdown_timeout_ms"),
        ({"inactivity_cleanup_minutes": 0}, "inactivity_cleanup_minutes"),
        ({"inactivity_cleanup_minutes": float("nan")}, "inactivity_cleanup_minutes"),
        ({"default_reasoning_trace_max_entries": 0}, "default_reasoning_trace_max_entries"),
        ({"igmi_factory": "not callable"}, "igmi_factory"),
        ({"seat_rules": {"no-separator": []}}, "seat_rules"),
    ],
)
async def test_bad_config_is_a_configuration_error(config: dict[str, Any], option: str) -> None:
    with pytest.raises(GMIError) as error:
        await _manager(**config)
    assert _code(error) is GMIErrorCode.CONFIGURATION_ERROR
    assert error.value.details == {"option": option}


# -- cognitive memory factory -------------------------------------------------------------------


async def test_memory_factory_called_once_per_new_gmi_and_its_bridge_attached() -> None:
    requests: list[CognitiveMemoryRequest] = []
    bridges: list[FakeBridge] = []

    async def factory(request: CognitiveMemoryRequest) -> FakeBridge:
        requests.append(request)
        bridges.append(FakeBridge(context="remembered"))
        return bridges[-1]

    utility = StatisticalUtilityAI()
    tools = ToolOrchestrator()
    augmentor = FakeAugmentor()
    manager = await _manager(
        model=ScriptedModel([ScriptStep(text="Sure")]),
        base={"utility_ai": utility, "tool_orchestrator": tools, "retrieval_augmentor": augmentor},
        cognitive_memory_factory=factory,
    )
    gmi = await manager.get_or_create_gmi_for_session("ada", "s1", "p1")
    await manager.get_or_create_gmi_for_session("ada", "s1", "p1")
    assert isinstance(gmi, GMI)
    assert len(requests) == 1
    request = requests[0]
    assert request.gmi_instance_id == gmi.gmi_id
    assert (request.session_id, request.user_id, request.persona.id) == ("s1", "ada", "p1")
    assert request.working_memory is gmi.working_memory
    assert request.utility_ai is utility
    assert request.tool_orchestrator is tools
    assert request.retrieval_augmentor is augmentor

    await _turn_text(gmi, "What did I say?")
    assert [asked[0] for asked in bridges[0].asked] == ["What did I say?"]
    assert [(e.user_text, e.response_text) for e in bridges[0].synced] == [
        ("What did I say?", "Sure")
    ]
    await manager.get_or_create_gmi_for_session("ada", "s1", "p1", refresh_persona=True)
    assert len(requests) == 2
    assert requests[1].gmi_instance_id != gmi.gmi_id


async def test_a_sync_factory_may_return_no_memory() -> None:
    calls: list[str] = []

    def factory(request: CognitiveMemoryRequest) -> None:
        calls.append(request.session_id)

    manager = await _manager(cognitive_memory_factory=factory)
    gmi = await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    assert calls == ["s1"]
    assert (await _turn_text(gmi)).error is None


@pytest.mark.parametrize("returns_wrong_type", [False, True])
async def test_a_failing_factory_leaves_the_gmi_without_memory_and_warns(
    caplog: pytest.LogCaptureFixture, returns_wrong_type: bool
) -> None:
    def factory(request: CognitiveMemoryRequest) -> Any:
        if returns_wrong_type:
            return "not a bridge"
        raise RuntimeError("vector store offline")

    manager = await _manager(
        model=ScriptedModel([ScriptStep(text="Fine")]), cognitive_memory_factory=factory
    )
    with caplog.at_level(logging.WARNING, logger="agentos.substrate.gmi_manager"):
        gmi = await manager.get_or_create_gmi_for_session("u1", "session-42", "p1")
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert "session-42" in message
    assert gmi.gmi_id in message
    assert ("not a MemoryBridge" if returns_wrong_type else "vector store offline") in message
    output = await _turn_text(gmi)
    assert (output.response_text, output.error) == ("Fine", None)


# -- reasoning trace ----------------------------------------------------------------------------


async def test_default_reasoning_trace_max_entries_applies_when_the_persona_sets_none() -> None:
    manager = await _manager(
        personas=(_persona("p1"), _persona("p2", reasoning_trace_config={"max_entries": 3})),
        default_reasoning_trace_max_entries=7,
    )
    plain = await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    own = await manager.get_or_create_gmi_for_session("u1", "s2", "p2")
    assert isinstance(plain, GMI)
    assert isinstance(own, GMI)
    assert plain.trace.max_entries == 7
    assert own.trace.max_entries == 3


async def test_without_a_runtime_default_the_trace_keeps_500() -> None:
    manager = await _manager()
    gmi = await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    assert isinstance(gmi, GMI)
    assert gmi.trace.max_entries == 500


# -- idle cleanup -------------------------------------------------------------------------------


async def test_cleanup_removes_gmis_idle_longer_than_60_minutes_on_the_clock() -> None:
    clock = FakeClock()
    manager = await _manager(clock)
    idle = await manager.get_or_create_gmi_for_session("u1", "idle", "p1")
    busy = await manager.get_or_create_gmi_for_session("u1", "busy", "p1")
    clock.advance(30 * 60)
    manager.touch("busy")
    clock.advance(30 * 60)
    assert await manager.cleanup_inactive_gmis() == 0  # exactly 60 minutes is not longer
    clock.advance(1)
    assert await manager.cleanup_inactive_gmis() == 1
    assert manager.active_sessions == ["busy"]
    assert isinstance(idle, GMI)
    assert idle.state is GMIPrimeState.SHUTDOWN
    assert isinstance(busy, GMI)
    assert busy.state is GMIPrimeState.READY
    assert await manager.cleanup_inactive_gmis(minutes=30) == 1
    assert manager.active_sessions == []


async def test_reuse_counts_as_activity_and_the_config_sets_the_threshold() -> None:
    clock = FakeClock()
    manager = await _manager(clock, inactivity_cleanup_minutes=5)
    await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    clock.advance(4 * 60)
    await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    clock.advance(4 * 60)
    assert await manager.cleanup_inactive_gmis() == 0
    clock.advance(61)
    assert await manager.cleanup_inactive_gmis() == 1


async def test_nothing_calls_cleanup_on_a_schedule() -> None:
    clock = FakeClock()
    manager = await _manager(clock)
    await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    await clock.advance_and_settle(10 * HOUR)
    assert manager.active_sessions == ["s1"]


async def test_cleanup_refuses_a_bad_threshold() -> None:
    manager = await _manager()
    with pytest.raises(GMIError) as error:
        await manager.cleanup_inactive_gmis(minutes=-1)
    assert _code(error) is GMIErrorCode.INVALID_ARGUMENT
    assert error.value.details == {"option": "minutes"}


@settings(max_examples=25, deadline=None)
@given(
    idle_minutes=st.lists(st.integers(min_value=0, max_value=180), min_size=1, max_size=6),
    threshold=st.integers(min_value=1, max_value=120),
)
def test_cleanup_removes_exactly_the_sessions_idle_past_the_threshold(
    idle_minutes: list[int], threshold: int
) -> None:
    async def scenario() -> None:
        clock = FakeClock()
        manager = await _manager(clock, igmi_factory=TinyFactory())
        longest = max(idle_minutes)
        for index in range(len(idle_minutes)):
            await manager.get_or_create_gmi_for_session("u1", f"s{index}", "p1")
        # session i was last active `idle_minutes[i]` minutes before the cleanup
        for minute in range(longest + 1):
            for index, idle in enumerate(idle_minutes):
                if longest - minute == idle:
                    manager.touch(f"s{index}")
            if minute < longest:
                clock.advance(60)
        removed = await manager.cleanup_inactive_gmis(minutes=threshold)
        expected = [f"s{i}" for i, idle in enumerate(idle_minutes) if idle <= threshold]
        assert removed == len(idle_minutes) - len(expected)
        assert manager.active_sessions == expected

    asyncio.run(scenario())


# -- shutdown -----------------------------------------------------------------------------------


async def test_after_shutdown_every_call_is_not_initialized() -> None:
    manager = await _manager()
    gmi = await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    await manager.shutdown()
    assert isinstance(gmi, GMI)
    assert gmi.state is GMIPrimeState.SHUTDOWN
    calls: list[Any] = [
        lambda: manager.get_or_create_gmi_for_session("u1", "s1", "p1"),
        lambda: manager.deactivate_gmi_for_session("s1"),
        lambda: manager.cleanup_inactive_gmis(),
    ]
    for call in calls:
        with pytest.raises(GMIError) as error:
            await call()
        assert _code(error) is GMIErrorCode.NOT_INITIALIZED
    sync_calls: list[Any] = [
        lambda: manager.gmi_for_session("s1"),
        lambda: manager.gmi_for_seat("s1", "a", "r"),
        lambda: manager.touch("s1"),
        lambda: manager.active_sessions,
        lambda: manager.set_seat_rules("a", "r", []),
    ]
    for call in sync_calls:
        with pytest.raises(GMIError) as error:
            call()
        assert _code(error) is GMIErrorCode.NOT_INITIALIZED
    await manager.shutdown()  # a later shutdown returns at once


async def test_a_build_in_flight_shuts_down_its_gmi_instead_of_registering_it() -> None:
    entered, release = asyncio.Event(), asyncio.Event()
    requests: list[CognitiveMemoryRequest] = []

    async def slow_factory(request: CognitiveMemoryRequest) -> None:
        requests.append(request)
        entered.set()
        await release.wait()

    manager = await _manager(cognitive_memory_factory=slow_factory)
    building = asyncio.create_task(manager.get_or_create_gmi_for_session("u1", "s1", "p1"))
    await entered.wait()
    await manager.shutdown()
    release.set()
    with pytest.raises(GMIError) as error:
        await building
    assert _code(error) is GMIErrorCode.NOT_INITIALIZED
    assert requests[0].working_memory.closed  # the GMI it built was shut down


async def test_every_gmi_is_shut_down_at_the_same_time() -> None:
    gate = asyncio.Event()
    factory = TinyFactory(gate)
    manager = await _manager(igmi_factory=factory)
    for session in ("s1", "s2", "s3"):
        await manager.get_or_create_gmi_for_session("u1", session, "p1")
    closing = asyncio.create_task(manager.shutdown())
    # every shutdown has started while none can finish: they run at the same time
    await asyncio.gather(*(gmi.started.wait() for gmi in factory.made))
    assert not any(gmi.done for gmi in factory.made)
    gate.set()
    await closing
    assert [gmi.done for gmi in factory.made] == [True, True, True]


async def test_a_gmi_stuck_past_the_bound_is_logged_and_shutdown_returns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    stuck_gate = asyncio.Event()
    factory = TinyFactory(stuck_gate)
    manager = await _manager(clock, igmi_factory=factory)
    await manager.get_or_create_gmi_for_session("u1", "s-stuck", "p1")
    stuck = factory.made[0]
    with caplog.at_level(logging.WARNING, logger="agentos.substrate.gmi_manager"):
        closing = asyncio.create_task(manager.shutdown())
        await stuck.started.wait()
        await clock.advance_and_settle(7.999)
        assert not closing.done()
        await clock.advance_and_settle(0.001)
        await asyncio.wait_for(closing, 1)
    (warning,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.getMessage() == (
        f"GMI {stuck.gmi_id} of session s-stuck did not shut down within 8000 ms; "
        "it finishes on its own"
    )
    assert not stuck.done
    stuck_gate.set()  # the late GMI finishes on its own
    for _ in range(3):
        await asyncio.sleep(0)
    assert stuck.done


async def test_a_short_bound_holds_with_one_stuck_and_one_quick_gmi() -> None:
    clock = FakeClock()
    gate = asyncio.Event()
    stuck = TinyFactory(gate)
    manager = await _manager(clock, igmi_factory=stuck, shutdown_timeout_ms=50)
    quick = await _manager(clock, igmi_factory=TinyFactory())
    await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    await quick.get_or_create_gmi_for_session("u1", "s1", "p1")
    await asyncio.wait_for(quick.shutdown(), 1)  # nothing stuck: returns, the clock unmoved
    closing = asyncio.create_task(manager.shutdown())
    await stuck.made[0].started.wait()
    await clock.advance_and_settle(0.049)
    assert not closing.done()
    await clock.advance_and_settle(0.001)
    await asyncio.wait_for(closing, 1)
    gate.set()


async def test_overlapping_shutdowns_share_one() -> None:
    gate = asyncio.Event()
    factory = TinyFactory(gate)
    manager = await _manager(igmi_factory=factory)
    await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    first = asyncio.create_task(manager.shutdown())
    second = asyncio.create_task(manager.shutdown())
    await factory.made[0].started.wait()
    gate.set()
    await asyncio.gather(first, second)
    assert factory.made[0].shutdowns == 1


async def test_shutdown_stops_a_built_in_gmis_running_turn() -> None:
    gate = asyncio.Event()
    model = ScriptedModel([ScriptStep(text="one two three", wait=gate, wait_at=1)])
    manager = await _manager(model=model)
    gmi = await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    assert isinstance(gmi, GMI)
    stream = gmi.process_turn_stream(GMITurnInput(interaction_id="t1", user_id="u1", content="x"))
    types: list[GMIOutputChunkType] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for chunk in stream:
            types.append(chunk.type)
            first.set()

    consumer = asyncio.create_task(consume())
    await first.wait()
    await manager.shutdown()
    await consumer
    output = await stream.output()
    assert output.error is not None
    assert output.error["code"] == "SYS_ABORTED"
    assert types[-2:] == [GMIOutputChunkType.ERROR, GMIOutputChunkType.FINAL_RESPONSE_MARKER]
    assert gmi.state is GMIPrimeState.SHUTDOWN


# -- workflow seats -----------------------------------------------------------------------------


def _rule(rule_id: str, trigger: str | dict[str, Any], **traits: float) -> PersonaEvolutionRule:
    return PersonaEvolutionRule(
        id=rule_id, trigger=trigger, patch=PersonaPatch(persona_traits=dict(traits))
    )


async def test_a_seat_gets_its_own_gmi_with_its_overlay() -> None:
    manager = await _manager(
        personas=(_persona(personality_traits={"openness": 0.5, "extraversion": 0.5}),),
        seat_rules={"acme::reviewer": [_rule("strict", "always", conscientiousness=0.9)]},
    )
    own = await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    seat = await manager.get_or_create_gmi_for_session(
        "u1", "s1", "p1", agency_id="acme", role_id="reviewer"
    )
    again = await manager.get_or_create_gmi_for_session(
        "u1", "s1", "p1", agency_id="acme", role_id="reviewer"
    )
    other_role = await manager.get_or_create_gmi_for_session(
        "u1", "s1", "p1", agency_id="acme", role_id="writer"
    )
    assert seat is again
    assert len({id(own), id(seat), id(other_role)}) == 3
    assert manager.gmi_for_session("s1") is own
    assert manager.gmi_for_seat("s1", "acme", "reviewer") is seat
    assert seat.persona.personality_traits == {
        "openness": 0.5,
        "extraversion": 0.5,
        "conscientiousness": 0.9,
    }
    assert own.persona.personality_traits == {"openness": 0.5, "extraversion": 0.5}
    assert other_role.persona.personality_traits == {"openness": 0.5, "extraversion": 0.5}
    assert manager.active_sessions == ["s1"]
    assert await manager.deactivate_gmi_for_session("s1") is True
    assert manager.gmi_for_seat("s1", "acme", "reviewer") is None
    assert isinstance(seat, GMI)
    assert seat.state is GMIPrimeState.SHUTDOWN


async def test_a_seat_gmi_is_recreated_when_its_overlay_changes() -> None:
    manager = await _manager()
    manager.set_seat_rules(
        "acme", "reviewer", [_rule("late", {"metadata.stage": "review"}, openness=0.2)]
    )
    drafting = OverlayContext(metadata={"stage": "draft"})
    reviewing = OverlayContext(metadata={"stage": "review"})
    first = await manager.get_or_create_gmi_for_session(
        "u1", "s1", "p1", agency_id="acme", role_id="reviewer", seat_context=drafting
    )
    same = await manager.get_or_create_gmi_for_session(
        "u1", "s1", "p1", agency_id="acme", role_id="reviewer", seat_context=drafting
    )
    changed = await manager.get_or_create_gmi_for_session(
        "u1", "s1", "p1", agency_id="acme", role_id="reviewer", seat_context=reviewing
    )
    kept = await manager.get_or_create_gmi_for_session(
        "u1", "s1", "p1", agency_id="acme", role_id="reviewer", seat_context=reviewing
    )
    assert same is first
    assert changed is not first
    assert kept is changed
    assert first.persona.personality_traits is None
    assert changed.persona.personality_traits == {"openness": 0.2}
    assert isinstance(first, GMI)
    assert first.state is GMIPrimeState.SHUTDOWN


async def test_seat_overlays_are_kept_per_session() -> None:
    manager = await _manager(
        seat_rules={"acme::lead": [_rule("intro", "first_activation", extraversion=0.8)]}
    )
    one = await manager.get_or_create_gmi_for_session(
        "u1", "s1", "p1", agency_id="acme", role_id="lead"
    )
    two = await manager.get_or_create_gmi_for_session(
        "u1", "s2", "p1", agency_id="acme", role_id="lead"
    )
    assert one.persona.personality_traits == {"extraversion": 0.8}
    assert two.persona.personality_traits == {"extraversion": 0.8}


# -- host-supplied IGMIs ------------------------------------------------------------------------


async def test_an_igmi_factory_replaces_the_built_in_gmi() -> None:
    factory = TinyFactory()
    memory_calls: list[str] = []
    manager = await _manager(
        igmi_factory=factory, cognitive_memory_factory=lambda r: memory_calls.append(r.session_id)
    )
    gmi = await manager.get_or_create_gmi_for_session("u1", "s1", "p2")
    assert isinstance(gmi, TinyGMI)
    assert gmi is factory.made[0]
    assert isinstance(gmi, IGMI)
    assert GMI_ID.fullmatch(gmi.gmi_id)
    assert gmi.persona.id == "p2"
    assert await manager.get_or_create_gmi_for_session("u1", "s1", "p2") is gmi
    assert (await _turn_text(gmi, "yo")).response_text == "tiny:yo"
    assert isinstance(gmi, SingleToolResultHandler)
    assert not isinstance(gmi, ToolResultsHandler)
    stream = await gmi.handle_tool_result("c1", "lookup", {"type": "success", "result": 1})
    assert (await stream.output()).response_text == "lookup:c1"
    assert memory_calls == []  # the host builds its own GMIs' memory
    await manager.shutdown()
    assert gmi.shutdowns == 1
    assert gmi.done


async def test_the_built_in_gmi_satisfies_the_igmi_protocols() -> None:
    manager = await _manager()
    gmi = await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    assert isinstance(gmi, GMI)
    typed: IGMI = gmi  # mypy checks the structural match
    assert isinstance(typed, IGMI)
    assert isinstance(gmi, ToolResultsHandler)
    assert isinstance(gmi, SingleToolResultHandler)
    stream: IGMITurnStream = gmi.process_turn_stream(
        GMITurnInput(interaction_id="t1", user_id="u1", content="hi")
    )
    assert (await stream.output()).response_text == "ok"


async def test_a_recreated_seat_keeps_the_overlay_it_was_built_from() -> None:
    manager = await _manager()
    manager.set_seat_rules(
        "acme",
        "reviewer",
        [
            _rule("drafting", {"metadata.stage": "draft"}, openness=0.3),
            _rule("reviewing", {"metadata.stage": "review"}, agreeableness=0.6),
        ],
    )

    async def seat(stage: str) -> GMI | IGMI:
        return await manager.get_or_create_gmi_for_session(
            "u1",
            "s1",
            "p1",
            agency_id="acme",
            role_id="reviewer",
            seat_context=OverlayContext(metadata={"stage": stage}),
        )

    draft = await seat("draft")
    review = await seat("review")
    assert review is not draft
    both = {"openness": 0.3, "agreeableness": 0.6}
    assert review.persona.personality_traits == both
    # the patches accumulate: the earlier stage's rule changes nothing, so the GMI stays
    assert await seat("review") is review
    assert await seat("draft") is review
    assert review.persona.personality_traits == both


# -- strict validation (the runtime's persona_strict) ---------------------------------------------


async def test_strict_validation_refuses_a_blocked_persona_on_every_request() -> None:
    from agentos.persona.strict_mode import PersonaStrictConfig

    manager = await _manager(
        personas=(_persona("p1"), _persona("bad", version="x")),
        persona_strict=PersonaStrictConfig(block_on_codes={"invalid_semver"}),
    )
    for session in ("s1", "s2"):  # the verdict is kept: the second refusal is the same
        with pytest.raises(GMIError) as refused:
            await manager.get_or_create_gmi_for_session("u1", session, "bad")
        assert _code(refused) is GMIErrorCode.PERMISSION_DENIED
        assert refused.value.details == {"persona_id": "bad", "codes": ["invalid_semver"]}
    assert manager.active_sessions == []
    first = await manager.get_or_create_gmi_for_session("u1", "s1", "p1")
    assert await manager.get_or_create_gmi_for_session("u1", "s1", "p1") is first
    with pytest.raises(GMIError) as refused:  # a warm session cannot switch to a blocked one
        await manager.get_or_create_gmi_for_session("u1", "s1", "bad")
    assert _code(refused) is GMIErrorCode.PERMISSION_DENIED
    assert manager.gmi_for_session("s1") is first

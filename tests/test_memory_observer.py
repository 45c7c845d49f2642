"""The observer / reflector pipeline and prospective items (reference §1.19, §1.12, cases 27-28)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentos.core.tokens import estimate_tokens
from agentos.memory.observer import (
    MemoryObserver,
    NoteEmotion,
    NoteType,
    ObservationBuffer,
    ObservationNote,
    ObserverConfig,
    observer_system_prompt,
    relative_time_label,
)
from agentos.memory.prospective import (
    ProspectiveItem,
    TriggerType,
    infer_trigger_type,
    prospective_items_from_notes,
)
from agentos.memory.reflection_prompt import (
    REFLECTOR_PROMPT_HASH,
    conflict_rule,
    reflector_system_prompt,
)
from agentos.memory.reflector import MemoryReflector, ReflectorConfig
from agentos.memory.trace import (
    HOUR,
    PAD,
    MemoryScope,
    MemoryTrace,
    MemoryType,
    Provenance,
    SourceType,
)

T0 = 1_700_000_000.0


class FakeInvoker:
    """An async model invoker that records its prompts and replies from a script."""

    def __init__(self, *replies: str | Exception) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[str, str]] = []

    async def __call__(self, system: str, user: str) -> str:
        self.calls.append((system, user))
        reply = self.replies.pop(0) if self.replies else ""
        if isinstance(reply, Exception):
            raise reply
        return reply


def note(
    note_id: str,
    content: str = "a short observation note",
    type_: NoteType = NoteType.FACTUAL,
    importance: float = 0.5,
) -> ObservationNote:
    return ObservationNote(
        id=note_id, type=type_, content=content, timestamp=T0, importance=importance
    )


def lines(*objects: dict[str, Any]) -> str:
    return "\n".join(json.dumps(o) for o in objects)


def existing_trace(trace_id: str, confidence: float) -> MemoryTrace:
    return MemoryTrace(
        id=trace_id,
        type=MemoryType.SEMANTIC,
        scope=MemoryScope.USER,
        scope_id="u1",
        content="The user lives in Paris.",
        created_at=T0 - HOUR,
        encoding_strength=0.5,
        stability=HOUR,
        provenance=Provenance(confidence=confidence),
    )


# --- case 27: the observation buffer -------------------------------------------------------------


def test_case27_message_threshold_fires_on_the_fourth_push() -> None:
    buffer = ObservationBuffer(
        ObserverConfig(activation_threshold_tokens=30_000, activation_threshold_messages=4)
    )
    results = [
        buffer.push("user", "hi"),
        buffer.push("assistant", "hello there"),
        buffer.push("user", "how are you"),
        buffer.push("assistant", "doing well"),
    ]
    assert results == [False, False, False, True]


def test_case27_counting_restarts_after_drain() -> None:
    buffer = ObservationBuffer(ObserverConfig(activation_threshold_messages=2))
    buffer.push("user", "a")
    assert buffer.push("user", "b") is True
    drained = buffer.drain()
    assert [m.content for m in drained] == ["a", "b"]
    assert buffer.pending_messages == 0
    assert buffer.push("user", "c") is False
    assert buffer.push("user", "d") is True


def test_case27_one_long_message_activates_on_tokens() -> None:
    buffer = ObservationBuffer(ObserverConfig(activation_threshold_messages=1_000))
    assert buffer.push("user", "x" * 120_000) is True
    assert buffer.pending_tokens == 30_000
    short = ObservationBuffer(ObserverConfig(activation_threshold_messages=1_000))
    assert short.push("user", "x" * 119_996) is False  # 29 999 tokens


def test_case27_default_fires_within_fifty_short_messages() -> None:
    buffer = ObservationBuffer()
    fired_at = next(
        i
        for i in range(1, 51)
        if buffer.push("user" if i % 2 else "assistant", "a short conversational turn")
    )
    assert fired_at == 20


def test_token_estimate_is_ceil_of_a_quarter() -> None:
    assert [estimate_tokens("x" * n) for n in (0, 1, 4, 5, 8)] == [0, 1, 1, 2, 2]


_messages = st.lists(st.text(max_size=60), max_size=40)


@given(
    contents=_messages,
    token_threshold=st.integers(1, 200),
    message_threshold=st.integers(1, 15),
)
def test_buffer_activates_exactly_when_a_threshold_is_crossed(
    contents: list[str], token_threshold: int, message_threshold: int
) -> None:
    buffer = ObservationBuffer(
        ObserverConfig(
            activation_threshold_tokens=token_threshold,
            activation_threshold_messages=message_threshold,
        )
    )
    tokens = count = 0
    for content in contents:
        activated = buffer.push("user", content)
        tokens += math.ceil(len(content) / 4)
        count += 1
        assert activated == (tokens >= token_threshold or count >= message_threshold)
        if activated:
            assert [m.content for m in buffer.drain()][-1] == content
            assert buffer.pending_messages == 0
            assert buffer.pending_tokens == 0
            assert buffer.should_activate() is False
            tokens = count = 0


# --- the observer --------------------------------------------------------------------------------


async def test_observer_parses_good_lines_and_skips_bad_ones() -> None:
    reply = "\n".join(
        [
            json.dumps(
                {
                    "type": "factual",
                    "content": "User works at Acme as a welder.",
                    "importance": 0.8,
                    "entities": ["Acme", 3, ""],
                }
            ),
            "not json at all",
            '{"type": "factual", "content": ',  # cut off
            json.dumps({"type": "gossip", "content": "unknown type"}),
            json.dumps({"type": "emotional", "content": "   "}),
            "- " + json.dumps({"type": "Commitment", "content": "User will call Ana tomorrow."}),
            json.dumps({"type": "preference", "content": "Likes tea", "importance": 7}),
            json.dumps({"type": "creative", "content": "Idea", "importance": True}),
            "[1, 2]",
        ]
    )
    invoker = FakeInvoker(reply)
    observer = MemoryObserver(invoker, config=ObserverConfig(activation_threshold_messages=2))
    pad = PAD(valence=0.4, arousal=-0.2, dominance=0.1)
    assert await observer.observe("user", "I weld at Acme.", pad, now=T0) == []
    notes = await observer.observe("assistant", "Nice!", pad, now=T0 + 2 * HOUR)

    assert [(n.type, n.content) for n in notes] == [
        (NoteType.FACTUAL, "User works at Acme as a welder."),
        (NoteType.COMMITMENT, "User will call Ana tomorrow."),
        (NoteType.PREFERENCE, "Likes tea"),
        (NoteType.CREATIVE, "Idea"),
    ]
    assert [n.importance for n in notes] == [0.8, 0.5, 1.0, 0.5]
    assert notes[0].entities == ("Acme",)
    assert notes[0].emotional_context == NoteEmotion(valence=0.4, arousal=-0.2)
    assert notes[0].timestamp == T0 + 2 * HOUR
    assert notes[0].temporal is not None
    assert notes[0].temporal.referenced_at == T0
    assert notes[0].temporal.relative_label == "2 hours ago"
    assert len({n.id for n in notes}) == 4
    assert notes[0].id.startswith(f"obs_{int((T0 + 2 * HOUR) * 1000)}_")
    assert len(invoker.calls) == 1
    system, user = invoker.calls[0]
    assert user == "[user] I weld at Acme.\n[assistant] Nice!"
    for note_type in NoteType:
        assert note_type.value in system
    assert "one JSON object on its own line" in system
    assert observer.buffer.pending_messages == 0


async def test_observer_failed_call_loses_no_message() -> None:
    invoker = FakeInvoker(RuntimeError("model down"), lines({"type": "factual", "content": "X"}))
    observer = MemoryObserver(invoker, config=ObserverConfig(activation_threshold_messages=2))
    await observer.observe("user", "one", now=T0)
    assert await observer.observe("assistant", "two", now=T0 + 1) == []
    assert [m.content for m in observer.buffer.drain()] == ["one", "two"]

    # Re-queued messages keep their order and the next push retries with them.
    invoker2 = FakeInvoker(RuntimeError("down"), lines({"type": "factual", "content": "X"}))
    observer2 = MemoryObserver(invoker2, config=ObserverConfig(activation_threshold_messages=2))
    await observer2.observe("user", "one", now=T0)
    await observer2.observe("assistant", "two", now=T0 + 1)
    notes = await observer2.observe("user", "three", now=T0 + 2)
    assert [n.content for n in notes] == ["X"]
    assert invoker2.calls[1][1] == "[user] one\n[assistant] two\n[user] three"


async def test_observer_cancelled_call_requeues_and_propagates() -> None:
    started = asyncio.Event()

    async def hangs(system: str, user: str) -> str:
        started.set()
        await asyncio.sleep(3600)
        return ""

    observer = MemoryObserver(hangs, config=ObserverConfig(activation_threshold_messages=1))
    task = asyncio.create_task(observer.observe("user", "keep me", now=T0))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [m.content for m in observer.buffer.drain()] == ["keep me"]


async def test_observer_buffer_is_bounded_while_the_model_keeps_failing() -> None:
    invoker = FakeInvoker(*[RuntimeError("down")] * 10)
    config = ObserverConfig(activation_threshold_messages=2, max_buffered_messages=3)
    observer = MemoryObserver(invoker, config=config)
    for i in range(5):
        await observer.observe("user", f"m{i}", now=T0 + i)
    assert [m.content for m in observer.buffer.drain()] == ["m2", "m3", "m4"]


async def test_observer_without_invoker_makes_no_call_and_returns_nothing() -> None:
    observer = MemoryObserver(None, config=ObserverConfig(activation_threshold_messages=1))
    assert await observer.observe("user", "hello", now=T0) == []
    assert await observer.extract(now=T0) == []


async def test_observer_empty_reply_consumes_the_messages() -> None:
    observer = MemoryObserver(
        FakeInvoker(""), config=ObserverConfig(activation_threshold_messages=1)
    )
    assert await observer.observe("user", "small talk", now=T0) == []
    assert observer.buffer.pending_messages == 0


_OBSERVER_EMPHASIS = {
    "honesty": "correction, retraction or contradiction",
    "emotionality": "changes of mood and tone",
    "extraversion": "people the user mentions",
    "agreeableness": "how they like to be addressed",
    "conscientiousness": "commitment, deadline, plan",
    "openness": "creative ideas, tangents",
}


@pytest.mark.parametrize("trait", sorted(_OBSERVER_EMPHASIS))
async def test_observer_trait_emphasis_only_above_point_six(trait: str) -> None:
    invoker = FakeInvoker("", "", "")
    for value, expected in ((0.6, False), (0.61, True), (0.9, True)):
        observer = MemoryObserver(
            invoker, traits={trait: value}, config=ObserverConfig(activation_threshold_messages=1)
        )
        await observer.observe("user", "hello", now=T0)
        system = invoker.calls[-1][0]
        for name, text in _OBSERVER_EMPHASIS.items():
            assert (text in system) == (expected and name == trait), (name, value)
    assert observer_system_prompt(None) == observer_system_prompt(
        {n: 0.5 for n in _OBSERVER_EMPHASIS}
    )


def test_relative_time_labels() -> None:
    cases = [
        (30, "just now"),
        (60, "1 minute ago"),
        (5 * 60, "5 minutes ago"),
        (HOUR, "1 hour ago"),
    ]
    cases += [
        (30 * HOUR, "yesterday"),
        (3 * 24 * HOUR, "3 days ago"),
        (15 * 24 * HOUR, "2 weeks ago"),
    ]
    cases += [(90 * 24 * HOUR, "3 months ago"), (800 * 24 * HOUR, "2 years ago")]
    for elapsed, label in cases:
        assert relative_time_label(T0, T0 + elapsed) == label


# --- case 28 and the reflector -------------------------------------------------------------------


def test_case28_reflector_activates_at_three_notes_when_configured() -> None:
    reflector = MemoryReflector(FakeInvoker(), config=ReflectorConfig(activation_threshold_notes=3))
    assert reflector.add_notes([note("n1"), note("n2")]) is False
    assert reflector.add_notes([note("n3")]) is True


def test_case28_reflector_default_is_six_notes() -> None:
    reflector = MemoryReflector(FakeInvoker())
    results = [reflector.add_notes([note(f"n{i}")]) for i in range(1, 7)]
    assert results == [False] * 5 + [True]


def test_reflector_activates_on_tokens() -> None:
    reflector = MemoryReflector(FakeInvoker())
    assert reflector.add_notes([note("big", "x" * 160_000)]) is True
    small = MemoryReflector(FakeInvoker())
    assert small.add_notes([note("big", "x" * 159_996)]) is False


def test_reflector_without_invoker_never_activates() -> None:
    reflector = MemoryReflector(None, config=ReflectorConfig(activation_threshold_notes=1))
    assert reflector.add_notes([note(f"n{i}") for i in range(10)]) is False
    assert reflector.should_activate() is False
    assert reflector.pending_notes == ()


async def test_reflector_without_invoker_reflects_nothing() -> None:
    result = await MemoryReflector(None).reflect(now=T0)
    assert result.memories == ()
    assert result.compression_ratio == 1.0


async def test_reflector_parses_memories_and_consumes_notes() -> None:
    reply = (
        "<thinking>\nNotes n1 and n2 are about Berlin.\n{not a memory}\n</thinking>\n"
        + lines(
            {
                "reasoning": "Where the user lives matters.",
                "type": "semantic",
                "scope": "user",
                "scope_id": "u1",
                "content": "User moved to Berlin on March 15, 2024.",
                "entities": ["Berlin"],
                "tags": ["home"],
                "confidence": 0.9,
                "source_type": "observation",
                "supersedes": [],
                "consumed_notes": ["n1", "n2", "ghost"],
            },
            {"consumed_notes": ["n3"]},
        )
        + "\nSure, here you go!\n"
    )
    invoker = FakeInvoker(reply)
    reflector = MemoryReflector(invoker, config=ReflectorConfig(activation_threshold_notes=4))
    reflector.add_notes(
        [
            note("n1", "User is moving to Berlin."),
            note("n2", "User's move to Berlin is on March 15, 2024."),
            note("n3", "User said hi."),
            note("n4", "User mentioned a cat."),
        ]
    )
    result = await reflector.reflect(now=T0)

    assert len(result.memories) == 1
    memory = result.memories[0]
    assert memory.type is MemoryType.SEMANTIC
    assert memory.scope is MemoryScope.USER
    assert memory.scope_id == "u1"
    assert memory.content == "User moved to Berlin on March 15, 2024."
    assert memory.entities == ("Berlin",)
    assert memory.tags == ("home",)
    assert memory.confidence == 0.9
    assert memory.source_type is SourceType.OBSERVATION
    assert memory.reasoning == "Where the user lives matters."
    assert memory.consumed_notes == ("n1", "n2")
    assert result.consumed_note_ids == ("n1", "n2", "n3")
    assert result.reflected_at == T0
    assert [n.id for n in reflector.pending_notes] == ["n4"]
    notes_tokens = sum(
        estimate_tokens(c)
        for c in (
            "User is moving to Berlin.",
            "User's move to Berlin is on March 15, 2024.",
            "User said hi.",
            "User mentioned a cat.",
        )
    )
    assert result.compression_ratio == notes_tokens / estimate_tokens(memory.content)
    system, user = invoker.calls[0]
    assert system == reflector_system_prompt(None)
    assert "[n1] (factual, importance 0.50) User is moving to Berlin." in user


async def test_reflector_fallbacks_for_invalid_fields() -> None:
    reply = lines(
        {
            "type": "dream",
            "scope": "galaxy",
            "content": "A",
            "confidence": 1.7,
            "source_type": "user_statement",
        },
        {
            "type": "episodic",
            "scope": "thread",
            "content": "B",
            "confidence": -3,
            "sourceType": "nonsense",
            "scopeId": "s9",
        },
        {"type": "PROSPECTIVE", "scope": "Persona", "content": "C", "confidence": "high"},
        {"type": "relational", "content": "D", "source_type": "reflection", "scope_id": 42},
    )
    reflector = MemoryReflector(
        FakeInvoker(reply), config=ReflectorConfig(activation_threshold_notes=1)
    )
    reflector.add_notes([note("n1")])
    result = await reflector.reflect(now=T0)
    got = [(m.type, m.scope, m.confidence, m.source_type, m.scope_id) for m in result.memories]
    assert got == [
        (MemoryType.SEMANTIC, MemoryScope.USER, 1.0, SourceType.REFLECTION, None),
        (MemoryType.EPISODIC, MemoryScope.THREAD, 0.0, SourceType.REFLECTION, "s9"),
        (MemoryType.PROSPECTIVE, MemoryScope.PERSONA, 0.7, SourceType.REFLECTION, None),
        (MemoryType.RELATIONAL, MemoryScope.USER, 0.7, SourceType.REFLECTION, None),
    ]


async def test_reflector_failed_call_keeps_every_note() -> None:
    invoker = FakeInvoker(RuntimeError("down"))
    reflector = MemoryReflector(invoker, config=ReflectorConfig(activation_threshold_notes=2))
    reflector.add_notes([note("n1"), note("n2")])
    result = await reflector.reflect(now=T0)
    assert result.failed is True
    assert result.memories == ()
    assert [n.id for n in reflector.pending_notes] == ["n1", "n2"]


async def test_reflector_drops_notes_left_unconsumed_too_often() -> None:
    invoker = FakeInvoker("", "", "")
    config = ReflectorConfig(activation_threshold_notes=1, max_reflections_per_note=2)
    reflector = MemoryReflector(invoker, config=config)
    reflector.add_notes([note("n1")])
    await reflector.reflect(now=T0)
    assert [n.id for n in reflector.pending_notes] == ["n1"]
    reflector.add_notes([note("n2")])
    await reflector.reflect(now=T0)
    assert [n.id for n in reflector.pending_notes] == ["n2"]


_HONEST = {"honesty": 0.8}
_AGREEABLE = {"agreeableness": 0.8}
_BOTH = {"honesty": 0.8, "agreeableness": 0.8}


_RULE_TEXTS = {
    "newer_wins": "The newer information wins",
    "keep_both": "Keep both versions",
    "higher_confidence": "The more confident version wins",
}


@pytest.mark.parametrize(
    ("traits", "rule"),
    [
        (None, "higher_confidence"),
        (_HONEST, "newer_wins"),
        (_AGREEABLE, "keep_both"),
        (_BOTH, "newer_wins"),  # honesty is asked first
        ({"honesty": 0.6, "agreeableness": 0.6}, "higher_confidence"),
    ],
)
def test_conflict_rule_text_by_traits(traits: dict[str, float] | None, rule: str) -> None:
    assert conflict_rule(traits).name == rule
    prompt = reflector_system_prompt(traits)
    for name, text in _RULE_TEXTS.items():
        assert (f"Contradictions: {text}" in prompt) == (name == rule)


@pytest.mark.parametrize(
    ("traits", "expected"),
    [
        (_HONEST, ("old_low", "old_high")),
        (_AGREEABLE, ()),
    ],
)
async def test_conflict_rule_is_enforced_on_supersessions(
    traits: dict[str, float] | None, expected: Sequence[str]
) -> None:
    reply = lines(
        {
            "content": "User lives in Berlin.",
            "confidence": 0.75,
            "supersedes": ["old_low", "old_high", "never_shown"],
            "consumed_notes": ["n1"],
        }
    )
    invoker = FakeInvoker(reply)
    reflector = MemoryReflector(invoker, traits=traits)
    reflector.add_notes([note("n1", "User moved to Berlin.")])
    existing = [existing_trace("old_low", 0.5), existing_trace("old_high", 0.9)]
    result = await reflector.reflect(now=T0, existing=existing)
    assert result.superseded_trace_ids == tuple(expected)
    assert result.memories[0].supersedes == tuple(expected)
    user = invoker.calls[0][1]
    assert (
        "Existing memories:\n[old_low] (semantic, confidence 0.50) The user lives in Paris." in user
    )


async def test_higher_confidence_rule_supersedes_weaker_and_drops_the_loser() -> None:
    reply = lines(
        {"content": "Beats 0.5.", "confidence": 0.75, "supersedes": ["old_low", "never_shown"]},
        {"content": "Loses to 0.9.", "confidence": 0.75, "supersedes": ["old_high"]},
        {"content": "Tie keeps the old.", "confidence": 0.5, "supersedes": ["old_low"]},
        {"content": "No conflict.", "confidence": 0.1},
    )
    reflector = MemoryReflector(FakeInvoker(reply))
    reflector.add_notes([note("n1")])
    existing = [existing_trace("old_low", 0.5), existing_trace("old_high", 0.9)]
    result = await reflector.reflect(now=T0, existing=existing)
    assert [(m.content, m.supersedes) for m in result.memories] == [
        ("Beats 0.5.", ("old_low",)),
        ("No conflict.", ()),
    ]
    assert result.superseded_trace_ids == ("old_low",)


def test_reflector_relational_emphasis_only_above_point_six() -> None:
    texts = {
        "emotionality": "emotional weight",
        "extraversion": "who the user spends time with",
        "agreeableness": "builds or strains trust",
        "conscientiousness": "one topic per memory",
        "openness": "links between ideas",
    }
    for trait, text in texts.items():
        assert text not in reflector_system_prompt({trait: 0.6})
        assert text in reflector_system_prompt({trait: 0.65})
        for other, other_text in texts.items():
            if other != trait:
                assert other_text not in reflector_system_prompt({trait: 0.65})


def test_reflector_prompt_hash_is_the_neutral_prompt_sha256() -> None:
    neutral = {name: 0.5 for name in ("honesty", "emotionality", "agreeableness", "openness")}
    digest = hashlib.sha256(reflector_system_prompt(neutral).encode()).hexdigest()
    assert digest == REFLECTOR_PROMPT_HASH
    assert len(REFLECTOR_PROMPT_HASH) == 64
    assert hashlib.sha256(reflector_system_prompt(_HONEST).encode()).hexdigest() != digest


# --- prospective items ---------------------------------------------------------------------------


def test_prospective_items_from_commitments_and_future_preferences() -> None:
    notes = [
        note("c1", "User will call the dentist tomorrow.", NoteType.COMMITMENT, 0.8),
        note("c2", "User might tidy up someday.", NoteType.COMMITMENT, 0.49),
        note(
            "c3",
            "Assistant promised to send the recipe once the user is home.",
            NoteType.COMMITMENT,
            0.5,
        ),
        note("p1", "User would love to learn the cello.", NoteType.PREFERENCE, 0.6),
        note(
            "p2", "User wants to visit Japan.", NoteType.PREFERENCE, 0.9
        ),  # "wants to" ≠ "want to"
        note("p3", "User hopes to run a marathon.", NoteType.PREFERENCE, 0.9),
        note("p4", "User has been meaning to read Dune.", NoteType.PREFERENCE, 0.59),
        note(
            "p5", "User is going to repaint the kitchen after the move.", NoteType.PREFERENCE, 1.0
        ),
        note("f1", "User plans to travel tomorrow.", NoteType.FACTUAL, 0.9),
    ]
    items = prospective_items_from_notes(notes, now=T0)
    assert items == [
        ProspectiveItem(
            "User will call the dentist tomorrow.", TriggerType.TIME_BASED, 0.8, "c1", T0
        ),
        ProspectiveItem(
            "Assistant promised to send the recipe once the user is home.",
            TriggerType.EVENT_BASED,
            0.5,
            "c3",
            T0,
        ),
        ProspectiveItem(
            "User would love to learn the cello.", TriggerType.CONTEXT_BASED, 0.6 * 0.7, "p1", T0
        ),
        ProspectiveItem(
            "User is going to repaint the kitchen after the move.",
            TriggerType.EVENT_BASED,
            1.0 * 0.7,
            "p5",
            T0,
        ),
    ]


@pytest.mark.parametrize(
    ("text", "trigger"),
    [
        ("Call mom tomorrow", TriggerType.TIME_BASED),
        ("Meeting at 5pm", TriggerType.TIME_BASED),
        ("Submit the report next week", TriggerType.TIME_BASED),
        ("Pay rent on Friday", TriggerType.TIME_BASED),
        ("Renew the passport in 3 months", TriggerType.TIME_BASED),
        ("Launch on March 15", TriggerType.TIME_BASED),
        ("Remind me when the build passes", TriggerType.EVENT_BASED),
        ("After the move, repaint", TriggerType.EVENT_BASED),
        ("Once it is sunny, hike tomorrow", TriggerType.TIME_BASED),  # time wins
        ("Learn the cello", TriggerType.CONTEXT_BASED),
        ("Late due to rain; I may march", TriggerType.CONTEXT_BASED),
    ],
)
def test_trigger_types(text: str, trigger: TriggerType) -> None:
    assert infer_trigger_type(text) is trigger

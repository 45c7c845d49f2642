"""Both sides of each numeric boundary the spec states, checked at, just below and just above it.

- Sentiment events (spec, Profiles): USER_FRUSTRATED below -0.3 with an intensity above 0.6, or
  the second turn in a row below -0.3; USER_SATISFIED above 0.3 with an intensity above 0.5, or
  the third turn in a row above 0.3; USER_CONFUSED on a neutral turn with more than two negative
  tokens; LOW_ENGAGEMENT from the fourth turn in a row between the thresholds while the recent
  user messages average under 50 characters; ERROR_THRESHOLD_EXCEEDED at two or more errors
  among the last ten reasoning-trace entries.
- The history budget (spec, Sessions): 35 % of the serving model's window, 8,192 tokens when
  agentos does not know the model; a request that cannot fit a known model's window is refused.
- The tool-loop limit (spec, Tools and model calls): ``max_steps`` 5 by default.
- The composite retrieval score's weights (spec, Retrieval): 0.35, 0.25, 0.15, 0.10, 0.10, 0.05.

Everything runs through a GMI's own turn on a `ScriptedModel`, or the public scoring functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from agentos import gmi as gmi_agent
from agentos.core.errors import GMIErrorCode
from agentos.core.messages import Message, ToolCall
from agentos.memory.scoring import Candidate, score_candidate, score_candidates
from agentos.memory.trace import (
    DAY,
    PAD,
    EmotionalContext,
    MemoryScope,
    MemoryTrace,
    MemoryType,
    Provenance,
)
from agentos.nlp import SentimentResult
from agentos.persona import PersonaDefinition
from agentos.substrate import GMI, GMIEventType, GMIOutputChunkType, ReasoningEntryType
from agentos.testing import ScriptedModel, ScriptStep
from agentos.tools import ToolOrchestrator
from agentos.tools.tool import tool
from fakes.gmi_helpers import FakeUtility, make_gmi, persona, run, sentiment, turn

E = GMIEventType


# -- sentiment events ------------------------------------------------------------------------------


async def tracked(results: Sequence[SentimentResult]) -> GMI:
    """A GMI whose persona tracks sentiment, scoring its turns as ``results`` say."""
    chosen = persona(sentiment_tracking={"enabled": True})
    model = ScriptedModel(["ok"] * len(results))
    return await make_gmi(model, persona=chosen, utility_ai=FakeUtility(list(results)))


async def events_of_turns(
    results: Sequence[SentimentResult], texts: Sequence[str] | None = None
) -> list[set[GMIEventType]]:
    """The event types each turn raised, one turn per result (texts default to ``"k"``)."""
    gmi = await tracked(results)
    per_turn: list[set[GMIEventType]] = []
    for index, text in enumerate(texts or ["k"] * len(results)):
        before = len(gmi.events.events())
        await run(gmi, turn(text, turn_id=f"t{index + 1}"))
        per_turn.append({event.event_type for event in gmi.events.events()[before:]})
    return per_turn


@pytest.mark.parametrize(
    ("score", "intensity", "fires"),
    [
        (-0.31, 0.61, True),  # below -0.3, intensity above 0.6
        (-0.30, 0.61, False),  # score at the threshold
        (-0.29, 0.61, False),  # score above it
        (-0.31, 0.60, False),  # intensity at its threshold
        (-0.31, 0.59, False),  # intensity below it
    ],
)
async def test_frustrated_on_one_turn(score: float, intensity: float, fires: bool) -> None:
    [events] = await events_of_turns([sentiment(score, intensity)])
    assert (E.USER_FRUSTRATED in events) is fires


@pytest.mark.parametrize(
    ("scores", "fires_on_last"),
    [
        ((-0.31, -0.31), True),  # the second turn in a row below -0.3
        ((-0.31, -0.30), False),  # the second turn at the threshold
        ((-0.30, -0.31), False),  # the first turn at the threshold: a run of one
        ((-0.31, -0.29, -0.31), False),  # a turn above the threshold breaks the run
        ((-0.31, 0.0, -0.31, -0.31), True),  # a new run fires on its own second turn
    ],
)
async def test_frustrated_on_the_second_turn_in_a_row(
    scores: tuple[float, ...], fires_on_last: bool
) -> None:
    runs = await events_of_turns([sentiment(s, 0.1) for s in scores])
    assert E.USER_FRUSTRATED not in runs[0]  # one weak turn never fires
    assert (E.USER_FRUSTRATED in runs[-1]) is fires_on_last


@pytest.mark.parametrize(
    ("score", "intensity", "fires"),
    [
        (0.31, 0.51, True),  # above 0.3, intensity above 0.5
        (0.30, 0.51, False),  # score at the threshold
        (0.29, 0.51, False),  # score below it
        (0.31, 0.50, False),  # intensity at its threshold
        (0.31, 0.49, False),  # intensity below it
    ],
)
async def test_satisfied_on_one_turn(score: float, intensity: float, fires: bool) -> None:
    [events] = await events_of_turns([sentiment(score, intensity)])
    assert (E.USER_SATISFIED in events) is fires


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ((0.31, 0.31, 0.31), [False, False, True]),  # the third turn in a row
        ((0.31, 0.31, 0.30), [False, False, False]),  # the third at the threshold
        ((0.30, 0.31, 0.31), [False, False, False]),  # the first at it: a run of two
        ((0.31, 0.31, 0.29, 0.31), [False, False, False, False]),  # the run broken
        ((0.31, 0.31, 0.31, 0.31), [False, False, True, True]),  # and on every later turn
    ],
)
async def test_satisfied_on_the_third_turn_in_a_row(
    scores: tuple[float, ...], expected: list[bool]
) -> None:
    runs = await events_of_turns([sentiment(s, 0.1) for s in scores])
    assert [E.USER_SATISFIED in events for events in runs] == expected


@pytest.mark.parametrize(
    ("score", "negatives", "fires"),
    [
        (0.0, 3, True),  # neutral, more than two negative tokens
        (0.0, 2, False),  # exactly two
        (0.0, 4, True),
        (0.05, 3, True),  # the edge of neutral polarity, on both sides of zero
        (-0.05, 3, True),
        (0.051, 3, False),  # just past it: positive, not neutral
        (-0.051, 3, False),  # negative, not neutral
    ],
)
async def test_confused_on_a_neutral_turn_with_negative_tokens(
    score: float, negatives: int, fires: bool
) -> None:
    [events] = await events_of_turns([sentiment(score, 0.0, negatives)])
    assert (E.USER_CONFUSED in events) is fires


@pytest.mark.parametrize(
    ("turns", "expected"),
    [
        (3, [False, False, False]),
        (4, [False, False, False, True]),
        (5, [False, False, False, True, True]),
    ],
)
async def test_low_engagement_from_the_fourth_turn_in_a_row(
    turns: int, expected: list[bool]
) -> None:
    runs = await events_of_turns([sentiment(0.0)] * turns)
    assert [E.LOW_ENGAGEMENT in events for events in runs] == expected


@pytest.mark.parametrize(
    ("scores", "fires"),
    [
        ((-0.3, 0.3, -0.3, 0.3), True),  # scores at both thresholds count as between them
        ((0.0, 0.0, 0.0, 0.31), False),  # the fourth turn above the satisfaction threshold
        ((0.0, 0.0, 0.0, -0.31), False),  # the fourth below the frustration threshold
        ((0.0, 0.31, 0.0, 0.0), False),  # a run broken on the second turn
    ],
)
async def test_low_engagement_counts_turns_between_the_thresholds(
    scores: tuple[float, ...], fires: bool
) -> None:
    runs = await events_of_turns([sentiment(s, 0.0) for s in scores])
    assert (E.LOW_ENGAGEMENT in runs[-1]) is fires


@pytest.mark.parametrize(
    ("lengths", "fires"),
    [
        ((49, 49, 49, 49), True),  # average under 50
        ((50, 50, 50, 50), False),  # at 50
        ((51, 51, 51, 51), False),  # above
        # At the fourth turn the last five history messages hold turns 2-4's user messages:
        ((10, 40, 60, 50), False),  # they average 50
        ((10, 40, 60, 49), True),  # 49.67
        ((10, 40, 60, 51), False),  # 50.33
        ((200, 49, 49, 49), True),  # the first turn's message is no longer recent
    ],
)
async def test_low_engagement_needs_recent_messages_under_50_characters(
    lengths: tuple[int, ...], fires: bool
) -> None:
    texts = ["y" * n for n in lengths]
    runs = await events_of_turns([sentiment(0.0)] * len(lengths), texts)
    assert (E.LOW_ENGAGEMENT in runs[-1]) is fires


@pytest.mark.parametrize(
    ("errors", "fillers", "counted"),
    [
        (1, 0, 1),  # one error
        (2, 6, 2),  # two errors, the older one 9th back
        (2, 7, 2),  # the older error is the 10th entry back
        (2, 8, 1),  # the 11th back: outside the window of ten
        (3, 7, 2),  # three, two of them inside
    ],
)
async def test_error_threshold_at_two_errors_in_the_last_ten_entries(
    errors: int, fillers: int, counted: int
) -> None:
    gmi = await tracked([sentiment(0.0)])
    for n in range(errors):
        gmi.trace.add(ReasoningEntryType.ERROR, f"error {n}", timestamp=0.0)
    for n in range(fillers):
        gmi.trace.add(ReasoningEntryType.DEBUG, f"filler {n}", timestamp=0.0)
    # The turn's INTERACTION_START is the newest of the ten entries the tracker reads.
    await run(gmi, turn("a long enough message so that nothing else is raised here"))
    raised = [e for e in gmi.events.events() if e.event_type is E.ERROR_THRESHOLD_EXCEEDED]
    if counted >= 2:
        [event] = raised
        assert event.metadata.error_count == counted
    else:
        assert raised == []


# -- the history budget and the context window -----------------------------------------------------

SYSTEM = "You are P."  # 10 characters: 3 tokens
NOW = "now"  # 1 token


def tokens(count: int, letter: str) -> str:
    """A text the spec's estimate (characters / 4, rounded up) counts as ``count`` tokens."""
    return letter * (4 * count)


async def request_after_history(older: int, newer: int, *, system: str = SYSTEM) -> list[str]:
    """Run a turn ``now`` over a history of a user message then a reply of the given sizes.

    Returns the first letters of what the model received after the system prompt.
    """
    model = ScriptedModel(["ok"])
    chosen = PersonaDefinition(id="p1", name="P", base_system_prompt=system)
    gmi = await make_gmi(model, persona=chosen)
    gmi.hydrate_conversation_history(
        [Message.user(tokens(older, "a")), Message.assistant(tokens(newer, "b"))]
    )
    _, output = await run(gmi, turn(NOW))
    assert output.error is None
    return [m.text[:1] for m in model.requests[0].messages[1:]]


@pytest.mark.parametrize(
    ("older", "kept"),
    [
        (1_865, ["a", "b", "n"]),  # 2,865 tokens of history: under the budget
        (1_866, ["a", "b", "n"]),  # 2,866: exactly what 2,867 leaves beside the turn's 1
        (1_867, ["b", "n"]),  # 2,867: one over, the oldest message goes
    ],
)
async def test_history_gets_35_percent_of_the_default_8192_window(
    older: int, kept: list[str]
) -> None:
    # An unknown model counts as 8,192 tokens; 35 % of it is 2,867.
    sent = await request_after_history(older, 1_000)
    assert sent == kept


@pytest.mark.parametrize(
    ("older", "kept"),
    [
        (1_190, ["a", "b", "n"]),  # the request is 8,191 tokens
        (1_191, ["a", "b", "n"]),  # 8,192: exactly the default window
        (1_192, ["b", "n"]),  # 8,193: over the window, the oldest message goes
    ],
)
async def test_the_whole_request_fits_the_default_8192_window(older: int, kept: list[str]) -> None:
    # A 6,000-token system prompt leaves 8,192 - 6,001 = 2,191 tokens, less than the budget.
    sent = await request_after_history(older, 1_000, system=tokens(6_000, "s"))
    assert sent == kept


@pytest.mark.parametrize(
    ("system_tokens", "refused"), [(199_998, False), (199_999, False), (200_000, True)]
)
async def test_a_known_models_window_refuses_a_request_one_token_over(
    system_tokens: int, refused: bool
) -> None:
    # claude-3-5-haiku has a 200,000-token window; the request is the system prompt and "now".
    model = ScriptedModel(["ok"], provider_id="anthropic", model_id="claude-3-5-haiku")
    chosen = PersonaDefinition(id="p1", name="P", base_system_prompt=tokens(system_tokens, "s"))
    gmi = await make_gmi(model, persona=chosen)
    chunks, output = await run(gmi, turn(NOW))
    if refused:
        assert output.error is not None
        assert output.error["code"] == str(GMIErrorCode.GMI_CONTEXT_ERROR)
        assert output.error["details"]["required_tokens"] == 200_001
        assert model.requests == []
        assert GMIOutputChunkType.ERROR in [c.type for c in chunks]
    else:
        assert output.error is None
        assert len(model.requests) == 1


# -- the tool-loop limit ---------------------------------------------------------------------------


@tool
def lookup(q: str) -> str:
    """Look something up.

    Args:
        q: the query
    """
    return f"found {q}"


def rounds(count: int, answer: bool) -> list[ScriptStep | str]:
    """``count`` steps that each call ``lookup``, then a text answer when ``answer``."""
    steps: list[ScriptStep | str] = [
        ScriptStep(tool_calls=[ToolCall(f"c{n}", "lookup", {"q": str(n)})]) for n in range(count)
    ]
    return [*steps, "done"] if answer else steps


@pytest.mark.parametrize(
    ("tool_rounds", "calls", "answered"),
    [
        (3, 4, True),  # four steps: under the limit, the model answers
        (4, 5, True),  # five steps: the answer comes on the last one allowed
        (5, 5, False),  # the fifth step still calls a tool: no sixth step
        (6, 5, False),
    ],
)
async def test_a_gmi_agent_turn_makes_at_most_5_model_steps(
    tool_rounds: int, calls: int, answered: bool
) -> None:
    model = ScriptedModel(rounds(tool_rounds, answer=True))
    session = gmi_agent(model=model, tools=[lookup]).session("s1")
    reply = await session.send("go")
    assert model.calls == calls
    assert (reply.text == "done") is answered


@pytest.mark.parametrize(("max_steps", "calls"), [(1, 1), (2, 2), (6, 6)])
async def test_max_steps_sets_the_limit(max_steps: int, calls: int) -> None:
    model = ScriptedModel(rounds(10, answer=False))
    session = gmi_agent(model=model, tools=[lookup], max_steps=max_steps).session("s1")
    await session.send("go")
    assert model.calls == calls


async def test_the_gmi_default_tool_loop_limit_is_5() -> None:
    model = ScriptedModel(rounds(10, answer=False))
    gmi = await make_gmi(model, tool_orchestrator=ToolOrchestrator([lookup]))
    await run(gmi, turn("go"))
    assert model.calls == 5


# -- the composite retrieval score's weights -------------------------------------------------------

T_NOW = 1_700_000_000.0


def memory(
    *, strength: float = 0.5, valence: float = 0.0, confidence: float = 0.5, age: float = 0.0
) -> MemoryTrace:
    return MemoryTrace(
        id="m",
        type=MemoryType.EPISODIC,
        scope=MemoryScope.USER,
        scope_id="u",
        content="a memory",
        created_at=T_NOW - age,
        encoding_strength=strength,
        stability=1e20,  # no decay within the test: strength is the encoding strength
        emotional_context=EmotionalContext(valence=valence),
        provenance=Provenance(confidence=confidence),
    )


def composite(trace: MemoryTrace, similarity: float = 0.5, graph: float = 0.0) -> float:
    mood = PAD(1.0, 0.0, 0.0)  # congruence = the trace's valence
    return score_candidate(Candidate(trace, similarity, graph), now=T_NOW, mood=mood).score


@pytest.mark.parametrize(
    ("weight", "trace", "similarity", "graph"),
    [
        (0.35, {}, 0.7, 0.0),
        (0.25, {"strength": 0.7}, 0.5, 0.0),
        (0.15, {"valence": 0.2}, 0.5, 0.0),
        (0.10, {}, 0.5, 0.2),
        (0.05, {"confidence": 0.9}, 0.5, 0.0),  # importance is 0.5 + 0.5 x confidence
    ],
    ids=["similarity", "strength", "emotional_congruence", "graph_activation", "importance"],
)
def test_each_term_moves_the_score_by_its_weight(
    weight: float, trace: dict[str, float], similarity: float, graph: float
) -> None:
    # Each case raises one term by 0.2 over the base memory.
    raised = composite(memory(**trace), similarity, graph)
    assert raised - composite(memory()) == pytest.approx(weight * 0.2, abs=1e-12)


def test_recency_moves_the_score_by_its_weight() -> None:
    # recency = exp(-age / 1 day): 1 now, exp(-1) a day ago.
    delta = composite(memory()) - composite(memory(age=DAY))
    assert delta == pytest.approx(0.10 * (1 - math.exp(-1)), abs=1e-12)


@pytest.mark.parametrize(
    ("graph", "first"),
    [(0.34, "similar"), (0.35, "tie"), (0.36, "linked")],
)
def test_similarity_outweighs_graph_activation_by_035_to_010(graph: float, first: str) -> None:
    # 0.35 x 0.10 more similarity against 0.10 x graph activation.
    similar = Candidate(memory(), 0.6, 0.0)
    linked = Candidate(memory(), 0.5, graph)
    ranked = score_candidates([similar, linked], now=T_NOW, mood=None)
    if first == "tie":
        assert ranked[0].score == pytest.approx(ranked[1].score, abs=1e-12)
    else:
        assert (ranked[0].vector_similarity == 0.6) is (first == "similar")

"""A GMI turn through a real provider adapter on the loopback server (reference case 38)."""

from __future__ import annotations

from agentos.core.usage import ModelUsage
from agentos.llm.providers.openai import OpenAIModel
from agentos.substrate import GMIOutputChunkType
from fakes.gmi_helpers import make_gmi, run, turn
from fakes.openai_server import ChunkMaker, OpenAIServer, stream_reply

T = GMIOutputChunkType


async def test_case_38_the_usage_only_final_chunk_is_counted_once() -> None:
    events = ChunkMaker().text_events(["Hel", "lo"], usage=(10, 5))
    with OpenAIServer([stream_reply(events)]) as server:
        model = OpenAIModel("gpt-4o-mini", api_key="sk-test", base_url=f"{server.url}/v1")
        try:
            gmi = await make_gmi(model)
            chunks, output = await run(gmi, turn("Say hello"))
        finally:
            await model.aclose()
    assert [c.type for c in chunks] == [
        T.TEXT_DELTA,
        T.TEXT_DELTA,
        T.USAGE_UPDATE,
        T.STEP_FINISHED,
        T.FINAL_RESPONSE_MARKER,
    ]
    [update] = [c for c in chunks if c.type is T.USAGE_UPDATE]
    assert update.usage is not None
    assert (update.usage.prompt_tokens, update.usage.completion_tokens) == (10, 5)
    assert update.usage.total_tokens == 15
    assert output.usage.total_tokens == 15
    assert output.usage == ModelUsage.sum([update.usage])
    assert output.response_text == "Hello"


async def test_a_gmi_session_turn_on_the_openai_wire_sends_the_end_user_and_meters_it() -> None:
    from agentos.api.gmi_agent import gmi
    from agentos.storage.ledger import InMemoryUsageLedger

    first = ChunkMaker().text_events(["Hi ", "Ada"], usage=(30, 4))
    second = ChunkMaker().text_events(["Again"], usage=(40, 2))
    ledger = InMemoryUsageLedger()
    with OpenAIServer([stream_reply(first), stream_reply(second)]) as server:
        agent = gmi(
            provider="openai",
            model="gpt-4o-mini",
            api_key="sk-test",
            base_url=f"{server.url}/v1",
            fallback_providers=[],
            usage_ledger=ledger,
        )
        session = agent.session("s1", user_id="user-hash-7f3a")
        assert (await session.send("Hello")).text == "Hi Ada"
        assert (await session.send("Once more")).text == "Again"
        bodies = [request.json for request in server.requests]
        await agent.close()
    assert all(
        body.get("safety_identifier") == "user-hash-7f3a" or body.get("user") == "user-hash-7f3a"
        for body in bodies
    )
    assert [m["content"] for m in bodies[1]["messages"]][-3:] == ["Hello", "Hi Ada", "Once more"]
    rows = await ledger.rows()
    assert [(r.session_id, r.prompt_tokens, r.completion_tokens) for r in rows] == [
        ("s1", 30, 4),
        ("s1", 40, 2),
    ]
    assert agent.usage("s1").total_tokens == 76

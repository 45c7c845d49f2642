"""A GMI turn through a real provider adapter on the loopback server (reference case 38)."""

from __future__ import annotations

from agentos.core.usage import ModelUsage
from agentos.gmi import GMIOutputChunkType
from agentos.llm.providers.openai import OpenAIModel
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

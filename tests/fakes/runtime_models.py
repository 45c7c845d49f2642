"""Models and personas the full runtime's tests share."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from agentos.llm.model import ModelChunk, ModelRequest, TextDelta
from agentos.persona import PersonaDefinition
from agentos.runtime import AgentOS, AgentOSResponse
from agentos.runtime.config import create_agentos_config
from agentos.substrate.chunks import GMIOutput, GMIOutputChunk
from agentos.testing import ScriptedModel

__all__ = [
    "SELF_IMPROVEMENT_ON",
    "TUTOR",
    "ChunkList",
    "WedgedModel",
    "carer",
    "drain",
    "start_runtime",
]

TUTOR = PersonaDefinition.model_validate(
    {
        "id": "tutor",
        "name": "Tutor",
        "baseSystemPrompt": "You are a patient CS tutor.",
        "personalityTraits": {"openness": 0.9, "conscientiousness": 0.95},
    }
)
"""The ``tutor`` persona the learning and self-improvement runtime tests share."""
SELF_IMPROVEMENT_ON = {"self_improvement": {"enabled": True}}
"""A persona/runtime setting that turns the self-improvement tools on."""


class WedgedModel(ScriptedModel):
    """A model whose call never answers and whose clean-up, once aborted, hangs until released.

    Plays a provider client whose connection close blocks: the GMI's abort reaches the call,
    but the call does not end until the test sets ``release``.
    """

    def __init__(self, release: asyncio.Event) -> None:
        super().__init__([])
        self._release = release

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        self.requests.append(request)
        return self._wedged()

    async def _wedged(self) -> AsyncIterator[ModelChunk]:
        try:
            await asyncio.Event().wait()  # never set: only the abort ends the wait
            yield TextDelta("unreachable")
        finally:
            await self._release.wait()


def carer(prompt: str = "Kind.", **sentiment: Any) -> PersonaDefinition:
    """The ``carer`` persona, with sentiment tracking on (plus ``sentiment``'s keys)."""
    tracking: Mapping[str, Any] = {"enabled": True, **sentiment}
    return PersonaDefinition.model_validate(
        {"id": "carer", "name": "Carer", "baseSystemPrompt": prompt, "sentimentTracking": tracking}
    )


class ChunkList:
    """An IGMI turn's stream: the given chunks, then the given output."""

    def __init__(self, chunks: Sequence[GMIOutputChunk], output: GMIOutput) -> None:
        self._chunks = list(chunks)
        self._output = output

    async def _iterate(self) -> AsyncIterator[GMIOutputChunk]:
        for chunk in self._chunks:
            yield chunk

    def __aiter__(self) -> AsyncIterator[GMIOutputChunk]:
        return self._iterate()

    async def output(self) -> GMIOutput:
        """The turn's output, once its chunks are read."""
        return self._output


async def start_runtime(model: ScriptedModel, /, **settings: Any) -> AgentOS:
    """An initialised runtime on ``model`` from ``settings`` (``personas`` required): the first
    persona the default, the statistical utility AI (no scoring call), no environment."""
    personas: Sequence[PersonaDefinition] = settings["personas"]
    defaults = {"default_persona_id": personas[0].id, "model": model, "utility_ai": "statistical"}
    runtime = AgentOS()
    await runtime.initialize(create_agentos_config(environ={}, **{**defaults, **settings}))
    return runtime


async def drain(chunks: AsyncIterator[AgentOSResponse]) -> list[AgentOSResponse]:
    """Every chunk of a turn's stream."""
    return [chunk async for chunk in chunks]

"""Reading a model's stream in provider tests: its chunks, its failure, its text."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from agentos.llm.errors import ProviderError
from agentos.llm.model import ChatModel, ModelChunk, ModelRequest, TextDelta, closing_stream

__all__ = ["collect", "fail", "text_of"]


async def collect(model: ChatModel, request: ModelRequest) -> list[ModelChunk]:
    """Every chunk of one step, the stream closed after."""
    async with closing_stream(model.stream(request)) as chunks:
        return [chunk async for chunk in chunks]


async def fail(model: ChatModel, request: ModelRequest) -> tuple[ProviderError, list[ModelChunk]]:
    """The `ProviderError` a step raises and the chunks it yielded before."""
    seen: list[ModelChunk] = []

    async def drain() -> None:
        async with closing_stream(model.stream(request)) as chunks:
            async for chunk in chunks:
                seen.append(chunk)

    with pytest.raises(ProviderError) as caught:
        await drain()
    return caught.value, seen


def text_of(chunks: Sequence[ModelChunk]) -> str:
    """The text the chunks stream, joined."""
    return "".join(chunk.text for chunk in chunks if isinstance(chunk, TextDelta))

"""The model catalog: context windows, output limits, embedding sizes and prices.

A model the catalog does not know has a context window of 8,192 tokens (the spec's default)
and an unknown price: its cost is ``None``, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from agentos.core.usage import ModelUsage

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "ModelInfo",
    "context_window",
    "cost_usd",
    "model_info",
    "priced",
]

DEFAULT_CONTEXT_WINDOW = 8192
"""The context window of a model the catalog does not know (spec: PromptEngine budget)."""


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What agentos knows about one model of one provider.

    Prices are USD per million tokens; ``None`` means unknown. ``embedding_dimension`` is set
    for embedding models only.
    """

    provider_id: str
    model_id: str
    context_window: int
    max_output_tokens: int | None = None
    input_per_million: float | None = None
    output_per_million: float | None = None
    cache_read_per_million: float | None = None
    cache_write_per_million: float | None = None
    embedding_dimension: int | None = None


_CATALOG: dict[tuple[str, str], ModelInfo] = {}


def model_info(provider_id: str, model_id: str) -> ModelInfo | None:
    """The catalog entry for a model, or ``None`` when agentos does not know it."""
    return _CATALOG.get((provider_id, model_id))


def context_window(provider_id: str, model_id: str) -> int:
    """The model's context window in tokens (8,192 when unknown)."""
    info = model_info(provider_id, model_id)
    return info.context_window if info else DEFAULT_CONTEXT_WINDOW


def cost_usd(provider_id: str, model_id: str, usage: ModelUsage) -> float | None:
    """What ``usage`` costs on this model, or ``None`` when its price is unknown."""
    info = model_info(provider_id, model_id)
    if info is None or info.input_per_million is None or info.output_per_million is None:
        return None
    cached_read = info.cache_read_per_million
    cached_write = info.cache_write_per_million
    total = (
        usage.prompt_tokens * info.input_per_million
        + usage.completion_tokens * info.output_per_million
        + usage.cache_read_tokens * (cached_read if cached_read is not None else 0.0)
        + usage.cache_write_tokens * (cached_write if cached_write is not None else 0.0)
    )
    return total / 1_000_000


def priced(provider_id: str, model_id: str, usage: ModelUsage) -> ModelUsage:
    """``usage`` with its cost filled in from the catalog (kept when the provider gave one)."""
    if usage.cost_usd is not None:
        return usage
    return replace(usage, cost_usd=cost_usd(provider_id, model_id, usage))
